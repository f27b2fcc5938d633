"""What a refused gRPC request may cost: each rejection path, through a real server, refused before the work.

Every path gets its documented code and a short message, and is held to the rule of
docs/service.md ("What a refused request may cost") by counting work, not by timing:
a request refused before the parse never reaches protobuf's parser (``parses``), nor
the converters; a compressed bomb inflates no more than the limit and asks for the
heap to be trimmed; the batch scan stops at the first state past the limit.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from servers import TEST_LIMITS, wait_for

from boaf.client import LimitExceeded, error_of
from boaf.game import deal
from boaf.game.cards import DECK_SIZE, card_text
from boaf.game.errors import InvalidInput
from boaf.service.core.errors import LimitExceeded as ServerLimitExceeded
from boaf.service.grpc import compression, interceptors
from boaf.service.rpc import converters
from boaf.service.rpc.converters import state_to_proto
from boaf.service.rpc.wire_scan import FIELDS_PER_STATE, MAX_MOVES, SPARE_FIELDS, WireScan
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import game_pb2

CODE = grpc.StatusCode
LIMIT_BYTES = TEST_LIMITS["max_message_bytes"]
BATCH = TEST_LIMITS["max_batch_size"]
EASY = state_to_proto(deal(1))
SHORT_MESSAGE = 200  # characters: every message of a refusal quotes at most a few dozen of the input
CLASSIFY, SOLVE = "/boaf.v1.Boaf/Classify", "/boaf.v1.Boaf/Solve"


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def field(number: int, wire: int, payload: bytes = b"") -> bytes:
    return varint(number << 3 | wire) + payload


def nested(number: int, body: bytes) -> bytes:
    return field(number, 2, varint(len(body)) + body)


class Work:
    """Counts of the work the server did for the calls of one test: parses, batch conversions, trims asked."""

    def __init__(self) -> None:
        self.parses = 0
        self.conversions = 0
        self.trims = 0


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch) -> Iterator[Work]:
    counts = Work()
    parse_of_the_gate = interceptors._Call._parse

    def counted_parse(call: Any, raw: bytes, parse: Callable[[bytes], Any] | None, context: Any) -> Any:
        if parse is None:
            return parse_of_the_gate(call, raw, parse, context)

        def parse_counted(data: bytes) -> Any:
            counts.parses += 1
            return parse(data)

        parse_counted.__self__ = parse.__self__  # type: ignore[attr-defined]  # the gate finds its message by it
        return parse_of_the_gate(call, raw, parse_counted, context)

    states_from_proto = converters.states_from_proto

    def counted_conversion(*args: Any, **kwargs: Any) -> Any:
        counts.conversions += 1
        return states_from_proto(*args, **kwargs)

    trim = interceptors.give_memory_back_soon

    def counted_trim() -> None:
        counts.trims += 1
        trim()

    monkeypatch.setattr(interceptors._Call, "_parse", counted_parse)
    monkeypatch.setattr(converters, "states_from_proto", counted_conversion)
    monkeypatch.setattr(interceptors, "give_memory_back_soon", counted_trim)
    yield counts


def refused(
    channel: grpc.Channel,
    method: str,
    payload: bytes,
    compression_: grpc.Compression = grpc.Compression.NoCompression,
) -> grpc.RpcError:
    call = channel.unary_unary(method, request_serializer=None, response_deserializer=None)
    with pytest.raises(grpc.RpcError) as caught:
        call(payload, timeout=20, compression=compression_)
    error = caught.value
    assert len(error.details()) < SHORT_MESSAGE, error.details()
    return error


def answered(
    channel: grpc.Channel,
    method: str,
    payload: bytes,
    compression_: grpc.Compression = grpc.Compression.NoCompression,
) -> bytes:
    call = channel.unary_unary(method, request_serializer=None, response_deserializer=None)
    answer: bytes = call(payload, timeout=20, compression=compression_)
    return answer


# ---------------------------------------------------------------- the batch, counted before the parse


@pytest.mark.parametrize("method", [CLASSIFY, "/boaf.v1.Boaf/Features"])
def test_a_million_empty_states_are_refused_before_any_state_is_parsed(
    channel: grpc.Channel, work: Work, method: str
) -> None:
    payload = nested(1, b"") * 400_000  # 800 KB, under the message limit
    error = refused(channel, method, payload)
    assert error.code() == CODE.OUT_OF_RANGE
    assert error.details().startswith(f"states: a batch of more than {BATCH} states exceeds the limit of {BATCH}")
    assert (work.parses, work.conversions) == (0, 0)


def test_the_batch_scan_stops_at_the_first_state_past_the_limit() -> None:
    scan = WireScan(pb.ClassifyRequest.DESCRIPTOR)
    past = nested(1, b"") * (BATCH + 1)
    garbage_after = b"\xff" * 1000  # never read: the scan has stopped
    with pytest.raises(ServerLimitExceeded, match=f"more than {BATCH} states"):
        scan.check(past + garbage_after, max_batch_size=BATCH)
    scan.check(nested(1, EASY.SerializeToString()) * BATCH, max_batch_size=BATCH)  # at the limit: nothing to say


def test_a_batch_at_the_limit_is_answered(channel: grpc.Channel, work: Work) -> None:
    answer = pb.ClassifyResponse.FromString(
        answered(channel, CLASSIFY, pb.ClassifyRequest(states=[EASY] * BATCH).SerializeToString())
    )
    assert len(answer.predictions) == BATCH
    assert (work.parses, work.conversions) == (1, 1)


def test_a_request_of_tiny_fields_is_refused_once_its_scan_passes_its_budget(channel: grpc.Channel, work: Work) -> None:
    budget = FIELDS_PER_STATE * BATCH + SPARE_FIELDS
    payload = field(9, 0, b"\x01") * (budget + 1)  # unknown fields, each read one by one
    error = refused(channel, CLASSIFY, payload)
    assert error.code() == CODE.OUT_OF_RANGE
    assert f"more than {budget:,} fields to read" in error.details()
    assert work.parses == 0
    answered(channel, CLASSIFY, nested(1, EASY.SerializeToString()) + field(9, 0, b"\x01") * (budget // 2))


# ---------------------------------------------------------------- size and compression


def core_refusal(size: int) -> str:
    """What gRPC core answers, from its length prefix, to an uncompressed message of ``size`` bytes past the limit."""
    return f"Received message larger than max ({size} vs. {interceptors.HARD_MESSAGE_FACTOR * LIMIT_BYTES})"


def test_a_message_past_the_limit_is_refused_before_its_parse(channel: grpc.Channel, work: Work) -> None:
    payload = nested(1, EASY.SerializeToString()) * (LIMIT_BYTES // 60)
    error = refused(channel, CLASSIFY, payload)
    # gRPC core's own refusal: the only RESOURCE_EXHAUSTED that is not "busy" (the client makes it OUT_OF_RANGE).
    assert error.code() == CODE.RESOURCE_EXHAUSTED
    assert error.details().endswith(core_refusal(len(payload)))  # "SERVER: " before it
    assert work.parses == 0


@pytest.mark.parametrize("algorithm", [grpc.Compression.Gzip, grpc.Compression.Deflate], ids=["gzip", "deflate"])
def test_compressed_calls_are_answered(channel: grpc.Channel, algorithm: grpc.Compression) -> None:
    request = pb.ClassifyRequest(states=[EASY] * 3).SerializeToString()
    answer = pb.ClassifyResponse.FromString(answered(channel, CLASSIFY, request, algorithm))
    assert len(answer.predictions) == 3
    info = pb.ServerInfo.FromString(answered(channel, "/boaf.v1.Boaf/GetServerInfo", b"", algorithm))
    assert info.limits.max_message_bytes == LIMIT_BYTES


@pytest.mark.parametrize("algorithm", [grpc.Compression.Gzip, grpc.Compression.Deflate], ids=["gzip", "deflate"])
def test_a_compressed_bomb_is_inflated_up_to_the_limit_then_out_of_range(
    channel: grpc.Channel, work: Work, algorithm: grpc.Compression, monkeypatch: pytest.MonkeyPatch
) -> None:
    inflated: list[int] = []
    inflate = compression._inflate

    def counted_inflate(raw: bytes, wbits: int, max_bytes: int, encoding: str) -> bytes:
        try:
            out = inflate(raw, wbits, max_bytes, encoding)
        except Exception:
            inflated.append(max_bytes)  # refused: at most max_bytes came out
            raise
        inflated.append(len(out))
        return out

    monkeypatch.setattr(compression, "_inflate", counted_inflate)
    bomb = nested(1, b"") * (2 * LIMIT_BYTES)  # 4 MiB of empty states, ~4 KB compressed
    error = refused(channel, CLASSIFY, bomb, algorithm)
    assert error.code() == CODE.OUT_OF_RANGE
    name = "gzip" if algorithm == grpc.Compression.Gzip else "deflate"
    assert error.details() == (
        f"request: a message of more than {LIMIT_BYTES:,} bytes once inflated ({name}) exceeds the limit of "
        f"{LIMIT_BYTES:,} bytes (BOAF_MAX_MESSAGE_BYTES)"
    )
    assert inflated == [LIMIT_BYTES]
    assert work.parses == 0
    assert wait_for(lambda: work.trims == 1, timeout=5)  # its call, once ended, asked for the heap to be trimmed


def test_bytes_that_start_as_gzip_but_are_not_are_invalid(channel: grpc.Channel, work: Work) -> None:
    error = refused(channel, CLASSIFY, gzip.compress(EASY.SerializeToString())[:-4])
    assert error.code() == CODE.INVALID_ARGUMENT
    assert "start as gzip but are not one gzip stream" in error.details()
    assert work.parses == 0


def test_a_message_that_starts_like_a_zlib_header_is_itself(channel: grpc.Channel) -> None:
    request = game_pb2.DealRequest(seed=29).SerializeToString()
    assert compression.has_zlib_header(request)  # 08 1d: seed, 29
    state = pb.State.FromString(answered(channel, "/boaf.v1.Game/Deal", request))
    assert state == state_to_proto(deal(29))
    assert compression.inflated(zlib.compress(request), 100) == request


# ---------------------------------------------------------------- wire types and broken bytes


WRONG_WIRE_TYPES = [
    # (method, payload, the field named)
    (CLASSIFY, field(1, 0, b"\x05"), "states"),
    (CLASSIFY, nested(1, EASY.SerializeToString() + field(4, 5, b"\x01\x00\x00\x00")), "states[0].sizes"),
    (CLASSIFY, nested(1, EASY.SerializeToString()) * 2 + nested(1, field(3, 0, b"\x01")), "states[2].cells"),
    (SOLVE, nested(1, EASY.SerializeToString() + field(1, 1, b"\x04" * 8)), "state.rows"),
    (SOLVE, nested(1, EASY.SerializeToString()) + field(3, 2, b"\x00"), "max_nodes"),
    ("/boaf.v1.Game/Play", nested(1, EASY.SerializeToString()) + field(2, 0, b"\x01"), "moves"),
    ("/boaf.v1.Boaf/GeneratePuzzle", field(6, 5, b"abcd"), "energy"),
    ("/boaf.v1.Boaf/GeneratePuzzle", field(1, 3) + field(1, 4), "cards"),
]


@pytest.mark.parametrize(("method", "payload", "name"), WRONG_WIRE_TYPES, ids=[w[2] for w in WRONG_WIRE_TYPES])
def test_a_wrong_wire_type_at_any_depth_is_invalid_naming_the_field(
    channel: grpc.Channel, work: Work, method: str, payload: bytes, name: str
) -> None:
    error = refused(channel, method, payload)
    assert error.code() == CODE.INVALID_ARGUMENT
    assert error.details().startswith(f"{name}: a ")
    assert (work.parses, work.conversions) == (0, 0)
    status = rpc_status.from_call(error)
    assert status is not None
    bad = error_details_pb2.BadRequest()
    assert status.details[0].Unpack(bad)
    assert [v.field for v in bad.field_violations] == [name]


def test_unknown_field_numbers_are_still_ignored(channel: grpc.Channel) -> None:
    state = EASY.SerializeToString() + field(7, 0, b"\x01") + nested(300, b"from a newer client")
    payload = nested(1, state) + field(9, 5, b"abcd") + field(20, 3) + field(21, 0, b"\x01") + field(20, 4)
    answer = pb.ClassifyResponse.FromString(answered(channel, CLASSIFY, payload))
    assert len(answer.predictions) == 1


def test_states_written_in_any_field_order_are_matched_whole_not_read_field_by_field(channel: grpc.Channel) -> None:
    # Protobuf writers put fields in number order; another order is valid, and must not cost the scan's budget.
    reordered = pb.State(cells=EASY.cells).SerializeToString() + field(7, 0, b"\x01")
    reordered += pb.State(rows=EASY.rows, cols=EASY.cols).SerializeToString()
    assert pb.State.FromString(reordered).rows == EASY.rows
    answer = pb.ClassifyResponse.FromString(answered(channel, CLASSIFY, nested(1, reordered) * BATCH))
    assert len(answer.predictions) == BATCH
    assert BATCH * len(EASY.cells) > FIELDS_PER_STATE * BATCH + SPARE_FIELDS  # read one by one, they would not fit


def test_a_message_cut_short_is_invalid(channel: grpc.Channel) -> None:
    error = refused(channel, CLASSIFY, pb.ClassifyRequest(states=[EASY] * 2).SerializeToString()[:-3])
    assert error.code() == CODE.INVALID_ARGUMENT
    assert "do not parse as the request message" in error.details()


def test_a_huge_unknown_field_is_skipped_whole(channel: grpc.Channel, work: Work) -> None:
    payload = nested(1, EASY.SerializeToString()) + nested(99, b"x" * (LIMIT_BYTES - 1024))
    answer = pb.ClassifyResponse.FromString(answered(channel, CLASSIFY, payload))
    assert len(answer.predictions) == 1
    error = refused(channel, CLASSIFY, nested(99, b"x" * LIMIT_BYTES))
    assert error.code() == CODE.RESOURCE_EXHAUSTED  # gRPC core's, from the length prefix
    assert work.parses == 1


def test_a_huge_quoted_input_comes_back_short(channel: grpc.Channel) -> None:
    state = pb.State(rows=4, cols=4, cells=["Z" * 200_000, *EASY.cells[1:]])
    error = refused(channel, SOLVE, pb.SolveRequest(state=state).SerializeToString())
    assert error.code() == CODE.INVALID_ARGUMENT


# ---------------------------------------------------------------- gRPC core's own refusal, mapped by the client


def test_core_refusal_past_the_limit_is_what_the_client_maps_to_out_of_range(channel: grpc.Channel) -> None:
    assert interceptors.HARD_MESSAGE_FACTOR == 1  # core takes no message past BOAF_MAX_MESSAGE_BYTES
    payload = nested(99, b"x" * LIMIT_BYTES)
    error = refused(channel, CLASSIFY, payload)
    assert error.code() == CODE.RESOURCE_EXHAUSTED
    assert error.details().endswith(core_refusal(len(payload)))  # "SERVER: " before it
    mapped = error_of(error.code(), error.details())
    assert isinstance(mapped, LimitExceeded)
    assert mapped.code == CODE.OUT_OF_RANGE
    assert "BOAF_MAX_MESSAGE_BYTES" in mapped.message


# ---------------------------------------------------------------- repeated fields past the game's limits, counted


PLAY = "/boaf.v1.Game/Play"
MANY = LIMIT_BYTES // 2 - 100  # empty cells (two bytes each) in a message just under the size limit
PAST_THE_GAME = [
    # (method, payload, the refusal) for the most empty cells, stack sizes or moves a message holds
    (
        SOLVE,
        nested(1, field(1, 0, b"\x04") + field(3, 2, b"\x00") * MANY),
        "state.cells: more than 52 cells; at most 52 are allowed",
    ),
    (
        CLASSIFY,
        nested(1, EASY.SerializeToString()) + nested(1, field(3, 2, b"\x00") * MANY),
        "states[1].cells: more than 52 cells; at most 52 are allowed",
    ),
    (
        SOLVE,
        nested(1, pb.State(rows=4, cols=4, sizes=[1] * (LIMIT_BYTES - 100)).SerializeToString()),
        "state.sizes: more than 52 stack sizes; at most 52 are allowed",
    ),
    (
        PLAY,
        nested(1, EASY.SerializeToString()) + field(2, 2, b"\x00") * MANY,
        "moves: more than 51 moves; at most 51 are allowed",
    ),
]


@pytest.mark.parametrize(
    ("method", "payload", "message"), PAST_THE_GAME, ids=["Solve cells", "Classify cells", "Solve sizes", "Play moves"]
)
def test_a_repeated_field_past_the_game_is_refused_before_the_parse(
    channel: grpc.Channel, work: Work, method: str, payload: bytes, message: str
) -> None:
    error = refused(channel, method, payload)
    assert error.code() == CODE.INVALID_ARGUMENT
    assert error.details() == message
    assert (work.parses, work.conversions) == (0, 0)


def test_the_scan_stops_at_the_first_cell_past_the_game() -> None:
    garbage_after = b"\xff" * 1000  # never read: the scan has stopped
    state = field(3, 2, b"\x00") * 53 + garbage_after
    with pytest.raises(InvalidInput, match=r"^state\.cells: more than 52 cells"):
        WireScan(pb.SolveRequest.DESCRIPTOR).check(nested(1, state), max_batch_size=BATCH)


def test_states_at_the_game_limits_are_matched_whole_not_read_field_by_field() -> None:
    # 32 and 34 are the bytes of the sizes' tags (unpacked, packed): inside the packed values they are no tags.
    cells = [card_text(c) for c in range(DECK_SIZE)]
    in_order = pb.State(rows=4, cols=13, cells=cells, sizes=[32, 34] * 26).SerializeToString()
    any_order = (
        pb.State(sizes=[1] * DECK_SIZE).SerializeToString() + pb.State(rows=4, cols=13, cells=cells).SerializeToString()
    )
    scan = WireScan(pb.ClassifyRequest.DESCRIPTOR)
    for state in (in_order, any_order):
        scan.check(nested(1, state) * BATCH, max_batch_size=BATCH)
    assert BATCH * DECK_SIZE > FIELDS_PER_STATE * BATCH + SPARE_FIELDS  # read one by one, they would not fit


def test_repeated_fields_at_the_game_limits_are_answered(channel: grpc.Channel, work: Work) -> None:
    full = pb.State(rows=4, cols=13, cells=[card_text(c) for c in range(DECK_SIZE)], sizes=[1] * DECK_SIZE)
    answer = pb.ClassifyResponse.FromString(
        answered(channel, CLASSIFY, pb.ClassifyRequest(states=[full] * BATCH).SerializeToString())
    )
    assert len(answer.predictions) == BATCH
    play = game_pb2.PlayRequest(state=EASY, moves=[""] * MAX_MOVES)  # an empty text is no move
    assert game_pb2.PlayResponse.FromString(answered(channel, PLAY, play.SerializeToString())).state == EASY
