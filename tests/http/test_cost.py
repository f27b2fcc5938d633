"""What a refused request costs the HTTP edge: each rejection path gets its code and a short message,
and is refused before the work that grows with its size (docs/service.md, "What a refused request may cost").

The work is counted, never timed: the JSON objects the parse built (``wire``'s object hook), the
states converted (``json_format.ParseDict``, ``converters.states_from_proto``), the bytes inflated,
and the memory the whole process allocated while it answered (``tracemalloc``, every thread: the
server runs in this process).
"""

from __future__ import annotations

import base64
import gzip
import json
import tracemalloc
import urllib.parse
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from google.protobuf import json_format
from http_client import Answer, Client, parse_answer, raw_exchange
from servers import TEST_LIMITS

import boaf.service.http.wire as wire
from boaf.game.cards import DECK_SIZE, card_text
from boaf.service.rpc import converters
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import game_pb2

MAX_STATES = TEST_LIMITS["max_batch_size"]
MAX_BYTES = TEST_LIMITS["max_message_bytes"]
CLASSIFY = "/boaf.v1.Boaf/Classify"
SHORT = 200  # characters: no refusal's message is longer
EMPTY_STATES = b'{"states":[' + b",".join([b"{}"] * (MAX_BYTES // 3 - 10)) + b"]}"  # just under the size limit
SOLVE_HOLDS = "request body: more JSON objects or arrays than a boaf.v1.SolveRequest holds"
HOLDS = "request body: more JSON strings than a boaf.v1."
BATCH_HOLDS = f"request body: more JSON strings than a batch of at most {MAX_STATES} states holds (BOAF_MAX_BATCH_SIZE)"
PAST_52 = "more than 52 cells; at most 52 are allowed"
TOO_MANY = f"states: a batch of more than {MAX_STATES} states exceeds the limit of {MAX_STATES} (BOAF_MAX_BATCH_SIZE)"


@dataclass
class Work:
    """What the server did for one request."""

    objects: int = 0  # JSON objects the parse built
    conversions: int = 0  # ParseDict calls (one a state in a batch)
    batches_read: int = 0  # states_from_proto calls
    states_read: int = 0  # state_from_proto calls (a Solve's or a Play's state)
    inflated: list[int] = field(default_factory=list)  # bytes out of each gzip inflation

    @property
    def peak_bytes(self) -> int:
        """The most memory allocated at once so far (every thread), above what was when counting began."""
        return int(tracemalloc.get_traced_memory()[1])


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch) -> Iterator[Work]:
    done = Work()
    counting_objects, parse_dict = wire._counting_objects, json_format.ParseDict
    states_from_proto, decompressobj = converters.states_from_proto, zlib.decompressobj
    state_from_proto = converters.state_from_proto

    def objects(*args: Any) -> Any:
        hook = counting_objects(*args)

        def counted(obj: dict[str, Any]) -> dict[str, Any]:
            done.objects += 1
            return hook(obj)

        return counted

    def converting(*args: Any, **kwargs: Any) -> Any:
        done.conversions += 1
        return parse_dict(*args, **kwargs)

    def reading(*args: Any, **kwargs: Any) -> Any:
        done.batches_read += 1
        return states_from_proto(*args, **kwargs)

    def reading_one(*args: Any, **kwargs: Any) -> Any:
        done.states_read += 1
        return state_from_proto(*args, **kwargs)

    class Inflater:
        def __init__(self, *args: Any) -> None:
            self.inner = decompressobj(*args)

        def decompress(self, data: bytes, max_length: int = 0) -> bytes:
            out = self.inner.decompress(data, max_length)
            done.inflated.append(len(out))
            return out

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

    monkeypatch.setattr(wire, "_counting_objects", objects)
    monkeypatch.setattr(json_format, "ParseDict", converting)
    monkeypatch.setattr(converters, "states_from_proto", reading)
    monkeypatch.setattr(converters, "state_from_proto", reading_one)
    monkeypatch.setattr(wire.zlib, "decompressobj", Inflater)
    tracemalloc.start()  # counts allocations made from now on only
    try:
        yield done
    finally:
        tracemalloc.stop()


def get_url(message: bytes, **params: str) -> str:
    query = {"connect": "v1", "encoding": "json", "message": message.decode(), **params}
    return CLASSIFY + "?" + urllib.parse.urlencode(query)


def gzip_get_url(message: bytes) -> str:
    packed = base64.urlsafe_b64encode(gzip.compress(message, 9)).rstrip(b"=")
    return get_url(packed, base64="1", compression="gzip")


def refused(answer: Answer, status: int, code: str) -> str:
    assert (answer.status, answer.body["code"]) == (status, code), answer.body
    message: str = answer.body["message"]
    assert len(message) <= SHORT, message
    return message


# ---------------------------------------------------------------- too many states: counted, never converted


@pytest.mark.parametrize(
    "send",
    [
        pytest.param(lambda c: c.post(CLASSIFY, raw=EMPTY_STATES), id="plain"),
        pytest.param(
            lambda c: c.post(CLASSIFY, raw=gzip.compress(EMPTY_STATES), headers={"Content-Encoding": "gzip"}),
            id="gzip",
        ),
        pytest.param(lambda c: c.get(gzip_get_url(EMPTY_STATES)), id="GET gzip"),
    ],
)
def test_too_many_json_states_are_refused_before_one_is_converted(client: Client, work: Work, send: Any) -> None:
    answer = send(client)
    assert refused(answer, 400, "out_of_range") == TOO_MANY
    assert answer.body["details"][0]["debug"]["fieldViolations"][0]["field"] == "states"
    assert work.objects == MAX_STATES + 2  # the parse stopped at the first object past the most a request holds
    assert (work.conversions, work.batches_read) == (0, 0)
    assert work.peak_bytes < 4 * len(EMPTY_STATES)  # the text and a few copies; a converted batch is ~100x


def test_a_batch_one_past_the_limit_is_refused_as_over_grpc(client: Client, work: Work) -> None:
    body = json.dumps({"states": [{"rows": 1, "cols": 1, "cells": ["AS"]}] * (MAX_STATES + 1)}).encode()
    assert refused(client.post(CLASSIFY, raw=body), 400, "out_of_range") == TOO_MANY
    assert (work.conversions, work.batches_read) == (0, 0)


def test_too_many_binary_states_are_refused_before_one_is_converted(client: Client, work: Work) -> None:
    body = pb.ClassifyRequest(states=[pb.State()] * (MAX_BYTES // 3)).SerializeToString()
    answer = client.post(CLASSIFY, raw=body, headers={"Content-Type": "application/proto"})
    assert refused(answer, 400, "out_of_range") == TOO_MANY  # the wire scan's, as on the gRPC edge
    assert work.batches_read == 0


def test_a_binary_body_with_a_wrong_wire_type_is_invalid_naming_the_field_as_over_grpc(client: Client) -> None:
    state = pb.State(rows=1, cols=1, cells=["AS"]).SerializeToString() + b"\x25\x01\x00\x00\x00"  # sizes, 32-bit
    body = b"\x0a" + bytes([len(state)]) + state  # states[0]
    answer = client.post(CLASSIFY, raw=body, headers={"Content-Type": "application/proto"})
    assert refused(answer, 400, "invalid_argument").startswith("states[0].sizes: a ")


def test_json_objects_no_request_holds_are_refused_while_parsed(client: Client, work: Work) -> None:
    body = json.dumps({"state": {"rows": 1, "cols": 1, "cells": [{}] * (MAX_STATES * 10)}}).encode()
    answer = client.post("/boaf.v1.Boaf/Solve", raw=body)
    assert refused(answer, 400, "invalid_argument") == SOLVE_HOLDS
    assert (work.objects, work.conversions) == (MAX_STATES + 2, 0)


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        (CLASSIFY, b'{"states":[' + b",".join([b"[]"] * (MAX_BYTES // 3 - 10)) + b"]}", TOO_MANY),
        ("/boaf.v1.Boaf/Solve", b'{"state":{"cells":[' + b",".join([b"[]"] * (MAX_BYTES // 3 - 10)) + b"]}}", None),
    ],
    ids=["batch", "Solve"],
)
def test_json_arrays_no_request_holds_are_refused_unparsed(
    client: Client, work: Work, path: str, body: bytes, message: str | None
) -> None:
    code = "out_of_range" if message else "invalid_argument"
    assert refused(client.post(path, raw=body), 400, code) == (message or SOLVE_HOLDS)
    assert (work.objects, work.conversions) == (0, 0)  # counted in the bytes: the parse never began
    assert work.peak_bytes < 4 * len(body)  # a parse would build a list a [] (~25 bytes a byte)


# ---------------------------------------------------------------- too many bytes: unread, inflated to the limit only


def test_an_oversize_body_is_refused_unread(client: Client, work: Work) -> None:
    head = f"POST {CLASSIFY} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    raw, closed = raw_exchange(client.address, f"{head}Content-Length: {4 * MAX_BYTES}\r\n\r\n".encode())
    answer = parse_answer(raw)
    assert refused(answer, 400, "out_of_range").startswith(f"request: a message of {4 * MAX_BYTES:,} bytes exceeds")
    assert closed and (work.objects, work.conversions) == (0, 0)


def test_a_gzip_bomb_is_inflated_only_to_the_limit(client: Client, work: Work) -> None:
    bomb = gzip.compress(b" " * (16 * MAX_BYTES), 9)  # 16 KiB on the wire
    answer = client.post(CLASSIFY, raw=bomb, headers={"Content-Encoding": "gzip"})
    assert refused(answer, 400, "out_of_range").startswith(f"request: a message of more than {MAX_BYTES:,} bytes once")
    assert sum(work.inflated) == MAX_BYTES + 1 and (work.objects, work.conversions) == (0, 0)


# ---------------------------------------------------------------- errors quoting the input: cut before written

HUGE = MAX_BYTES - 100  # characters of one value: the body just under the size limit


@pytest.mark.parametrize(
    ("path", "body", "start"),
    [
        (
            CLASSIFY,
            {"states": [{"rows": 1, "cols": 2, "cells": ["X" * HUGE, "AS"]}]},
            f"states[0]: cells[0] (row 1, column 1): unknown card '{'X' * 40}…': expected",
        ),
        (
            CLASSIFY,
            {"K" * HUGE: 1},
            f'request body: Message type "boaf.v1.ClassifyRequest" has no field named "{"K" * 40}…"',
        ),
        (
            "/boaf.v1.Game/Play",
            {"state": {"rows": 1, "cols": 2, "cells": ["AS", "2S"]}, "moves": ["M" * HUGE]},
            f"move 1 of 1: move '{'M' * 40}…' is not two cards",
        ),
    ],
    ids=["huge cell", "huge unknown key", "huge move"],
)
def test_a_huge_input_is_quoted_short(client: Client, work: Work, path: str, body: Any, start: str) -> None:
    raw = json.dumps(body).encode()
    message = refused(client.post(path, raw=raw), 400, "invalid_argument")
    assert message.startswith(start), message
    assert work.peak_bytes < 8 * len(raw)  # a few copies of the input; the old cutter's regex held ~100x


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"maxNodes": NaN}', "request body is not JSON: NaN is not a JSON number"),
        (b'{"maxNodes": -Infinity}', "request body is not JSON: -Infinity is not a JSON number"),
        (b'{"maxNodes": 1e400}', "request body is not JSON: the number '1e400' is too large"),
        (b'{"maxNodes": 1' + b"0" * 1000 + b"e400}", "request body is not JSON: the number '1" + "0" * 39 + "…'"),
    ],
    ids=["NaN", "-Infinity", "1e400", "a long 1e400"],
)
def test_a_non_finite_number_is_refused_short(client: Client, work: Work, body: bytes, message: str) -> None:
    assert refused(client.post("/boaf.v1.Boaf/Solve", raw=body), 400, "invalid_argument").startswith(message)
    assert work.conversions == 0


# ---------------------------------------------------------------- repeated fields past the game's limits


SOLVE, PLAY = "/boaf.v1.Boaf/Solve", "/boaf.v1.Game/Play"
FULL_STATE = {"rows": 4, "cols": 13, "cells": [card_text(c) for c in range(DECK_SIZE)], "sizes": [1] * DECK_SIZE}
MANY = MAX_BYTES // 3 - 1000  # empty texts ('"",') in a body just under the size limit
JSON_PAST_THE_GAME = [
    # (path, body, code, message): past the strings a request holds, unparsed; else parsed, never converted
    (SOLVE, {"state": {"rows": 4, "cols": 4, "cells": [""] * MANY}}, "invalid_argument", f"{HOLDS}SolveRequest holds"),
    (CLASSIFY, {"states": [{"cells": [""] * MANY}]}, "out_of_range", BATCH_HOLDS),
    (PLAY, {"state": FULL_STATE, "moves": [""] * MANY}, "invalid_argument", f"{HOLDS}PlayRequest holds"),
    (CLASSIFY, {"states": [FULL_STATE, {"cells": [""] * 1000}]}, "invalid_argument", "states[1].cells: " + PAST_52),
    (
        SOLVE,
        {"state": {"sizes": [1] * (MAX_BYTES // 2 - 100)}},
        "invalid_argument",
        "state.sizes: more than 52 stack sizes; at most 52 are allowed",
    ),
    (
        PLAY,
        {"state": FULL_STATE, "moves": [""] * 52},
        "invalid_argument",
        "moves: more than 51 moves; at most 51 are allowed",
    ),
]


@pytest.mark.parametrize("encoding", ["plain", "gzip"])
@pytest.mark.parametrize(
    ("path", "body", "code", "message"),
    JSON_PAST_THE_GAME,
    ids=["Solve cells", "Classify cells", "Play moves", "Classify 1,000 cells", "Solve sizes", "Play 52 moves"],
)
def test_a_json_list_past_the_game_is_refused_before_it_is_converted(
    client: Client, work: Work, encoding: str, path: str, body: Any, code: str, message: str
) -> None:
    raw = json.dumps(body, separators=(",", ":")).encode()
    assert len(raw) <= MAX_BYTES
    headers = {"Content-Encoding": "gzip"} if encoding == "gzip" else None
    answer = client.post(path, raw=gzip.compress(raw) if headers else raw, headers=headers)
    assert refused(answer, 400, code) == message
    assert (work.conversions, work.states_read, work.batches_read) == (0, 0, 0)
    if "holds" in message:
        assert work.objects == 0  # counted in the bytes: the parse never began


BINARY_PAST_THE_GAME = [
    (
        SOLVE,
        pb.SolveRequest(state=pb.State(rows=4, cols=4, cells=[""] * (MAX_BYTES // 2 - 100))),
        "state.cells: " + PAST_52,
    ),
    (
        CLASSIFY,
        pb.ClassifyRequest(states=[pb.State(), pb.State(cells=[""] * (MAX_BYTES // 2 - 100))]),
        "states[1].cells: " + PAST_52,
    ),
    (
        PLAY,
        game_pb2.PlayRequest(moves=[""] * (MAX_BYTES // 2 - 100)),
        "moves: more than 51 moves; at most 51 are allowed",
    ),
]


@pytest.mark.parametrize(("path", "request_", "message"), BINARY_PAST_THE_GAME, ids=["Solve", "Classify", "Play"])
def test_a_binary_list_past_the_game_is_refused_before_the_parse_as_over_grpc(
    client: Client, work: Work, path: str, request_: Any, message: str
) -> None:
    body = request_.SerializeToString()
    answer = client.post(path, raw=body, headers={"Content-Type": "application/proto"})
    assert refused(answer, 400, "invalid_argument") == message  # the wire scan's, as on the gRPC edge
    assert (work.states_read, work.batches_read) == (0, 0)
    assert work.peak_bytes < 4 * len(body)  # never parsed: a parsed message holds ~30 bytes a cell


@pytest.mark.parametrize("codec", ["json", "proto"])
def test_lists_at_the_game_limits_are_answered(client: Client, codec: str) -> None:
    request = pb.ClassifyRequest(states=[json_format.ParseDict(FULL_STATE, pb.State())] * MAX_STATES)
    if codec == "json":
        answer = client.post(CLASSIFY, raw=json_format.MessageToJson(request).encode())
        assert answer.status == 200 and len(answer.body["predictions"]) == MAX_STATES
    else:
        answer = client.post(CLASSIFY, raw=request.SerializeToString(), headers={"Content-Type": "application/proto"})
        assert answer.status == 200
    play = {"state": {"rows": 1, "cols": 2, "cells": ["AS", "2S"]}, "moves": [""] * 51}  # an empty text is no move
    assert client.post(PLAY, raw=json.dumps(play).encode()).status == 200
