"""No batch call outlives its time: the largest Classify and Features batches, and the costliest Hint, stop at
the client's deadline (on both edges) or at the server's own time limit, and the server's CPU goes idle.

Each test runs ``boaf serve`` as a process of its own and reads its CPU time from
``/proc/PID/stat`` (user + system ticks of every thread), so the figure is the
server's alone. The bounds are generous: a server that ran on past the deadline
would burn a whole core in the window measured.
"""

from __future__ import annotations

import os
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import numpy as np
import pytest
from http_client import Client
from servers import free_port, serve_process

from boaf.game import deal
from boaf.game.cards import card_text
from boaf.service.core.settings import Settings
from boaf.service.rpc.converters import state_to_proto
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc, game_pb2, game_pb2_grpc

LARGEST_BATCH = Settings().max_batch_size  # the default limit: 10,000 states of 52 cards fit 4 MiB
DEADLINE_S = 0.5
IDLE_CPU_S = 0.2  # the most CPU the server may use in a 2 s window once the work has stopped
TICKS_PER_S = os.sysconf("SC_CLK_TCK")
# The costliest Hint the limits allow: a whole deck's 326 moves, each search cut at one node, so every result
# goes on to the features, the progress search and the model (~4 s of work on the 2-core machine).
COSTLY_HINT = game_pb2.HintRequest(state=state_to_proto(deal(7, rows=4, cols=13)), max_nodes_per_move=1)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (every thread), from ``/proc/PID/stat``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS_PER_S  # utime and stime: fields 14 and 15


def cpu_between(pid: int, start: float, end: float) -> float:
    """CPU seconds ``pid`` uses from ``start`` to ``end`` (``time.monotonic`` seconds, in the future)."""
    time.sleep(max(0.0, start - time.monotonic()))
    before = cpu_seconds(pid)
    time.sleep(max(0.0, end - time.monotonic()))
    return cpu_seconds(pid) - before


def random_52_card_states(n: int, seed: int = 21) -> list[pb.State]:
    """``n`` random 4x13 deals: most go to the features (~15 ms each) once the exact path is cut."""
    rng = np.random.default_rng(seed)
    texts = [card_text(card) for card in range(52)]
    return [pb.State(rows=4, cols=13, cells=[texts[c] for c in rng.permutation(52)]) for _ in range(n)]


@pytest.fixture(scope="module")
def batch() -> list[pb.State]:
    states = random_52_card_states(LARGEST_BATCH)
    assert pb.ClassifyRequest(states=states).ByteSize() <= Settings().max_message_bytes
    return states


def serve(env: dict[str, str]) -> Iterator[tuple[subprocess.Popen[str], str, int]]:
    """``boaf serve`` with HTTP and metrics on; yields the process, its gRPC address and its HTTP port."""
    http_port, metrics_port = free_port(), free_port()
    settings = {
        "BOAF_HTTP_ENABLED": "true",
        "BOAF_HTTP_PORT": str(http_port),
        "BOAF_METRICS_ENABLED": "true",
        "BOAF_METRICS_PORT": str(metrics_port),
        "BOAF_SHUTDOWN_GRACE_S": "0",
        **env,
    }
    process, address = serve_process(settings)
    process.metrics_port = metrics_port  # type: ignore[attr-defined]
    try:
        yield process, address, http_port
    finally:
        process.kill()
        process.wait(10)


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[subprocess.Popen[str], str, int]]:
    """The default limits (a 30 s batch time limit): only the client's deadline stops the calls."""
    yield from serve({})


@pytest.fixture(scope="module")
def short_limit_server() -> Iterator[tuple[subprocess.Popen[str], str, int]]:
    """A batch time limit of 300 ms."""
    yield from serve({"BOAF_BATCH_TIME_LIMIT_MS": "300"})


def request_of(method: str, states: list[pb.State]) -> pb.ClassifyRequest | pb.FeaturesRequest:
    return pb.ClassifyRequest(states=states) if method == "Classify" else pb.FeaturesRequest(states=states)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["Classify", "Features"])
def test_the_largest_batch_over_grpc_stops_at_its_deadline_and_the_cpu_goes_idle(
    server: tuple[subprocess.Popen[str], str, int], batch: list[pb.State], method: str
) -> None:
    process, address, _ = server
    with grpc.insecure_channel(address, options=[("grpc.max_send_message_length", 8 * 1024 * 1024)]) as channel:
        call = getattr(boaf_pb2_grpc.BoafStub(channel), method)
        sent = time.monotonic()
        with pytest.raises(grpc.RpcError) as caught:
            call(request_of(method, batch), timeout=DEADLINE_S)
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    deadline = sent + DEADLINE_S
    assert cpu_between(process.pid, deadline + 1, deadline + 3) < IDLE_CPU_S


