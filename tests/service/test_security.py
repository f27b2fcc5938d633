"""Security you can turn on, over gRPC: bearer tokens, reflection off, metrics on their own host, no slowloris."""

from __future__ import annotations

import contextlib
import socket
import time
import urllib.request
from collections.abc import Iterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from servers import loopback_settings, ready_server, start_server, wait_for

from boaf.service.grpc.server import BoafServer
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc, game_pb2, game_pb2_grpc

TOKEN = "s3cret-token"
CODE = grpc.StatusCode


@pytest.fixture(scope="module")
def guarded() -> Iterator[BoafServer]:
    running = ready_server(loopback_settings(api_tokens=f"other, {TOKEN}", metrics_enabled=False))
    yield running
    running.stop(0)


def counted(server: BoafServer, method: str, code: str) -> float:
    return server.metrics.registry.get_sample_value("boaf_requests_total", {"method": method, "code": code}) or 0.0


def closed_by_peer(connection: socket.socket) -> bool:
    try:
        return connection.recv(1024) == b""
    except ConnectionResetError:
        return True


def code_of(call: object) -> grpc.StatusCode:
    try:
        call()  # type: ignore[operator]
    except grpc.RpcError as error:
        return error.code()  # type: ignore[no-any-return]
    return CODE.OK


@pytest.mark.parametrize(
    ("metadata", "code"),
    [
        ((), CODE.UNAUTHENTICATED),
        ((("authorization", "Bearer wrong"),), CODE.UNAUTHENTICATED),
        ((("authorization", TOKEN),), CODE.UNAUTHENTICATED),
        ((("authorization", f"Basic {TOKEN}"),), CODE.UNAUTHENTICATED),
        ((("authorization", f"Bearer {TOKEN}"),), CODE.OK),
        ((("authorization", f"bearer {TOKEN} "),), CODE.OK),
    ],
    ids=["none", "wrong", "no scheme", "basic", "bearer", "lower case"],
)
def test_every_rpc_needs_a_bearer_token_when_tokens_are_set(
    guarded: BoafServer, metadata: tuple[tuple[str, str], ...], code: grpc.StatusCode
) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{guarded.port}") as channel:
        boaf, game = boaf_pb2_grpc.BoafStub(channel), game_pb2_grpc.GameStub(channel)
        reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
        asks = [reflection_pb2.ServerReflectionRequest(list_services="")]
        assert code_of(lambda: boaf.GetServerInfo(pb.GetServerInfoRequest(), metadata=metadata, timeout=5)) == code
        assert code_of(lambda: game.Deal(game_pb2.DealRequest(seed=1), metadata=metadata, timeout=5)) == code
        assert code_of(lambda: list(reflection.ServerReflectionInfo(iter(asks), metadata=metadata, timeout=5))) == code


def test_health_needs_no_token_and_refusals_are_counted(guarded: BoafServer) -> None:
    before = counted(guarded, "Solve", "UNAUTHENTICATED")
    with grpc.insecure_channel(f"127.0.0.1:{guarded.port}") as channel:
        health = health_pb2_grpc.HealthStub(channel)
        assert health.Check(health_pb2.HealthCheckRequest(), timeout=5).status == 1
        watch = health.Watch(health_pb2.HealthCheckRequest(), timeout=5)
        assert next(watch).status == 1
        watch.cancel()
        with pytest.raises(grpc.RpcError) as caught:
            boaf_pb2_grpc.BoafStub(channel).Solve(pb.SolveRequest(), timeout=5)
    assert caught.value.code() == CODE.UNAUTHENTICATED
    assert "Bearer" in caught.value.details()
    assert counted(guarded, "Solve", "UNAUTHENTICATED") == before + 1


def test_reflection_can_be_turned_off() -> None:
    server = start_server(loopback_settings(reflection_enabled=False, metrics_enabled=False))
    try:
        with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            for version in ("v1", "v1alpha"):
                stream = channel.stream_stream(f"/grpc.reflection.{version}.ServerReflection/ServerReflectionInfo")
                with pytest.raises(grpc.RpcError) as caught:
                    list(stream(iter([reflection_pb2.ServerReflectionRequest(list_services="").SerializeToString()])))
                assert caught.value.code() == CODE.UNIMPLEMENTED
    finally:
        server.stop(0)


def test_metrics_bind_their_own_host_not_the_service_host() -> None:
    server = start_server(loopback_settings(host="0.0.0.0", metrics_host="127.0.0.1"))
    try:
        assert server.metrics._http is not None
        assert server.metrics._http.server_address[0] == "127.0.0.1"
        with urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=5) as page:
            assert b"boaf_ready" in page.read()
    finally:
        server.stop(0)


def test_slow_metrics_clients_are_cut_off_and_scrapes_still_answer() -> None:
    server = start_server(loopback_settings(http_header_timeout_s=2.0))
    slow = [socket.create_connection(("127.0.0.1", server.metrics_port), timeout=5) for _ in range(20)]
    try:
        started = time.monotonic()
        for _ in range(4):  # a byte every 0.25 s: each read succeeds, the request never ends
            for connection in slow:
                with contextlib.suppress(OSError):  # cut off already (a loaded machine)
                    connection.sendall(b"G")
            time.sleep(0.25)
        with urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=5) as page:
            assert page.status == 200  # the slow ones hold no scrape up
        for connection in slow:  # cut off: the server closed them at the request timeout
            connection.settimeout(3)
            assert closed_by_peer(connection)
        assert time.monotonic() - started < 4
        assert wait_for(lambda: server.metrics._http is not None and server.metrics._http._connections._value == 64)
    finally:
        for connection in slow:
            connection.close()
        server.stop(0)
