"""A hostile client, through a real server on loopback: garbage bytes, fuzzed fields, every limit, runaway calls.

Hypothesis fuzzes the gRPC edge too: a wrong wire type or value in every field of
every request message (its descriptor walked), alone or merged into a valid
request, and random bytes for every method.

What must hold whatever a client sends: no INTERNAL and no UNKNOWN; bytes that
do not parse are INVALID_ARGUMENT, logged once at WARNING without a traceback;
over-limit parameters are OUT_OF_RANGE and checked before any wait for a slot;
RESOURCE_EXHAUSTED only means busy, and even those rejections are counted; a
runaway-shaped puzzle call answers within its time limit + 250 ms and leaves
the CPU idle; SIGTERM during an analysis ends the process within its grace.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import numpy as np
import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from servers import TEST_LIMITS, loopback_settings, ready_server, serve_process, wait_for

from boaf.game import deal, random_state
from boaf.service.core.deadlines import SolveBudget
from boaf.service.grpc.interceptors import PROBE_CALLS
from boaf.service.grpc.server import BoafServer
from boaf.service.rpc.converters import state_to_proto
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc, game_pb2

LIMITS = {
    **TEST_LIMITS,
    "max_concurrent_rpcs": 64,
    "puzzle_max_samples": 50,
    "puzzle_max_iterations": 20,
    "hint_max_nodes": 5_000,
}
U32, U64 = 2**32 - 1, 2**64 - 1
FIVE_CARDS = state_to_proto(random_state(np.random.default_rng(5), 3, 3, 5))
EASY = state_to_proto(deal(1))
BIG = state_to_proto(deal(7, rows=4, cols=13))  # the largest grid: a full deck, 326 legal moves
CODE = grpc.StatusCode
NEVER = {CODE.INTERNAL, CODE.UNKNOWN}
SLACK_S = 0.25  # the bound: an answer within the time limit + 250 ms
FD = FieldDescriptor

# Every unary method the server serves, with its request message.
METHODS: dict[str, type[Message]] = {
    "/boaf.v1.Boaf/Classify": pb.ClassifyRequest,
    "/boaf.v1.Boaf/Features": pb.FeaturesRequest,
    "/boaf.v1.Boaf/Solve": pb.SolveRequest,
    "/boaf.v1.Boaf/GetServerInfo": pb.GetServerInfoRequest,
    "/boaf.v1.Boaf/AnalyzePuzzle": pb.AnalyzePuzzleRequest,
    "/boaf.v1.Boaf/GeneratePuzzle": pb.GeneratePuzzleRequest,
    "/boaf.v1.Game/Deal": game_pb2.DealRequest,
    "/boaf.v1.Game/Play": game_pb2.PlayRequest,
    "/boaf.v1.Game/Hint": game_pb2.HintRequest,
    "/grpc.health.v1.Health/Check": health_pb2.HealthCheckRequest,
}


@pytest.fixture(scope="module")
def hostile() -> Iterator[BoafServer]:
    """A server of its own (its metrics count only this module's calls), with small puzzle limits."""
    running = ready_server(loopback_settings(**LIMITS))
    yield running
    running.stop(0)


@pytest.fixture(scope="module")
def channel(hostile: BoafServer) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(f"127.0.0.1:{hostile.port}") as open_channel:
        yield open_channel


def raw_call(
    channel: grpc.Channel,
    method: str,
    payload: bytes,
    timeout: float = 2.0,
    compression: grpc.Compression | None = None,
) -> grpc.StatusCode:
    """Send ``payload`` as the request bytes of ``method``; the status code that comes back."""
    call = channel.unary_unary(method, request_serializer=None, response_deserializer=None)
    try:
        call(payload, timeout=timeout, compression=compression)
    except grpc.RpcError as error:
        return error.code()  # type: ignore[no-any-return]
    return CODE.OK


def counted(server: BoafServer, method: str, code: str) -> float:
    return server.metrics.registry.get_sample_value("boaf_requests_total", {"method": method, "code": code}) or 0.0


# ---------------------------------------------------------------- malformed requests


def pick(rng: np.random.Generator, options: list[Any]) -> Any:
    """One of ``options`` (numpy's choice would turn 2**64 - 1 into a float)."""
    return options[int(rng.integers(len(options)))]


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, wire_type: int, payload: bytes = b"") -> bytes:
    return _varint(number << 3 | wire_type) + payload


def _length_delimited(number: int, body: bytes) -> bytes:
    return _field(number, 2, _varint(len(body)) + body)


def _bad_utf8(rng: np.random.Generator) -> bytes:
    return bytes([0xFF, 0xFE, 0xC3, 0x28, 0xED, 0xA0, 0x80, 0xF8][: 2 + int(rng.integers(7))])