@pytest.mark.slow
@pytest.mark.parametrize("method", ["Classify", "Features"])
def test_the_largest_batch_over_http_stops_at_its_deadline_and_the_cpu_goes_idle(
    server: tuple[subprocess.Popen[str], str, int], batch: list[pb.State], method: str
) -> None:
    process, _, http_port = server
    body = {"states": [{"rows": 4, "cols": 13, "cells": list(state.cells)} for state in batch]}
    client = Client(f"http://127.0.0.1:{http_port}")
    sent = time.monotonic()
    answer = client.call(f"Boaf/{method}", body, headers={"Connect-Timeout-Ms": str(int(DEADLINE_S * 1000))})
    assert answer.status == 504, answer.body
    assert answer.body["code"] == "deadline_exceeded"
    deadline = sent + DEADLINE_S
    assert cpu_between(process.pid, deadline + 1, deadline + 3) < IDLE_CPU_S


@pytest.mark.slow
@pytest.mark.parametrize("method", ["Classify", "Features"])
def test_without_a_deadline_the_server_time_limit_ends_the_call_deadline_exceeded(
    short_limit_server: tuple[subprocess.Popen[str], str, int], batch: list[pb.State], method: str
) -> None:
    process, address, _ = short_limit_server
    with grpc.insecure_channel(address, options=[("grpc.max_send_message_length", 8 * 1024 * 1024)]) as channel:
        call = getattr(boaf_pb2_grpc.BoafStub(channel), method)
        with pytest.raises(grpc.RpcError) as caught:
            call(request_of(method, batch[:2000]))  # no deadline: ~30 s of work without the limit
        ended = time.monotonic()
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert "BOAF_BATCH_TIME_LIMIT_MS" in caught.value.details()
    assert cpu_between(process.pid, ended + 0.5, ended + 2.5) < IDLE_CPU_S
    counts = requests_total(process.metrics_port, method)  # type: ignore[attr-defined]
    assert counts.get("DEADLINE_EXCEEDED", 0) >= 1
    assert counts.get("OK", 0) == 0


def requests_total(metrics_port: int, method: str) -> dict[str, float]:
    """``boaf_requests_total`` of ``method`` by code, from the server's /metrics page."""
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as page:
        text = page.read().decode()
    counts: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("boaf_requests_total{") and f'method="{method}"' in line:
            code = line.split('code="', 1)[1].split('"', 1)[0]
            counts[code] = float(line.rsplit(" ", 1)[1])
    return counts


@pytest.mark.slow
def test_a_costly_hint_over_grpc_stops_at_its_deadline_and_the_cpu_goes_idle(
    server: tuple[subprocess.Popen[str], str, int],
) -> None:
    process, address, _ = server
    with grpc.insecure_channel(address) as channel:
        sent = time.monotonic()
        with pytest.raises(grpc.RpcError) as caught:
            game_pb2_grpc.GameStub(channel).Hint(COSTLY_HINT, timeout=DEADLINE_S)
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    deadline = sent + DEADLINE_S
    assert cpu_between(process.pid, deadline + 1, deadline + 3) < IDLE_CPU_S


@pytest.mark.slow
def test_a_costly_hint_over_http_stops_at_its_deadline_and_the_cpu_goes_idle(
    server: tuple[subprocess.Popen[str], str, int],
) -> None:
    process, _, http_port = server
    body = {"state": {"rows": 4, "cols": 13, "cells": list(COSTLY_HINT.state.cells)}, "maxNodesPerMove": "1"}
    client = Client(f"http://127.0.0.1:{http_port}")
    sent = time.monotonic()
    answer = client.call("Game/Hint", body, headers={"Connect-Timeout-Ms": str(int(DEADLINE_S * 1000))})
    assert (answer.status, answer.body["code"]) == (504, "deadline_exceeded"), answer.body
    deadline = sent + DEADLINE_S
    assert cpu_between(process.pid, deadline + 1, deadline + 3) < IDLE_CPU_S


@pytest.mark.slow
def test_without_a_deadline_the_server_time_limit_ends_a_costly_hint(
    short_limit_server: tuple[subprocess.Popen[str], str, int],
) -> None:
    process, address, _ = short_limit_server
    with grpc.insecure_channel(address) as channel, pytest.raises(grpc.RpcError) as caught:
        game_pb2_grpc.GameStub(channel).Hint(COSTLY_HINT)  # no deadline: ~4 s of work without the limit
    ended = time.monotonic()
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert "BOAF_BATCH_TIME_LIMIT_MS" in caught.value.details()
    assert cpu_between(process.pid, ended + 0.5, ended + 2.5) < IDLE_CPU_S
    counts = requests_total(process.metrics_port, "Hint")  # type: ignore[attr-defined]
    assert (counts.get("DEADLINE_EXCEEDED", 0), counts.get("OK", 0)) == (1, 0)
