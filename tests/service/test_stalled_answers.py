"""A gRPC client that never takes its answers (a zero flow-control window) shuts no other client out.

A unary call gives its place back as it hands its answer to gRPC, and the answer waits
for its client among a bounded set (``boaf.service.core.admission.Admission.hand_over``);
past the bound the oldest waiting answer is cancelled, never a new call refused. These
tests speak HTTP/2 themselves (``h2``), on one connection whose receive window is 0.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator

import h2.config
import h2.connection
import h2.events
import h2.settings
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from servers import channel_to, loopback_settings, ready_server, wait_for

from boaf.game import deal
from boaf.service.core.admission import Admission
from boaf.service.core.settings import PROBE_CALLS
from boaf.service.grpc.server import BoafServer
from boaf.service.rpc.converters import state_to_proto
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc

CLASSIFY = "/boaf.v1.Boaf/Classify"
HEALTH_CHECK = "/grpc.health.v1.Health/Check"
STALLED_PER_PLACE = 3  # stalled streams opened per call place


@pytest.fixture(scope="module")
def server() -> Iterator[BoafServer]:
    running = ready_server(loopback_settings(idle_timeout_s=60.0))
    yield running
    running.stop(0)


def evicted(server: BoafServer) -> float:
    return server.metrics.registry.get_sample_value("boaf_answers_evicted_total") or 0.0


class ZeroWindow:
    """One raw HTTP/2 connection that offers no window for answers: the server can send no answer bytes."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=30)
        config = h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
        self.h2 = h2.connection.H2Connection(config)
        self.h2.local_settings = h2.settings.Settings(
            client=True, initial_values={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0}
        )
        self.h2.initiate_connection()
        self._flush()

    def call(self, method: str, message: bytes) -> int:
        """Open a stream and send one small request on it (within the server's window); its stream id."""
        stream = self.h2.get_next_available_stream_id()
        headers = [
            (":method", "POST"),
            (":scheme", "http"),
            (":path", method),
            (":authority", f"127.0.0.1:{self.port}"),
            ("content-type", "application/grpc"),
            ("te", "trailers"),
        ]
        self.h2.send_headers(stream, headers)
        self.h2.send_data(stream, b"\x00" + struct.pack(">I", len(message)) + message, end_stream=True)
        self._flush()
        return stream

    def ended_streams(self, seconds: float) -> list[int]:
        """Streams the server ended (reset, or trailers), in the order it ended them, read for ``seconds``."""
        ended: list[int] = []
        self.socket.settimeout(seconds)
        try:
            while data := self.socket.recv(65536):
                for event in self.h2.receive_data(data):
                    if isinstance(event, h2.events.StreamReset | h2.events.StreamEnded):
                        ended.append(event.stream_id)
                self._flush()
        except TimeoutError:
            pass
        return ended

    def close(self) -> None:
        self.socket.close()

    def _flush(self) -> None:
        self.socket.sendall(self.h2.data_to_send())


def test_stalled_answers_past_the_call_cap_evict_the_oldest_and_other_clients_are_answered(server: BoafServer) -> None:
    limit = server.settings.max_concurrent_rpcs
    request = pb.ClassifyRequest(states=[state_to_proto(deal(1))])
    before = evicted(server)
    stalled = ZeroWindow(server.port)
    streams: list[int] = []
    try:
        for count in range(1, STALLED_PER_PLACE * limit + 1):
            # One at a time, so that the answers are handed over in the order of their streams.
            streams.append(stalled.call(CLASSIFY, request.SerializeToString()))
            assert wait_for(
                lambda count=count: server.admission.answers_waiting + evicted(server) - before == count, timeout=20
            )
            assert server.admission.calls == 0  # a waiting answer holds no place
        assert server.admission.answers_waiting == limit
        assert evicted(server) - before == len(streams) - limit
        with channel_to(server) as channel:
            stub = boaf_pb2_grpc.BoafStub(channel)
            for _ in range(2 * limit):  # more calls than places: each is answered
                assert len(stub.Classify(request, timeout=10).predictions) == 1
        # The oldest were cancelled, oldest first (the other client's answers, waiting a moment each, evict
        # a few more), and the newest stalled answers still wait.
        ended = stalled.ended_streams(seconds=1.0)
        assert len(streams) - limit <= len(ended) < len(streams), (ended, streams)
        assert ended == streams[: len(ended)], (ended, streams)
    finally:
        stalled.close()
    # The client went away: its waiting answers end, and nothing is left held.
    assert wait_for(lambda: server.admission.answers_waiting == 0 and server.admission.calls == 0, timeout=10)