def _invalid_utf8(method: str, rng: np.random.Generator) -> bytes:
    # A string field holding bytes that are not UTF-8, at the place each request has one.
    state = _field(1, 0, _varint(4)) + _field(2, 0, _varint(4)) + _length_delimited(3, _bad_utf8(rng))
    name = method.rsplit("/", 1)[1]
    if name in {"Classify", "Features"}:
        return _length_delimited(1, state)
    if name in {"Solve", "AnalyzePuzzle", "Hint"}:
        return _length_delimited(1, state)
    if name == "Play":
        return _length_delimited(2, _bad_utf8(rng))
    if name == "GeneratePuzzle":
        return _field(1, 0, _varint(5)) + _length_delimited(6, _bad_utf8(rng))
    if name == "Check":
        return _length_delimited(1, _bad_utf8(rng))
    return _length_delimited(1, _bad_utf8(rng))  # Deal / GetServerInfo: an unknown or mismatched field


def _wrong_wire_type(request: type[Message], rng: np.random.Generator) -> bytes:
    fields = request.DESCRIPTOR.fields or []
    number = pick(rng, [f.number for f in fields]) if fields else 1
    wire = pick(rng, [0, 1, 2, 3, 5, 6, 7])
    if wire == 0:
        return _field(number, 0, _varint(int(rng.integers(2**40))))
    if wire == 1:
        return _field(number, 1, bytes(rng.integers(0, 256, 8, dtype=np.uint8)))
    if wire == 2:
        return _length_delimited(number, bytes(rng.integers(0, 256, int(rng.integers(20)), dtype=np.uint8)))
    if wire == 5:
        return _field(number, 5, bytes(rng.integers(0, 256, 4, dtype=np.uint8)))
    return _field(number, wire)  # group start / end, or wire types 6 and 7 that do not exist


def _fuzzed(request: type[Message], rng: np.random.Generator) -> bytes:
    # A message that parses, with values drawn from everywhere: tiny, huge, empty, nonsense.
    name = request.DESCRIPTOR.name
    cells = ["", "AS", "10h", "zz", "-" * 300, "\x00", "👀", "Q" * int(rng.integers(1, 2000))]
    state = pb.State(
        rows=pick(rng, [0, 1, 4, 13, 52, 53, U32]),
        cols=pick(rng, [0, 1, 4, U32]),
        cells=[cells[int(rng.integers(len(cells)))] for _ in range(int(rng.integers(0, 20)))],
        sizes=[pick(rng, [0, 1, 2, U32]) for _ in range(int(rng.integers(0, 3)))],
    )
    small_time = pick(rng, [0, 1, 50, U64])
    messages: dict[str, Callable[[], Message]] = {
        "ClassifyRequest": lambda: pb.ClassifyRequest(states=[state] * int(rng.integers(0, 4))),
        "FeaturesRequest": lambda: pb.FeaturesRequest(states=[state]),
        "SolveRequest": lambda: pb.SolveRequest(
            state=state,
            algorithm=pick(rng, [0, 1, 4, 5, 2**31 - 1]),  # type: ignore[arg-type]
            max_nodes=pick(rng, [0, 1, U64]),
            time_limit_ms=small_time or 50,
        ),
        "GetServerInfoRequest": pb.GetServerInfoRequest,
        "AnalyzePuzzleRequest": lambda: pb.AnalyzePuzzleRequest(
            state=state,
            max_states=pick(rng, [0, 1, U64]),
            samples=pick(rng, [0, 1, U32]),
            seed=pick(rng, [0, U64]),
            time_limit_ms=small_time or 50,
        ),
        "GeneratePuzzleRequest": lambda: pb.GeneratePuzzleRequest(
            cards=pick(rng, [0, 1, 3, 16, 26, 52, 53, U32]),
            rows=pick(rng, [0, 1, 2, 13, 27, 52, U32]),
            cols=pick(rng, [0, 1, 2, 4, U32]),
            iterations=pick(rng, [1, U32]),
            energy=pick(rng, ["", "nope", "x" * 500]),
            time_limit_ms=small_time or 50,
        ),
        "DealRequest": lambda: game_pb2.DealRequest(
            seed=pick(rng, [0, -1, 2**31, 2**63 - 1]), rows=pick(rng, [0, 60, U32])
        ),
        "PlayRequest": lambda: game_pb2.PlayRequest(state=state, moves=["AS-2S", "x" * 1000, ""]),
        "HintRequest": lambda: game_pb2.HintRequest(
            state=pick(rng, [state, EASY, BIG]), max_nodes_per_move=pick(rng, [0, 1, LIMITS["hint_max_nodes"], U64])
        ),
        "HealthCheckRequest": lambda: health_pb2.HealthCheckRequest(service="x" * int(rng.integers(0, 300))),
    }
    return messages[name]().SerializeToString()


def _mutated(request: type[Message], rng: np.random.Generator) -> bytes:
    # A valid message with bytes flipped, cut off or spliced in.
    payload = bytearray(_fuzzed(request, rng) or b"\x08\x01")
    for _ in range(int(rng.integers(1, 4))):
        at = int(rng.integers(len(payload)))
        kind = int(rng.integers(3))
        if kind == 0:
            payload[at] = int(rng.integers(256))
        elif kind == 1:
            del payload[at:]
            payload = payload or bytearray(b"\x80")
        else:
            payload[at:at] = bytes(rng.integers(0, 256, int(rng.integers(1, 6)), dtype=np.uint8))
    return bytes(payload)


