"""Game.Hint through a real server on loopback: each legal move with its result and a verdict that never lies."""

from __future__ import annotations

import re
from collections.abc import Iterator

import grpc
import numpy as np
import pytest
from servers import channel_to, grid_state

from boaf import search
from boaf.game import State, deal, random_states
from boaf.game.arrays import states_to_array
from boaf.models.classifier import load_classifier
from boaf.models.exact_path import ExactBudget
from boaf.service.grpc.server import BoafServer
from boaf.service.rpc.converters import state_from_proto, state_to_proto
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import game_pb2, game_pb2_grpc

WINNABLE, LOSES, ESTIMATE = game_pb2.VERDICT_WINNABLE, game_pb2.VERDICT_LOSES, game_pb2.VERDICT_ESTIMATE
DEALS = (367297990, 1, 16, 1163, 360528)  # solvable, solvable, solvable, unsolvable (connected), unsolvable


@pytest.fixture(scope="module")
def game(server: BoafServer) -> Iterator[game_pb2_grpc.GameStub]:
    with channel_to(server) as channel:
        yield game_pb2_grpc.GameStub(channel)


def hint(game: game_pb2_grpc.GameStub, state: State | pb.State, max_nodes: int = 0) -> game_pb2.HintResponse:
    message = state if isinstance(state, pb.State) else state_to_proto(state)
    answer: game_pb2.HintResponse = game.Hint(
        game_pb2.HintRequest(state=message, max_nodes_per_move=max_nodes), timeout=30
    )
    return answer


@pytest.mark.parametrize("seed", [367297990, 1])
def test_hint_lists_plays_legal_moves_in_order_with_their_results(game: game_pb2_grpc.GameStub, seed: int) -> None:
    played = game.Play(game_pb2.PlayRequest(state=state_to_proto(deal(seed))), timeout=10)
    answer = hint(game, deal(seed))
    assert [(m.move, m.result) for m in answer.moves] == [(m.move, m.result) for m in played.legal_moves]
    assert len(answer.moves) > 0 and not answer.won
    assert answer.model_version == load_classifier().version


def test_hint_answers_what_the_served_model_answers_for_the_results_at_the_budget(
    game: game_pb2_grpc.GameStub,
) -> None:
    state = deal(367297990)
    results = [state.apply(m) for m in state.legal_moves()]
    model = load_classifier()
    for max_nodes, budget in [(0, model.exact.max_nodes), (25, 25)]:
        answer = hint(game, state, max_nodes)
        expected = model.classify_cells(
            states_to_array(results), 4, 4, exact=ExactBudget(budget, model.exact.algorithm)
        )
        np.testing.assert_array_equal([m.p_winnable for m in answer.moves], expected.p_solvable)
        np.testing.assert_array_equal([m.nodes for m in answer.moves], expected.nodes)
        np.testing.assert_array_equal([m.verdict != ESTIMATE for m in answer.moves], expected.exact)
        assert max(m.nodes for m in answer.moves) <= budget


def states_to_check() -> list[State]:
    children = [d.apply(m) for seed in DEALS for d in [deal(seed)] for m in d.legal_moves()]
    return [deal(seed) for seed in DEALS] + children + random_states(22, 150)


def test_an_exact_verdict_never_contradicts_an_exact_solve(game: game_pb2_grpc.GameStub) -> None:
    exact = estimates = 0
    for state in states_to_check():
        answer = hint(game, state)
        for move in answer.moves:
            assert move.verdict in (WINNABLE, LOSES, ESTIMATE), move
            if move.verdict == ESTIMATE:
                assert 0 < move.p_winnable < 1, move
                estimates += 1
                continue
            exact += 1
            solved = search.solve(state_from_proto(move.result, "result"), "compatible")
            assert solved.status != search.UNKNOWN
            assert (move.verdict == WINNABLE) == (solved.status == search.SOLVABLE), (state, move.move)
            assert move.p_winnable == (1.0 if move.verdict == WINNABLE else 0.0)
        if answer.verdict != ESTIMATE:
            assert (answer.verdict == WINNABLE) == (search.solve(state).status == search.SOLVABLE), state
    assert exact > 1000 and estimates > 0, (exact, estimates)  # both kinds were seen


def test_the_positions_verdict_follows_from_its_moves(game: game_pb2_grpc.GameStub) -> None:
    for state in states_to_check()[:120]:
        answer = hint(game, state, 50)
        verdicts = [m.verdict for m in answer.moves]
        if WINNABLE in verdicts:
            assert (answer.verdict, answer.p_winnable) == (WINNABLE, 1.0)
        elif verdicts and set(verdicts) == {LOSES}:
            assert (answer.verdict, answer.p_winnable) == (LOSES, 0.0)
        elif verdicts:
            assert answer.verdict == ESTIMATE
            assert answer.p_winnable == max(m.p_winnable for m in answer.moves)


