"""The metrics port's connections: idle ones are cut, excess ones are closed at once, a burst waits in the backlog.

A real ``MetricsServer`` on a loopback port. A connection is "closed" for its client when a
read gets end-of-file or a reset; "open" when nothing arrives at all.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry

from boaf.service.core.metrics import METRICS_BACKLOG, METRICS_CONNECTIONS, MetricsServer

REQUEST_TIMEOUT_S = 1.0
BURST = 320  # what the attack suite opened at once; socketserver's default backlog of 5 left 302 of them open
SETTLE_S = 0.5  # a margin past the request timeout for the server to cut and the client to see it


@contextlib.contextmanager
def metrics_server(*, serving: bool = True) -> Iterator[tuple[MetricsServer, threading.Thread]]:
    server = MetricsServer(("127.0.0.1", 0), CollectorRegistry(), REQUEST_TIMEOUT_S)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    if serving:
        thread.start()
    try:
        yield server, thread
    finally:
        if thread.is_alive():
            server.shutdown()
        server.server_close()


def connect(port: int) -> socket.socket:
    """A connection that sends nothing, opened without waiting for the handshake."""
    sock = socket.socket()
    sock.setblocking(False)
    with contextlib.suppress(BlockingIOError):
        sock.connect(("127.0.0.1", port))
    return sock


def closed(sock: socket.socket) -> bool:
    """True when the server closed ``sock``: a read gets end-of-file or a reset, without waiting."""
    readable, _, _ = select.select([sock], [], [], 0)
    if not readable:
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def open_count(socks: list[socket.socket], within_s: float) -> int:
    """How many of ``socks`` are still open once all are closed or ``within_s`` seconds have passed."""
    deadline = time.monotonic() + within_s
    while (still := sum(not closed(sock) for sock in socks)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return still


def descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture
def socks() -> Iterator[list[socket.socket]]:
    opened: list[socket.socket] = []
    yield opened
    for sock in opened:
        sock.close()


def test_the_backlog_holds_a_burst_the_accept_loop_has_not_reached() -> None:
    assert MetricsServer.request_queue_size == METRICS_BACKLOG >= BURST


def test_a_burst_before_the_accept_loop_is_closed_within_the_request_timeout(socks: list[socket.socket]) -> None:
    with metrics_server(serving=False) as (server, thread):
        before = descriptors()
        socks += [connect(server.server_address[1]) for _ in range(BURST)]
        time.sleep(0.2)  # the kernel completes the handshakes into the backlog
        thread.start()
        assert open_count(socks, REQUEST_TIMEOUT_S + SETTLE_S) == 0
        # the server's descriptors are given back: only the test's own sockets remain
        deadline = time.monotonic() + SETTLE_S
        while descriptors() > before + BURST and time.monotonic() < deadline:
            time.sleep(0.05)
        assert descriptors() <= before + BURST


def test_excess_connections_are_closed_at_once_and_idle_ones_within_the_timeout(socks: list[socket.socket]) -> None:
    with metrics_server() as (server, _):
        port = server.server_address[1]
        socks += [connect(port) for _ in range(METRICS_CONNECTIONS)]
        time.sleep(0.2)  # each is accepted and holds a slot
        extra = connect(port)
        socks.append(extra)
        assert open_count([extra], REQUEST_TIMEOUT_S / 2) == 0  # refused long before the timeout
        started = time.monotonic()
        assert open_count(socks, REQUEST_TIMEOUT_S + SETTLE_S) == 0
        assert time.monotonic() - started <= REQUEST_TIMEOUT_S + SETTLE_S
