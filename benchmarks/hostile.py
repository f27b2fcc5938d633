"""The hostile mix of ``benchmarks/load.py``: malformed and runaway-shaped calls among normal ones.

Each client sends, in a seeded random order, normal calls (single-state
Classify, Solve of a seeded deal; their latencies are the figure), malformed
ones (random bytes, invalid UTF-8 in a string field, a wrong wire type, a
valid message cut short or with bytes flipped, a 100,000-character cell) and
runaway-shaped puzzle calls (AnalyzePuzzle of a 52-card 52x1 grid with a 2 s
time limit, samples 4294967295, GeneratePuzzle of 1 card). It counts every
status code; INTERNAL and UNKNOWN must stay at 0. The server's peak RSS is read
from /proc when the server is a local process.

    python benchmarks/load.py --scenarios solve-deal --clients 16 --duration 1 --hostile 60
"""

from __future__ import annotations

import asyncio
import itertools
import multiprocessing
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import numpy as np

from game import card_text, deal
from service.generated.boaf.v1 import boaf_pb2 as pb

NORMAL_SHARE, MALFORMED_SHARE = 0.6, 0.3  # the rest are runaway-shaped puzzle calls
CALL_TIMEOUT_S = 30.0
Call = tuple[str, bytes, str]  # method, request bytes, kind ("normal", "malformed" or "runaway")


@dataclass
class HostileOutcome:
    """Status codes by kind of call, and the latencies of the normal calls, in seconds."""

    codes: dict[str, dict[str, int]] = field(default_factory=dict)
    normal_latencies: list[float] = field(default_factory=list)

    def count(self, kind: str, code: str) -> None:
        by_code = self.codes.setdefault(kind, {})
        by_code[code] = by_code.get(code, 0) + 1

    def merge(self, other: HostileOutcome) -> None:
        for kind, by_code in other.codes.items():
            for code, n in by_code.items():
                self.codes.setdefault(kind, {})[code] = self.codes.get(kind, {}).get(code, 0) + n
        self.normal_latencies += other.normal_latencies

    def total(self, code: str) -> int:
        return sum(by_code.get(code, 0) for by_code in self.codes.values())


def _state(cells: list[str], rows: int = 4, cols: int = 4) -> pb.State:
    return pb.State(rows=rows, cols=cols, cells=cells)


def _deal_cells(seed: int, rows: int = 4, cols: int = 4) -> list[str]:
    return ["" if c is None else card_text(c) for c in deal(seed, rows=rows, cols=cols).cells]


def _malformed(rng: np.random.Generator) -> Call:
    method = str(rng.choice(["Classify", "Solve", "Features", "AnalyzePuzzle", "GeneratePuzzle"]))
    good = pb.SolveRequest(state=_state(_deal_cells(int(rng.integers(1, 10**6))))).SerializeToString()
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
        payload = pb.SolveRequest(state=_state(["X" * 100_000, *_deal_cells(1)[1:]])).SerializeToString()
    return f"/boaf.v1.Boaf/{method}", payload, "malformed"


def _runaway(rng: np.random.Generator) -> Call:
    kind = int(rng.integers(3))
    if kind == 0:
        request = pb.AnalyzePuzzleRequest(state=_state(_deal_cells(1, 52, 1), 52, 1), time_limit_ms=2000)
        return "/boaf.v1.Boaf/AnalyzePuzzle", request.SerializeToString(), "runaway"
    if kind == 1:
        request = pb.AnalyzePuzzleRequest(state=_state(_deal_cells(1)), samples=4_294_967_295)
        return "/boaf.v1.Boaf/AnalyzePuzzle", request.SerializeToString(), "runaway"
    return "/boaf.v1.Boaf/GeneratePuzzle", pb.GeneratePuzzleRequest(cards=1).SerializeToString(), "runaway"