def malformed_requests(count_per_method: int, seed: int = 12) -> list[tuple[str, bytes, str]]:
    """``(method, payload, kind)`` for every method, mixing the five kinds of garbage."""
    rng = np.random.default_rng(seed)
    requests = []
    for method, request in METHODS.items():
        for i in range(count_per_method):
            kind = ("random bytes", "invalid UTF-8", "wrong wire type", "fuzzed fields", "mutated")[i % 5]
            if kind == "random bytes":
                payload = bytes(rng.integers(0, 256, int(rng.integers(1, 300)), dtype=np.uint8))
            elif kind == "invalid UTF-8":
                payload = _invalid_utf8(method, rng)
            elif kind == "wrong wire type":
                payload = _wrong_wire_type(request, rng)
            elif kind == "fuzzed fields":
                payload = _fuzzed(request, rng)
            else:
                payload = _mutated(request, rng)
            requests.append((method, payload, kind))
    return requests


class Records(logging.Handler):
    """Every record logged to the loggers it is attached to."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_2000_malformed_requests_get_no_internal_and_no_unknown(hostile: BoafServer, channel: grpc.Channel) -> None:
    requests = malformed_requests(230)
    assert len(requests) >= 2000
    records = Records()
    loggers = [logging.getLogger(name) for name in ("boaf.service", "grpc")]
    for logger in loggers:
        logger.addHandler(records)
    undecodable_before = sum(counted(hostile, m.rsplit("/", 1)[1], "INVALID_ARGUMENT") for m in METHODS)
    try:
        with ThreadPoolExecutor(8) as pool:
            codes = list(pool.map(lambda r: raw_call(channel, r[0], r[1]), requests))
    finally:
        for logger in loggers:
            logger.removeHandler(records)
    by_code = Counter(codes)
    bad = [(m, kind, p[:40], c) for (m, p, kind), c in zip(requests, codes, strict=True) if c in NEVER]
    assert not bad, f"{len(bad)} INTERNAL/UNKNOWN of {len(requests)}: {bad[:5]}"
    assert by_code[CODE.INVALID_ARGUMENT] > len(requests) // 3, by_code
    # Undecodable payloads: one WARNING each, never a traceback, and never an ERROR from anyone.
    warnings = [r for r in records.records if r.getMessage() == "undecodable request"]
    assert warnings and all(r.levelno == logging.WARNING and r.exc_info is None for r in warnings)
    assert not [r for r in records.records if r.levelno >= logging.ERROR]
    invalid_now = sum(counted(hostile, m.rsplit("/", 1)[1], "INVALID_ARGUMENT") for m in METHODS)
    assert invalid_now - undecodable_before == by_code[CODE.INVALID_ARGUMENT]  # every one counted, once


def test_an_undecodable_payload_gets_a_short_message(channel: grpc.Channel) -> None:
    call = channel.unary_unary("/boaf.v1.Boaf/Solve", request_serializer=None, response_deserializer=None)
    with pytest.raises(grpc.RpcError) as caught:
        call(_length_delimited(1, _length_delimited(3, b"\xff\xfe")), timeout=5)
    assert caught.value.code() == CODE.INVALID_ARGUMENT
    assert caught.value.details().startswith("request: 6 bytes that do not parse as the request message of ")
    assert len(caught.value.details()) < 200


def test_a_huge_cell_is_an_unknown_card_quoted_short(channel: grpc.Channel) -> None:
    cells = ["X" * 100_000, *EASY.cells[1:]]
    with pytest.raises(grpc.RpcError) as caught:
        boaf_pb2_grpc.BoafStub(channel).Solve(pb.SolveRequest(state=pb.State(rows=4, cols=4, cells=cells)), timeout=5)
    assert caught.value.code() == CODE.INVALID_ARGUMENT
    assert caught.value.details().startswith(f"state: cells[0] (row 1, column 1): unknown card '{'X' * 40}…': ")
    assert len(caught.value.details()) < 200


# ---------------------------------------------------------------- every numeric parameter at its edges

L = LIMITS
PARAMETERS: list[tuple[str, Message, set[grpc.StatusCode]]] = [
    # (what, request, the codes it may get)
    *[
        (f"Solve.max_nodes={v}", pb.SolveRequest(state=EASY, max_nodes=v), codes)
        for v, codes in [(0, {CODE.OK}), (L["solve_max_nodes"], {CODE.OK}),
                         (L["solve_max_nodes"] + 1, {CODE.OUT_OF_RANGE}), (U64, {CODE.OUT_OF_RANGE})]
    ],
    *[
        (f"Solve.time_limit_ms={v}", pb.SolveRequest(state=EASY, time_limit_ms=v), codes)
        for v, codes in [(0, {CODE.OK}), (L["solve_time_limit_ms"], {CODE.OK}),
                         (L["solve_time_limit_ms"] + 1, {CODE.OUT_OF_RANGE}), (U64, {CODE.OUT_OF_RANGE})]
    ],
    (f"Solve.algorithm={U32 // 2}", pb.SolveRequest(state=EASY, algorithm=U32 // 2), {CODE.INVALID_ARGUMENT}),  # type: ignore[arg-type]
    *[
        (f"AnalyzePuzzle.max_states={v}", pb.AnalyzePuzzleRequest(state=FIVE_CARDS, max_states=v), codes)
        for v, codes in [(0, {CODE.OK}), (L["puzzle_max_states"], {CODE.OK}),
                         (L["puzzle_max_states"] + 1, {CODE.OUT_OF_RANGE}), (U64, {CODE.OUT_OF_RANGE})]
    ],
    *[
        (f"AnalyzePuzzle.samples={v}", pb.AnalyzePuzzleRequest(state=FIVE_CARDS, samples=v), codes)
        for v, codes in [(0, {CODE.OK}), (L["puzzle_max_samples"], {CODE.OK}),
                         (L["puzzle_max_samples"] + 1, {CODE.OUT_OF_RANGE}), (U32, {CODE.OUT_OF_RANGE})]
    ],
    *[
        (f"AnalyzePuzzle.time_limit_ms={v}", pb.AnalyzePuzzleRequest(state=FIVE_CARDS, time_limit_ms=v), codes)
        for v, codes in [(0, {CODE.OK}), (L["solve_time_limit_ms"], {CODE.OK}),
                         (L["solve_time_limit_ms"] + 1, {CODE.OUT_OF_RANGE}), (U64, {CODE.OUT_OF_RANGE})]
    ],
    *[
        (f"AnalyzePuzzle.seed={v}", pb.AnalyzePuzzleRequest(state=FIVE_CARDS, seed=v), {CODE.OK}) for v in (0, U64)
    ],
    *[
        (f"GeneratePuzzle.cards={v}", pb.GeneratePuzzleRequest(cards=v, iterations=1, time_limit_ms=2000), codes)
        for v, codes in [(0, {CODE.INVALID_ARGUMENT}), (16, {CODE.OK, CODE.NOT_FOUND, CODE.DEADLINE_EXCEEDED}),
                         (17, {CODE.INVALID_ARGUMENT}), (U32, {CODE.INVALID_ARGUMENT})]
    ],
    ("GeneratePuzzle.cards=52 on 13x4", pb.GeneratePuzzleRequest(cards=52, rows=13, cols=4, time_limit_ms=2000),
     {CODE.OK, CODE.NOT_FOUND, CODE.DEADLINE_EXCEEDED}),
    *[
        (f"GeneratePuzzle.rows={v}", pb.GeneratePuzzleRequest(cards=4, rows=v, iterations=1, time_limit_ms=2000), codes)
        for v, codes in [(0, {CODE.OK, CODE.NOT_FOUND}), (13, {CODE.OK, CODE.NOT_FOUND, CODE.DEADLINE_EXCEEDED}),
                         (14, {CODE.OUT_OF_RANGE}), (U32, {CODE.OUT_OF_RANGE})]
    ],
    *[
        (f"GeneratePuzzle.cols={v}", pb.GeneratePuzzleRequest(cards=4, cols=v, iterations=1, time_limit_ms=2000), codes)
        for v, codes in [(0, {CODE.OK, CODE.NOT_FOUND}), (13, {CODE.OK, CODE.NOT_FOUND, CODE.DEADLINE_EXCEEDED}),
                         (14, {CODE.OUT_OF_RANGE}), (U32, {CODE.OUT_OF_RANGE})]
    ],
    *[
        (f"GeneratePuzzle.iterations={v}", pb.GeneratePuzzleRequest(cards=4, iterations=v, time_limit_ms=2000), codes)
        for v, codes in [(0, {CODE.OK, CODE.NOT_FOUND, CODE.DEADLINE_EXCEEDED}),
                         (L["puzzle_max_iterations"], {CODE.OK, CODE.NOT_FOUND}),
                         (L["puzzle_max_iterations"] + 1, {CODE.OUT_OF_RANGE}), (U32, {CODE.OUT_OF_RANGE})]
    ],
    *[
        (f"GeneratePuzzle.time_limit_ms={v}", pb.GeneratePuzzleRequest(cards=4, iterations=2, time_limit_ms=v), codes)
        for v, codes in [(0, {CODE.OK, CODE.NOT_FOUND}), (L["solve_time_limit_ms"], {CODE.OK, CODE.NOT_FOUND}),
                         (L["solve_time_limit_ms"] + 1, {CODE.OUT_OF_RANGE}), (U64, {CODE.OUT_OF_RANGE})]
    ],
    (f"GeneratePuzzle.seed={U64}", pb.GeneratePuzzleRequest(cards=4, iterations=2, seed=U64),
     {CODE.OK, CODE.NOT_FOUND}),
    *[
        (f"Classify.states={n}", pb.ClassifyRequest(states=[EASY] * n), codes)
        for n, codes in [(0, {CODE.OK}), (L["max_batch_size"], {CODE.OK}),
                         (L["max_batch_size"] + 1, {CODE.OUT_OF_RANGE})]
    ],
    *[
        (f"State.{name}={v}", pb.SolveRequest(state=pb.State(**{"rows": 4, "cols": 4, name: v})), codes)
        for name in ("rows", "cols")
        for v, codes in [(0, {CODE.INVALID_ARGUMENT}), (52, {CODE.INVALID_ARGUMENT}),
                         (53, {CODE.INVALID_ARGUMENT}), (U32, {CODE.INVALID_ARGUMENT})]
    ],
    (f"State.sizes={U32}", pb.SolveRequest(state=pb.State(rows=1, cols=2, cells=["AS", "2S"], sizes=[U32, 1])),
     {CODE.INVALID_ARGUMENT}),
    *[
        (f"Deal.seed={v}", game_pb2.DealRequest(seed=v), codes)
        for v, codes in [(0, {CODE.OK}), (2**31 - 1, {CODE.OK}), (2**31, {CODE.INVALID_ARGUMENT}),
                         (2**63 - 1, {CODE.INVALID_ARGUMENT})]
    ],
    *[(f"Deal.rows={v}", game_pb2.DealRequest(rows=v), {CODE.INVALID_ARGUMENT}) for v in (14, U32)],
    *[
        (f"Hint.max_nodes_per_move={v}", game_pb2.HintRequest(state=BIG, max_nodes_per_move=v), codes)
        for v, codes in [(0, {CODE.OK}), (L["hint_max_nodes"], {CODE.OK}),
                         (L["hint_max_nodes"] + 1, {CODE.OUT_OF_RANGE}), (U64, {CODE.OUT_OF_RANGE})]
    ],
]  # fmt: skip


@pytest.mark.parametrize(("request_", "codes"), [p[1:] for p in PARAMETERS], ids=[p[0] for p in PARAMETERS])
def test_every_numeric_parameter_at_zero_its_limit_past_it_and_at_the_top(
    channel: grpc.Channel, request_: Message, codes: set[grpc.StatusCode]
) -> None:
    method = next(m for m, kind in METHODS.items() if isinstance(request_, kind))
    started = time.monotonic()
    code = raw_call(channel, method, request_.SerializeToString(), timeout=10)
    assert code in codes
    if code is CODE.OUT_OF_RANGE:
        assert time.monotonic() - started < 1  # refused at once, never after a wait


# ---------------------------------------------------------------- runaway requests


def cpu_seconds_over(seconds: float) -> float:
    """CPU time this process (the server's threads among them) spends over the next ``seconds``."""
    before = time.process_time()
    time.sleep(seconds)
    return time.process_time() - before


@pytest.mark.parametrize(
    "request_",
    [
        pb.AnalyzePuzzleRequest(state=state_to_proto(deal(1, rows=52, cols=1)), time_limit_ms=2000),
        pb.AnalyzePuzzleRequest(state=EASY, time_limit_ms=2000, max_states=1000, samples=LIMITS["puzzle_max_samples"]),
    ],
    ids=["52 cards in a 52x1 column", "a 16-card estimate at the sample limit"],
)
def test_a_runaway_analysis_answers_within_its_time_limit_and_leaves_the_cpu_idle(
    channel: grpc.Channel, request_: pb.AnalyzePuzzleRequest
) -> None:
    stub = boaf_pb2_grpc.BoafStub(channel)
    started = time.monotonic()
    try:
        stub.AnalyzePuzzle(request_, timeout=10)
    except grpc.RpcError as error:
        assert error.code() == CODE.DEADLINE_EXCEEDED
        assert error.details() == "the time limit of 2 s (counted from the call's arrival) ran out"
    assert time.monotonic() - started <= request_.time_limit_ms / 1000 + SLACK_S
    time.sleep(1.0)
    assert cpu_seconds_over(1.0) < 0.2  # idle: the analysis stopped, it does not run on unseen
    assert stub.AnalyzePuzzle(pb.AnalyzePuzzleRequest(state=FIVE_CARDS), timeout=10).stacks == 5  # the slot is free


def test_limits_are_checked_before_waiting_for_a_busy_puzzle_slot(hostile: BoafServer, channel: grpc.Channel) -> None:
    stub = boaf_pb2_grpc.BoafStub(channel)
    assert hostile.servicer.plane is not None
    with hostile.servicer.plane.puzzle_slot(SolveBudget(1, 10.0)):  # the only slot, held
        for call, code in [
            (
                lambda: stub.AnalyzePuzzle(pb.AnalyzePuzzleRequest(state=EASY, samples=U32), timeout=10),
                CODE.OUT_OF_RANGE,
            ),
            (lambda: stub.GeneratePuzzle(pb.GeneratePuzzleRequest(cards=1), timeout=10), CODE.INVALID_ARGUMENT),
            (lambda: stub.GeneratePuzzle(pb.GeneratePuzzleRequest(cards=5, rows=U32), timeout=10), CODE.OUT_OF_RANGE),
        ]:
            started = time.monotonic()
            with pytest.raises(grpc.RpcError) as caught:
                call()
            assert (caught.value.code(), time.monotonic() - started < 0.5) == (code, True)
        started = time.monotonic()
        with pytest.raises(grpc.RpcError) as caught:  # a sane call waits its time limit, counted from arrival
            stub.AnalyzePuzzle(pb.AnalyzePuzzleRequest(state=FIVE_CARDS, time_limit_ms=300), timeout=10)
        assert caught.value.code() == CODE.RESOURCE_EXHAUSTED
        assert time.monotonic() - started <= 0.3 + SLACK_S


@pytest.mark.slow
def test_sigterm_during_an_analysis_ends_the_process_within_its_grace() -> None:
    grace_s = 2.0
    process, address = serve_process({"BOAF_SHUTDOWN_GRACE_S": str(grace_s)})
    try:
        with grpc.insecure_channel(address) as channel:
            stub = boaf_pb2_grpc.BoafStub(channel)
            runaway = pb.AnalyzePuzzleRequest(state=state_to_proto(deal(1, rows=52, cols=1)))  # the server's 30 s
            call = stub.AnalyzePuzzle.future(runaway, timeout=60)
            time.sleep(1.0)
            assert not call.done()
            process.send_signal(signal.SIGTERM)
            started = time.monotonic()
            assert process.wait(grace_s + 5) == 0
            assert time.monotonic() - started <= grace_s + 1.5  # the grace, plus the process's own exit
            assert call.exception() is not None
    finally:
        if process.poll() is None:
            process.kill()


# ---------------------------------------------------------------- what gRPC turns away is counted too


def test_a_unary_call_whose_client_sends_no_message_is_invalid_and_counted_so() -> None:
    server = ready_server(loopback_settings())
    try:
        with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            call = channel.stream_unary("/boaf.v1.Boaf/Classify", request_serializer=None, response_deserializer=None)
            with pytest.raises(grpc.RpcError) as caught:
                call(iter(()), timeout=5)
            assert caught.value.code() == CODE.INVALID_ARGUMENT
            assert "no request message" in caught.value.details()
            assert wait_for(lambda: counted(server, "Classify", "INVALID_ARGUMENT") == 1, 2)
            assert counted(server, "Classify", "CANCELLED") == 0
    finally:
        server.stop(0)


def test_a_burst_past_the_concurrency_limit_shows_its_rejections_in_the_metrics() -> None:
    server = ready_server(loopback_settings(max_concurrent_rpcs=2, max_workers=4))
    try:
        with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            stub = boaf_pb2_grpc.BoafStub(channel)
            hard = pb.SolveRequest(  # seconds to decide: deal -4965 by Compatible DFS, 2.6M nodes
                state=state_to_proto(deal(-4965)), algorithm=pb.COMPATIBLE, time_limit_ms=400
            )
            with ThreadPoolExecutor(12) as pool:
                outcomes = list(pool.map(lambda _: _code_of(lambda: stub.Solve(hard, timeout=10)), range(12)))
            rejected = outcomes.count(CODE.RESOURCE_EXHAUSTED)
            assert rejected >= 1 and outcomes.count(CODE.OK) >= 1
            assert counted(server, "Solve", "RESOURCE_EXHAUSTED") == rejected
            assert set(outcomes) <= {CODE.OK, CODE.RESOURCE_EXHAUSTED}
            # An unknown method and an oversized message are counted as well.
            assert raw_call(channel, "/boaf.v1.Boaf/NoSuchMethod", b"") == CODE.UNIMPLEMENTED
            assert counted(server, "unknown", "UNIMPLEMENTED") == 1
            too_big = pb.FeaturesRequest(states=[pb.State(cells=["A" * 1000] * 1100)]).SerializeToString()
            gzip = grpc.Compression.Gzip  # inflated by the gate up to the limit, then OUT_OF_RANGE
            assert raw_call(channel, "/boaf.v1.Boaf/Features", too_big, compression=gzip) == CODE.OUT_OF_RANGE
            assert counted(server, "Features", "OUT_OF_RANGE") == 1
            # Uncompressed, gRPC core refuses it itself (RESOURCE_EXHAUSTED, "Received message larger than
            # max"); grpcio tells the gate only that the call is over, so it is counted as CANCELLED, never
            # as a request without its message (grpcio may end the request stream before it hears why).
            for sent in range(1, 7):
                assert raw_call(channel, "/boaf.v1.Boaf/Features", too_big) == CODE.RESOURCE_EXHAUSTED
                assert wait_for(lambda: counted(server, "Features", "CANCELLED") == sent, 2)  # noqa: B023
            assert counted(server, "Features", "INVALID_ARGUMENT") == 0
        registry = server.metrics.registry
        assert (
            registry.get_sample_value(
                "boaf_request_duration_seconds_count", {"method": "Solve", "code": "RESOURCE_EXHAUSTED"}
            )
            == rejected
        )
    finally:
        server.stop(0)


def _code_of(call: Callable[[], Any]) -> grpc.StatusCode:
    try:
        call()
    except grpc.RpcError as error:
        return error.code()  # type: ignore[no-any-return]
    return CODE.OK


# ---------------------------------------------------------------- health List, reflection v1 and v1alpha


def test_health_list_reports_every_service(channel: grpc.Channel) -> None:
    answer = health_pb2_grpc.HealthStub(channel).List(health_pb2.HealthListRequest(), timeout=5)
    serving = health_pb2.HealthCheckResponse.SERVING
    assert {name: s.status for name, s in answer.statuses.items()} == {"": serving, "boaf.v1.Boaf": serving}


@pytest.mark.parametrize("version", ["v1", "v1alpha"])
def test_reflection_answers_in_both_versions(channel: grpc.Channel, version: str) -> None:
    method = f"/grpc.reflection.{version}.ServerReflection/ServerReflectionInfo"
    stream = channel.stream_stream(
        method,
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,  # same wire format in v1
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )
    asks = [
        reflection_pb2.ServerReflectionRequest(list_services=""),
        reflection_pb2.ServerReflectionRequest(file_containing_symbol=f"grpc.reflection.{version}.ServerReflection"),
        reflection_pb2.ServerReflectionRequest(file_containing_symbol="boaf.v1.Boaf"),
    ]
    listed, itself, boaf = list(stream(iter(asks), timeout=10))
    names = {s.name for s in listed.list_services_response.service}
    assert {"boaf.v1.Boaf", "boaf.v1.Game", "grpc.health.v1.Health"} <= names
    assert {"grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"} <= names
    assert itself.file_descriptor_response.file_descriptor_proto and boaf.file_descriptor_response.file_descriptor_proto


def test_the_v1alpha_stub_still_works(channel: grpc.Channel) -> None:
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    (answer,) = stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5)
    assert answer.list_services_response.service


