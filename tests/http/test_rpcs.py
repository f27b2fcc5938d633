"""Every RPC over HTTP/JSON answers what gRPC answers; health, readiness, metrics and the page."""

from __future__ import annotations

import gzip
import json
import socket
import urllib.request

import grpc
import pytest
from google.protobuf import json_format
from google.protobuf.message import Message
from http_client import Client
from servers import GatedLoader, channel_to, grid_state, loopback_settings, start_server, wait_for

from boaf.game import deal, play
from boaf.service.grpc.server import BoafServer
from boaf.service.http import HttpServer
from boaf.service.rpc.converters import state_to_proto
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc, game_pb2, game_pb2_grpc

DEAL_1 = state_to_proto(deal(1))
THREE = grid_state("AC 2C 3C")
DEAL_360528 = "5S 7D QS 2C/4C AD 8D 5C/QH 7C TC 3C/8C 2D 9C 3D"
DEAL_MINUS_4965 = "2D JS AS 5C/9D JD 4H 6S/4C TS QS 8S/7D KD 9S TD"  # 2.6M nodes to decide by Compatible DFS
ILLEGAL = "move 1 of 1: move '5S-7D' is not legal: the cards share no suit and their ranks are not adjacent"


def over_grpc(server: BoafServer, service: str, method: str, request: Message) -> Message:
    with channel_to(server) as channel:
        stub = (boaf_pb2_grpc.BoafStub if service == "Boaf" else game_pb2_grpc.GameStub)(channel)
        answer: Message = getattr(stub, method)(request, timeout=30)
        return answer


# (service, method, request); answers that carry a time are compared without it.
CALLS: list[tuple[str, str, Message]] = [
    (
        "Boaf",
        "Classify",
        pb.ClassifyRequest(states=[DEAL_1, grid_state("5S 7D QS 2C/4C AD 8D 5C/QH 7C TC 3C/8C 2D 9C 3D")]),
    ),
    ("Boaf", "Features", pb.FeaturesRequest(states=[DEAL_1])),
    ("Boaf", "Solve", pb.SolveRequest(state=DEAL_1, algorithm=pb.COMPATIBLE)),
    ("Boaf", "GetServerInfo", pb.GetServerInfoRequest()),
    ("Boaf", "AnalyzePuzzle", pb.AnalyzePuzzleRequest(state=THREE)),
    ("Boaf", "GeneratePuzzle", pb.GeneratePuzzleRequest(cards=4, seed=1)),
    ("Game", "Deal", game_pb2.DealRequest(seed=1)),
    ("Game", "Play", game_pb2.PlayRequest(state=DEAL_1, moves=["9H-9S", "5H-5S"])),
    ("Game", "Hint", game_pb2.HintRequest(state=DEAL_1)),
    ("Game", "Hint", game_pb2.HintRequest(state=grid_state(DEAL_360528), max_nodes_per_move=3)),
]


def without_times(message: Message) -> Message:
    if "elapsed_ms" in message.DESCRIPTOR.fields_by_name:
        message.ClearField("elapsed_ms")
    return message


@pytest.mark.parametrize(("service", "method", "request_"), CALLS, ids=[f"{c[0]}.{c[1]}" for c in CALLS])
def test_every_rpc_answers_over_http_what_it_answers_over_grpc(
    client: Client, grpc_server: BoafServer, service: str, method: str, request_: Message
) -> None:
    answer = client.call(f"{service}/{method}", json_format.MessageToDict(request_))
    assert answer.status == 200, answer.body
    reply = json_format.ParseDict(answer.body, type(over_grpc(grpc_server, service, method, request_))())
    assert without_times(reply) == without_times(over_grpc(grpc_server, service, method, request_))


def test_the_game_service_deals_and_plays_as_the_game_does(client: Client) -> None:
    assert client.call("Game/Deal", {"seed": 1}).body["cells"] == [
        "JD",
        "2D",
        "9H",
        "JC",
        "5D",
        "7H",
        "7C",
        "5H",
        "KD",
        "KC",
        "9S",
        "5S",
        "AD",
        "QC",
        "KH",
        "3H",
    ]
    answer = client.call("Game/Play", {"state": json_format.MessageToDict(DEAL_1), "moves": ["9H-9S"]}).body
    after = play(deal(1), "9H-9S")
    assert [m["move"] for m in answer["legalMoves"]] == [after.move_text(m) for m in after.legal_moves()]
    assert answer["won"] is False