def test_a_deal_with_a_winning_move_is_winnable(game: game_pb2_grpc.GameStub) -> None:
    answer = hint(game, deal(367297990))
    assert (answer.verdict, answer.p_winnable) == (WINNABLE, 1.0)
    assert hint(game, deal(360528)).verdict == LOSES  # every child is pruned: an odd bird or a split flock


def test_a_won_state_is_won_with_no_moves_and_a_dead_end_loses(game: game_pb2_grpc.GameStub) -> None:
    won = hint(game, grid_state("-- --/-- QH"))
    assert (won.won, list(won.moves), won.verdict, won.p_winnable) == (True, [], WINNABLE, 1.0)
    dead_end = hint(game, grid_state("AC --/-- 5D"))  # two stacks in no common line
    assert (dead_end.won, list(dead_end.moves), dead_end.verdict, dead_end.p_winnable) == (False, [], LOSES, 0.0)


def test_a_small_budget_leaves_more_moves_to_the_estimate(game: game_pb2_grpc.GameStub) -> None:
    def estimates(max_nodes: int) -> int:
        return sum(m.verdict == ESTIMATE for seed in (367297990, 16) for m in hint(game, deal(seed), max_nodes).moves)

    assert estimates(1) > estimates(0) >= estimates(20_000)
    answer = hint(game, deal(16), 1)
    assert all(m.nodes <= 1 for m in answer.moves)


def test_a_budget_past_the_servers_limit_is_out_of_range(game: game_pb2_grpc.GameStub, server: BoafServer) -> None:
    limit = server.settings.hint_max_nodes
    hint(game, deal(1), limit)  # the limit itself is allowed
    with pytest.raises(grpc.RpcError) as error:
        hint(game, deal(1), limit + 1)
    assert error.value.code() is grpc.StatusCode.OUT_OF_RANGE
    assert error.value.details() == (
        f"max_nodes_per_move: {limit + 1} exceeds the server's limit of {limit} (BOAF_HINT_MAX_NODES)"
    )


@pytest.mark.parametrize(
    ("state", "match"),
    [
        (pb.State(rows=2, cols=2, cells=["AC", "AC", "", ""]), r"^state: duplicate card AC"),
        (pb.State(rows=2, cols=2, cells=["", "", "", ""]), r"^state: .*no stacks"),
        (pb.State(rows=2, cols=2, cells=["AC", "ZZ", "", ""]), r"^state: .*ZZ"),
        (pb.State(rows=2, cols=3, cells=["AC"]), r"^state: .*cells"),
    ],
)
def test_a_bad_state_is_invalid_argument_naming_it(game: game_pb2_grpc.GameStub, state: pb.State, match: str) -> None:
    with pytest.raises(grpc.RpcError) as error:
        hint(game, state)
    assert error.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert error.value.details() is not None
    assert re.search(match, error.value.details()), error.value.details()


def test_the_largest_grid_answers_within_the_limits(game: game_pb2_grpc.GameStub, server: BoafServer) -> None:
    state = deal(7, rows=4, cols=13)  # a full deck: 326 legal moves
    answer = hint(game, state, server.settings.hint_max_nodes)
    assert [m.move for m in answer.moves] == [state.move_text(m) for m in state.legal_moves()]
    assert all(m.nodes <= server.settings.hint_max_nodes for m in answer.moves)


def test_a_short_deadline_is_deadline_exceeded(game: game_pb2_grpc.GameStub, server: BoafServer) -> None:
    request = game_pb2.HintRequest(
        state=state_to_proto(deal(7, rows=4, cols=13)), max_nodes_per_move=server.settings.hint_max_nodes
    )
    with pytest.raises(grpc.RpcError) as error:
        game.Hint(request, timeout=0.02)
    assert error.value.code() is grpc.StatusCode.DEADLINE_EXCEEDED


def test_hint_is_counted_in_the_metrics(game: game_pb2_grpc.GameStub, server: BoafServer) -> None:
    def count(code: str) -> float:
        value = server.metrics.registry.get_sample_value("boaf_requests_total", {"method": "Hint", "code": code})
        return value or 0.0

    ok, out_of_range = count("OK"), count("OUT_OF_RANGE")
    hint(game, deal(1))
    with pytest.raises(grpc.RpcError):
        hint(game, deal(1), server.settings.hint_max_nodes + 1)
    assert (count("OK"), count("OUT_OF_RANGE")) == (ok + 1, out_of_range + 1)
