"""Connections are a bounded resource: ``boaf serve`` under a flood of connections that never speak.

A real ``boaf serve`` process starts with its soft descriptor limit at 4,096 (as a
shell's ``ulimit -n``), and an attacker keeps 5,000 TCP connections open to the gRPC
port, none of which sends the HTTP/2 preface (each one the server closes is opened
again at once). Meanwhile HTTP, ``/metrics``, health, a model reload and new gRPC
calls must all work, and the log must stay small. With the hard limit above the soft
one, the service raises its soft limit and holds them all; with the hard limit at
4,096 too, gRPC's share of the descriptors is the cap, and the rest are closed as
they open, while every other part of the service keeps the descriptors it needs.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2
from servers import (
    READY_TIMEOUT_S,
    free_port,
    grid_state,
    health_status,
    loopback_settings,
    ready_server,
    serve_process,
    wait_for,
)

from boaf.game import deal
from boaf.models import registry
from boaf.service.core.descriptors import RESERVE, DescriptorWatch, TooFewDescriptors, share
from boaf.service.core.errors import SHUTTING_DOWN_MESSAGE
from boaf.service.grpc.server import HANDSHAKE_TIMEOUT_S
from boaf.service.http import HttpServer
from boaf.service.rpc.converters import state_to_proto
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc

SOFT_LIMIT = 4096
FLOOD = 5000
STATE = grid_state("AS 2S 3S/4H 5H 6H/7D 8D 9D")
CALL_TIMEOUT_S = 10  # generous: 2 cores shared with the flood
LOG_LIMIT_BYTES = 1 << 20  # the whole log of a run, the flood included

_, HARD_LIMIT = resource.getrlimit(resource.RLIMIT_NOFILE)
pytestmark = pytest.mark.skipif(
    HARD_LIMIT != resource.RLIM_INFINITY and HARD_LIMIT < FLOOD + 1024,
    reason=f"the test process needs {FLOOD + 1024} descriptors (hard limit {HARD_LIMIT})",
)


@dataclass
class Served:
    process: subprocess.Popen[bytes]
    grpc_port: int
    http_port: int
    metrics_port: int
    root: Path
    log: Path

    def http_get(self, port: int, path: str) -> tuple[int, bytes]:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=CALL_TIMEOUT_S) as answer:
            return int(answer.status), bytes(answer.read())

    def metric(self, line_start: str) -> float:
        _, body = self.http_get(self.metrics_port, "/metrics")
        values = [float(line.split()[-1]) for line in body.decode().splitlines() if line.startswith(line_start)]
        return sum(values)


def model_root(folder: Path) -> Path:
    """A model root with two copies of the committed model, ``a`` (CURRENT) and ``b``."""
    committed = registry.resolve(None)
    for version in ("a", "b"):
        shutil.copytree(committed, folder / version)
    (folder / registry.CURRENT_FILE).write_text("a\n", encoding="utf-8")
    return folder


def serve(tmp_path: Path, hard_limit: int) -> Served:
    ports = {"BOAF_PORT": free_port(), "BOAF_HTTP_PORT": free_port(), "BOAF_METRICS_PORT": free_port()}
    root = model_root(tmp_path / "models")
    env = {
        **os.environ,
        **{name: str(port) for name, port in ports.items()},
        "BOAF_MODEL_DIR": str(root),
        "BOAF_MODEL_POLL_S": "0",  # reload on SIGHUP only
        "BOAF_LOG_FORMAT": "json",
    }

    # The server sets its own descriptor limit as it starts: a preexec_fn would make Popen fork this
    # process, whose gRPC threads (pytest-xdist's, the other tests') then see fork handlers run, and
    # a fork beside them once left the child's epoll with a bad descriptor. Without one, Popen execs
    # by vfork/posix_spawn, which runs none.
    limit = f"import resource; resource.setrlimit(resource.RLIMIT_NOFILE, ({SOFT_LIMIT}, {hard_limit}))"
    log = tmp_path / "serve.log"
    command = [sys.executable, "-c", f"{limit}; from boaf.service.cli import main; main()", "serve"]
    with log.open("wb") as stderr:
        process = subprocess.Popen(command, env=env, stderr=stderr)
    served = Served(process, ports["BOAF_PORT"], ports["BOAF_HTTP_PORT"], ports["BOAF_METRICS_PORT"], root, log)
    with grpc.insecure_channel(f"127.0.0.1:{served.grpc_port}") as channel:
        give_up = time.monotonic() + READY_TIMEOUT_S
        while not serving(channel):
            if process.poll() is not None or time.monotonic() > give_up:
                process.kill()
                raise AssertionError(f"boaf serve never became SERVING:\n{log.read_text()[-4000:]}")
            time.sleep(0.1)
    return served


def serving(channel: grpc.Channel) -> bool:
    try:
        return health_status(channel) == health_pb2.HealthCheckResponse.SERVING
    except grpc.RpcError:
        return False


@contextlib.contextmanager
def running(tmp_path: Path, hard_limit: int) -> Iterator[Served]:
    served = serve(tmp_path, hard_limit)
    try:
        yield served
    finally:
        served.process.send_signal(signal.SIGTERM)
        try:
            served.process.wait(60)
        except subprocess.TimeoutExpired:
            served.process.kill()


@pytest.fixture(autouse=True)
def enough_descriptors() -> Iterator[None]:
    """The test process holds the flood's connections: its own soft limit goes up to the hard one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else FLOOD * 2, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


