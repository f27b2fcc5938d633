"""Optional OpenTelemetry tracing: an RPC is a span with its stages as children, on both edges; off, nothing loads.

Spans go to the SDK's in-memory exporter (``boaf.service.core.tracing.enable(exporter)``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from servers import channel_to, loopback_settings, ready_server

from boaf.game import deal
from boaf.service.core import tracing
from boaf.service.core.settings import InvalidSettings
from boaf.service.grpc.server import BoafServer
from boaf.service.http import HttpServer
from boaf.service.rpc.converters import state_to_proto
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc

TESTS = Path(__file__).resolve().parents[1]
# A deal the exact path leaves open, so every stage runs: exact path, then features and inference.
ESTIMATED = state_to_proto(deal(104))  # 63,502 nodes: past the exact path's budget
STAGES = ["exact path", "features", "inference"]


@pytest.fixture(scope="module")
def both_edges() -> Iterator[tuple[BoafServer, HttpServer]]:
    server = ready_server(loopback_settings(http_port=0))
    web = HttpServer(server)
    web.start()
    yield server, web
    web.stop()
    server.stop(0)


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    tracing.enable(exporter)
    yield exporter
    tracing.disable()


def stages_of(spans: InMemorySpanExporter, method: str) -> list[str]:
    """The names of the children of ``method``'s one edge span, in the order they started."""
    finished: tuple[ReadableSpan, ...] = spans.get_finished_spans()
    (edge,) = [s for s in finished if s.name == f"boaf/{method}"]
    assert edge.attributes is not None and edge.attributes["rpc.method"] == method
    children = [s for s in finished if s.parent is not None and s.parent.span_id == edge.context.span_id]
    assert all(s.context.trace_id == edge.context.trace_id for s in children)
    return [s.name for s in sorted(children, key=lambda s: s.start_time or 0)]


def test_a_grpc_classify_is_a_span_with_the_exact_path_features_and_inference_as_children(
    both_edges: tuple[BoafServer, HttpServer], spans: InMemorySpanExporter
) -> None:
    with channel_to(both_edges[0]) as channel:
        boaf_pb2_grpc.BoafStub(channel).Classify(pb.ClassifyRequest(states=[ESTIMATED]), timeout=30)
    assert stages_of(spans, "Classify") == STAGES


def test_a_deal_like_an_ffud_gets_the_second_search_as_a_stage_and_no_inference_once_it_settles(
    both_edges: tuple[BoafServer, HttpServer], spans: InMemorySpanExporter
) -> None:
    ffud = state_to_proto(deal(12226))  # an FFUD the 1,500-node search leaves open and the second one refutes
    with channel_to(both_edges[0]) as channel:
        answer = boaf_pb2_grpc.BoafStub(channel).Classify(pb.ClassifyRequest(states=[ffud]), timeout=30)
    assert answer.predictions[0].exact and not answer.predictions[0].solvable
    assert stages_of(spans, "Classify") == ["exact path", "features", "second search"]


def test_an_http_classify_is_traced_the_same_way(
    both_edges: tuple[BoafServer, HttpServer], spans: InMemorySpanExporter
) -> None:
    body = json.dumps({"states": [{"rows": 4, "cols": 4, "cells": list(ESTIMATED.cells)}]}).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{both_edges[1].port}/boaf.v1.Boaf/Classify",
        data=body,
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        assert not json.loads(answer.read())["predictions"][0].get("exact", False)
    assert stages_of(spans, "Classify") == STAGES


def test_a_call_without_stages_is_one_span(
    both_edges: tuple[BoafServer, HttpServer], spans: InMemorySpanExporter
) -> None:
    with channel_to(both_edges[0]) as channel:
        boaf_pb2_grpc.BoafStub(channel).GetServerInfo(pb.GetServerInfoRequest(), timeout=30)
    assert stages_of(spans, "GetServerInfo") == []


OFF = """
import sys
from servers import channel_to, loopback_settings, ready_server
from boaf.v1 import boaf_pb2 as pb, boaf_pb2_grpc
from boaf.service.http import HttpServer
from boaf.game import deal
from boaf.service.rpc.converters import state_to_proto

server = ready_server(loopback_settings(http_port=0))
web = HttpServer(server)
web.start()
with channel_to(server) as channel:
    boaf_pb2_grpc.BoafStub(channel).Classify(pb.ClassifyRequest(states=[state_to_proto(deal(1))]), timeout=30)
web.stop()
server.stop(0)
print(sorted(name for name in sys.modules if name.startswith("opentelemetry")))
"""


def test_with_tracing_off_opentelemetry_is_never_imported() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", OFF], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_tracing_on_without_the_otel_extra_names_the_setting_and_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.http.trace_exporter", None)  # not installed
    with pytest.raises(
        InvalidSettings, match=r"BOAF_OTEL=true: tracing needs boaf's otel extra \(in a clone, pip install -e"
    ):
        tracing.enable()
    assert not tracing.enabled()