def test_nothing_left_running(hostile: BoafServer) -> None:
    assert threading.active_count() < 200  # no thread per call left behind


def test_a_52_card_state_is_classified_without_an_overflow_warning(channel: grpc.Channel) -> None:
    from boaf.features import feature_matrix
    from boaf.models.inputs import as_model_input

    state = deal(1, rows=13, cols=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "overflow encountered in cast" would fail here
        inputs = as_model_input(feature_matrix([state]))
    assert np.isfinite(inputs).all()
    (prediction,) = (
        boaf_pb2_grpc.BoafStub(channel)
        .Classify(pb.ClassifyRequest(states=[state_to_proto(state)]), timeout=10)
        .predictions
    )
    assert 0 <= prediction.p_solvable <= 1


def test_a_queued_solve_counts_its_wait_in_its_time_limit() -> None:
    server = ready_server(loopback_settings(max_concurrent_searches=1))
    try:
        with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            stub = boaf_pb2_grpc.BoafStub(channel)
            long_search = stub.Solve.future(
                pb.SolveRequest(state=state_to_proto(deal(360528)), algorithm=pb.CONSTRAINED, time_limit_ms=3000),
                timeout=10,
            )
            time.sleep(0.5)  # it holds the one search slot now
            started = time.monotonic()
            with pytest.raises(grpc.RpcError) as caught:
                stub.Solve(pb.SolveRequest(state=EASY, time_limit_ms=500), timeout=10)
            assert caught.value.code() == CODE.RESOURCE_EXHAUSTED
            assert caught.value.details().startswith("searches: 1 already running (BOAF_MAX_CONCURRENT_SEARCHES)")
            assert time.monotonic() - started <= 0.5 + SLACK_S
            assert long_search.result().status == pb.UNKNOWN
    finally:
        server.stop(0)


# ---------------------------------------------------------------- property: type confusion in every field

WIRE_TYPES = {  # the wire type each field type is encoded with
    **dict.fromkeys(
        [FD.TYPE_INT32, FD.TYPE_INT64, FD.TYPE_UINT32, FD.TYPE_UINT64, FD.TYPE_SINT32, FD.TYPE_SINT64,
         FD.TYPE_BOOL, FD.TYPE_ENUM], 0,
    ),
    **dict.fromkeys([FD.TYPE_FIXED64, FD.TYPE_SFIXED64, FD.TYPE_DOUBLE], 1),
    **dict.fromkeys([FD.TYPE_STRING, FD.TYPE_BYTES, FD.TYPE_MESSAGE], 2),
    **dict.fromkeys([FD.TYPE_FIXED32, FD.TYPE_SFIXED32, FD.TYPE_FLOAT], 5),
}  # fmt: skip
# A valid request of each method the confused field is merged into (protobuf merges concatenated messages).
BASES: dict[str, Message] = {
    "/boaf.v1.Boaf/Classify": pb.ClassifyRequest(states=[EASY]),
    "/boaf.v1.Boaf/Features": pb.FeaturesRequest(states=[EASY]),
    "/boaf.v1.Boaf/Solve": pb.SolveRequest(state=EASY, time_limit_ms=500),
    "/boaf.v1.Boaf/GetServerInfo": pb.GetServerInfoRequest(),
    "/boaf.v1.Boaf/AnalyzePuzzle": pb.AnalyzePuzzleRequest(state=FIVE_CARDS, time_limit_ms=500),
    "/boaf.v1.Boaf/GeneratePuzzle": pb.GeneratePuzzleRequest(cards=4, iterations=1, time_limit_ms=500),
    "/boaf.v1.Game/Deal": game_pb2.DealRequest(seed=1),
    "/boaf.v1.Game/Play": game_pb2.PlayRequest(state=EASY),
    "/boaf.v1.Game/Hint": game_pb2.HintRequest(state=EASY),
    "/grpc.health.v1.Health/Check": health_pb2.HealthCheckRequest(),
}
FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)