def _normal(rng: np.random.Generator, seeds: Callable[[], int]) -> Call:
    cells = _deal_cells(seeds())
    if rng.random() < 0.5:
        return "/boaf.v1.Boaf/Classify", pb.ClassifyRequest(states=[_state(cells)]).SerializeToString(), "normal"
    return "/boaf.v1.Boaf/Solve", pb.SolveRequest(state=_state(cells)).SerializeToString(), "normal"


def next_call(rng: np.random.Generator, seeds: Callable[[], int]) -> Call:
    """One call of the mix."""
    draw = rng.random()
    if draw < NORMAL_SHARE:
        return _normal(rng, seeds)
    if draw < NORMAL_SHARE + MALFORMED_SHARE:
        return _malformed(rng)
    return _runaway(rng)


async def _client(channel: grpc.aio.Channel, worker: int, stop_at: float, out: HostileOutcome) -> None:
    rng = np.random.default_rng(worker)
    counter = itertools.count(1 + 1_000 * worker)
    while time.perf_counter() < stop_at:
        method, payload, kind = next_call(rng, lambda: next(counter))
        call = channel.unary_unary(method, request_serializer=None, response_deserializer=None)
        started = time.perf_counter()
        try:
            await call(payload, timeout=CALL_TIMEOUT_S)
            code = "OK"
        except grpc.aio.AioRpcError as exc:
            code = exc.code().name
        if kind == "normal" and code == "OK":
            out.normal_latencies.append(time.perf_counter() - started)
        out.count(kind, code)


async def _run_process(address: str, clients: int, seconds: float, worker: int) -> HostileOutcome:
    out = HostileOutcome()
    async with grpc.aio.insecure_channel(address) as channel:
        stop_at = time.perf_counter() + seconds
        await asyncio.gather(*(_client(channel, worker * 1000 + i, stop_at, out) for i in range(clients)))
    return out


def _process_main(args: tuple[str, int, float, int]) -> HostileOutcome:
    return asyncio.run(_run_process(*args))


def run_hostile_mix(address: str, clients: int, seconds: float, processes: int) -> HostileOutcome:
    """``clients`` callers of the mix for ``seconds``, spread over ``processes`` client processes."""
    processes = max(1, min(processes, clients))
    shares = [clients // processes + (1 if i < clients % processes else 0) for i in range(processes)]
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        parts = pool.map(_process_main, [(address, n, seconds, i) for i, n in enumerate(shares)])
    merged = HostileOutcome()
    for part in parts:
        merged.merge(part)
    return merged


def server_pid(port: int) -> int | None:
    """The pid of the local ``boaf serve`` listening on ``port`` (by its command line), or None."""
    wanted = ["serve", "--port", str(port)]
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if any(args[i : i + 2] == wanted[1:] for i in range(len(args))) and "serve" in args:
            return int(cmdline.parent.name)
    return None


def peak_rss_mb(pid: int | None) -> float | None:
    """``VmHWM`` (peak resident memory) of ``pid`` in MiB, or None."""
    if pid is None:
        return None
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None


def report(out: HostileOutcome, clients: int, seconds: float, peak_mb: float | None) -> list[str]:
    """The lines ``load.py`` prints for the mix."""
    ms = np.array(out.normal_latencies) * 1000 if out.normal_latencies else np.array([np.nan])
    lines = [f"hostile mix: {clients} clients, {seconds:g} s"]
    for kind in ("normal", "malformed", "runaway"):
        by_code = out.codes.get(kind, {})
        codes = ", ".join(f"{code}={n}" for code, n in sorted(by_code.items()))
        lines.append(f"  {kind:<9} {sum(by_code.values()):>7} calls: {codes}")
    lines.append(
        f"  INTERNAL {out.total('INTERNAL')}, UNKNOWN {out.total('UNKNOWN')}; normal calls p50 "
        f"{np.percentile(ms, 50):.2f} ms, p99 {np.percentile(ms, 99):.2f} ms; server peak RSS "
        + ("n/a (not a local process)" if peak_mb is None else f"{peak_mb:,.0f} MiB")
    )
    return lines
