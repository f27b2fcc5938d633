"""Health, reflection, metrics, deadlines, cancellation, concurrency, shutdown and TLS."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path

import grpc
import pytest
from google.protobuf.descriptor_pool import DescriptorPool
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase
from grpc_status import rpc_status
from servers import (
    GatedLoader,
    channel_to,
    health_status,
    loopback_settings,
    ready_server,
    start_server,
    wait_for,
)

from boaf.game import deal
from boaf.service.app import BoafService
from boaf.service.core.compile_log import COMPILING
from boaf.service.core.errors import SHUTTING_DOWN_MESSAGE
from boaf.service.core.lifecycle import NOT_LOADED, Lifecycle, Stage
from boaf.service.core.warmup import RETRY_AFTER_S
from boaf.service.grpc.server import STOP_MARGIN_S
from boaf.service.rpc.converters import state_to_proto
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
HARDEST_DEAL = 360528  # unsolvable: 4,013,578 nodes without the stranded-leaf rules (CONSTRAINED: never decided)


def long_solve() -> pb.SolveRequest:
    """A search that runs for seconds: the hardest deal with plain DFS and no pruning."""
    return pb.SolveRequest(state=state_to_proto(deal(HARDEST_DEAL)), algorithm=pb.CONSTRAINED)


def requests_counted(server: BoafService, method: str, code: str) -> float:
    value = server.metrics.registry.get_sample_value("boaf_requests_total", {"method": method, "code": code})
    return value or 0.0


def solve_seconds(server: BoafService) -> float:
    """Total time the server has spent in Solve calls, whatever their code, in seconds."""
    registry = server.metrics.registry
    return sum(
        sample.value
        for metric in registry.collect()
        for sample in metric.samples
        if sample.name == "boaf_request_duration_seconds_sum" and sample.labels.get("method") == "Solve"
    )


def in_flight(server: BoafService, method: str) -> float:
    return server.metrics.registry.get_sample_value("boaf_requests_in_flight", {"method": method}) or 0.0


# ---------------------------------------------------------------- the lifecycle's stages and events


def test_the_stages_are_what_the_log_and_readyz_say_in_order() -> None:
    said = [stage.value for stage in Stage]
    assert said == [
        "starting",
        "loading kernels",
        COMPILING,
        "loading the model",
        "warming up",
        "serving",
        "failed to start",
    ]


def test_a_load_failure_keeps_its_stage_and_settles_every_wait() -> None:
    lifecycle = Lifecycle()
    lifecycle.enter(Stage.LOADING_MODEL)
    error = FileNotFoundError("missing")
    lifecycle.fail(error)
    assert (lifecycle.stage, lifecycle.failed_stage, lifecycle.load_error) == (Stage.FAILED, Stage.LOADING_MODEL, error)
    assert lifecycle.failed_loading_the_model
    assert not lifecycle.wait_until_ready(0) and not lifecycle.is_ready
    assert lifecycle.wait_for_background_kernels(0)


def test_an_early_call_is_told_whether_kernels_compile_or_the_model_loads() -> None:
    lifecycle = Lifecycle()
    assert lifecycle.not_ready_reason() == NOT_LOADED
    lifecycle.enter(Stage.COMPILING)
    assert lifecycle.not_ready_reason() == COMPILING
    lifecycle.enter(Stage.LOADING_MODEL)
    assert lifecycle.not_ready_reason() == NOT_LOADED
    lifecycle.serve()
    assert lifecycle.wait_until_ready(0) and lifecycle.stage is Stage.SERVING
    assert not lifecycle.wait_for_background_kernels(0)  # they compile after SERVING


def test_a_step_under_unless_stopping_ends_before_the_stop_begins_or_never_runs() -> None:
    lifecycle = Lifecycle()
    with lifecycle.unless_stopping() as running:
        assert running
        stopping = _in_thread(lifecycle.begin_stop)
        stopping.join(0.1)
        assert stopping.is_alive() and not lifecycle.stopping  # the stop waits for the step
    stopping.join(5)
    assert lifecycle.stopping
    with lifecycle.unless_stopping() as running:
        assert not running


# ---------------------------------------------------------------- health


def test_health_is_serving_only_after_the_model_has_loaded_and_warmed_up() -> None:
    loader = GatedLoader()
    server = start_server(loopback_settings(), loader)
    try:
        with channel_to(server) as channel:
            assert loader.called.wait(30)
            assert health_status(channel) == NOT_SERVING
            assert health_status(channel, "") == NOT_SERVING
            with pytest.raises(grpc.RpcError) as caught:
                boaf_pb2_grpc.BoafStub(channel).GetServerInfo(pb.GetServerInfoRequest(), timeout=5)
            assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
            loader.release()
            assert server.wait_until_ready(120)
            assert health_status(channel) == SERVING
            assert health_status(channel, "") == SERVING
    finally:
        server.stop(0)


def test_a_model_that_fails_to_load_keeps_health_not_serving(tmp_path: Path) -> None:
    server = start_server(loopback_settings(model_dir=tmp_path))  # an empty directory: no model files
    try:
        assert not server.wait_until_ready(60)
        assert "missing" in str(server.lifecycle.load_error)
        with channel_to(server) as channel:
            assert health_status(channel) == NOT_SERVING
    finally:
        server.stop(0)


def test_shutdown_turns_health_not_serving_before_calls_stop_and_lets_calls_finish() -> None:
    server = ready_server(loopback_settings(shutdown_grace_s=20))
    with channel_to(server) as channel:
        watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service="boaf.v1.Boaf"))
        assert next(watch).status == SERVING
        in_flight_solve: Future[pb.SolveResponse] = boaf_pb2_grpc.BoafStub(channel).Solve.future(
            pb.SolveRequest(state=long_solve().state, algorithm=pb.CONSTRAINED, time_limit_ms=300), timeout=30
        )
        assert wait_for(lambda: in_flight(server, "Solve") == 1)
        stopping = _in_thread(server.stop)
        assert next(watch).status == NOT_SERVING
        watch.cancel()
        response = in_flight_solve.result(timeout=30)  # finished within the grace period
        assert (response.status, response.reason) == (pb.UNKNOWN, "time_limit")
        stopping.join(30)
        assert not stopping.is_alive()


def _in_thread(target: Callable[[], None]) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


# ---------------------------------------------------------------- reflection and metrics


def test_reflection_lists_the_boaf_service_and_its_methods(channel: grpc.Channel) -> None:
    database = ProtoReflectionDescriptorDatabase(channel)
    assert "boaf.v1.Boaf" in database.get_services()
    assert "grpc.health.v1.Health" in database.get_services()
    service = DescriptorPool(database).FindServiceByName("boaf.v1.Boaf")
    assert {m.name for m in service.methods} == {
        "Classify",
        "Solve",
        "Features",
        "GetServerInfo",
        "AnalyzePuzzle",
        "GeneratePuzzle",
    }


def test_metrics_are_scraped_over_http(server: BoafService, stub: boaf_pb2_grpc.BoafStub) -> None:
    stub.Classify(pb.ClassifyRequest(states=[state_to_proto(deal(1))]), timeout=10)
    stub.Solve(pb.SolveRequest(state=state_to_proto(deal(1))), timeout=30)
    with pytest.raises(grpc.RpcError):
        stub.Classify(pb.ClassifyRequest(states=[pb.State()]), timeout=10)
    with urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=10) as page:
        text = page.read().decode()
    assert 'boaf_requests_total{code="OK",method="Classify"}' in text
    assert 'boaf_requests_total{code="INVALID_ARGUMENT",method="Classify"}' in text
    assert 'boaf_request_duration_seconds_bucket{code="OK",le="0.005",method="Classify"}' in text
    assert 'boaf_solve_nodes_count{status="solvable"}' in text
    assert "boaf_ready 1.0" in text


# ---------------------------------------------------------------- deadlines, cancellation, concurrency


def test_a_solve_past_its_deadline_is_deadline_exceeded_and_the_search_stops(
    server: BoafService, stub: boaf_pb2_grpc.BoafStub, channel: grpc.Channel
) -> None:
    before = requests_counted(server, "Solve", "DEADLINE_EXCEEDED")
    busy_before = solve_seconds(server)
    started = time.perf_counter()
    with pytest.raises(grpc.RpcError) as caught:
        stub.Solve(pb.SolveRequest(state=state_to_proto(deal(HARDEST_DEAL)), algorithm=pb.CONSTRAINED), timeout=0.05)
    elapsed = time.perf_counter() - started
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert elapsed < 0.150
    # The server side stops searching (it counts the call when the search returns) and stays healthy.
    assert wait_for(lambda: requests_counted(server, "Solve", "DEADLINE_EXCEEDED") == before + 1)
    assert in_flight(server, "Solve") == 0
    assert solve_seconds(server) - busy_before < 1.0  # the full search takes seconds; it stopped near 50 ms
    assert health_status(channel) == SERVING


def test_concurrent_calls_past_the_limit_are_resource_exhausted_and_cancelled_solves_stop() -> None:
    limit = 2
    server = ready_server(loopback_settings(max_concurrent_rpcs=limit, max_workers=limit))
    try:
        with channel_to(server) as channel:
            stub = boaf_pb2_grpc.BoafStub(channel)
            running = [stub.Solve.future(long_solve(), timeout=60) for _ in range(limit)]
            assert wait_for(lambda: in_flight(server, "Solve") == limit)
            with pytest.raises(grpc.RpcError) as caught:
                stub.GetServerInfo(pb.GetServerInfoRequest(), timeout=10)
            assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            for call in running:
                call.cancel()
            assert wait_for(lambda: requests_counted(server, "Solve", "CANCELLED") == limit)
            assert stub.GetServerInfo(pb.GetServerInfoRequest(), timeout=10).model_version
    finally:
        server.stop(0)


# ---------------------------------------------------------------- TLS


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command to make a certificate")
def test_tls_serves_clients_that_trust_the_certificate(tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    server = ready_server(loopback_settings(tls_cert=cert, tls_key=key, metrics_enabled=False))
    try:
        credentials = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
        with grpc.secure_channel(f"localhost:{server.port}", credentials) as channel:
            assert health_status(channel) == SERVING
            assert boaf_pb2_grpc.BoafStub(channel).GetServerInfo(pb.GetServerInfoRequest(), timeout=10).version
    finally:
        server.stop(0)


# ---------------------------------------------------------------- stopping, and clients that park a call


def test_calls_still_running_after_the_grace_get_unavailable_with_the_shutting_down_message() -> None:
    server = ready_server(loopback_settings())
    with channel_to(server) as channel:
        watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service="boaf.v1.Boaf"))
        assert next(watch).status == SERVING
        running: Future[pb.SolveResponse] = boaf_pb2_grpc.BoafStub(channel).Solve.future(long_solve(), timeout=60)
        assert wait_for(lambda: in_flight(server, "Solve") == 1)
        started = time.monotonic()
        stopping = _in_thread(lambda: server.stop(0.5))
        assert next(watch).status == NOT_SERVING
        with pytest.raises(grpc.RpcError) as ended:  # the stream ends at once, not after the grace
            next(watch)
        assert (ended.value.code(), ended.value.details()) == (grpc.StatusCode.UNAVAILABLE, SHUTTING_DOWN_MESSAGE)
        assert time.monotonic() - started < 0.5
        with pytest.raises(grpc.RpcError) as caught:
            running.result(timeout=30)
        assert (caught.value.code(), caught.value.details()) == (grpc.StatusCode.UNAVAILABLE, SHUTTING_DOWN_MESSAGE)
        status = rpc_status.from_call(caught.value)  # type: ignore[arg-type]  # the details: retry in 5 s
        assert status is not None and [d.TypeName() for d in status.details] == ["google.rpc.RetryInfo"]
        assert dict(caught.value.trailing_metadata())["retry-after"] == str(RETRY_AFTER_S)  # type: ignore[attr-defined]
        stopping.join(30)
        assert not stopping.is_alive()
        assert time.monotonic() - started < 0.5 + STOP_MARGIN_S
    # Counted once, with the code the client got (the servicer's own view of the cancelled search is not).
    solves = {code: _count(server, "Solve", code) for code in ("OK", "UNAVAILABLE", "CANCELLED")}
    assert solves == {"OK": 0, "UNAVAILABLE": 1, "CANCELLED": 0}


def _count(server: BoafService, method: str, code: str) -> float:
    return server.metrics.registry.get_sample_value("boaf_requests_total", {"method": method, "code": code}) or 0.0


def test_a_call_whose_request_never_comes_is_cancelled_after_the_idle_timeout() -> None:
    server = ready_server(loopback_settings(idle_timeout_s=1.0, metrics_enabled=False))
    never = threading.Event()

    def no_request() -> Iterator[bytes]:
        never.wait(30)  # the client sends the call's headers, and never its message
        yield b""

    try:
        with channel_to(server) as channel:
            parked = channel.stream_unary("/boaf.v1.Boaf/Solve").future(no_request(), timeout=30)
            assert wait_for(lambda: server.admission.calls == 1, timeout=5)
            with pytest.raises(grpc.RpcError) as caught:
                parked.result(timeout=5)
            assert caught.value.code() == grpc.StatusCode.CANCELLED
            # Released by the call's termination callback and counted by the handler's thread as its wait ends,
            # both just after the client hears of it.
            assert wait_for(lambda: server.admission.calls == 0, timeout=5)
            assert wait_for(lambda: requests_counted(server, "Solve", "CANCELLED") == 1, timeout=5)
    finally:
        never.set()
        server.stop(0)


def test_a_call_waiting_for_a_work_slot_past_its_deadline_is_counted_deadline_exceeded() -> None:
    server = ready_server(loopback_settings(max_workers=1, metrics_enabled=False))
    try:
        with channel_to(server) as channel, server.admission.work_slot(time.perf_counter() + 10, lambda: True):
            with pytest.raises(grpc.RpcError) as caught:  # the only slot is held: the call waits, then its time is up
                boaf_pb2_grpc.BoafStub(channel).GetServerInfo(pb.GetServerInfoRequest(), timeout=0.3)
            assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
            assert wait_for(lambda: requests_counted(server, "GetServerInfo", "DEADLINE_EXCEEDED") == 1, timeout=5)
            assert wait_for(lambda: server.admission.calls == 0, timeout=5)  # released just after, at termination
    finally:
        server.stop(0)
