"""Classify says which answers are exact; the served budgets (each grid's too) come from the model directory and
GetServerInfo reports them over gRPC and HTTP; old clients still parse."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import grpc
import numpy as np
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from http_client import Client
from servers import channel_to, loopback_settings, ready_server

from boaf.game import deal, random_states
from boaf.models.exact_path import ExactBudget, write_exact_budget
from boaf.models.registry import default_root
from boaf.search import SOLVABLE, UNKNOWN, solve_many
from boaf.service.grpc.server import BoafServer
from boaf.service.http import HttpServer
from boaf.service.rpc.converters import state_to_proto
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc, game_pb2, game_pb2_grpc

BUDGET = 777  # not the committed model's
BIG_BUDGET = 123  # 4x13's own
DEAL_NODES = 9000  # the second search of FFUD-like 4x4 deals
FFUD_OPEN_AT_BUDGET = (12226, 38711, 45088)  # FFUDs the first search leaves open


@pytest.fixture(scope="module")
def temp_model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BoafServer]:
    root = tmp_path_factory.mktemp("models")
    shutil.copytree(default_root(), root / "v1")
    write_exact_budget(root / "v1", ExactBudget(BUDGET, by_grid={"4x13": BIG_BUDGET}, deal_nodes=DEAL_NODES))
    (root / "CURRENT").write_text("v1\n", encoding="utf-8")
    server = ready_server(loopback_settings(model_dir=root, http_port=0))
    yield server
    server.stop(0)


@pytest.fixture(scope="module")
def stub_of_temp_model(temp_model_server: BoafServer) -> Iterator[boaf_pb2_grpc.BoafStub]:
    with channel_to(temp_model_server) as channel:
        yield boaf_pb2_grpc.BoafStub(channel)


def test_server_info_reports_the_budgets_of_the_served_model_directory(
    stub_of_temp_model: boaf_pb2_grpc.BoafStub,
) -> None:
    info = stub_of_temp_model.GetServerInfo(pb.GetServerInfoRequest(), timeout=10)
    assert info.classify_exact_max_nodes == BUDGET
    assert list(info.classify_exact_grid_budgets) == [pb.GridBudget(rows=4, cols=13, max_nodes=BIG_BUDGET)]
    assert info.classify_exact_deal_nodes == DEAL_NODES


def test_server_info_over_http_reports_the_budgets_in_proto3_json(temp_model_server: BoafServer) -> None:
    http = HttpServer(temp_model_server)
    http.start()
    try:
        answer = Client(f"http://127.0.0.1:{http.port}").call("Boaf/GetServerInfo")
    finally:
        http.stop()
    assert answer.status == 200, answer.body
    assert answer.body["classifyExactMaxNodes"] == str(BUDGET)  # a uint64 is a string in proto3 JSON
    assert answer.body["classifyExactGridBudgets"] == [{"rows": 4, "cols": 13, "maxNodes": str(BIG_BUDGET)}]
    assert answer.body["classifyExactDealNodes"] == str(DEAL_NODES)


def test_an_ffud_like_deal_the_first_search_leaves_open_is_searched_again(
    stub_of_temp_model: boaf_pb2_grpc.BoafStub,
) -> None:
    deals = [deal(seed) for seed in FFUD_OPEN_AT_BUDGET]
    assert UNKNOWN in solve_many(deals, max_nodes=BUDGET).status
    request = pb.ClassifyRequest(states=[state_to_proto(s) for s in deals])
    predictions = stub_of_temp_model.Classify(request, timeout=30).predictions
    assert [(p.exact, p.solvable, p.p_solvable) for p in predictions] == [(True, False, 0.0)] * len(deals)
    assert all(BUDGET < p.nodes <= BUDGET + DEAL_NODES for p in predictions)


def test_a_state_gets_its_grids_budget(stub_of_temp_model: boaf_pb2_grpc.BoafStub) -> None:
    states = [*random_states(6, 30, rows=4, cols=13), *random_states(6, 30)]
    request = pb.ClassifyRequest(states=[state_to_proto(s) for s in states])
    nodes = [p.nodes for p in stub_of_temp_model.Classify(request, timeout=30).predictions]
    assert nodes[:30] == solve_many(states[:30], max_nodes=BIG_BUDGET).nodes.tolist()
    assert nodes[30:] == solve_many(states[30:], max_nodes=BUDGET).nodes.tolist()


def test_a_hint_searches_at_the_grids_budget_unless_the_request_names_one(temp_model_server: BoafServer) -> None:
    state = deal(7, rows=4, cols=13)
    results = [state.apply(move) for move in state.legal_moves()]
    with channel_to(temp_model_server) as channel:
        game = game_pb2_grpc.GameStub(channel)
        for asked, budget in [(0, BIG_BUDGET), (BUDGET, BUDGET)]:
            request = game_pb2.HintRequest(state=state_to_proto(state), max_nodes_per_move=asked)
            nodes = [m.nodes for m in game.Hint(request, timeout=30).moves]
            assert nodes == solve_many(results, max_nodes=budget).nodes.tolist()


def test_classify_marks_exact_answers_and_they_are_the_solvers(stub_of_temp_model: boaf_pb2_grpc.BoafStub) -> None:
    states = random_states(5, 100)
    request = pb.ClassifyRequest(states=[state_to_proto(s) for s in states])
    predictions = stub_of_temp_model.Classify(request, timeout=30).predictions
    budgeted, truth = solve_many(states, max_nodes=BUDGET), solve_many(states)
    exact = np.array([p.exact for p in predictions])
    np.testing.assert_array_equal(exact, [s is not UNKNOWN for s in budgeted.status])
    assert 0 < exact.sum() < len(states)
    for p, answer, nodes in zip(predictions, truth.status, budgeted.nodes.tolist(), strict=True):
        assert p.nodes == nodes
        if p.exact:
            assert (p.p_solvable, p.solvable) == ((1.0, True) if answer is SOLVABLE else (0.0, False))


def _old_prediction_class() -> type:
    # Prediction as clients built before issue 14 knew it: fields 1 and 2 only.
    proto = descriptor_pb2.FileDescriptorProto(name="old_boaf.proto", package="old", syntax="proto3")
    message = proto.message_type.add(name="Prediction")
    message.field.add(name="p_solvable", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_DOUBLE, label=1)
    message.field.add(name="solvable", number=2, type=descriptor_pb2.FieldDescriptorProto.TYPE_BOOL, label=1)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("old.Prediction"))


@pytest.mark.parametrize("exact", [True, False])
def test_an_old_client_reads_the_new_prediction(exact: bool) -> None:
    new = pb.Prediction(p_solvable=0.25 if not exact else 1.0, solvable=exact, exact=exact, nodes=123)
    old = _old_prediction_class().FromString(new.SerializeToString())
    assert (old.p_solvable, old.solvable) == (new.p_solvable, new.solvable)


def test_prediction_keeps_its_field_numbers() -> None:
    numbers = {f.name: f.number for f in pb.Prediction.DESCRIPTOR.fields}
    assert numbers == {"p_solvable": 1, "solvable": 2, "exact": 3, "nodes": 4}


def test_a_bad_state_is_still_invalid_argument(stub_of_temp_model: boaf_pb2_grpc.BoafStub) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        stub_of_temp_model.Classify(
            pb.ClassifyRequest(states=[pb.State(rows=1, cols=2, cells=["AS", "AS"])]), timeout=10
        )
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
