"""Attacks on a live server: the attack suite by class, and the hostile mix of ``benchmarks/load.py``.

Run as a script, the suite of ``benchmarks/attacks`` (one module a class: connection, HTTP/2 frames,
compression, parser amplification, error paths, control inputs). It starts ``boaf serve`` on free
loopback ports with the default limits and its log in a file (or uses ``--target``), then runs each
class's attacks, varied in sizes, rates and encodings by ``--seed``, while a well-behaved client on
another connection sends a single-state Classify with a 2 s deadline 20 times a second and a health
Check. It prints one markdown table by class: attacks sent, the server's answers by code, the
well-behaved client's failed calls, health failures, idle, peak and settled RSS (settled: after
waiting up to 60 s for RSS at most 1.2x idle; ``--quick`` waits 15 s), server CPU seconds, and the
log's growth and longest new line; then a verdict per class and what each attack saw. It exits 1
when a class failed (``benchmarks/attacks/harness.py`` says when).

    python benchmarks/hostile.py                          # every class at full size (a few minutes)
    python benchmarks/hostile.py --quick --seed 1         # every class, small and short (CI)
    python benchmarks/hostile.py --classes frames,compression --json out/attacks.json

Imported, the hostile mix that ``benchmarks/load.py --hostile`` runs: malformed calls and attacks on
streams, bodies and headers among normal calls, on both edges.

First the normal calls run alone for a baseline. Then, for ``seconds``, all of this runs at once:

- the gRPC mix (issue 12): each client sends, in a seeded random order, normal calls (single-state
  Classify, Solve of a seeded deal), malformed ones (random bytes, invalid UTF-8 in a string field, a
  wrong wire type, a valid message cut short, a 100,000-character cell) and runaway-shaped puzzle
  calls (AnalyzePuzzle of a 52x1 grid with a 2 s limit, samples 4294967295, GeneratePuzzle of 1 card);
- normal calls over HTTP/JSON: single-state Classify and Solve on a keep-alive connection;
- idle streams (issue 21, row 1): health ``Watch`` and reflection streams up to the stream cap, held
  open to the end, then a few past it (RESOURCE_EXHAUSTED expected);
- the largest Classify and Features batches (rows 2 and 9): bursts of ``max_batch_size`` 52-card states
  within ``max_message_bytes``, with a 0.5 s deadline, over gRPC and over HTTP (``Connect-Timeout-Ms: 500``);
- HTTP type confusion (row 3): Infinity, NaN, 1e400 and lone surrogates in numbers and strings of every
  request (400 with a JSON body expected);
- HTTP half bodies (row 4): half a body, then the client closes the connection or its sending side;
- slowloris (row 5): request headers sent a byte a second to the HTTP port and to the metrics port;
- a declared ``Content-Length: 2000000000`` (row 6): a quick 400 and a closed connection expected;
- slow readers of a large HTTP answer (row 1, last point).

Every answer is counted by kind: gRPC codes by name, HTTP statuses by number (an error status whose body
is not Connect's ``{"code", "message"}`` says so), and what became of a connection otherwise. After the
attack, when the server is a local process, /proc gives its CPU seconds in the few seconds after the
attack (should be ~idle), its peak RSS (VmHWM), and its RSS a while after the attack against the idle
RSS after warm-up (issue 21 wants at most 1.5x). A run fails on any INTERNAL or UNKNOWN, HTTP 500 or
501, or 503 or 504 without the JSON error body.

Every client call has a timeout and every socket is closed: a stuck server shows as timeouts, never
as a hung run.

    python benchmarks/load.py --scenarios solve-deal --clients 16 --duration 1 --hostile 60
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import itertools
import json
import multiprocessing
import os
import queue
import socket
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: its own folder is sys.path[0]; the repository's root imports it as benchmarks
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import grpc
import numpy as np
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from boaf.game import card_text, deal, random_states
from boaf.game.cards import CARD_TEXTS
from boaf.v1 import boaf_pb2 as pb

NORMAL_SHARE, MALFORMED_SHARE = 0.6, 0.3  # the rest are runaway-shaped puzzle calls
CALL_TIMEOUT_S = 10.0  # any one call of the mix or of an HTTP client; a stuck server shows as timeouts
SETUP_TIMEOUT_S = 180.0  # client processes starting, and first answers, on a busy machine (kernels compiling)
MIB = 1024 * 1024
# gRPC clients take the largest answers the server may send; the server's limits are what is tested.
CLIENT_OPTIONS = [("grpc.max_receive_message_length", 64 * MIB), ("grpc.max_send_message_length", 64 * MIB)]
Call = tuple[str, bytes, str]  # method, request bytes, kind ("normal", "malformed" or "runaway")

EXTRA_STREAMS = 4  # streams opened past the cap
STREAM_ANSWER_S = 3.0  # an admitted stream answers its first message within this
LARGE_DEADLINE_MS = 500
LARGE_CALLS = 4  # per edge and method in one burst: 16 largest batches at once (issue 21, row 9)
LARGE_BURST_EVERY_S = 15.0
SLOWLORIS_CONNECTIONS = 8  # per port
SLOW_BYTE_EVERY_S = 1.0
OVERSIZE_LENGTH = 2_000_000_000
OVERSIZE_WAIT_S = 5.0
OVERSIZE_EVERY_S = 0.5
HALF_BODY_EVERY_S = 0.25
SLOW_READERS = 2
SLOW_READ_BYTES = 1024  # read a second by a slow reader
SLOW_READ_STATES = 2_000  # 4x4 states in its Features call: cheap to compute, a large answer
ATTACK_SLACK_S = 30.0  # past the end, attacks still running are cancelled
CLASSIFY, FEATURES, SOLVE = "/boaf.v1.Boaf/Classify", "/boaf.v1.Boaf/Features", "/boaf.v1.Boaf/Solve"
SERVER_INFO = "/boaf.v1.Boaf/GetServerInfo"


# ---------------------------------------------------------------- what was seen


@dataclass
class Tally:
    """Outcomes by kind: codes by count, seconds (the latency of OK normal calls; else time to an outcome), notes."""

    codes: dict[str, dict[str, int]] = field(default_factory=dict)
    seconds: dict[str, list[float]] = field(default_factory=dict)
    notes: dict[str, set[str]] = field(default_factory=dict)

    def count(self, kind: str, code: str, seconds: float | None = None) -> None:
        by_code = self.codes.setdefault(kind, {})
        by_code[code] = by_code.get(code, 0) + 1
        if seconds is not None:
            self.seconds.setdefault(kind, []).append(seconds)

    def note(self, kind: str, text: str) -> None:
        self.notes.setdefault(kind, set()).add(text)

    def merge(self, other: Tally) -> None:
        for kind, by_code in other.codes.items():
            mine = self.codes.setdefault(kind, {})
            for code, n in by_code.items():
                mine[code] = mine.get(code, 0) + n
        for kind, values in other.seconds.items():
            self.seconds.setdefault(kind, []).extend(values)
        for kind, texts in other.notes.items():
            self.notes.setdefault(kind, set()).update(texts)

    def total(self, code: str) -> int:
        return sum(by_code.get(code, 0) for by_code in self.codes.values())


@dataclass(frozen=True)
class Target:
    """The server: its gRPC address, HTTP and metrics ports, pid when it is a local process, and stream cap."""

    grpc: str  # host:port
    http_port: int
    metrics_port: int
    pid: int | None = None
    max_streams: int = 64
    log_path: Path | None = None  # where a local server's stdout and stderr go

    @property
    def host(self) -> str:
        return self.grpc.rsplit(":", 1)[0].strip("[]")


# ---------------------------------------------------------------- the gRPC mix (issue 12)


def _state(cells: list[str], rows: int = 4, cols: int = 4) -> pb.State:
    return pb.State(rows=rows, cols=cols, cells=cells)


def deal_cells(seed: int, rows: int = 4, cols: int = 4) -> list[str]:
    """The cells of deal ``seed`` as a request writes them: card text, "" for an empty cell."""
    return ["" if c is None else card_text(c) for c in deal(seed, rows=rows, cols=cols).cells]


def _malformed(rng: np.random.Generator) -> Call:
    method = str(rng.choice(["Classify", "Solve", "Features", "AnalyzePuzzle", "GeneratePuzzle"]))
    good = pb.SolveRequest(state=_state(deal_cells(int(rng.integers(1, 10**6))))).SerializeToString()
    kind = int(rng.integers(5))
    if kind == 0:  # random bytes
        payload = bytes(rng.integers(0, 256, int(rng.integers(1, 400)), dtype=np.uint8))
    elif kind == 1:  # invalid UTF-8 in a cell: field 1 (state) holding field 3 (cells)
        payload = b"\x0a\x06\x1a\x04\xff\xfe\xc3\x28"
    elif kind == 2:  # a wrong wire type: field 1 as a 64-bit fixed value, or a group that never ends
        payload = bytes([0x09]) + bytes(8) if rng.random() < 0.5 else b"\x0b"
    elif kind == 3:  # a valid message cut short
        payload = good[: int(rng.integers(1, len(good)))]
    else:  # a 100,000-character cell: INVALID_ARGUMENT quoting 40 of them
        payload = pb.SolveRequest(state=_state(["X" * 100_000, *deal_cells(1)[1:]])).SerializeToString()
    return f"/boaf.v1.Boaf/{method}", payload, "malformed"


def _runaway(rng: np.random.Generator) -> Call:
    kind = int(rng.integers(3))
    if kind == 0:
        request = pb.AnalyzePuzzleRequest(state=_state(deal_cells(1, 52, 1), 52, 1), time_limit_ms=2000)
        return "/boaf.v1.Boaf/AnalyzePuzzle", request.SerializeToString(), "runaway"
    if kind == 1:
        request = pb.AnalyzePuzzleRequest(state=_state(deal_cells(1)), samples=4_294_967_295)
        return "/boaf.v1.Boaf/AnalyzePuzzle", request.SerializeToString(), "runaway"
    return "/boaf.v1.Boaf/GeneratePuzzle", pb.GeneratePuzzleRequest(cards=1).SerializeToString(), "runaway"


def _normal(rng: np.random.Generator, seeds: Callable[[], int]) -> Call:
    cells = deal_cells(seeds())
    if rng.random() < 0.5:
        return CLASSIFY, pb.ClassifyRequest(states=[_state(cells)]).SerializeToString(), "normal"
    return SOLVE, pb.SolveRequest(state=_state(cells)).SerializeToString(), "normal"


def next_call(rng: np.random.Generator, seeds: Callable[[], int]) -> Call:
    """One call of the mix."""
    draw = rng.random()
    if draw < NORMAL_SHARE:
        return _normal(rng, seeds)
    if draw < NORMAL_SHARE + MALFORMED_SHARE:
        return _malformed(rng)
    return _runaway(rng)


def _http_normal(rng: np.random.Generator, seeds: Callable[[], int]) -> tuple[str, bytes]:
    state = {"rows": 4, "cols": 4, "cells": deal_cells(seeds())}
    if rng.random() < 0.5:
        return CLASSIFY, json.dumps({"states": [state]}).encode()
    return SOLVE, json.dumps({"state": state}).encode()


async def _grpc_client(channel: grpc.aio.Channel, worker: int, stop_at: float, out: Tally, normal_only: bool) -> None:
    rng = np.random.default_rng(worker)
    seeds = functools.partial(next, itertools.count(1 + 1_000 * worker))
    while time.perf_counter() < stop_at:
        method, payload, kind = _normal(rng, seeds) if normal_only else next_call(rng, seeds)
        started = time.perf_counter()
        try:
            await channel.unary_unary(method)(payload, timeout=CALL_TIMEOUT_S)
            code = "OK"
        except grpc.aio.AioRpcError as exc:
            code = exc.code().name
        latency = time.perf_counter() - started if kind == "normal" and code == "OK" else None
        out.count(f"grpc {kind}", code, latency)


async def _http_client(target: Target, worker: int, stop_at: float, out: Tally) -> None:
    rng = np.random.default_rng(worker)
    seeds = functools.partial(next, itertools.count(1 + 1_000 * worker))
    connection = HttpConnection(target.host, target.http_port)
    try:
        while time.perf_counter() < stop_at:
            path, body = _http_normal(rng, seeds)
            started = time.perf_counter()
            code = await http_code(connection, path, body)
            out.count("http normal", code, time.perf_counter() - started if code == "200" else None)
    finally:
        await connection.close()


async def _phase(
    channel: grpc.aio.Channel, target: Target, clients: int, seconds: float, worker: int, *, normal_only: bool
) -> Tally:
    out = Tally()
    stop_at = time.perf_counter() + seconds
    grpc_clients = [_grpc_client(channel, worker * 1000 + i, stop_at, out, normal_only) for i in range(clients)]
    await asyncio.gather(*grpc_clients, _http_client(target, worker, stop_at, out))
    return out


async def _client_process(
    target: Target, clients: int, baseline_s: float, seconds: float, worker: int, barrier: Barrier
) -> tuple[Tally, Tally]:
    loop = asyncio.get_running_loop()

    async def all_here(timeout: float) -> None:
        await loop.run_in_executor(None, barrier.wait, timeout)

    _warm_up(worker)
    async with grpc.aio.insecure_channel(target.grpc, options=CLIENT_OPTIONS) as channel:
        await channel.unary_unary(SERVER_INFO)(b"", timeout=SETUP_TIMEOUT_S)  # connected before timing
        await all_here(SETUP_TIMEOUT_S)
        baseline = await _phase(channel, target, clients, baseline_s, worker, normal_only=True)
        await all_here(SETUP_TIMEOUT_S)  # the baseline is over: the idle RSS is read
        await all_here(SETUP_TIMEOUT_S)  # the attack starts
        attack = await _phase(channel, target, clients, seconds, worker + 100, normal_only=False)
    return baseline, attack


def _warm_up(worker: int) -> None:
    # The first deal and the first of each call build lazily (imports, caches): not on the clock.
    rng = np.random.default_rng(worker)
    seeds = functools.partial(next, itertools.count(1))
    for _ in range(20):
        next_call(rng, seeds)
    _http_normal(rng, seeds)


def _client_process_main(
    target: Target, clients: int, baseline_s: float, seconds: float, worker: int, barrier: Barrier, results: Any
) -> None:
    try:
        results.put(asyncio.run(_client_process(target, clients, baseline_s, seconds, worker, barrier)))
    except BaseException:
        barrier.abort()  # the others stop waiting at once
        results.put(None)
        raise


# ---------------------------------------------------------------- HTTP/1.1 on raw sockets


@dataclass(frozen=True)
class HttpAnswer:
    status: int
    body: bytes
    closed: bool  # the server said it closes the connection (or did)


def request_head(method: str, path: str, host: str, port: int, length: int | None, headers: dict[str, str]) -> bytes:
    """An HTTP/1.1 request's head; with ``length``, a JSON body of that many bytes follows."""
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}:{port}"]
    if length is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {length}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def read_answer(reader: asyncio.StreamReader) -> HttpAnswer:
    """One HTTP answer (Content-Length, chunked, or up to the close); the caller bounds the time."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.LimitOverrunError as exc:
        raise ValueError("an answer head past the reader's limit") from exc
    status_line, *lines = head.decode("latin-1").split("\r\n")
    status = int(status_line.split(" ", 2)[1])
    headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    closed = headers.get("connection", "").lower() == "close"
    if "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        body = await _chunked_body(reader)
    else:
        body, closed = await reader.read(), True
    return HttpAnswer(status, body, closed)


async def _chunked_body(reader: asyncio.StreamReader) -> bytes:
    body = bytearray()
    while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
        body += await reader.readexactly(size)
        await reader.readexactly(2)
    await reader.readuntil(b"\r\n")  # no trailers
    return bytes(body)


def answer_code(answer: HttpAnswer) -> str:
    """The status as a code; an error status without Connect's ``{"code", "message"}`` body says so."""
    if answer.status < 400 or _is_error_body(answer.body):
        return str(answer.status)
    return f"{answer.status} (no JSON error body)"


