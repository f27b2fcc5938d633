"""AnalyzePuzzle and GeneratePuzzle through a real server on loopback."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import grpc
import numpy as np
import pytest
from grpc_health.v1 import health_pb2
from servers import TEST_LIMITS, grid_state, health_status

from boaf import puzzles, search
from boaf.game import deal, play, random_state
from boaf.service.core.deadlines import SolveBudget
from boaf.service.grpc.server import BoafServer
from boaf.service.grpc.status import status_of
from boaf.service.rpc.converters import state_from_proto, state_to_proto
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc

FIVE_CARDS = random_state(np.random.default_rng(5), 3, 3, 5)


def test_analyze_puzzle_equals_the_plain_function(stub: boaf_pb2_grpc.BoafStub) -> None:
    response = stub.AnalyzePuzzle(pb.AnalyzePuzzleRequest(state=state_to_proto(FIVE_CARDS)), timeout=30)
    expected = puzzles.analyze(FIVE_CARDS)
    assert expected.exact
    assert response.stacks == expected.stacks == 5
    assert (response.solvable, response.exact) == (expected.solvable, True)
    assert response.halfway_depth == expected.halfway_depth
    assert response.halfway_ratio == expected.halfway_ratio
    assert list(response.solution) == list(expected.solution)
    assert list(response.solution_tension) == list(expected.solution_tension)
    assert response.states_enumerated == expected.states_enumerated
    got = [
        {
            "depth": d.depth,
            "states": d.states if d.HasField("states") else None,
            "solvable": d.solvable if d.HasField("solvable") else None,
            "ratio": d.ratio,
            "ratio_low": d.ratio_low,
            "ratio_high": d.ratio_high,
            "tension": d.tension if d.HasField("tension") else None,
            "sampled": d.sampled,
            "method": d.method,
        }
        for d in response.by_depth
    ]
    assert got == [d.to_json() for d in expected.by_depth]
    if expected.tension is None:
        assert not response.HasField("tension")
    else:
        assert response.tension == expected.tension
    if response.solvable:
        assert play(FIVE_CARDS, list(response.solution)).is_solved


def test_generate_puzzle_returns_a_solvable_puzzle_of_the_asked_size(stub: boaf_pb2_grpc.BoafStub) -> None:
    request = pb.GeneratePuzzleRequest(cards=5, seed=3, iterations=20)
    response = stub.GeneratePuzzle(request, timeout=30)
    state = state_from_proto(response.state, "state")
    assert (state.rows, state.cols, state.n_stacks) == (4, 4, 5)
    assert search.solve(state).status == search.SOLVABLE
    assert play(state, list(response.solution)).is_solved
    assert response.energy_name
    assert response.seed == 3
    assert response.steps >= 20  # more when no solvable puzzle had turned up yet
    again = stub.GeneratePuzzle(request, timeout=30)  # a seed always gives the same puzzle
    assert (again.state, again.energy, again.solution) == (response.state, response.energy, response.solution)


def test_a_malformed_state_is_invalid_argument_naming_the_cell(stub: boaf_pb2_grpc.BoafStub) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        stub.AnalyzePuzzle(pb.AnalyzePuzzleRequest(state=grid_state("QS -- -- / -- 5H QS")), timeout=10)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert caught.value.details().startswith("state: duplicate card QS at row 2, column 3")


@pytest.mark.parametrize("cards", [0, 1, 17])
def test_a_bad_card_count_is_invalid_argument(stub: boaf_pb2_grpc.BoafStub, cards: int) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        stub.GeneratePuzzle(pb.GeneratePuzzleRequest(cards=cards, iterations=1), timeout=10)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert caught.value.details() == f"cards must be 2..16 for a 4x4 grid, got {cards}"


def test_a_tight_deadline_on_a_big_analysis_is_deadline_exceeded_and_the_server_keeps_serving(
    stub: boaf_pb2_grpc.BoafStub, channel: grpc.Channel
) -> None:
    started = time.monotonic()
    with pytest.raises(grpc.RpcError) as caught:
        stub.AnalyzePuzzle(pb.AnalyzePuzzleRequest(state=state_to_proto(deal(16))), timeout=0.5)
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert time.monotonic() - started < 5
    assert health_status(channel) == health_pb2.HealthCheckResponse.SERVING
    response = stub.AnalyzePuzzle(pb.AnalyzePuzzleRequest(state=state_to_proto(FIVE_CARDS)), timeout=30)
    assert response.stacks == 5


def test_budgets_past_the_server_limits_are_out_of_range(stub: boaf_pb2_grpc.BoafStub) -> None:
    too_many = TEST_LIMITS["puzzle_max_states"] + 1
    with pytest.raises(grpc.RpcError) as caught:
        stub.AnalyzePuzzle(pb.AnalyzePuzzleRequest(state=state_to_proto(FIVE_CARDS), max_states=too_many), timeout=10)
    assert caught.value.code() == grpc.StatusCode.OUT_OF_RANGE
    assert caught.value.details() == (
        f"max_states: {too_many} exceeds the server's limit of {too_many - 1} (BOAF_PUZZLE_MAX_STATES)"
    )
    too_long = TEST_LIMITS["solve_time_limit_ms"] + 1
    with pytest.raises(grpc.RpcError) as caught:
        stub.GeneratePuzzle(pb.GeneratePuzzleRequest(cards=5, time_limit_ms=too_long), timeout=10)
    assert caught.value.code() == grpc.StatusCode.OUT_OF_RANGE


def test_puzzles_wait_for_a_slot_within_their_time_limit_then_are_resource_exhausted(
    server: BoafServer, stub: boaf_pb2_grpc.BoafStub
) -> None:
    with server.servicer.plane.puzzle_slot(SolveBudget(1, 1.0)):  # the one slot the test server has
        for call in (
            lambda: stub.AnalyzePuzzle(
                pb.AnalyzePuzzleRequest(state=state_to_proto(FIVE_CARDS), time_limit_ms=50), timeout=10
            ),
            lambda: stub.GeneratePuzzle(pb.GeneratePuzzleRequest(cards=5, iterations=2, time_limit_ms=50), timeout=10),
        ):
            with pytest.raises(grpc.RpcError) as caught:
                call()
            assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert caught.value.details().startswith("puzzles: 1 already running (BOAF_MAX_CONCURRENT_PUZZLES)")
    assert stub.AnalyzePuzzle(pb.AnalyzePuzzleRequest(state=state_to_proto(FIVE_CARDS)), timeout=10).stacks == 5


def test_a_puzzle_waits_for_a_busy_slot_to_free(server: BoafServer, stub: boaf_pb2_grpc.BoafStub) -> None:
    plane = server.servicer.plane
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with plane.puzzle_slot(SolveBudget(1, 1.0)):
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(10)
    call = stub.AnalyzePuzzle.future(pb.AnalyzePuzzleRequest(state=state_to_proto(FIVE_CARDS)), timeout=20)
    release.set()  # the call may be waiting already or arrive later: either way it gets the slot
    assert call.result().stacks == 5
    holder.join(10)


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (puzzles.AnalysisStopped("time limit ran out"), grpc.StatusCode.DEADLINE_EXCEEDED),
        (puzzles.GenerationFailed("no solvable puzzle"), grpc.StatusCode.NOT_FOUND),
        (puzzles.InvalidPuzzleRequest("samples must be positive"), grpc.StatusCode.INVALID_ARGUMENT),
    ],
)
def test_puzzle_errors_have_their_own_status_codes(error: Exception, code: grpc.StatusCode) -> None:
    assert status_of(error) == (code, str(error))


PROMISE_S = 0.25  # the README's promise: a puzzle call answers within its time limit and this
SLACK_S = 0.5  # the bound tested: generous for a loaded machine, still under the ~1 s late answers of issue 21


@pytest.mark.slow
@pytest.mark.parametrize("grid", [(52, 1), (4, 13)], ids=["52x1", "4x13"])
def test_concurrent_runaway_analyses_all_answer_within_their_time_limit(
    stub: boaf_pb2_grpc.BoafStub, grid: tuple[int, int]
) -> None:
    # One puzzle slot (TEST_LIMITS): one call analyses, the others wait for the slot; every one of them,
    # the waiting ones included, answers at its limit, counted from its arrival.
    limit_s = 2.0
    request = pb.AnalyzePuzzleRequest(state=state_to_proto(deal(1, rows=grid[0], cols=grid[1])), time_limit_ms=2000)
    assert TEST_LIMITS["max_concurrent_puzzles"] == 1

    def answer_time(_: int) -> tuple[float, grpc.StatusCode]:
        started = time.monotonic()
        try:
            stub.AnalyzePuzzle(request, timeout=30)
            code = grpc.StatusCode.OK
        except grpc.RpcError as error:
            code = error.code()
        return time.monotonic() - started, code

    calls = TEST_LIMITS["max_concurrent_rpcs"]
    with ThreadPoolExecutor(calls) as pool:
        answers = list(pool.map(answer_time, range(calls)))
    assert {code for _, code in answers} <= {grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.RESOURCE_EXHAUSTED}
    assert max(seconds for seconds, _ in answers) <= limit_s + SLACK_S, answers


def test_an_estimate_reports_no_more_states_than_its_cap(stub: boaf_pb2_grpc.BoafStub) -> None:
    # A 10-card puzzle of a few thousand states, under a cap a third of that: the count respects the cap.
    state = deal(3, rows=2, cols=5)
    exact = puzzles.analyze(state)
    cap = exact.states_enumerated // 3
    request = pb.AnalyzePuzzleRequest(state=state_to_proto(state), max_states=cap, samples=20)
    response = stub.AnalyzePuzzle(request, timeout=30)
    assert not response.exact
    assert 0 < response.states_enumerated <= cap
