"""Hostile input at the HTTP edge, and the same bad input over both edges.

The fuzz test walks the proto descriptors: every field of every request message
(nested ones too) gets values of every JSON type, including what JSON or the
proto3 mapping forbids (bare NaN and Infinity, 1e400, integers past 64 bits,
lone surrogates, deep nesting), and some bodies are random bytes. No answer may
be a 500 or 501, and 503 or 504 only with the documented body ``{"code", "message"}``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from http_client import Answer, Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from servers import TEST_LIMITS, channel_to, grid_state

from boaf.client import error_of
from boaf.models.errors import ModelError
from boaf.service.core.errors import Code, ModelUnavailable
from boaf.service.grpc.server import BoafServer
from boaf.service.http import HttpServer
from boaf.service.http.statuses import HTTP_STATUS, connect_code
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import game_pb2

SERVICES = [pb.DESCRIPTOR.services_by_name["Boaf"], game_pb2.DESCRIPTOR.services_by_name["Game"]]
METHODS = [(f"/{service.full_name}/{m.name}", m.input_type) for service in SERVICES for m in service.methods]
TIMEOUT = {"Connect-Timeout-Ms": "3000"}  # a request that happens to be valid and hard still ends soon
RAW = "\x00raw{}\x00"  # a placeholder json.dumps escapes, replaced by a token JSON itself cannot write


def field_paths(descriptor: Descriptor, depth: int = 0) -> list[tuple[FieldDescriptor, ...]]:
    """Every field of a message, and the fields of its message fields, two levels deep."""
    paths: list[tuple[FieldDescriptor, ...]] = []
    for field in descriptor.fields:
        paths.append((field,))
        if field.message_type is not None and depth < 1:
            paths += [(field, *inner) for inner in field_paths(field.message_type, depth + 1)]
    return paths


def raw(token: str) -> str:
    return RAW.format(token)


odd_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([2**63, 2**64, -(2**63) - 1, 10**30, -1, 0]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([raw("NaN"), raw("Infinity"), raw("-Infinity"), raw("1e400"), raw("-1e400"), raw("1" * 500)]),
    st.sampled_from(["NaN", "Infinity", "\ud800", "a\udfffb", "AC\ud83d", "COMPATIBLE", "99", "-1", "1e400"]),
    st.text(max_size=8),
    st.text(alphabet="AKQJT98765432CDHS", min_size=2, max_size=2),
)
odd_values = st.recursive(
    odd_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
) | st.integers(10, 3000).map(lambda depth: raw("[" * depth + "]" * depth))


def nested(path: tuple[FieldDescriptor, ...], value: Any) -> dict[str, Any]:
    """A body with ``value`` at ``path``; a repeated message on the way is a list of one."""
    field, *rest = path
    inner = nested(tuple(rest), value) if rest else value
    if rest and field.is_repeated:
        inner = [inner]
    return {field.json_name: inner}


def dump(body: Any) -> bytes:
    text = json.dumps(body)  # lone surrogates stay \ud800 escapes
    while (start := text.find('"\\u0000raw')) >= 0:
        end = text.index('\\u0000"', start)
        text = text[:start] + text[start + len('"\\u0000raw') : end] + text[end + len('\\u0000"') :]
    return text.encode()


@st.composite
def hostile_calls(draw: st.DrawFn) -> tuple[str, bytes]:
    path, descriptor = draw(st.sampled_from(METHODS))
    kind = draw(st.sampled_from(["field", "field", "field", "fields", "top", "bytes"]))
    if kind == "bytes":
        return path, draw(st.binary(max_size=80))
    if kind == "top":
        return path, dump(draw(odd_values))
    paths = field_paths(descriptor) or [()]
    chosen = draw(st.lists(st.sampled_from(paths), min_size=1, max_size=1 if kind == "field" else 3))
    body: dict[str, Any] = {}
    for field_path in chosen:
        if field_path:
            body.update(nested(field_path, draw(odd_values)))
    return path, dump(body)


def check_answer(answer: Answer) -> None:
    assert answer.status not in (500, 501), answer
    assert answer.headers.get("content-type") == "application/json", answer
    if answer.status != 200:
        assert isinstance(answer.body, dict) and set(answer.body) - {"details"} == {"code", "message"}, answer
        assert isinstance(answer.body["message"], str)
    if answer.status in (503, 504):
        assert answer.body["code"] == {503: "unavailable", 504: "deadline_exceeded"}[answer.status], answer


def test_the_walk_reaches_every_field_of_every_request(http_server: HttpServer) -> None:
    reached = {field.full_name for _, descriptor in METHODS for path in field_paths(descriptor) for field in path}
    assert "boaf.v1.State.cells" in reached and "boaf.v1.SolveRequest.algorithm" in reached
    assert "boaf.v1.PlayRequest.moves" in reached and "boaf.v1.ClassifyRequest.states" in reached
    assert "boaf.v1.HintRequest.max_nodes_per_move" in reached and "boaf.v1.HintRequest.state" in reached
    served = {getattr(route, "path", "") for route in http_server.app.routes}
    assert {path for path, _ in METHODS} <= served and len(METHODS) == 9


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(call=hostile_calls())
def test_hostile_bodies_never_give_a_server_error(client: Client, call: tuple[str, bytes]) -> None:
    path, body = call
    check_answer(client.post(path, raw=body, headers=TIMEOUT))


@pytest.mark.parametrize(("path", "descriptor"), METHODS, ids=[p for p, _ in METHODS])
def test_every_field_of_every_request_takes_every_odd_value(client: Client, path: str, descriptor: Descriptor) -> None:
    values = [None, True, 2**64, 1.5, raw("NaN"), raw("Infinity"), raw("1e400"), "\ud800", [], {}, [[[[]]]], "x"]
    for field_path in field_paths(descriptor):
        for value in values:
            check_answer(client.post(path, raw=dump(nested(field_path, value)), headers=TIMEOUT))


# ---------------------------------------------------------------- the same bad input over both edges

STATE = grid_state("AC 2C 3C")
LIMIT = TEST_LIMITS["max_message_bytes"]


def with_bad_utf8(message: Message, marker: str = "XYZ") -> bytes:
    """``message``'s wire bytes with the 3-byte ``marker`` replaced by a UTF-8 encoded lone surrogate."""
    return message.SerializeToString().replace(marker.encode(), b"\xed\xa0\x80")