class Flood:
    """``size`` connections to ``port`` that never send a byte; one the server closes is opened again."""

    def __init__(self, port: int, size: int) -> None:
        self.port = port
        self.size = size
        self.selector = selectors.DefaultSelector()
        self.most_held = 0  # the most connections open at once that the server had not closed
        self.closed_by_server = 0
        self.failed_connects = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Flood:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(30)
        for key in list(self.selector.get_map().values()):
            key.fileobj.close()  # type: ignore[union-attr]
        self.selector.close()

    @property
    def held(self) -> int:
        return len(self.selector.get_map())

    def _run(self) -> None:
        while not self._stop.is_set():
            while self.held < self.size and not self._stop.is_set():
                self._connect()
            self.most_held = max(self.most_held, self.held)
            for key, _ in self.selector.select(timeout=0.2):
                self._closed(key.fileobj)  # type: ignore[arg-type]

    def _connect(self) -> None:
        connection = socket.socket()
        connection.settimeout(5)
        try:
            connection.connect(("127.0.0.1", self.port))
        except OSError:
            connection.close()
            self.failed_connects += 1
            time.sleep(0.01)
            return
        connection.setblocking(False)
        self.selector.register(connection, selectors.EVENT_READ)

    def _closed(self, connection: socket.socket) -> None:
        # The server sends its SETTINGS first; then readable with nothing to read means closed.
        try:
            if connection.recv(4096):
                return
        except BlockingIOError:
            return
        except OSError:
            pass  # reset
        self.selector.unregister(connection)
        connection.close()
        self.closed_by_server += 1


def everything_works(served: Served, channel: grpc.Channel) -> None:
    """HTTP, /metrics, health (both edges), a Classify on ``channel`` and a model reload all answer."""
    assert served.http_get(served.http_port, "/healthz")[0] == 200
    assert served.http_get(served.http_port, "/readyz")[0] == 200
    assert served.metric("boaf_ready") == 1
    assert health_status(channel) == health_pb2.HealthCheckResponse.SERVING
    answer = boaf_pb2_grpc.BoafStub(channel).Classify(pb.ClassifyRequest(states=[STATE]), timeout=CALL_TIMEOUT_S)
    assert len(answer.predictions) == 1
    reloads = served.metric('boaf_model_reloads_total{outcome="reloaded"}')
    (served.root / registry.CURRENT_FILE).write_text("b\n" if reloads % 2 == 0 else "a\n", encoding="utf-8")
    os.kill(served.process.pid, signal.SIGHUP)
    reloaded = reloads + 1
    assert wait_for(lambda: served.metric('boaf_model_reloads_total{outcome="reloaded"}') == reloaded, 120)


