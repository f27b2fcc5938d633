"""Every error's gRPC status code and CLI exit status; bad requests name the state and the cell."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from servers import TEST_LIMITS, grid_state

from boaf import game, puzzles, search
from boaf.features.batch import FeaturesStopped
from boaf.game import deal
from boaf.game.cards import DECK_SIZE, card_text
from boaf.game.errors import BoafError, Failure, InvalidInput, Stopped
from boaf.jobs.runner import InvalidJob, JobError, JobFailed
from boaf.models.errors import ClassifyStopped, DatasetError, ModelError
from boaf.search import ProgressStopped
from boaf.service.cli import exit_code
from boaf.service.core import errors
from boaf.service.core.reload import CurrentRefused
from boaf.service.core.settings import InvalidSettings, Settings
from boaf.service.grpc.status import status_of
from boaf.service.rpc.converters import state_to_proto
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc, game_pb2, game_pb2_grpc

INVALID = grpc.StatusCode.INVALID_ARGUMENT
EXHAUSTED = grpc.StatusCode.RESOURCE_EXHAUSTED
OUT_OF_RANGE = grpc.StatusCode.OUT_OF_RANGE
DEAL = "5S 7D QS 2C/4C AD 8D 5C/QH 7C TC 3C/8C 2D 9C 3D"  # deal 360528
GOOD = grid_state(DEAL)


def cells_with(index: int, text: str) -> list[str]:
    cells = list(GOOD.cells)
    cells[index] = text
    return cells


def batch(*states: pb.State) -> pb.ClassifyRequest:
    return pb.ClassifyRequest(states=list(states))


# ---------------------------------------------------------------- one tree, one table, one exit status a branch

# (error, gRPC status code, CLI exit status): every error class boaf raises.
ERRORS: list[tuple[BoafError, grpc.StatusCode, int]] = [
    # Bad input: INVALID_ARGUMENT, exit 2.
    (game.InvalidCard("unknown card 'ZZ'"), INVALID, 2),
    (game.InvalidState("duplicate card 5S"), INVALID, 2),
    (game.IllegalMove("move '5S-7D' is not legal"), INVALID, 2),
    (game.InvalidSeed("seed 4294967296 is outside the 32-bit signed range"), INVALID, 2),
    (search.UnknownAlgorithm("unknown algorithm 'magic'"), INVALID, 2),
    (search.InvalidBudget("max_nodes must be a positive integer, got 0"), INVALID, 2),
    (puzzles.InvalidPuzzleRequest("samples must be positive"), INVALID, 2),
    (DatasetError("count must be at least 1, got 0"), INVALID, 2),
    (InvalidJob("input x.txt does not exist or is not a file"), INVALID, 2),
    (InvalidSettings("BOAF_PORT='x': invalid literal"), INVALID, 2),
    (errors.LimitExceeded("a batch of 11 states exceeds the limit of 10"), grpc.StatusCode.OUT_OF_RANGE, 2),
    # A budget or limit ran out, or the call was stopped: exit 3.
    (puzzles.AnalysisStopped("time limit ran out"), grpc.StatusCode.DEADLINE_EXCEEDED, 3),
    (puzzles.GenerationFailed("no solvable puzzle"), grpc.StatusCode.NOT_FOUND, 3),
    (errors.DeadlineExceeded("the client's deadline passed"), grpc.StatusCode.DEADLINE_EXCEEDED, 3),
    (errors.Cancelled("the call was cancelled"), grpc.StatusCode.CANCELLED, 3),
    (FeaturesStopped("stopped after 1,024 of 10,000 states"), grpc.StatusCode.DEADLINE_EXCEEDED, 3),
    (ProgressStopped("stopped after 3 of 256 states"), grpc.StatusCode.DEADLINE_EXCEEDED, 3),
    (ClassifyStopped("stopped after 256 of 10,000 states"), grpc.StatusCode.DEADLINE_EXCEEDED, 3),
    (errors.Busy("puzzles: 1 already running; retry later"), EXHAUSTED, 3),
    (errors.Unauthenticated("authorization: no bearer token"), grpc.StatusCode.UNAUTHENTICATED, 2),
    # boaf failed: exit 1.
    (JobFailed("chunk 1 failed: ValueError: seven"), grpc.StatusCode.INTERNAL, 1),
    (ModelError("model file classifier.onnx is missing"), grpc.StatusCode.INTERNAL, 1),
    (
        CurrentRefused("not_a_name", "CURRENT names '../outside/v', not a version inside the model root"),
        grpc.StatusCode.INTERNAL,
        1,
    ),
    (search.InvalidOrderingModel("ordering model o.json: missing field"), grpc.StatusCode.INTERNAL, 1),
    (search.SolutionCheckFailed("solution 'AS-2S' leaves 2 stacks"), grpc.StatusCode.INTERNAL, 1),
    (errors.NotReady("the model is still loading"), grpc.StatusCode.UNAVAILABLE, 1),
    (errors.Compiling("compiling kernels (first start only)"), grpc.StatusCode.UNAVAILABLE, 1),
    (errors.ModelUnavailable("the served model failed"), grpc.StatusCode.UNAVAILABLE, 1),
]
BRANCHES = (InvalidInput, Stopped, Failure)
PACKAGE_BASES = {BoafError, *BRANCHES, search.SearchError, puzzles.PuzzleError, JobError, errors.ServiceError}


@pytest.mark.parametrize(("error", "code", "status"), ERRORS, ids=[type(e[0]).__name__ for e in ERRORS])
def test_each_error_has_its_status_code_and_exit_status(error: BoafError, code: grpc.StatusCode, status: int) -> None:
    message = errors.INTERNAL_MESSAGE if code is grpc.StatusCode.INTERNAL else str(error)
    assert status_of(error) == (code, message)
    assert exit_code(error) == status


def _subclasses(kind: type[BoafError]) -> set[type[BoafError]]:
    return {kind, *(sub for direct in kind.__subclasses__() for sub in _subclasses(direct))}


def test_every_error_is_in_exactly_one_branch_and_in_the_table() -> None:
    # boaf.client's errors are the caller's side of these codes (one class per code, each in its branch so
    # that ``except InvalidInput`` catches both); the server never raises them (tests/client/test_client.py).
    raised = {kind for kind in _subclasses(BoafError) - PACKAGE_BASES if kind.__module__ != "boaf.client"}
    assert {kind.__name__ for kind in raised if sum(issubclass(kind, b) for b in BRANCHES) != 1} == set()
    assert {type(error) for error, _, _ in ERRORS} == raised


@pytest.mark.parametrize(
    ("branch", "code", "status"),
    [
        (InvalidInput, INVALID, 2),
        (Stopped, grpc.StatusCode.DEADLINE_EXCEEDED, 3),
        (Failure, grpc.StatusCode.INTERNAL, 1),
    ],
)
def test_each_branch_has_one_status_code_and_one_exit_status(
    branch: type[BoafError], code: grpc.StatusCode, status: int
) -> None:
    # What a new error class gets until a row of STATUS_CODES says something more precise.
    assert status_of(branch("what went wrong"))[0] == code
    assert exit_code(branch("what went wrong")) == status


def test_anything_else_is_internal_and_tells_the_client_nothing() -> None:
    assert status_of(KeyError("secret")) == (grpc.StatusCode.INTERNAL, errors.INTERNAL_MESSAGE)


# (request, status code, exact message); batches put the bad state after good ones so the index is checked.
CLASSIFY_CASES: list[tuple[str, pb.ClassifyRequest, grpc.StatusCode, str]] = [
    (
        "unknown card",
        batch(GOOD, pb.State(rows=4, cols=4, cells=cells_with(5, "ZZ"))),
        INVALID,
        "states[1]: cells[5] (row 2, column 2): unknown card 'ZZ': "
        "expected a rank of A23456789TJQK then a suit of CDHS",
    ),
    (
        "duplicate card",
        batch(GOOD, GOOD, GOOD, pb.State(rows=4, cols=4, cells=cells_with(5, "5S"))),
        INVALID,
        "states[3]: duplicate card 5S at row 2, column 2 (first at row 1, column 1)",
    ),
    (
        "wrong cell count",
        batch(pb.State(rows=4, cols=4, cells=list(GOOD.cells)[:15])),
        INVALID,
        "states[0]: grid 4x4 needs 16 cells, got 15",
    ),
    (
        "rows·cols > 52",
        batch(GOOD, pb.State(rows=8, cols=8, cells=[card_text(c) for c in range(DECK_SIZE)])),
        INVALID,
        "states[1]: grid 8x8 has 64 cells; at most 52 are allowed",
    ),
    (
        "more than 52 cells",  # refused by the wire scan, before the state is converted
        batch(GOOD, pb.State(rows=8, cols=8, cells=[card_text(c) for c in range(DECK_SIZE)] + [""] * 12)),
        INVALID,
        "states[1].cells: more than 52 cells; at most 52 are allowed",
    ),
    (
        "every cell empty",
        batch(pb.State(rows=2, cols=2, cells=["", "", "", ""])),
        INVALID,
        "states[0]: no stacks: every cell is empty",
    ),
    (
        "an empty State message",
        batch(GOOD, pb.State()),
        INVALID,
        "states[1]: rows and cols must be positive integers, got 0 and 0",
    ),
    (
        "stack size on an empty cell",
        batch(pb.State(rows=1, cols=2, cells=["AS", ""], sizes=[1, 3])),
        INVALID,
        "states[0]: empty cell at row 1, column 2 has stack size 3, expected 0",
    ),
    (
        "wrong number of sizes",
        batch(pb.State(rows=1, cols=2, cells=["AS", "KD"], sizes=[1])),
        INVALID,
        "states[0]: grid 1x2 needs 2 stack sizes, got 1",
    ),
    (
        "more cards than a deck",
        batch(pb.State(rows=1, cols=2, cells=["AS", "KD"], sizes=[40, 13])),
        INVALID,
        "states[0]: stack sizes add up to 53 cards; a deck has 52",
    ),
    (
        "oversize batch",
        batch(*[GOOD] * (TEST_LIMITS["max_batch_size"] + 1)),
        OUT_OF_RANGE,
        f"states: a batch of more than {TEST_LIMITS['max_batch_size']} states exceeds the limit of "
        f"{TEST_LIMITS['max_batch_size']} (BOAF_MAX_BATCH_SIZE)",
    ),
]


@pytest.mark.parametrize(
    ("request_", "code", "message"), [c[1:] for c in CLASSIFY_CASES], ids=[c[0] for c in CLASSIFY_CASES]
)
@pytest.mark.parametrize("method", ["Classify", "Features"])
def test_bad_batches_are_rejected_naming_the_state_and_cell(
    stub: boaf_pb2_grpc.BoafStub, method: str, request_: pb.ClassifyRequest, code: grpc.StatusCode, message: str
) -> None:
    call = getattr(stub, method)
    wire = request_ if method == "Classify" else pb.FeaturesRequest(states=request_.states)
    with pytest.raises(grpc.RpcError) as caught:
        call(wire, timeout=10)
    assert (caught.value.code(), caught.value.details()) == (code, message)


SOLVE_CASES: list[tuple[str, pb.SolveRequest, grpc.StatusCode, str]] = [
    (
        "no state",
        pb.SolveRequest(),
        INVALID,
        "state: rows and cols must be positive integers, got 0 and 0",
    ),
    (
        "duplicate card",
        pb.SolveRequest(state=pb.State(rows=4, cols=4, cells=cells_with(15, "QS"))),
        INVALID,
        "state: duplicate card QS at row 4, column 4 (first at row 1, column 3)",
    ),
    (
        "unknown algorithm",
        pb.SolveRequest(state=GOOD, algorithm=9),  # type: ignore[arg-type]  # what an older or newer client may send
        INVALID,
        "algorithm: 9 is not one of ORDERED, COMPATIBLE, CONSTRAINED, BEST_N, ISLAND_MERGE",
    ),
    (
        "node budget past the server's limit",
        pb.SolveRequest(state=GOOD, max_nodes=TEST_LIMITS["solve_max_nodes"] + 1),
        OUT_OF_RANGE,
        f"max_nodes: {TEST_LIMITS['solve_max_nodes'] + 1} exceeds the server's limit of "
        f"{TEST_LIMITS['solve_max_nodes']} (BOAF_SOLVE_MAX_NODES)",
    ),
    (
        "time budget past the server's limit",
        pb.SolveRequest(state=GOOD, time_limit_ms=TEST_LIMITS["solve_time_limit_ms"] + 1),
        OUT_OF_RANGE,
        f"time_limit_ms: {TEST_LIMITS['solve_time_limit_ms'] + 1} exceeds the server's limit of "
        f"{TEST_LIMITS['solve_time_limit_ms']} (BOAF_SOLVE_TIME_LIMIT_MS)",
    ),
]


@pytest.mark.parametrize(("request_", "code", "message"), [c[1:] for c in SOLVE_CASES], ids=[c[0] for c in SOLVE_CASES])
def test_bad_solve_requests_are_rejected_with_a_precise_message(
    stub: boaf_pb2_grpc.BoafStub, request_: pb.SolveRequest, code: grpc.StatusCode, message: str
) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        stub.Solve(request_, timeout=10)
    assert (caught.value.code(), caught.value.details()) == (code, message)


HINT_LIMIT = Settings().hint_max_nodes  # the test server keeps the default
HINT_CASES: list[tuple[str, game_pb2.HintRequest, grpc.StatusCode, str]] = [
    ("no state", game_pb2.HintRequest(), INVALID, "state: rows and cols must be positive integers, got 0 and 0"),
    (
        "unknown card",
        game_pb2.HintRequest(state=pb.State(rows=4, cols=4, cells=cells_with(5, "ZZ"))),
        INVALID,
        "state: cells[5] (row 2, column 2): unknown card 'ZZ': expected a rank of A23456789TJQK then a suit of CDHS",
    ),
    (
        "every cell empty",
        game_pb2.HintRequest(state=pb.State(rows=2, cols=2, cells=["", "", "", ""])),
        INVALID,
        "state: no stacks: every cell is empty",
    ),
    (
        "node budget past the server's limit",
        game_pb2.HintRequest(state=GOOD, max_nodes_per_move=HINT_LIMIT + 1),
        OUT_OF_RANGE,
        f"max_nodes_per_move: {HINT_LIMIT + 1} exceeds the server's limit of {HINT_LIMIT} (BOAF_HINT_MAX_NODES)",
    ),
    (
        "node budget at 2**64 - 1",
        game_pb2.HintRequest(state=GOOD, max_nodes_per_move=2**64 - 1),
        OUT_OF_RANGE,
        f"max_nodes_per_move: {2**64 - 1} exceeds the server's limit of {HINT_LIMIT} (BOAF_HINT_MAX_NODES)",
    ),
]


@pytest.mark.parametrize(("request_", "code", "message"), [c[1:] for c in HINT_CASES], ids=[c[0] for c in HINT_CASES])
def test_bad_hint_requests_are_rejected_with_a_precise_message(
    channel: grpc.Channel, request_: game_pb2.HintRequest, code: grpc.StatusCode, message: str
) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        game_pb2_grpc.GameStub(channel).Hint(request_, timeout=10)
    assert (caught.value.code(), caught.value.details()) == (code, message)


def test_a_message_past_the_size_limit_is_refused_by_grpc_core(stub: boaf_pb2_grpc.BoafStub) -> None:
    # gRPC core refuses it from its length prefix, before boaf reads it, with a code grpcio cannot change:
    # the one RESOURCE_EXHAUSTED that is not "busy"; boaf.client makes it OUT_OF_RANGE (tests/client).
    huge = pb.State(rows=1, cols=1, cells=["AS" * 100] * (TEST_LIMITS["max_message_bytes"] // 100))
    request = pb.FeaturesRequest(states=[huge])
    with pytest.raises(grpc.RpcError) as caught:
        stub.Features(request, timeout=10)
    limit = TEST_LIMITS["max_message_bytes"]
    assert caught.value.code() == EXHAUSTED
    assert caught.value.details().endswith(f"Received message larger than max ({request.ByteSize()} vs. {limit})")


# ---------------------------------------------------------------- garbage never breaks the server

CARD_TEXTS = [card_text(c) for c in range(DECK_SIZE)]
cell_texts = st.one_of(
    st.sampled_from([*CARD_TEXTS, "", "--", ".", "10h", "ts", " AS", "1S", "AS AS"]),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=4),
)
counts = st.one_of(st.integers(0, 8), st.integers(0, 2**32 - 1))


@st.composite
def garbage_states(draw: st.DrawFn) -> pb.State:
    """States of every kind: often consistent shapes, often not."""
    rows, cols = draw(counts), draw(counts)
    n_cells = rows * cols if rows * cols <= 60 and draw(st.booleans()) else draw(st.integers(0, 60))
    cells = draw(st.lists(cell_texts, min_size=n_cells, max_size=n_cells))
    sizes = draw(st.one_of(st.just([]), st.lists(st.integers(0, 2**32 - 1), max_size=60)))
    return pb.State(rows=rows, cols=cols, cells=cells, sizes=sizes)


NEVER = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN}


def status_of_call(call: Callable[..., Any], request: Any) -> grpc.StatusCode:
    try:
        call(request, timeout=30)
    except grpc.RpcError as exc:
        return exc.code()
    return grpc.StatusCode.OK


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(states=st.lists(garbage_states(), max_size=4))
def test_garbage_states_never_give_internal_or_unknown(stub: boaf_pb2_grpc.BoafStub, states: list[pb.State]) -> None:
    for code in (
        status_of_call(stub.Classify, pb.ClassifyRequest(states=states)),
        status_of_call(stub.Features, pb.FeaturesRequest(states=states)),
        *(status_of_call(stub.Solve, pb.SolveRequest(state=s, max_nodes=2_000)) for s in states[:1]),
    ):
        assert code not in NEVER


def test_a_good_request_after_garbage_still_works(stub: boaf_pb2_grpc.BoafStub) -> None:
    response = stub.Classify(pb.ClassifyRequest(states=[state_to_proto(deal(1))]), timeout=10)
    assert len(response.predictions) == 1


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    algorithm=st.integers(0, 2**31 - 1),
    max_nodes=st.one_of(st.integers(0, 1_000), st.integers(0, 2**64 - 1)),
    time_limit_ms=st.one_of(st.integers(0, 1_000), st.integers(0, 2**64 - 1)),
)
def test_garbage_solve_budgets_never_give_internal_or_unknown(
    stub: boaf_pb2_grpc.BoafStub, algorithm: int, max_nodes: int, time_limit_ms: int
) -> None:
    request = pb.SolveRequest(
        state=state_to_proto(deal(1)),
        algorithm=algorithm,  # type: ignore[arg-type]  # open enum: any number may arrive
        max_nodes=max_nodes,
        time_limit_ms=time_limit_ms,
    )
    assert status_of_call(stub.Solve, request) not in NEVER