def as_json(message: Message) -> bytes:
    return json.dumps(json_format.MessageToDict(message)).encode()


def solve(**fields: Any) -> pb.SolveRequest:
    return pb.SolveRequest(**{"state": STATE, **fields})


def hint(**fields: Any) -> game_pb2.HintRequest:
    return game_pb2.HintRequest(**{"state": STATE, **fields})


# (id, path, gRPC request bytes, HTTP body, the code both give)
CROSS: list[tuple[str, str, bytes, bytes, grpc.StatusCode]] = [
    ("lone surrogate in a cell", "/boaf.v1.Boaf/Classify",
     with_bad_utf8(pb.ClassifyRequest(states=[pb.State(rows=1, cols=1, cells=["XYZ"])])),
     b'{"states": [{"rows": 1, "cols": 1, "cells": ["\\ud800"]}]}', grpc.StatusCode.INVALID_ARGUMENT),
    ("lone surrogate in a move", "/boaf.v1.Game/Play",
     with_bad_utf8(game_pb2.PlayRequest(state=STATE, moves=["XYZ"])),
     as_json(game_pb2.PlayRequest(state=STATE))[:-1] + b', "moves": ["\\ud800"]}', grpc.StatusCode.INVALID_ARGUMENT),
    ("oversize", "/boaf.v1.Boaf/Solve",
     solve(state=pb.State(rows=1, cols=1, cells=["A" * LIMIT])).SerializeToString(),
     as_json(solve(state=pb.State(rows=1, cols=1, cells=["A" * LIMIT]))), grpc.StatusCode.OUT_OF_RANGE),
    ("batch past the limit", "/boaf.v1.Boaf/Features",
     pb.FeaturesRequest(states=[STATE] * (TEST_LIMITS["max_batch_size"] + 1)).SerializeToString(),
     as_json(pb.FeaturesRequest(states=[STATE] * (TEST_LIMITS["max_batch_size"] + 1))),
     grpc.StatusCode.OUT_OF_RANGE),
    ("nodes past the limit", "/boaf.v1.Boaf/Solve", solve(max_nodes=10**12).SerializeToString(),
     as_json(solve(max_nodes=10**12)), grpc.StatusCode.OUT_OF_RANGE),
    ("unknown algorithm", "/boaf.v1.Boaf/Solve", solve(algorithm=99).SerializeToString(),
     b'{"state": ' + as_json(STATE) + b', "algorithm": 99}', grpc.StatusCode.INVALID_ARGUMENT),
    ("bad card", "/boaf.v1.Boaf/Solve", solve(state=grid_state("AC ZZ")).SerializeToString(),
     as_json(solve(state=grid_state("AC ZZ"))), grpc.StatusCode.INVALID_ARGUMENT),
    ("a grid too large to deal", "/boaf.v1.Game/Deal", game_pb2.DealRequest(rows=99).SerializeToString(),
     b'{"rows": 99}', grpc.StatusCode.INVALID_ARGUMENT),
    ("seed past 64 bits", "/boaf.v1.Game/Deal", b"\x08" + b"\xff" * 10 + b"\x01",  # a varint of 11 bytes
     b'{"seed": "18446744073709551616"}', grpc.StatusCode.INVALID_ARGUMENT),
    ("hint nodes past the limit", "/boaf.v1.Game/Hint", hint(max_nodes_per_move=10**12).SerializeToString(),
     as_json(hint(max_nodes_per_move=10**12)), grpc.StatusCode.OUT_OF_RANGE),
    ("hint of a bad card", "/boaf.v1.Game/Hint", hint(state=grid_state("AC ZZ")).SerializeToString(),
     as_json(hint(state=grid_state("AC ZZ"))), grpc.StatusCode.INVALID_ARGUMENT),
    ("hint of no state", "/boaf.v1.Game/Hint", b"", b"{}", grpc.StatusCode.INVALID_ARGUMENT),
    ("hint nodes past 64 bits", "/boaf.v1.Game/Hint", b"\x10" + b"\xff" * 10 + b"\x01",
     b'{"maxNodesPerMove": "18446744073709551616"}', grpc.StatusCode.INVALID_ARGUMENT),
    ("hint nodes at 2**64 - 1", "/boaf.v1.Game/Hint", hint(max_nodes_per_move=2**64 - 1).SerializeToString(),
     as_json(hint(max_nodes_per_move=2**64 - 1)), grpc.StatusCode.OUT_OF_RANGE),
    ("no such method", "/boaf.v1.Boaf/Guess", b"", b"{}", grpc.StatusCode.UNIMPLEMENTED),
]  # fmt: skip