def test_hint_over_http_lists_plays_moves_with_verdicts_in_proto3_json(client: Client) -> None:
    state = json_format.MessageToDict(state_to_proto(deal(367297990)))
    played = client.call("Game/Play", {"state": state}).body
    answer = client.call("Game/Hint", {"state": state, "maxNodesPerMove": "20000"})
    assert answer.status == 200, answer.body
    moves = answer.body["moves"]
    assert [(m["move"], m["result"]) for m in moves] == [(m["move"], m["result"]) for m in played["legalMoves"]]
    assert {m["verdict"] for m in moves} == {"VERDICT_WINNABLE"}  # every move of this deal keeps it winnable
    assert all(m["pWinnable"] == 1 and int(m["nodes"]) > 0 for m in moves)
    assert (answer.body["verdict"], answer.body["pWinnable"]) == ("VERDICT_WINNABLE", 1)
    assert answer.body["modelVersion"]
    won = client.call("Game/Hint", {"state": {"rows": 1, "cols": 2, "cells": ["", "QH"]}}).body
    assert (won["won"], won["moves"], won["verdict"]) == (True, [], "VERDICT_WINNABLE")


def test_a_large_answer_is_gzipped_for_a_client_that_accepts_it(client: Client) -> None:
    """Connect's unary compression: ``Accept-Encoding: gzip`` gets ``Content-Encoding: gzip`` on a large answer.

    A move on a whole-deck deal (Hint of its ~300 moves with their result states) is ~137 KB of JSON,
    which the page's budget of 60 KB a move could not hold uncompressed.
    """
    body = json.dumps({"state": json_format.MessageToDict(state_to_proto(deal(7, rows=4, cols=13)))}).encode()

    def hint(accept: str | None) -> tuple[dict[str, str], bytes]:
        headers = {"Content-Type": "application/json", **({"Accept-Encoding": accept} if accept else {})}
        request = urllib.request.Request(client.base + "/boaf.v1.Game/Hint", data=body, headers=headers)
        with urllib.request.urlopen(request, timeout=120) as response:
            return {k.lower(): v for k, v in response.headers.items()}, response.read()

    plain_headers, plain = hint(None)
    zipped_headers, zipped = hint("gzip, deflate, br")
    refused_headers, _ = hint("gzip;q=0")
    assert "content-encoding" not in plain_headers and "content-encoding" not in refused_headers
    assert zipped_headers["content-encoding"] == "gzip" and zipped_headers["vary"] == "Accept-Encoding"
    assert json.loads(gzip.decompress(zipped)) == json.loads(plain)
    assert len(plain) > 100_000 and len(zipped) < 60_000
    tiny = client.post("/boaf.v1.Game/Deal", {"seed": 1}, headers={"Accept-Encoding": "gzip"})
    assert tiny.status == 200 and "content-encoding" not in tiny.headers  # under GZIP_MIN_BYTES: not worth it


def test_hint_past_the_limit_is_the_same_out_of_range_on_both_edges(client: Client, grpc_server: BoafServer) -> None:
    over = grpc_server.settings.hint_max_nodes + 1
    request = game_pb2.HintRequest(state=DEAL_1, max_nodes_per_move=over)
    answer = client.call("Game/Hint", json_format.MessageToDict(request))
    with pytest.raises(grpc.RpcError) as error:
        over_grpc(grpc_server, "Game", "Hint", request)
    assert error.value.code() is grpc.StatusCode.OUT_OF_RANGE
    assert (answer.status, answer.body["code"], answer.body["message"]) == (400, "out_of_range", error.value.details())
    assert "(BOAF_HINT_MAX_NODES)" in answer.body["message"]


