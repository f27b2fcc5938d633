"""Streams never hold a worker: idle health Watch and reflection streams up to their cap leave every call answering.

The concurrency model (``boaf.service.core.admission``): unary calls are counted against
``BOAF_MAX_CONCURRENT_RPCS``, streams apart against ``BOAF_MAX_STREAMS``, and
each admitted call or stream has a thread of its own, so no number of idle
streams shuts out a call. One stream past the cap is RESOURCE_EXHAUSTED, and
counted; a stream that ends gives its place back.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Iterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from servers import loopback_settings, ready_server, wait_for

from boaf.game import deal
from boaf.service.core.settings import Settings
from boaf.service.grpc.server import BoafServer
from boaf.service.rpc.converters import state_to_proto
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc

STREAMS = Settings().max_streams  # the default cap, split between Watch and reflection
CODE = grpc.StatusCode


@pytest.fixture(scope="module")
def server() -> Iterator[BoafServer]:
    running = ready_server(loopback_settings(max_streams=STREAMS))
    yield running
    running.stop(0)


class Requests:
    """A reflection stream's request iterator that stays open (half-open: no more requests) until closed."""

    def __init__(self) -> None:
        self._queue: queue.Queue[reflection_pb2.ServerReflectionRequest | None] = queue.Queue()

    def send(self, request: reflection_pb2.ServerReflectionRequest) -> None:
        self._queue.put(request)

    def close(self) -> None:
        self._queue.put(None)

    def __iter__(self) -> Iterator[reflection_pb2.ServerReflectionRequest]:
        while (request := self._queue.get()) is not None:
            yield request


def open_streams(channel: grpc.Channel, watches: int, reflections: int) -> tuple[list[grpc.Future], list[Requests]]:
    """``watches`` health Watch streams and ``reflections`` reflection streams, each answered once, then idle."""
    health = health_pb2_grpc.HealthStub(channel)
    reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
    calls: list[grpc.Future] = []
    senders: list[Requests] = []
    for _ in range(watches):
        watch = health.Watch(health_pb2.HealthCheckRequest(service="boaf.v1.Boaf"), timeout=120)
        assert next(watch).status == health_pb2.HealthCheckResponse.SERVING
        calls.append(watch)
    for _ in range(reflections):
        sender = Requests()
        stream = reflection.ServerReflectionInfo(iter(sender), timeout=120)
        sender.send(reflection_pb2.ServerReflectionRequest(list_services=""))
        assert next(stream).list_services_response.service
        calls.append(stream)
        senders.append(sender)
    return calls, senders


def counted(server: BoafServer, method: str, code: str) -> float:
    return server.metrics.registry.get_sample_value("boaf_requests_total", {"method": method, "code": code}) or 0.0


def test_idle_streams_up_to_the_cap_leave_every_call_answering(server: BoafServer) -> None:
    assert STREAMS >= 32
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        calls, senders = open_streams(channel, STREAMS // 2, STREAMS - STREAMS // 2)
        try:
            assert server.admission.streams == STREAMS
            stub = boaf_pb2_grpc.BoafStub(channel)
            easy = state_to_proto(deal(1))
            assert len(stub.Classify(pb.ClassifyRequest(states=[easy] * 4), timeout=3).predictions) == 4
            assert stub.Solve(pb.SolveRequest(state=easy), timeout=3).status == pb.SOLVABLE
            health = health_pb2_grpc.HealthStub(channel)
            assert health.Check(health_pb2.HealthCheckRequest(), timeout=3).status == 1
            # One stream more, of either kind, is turned away at once, and counted.
            before = counted(server, "Watch", "RESOURCE_EXHAUSTED")
            with pytest.raises(grpc.RpcError) as caught:
                next(health.Watch(health_pb2.HealthCheckRequest(), timeout=3))
            assert caught.value.code() == CODE.RESOURCE_EXHAUSTED
            assert "BOAF_MAX_STREAMS" in caught.value.details()
            assert counted(server, "Watch", "RESOURCE_EXHAUSTED") == before + 1
            one_more = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo(
                iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=3
            )
            with pytest.raises(grpc.RpcError) as caught:
                list(one_more)
            assert caught.value.code() == CODE.RESOURCE_EXHAUSTED
        finally:
            for sender in senders:
                sender.close()
            for call in calls:
                call.cancel()
        # Closed streams give their places back.
        assert wait_for(lambda: server.admission.streams == 0, timeout=10)
        again, more = open_streams(channel, 2, 2)
        for sender in more:
            sender.close()
        for call in again:
            call.cancel()


def test_a_half_open_reflection_stream_is_closed_after_the_idle_timeout() -> None:
    server = ready_server(loopback_settings(idle_timeout_s=1.0))
    try:
        with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            (stream,), (sender,) = open_streams(channel, 0, 1)
            started = time.monotonic()
            with pytest.raises(grpc.RpcError) as caught:
                next(stream)  # the client sends nothing more and never closes its side
            assert caught.value.code() == CODE.CANCELLED
            assert time.monotonic() - started < 3
            assert wait_for(lambda: server.admission.streams == 0, timeout=5)
            sender.close()
    finally:
        server.stop(0)