def test_stalled_health_checks_leave_the_probe_places_free(server: BoafServer) -> None:
    stalled = ZeroWindow(server.port)
    try:
        for _ in range(2 * PROBE_CALLS):
            stalled.call(HEALTH_CHECK, health_pb2.HealthCheckRequest().SerializeToString())
        assert wait_for(lambda: server.admission.answers_waiting >= PROBE_CALLS, timeout=20)
        with channel_to(server) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            for _ in range(2 * PROBE_CALLS):
                status = health.Check(health_pb2.HealthCheckRequest(), timeout=10).status
                assert status == health_pb2.HealthCheckResponse.SERVING
    finally:
        stalled.close()
    assert wait_for(lambda: server.admission.answers_waiting == 0 and server.admission.calls == 0, timeout=10)


def test_a_new_call_evicts_the_oldest_answers_until_the_places_bytes_hold() -> None:
    settings = loopback_settings(max_concurrent_rpcs=4, max_message_bytes=100)
    admission = Admission(settings)
    cancelled: list[str] = []
    for name in "abc":
        admission.try_call()
        admission.hand_over(100, lambda name=name: cancelled.append(name))  # each a full message
    assert (admission.calls, admission.answers_waiting, cancelled) == (0, 3, [])
    admission.try_call()
    admission.try_call()  # 3 answers and 2 calls: 5 messages, the places' bytes and the spare
    assert cancelled == []
    admission.try_call()  # 6: the oldest goes
    assert cancelled == ["a"]
    admission.try_call()
    assert (admission.calls, admission.answers_waiting, cancelled) == (4, 1, ["a", "b"])
    for _ in range(4):
        admission.end_call()


def test_with_every_place_taken_a_small_answer_waits_to_be_sent_and_is_not_cancelled() -> None:
    # A health check's or a single-state Classify's answer, handed over while every place is taken by
    # calls that may each hold a full message: the spare holds it (SPARE_ANSWER_MESSAGES).
    settings = loopback_settings(max_concurrent_rpcs=4, max_message_bytes=100)
    admission = Admission(settings)
    for _ in range(4):
        admission.try_call()
    cancelled: list[str] = []
    key = admission.hand_over(30, lambda: cancelled.append("probe"), holds_place=False)
    admission.hand_over(30, lambda: cancelled.append("classify"))  # its place goes back; a new call takes it
    admission.try_call()
    assert (admission.calls, admission.answers_waiting, cancelled) == (4, 2, [])
    admission.taken(key)
    for _ in range(4):
        admission.end_call()


def test_answers_past_the_call_cap_evict_the_oldest_and_an_ended_call_leaves_the_set() -> None:
    admission = Admission(loopback_settings(max_concurrent_rpcs=2))
    cancelled: list[int] = []
    keys = []
    for number in range(4):
        admission.try_call()
        keys.append(admission.hand_over(10, lambda number=number: cancelled.append(number)))
    assert (admission.answers_waiting, cancelled) == (2, [0, 1])
    admission.taken(keys[3])
    admission.taken(keys[0])  # evicted already: nothing
    assert admission.answers_waiting == 1
    admission.taken(keys[2])
    assert (admission.calls, admission.answers_waiting) == (0, 0)