def _is_error_body(body: bytes) -> bool:
    try:
        value = json.loads(body)
    except ValueError:
        return False
    return isinstance(value, dict) and isinstance(value.get("code"), str) and isinstance(value.get("message"), str)


async def close_writer(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(OSError, TimeoutError):
        await asyncio.wait_for(writer.wait_closed(), 1.0)


async def open_stream(host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.wait_for(asyncio.open_connection(host, port), CALL_TIMEOUT_S)


class HttpConnection:
    """One HTTP/1.1 connection, kept alive between calls and reopened after the server closes it."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def post(self, path: str, body: bytes, headers: dict[str, str], timeout: float) -> HttpAnswer:
        """POST ``body`` to ``path`` and read the answer, all within ``timeout`` seconds (else TimeoutError)."""
        try:
            return await asyncio.wait_for(self._exchange(path, body, headers), timeout)
        except BaseException:
            await self.close()
            raise

    async def _exchange(self, path: str, body: bytes, headers: dict[str, str]) -> HttpAnswer:
        reused = self._streams is not None
        try:
            return await self._send(path, body, headers)
        except (EOFError, ConnectionError):
            if not reused:
                raise
        # The server had closed the kept-alive connection (after a 500, say): once more on a new one, as
        # clients do, so that the code counted is this request's.
        await self.close()
        return await self._send(path, body, headers)

    async def _send(self, path: str, body: bytes, headers: dict[str, str]) -> HttpAnswer:
        if self._streams is None:
            self._streams = await asyncio.open_connection(self.host, self.port)
        reader, writer = self._streams
        writer.write(request_head("POST", path, self.host, self.port, len(body), headers) + body)
        await writer.drain()
        answer = await read_answer(reader)
        if answer.closed:
            await self.close()
        return answer

    async def close(self) -> None:
        if self._streams is not None:
            writer, self._streams = self._streams[1], None
            await close_writer(writer)


async def http_code(connection: HttpConnection, path: str, body: bytes, headers: dict[str, str] | None = None) -> str:
    """The code of one POST: its status, or what became of the connection."""
    try:
        return answer_code(await connection.post(path, body, headers or {}, CALL_TIMEOUT_S))
    except TimeoutError:
        return f"no answer in {CALL_TIMEOUT_S:g} s"
    except ConnectionRefusedError:
        return "refused"
    except (EOFError, OSError):
        return "closed without an answer"
    except ValueError:
        return "garbled answer"


# ---------------------------------------------------------------- the attacks of issue 21


@dataclass(frozen=True)
class Payloads:
    """What the attacks send, built before the clock starts."""

    max_streams: int
    largest_grpc: bytes  # a ClassifyRequest (the same bytes are a FeaturesRequest)
    largest_grpc_states: int
    largest_http: bytes
    largest_http_states: int
    confusion: list[tuple[str, str, bytes]]  # label, path, body
    classify_body: bytes  # a mid-size body to send half of
    slow_read_body: bytes  # Features of many small states: a large answer


def prepare(target: Target) -> Payloads:
    """The attacks' payloads, sized by the server's limits (``GetServerInfo``)."""
    with grpc.insecure_channel(target.grpc) as channel:
        info = pb.ServerInfo.FromString(channel.unary_unary(SERVER_INFO)(b"", timeout=SETUP_TIMEOUT_S))
    limits = info.limits
    # A server whose GetServerInfo lists the stream cap says it; else the caller's (the settings').
    max_streams = int(getattr(limits, "max_streams", 0) or target.max_streams)
    batch = _largest_batch(max(2, limits.max_batch_size))
    grpc_states = _fit(limits.max_batch_size, limits.max_message_bytes, lambda n: _proto_batch(batch[:n]))
    http_states = _fit(limits.max_batch_size, limits.max_message_bytes, lambda n: _json_batch(batch[:n]))
    small = [s.cells for s in random_states(7, min(SLOW_READ_STATES, limits.max_batch_size))]
    small_json = _json_batch([["" if c is None else card_text(c) for c in cells] for cells in small], rows=4, cols=4)
    return Payloads(
        max_streams=max_streams,
        largest_grpc=_proto_batch(batch[:grpc_states]),
        largest_grpc_states=grpc_states,
        largest_http=_json_batch(batch[:http_states]),
        largest_http_states=http_states,
        confusion=type_confusion_bodies(),
        classify_body=_json_batch(batch[:100]),
        slow_read_body=small_json,
    )


def _largest_batch(size: int) -> list[list[str]]:
    # Shuffled decks as 4x13 grids: the largest states there are.
    order = np.random.default_rng(52).permuted(np.tile(np.arange(52), (size, 1)), axis=1)
    texts: list[list[str]] = np.array(CARD_TEXTS)[order].tolist()
    return texts


def _proto_batch(cells: list[list[str]]) -> bytes:
    return bytes(pb.ClassifyRequest(states=[_state(c, 4, 13) for c in cells]).SerializeToString())


def _json_batch(cells: list[list[str]], rows: int = 4, cols: int = 13) -> bytes:
    states = [{"rows": rows, "cols": cols, "cells": c} for c in cells]
    return json.dumps({"states": states}, separators=(",", ":")).encode()


def _fit(most: int, limit: int, encode: Callable[[int], bytes]) -> int:
    # Every state encodes to the same size, so the fit is arithmetic on a one-state message.
    per_state = len(encode(2)) - len(encode(1))
    overhead = len(encode(1)) - per_state
    return max(1, min(most, (limit - overhead) // per_state))


def type_confusion_bodies() -> list[tuple[str, str, bytes]]:
    """(label, path, body) for every JSON type confusion of issue 21, row 3: each should get 400."""
    cells = deal_cells(7)
    state = json.dumps({"rows": 4, "cols": 4, "cells": cells})

    def with_cell(text: str) -> str:
        return json.dumps({"rows": 4, "cols": 4, "cells": cells[:-1]})[:-2] + f", {text}]}}"

    boaf, game = "/boaf.v1.Boaf/", "/boaf.v1.Game/"
    surrogate, low_surrogate = r'"\ud800"', r'"x\udfff"'
    bodies = {
        "Solve algorithm Infinity": (boaf + "Solve", f'{{"state": {state}, "algorithm": Infinity}}'),
        "Solve algorithm -Infinity": (boaf + "Solve", f'{{"state": {state}, "algorithm": -Infinity}}'),
        "Solve algorithm 1e400": (boaf + "Solve", f'{{"state": {state}, "algorithm": 1e400}}'),
        "Solve algorithm NaN": (boaf + "Solve", f'{{"state": {state}, "algorithm": NaN}}'),
        "Solve maxNodes 1e400": (boaf + "Solve", f'{{"state": {state}, "maxNodes": 1e400}}'),
        "Solve timeLimitMs NaN": (boaf + "Solve", f'{{"state": {state}, "timeLimitMs": NaN}}'),
        "Solve rows Infinity": (boaf + "Solve", '{"state": {"rows": Infinity, "cols": 4}}'),
        "Solve cell surrogate": (boaf + "Solve", f'{{"state": {with_cell(surrogate)}}}'),
        "Play moves [surrogate]": (game + "Play", f'{{"state": {state}, "moves": [{surrogate}]}}'),
        "Play moves surrogate": (game + "Play", f'{{"state": {state}, "moves": {surrogate}}}'),
        "Play moves [NaN]": (game + "Play", f'{{"state": {state}, "moves": [NaN]}}'),
        "Play cell surrogate": (game + "Play", f'{{"state": {with_cell(surrogate)}}}'),
        "Deal seed 1e400": (game + "Deal", '{"seed": 1e400}'),
        "Deal seed NaN": (game + "Deal", '{"seed": NaN}'),
        "Classify cell surrogate": (boaf + "Classify", f'{{"states": [{with_cell(surrogate)}]}}'),
        "Classify cell low surrogate": (boaf + "Classify", f'{{"states": [{with_cell(low_surrogate)}]}}'),
        "Classify rows 1e400": (boaf + "Classify", '{"states": [{"rows": 1e400, "cols": 4}]}'),
        "Classify states [NaN]": (boaf + "Classify", '{"states": [NaN]}'),
        "Features cell surrogate": (boaf + "Features", f'{{"states": [{with_cell(surrogate)}]}}'),
        "Features cols -Infinity": (boaf + "Features", '{"states": [{"rows": 4, "cols": -Infinity}]}'),
        "AnalyzePuzzle cell surrogate": (boaf + "AnalyzePuzzle", f'{{"state": {with_cell(surrogate)}}}'),
        "AnalyzePuzzle samples 1e400": (boaf + "AnalyzePuzzle", f'{{"state": {state}, "samples": 1e400}}'),
        "AnalyzePuzzle timeLimitMs Infinity": (
            boaf + "AnalyzePuzzle",
            f'{{"state": {state}, "timeLimitMs": Infinity}}',
        ),
        "AnalyzePuzzle seed NaN": (boaf + "AnalyzePuzzle", f'{{"state": {state}, "seed": NaN}}'),
        "GeneratePuzzle cards Infinity": (boaf + "GeneratePuzzle", '{"cards": Infinity}'),
        "GeneratePuzzle energy surrogate": (boaf + "GeneratePuzzle", f'{{"cards": 8, "energy": {surrogate}}}'),
    }
    return [(label, path, body.encode()) for label, (path, body) in bodies.items()]


async def run_attacks(target: Target, payloads: Payloads, seconds: float) -> Tally:
    """Every attack of issue 21 at once for ``seconds``; what each saw."""
    out = Tally()
    stop_at = time.perf_counter() + seconds
    host = target.host
    attacks: list[Awaitable[None]] = [
        hold_streams(target, payloads.max_streams, stop_at, out),
        largest_batches(target, payloads, stop_at, out),
        type_confusion(target, payloads.confusion, stop_at, out),
        half_bodies(target, payloads.classify_body, stop_at, out),
        oversize_lengths(target, stop_at, out),
        *(slowloris(host, target.http_port, "http port", stop_at, out) for _ in range(SLOWLORIS_CONNECTIONS)),
        *(slowloris(host, target.metrics_port, "metrics port", stop_at, out) for _ in range(SLOWLORIS_CONNECTIONS)),
        *(slow_reader(target, payloads.slow_read_body, stop_at, out) for _ in range(SLOW_READERS)),
    ]
    try:
        await asyncio.wait_for(asyncio.gather(*(_guarded(attack, out) for attack in attacks)), seconds + ATTACK_SLACK_S)
    except TimeoutError:
        out.count("harness", f"attacks cancelled {ATTACK_SLACK_S:g} s past their end")
    return out


async def _guarded(attack: Awaitable[None], out: Tally) -> None:
    try:
        await attack
    except Exception as exc:  # one attack's surprise must not end the others; it is reported (a warning)
        out.count("harness", f"an attack raised {type(exc).__name__}: {str(exc)[:80]}")


async def _sleep_until(at: float) -> None:
    await asyncio.sleep(max(0.0, at - time.perf_counter()))


# Row 1: idle streams up to the cap, and past it.


@dataclass
class HeldStream:
    kind: str
    code: str
    call: Any  # grpc.aio call
    first: asyncio.Future[Any]


async def hold_streams(target: Target, max_streams: int, stop_at: float, out: Tally) -> None:
    """Watch and reflection streams in turn up to ``max_streams``, then ``EXTRA_STREAMS`` more; held to the end."""
    options = [*CLIENT_OPTIONS, ("grpc.use_local_subchannel_pool", 1)]  # a connection of their own
    held: list[HeldStream] = []
    async with grpc.aio.insecure_channel(target.grpc, options=options) as channel:
        try:
            for first, count, suffix in ((0, max_streams, ""), (max_streams, EXTRA_STREAMS, " past the cap")):
                opened = await asyncio.gather(*(_open_stream(channel, i, stop_at) for i in range(first, first + count)))
                for stream in opened:
                    out.count(stream.kind + suffix, stream.code)
                held += opened
            out.count("grpc health Check while streams are held", *await _health_check(channel))
            await _sleep_until(stop_at)
        finally:
            for stream in held:
                stream.call.cancel()
            if held:
                await asyncio.wait([s.first for s in held], timeout=STREAM_ANSWER_S)
            for stream in held:
                _settle(stream.first)


async def _open_stream(channel: grpc.aio.Channel, index: int, stop_at: float) -> HeldStream:
    timeout = max(0.0, stop_at - time.perf_counter()) + STREAM_ANSWER_S + 5.0
    if index % 2 == 0:
        call = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service=""), timeout=timeout)
        kind, first = "grpc health Watch stream", call.read()
    else:
        call = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo(timeout=timeout)
        kind, first = "grpc reflection stream", _list_services(call)
    task = asyncio.ensure_future(first)
    done, _ = await asyncio.wait({task}, timeout=STREAM_ANSWER_S)
    if not done:
        return HeldStream(kind, f"no first answer in {STREAM_ANSWER_S:g} s", call, task)
    try:
        reply = task.result()
    except grpc.aio.AioRpcError as exc:
        return HeldStream(kind, exc.code().name, call, task)
    except Exception as exc:  # the client library's own complaint: reported, not raised
        return HeldStream(kind, f"client error {type(exc).__name__}", call, task)
    if reply is grpc.aio.EOF:
        return HeldStream(kind, f"ended at once: {(await call.code()).name}", call, task)
    return HeldStream(kind, "open", call, task)


async def _list_services(call: Any) -> Any:
    # One question, then the stream stays open and idle (half-open: the client never closes its side).
    await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
    return await call.read()


async def _health_check(channel: grpc.aio.Channel) -> tuple[str, float]:
    started = time.perf_counter()
    try:
        request = health_pb2.HealthCheckRequest(service="boaf.v1.Boaf")
        await health_pb2_grpc.HealthStub(channel).Check(request, timeout=STREAM_ANSWER_S)
        code = "OK"
    except grpc.aio.AioRpcError as exc:
        code = exc.code().name
    return code, time.perf_counter() - started


def _settle(task: asyncio.Future[Any]) -> None:
    # A finished task's error is read here, so none is reported as never retrieved.
    if task.done() and not task.cancelled():
        task.exception()
    else:
        task.cancel()


# Rows 2 and 9: the largest batches with a 0.5 s deadline, in bursts, on both edges.


async def largest_batches(target: Target, payloads: Payloads, stop_at: float, out: Tally) -> None:
    """A burst of ``LARGE_CALLS`` largest Classify and Features calls per edge every ``LARGE_BURST_EVERY_S``."""
    async with grpc.aio.insecure_channel(target.grpc, options=CLIENT_OPTIONS) as channel:
        while time.perf_counter() < stop_at:
            burst_at = time.perf_counter()
            calls = []
            for path in (CLASSIFY, FEATURES):
                for _ in range(LARGE_CALLS):
                    calls.append(_largest_grpc(channel, path, payloads, out))
                    calls.append(_largest_http(target, path, payloads, out))
            await asyncio.gather(*calls)
            await _sleep_until(min(stop_at, burst_at + LARGE_BURST_EVERY_S))


async def _largest_grpc(channel: grpc.aio.Channel, path: str, payloads: Payloads, out: Tally) -> None:
    started = time.perf_counter()
    try:
        await channel.unary_unary(path)(payloads.largest_grpc, timeout=LARGE_DEADLINE_MS / 1000)
        code = "OK"
    except grpc.aio.AioRpcError as exc:
        code = exc.code().name
    kind = f"grpc largest {path.rsplit('/', 1)[1]} ({payloads.largest_grpc_states:,} states, 0.5 s)"
    out.count(kind, code, time.perf_counter() - started)


async def _largest_http(target: Target, path: str, payloads: Payloads, out: Tally) -> None:
    connection = HttpConnection(target.host, target.http_port)
    started = time.perf_counter()
    try:
        code = await http_code(connection, path, payloads.largest_http, {"Connect-Timeout-Ms": str(LARGE_DEADLINE_MS)})
    finally:
        await connection.close()
    kind = f"http largest {path.rsplit('/', 1)[1]} ({payloads.largest_http_states:,} states, 0.5 s)"
    out.count(kind, code, time.perf_counter() - started)


# Row 3: JSON type confusion.


async def type_confusion(target: Target, bodies: list[tuple[str, str, bytes]], stop_at: float, out: Tally) -> None:
    """Every body of ``type_confusion_bodies`` in turn, on one keep-alive connection, to the end."""
    kind = "http type confusion"
    connection = HttpConnection(target.host, target.http_port)
    try:
        for label, path, body in itertools.cycle(bodies):
            if time.perf_counter() >= stop_at:
                break
            started = time.perf_counter()
            code = await http_code(connection, path, body)
            out.count(kind, code, time.perf_counter() - started)
            if code != "400":
                out.note(kind, f"{label}: {code}")
    finally:
        await connection.close()


# Row 4: half a body, then the client goes.


async def half_bodies(target: Target, body: bytes, stop_at: float, out: Tally) -> None:
    """Half of ``body``, then a close (nothing to read) or a shut sending side (the answer is read)."""
    for attempt in itertools.count():
        if time.perf_counter() >= stop_at:
            break
        started = time.perf_counter()
        shut = attempt % 2 == 1
        code = await _half_body(target, body, shut)
        kind = "http half body, then write side shut" if shut else "http half body, then close"
        out.count(kind, code, time.perf_counter() - started)
        await asyncio.sleep(HALF_BODY_EVERY_S)


async def _half_body(target: Target, body: bytes, shut: bool) -> str:
    try:
        reader, writer = await open_stream(target.host, target.http_port)
    except OSError:  # TimeoutError included
        return "could not connect"
    try:
        writer.write(request_head("POST", CLASSIFY, target.host, target.http_port, len(body), {}))
        writer.write(body[: len(body) // 2])
        await asyncio.wait_for(writer.drain(), CALL_TIMEOUT_S)
        if not shut:
            return "closed by the client"
        writer.write_eof()
        return answer_code(await asyncio.wait_for(read_answer(reader), CALL_TIMEOUT_S))
    except TimeoutError:
        return f"no answer in {CALL_TIMEOUT_S:g} s"
    except (EOFError, OSError):
        return "closed without an answer"
    except ValueError:
        return "garbled answer"
    finally:
        await close_writer(writer)


# Row 5: slowloris.


async def slowloris(host: str, port: int, name: str, stop_at: float, out: Tally) -> None:
    """One connection at a time sending headers a byte a second; a new one when the server ends it."""
    while time.perf_counter() < stop_at:
        started = time.perf_counter()
        code = await _slow_headers(host, port, stop_at)
        out.count(f"slowloris, {name}", code, time.perf_counter() - started)
        if code in ("could not connect", "refused"):
            await _sleep_until(min(stop_at, started + SLOW_BYTE_EVERY_S))


async def _slow_headers(host: str, port: int, stop_at: float) -> str:
    try:
        reader, writer = await open_stream(host, port)
    except ConnectionRefusedError:
        return "refused"
    except OSError:
        return "could not connect"
    answer = asyncio.ensure_future(read_answer(reader))
    head = f"GET /metrics HTTP/1.1\r\nHost: {host}:{port}\r\nX-Slow: ".encode()
    try:
        for byte in itertools.chain(head, itertools.repeat(ord("a"))):
            if time.perf_counter() >= stop_at:
                return "open at the end"
            writer.write(bytes([byte]))
            await asyncio.wait_for(writer.drain(), CALL_TIMEOUT_S)
            done, _ = await asyncio.wait({answer}, timeout=min(SLOW_BYTE_EVERY_S, stop_at - time.perf_counter()))
            if done:
                return _answered(answer)
        raise AssertionError("unreachable: the header never ends")
    except TimeoutError:
        return "sending blocked"
    except OSError:
        return "reset by the server"
    finally:
        _settle(answer)
        await close_writer(writer)


def _answered(answer: asyncio.Future[HttpAnswer]) -> str:
    try:
        return answer_code(answer.result())
    except EOFError:
        return "closed by the server"
    except OSError:
        return "reset by the server"
    except ValueError:
        return "garbled answer"


# Row 6: a declared 2 GB body.


async def oversize_lengths(target: Target, stop_at: float, out: Tally) -> None:
    """Requests declaring a 2,000,000,000-byte body, sending 64 KiB of it, every ``OVERSIZE_EVERY_S``."""
    while time.perf_counter() < stop_at:
        started = time.perf_counter()
        code = await _oversize(target)
        out.count(f"http Content-Length {OVERSIZE_LENGTH:,}", code, time.perf_counter() - started)
        await asyncio.sleep(OVERSIZE_EVERY_S)


async def _oversize(target: Target) -> str:
    try:
        reader, writer = await open_stream(target.host, target.http_port)
    except OSError:
        return "could not connect"
    try:
        writer.write(request_head("POST", CLASSIFY, target.host, target.http_port, OVERSIZE_LENGTH, {}))
        writer.write(b'{"states": [' + b" " * 65536)
        await asyncio.wait_for(writer.drain(), OVERSIZE_WAIT_S)
        answer = await asyncio.wait_for(read_answer(reader), OVERSIZE_WAIT_S)
        closed = answer.closed or await _closed_by_server(reader)
        return f"{answer_code(answer)}, {'closed' if closed else 'left open'}"
    except TimeoutError:
        return f"no answer in {OVERSIZE_WAIT_S:g} s"
    except (EOFError, OSError):
        return "closed without an answer"
    except ValueError:
        return "garbled answer"
    finally:
        await close_writer(writer)


async def _closed_by_server(reader: asyncio.StreamReader) -> bool:
    try:
        return await asyncio.wait_for(reader.read(1), 1.0) == b""
    except TimeoutError:
        return False
    except OSError:
        return True


# Row 1, last point: a slow reader of a large answer.


async def slow_reader(target: Target, body: bytes, stop_at: float, out: Tally) -> None:
    """Features of many states, its answer read ``SLOW_READ_BYTES`` a second through a small receive buffer."""
    kind = "http slow reader of a large answer"
    started = time.perf_counter()
    code, received = await _read_slowly(target, body, stop_at)
    out.count(kind, code, time.perf_counter() - started)
    out.note(kind, f"{code}: {received:,} bytes read")


async def _read_slowly(target: Target, body: bytes, stop_at: float) -> tuple[str, int]:
    sock = socket.socket(socket.AF_INET6 if ":" in target.host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting: the window stays small
    sock.setblocking(False)
    try:
        await asyncio.wait_for(asyncio.get_running_loop().sock_connect(sock, (target.host, target.http_port)), 5.0)
        reader, writer = await asyncio.open_connection(sock=sock, limit=SLOW_READ_BYTES)
    except OSError:
        sock.close()
        return "could not connect", 0
    status, received = "no answer", 0
    try:
        writer.write(request_head("POST", FEATURES, target.host, target.http_port, len(body), {}) + body)
        await asyncio.wait_for(writer.drain(), CALL_TIMEOUT_S)
        while (left := stop_at - time.perf_counter()) > 0:
            with contextlib.suppress(TimeoutError):
                chunk = await asyncio.wait_for(reader.read(SLOW_READ_BYTES), min(left, SLOW_BYTE_EVERY_S))
                if not chunk:
                    return f"{status}, closed by the server", received
                if not received:
                    status = chunk.split(b" ", 2)[1].decode("latin-1", "replace") if b" " in chunk else "garbled"
                received += len(chunk)
                await _sleep_until(min(stop_at, time.perf_counter() + SLOW_BYTE_EVERY_S))
        return f"{status}, open at the end", received
    except TimeoutError:
        return "sending blocked", received
    except OSError:
        return f"{status}, reset by the server", received
    finally:
        await close_writer(writer)


# ---------------------------------------------------------------- the server, from /proc


def _status_mb(pid: int | None, name: str) -> float | None:
    if pid is None:
        return None
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith(name + ":"):
            return int(line.split()[1]) / 1024
    return None


def rss_mb(pid: int | None) -> float | None:
    """``VmRSS`` (resident memory now) of ``pid`` in MiB, or None."""
    return _status_mb(pid, "VmRSS")


def peak_rss_mb(pid: int | None) -> float | None:
    """``VmHWM`` (peak resident memory) of ``pid`` in MiB, or None."""
    return _status_mb(pid, "VmHWM")


def cpu_seconds(pid: int | None) -> float | None:
    """User plus system CPU seconds ``pid`` has used (all its threads), or None."""
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime: fields 14 and 15


@dataclass(frozen=True)
class ServerFigures:
    """The server around the attack, from /proc (None when it is not a local process)."""

    idle_rss_mb: float | None  # after the baseline
    peak_rss_mb: float | None
    after_rss_mb: float | None  # rss_wait_s after the attack
    rss_wait_s: float
    cpu_after_s: float | None  # in cpu_window_s right after the attack
    cpu_window_s: float
    probes_after: list[tuple[str, str, float]]  # (what, code, seconds) once the wait is over
    log_errors: int | None  # ERROR and CRITICAL lines of the server's log over the whole run
    log_not_json: int | None  # lines of the server's log that are not JSON (gRPC core's, tracebacks)


def log_counts(path: Path | None) -> tuple[int | None, int | None]:
    """(ERROR or CRITICAL lines, lines not JSON) of a server's log; the CLI's own ``boaf:`` lines aside."""
    if path is None:
        return None, None
    errors = not_json = 0
    with path.open(encoding="utf-8", errors="replace") as log:
        for line in log:
            try:
                record = json.loads(line)
            except ValueError:
                not_json += bool(line.strip()) and not line.startswith("boaf: ")
                continue
            errors += isinstance(record, dict) and record.get("level") in ("ERROR", "CRITICAL")
    return errors, not_json


def _probe_after(target: Target) -> list[tuple[str, str, float]]:
    async def probes() -> list[tuple[str, str, float]]:
        async with grpc.aio.insecure_channel(target.grpc) as channel:
            health = ("gRPC health Check", *await _health_check(channel))
        connection = HttpConnection(target.host, target.http_port)
        started = time.perf_counter()
        try:
            answer = await connection.post("/boaf.v1.Boaf/GetServerInfo", b"{}", {}, STREAM_ANSWER_S)
            code = answer_code(answer)
        except (TimeoutError, EOFError, OSError, ValueError) as exc:
            code = type(exc).__name__
        finally:
            await connection.close()
        return [health, ("HTTP GetServerInfo", code, time.perf_counter() - started)]

    return asyncio.run(probes())


# ---------------------------------------------------------------- the run


@dataclass
class HostileOutcome:
    """What a hostile run saw: the baseline (normal calls alone), the attack, and the server's figures."""

    clients: int
    seconds: float
    baseline_s: float
    baseline: Tally
    attack: Tally
    server: ServerFigures

    def failures(self) -> dict[str, int]:
        """``"kind: code"`` -> count for every INTERNAL, UNKNOWN, HTTP 500/501, or 503/504 without a JSON body."""
        bad: dict[str, int] = {}
        for tally in (self.baseline, self.attack):
            for kind, by_code in tally.codes.items():
                for code, n in by_code.items():
                    if is_failure(code):
                        bad[f"{kind}: {code}"] = bad.get(f"{kind}: {code}", 0) + n
        return bad

    def warnings(self) -> list[str]:
        """What a healthy server never shows, beyond ``failures``: no normal call answered, no answer after the wait."""
        found = [f"the harness: {code}" for code in self.attack.codes.get("harness", {})]
        for edge, ok in (("grpc", "OK"), ("http", "200")):
            by_code = self.attack.codes.get(f"{edge} normal", {})
            if by_code and not by_code.get(ok):
                found.append(f"no normal {edge} call was answered {ok} during the attack")
        for what, code, _ in self.server.probes_after:
            if code not in ("OK", "200"):
                found.append(f"{what} got {code} {self.server.rss_wait_s:g} s after the attack")
        return found


def is_failure(code: str) -> bool:
    """INTERNAL, UNKNOWN, HTTP 500 or 501, or 503/504 without Connect's JSON error body."""
    if code in ("INTERNAL", "UNKNOWN"):
        return True
    status = code.split(" ", 1)[0].rstrip(",")
    return status in ("500", "501") or (status in ("503", "504") and "no JSON" in code)


def run_hostile(
    target: Target,
    clients: int,
    seconds: float,
    processes: int,
    *,
    baseline_s: float,
    rss_wait_s: float = 60.0,
    cpu_window_s: float = 5.0,
) -> HostileOutcome:
    """Normal calls alone for ``baseline_s``, then the hostile mix and the attacks for ``seconds``; then /proc.

    ``clients`` gRPC callers of the mix are spread over ``processes`` client processes (each with one
    HTTP/JSON caller of normal calls too); the attacks run in this process.
    """
    payloads = prepare(target)
    processes = max(1, min(processes, clients))
    shares = [clients // processes + (1 if i < clients % processes else 0) for i in range(processes)]
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(processes + 1), context.Queue()
    workers = [
        context.Process(
            target=_client_process_main,
            args=(target, n, baseline_s, seconds, i, barrier, results),
            name=f"hostile-clients-{i}",
            daemon=True,
        )
        for i, n in enumerate(shares)
    ]
    for worker in workers:
        worker.start()
    try:
        barrier.wait(SETUP_TIMEOUT_S)  # every client process connected
        barrier.wait(baseline_s + CALL_TIMEOUT_S + SETUP_TIMEOUT_S)  # the baseline is over
        time.sleep(1.0)  # its last answers sent
        idle_rss = rss_mb(target.pid)
        barrier.wait(SETUP_TIMEOUT_S)
        attack = asyncio.run(run_attacks(target, payloads, seconds))
        parts = [results.get(timeout=CALL_TIMEOUT_S + ATTACK_SLACK_S) for _ in workers]
    except (threading.BrokenBarrierError, queue.Empty) as exc:
        raise SystemExit(f"hostile: a client process failed or stalled ({type(exc).__name__})") from exc
    finally:
        for worker in workers:
            worker.join(5.0)
            if worker.is_alive():
                worker.terminate()
                worker.join()
    if any(part is None for part in parts):
        raise SystemExit("hostile: a client process failed (its traceback is above)")
    baseline = Tally()
    for part_baseline, part_attack in parts:
        baseline.merge(part_baseline)
        attack.merge(part_attack)
    ended = time.perf_counter()
    return HostileOutcome(
        clients, seconds, baseline_s, baseline, attack, _after(target, idle_rss, ended, rss_wait_s, cpu_window_s)
    )


def _after(
    target: Target, idle_rss: float | None, ended: float, rss_wait_s: float, cpu_window_s: float
) -> ServerFigures:
    cpu_before = cpu_seconds(target.pid)
    time.sleep(cpu_window_s)
    cpu_now = cpu_seconds(target.pid)
    cpu_after = None if cpu_before is None or cpu_now is None else cpu_now - cpu_before
    peak = peak_rss_mb(target.pid)
    time.sleep(max(0.0, ended + rss_wait_s - time.perf_counter()))
    after_rss = rss_mb(target.pid)
    probes = _probe_after(target)
    return ServerFigures(
        idle_rss, peak, after_rss, rss_wait_s, cpu_after, cpu_window_s, probes, *log_counts(target.log_path)
    )


# ---------------------------------------------------------------- report


def report(outcome: HostileOutcome) -> list[str]:
    """The lines ``load.py`` prints for a hostile run."""
    lines = [
        f"hostile mix: {outcome.clients} gRPC clients with the attacks of issue 21, {outcome.seconds:g} s, "
        f"after {outcome.baseline_s:g} s of normal calls alone (the baseline)",
        f"  {'kind':<52} {'count':>7}  codes",
    ]
    for prefix, tally in (("baseline: ", outcome.baseline), ("", outcome.attack)):
        for kind in sorted(tally.codes):
            lines += _kind_lines(prefix + kind, tally, kind)
    lines += _latency_lines(outcome)
    lines += _server_lines(outcome.server)
    lines += [f"  WARNING: {warning}" for warning in outcome.warnings()]
    failures = outcome.failures()
    if failures:
        lines.append("  FAILED: " + ", ".join(f"{what}={n}" for what, n in sorted(failures.items())))
    else:
        lines.append("  no INTERNAL, no UNKNOWN, no HTTP 500 or 501, no 503 or 504 without a JSON body")
    return lines


def _kind_lines(name: str, tally: Tally, kind: str) -> list[str]:
    by_code = tally.codes[kind]
    codes = ", ".join(f"{code}={n}" for code, n in sorted(by_code.items(), key=lambda item: -item[1]))
    line = f"  {name:<52} {sum(by_code.values()):>7}  {codes}"
    if kind in tally.seconds and not kind.endswith("normal"):
        seconds = np.array(tally.seconds[kind])
        line += f"  [seconds p50 {np.percentile(seconds, 50):.2f}, max {seconds.max():.2f}]"
    notes = sorted(tally.notes.get(kind, ()))
    return (
        [line]
        + [f"      {note}" for note in notes[:8]]
        + ([f"      … {len(notes) - 8} more"] if len(notes) > 8 else [])
    )


def _percentiles_ms(values: Iterable[float]) -> tuple[float, float]:
    ms = np.array(list(values)) * 1000
    if not len(ms):
        return float("nan"), float("nan")
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 99))


def _latency_lines(outcome: HostileOutcome) -> list[str]:
    lines = [
        f"  {'normal calls (OK)':<20} {'baseline p50/p99 ms':>22} {'during attack p50/p99 ms':>26} {'p99 ratio':>10}"
    ]
    for edge in ("grpc", "http"):
        base = _percentiles_ms(outcome.baseline.seconds.get(f"{edge} normal", []))
        during = _percentiles_ms(outcome.attack.seconds.get(f"{edge} normal", []))
        ratio = f"{during[1] / base[1]:.1f}x" if base[1] > 0 and during[1] == during[1] else "n/a"
        lines.append(
            f"  {edge:<20} {base[0]:>11.2f} / {base[1]:>8.2f} {during[0]:>13.2f} / {during[1]:>9.2f} {ratio:>10}"
        )
    return lines


def _mib(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f} MiB"


def _server_lines(server: ServerFigures) -> list[str]:
    if server.peak_rss_mb is None:
        memory = "  server RSS and CPU: n/a (not a local process)"
        return [memory, *_probe_lines(server)]
    ratio = (
        f"{server.after_rss_mb / server.idle_rss_mb:.2f}x idle (issue 21: at most 1.5x)"
        if server.after_rss_mb and server.idle_rss_mb
        else "ratio n/a"
    )
    cpu = "n/a" if server.cpu_after_s is None else f"{server.cpu_after_s:.2f} s"
    return [
        f"  server RSS: idle after warm-up {_mib(server.idle_rss_mb)}, peak (VmHWM) {_mib(server.peak_rss_mb)}, "
        f"{server.rss_wait_s:g} s after the attack {_mib(server.after_rss_mb)} = {ratio}",
        f"  server CPU in the {server.cpu_window_s:g} s after the attack: {cpu} (idle: ~0)",
        *_probe_lines(server),
    ]


def _probe_lines(server: ServerFigures) -> list[str]:
    probes = ", ".join(f"{what} {code} ({seconds * 1000:.1f} ms)" for what, code, seconds in server.probes_after)
    lines = [f"  after the wait: {probes}"]
    if server.log_errors is not None:
        lines.append(
            f"  server log over the run: {server.log_errors:,} ERROR lines, {server.log_not_json:,} lines not JSON"
        )
    return lines


# ---------------------------------------------------------------- the attack suite, by class


def main(argv: list[str] | None = None) -> int:
    """The attack suite by class (see the module's docstring); 1 when a class failed."""
    # Here, not at the top: the attacks build on this module, which a script run loads as __main__ (and again as
    # benchmarks.hostile, the copy the attacks share).
    from benchmarks import attacks, hostile

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--classes", default=",".join(attacks.ATTACKS), help="comma-separated classes, in order")
    parser.add_argument("--seed", type=int, default=0, help="varies sizes, rates and encodings (default 0)")
    parser.add_argument("--quick", action="store_true", help="small sizes, a few seconds a class, a 15 s settle wait")
    parser.add_argument("--target", help="host:port of a running server's gRPC port (default: start one)")
    parser.add_argument("--http-port", type=int, default=8080, help="with --target: its HTTP port (default 8080)")
    parser.add_argument("--metrics-port", type=int, default=8082, help="with --target: its metrics port (default 8082)")
    parser.add_argument("--json", type=Path, help="also write the figures here as JSON")
    options = parser.parse_args(argv)
    names = options.classes.split(",")
    unknown = sorted(set(names) - set(attacks.ATTACKS))
    if unknown:
        parser.error(f"no class {', '.join(unknown)}; the classes are {', '.join(attacks.ATTACKS)}")
    started = time.perf_counter()
    running = hostile.Target(options.target, options.http_port, options.metrics_port) if options.target else None
    target, results = attacks.run_suite(names, options.seed, quick=options.quick, target=running)
    took = time.perf_counter() - started
    print(
        f"attack suite, seed {options.seed}{', quick' if options.quick else ''}: server {target.grpc}, "
        f"log {target.log_path}; {os.cpu_count()} cores; {took:.0f} s"
    )
    for line in attacks.harness.table(results):
        print(line)
    if options.json:
        header = {"seed": options.seed, "quick": options.quick, "target": options.target, "seconds": took}
        attacks.harness.write_json(results, options.json, header)
    return 1 if any(result.failures() for result in results) else 0


if __name__ == "__main__":
    sys.exit(main())
