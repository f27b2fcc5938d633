"""A gRPC call reads its peer (``context.peer()``) at most once, and a call that succeeds only for admission.

grpcio's ``peer()`` lets go of the GIL; under load each such call waits its turn to take
it back, so five reads a call (the gate's four and the servicer's one) cost a Classify of
one state about a fifth of its throughput at 16 clients on two cores
(``benchmarks/percall.py --baseline``). These tests count the reads on the session's real
server, whatever the timing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import grpc
import pytest
from grpc import _server as grpc_server
from grpc_health.v1 import health_pb2, health_pb2_grpc
from servers import channel_to, grid_state, loopback_settings, ready_server

from boaf.service.rpc.call import Call
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc

STATE = "AS 2S 3S\n4S 5S 6S"


class PeerReads:
    """Counts ``grpc._server._Context.peer`` calls, in every server thread, while installed."""

    def __init__(self) -> None:
        self.count = 0
        self._lock = threading.Lock()
        self._peer = grpc_server._Context.peer

    def read(self, context: grpc.ServicerContext) -> str:
        with self._lock:
            self.count += 1
        return str(self._peer(context))

    def take(self) -> int:
        with self._lock:
            count, self.count = self.count, 0
        return count


@pytest.fixture
def peer_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[PeerReads]:
    reads = PeerReads()
    monkeypatch.setattr(grpc_server._Context, "peer", lambda context: reads.read(context))
    yield reads


def test_a_call_that_succeeds_reads_its_peer_once(
    stub: boaf_pb2_grpc.BoafStub, channel: grpc.Channel, peer_reads: PeerReads
) -> None:
    stub.Classify(pb.ClassifyRequest(states=[grid_state(STATE)]), timeout=30)
    assert peer_reads.take() == 1, "Classify: the gate's one read for its admission"
    stub.Solve(pb.SolveRequest(state=grid_state(STATE)), timeout=30)
    assert peer_reads.take() == 1
    stub.GetServerInfo(pb.GetServerInfoRequest(), timeout=30)
    assert peer_reads.take() == 1
    health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=30)
    assert peer_reads.take() == 1, "a probe reads it to hand its answer over"


def test_a_call_the_gate_refuses_before_admission_reads_no_peer(peer_reads: PeerReads) -> None:
    # A refusal costs what its bytes cost: a call without its bearer token never reaches a read of its peer.
    server = ready_server(loopback_settings(api_tokens="a-token", metrics_enabled=False))
    try:
        with channel_to(server) as channel:
            peer_reads.take()
            with pytest.raises(grpc.RpcError) as refused:
                boaf_pb2_grpc.BoafStub(channel).Classify(pb.ClassifyRequest(states=[grid_state(STATE)]), timeout=30)
            assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
            assert peer_reads.take() == 0
    finally:
        server.stop(0)


def test_a_call_that_fails_reads_its_peer_at_most_twice(stub: boaf_pb2_grpc.BoafStub, peer_reads: PeerReads) -> None:
    # The gate's read, and the servicer's, which names the peer of a failure it logs.
    with pytest.raises(grpc.RpcError) as failed:
        stub.Classify(pb.ClassifyRequest(states=[pb.State(rows=2, cols=3, cells=["ZZ"] * 6)]), timeout=30)
    assert failed.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert peer_reads.take() <= 2


def test_a_calls_peer_is_read_when_first_asked_for_and_once() -> None:
    reads: list[str] = []

    def peer() -> str:
        reads.append("read")
        return "ipv4:127.0.0.1:1"

    call = Call(peer, None)
    assert reads == []
    assert call.peer == "ipv4:127.0.0.1:1"
    assert call.peer == "ipv4:127.0.0.1:1"
    assert reads == ["read"]
    assert Call("http:127.0.0.1", None).peer == "http:127.0.0.1"
