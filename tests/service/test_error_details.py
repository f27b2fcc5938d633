"""``boaf.service.core.errors.error_details``: the google.rpc details both edges send with an error."""

from __future__ import annotations

import pytest
from google.rpc import error_details_pb2

from boaf.service.core.errors import Code, error_details

INVALID = Code.INVALID_ARGUMENT
OUT_OF_RANGE = Code.OUT_OF_RANGE

# (name, code, message, the fields of its BadRequest; None: no BadRequest)
FIELD_CASES: list[tuple[str, Code, str, list[str] | None]] = [
    ("a state", INVALID, "state: duplicate card 5S", ["state"]),
    ("a state of a batch", INVALID, "states[3]: unknown card 'ZZ'", ["states[3]"]),
    ("a nested field", INVALID, "state.cells[2]: unknown card", ["state.cells[2]"]),
    ("two fields", OUT_OF_RANGE, "rows, cols: a 9x9 grid has more than 52 cells", ["rows", "cols"]),
    ("a limit", OUT_OF_RANGE, "max_nodes: 60000001 exceeds the server's limit of 60000000", ["max_nodes"]),
    ("the whole request", OUT_OF_RANGE, "request: a message of 5 bytes exceeds the limit of 4 bytes", None),
    ("no field named", INVALID, "move 1 of 1: move '5S-7D' is not legal", None),
    ("a header", INVALID, "Connect-Timeout-Ms must be a positive integer of milliseconds, got 'soon'", None),
    ("the body", INVALID, "request body: Failed to parse maxNodes field", None),
    ("another code", Code.NOT_FOUND, "state: no solvable puzzle", None),
    ("unauthenticated", Code.UNAUTHENTICATED, "authorization: no bearer token", None),
]


@pytest.mark.parametrize(("code", "message", "fields"), [c[1:] for c in FIELD_CASES], ids=[c[0] for c in FIELD_CASES])
def test_a_message_that_names_fields_gets_one_violation_each(
    code: Code, message: str, fields: list[str] | None
) -> None:
    details = error_details(code, message, retry_after_s=5)
    if fields is None:
        assert details == []
        return
    [bad_request] = details
    assert isinstance(bad_request, error_details_pb2.BadRequest)
    description = message.partition(": ")[2]
    assert [(v.field, v.description) for v in bad_request.field_violations] == [(f, description) for f in fields]


@pytest.mark.parametrize("code", [Code.RESOURCE_EXHAUSTED, Code.UNAVAILABLE])
def test_retry_later_codes_say_when_in_retry_info(code: Code) -> None:
    [retry] = error_details(code, "states: busy", retry_after_s=7)
    assert isinstance(retry, error_details_pb2.RetryInfo)
    assert (retry.retry_delay.seconds, retry.retry_delay.nanos) == (7, 0)


@pytest.mark.parametrize("code", [Code.INTERNAL, Code.DEADLINE_EXCEEDED, Code.CANCELLED])
def test_other_codes_carry_no_details(code: Code) -> None:
    assert error_details(code, "state: whatever", retry_after_s=5) == []
