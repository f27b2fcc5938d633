"""``boaf_classify_answers_total{method, exact}``: each state of a Classify is counted exact or estimated."""

from __future__ import annotations

import json
import urllib.request

import grpc
from prometheus_client.parser import text_string_to_metric_families
from servers import loopback_settings, ready_server

from boaf.game import deal
from boaf.service.grpc.server import BoafServer
from boaf.service.http import HttpServer
from boaf.service.rpc.converters import state_to_proto
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc, game_pb2, game_pb2_grpc

THREE = pb.State(rows=1, cols=3, cells=["AC", "2C", "3C"])  # settled by the exact path at once
ESTIMATED = state_to_proto(deal(104))  # a 4x4 deal the exact path leaves open (63,502 nodes): the model estimates it


def answers(server: BoafServer, method: str) -> dict[str, float]:
    """``boaf_classify_answers_total`` of ``method`` by its ``exact`` label, read from the metrics page over HTTP."""
    with urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=10) as page:
        text = page.read().decode()
    return {
        sample.labels["exact"]: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "boaf_classify_answers_total" and sample.labels["method"] == method
    }


def test_classify_counts_its_exact_and_estimated_answers(server: BoafServer, stub: boaf_pb2_grpc.BoafStub) -> None:
    before = answers(server, "Classify")
    answer = stub.Classify(pb.ClassifyRequest(states=[THREE, ESTIMATED, THREE]), timeout=30)
    assert [p.exact for p in answer.predictions] == [True, False, True]
    after = answers(server, "Classify")
    assert after["true"] - before.get("true", 0) == 2
    assert after["false"] - before.get("false", 0) == 1


def test_hint_counts_each_move_as_exact_or_estimated(server: BoafServer, channel: grpc.Channel) -> None:
    before = answers(server, "Hint")
    game = game_pb2_grpc.GameStub(channel)
    hint = game.Hint(game_pb2.HintRequest(state=state_to_proto(deal(366))), timeout=30)  # 6 of 30 moves exact
    exact = sum(move.verdict != game_pb2.VERDICT_ESTIMATE for move in hint.moves)
    after = answers(server, "Hint")
    assert exact > 0 and len(hint.moves) > exact, "the deal's moves should be partly exact, partly estimated"
    assert after["true"] - before.get("true", 0) == exact
    assert after["false"] - before.get("false", 0) == len(hint.moves) - exact


def test_an_http_classify_is_counted_the_same_way() -> None:
    server = ready_server(loopback_settings(http_port=0))
    web = HttpServer(server)
    web.start()
    try:
        before = answers(server, "Classify")
        states = [{"rows": s.rows, "cols": s.cols, "cells": list(s.cells)} for s in (THREE, ESTIMATED)]
        request = urllib.request.Request(
            f"http://127.0.0.1:{web.port}/boaf.v1.Boaf/Classify",
            data=json.dumps({"states": states}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            predictions = json.loads(answer.read())["predictions"]
        assert [p.get("exact", False) for p in predictions] == [True, False]
        after = answers(server, "Classify")
        assert (after["true"] - before.get("true", 0), after["false"] - before.get("false", 0)) == (1, 1)
    finally:
        web.stop()
        server.stop(0)
