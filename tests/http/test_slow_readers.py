"""An HTTP client that never reads its answer is cut after BOAF_IDLE_TIMEOUT_S, and holds no place past it.

The client shrinks its receive buffer and never reads. An answer larger than the
kernel's socket buffers (``tcp_wmem``'s maximum) then stays partly in the server's
memory; the call keeps its place among the calls in flight while it does (the
memory model counts it), holds no work slot, and once the idle timeout has passed
the connection is cut (``boaf.service.http.protocol``), its answer's bytes dropped and its
place given back.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from google.protobuf import json_format
from http_client import Client, read_until_closed
from servers import loopback_settings, ready_server, wait_for

from boaf.game.deals import random_states
from boaf.service.grpc.server import BoafServer
from boaf.service.http import HttpServer
from boaf.service.rpc.converters import state_to_proto
from boaf.v1 import boaf_pb2 as pb

IDLE_TIMEOUT_S = 2.0
CLIENT_BUFFER = 4096  # bytes: the client's receive buffer (the kernel doubles it)
ANSWER_BYTES_PER_STATE = 250  # at least: a 2x2 state's 43 features in JSON (~290 bytes)
OVER_THE_KERNEL = 2 * 1024 * 1024  # bytes of the answer past what the kernel can hold for the client
READERS = 2


def kernel_send_buffer() -> int:
    """The most a TCP socket's send buffer may grow to, in bytes (``net.ipv4.tcp_wmem``'s maximum)."""
    try:
        return int(Path("/proc/sys/net/ipv4/tcp_wmem").read_text().split()[2])
    except (OSError, IndexError, ValueError):
        return 4 * 1024 * 1024


STATES = (kernel_send_buffer() + OVER_THE_KERNEL) // ANSWER_BYTES_PER_STATE


@pytest.fixture(scope="module")
def boaf() -> Iterator[BoafServer]:
    settings = loopback_settings(
        grpc_enabled=False,
        http_port=0,
        idle_timeout_s=IDLE_TIMEOUT_S,
        max_batch_size=STATES,
        max_message_bytes=4 * 1024 * 1024,
        max_concurrent_rpcs=READERS + 1,
    )
    running = ready_server(settings)
    yield running
    running.stop(0)


@pytest.fixture(scope="module")
def web(boaf: BoafServer) -> Iterator[HttpServer]:
    server = HttpServer(boaf)
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def large_answer() -> bytes:
    """A Features POST whose answer is larger than the kernel's buffers (~7 MB on Linux's defaults)."""
    states = random_states(21, STATES, rows=2, cols=2)
    request = pb.FeaturesRequest(states=[state_to_proto(state) for state in states])
    body = json.dumps(json_format.MessageToDict(request), separators=(",", ":")).encode()
    head = (
        f"POST /boaf.v1.Boaf/Features HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def slow_reader(web: HttpServer, request: bytes) -> socket.socket:
    """A connection that sends ``request`` and reads nothing (until the test does)."""
    connection = socket.socket()
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, CLIENT_BUFFER)  # before connecting: the window
    connection.settimeout(30)
    connection.connect(("127.0.0.1", web.port))
    connection.sendall(request)
    return connection


def cut_short(connection: socket.socket) -> bool:
    """True when what the server sent ends (closed or reset) before the answer's Content-Length."""
    received, closed = read_until_closed(connection)
    head, _, body = received.partition(b"\r\n\r\n")
    headers = dict(line.split(": ", 1) for line in head.decode("latin-1").split("\r\n")[1:])
    return closed and head.startswith(b"HTTP/1.1 200") and len(body) < int(headers["content-length"])


def counted(boaf: BoafServer, method: str, code: str) -> float:
    return boaf.metrics.registry.get_sample_value("boaf_requests_total", {"method": method, "code": code}) or 0.0


@contextmanager
def every_work_slot(boaf: BoafServer) -> Iterator[None]:
    """Hold all the work slots (``DeadlineExceeded`` when one stays taken for 5 s)."""
    with ExitStack() as slots:
        for _ in range(boaf.settings.max_workers):
            slots.enter_context(boaf.admission.work_slot(time.perf_counter() + 5, lambda: True))
        yield


def assert_calls_answer(web: HttpServer) -> None:
    client = Client(f"http://127.0.0.1:{web.port}")
    assert client.call("Game/Deal", {"seed": 1}).status == 200
    state = json_format.MessageToDict(state_to_proto(random_states(1, 1)[0]))
    assert len(client.call("Boaf/Classify", {"states": [state] * 4}).body["predictions"]) == 4


def test_an_answer_the_client_does_not_read_is_cut_after_the_idle_timeout(
    boaf: BoafServer, web: HttpServer, large_answer: bytes
) -> None:
    before = counted(boaf, "Features", "OK")
    with slow_reader(web, large_answer) as connection:
        assert wait_for(lambda: counted(boaf, "Features", "OK") == before + 1, timeout=30)  # counted once, answered
        # The answer waits in the server's memory: the call keeps its place, and holds no work slot.
        assert boaf.admission.calls == 1
        with every_work_slot(boaf):
            pass
        # Past the idle timeout the connection is cut, its answer dropped, and its place given back.
        assert wait_for(lambda: web.connections == 0, timeout=IDLE_TIMEOUT_S + 10)
        assert wait_for(lambda: boaf.admission.calls == 0, timeout=5)  # given back as the failed send ends
        assert cut_short(connection)
    assert counted(boaf, "Features", "OK") == before + 1
    assert_calls_answer(web)


def test_slow_readers_hold_their_places_only_until_the_idle_timeout(
    boaf: BoafServer, web: HttpServer, large_answer: bytes
) -> None:
    before = counted(boaf, "Features", "OK")
    with ExitStack() as readers:
        connections = [readers.enter_context(slow_reader(web, large_answer)) for _ in range(READERS)]
        assert wait_for(lambda: counted(boaf, "Features", "OK") == before + READERS, timeout=60)
        assert Client(f"http://127.0.0.1:{web.port}").call("Game/Deal", {"seed": 1}).status == 200  # they wait
        assert wait_for(lambda: web.connections == 0, timeout=IDLE_TIMEOUT_S + 10)
        assert wait_for(lambda: boaf.admission.calls == 0, timeout=5)  # given back as the failed send ends
        assert all(cut_short(connection) for connection in connections)
    assert_calls_answer(web)