def descriptors_of(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def log_of(served: Served) -> str:
    return served.log.read_text(encoding="utf-8", errors="replace")


def assert_a_quiet_log(log: str) -> None:
    """Small, no ERROR, and hardly a line from gRPC core itself (absl's plain lines, not JSON)."""
    assert len(log.encode()) < LOG_LIMIT_BYTES
    assert '"level": "ERROR"' not in log, log[-4000:]
    plain = [line for line in log.splitlines() if not line.startswith("{")]
    assert len(plain) <= 10, plain[:20]


def test_a_flood_of_silent_connections_leaves_every_part_working(tmp_path: Path) -> None:
    # The hard limit above 4,096: boaf raises its soft limit, so gRPC holds the whole flood.
    with running(tmp_path, HARD_LIMIT) as served, Flood(served.grpc_port, FLOOD) as flood:
        assert wait_for(lambda: flood.most_held >= FLOOD, 120), f"held {flood.most_held} of {FLOOD}"
        with grpc.insecure_channel(f"127.0.0.1:{served.grpc_port}") as fresh:  # a new connection, mid-flood
            everything_works(served, fresh)
    assert_a_quiet_log(log_of(served))


def test_at_the_hard_limit_grpc_keeps_to_its_share_and_the_rest_works(tmp_path: Path) -> None:
    # Soft and hard limit 4,096: gRPC's share is the cap; connections past it are closed as they open.
    with running(tmp_path, SOFT_LIMIT) as served:
        with grpc.insecure_channel(f"127.0.0.1:{served.grpc_port}") as channel:  # connected before the flood
            assert serving(channel)
            with Flood(served.grpc_port, FLOOD) as flood:
                assert wait_for(lambda: flood.closed_by_server >= FLOOD - SOFT_LIMIT, 120)
                everything_works(served, channel)
                print(json.dumps({"server_descriptors": descriptors_of(served.process.pid)}))
                assert wait_for(lambda: "descriptors near the limit" in log_of(served), 60)  # it looks once a second
            assert wait_for(lambda: serving(channel), 60)
        with grpc.insecure_channel(f"127.0.0.1:{served.grpc_port}") as fresh:  # the flood is over: new connections
            stub = boaf_pb2_grpc.BoafStub(fresh)
            assert len(stub.Classify(pb.ClassifyRequest(states=[STATE]), timeout=CALL_TIMEOUT_S).predictions) == 1
    log = log_of(served)
    assert_a_quiet_log(log)
    near = [line for line in log.splitlines() if "descriptors near the limit" in line]
    assert 1 <= len(near) <= 3, near  # said once (a minute apart at most), not per connection


def test_a_connection_that_never_sends_the_preface_is_closed_within_the_handshake_timeout(tmp_path: Path) -> None:
    with running(tmp_path, HARD_LIMIT) as served, socket.create_connection(("127.0.0.1", served.grpc_port)) as silent:
        silent.settimeout(HANDSHAKE_TIMEOUT_S + 10)  # generous: a loaded machine
        opened = time.monotonic()
        while silent.recv(4096):  # the server's SETTINGS, then the end: closed, with nothing sent
            pass
        waited = time.monotonic() - opened
    assert waited < HANDSHAKE_TIMEOUT_S + 10
    print(json.dumps({"closed_after_s": round(waited, 2)}))


# ---------------------------------------------------------------- a call cut by the stop


def test_calls_in_flight_at_sigterm_end_ok_or_unavailable_never_cancelled() -> None:
    grace_s = 1.0
    process, address = serve_process({"BOAF_SHUTDOWN_GRACE_S": str(grace_s)})
    codes: list[grpc.StatusCode] = []
    signalled = threading.Event()
    try:
        with grpc.insecure_channel(address) as channel:
            stub = boaf_pb2_grpc.BoafStub(channel)
            # Far longer than the grace: a 52-card column runs to the server's time limit (30 s) unless stopped.
            runaway = pb.AnalyzePuzzleRequest(state=state_to_proto(deal(1, rows=52, cols=1)))
            long_call = stub.AnalyzePuzzle.future(runaway, timeout=60)

            def small_calls() -> None:  # each call sent before the signal is in flight when it comes
                while not signalled.is_set():
                    try:
                        stub.Classify(pb.ClassifyRequest(states=[STATE]), timeout=CALL_TIMEOUT_S)
                        codes.append(grpc.StatusCode.OK)
                    except grpc.RpcError as error:
                        codes.append(error.code())

            callers = [threading.Thread(target=small_calls) for _ in range(8)]
            for caller in callers:
                caller.start()
            time.sleep(1.0)
            process.send_signal(signal.SIGTERM)
            signalled.set()
            for caller in callers:
                caller.join(60)
            error = long_call.exception(60)
        assert process.wait(60) == 0
    finally:
        if process.poll() is None:
            process.kill()
    assert isinstance(error, grpc.Call)
    assert (error.code(), error.details()) == (grpc.StatusCode.UNAVAILABLE, SHUTTING_DOWN_MESSAGE)
    assert set(codes) <= {grpc.StatusCode.OK, grpc.StatusCode.UNAVAILABLE}, codes


# ---------------------------------------------------------------- the descriptor plan, and the HTTP edge's cap


@pytest.mark.parametrize(
    ("soft_limit", "open_now", "http", "grpc_connections"),
    [
        (4096, 40, 950, 2850),  # a quarter of what is left after the reserve goes to HTTP
        (65536, 40, 1024, 64216),  # HTTP's share stops at HTTP_CONNECTIONS
        (1024, 40, 182, 546),
    ],
)
def test_the_plan_shares_the_limit_and_never_passes_it(
    soft_limit: int, open_now: int, http: int, grpc_connections: int
) -> None:
    plan = share(soft_limit, open_now)
    assert (plan.http_connections, plan.grpc_connections) == (http, grpc_connections)
    assert open_now + RESERVE + plan.http_connections + plan.grpc_connections == soft_limit


def test_a_limit_too_small_for_the_reserve_is_refused_saying_how_much_is_needed() -> None:
    with pytest.raises(TooFewDescriptors, match=r"soft 256\).*at least 376"):
        share(256, 40)


def test_the_watch_says_the_limit_is_near_once_a_minute_not_at_every_look(caplog: pytest.LogCaptureFixture) -> None:
    plan = share(4096, 0)
    watch = DescriptorWatch(replace(plan, grpc_connections=0))  # whatever is open now is "near"
    with caplog.at_level("WARNING", logger="boaf.service.core.descriptors"):
        assert all(watch.look(now=float(second)) for second in range(120))
    assert len(caplog.records) == 2  # at 0 s and at 60 s
    assert caplog.records[1].times_seen == 60  # type: ignore[attr-defined]


def test_the_http_edge_closes_connections_past_its_cap_as_they_open(caplog: pytest.LogCaptureFixture) -> None:
    server = ready_server(loopback_settings(http_port=0))
    web = HttpServer(server, max_connections=2)
    web.start()
    try:
        held = [socket.create_connection(("127.0.0.1", web.port)) for _ in range(2)]
        assert wait_for(lambda: web.connections == 2)
        with caplog.at_level("WARNING", logger="boaf.service.http.protocol"):
            extra = [socket.create_connection(("127.0.0.1", web.port)) for _ in range(5)]
            for connection in extra:
                connection.settimeout(10)
                assert connection.recv(1) == b""  # closed, unread and unanswered
        assert len([r for r in caplog.records if "at the cap" in r.getMessage()]) == 1  # said once, not five times
        for connection in held + extra:
            connection.close()
        assert wait_for(lambda: web.connections == 0)
        with urllib.request.urlopen(f"http://127.0.0.1:{web.port}/healthz", timeout=CALL_TIMEOUT_S) as answer:
            assert answer.status == 200  # room again
    finally:
        web.stop()
        server.stop(0)
