"""Bad requests over HTTP fail as they do over gRPC: the same table, the same messages, mapped statuses.

The gRPC table is read from ``tests/service/test_errors.py`` itself, so the two cannot drift apart.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from google.protobuf.message import Message
from http_client import Answer, Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from servers import TEST_LIMITS

from boaf.game import deal
from boaf.service.core.errors import Code
from boaf.service.http.statuses import HTTP_STATUS, connect_code
from boaf.service.rpc.converters import state_to_proto


def grpc_table() -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "service" / "test_errors.py"
    spec = importlib.util.spec_from_file_location("grpc_error_table", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GRPC = grpc_table()


def as_json(message: Message) -> Any:
    return json_format.MessageToDict(message)


def expected(code: grpc.StatusCode, message: str) -> tuple[int, dict[str, str]]:
    return HTTP_STATUS[Code[code.name]], {"code": connect_code(Code[code.name]), "message": message}


def status_and_error(answer: Answer) -> tuple[int, dict[str, str]]:
    """The status, code and message (the details, the same as gRPC's, are checked in test_connect.py)."""
    return answer.status, {key: answer.body[key] for key in ("code", "message")}


@pytest.mark.parametrize(
    ("request_", "code", "message"), [c[1:] for c in GRPC.CLASSIFY_CASES], ids=[c[0] for c in GRPC.CLASSIFY_CASES]
)
@pytest.mark.parametrize("method", ["Classify", "Features"])
def test_bad_batches_fail_as_over_grpc(
    client: Client, method: str, request_: Message, code: grpc.StatusCode, message: str
) -> None:
    answer = client.call(f"Boaf/{method}", as_json(request_))
    assert status_and_error(answer) == expected(code, message)


@pytest.mark.parametrize(
    ("request_", "code", "message"), [c[1:] for c in GRPC.SOLVE_CASES], ids=[c[0] for c in GRPC.SOLVE_CASES]
)
def test_bad_solve_requests_fail_as_over_grpc(
    client: Client, request_: Message, code: grpc.StatusCode, message: str
) -> None:
    answer = client.call("Boaf/Solve", as_json(request_))
    assert status_and_error(answer) == expected(code, message)


@pytest.mark.parametrize(
    ("request_", "code", "message"), [c[1:] for c in GRPC.HINT_CASES], ids=[c[0] for c in GRPC.HINT_CASES]
)
def test_bad_hint_requests_fail_as_over_grpc(
    client: Client, request_: Message, code: grpc.StatusCode, message: str
) -> None:
    answer = client.call("Game/Hint", as_json(request_))
    assert status_and_error(answer) == expected(code, message)


# ---------------------------------------------------------------- what only HTTP can get wrong

INVALID = grpc.StatusCode.INVALID_ARGUMENT
SOLVE = "/boaf.v1.Boaf/Solve"

# (path, raw body, headers, status, code, message)
HTTP_CASES: list[tuple[str, str, bytes, dict[str, str], int, str, str]] = [
    ("not JSON", SOLVE, b'{"state', {}, 400, "invalid_argument",
     "request body is not JSON: Unterminated string starting at: line 1 column 2 (char 1)"),
    ("not UTF-8", SOLVE, b'{"state": "\xff"}', {}, 400, "invalid_argument", "request body is not UTF-8: byte 11"),
    ("unknown field", SOLVE, b'{"stat": {}}', {}, 400, "invalid_argument",
     'request body: Message type "boaf.v1.SolveRequest" has no field named "stat" at "SolveRequest".'),
    ("wrong type", SOLVE, b'{"maxNodes": "many"}', {}, 400, "invalid_argument",
     "request body: Failed to parse maxNodes field: invalid literal for int() with base 10: 'many'."),
    ("not an object", SOLVE, b"[1, 2]", {}, 400, "invalid_argument",
     "request body must be a JSON object, got an array"),
    ("wrong content type", SOLVE, b"{}", {"Content-Type": "text/plain"}, 400, "invalid_argument",
     "content-type must be application/json or application/proto, got 'text/plain'"),
    ("bad timeout header", SOLVE, b"{}", {"Connect-Timeout-Ms": "soon"}, 400, "invalid_argument",
     "Connect-Timeout-Ms must be a positive integer of milliseconds, got 'soon'"),
    ("no such method", "/boaf.v1.Boaf/Guess", b"{}", {}, 501, "unimplemented",
     "no such method: '/boaf.v1.Boaf/Guess'"),
    ("oversize body", SOLVE, b" " * (TEST_LIMITS["max_message_bytes"] + 1), {}, 400, "out_of_range",
     f"request: a message of {TEST_LIMITS['max_message_bytes'] + 1:,} bytes exceeds the limit of "
     f"{TEST_LIMITS['max_message_bytes']:,} bytes (BOAF_MAX_MESSAGE_BYTES)"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("path", "raw", "headers", "status", "code", "message"), [c[1:] for c in HTTP_CASES], ids=[c[0] for c in HTTP_CASES]
)
def test_malformed_http_calls_are_rejected_with_a_precise_message(
    client: Client, path: str, raw: bytes, headers: dict[str, str], status: int, code: str, message: str
) -> None:
    answer = client.post(path, raw=raw, headers=headers)
    assert (answer.status, answer.body) == (status, {"code": code, "message": message})


def test_a_passed_deadline_is_gateway_timeout(client: Client) -> None:
    hard = as_json(GRPC.grid_state("2D JS AS 5C/9D JD 4H 6S/4C TS QS 8S/7D KD 9S TD"))  # deal −4965
    request = {"state": hard, "algorithm": "COMPATIBLE"}  # seconds of search
    answer = client.call("Boaf/Solve", request, headers={"Connect-Timeout-Ms": "1"})
    assert answer.status == 504
    assert answer.body["code"] == "deadline_exceeded"


def test_a_hint_past_its_deadline_is_gateway_timeout(client: Client) -> None:
    whole_deck = as_json(state_to_proto(deal(7, rows=4, cols=13)))  # 326 moves, each searched up to the limit
    request = {"state": whole_deck, "maxNodesPerMove": str(GRPC.HINT_LIMIT)}
    answer = client.call("Game/Hint", request, headers={"Connect-Timeout-Ms": "20"})
    assert (answer.status, answer.body["code"]) == (504, "deadline_exceeded")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
field_names = st.sampled_from(
    ["states", "state", "rows", "cols", "cells", "sizes", "maxNodes", "maxNodesPerMove", "algorithm", "x"]
)


@st.composite
def garbage_bodies(draw: st.DrawFn) -> bytes:
    """Raw bytes, JSON of any shape, and requests with the right field names but wrong values."""
    kind = draw(st.sampled_from(["bytes", "json", "fields"]))
    if kind == "bytes":
        return draw(st.binary(max_size=64))
    if kind == "json":
        return json.dumps(draw(json_values)).encode()
    body = draw(st.dictionaries(field_names, json_values, max_size=3))
    return json.dumps(body).encode()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=garbage_bodies(),
    method=st.sampled_from(["Boaf/Classify", "Boaf/Features", "Boaf/Solve", "Game/Play", "Game/Hint"]),
)
def test_garbage_bodies_never_give_a_server_error(client: Client, body: bytes, method: str) -> None:
    answer = client.call(method, raw=body)
    assert answer.status < 500, answer.body