def test_a_hint_of_the_largest_grid_at_the_limit_answers_over_http(client: Client, grpc_server: BoafServer) -> None:
    whole_deck = deal(7, rows=4, cols=13)  # 52 cards: the largest state, 326 legal moves
    limit = grpc_server.settings.hint_max_nodes
    body = {"state": json_format.MessageToDict(state_to_proto(whole_deck)), "maxNodesPerMove": str(limit)}
    answer = client.call("Game/Hint", body, headers={"Connect-Timeout-Ms": "30000"})
    assert answer.status == 200, answer.body
    moves = answer.body["moves"]
    assert [m["move"] for m in moves] == [whole_deck.move_text(m) for m in whole_deck.legal_moves()]
    assert all(int(m["nodes"]) <= limit for m in moves)


def test_an_illegal_move_is_refused_with_the_games_message(client: Client) -> None:
    state = json_format.MessageToDict(grid_state(DEAL_360528))
    answer = client.call("Game/Play", {"state": state, "moves": ["5S-7D"]})
    assert (answer.status, answer.body) == (
        400,
        {
            "code": "invalid_argument",
            "message": ILLEGAL,
        },
    )


def test_http_calls_are_counted_in_the_same_metrics(client: Client, grpc_server: BoafServer) -> None:
    def count(method: str, code: str) -> float:
        value = grpc_server.metrics.registry.get_sample_value("boaf_requests_total", {"method": method, "code": code})
        return value or 0.0

    ok, invalid = count("Features", "OK"), count("Features", "INVALID_ARGUMENT")
    client.call("Boaf/Features", {"states": [json_format.MessageToDict(DEAL_1)]})
    client.call("Boaf/Features", raw=b"{not json")  # turned away by the edge: still counted
    assert (count("Features", "OK"), count("Features", "INVALID_ARGUMENT")) == (ok + 1, invalid + 1)


def test_the_page_is_served_at_the_root_with_a_strict_content_policy(client: Client) -> None:
    with urllib.request.urlopen(client.base + "/", timeout=10) as page:
        assert "playground.js" in page.read().decode()
        assert page.headers["Content-Security-Policy"] == "default-src 'self'"
    assert client.get("/healthz").status == 200
    assert client.get("/readyz").body == {"status": "SERVING"}


def test_readiness_follows_the_model_load_and_grpc_can_be_off() -> None:
    loader = GatedLoader()
    server = start_server(loopback_settings(http_port=0, grpc_enabled=False), loader)
    assert server.port == 0, "no gRPC port when grpc_enabled is off"
    web = HttpServer(server)
    web.start()
    try:
        client = Client(f"http://127.0.0.1:{web.port}")
        assert client.get("/readyz").body["status"] == "NOT_SERVING"  # with the stage it is in
        assert client.get("/readyz").status == 503
        assert client.get("/healthz").status == 200
        state = json_format.MessageToDict(DEAL_1)
        assert client.call("Boaf/Classify", {"states": [state]}).status == 503  # UNAVAILABLE, as over gRPC
        assert client.call("Game/Deal", {"seed": 1}).status == 200  # the game needs no model
        loader.release()
        assert server.wait_until_ready(120)
        assert client.get("/readyz").status == 200
        web.stop()
        assert not web.is_ready()
    finally:
        web.stop()
        server.stop(0)


def test_a_client_that_hangs_up_cancels_its_search(client: Client, grpc_server: BoafServer) -> None:
    def sample(name: str, labels: dict[str, str]) -> float:
        return grpc_server.metrics.registry.get_sample_value(name, labels) or 0.0

    cancelled = sample("boaf_requests_total", {"method": "Solve", "code": "CANCELLED"})
    hard = {"state": json_format.MessageToDict(grid_state(DEAL_MINUS_4965)), "algorithm": "COMPATIBLE"}
    body = json.dumps(hard).encode()  # millions of nodes
    host, port = client.base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as connection:
        head = "POST /boaf.v1.Boaf/Solve HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        connection.sendall(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
        assert wait_for(lambda: sample("boaf_requests_in_flight", {"method": "Solve"}) == 1, timeout=60)
    assert wait_for(lambda: sample("boaf_requests_total", {"method": "Solve", "code": "CANCELLED"}) == cancelled + 1)
