"""A gRPC client that never takes its answer holds no worker nor call place; the answer ends at BOAF_IDLE_TIMEOUT_S.

grpcio's client always reads, so these tests speak HTTP/2 themselves (``h2``): the
client offers a window of ``WINDOW`` bytes for the answer and never widens it, so the
server can send no more than that of a ~3 MB Features answer, and the client then
reads nothing more. The gate (``boaf.service.grpc.interceptors``) cancels an answer not taken
within the idle timeout; while it waits, the call holds neither its place (given back
as the answer was handed over) nor a work slot.
"""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import grpc
import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from servers import channel_to, loopback_settings, ready_server, wait_for

from boaf.game import deal
from boaf.game.deals import random_states
from boaf.service.grpc.server import BoafServer
from boaf.service.rpc.converters import state_to_proto
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc

IDLE_TIMEOUT_S = 3.0
WINDOW = 1024  # bytes of the answer the client lets the server send
# 2x2 states are cheap to compute and small to send (~20 bytes each), but each answers 43 doubles (~350 bytes).
STATES = 9_000
FEATURES = "/boaf.v1.Boaf/Features"
CANCELLED = str(grpc.StatusCode.CANCELLED.value[0])
CUT = (CANCELLED, "reset")  # gRPC core ends a cancelled call with its status in trailers, or may reset the stream


@pytest.fixture(scope="module")
def server() -> Iterator[BoafServer]:
    settings = loopback_settings(
        idle_timeout_s=IDLE_TIMEOUT_S, max_batch_size=STATES, max_message_bytes=4 * 1024 * 1024
    )
    running = ready_server(settings)
    yield running
    running.stop(0)


@pytest.fixture(scope="module")
def large_answer() -> bytes:
    """A Features request whose answer is ~3 MB."""
    states = random_states(21, STATES, rows=2, cols=2)
    return pb.FeaturesRequest(states=[state_to_proto(state) for state in states]).SerializeToString()


class SlowReader:
    """One gRPC call on a raw HTTP/2 connection whose client never takes the answer.

    It sends the request within the server's flow-control windows (reading only the
    window updates that needs), offers ``WINDOW`` bytes for the answer and never
    widens it, and reads nothing more until ``outcome`` asks how the call ended.
    """

    def __init__(self, port: int, method: str, message: bytes) -> None:
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=30)
        config = h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
        self.h2 = h2.connection.H2Connection(config)
        self.h2.local_settings = h2.settings.Settings(
            client=True, initial_values={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: WINDOW}
        )
        self.h2.initiate_connection()
        self.stream = self.h2.get_next_available_stream_id()
        headers = [
            (":method", "POST"),
            (":scheme", "http"),
            (":path", method),
            (":authority", f"127.0.0.1:{port}"),
            ("content-type", "application/grpc"),
            ("te", "trailers"),
        ]
        self.h2.send_headers(self.stream, headers)
        self._flush()
        self._send(b"\x00" + struct.pack(">I", len(message)) + message)  # not compressed, length, message
        self.received = 0  # answer bytes the server sent

    def outcome(self) -> str:
        """How the call ended for its client: the ``grpc-status`` it got, ``"reset"`` or ``"connection closed"``.

        Reads until then (at most the socket's timeout).
        """
        status = "no status"
        while True:
            try:
                events = self._read()
            except (ConnectionError, h2.exceptions.ProtocolError):  # a GOAWAY (h2 then refuses what follows), or EOF
                return "connection closed"
            for event in events:
                if isinstance(event, h2.events.DataReceived):
                    self.received += event.flow_controlled_length  # never acknowledged: the window stays shut
                elif isinstance(event, h2.events.TrailersReceived):
                    status = dict(event.headers).get("grpc-status", status)
                elif isinstance(event, h2.events.StreamReset):
                    return "reset"
                elif isinstance(event, h2.events.StreamEnded):
                    return status
                elif isinstance(event, h2.events.ConnectionTerminated):
                    return "connection closed"

    def close(self) -> None:
        self.socket.close()

    def _send(self, data: bytes) -> None:
        sent = 0
        while sent < len(data):
            room = min(self.h2.local_flow_control_window(self.stream), self.h2.max_outbound_frame_size)
            if room == 0:
                self._read()  # the server's window update
                continue
            piece = data[sent : sent + room]
            sent += len(piece)
            self.h2.send_data(self.stream, piece, end_stream=sent == len(data))
            self._flush()

    def _read(self) -> list[h2.events.Event]:
        data = self.socket.recv(65536)
        if not data:
            raise ConnectionError("the server closed the connection")
        events = self.h2.receive_data(data)
        self._flush()  # acknowledges settings and pings; h2 sends no window update unless told to
        return events

    def _flush(self) -> None:
        self.socket.sendall(self.h2.data_to_send())