def over_grpc(server: BoafServer, path: str, request: bytes) -> grpc.StatusCode:
    """The code a gRPC client gets for ``request``, as ``boaf.client`` reports it: gRPC core's own refusal of
    an uncompressed message past the limit (RESOURCE_EXHAUSTED) is OUT_OF_RANGE, as the HTTP edge answers."""
    with channel_to(server) as channel:
        call: Callable[..., bytes] = channel.unary_unary(path)
        try:
            call(request, timeout=30)
        except grpc.RpcError as error:
            return error_of(error.code(), error.details()).code
    return grpc.StatusCode.OK


@pytest.mark.parametrize(("path", "request_", "body", "code"), [c[1:] for c in CROSS], ids=[c[0] for c in CROSS])
def test_the_same_bad_input_gets_the_same_code_on_both_edges(
    client: Client, grpc_server: BoafServer, path: str, request_: bytes, body: bytes, code: grpc.StatusCode
) -> None:
    answer = client.post(path, raw=body)
    assert (over_grpc(grpc_server, path, request_), answer.body["code"]) == (code, connect_code(Code[code.name]))
    assert answer.status == HTTP_STATUS[Code[code.name]]


def test_a_failed_model_is_unavailable_on_both_edges(
    client: Client, grpc_server: BoafServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ModelUnavailable("the model failed to run")

    assert grpc_server.servicer.plane is not None
    monkeypatch.setattr(grpc_server.servicer.plane, "classify", broken)
    request = pb.ClassifyRequest(states=[STATE])
    answer = client.post("/boaf.v1.Boaf/Classify", raw=as_json(request))
    code = over_grpc(grpc_server, "/boaf.v1.Boaf/Classify", request.SerializeToString())
    assert (code, answer.status, answer.body["code"]) == (grpc.StatusCode.UNAVAILABLE, 503, "unavailable")


def test_a_model_that_fails_during_a_hint_is_unavailable_on_both_edges(
    client: Client, grpc_server: BoafServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ModelError("onnxruntime failed")

    assert grpc_server.servicer.plane is not None
    monkeypatch.setattr(grpc_server.servicer.plane.classifier, "classify_cells", broken)
    request = hint()
    answer = client.post("/boaf.v1.Game/Hint", raw=as_json(request))
    code = over_grpc(grpc_server, "/boaf.v1.Game/Hint", request.SerializeToString())
    assert (code, answer.status, answer.body["code"]) == (grpc.StatusCode.UNAVAILABLE, 503, "unavailable")
    assert answer.body["message"] == "the served model failed: onnxruntime failed"