def field_paths(message: Descriptor, depth: int = 0) -> Iterator[tuple[FieldDescriptor, ...]]:
    """Every field of ``message``, and every field of the messages it holds (two levels down)."""
    for field in message.fields:
        yield (field,)
        if field.type == FD.TYPE_MESSAGE and depth < 2:
            yield from ((field, *inner) for inner in field_paths(field.message_type, depth + 1))


FIELD_PATHS = [(method, path) for method, request in METHODS.items() for path in field_paths(request.DESCRIPTOR)]


def path_id(method: str, path: tuple[FieldDescriptor, ...]) -> str:
    return f"{method.rsplit('/', 1)[1]}.{'.'.join(field.name for field in path)}"


@st.composite
def wire_values(draw: st.DrawFn, number: int, declared: int) -> bytes:
    """Field ``number`` with a value of a wire type other than ``declared`` (mostly), or a wrong value of it."""
    wire = draw(st.sampled_from([w for w in (0, 1, 2, 5) if w != declared] * 3 + [declared, 3, 4, 6, 7]))
    if wire == 0:
        value = draw(st.one_of(st.integers(0, 2**64 - 1), st.sampled_from([2**31, 2**32 - 1, 2**63, 2**64 - 1])))
        overlong = b"\xff" * draw(st.integers(10, 12)) + b"\x01"  # more than ten bytes: no valid varint
        return _field(number, 0, draw(st.sampled_from([_varint(value), overlong])))
    if wire in (1, 5):
        size = 8 if wire == 1 else 4
        return _field(number, wire, draw(st.binary(min_size=0, max_size=size)))  # short ones are cut off
    if wire == 2:
        body = draw(st.binary(max_size=64))
        claimed = draw(st.sampled_from([len(body), len(body) + 7, 2**31]))  # a length past the message's end
        return _field(number, 2, _varint(claimed) + body)
    return _field(number, wire)  # a group's start or end, or a wire type that does not exist