def counted(server: BoafServer, method: str, code: str) -> float:
    return server.metrics.registry.get_sample_value("boaf_requests_total", {"method": method, "code": code}) or 0.0


@contextmanager
def every_work_slot(server: BoafServer) -> Iterator[None]:
    """Hold all the work slots (``DeadlineExceeded`` when one stays taken for 5 s)."""
    with ExitStack() as slots:
        for _ in range(server.settings.max_workers):
            slots.enter_context(server.admission.work_slot(time.perf_counter() + 5, lambda: True))
        yield


def assert_calls_answer(server: BoafServer) -> None:
    with channel_to(server) as channel:
        easy = state_to_proto(deal(1))
        stub = boaf_pb2_grpc.BoafStub(channel)
        assert len(stub.Classify(pb.ClassifyRequest(states=[easy] * 4), timeout=5).predictions) == 4
        health = health_pb2_grpc.HealthStub(channel)
        assert health.Check(health_pb2.HealthCheckRequest(), timeout=5).status == health_pb2.HealthCheckResponse.SERVING


def test_an_answer_the_client_does_not_take_is_cancelled_and_gives_its_place_back(
    server: BoafServer, large_answer: bytes
) -> None:
    before = counted(server, "Features", "OK")
    reader = SlowReader(server.port, FEATURES, large_answer)
    try:
        # Counted once, when its answer is made (the code the server answered; the client then does not take it).
        assert wait_for(lambda: counted(server, "Features", "OK") == before + 1, timeout=20)
        with every_work_slot(server):  # the answer waits without a work slot
            pass
        assert reader.outcome() in CUT
        assert reader.received <= WINDOW
        assert wait_for(lambda: server.admission.calls == 0, timeout=5)
    finally:
        reader.close()
    assert counted(server, "Features", "OK") == before + 1
    assert_calls_answer(server)


def test_slow_readers_up_to_the_call_cap_are_cut_and_then_every_call_answers(
    server: BoafServer, large_answer: bytes
) -> None:
    limit = server.settings.max_concurrent_rpcs
    before = counted(server, "Features", "OK")
    readers: list[SlowReader] = []
    try:
        readers += [SlowReader(server.port, FEATURES, large_answer) for _ in range(limit)]
        # Each answer waits for its client among the answers waiting (bounded by the call places' bytes), its
        # place given back, and no work slot held.
        admitted = server.admission
        assert wait_for(lambda: admitted.calls == 0 and admitted.answers_waiting == limit, timeout=IDLE_TIMEOUT_S)
        with every_work_slot(server):
            pass
        with channel_to(server) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            serving = health.Check(health_pb2.HealthCheckRequest(), timeout=5).status  # probes have places of their own
            assert serving == health_pb2.HealthCheckResponse.SERVING
        # Once the idle timeout has passed, every one is cancelled, and its place given back.
        outcomes = [reader.outcome() for reader in readers]
        assert all(outcome in CUT for outcome in outcomes), outcomes
        assert all(reader.received <= WINDOW for reader in readers)
        assert wait_for(lambda: server.admission.calls == 0, timeout=5)
    finally:
        for reader in readers:
            reader.close()
    assert counted(server, "Features", "OK") == before + limit
    assert_calls_answer(server)
