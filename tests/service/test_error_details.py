"""``boaf.service.core.errors.error_details``: the google.rpc details both edges send with an error.

The cases are errors as boaf raises them, and the details come from each error's own ``fields``
(``fields_of``), never from its message text. The same details on both edges, for the same bad
request, are checked in ``tests/http/test_connect.py``.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable

import pytest
from google.rpc import error_details_pb2

from boaf.game.errors import BoafError, IllegalMove, InvalidInput, InvalidState
from boaf.puzzles import GenerationFailed
from boaf.service.core import limits
from boaf.service.core.errors import Code, LimitExceeded, Unauthenticated, error_details, fields_of, status_of
from boaf.service.core.settings import Settings
from boaf.service.rpc import converters
from boaf.v1 import boaf_pb2 as pb

SETTINGS = Settings()


def raised(call: Callable[[], object]) -> BaseException:
    """The error ``call`` raises (it must raise)."""
    try:
        call()
    except BoafError as exc:
        return exc
    raise AssertionError("it did not raise")


def past(limit: limits.Limit) -> int:
    """A value one past ``limit`` in the default settings."""
    return limit.of(SETTINGS) + 1


def a_bad_state(where: str) -> BaseException:
    """What the converters raise for a state with a duplicate card at ``where``."""
    state = pb.State(rows=1, cols=2, cells=["5S", "5S"])
    return raised(lambda: converters.state_from_proto(state, where))


# (name, the error, the fields of its BadRequest; None: no BadRequest)
FIELD_CASES: list[tuple[str, BaseException, list[str] | None]] = [
    ("a state", a_bad_state("state"), ["state"]),
    ("a state of a batch", a_bad_state("states[3]"), ["states[3]"]),
    ("an algorithm", raised(lambda: converters.algorithm_from_proto(99)), ["algorithm"]),
    ("a nested field", InvalidState("state.cells[2]: unknown card", fields=("state.cells[2]",)), ["state.cells[2]"]),
    # As DataPlane raises it for a GeneratePuzzle grid past 52 cells.
    (
        "two fields",
        LimitExceeded("rows, cols: a 9x9 grid has more than 52 cells", fields=("rows", "cols")),
        ["rows", "cols"],
    ),
    ("a limit", raised(lambda: limits.SOLVE_MAX_NODES.check(SETTINGS, past(limits.SOLVE_MAX_NODES))), ["max_nodes"]),
    (
        "a limit on a named field",
        raised(lambda: limits.MAX_BATCH_SIZE.check(SETTINGS, past(limits.MAX_BATCH_SIZE), field="states")),
        ["states"],
    ),
    (
        "the whole request",
        raised(lambda: limits.MAX_MESSAGE_BYTES.check(SETTINGS, past(limits.MAX_MESSAGE_BYTES))),
        None,
    ),
    ("no field named", IllegalMove("move 1 of 1: move '5S-7D' is not legal"), None),
    ("a header", InvalidInput("Connect-Timeout-Ms must be a positive integer of milliseconds, got 'soon'"), None),
    ("fields in the text only", InvalidState("state: duplicate card 5S"), None),
    ("another code", GenerationFailed("state: no solvable puzzle", fields=("state",)), None),
    ("unauthenticated", Unauthenticated("authorization: no bearer token"), None),
    ("not boaf's", ValueError("state: not one of boaf's errors"), None),
]


@pytest.mark.parametrize(("exc", "fields"), [c[1:] for c in FIELD_CASES], ids=[c[0] for c in FIELD_CASES])
def test_an_error_that_names_fields_gets_one_violation_each(exc: BaseException, fields: list[str] | None) -> None:
    code, message = status_of(exc)
    details = error_details(code, message, retry_after_s=5, fields=fields_of(exc))
    if fields is None:
        assert details == []
        return
    [bad_request] = details
    assert isinstance(bad_request, error_details_pb2.BadRequest)
    prefix, _, description = message.partition(": ")
    assert prefix == ", ".join(fields)  # the message names its fields first, as the details do
    assert [(v.field, v.description) for v in bad_request.field_violations] == [(f, description) for f in fields]


def test_an_error_keeps_its_fields_through_pickling() -> None:
    exc = pickle.loads(pickle.dumps(a_bad_state("states[3]")))
    assert (type(exc), fields_of(exc), str(exc).startswith("states[3]: ")) == (InvalidState, ("states[3]",), True)


@pytest.mark.parametrize("code", [Code.RESOURCE_EXHAUSTED, Code.UNAVAILABLE])
def test_retry_later_codes_say_when_in_retry_info(code: Code) -> None:
    [retry] = error_details(code, "states: busy", retry_after_s=7, fields=("states",))
    assert isinstance(retry, error_details_pb2.RetryInfo)
    assert (retry.retry_delay.seconds, retry.retry_delay.nanos) == (7, 0)


@pytest.mark.parametrize("code", [Code.INTERNAL, Code.DEADLINE_EXCEEDED, Code.CANCELLED])
def test_other_codes_carry_no_details(code: Code) -> None:
    assert error_details(code, "state: whatever", retry_after_s=5, fields=("state",)) == []