@st.composite
def confused(draw: st.DrawFn, path: tuple[FieldDescriptor, ...]) -> bytes:
    """The last field of ``path`` with a confused value, inside valid framing of the fields above it."""
    *outer, field = path
    encoded = b"".join(draw(st.lists(wire_values(field.number, WIRE_TYPES[field.type]), min_size=1, max_size=3)))
    for holder in reversed(outer):
        encoded = _length_delimited(holder.number, encoded)
    return encoded


@pytest.mark.parametrize(("method", "path"), FIELD_PATHS, ids=[path_id(m, p) for m, p in FIELD_PATHS])
@FUZZ
@given(data=st.data())
def test_type_confusion_in_every_field_gets_no_internal_and_no_unknown(
    channel: grpc.Channel, method: str, path: tuple[FieldDescriptor, ...], data: st.DataObject
) -> None:
    payload = data.draw(confused(path))
    if data.draw(st.booleans()):  # merged into a valid request, so the rest of the call goes on
        payload = BASES[method].SerializeToString() + payload
    assert raw_call(channel, method, payload, timeout=3) not in NEVER


@pytest.mark.parametrize("method", list(METHODS), ids=[m.rsplit("/", 1)[1] for m in METHODS])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(payload=st.binary(max_size=400))
def test_random_bytes_get_no_internal_and_no_unknown(channel: grpc.Channel, method: str, payload: bytes) -> None:
    assert raw_call(channel, method, payload, timeout=3) not in NEVER


