"""Real boaf servers on loopback ports for the tests, and small client helpers.

Ports are 0, so the OS picks free ones. ``tests/service/conftest.py`` runs one
server (the committed default model) for the whole session; tests that need their
own lifecycle (health gating, shutdown, tight limits) start their own here.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from boaf.service.app import BoafService, ClassifierLoader, load_default_classifier
from boaf.service.core.settings import Settings
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc

READY_TIMEOUT_S = 120  # a cold numba cache compiles the kernels during warm-up
TEST_LIMITS: dict[str, Any] = {
    "max_batch_size": 100,
    "max_message_bytes": 1024 * 1024,
    "max_concurrent_rpcs": 8,
    "max_workers": 8,
    "solve_max_nodes": 50_000_000,
    "solve_time_limit_ms": 20_000,
    "puzzle_max_states": 2_000_000,
    "max_concurrent_puzzles": 1,
}


def loopback_settings(**overrides: Any) -> Settings:
    """Loopback, free ports, small limits (so the limit tests stay cheap), no grace.

    No HTTP edge of the service's own: a test that wants one builds it (``HttpServer(server)``).
    """
    values: dict[str, Any] = {
        "host": "127.0.0.1",
        "port": 0,
        "metrics_port": 0,
        "http_enabled": False,
        "shutdown_grace_s": 0,
        **TEST_LIMITS,
    }
    return Settings(**{**values, **overrides})


def start_server(settings: Settings, loader: ClassifierLoader = load_default_classifier) -> BoafService:
    """A started service (it may still be loading)."""
    server = BoafService(settings, loader)
    server.start()
    return server


def ready_server(settings: Settings, loader: ClassifierLoader = load_default_classifier) -> BoafService:
    """A started service that has reached SERVING, with its background (puzzle) kernels loaded too."""
    server = start_server(settings, loader)
    assert server.wait_until_ready(READY_TIMEOUT_S), f"server never became ready: {server.lifecycle.load_error!r}"
    assert server.wait_for_all_kernels(READY_TIMEOUT_S), "the background kernels never loaded"
    return server


def channel_to(server: BoafService) -> grpc.Channel:
    """An insecure channel to ``server`` on loopback."""
    return grpc.insecure_channel(f"127.0.0.1:{server.port}")


def health_status(channel: grpc.Channel, service: str = "boaf.v1.Boaf") -> int:
    """The health service's answer for ``service``."""
    stub = health_pb2_grpc.HealthStub(channel)
    return stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5).status


def grid_state(text: str) -> pb.State:
    """A ``State`` message from grid text (rows split by '/', '--' empty)."""
    rows = [row.split() for row in text.split("/")]
    cells = ["" if cell == "--" else cell for row in rows for cell in row]
    return pb.State(rows=len(rows), cols=len(rows[0]), cells=cells)


class GatedLoader:
    """A classifier loader that waits for ``release()`` before loading the real model."""

    def __init__(self, loader: ClassifierLoader = load_default_classifier) -> None:
        self._gate = threading.Event()
        self._loader = loader
        self.called = threading.Event()

    def __call__(self, directory: Path | None) -> Any:
        self.called.set()
        self._gate.wait(READY_TIMEOUT_S)
        return self._loader(directory)

    def release(self) -> None:
        self._gate.set()


def wait_for(predicate: Callable[[], bool], timeout: float = 30.0) -> bool:
    """Poll ``predicate`` every 10 ms until it holds or ``timeout`` seconds pass."""
    give_up = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > give_up:
            return False
        time.sleep(0.01)
    return True


def free_port() -> int:
    """A TCP port free on loopback now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def serve_process(env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    """``boaf serve`` as a process of its own, on a free port, with ``env``'s ``BOAF_*`` settings, once SERVING
    and its background (puzzle) kernels are loaded: a small AnalyzePuzzle no longer answers UNAVAILABLE.

    Returns the process and its address; the caller ends it.
    """
    port = free_port()
    settings = {"BOAF_METRICS_ENABLED": "false", "BOAF_HTTP_ENABLED": "false", **env, "BOAF_PORT": str(port)}
    command = [sys.executable, "-c", "from boaf.service.cli import main; main()", "serve"]
    process = subprocess.Popen(command, env={**os.environ, **settings}, stderr=subprocess.DEVNULL, text=True)
    address = f"127.0.0.1:{port}"
    give_up = time.monotonic() + READY_TIMEOUT_S
    with grpc.insecure_channel(address) as channel:
        while not (_serving(channel) and _puzzles_ready(channel)):
            if process.poll() is not None or time.monotonic() > give_up:
                process.kill()
                raise AssertionError(f"boaf serve never became SERVING (exit status {process.poll()})")
            time.sleep(0.1)
    return process, address


def _puzzles_ready(channel: grpc.Channel) -> bool:
    three = pb.State(rows=1, cols=3, cells=["AC", "2C", "3C"])
    try:
        boaf_pb2_grpc.BoafStub(channel).AnalyzePuzzle(pb.AnalyzePuzzleRequest(state=three), timeout=10)
    except grpc.RpcError as error:
        return error.code() != grpc.StatusCode.UNAVAILABLE
    return True


def _serving(channel: grpc.Channel) -> bool:
    try:
        return health_status(channel) == health_pb2.HealthCheckResponse.SERVING
    except grpc.RpcError:
        return False
