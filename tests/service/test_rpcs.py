"""Each RPC's happy path, through a real server on loopback."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from google.protobuf.json_format import MessageToDict
from servers import TEST_LIMITS, grid_state

from boaf import features
from boaf.game import State, deal, play, random_states
from boaf.game.notation import format_grid
from boaf.models.classifier import load_classifier
from boaf.models.residue_model import GATE_SETS
from boaf.service.core.dataplane import DataPlane
from boaf.service.core.limits import reported
from boaf.service.grpc.server import BoafServer
from boaf.service.rpc.call import Call
from boaf.service.rpc.converters import state_to_proto
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc

SOLVABLE_DEAL = 16  # a few thousand nodes
UNSOLVABLE_DEAL = 1163  # connected graph, yet unsolvable: only search can tell
ODD_BIRD_DEAL = 10
ONE_STACK = "-- --/-- QH"


@pytest.mark.parametrize(
    "states",
    [
        [deal(SOLVABLE_DEAL), deal(360528), deal(367297990)],
        random_states(7, 100),  # one grid: the server's array path
        [*random_states(8, 10, rows=3, cols=5), *random_states(9, 10)],  # mixed grids: the per-state path
    ],
    ids=["deals", "one-grid batch", "mixed grids"],
)
def test_classify_equals_the_served_model_on_every_path(stub: boaf_pb2_grpc.BoafStub, states: list[State]) -> None:
    response = stub.Classify(pb.ClassifyRequest(states=[state_to_proto(s) for s in states]), timeout=30)
    model = load_classifier()
    expected = model.classify(states)
    np.testing.assert_array_equal([p.p_solvable for p in response.predictions], expected.p_solvable)
    np.testing.assert_array_equal([p.exact for p in response.predictions], expected.exact)
    np.testing.assert_array_equal([p.nodes for p in response.predictions], expected.nodes)
    assert [p.solvable for p in response.predictions] == [bool(p >= model.threshold) for p in expected.p_solvable]
    assert response.model_version == model.version
    assert response.threshold == model.threshold


def test_classify_accepts_lower_case_ten_as_10_and_empty_cells(stub: boaf_pb2_grpc.BoafStub) -> None:
    state = pb.State(rows=2, cols=2, cells=["10s", "", "qh", "9S"], sizes=[2, 0, 1, 1])
    (prediction,) = stub.Classify(pb.ClassifyRequest(states=[state]), timeout=10).predictions
    assert 0.0 <= prediction.p_solvable <= 1.0


def test_classify_of_no_states_is_an_empty_answer(stub: boaf_pb2_grpc.BoafStub) -> None:
    response = stub.Classify(pb.ClassifyRequest(), timeout=10)
    assert list(response.predictions) == []
    assert response.model_version


def test_solve_returns_a_solution_that_replays_to_one_stack(stub: boaf_pb2_grpc.BoafStub) -> None:
    state = deal(SOLVABLE_DEAL)
    response = stub.Solve(pb.SolveRequest(state=state_to_proto(state)), timeout=30)
    assert response.status == pb.SOLVABLE
    assert response.algorithm == pb.ORDERED
    assert len(response.moves) == state.n_stacks - 1
    assert play(state, list(response.moves)).is_solved
    assert response.nodes >= 1
    assert response.elapsed_ms >= 0


@pytest.mark.parametrize("algorithm", [pb.ORDERED, pb.COMPATIBLE, pb.CONSTRAINED, pb.BEST_N, pb.ISLAND_MERGE])
def test_every_algorithm_agrees_on_an_unsolvable_deal(stub: boaf_pb2_grpc.BoafStub, algorithm: pb.Algorithm) -> None:
    request = pb.SolveRequest(state=state_to_proto(deal(UNSOLVABLE_DEAL)), algorithm=algorithm)
    response = stub.Solve(request, timeout=60)
    assert response.status == pb.UNSOLVABLE
    assert response.algorithm == algorithm
    assert list(response.moves) == []
    assert response.reason


def test_an_unsolvable_answer_says_why(stub: boaf_pb2_grpc.BoafStub) -> None:
    odd_bird = stub.Solve(pb.SolveRequest(state=state_to_proto(deal(ODD_BIRD_DEAL))), timeout=10)
    assert (odd_bird.status, odd_bird.reason, odd_bird.nodes) == (pb.UNSOLVABLE, "odd_bird", 0)
    exhausted = stub.Solve(pb.SolveRequest(state=state_to_proto(deal(UNSOLVABLE_DEAL))), timeout=30)
    assert (exhausted.status, exhausted.reason) == (pb.UNSOLVABLE, "exhausted")


def test_solve_out_of_time_is_unknown_with_the_reason(stub: boaf_pb2_grpc.BoafStub) -> None:
    hard = state_to_proto(deal(-4965))  # 2.6M nodes to decide by Compatible DFS
    request = pb.SolveRequest(state=hard, algorithm=pb.COMPATIBLE, time_limit_ms=20)
    response = stub.Solve(request, timeout=10)
    assert (response.status, response.reason) == (pb.UNKNOWN, "time_limit")


def test_solve_of_a_solved_state_needs_no_moves(stub: boaf_pb2_grpc.BoafStub) -> None:
    response = stub.Solve(pb.SolveRequest(state=grid_state(ONE_STACK)), timeout=10)
    assert response.status == pb.SOLVABLE
    assert list(response.moves) == []


def test_solve_out_of_nodes_is_unknown_with_the_reason(stub: boaf_pb2_grpc.BoafStub) -> None:
    request = pb.SolveRequest(state=state_to_proto(deal(360528)), algorithm=pb.CONSTRAINED, max_nodes=10)
    response = stub.Solve(request, timeout=10)
    assert (response.status, response.reason) == (pb.UNKNOWN, "max_nodes")
    assert response.nodes <= 10


def test_features_equal_the_batch_path_in_schema_order(stub: boaf_pb2_grpc.BoafStub) -> None:
    states = [deal(seed) for seed in (1, 2, 1163, 1264)]
    response = stub.Features(pb.FeaturesRequest(states=[state_to_proto(s) for s in states]), timeout=10)
    assert response.schema_version == features.SCHEMA_VERSION
    assert list(response.names) == list(features.feature_names())
    got = np.array([list(v.values) for v in response.vectors])
    np.testing.assert_array_equal(got, features.feature_matrix(states))


def test_features_of_mixed_grid_shapes_keep_request_order(stub: boaf_pb2_grpc.BoafStub) -> None:
    grids = ["AS 2S/3S --", "KH", format_grid(deal(7))]
    response = stub.Features(pb.FeaturesRequest(states=[grid_state(g) for g in grids]), timeout=10)
    n_stacks = [v.values[list(response.names).index("n_stacks")] for v in response.vectors]
    assert n_stacks == [3, 1, 16]


def test_server_info_reports_versions_schema_model_and_limits(stub: boaf_pb2_grpc.BoafStub) -> None:
    info = stub.GetServerInfo(pb.GetServerInfoRequest(), timeout=10)
    model = load_classifier()
    assert info.version
    assert info.feature_schema_version == features.SCHEMA_VERSION
    assert list(info.feature_names) == list(features.feature_names())
    assert info.model_version == model.version
    assert info.model_schema_version == model.schema_version
    assert info.classify_threshold == model.threshold
    assert len(info.model_card.fields) > 0
    for name, value in TEST_LIMITS.items():
        assert getattr(info.limits, name) == value, name
    assert set(info.algorithms) == {pb.ORDERED, pb.COMPATIBLE, pb.CONSTRAINED, pb.BEST_N, pb.ISLAND_MERGE}
    assert info.default_algorithm == pb.ORDERED


def test_server_info_sends_the_residue_figures_of_every_gate_set(stub: boaf_pb2_grpc.BoafStub) -> None:
    card = MessageToDict(stub.GetServerInfo(pb.GetServerInfoRequest(), timeout=10).model_card)
    assert [row["set"] for row in card["gate"]] == [spec.name for spec in GATE_SETS]
    for row in card["gate"]:  # the residue's size, and the model beside the base-rate constant on it
        assert row["residue"] > 0 and row["minority"] > 0, row["set"]
        assert 0 < row["model"]["log_loss"] < row["constant_scores"]["log_loss"], row["set"]
        assert 0 <= row["model"]["ece"] <= 1 and row["passes"], row["set"]
    assert set(card["residue_calibration"]) == {spec.name for spec in GATE_SETS}


def test_server_info_lists_every_limit_with_the_served_value(server: BoafServer, stub: boaf_pb2_grpc.BoafStub) -> None:
    limits = stub.GetServerInfo(pb.GetServerInfoRequest(), timeout=10).limits
    assert {f.name for f in pb.Limits.DESCRIPTOR.fields} == set(reported(server.settings))
    for name, value in reported(server.settings).items():
        assert getattr(limits, name) == value, name


def test_server_info_is_built_once_per_data_plane_and_a_new_model_refreshes_it(server: BoafServer) -> None:
    servicer, plane = server.servicer.handlers, server.servicer.plane
    assert plane is not None
    first = servicer.GetServerInfo(pb.GetServerInfoRequest(), _context())
    assert servicer.GetServerInfo(pb.GetServerInfoRequest(), _context()) is first
    try:
        servicer.plane = DataPlane(plane.settings, replace(plane.classifier, version="v-next"), plane.kernels)
        again = servicer.GetServerInfo(pb.GetServerInfoRequest(), _context())
        assert again.model_version == "v-next" and first.model_version != "v-next"
    finally:
        servicer.plane = plane


def _context() -> Call:
    return Call("ipv4:127.0.0.1:1", timeout_s=None)