def test_calls_past_a_full_thread_pool_are_turned_away_by_grpc_and_still_counted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every thread of the pool held: the call cap (1), a call waiting for its place (1, waiting long here),
    # the stream cap (1) and every probe place, each by a call whose client never sends its request. gRPC's
    # own backstop then refuses, and the gate counts it
    # (BoafServer's _concurrency_exceeded reads grpcio internals: this fails if they change).
    monkeypatch.setattr("boaf.service.grpc.interceptors.PLACE_WAIT_S", 30.0)
    server = ready_server(loopback_settings(max_concurrent_rpcs=1, max_streams=1, metrics_enabled=False))
    never = threading.Event()

    def no_request() -> Iterator[bytes]:
        never.wait(30)
        yield b""

    try:
        with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            parked = [channel.stream_unary("/boaf.v1.Boaf/Solve").future(no_request(), timeout=30)]
            parked.append(channel.stream_stream("/grpc.health.v1.Health/Watch")(no_request(), timeout=30))
            parked += [
                channel.stream_unary("/grpc.health.v1.Health/Check").future(no_request(), timeout=30)
                for _ in range(PROBE_CALLS)
            ]
            assert wait_for(lambda: server.admission.calls == 1 and server.admission.streams == 1)
            parked.append(channel.stream_unary("/boaf.v1.Boaf/Solve").future(no_request(), timeout=30))
            assert wait_for(lambda: server.admission._places.waiting == 1)
            time.sleep(0.2)  # the probe places are taken too
            with pytest.raises(grpc.RpcError) as caught:
                channel.unary_unary("/boaf.v1.Boaf/GetServerInfo")(b"", timeout=5)
            assert (caught.value.code(), caught.value.details()) == (
                CODE.RESOURCE_EXHAUSTED,
                "Concurrent RPC limit exceeded!",  # gRPC's words: no handler ran
            )
            assert counted(server, "GetServerInfo", "RESOURCE_EXHAUSTED") == 1
            never.set()
            for call in parked:
                call.cancel()
            assert wait_for(lambda: raw_call(channel, "/boaf.v1.Boaf/GetServerInfo", b"") == CODE.OK)
    finally:
        never.set()
        server.stop(0)
