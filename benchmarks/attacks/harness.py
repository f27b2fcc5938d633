"""How a class of attacks is run and judged: a bystander, the server's figures, a verdict, the table.

For each class, ``run_class`` reads the server's idle RSS, resets its peak (``/proc/PID/clear_refs``),
and starts a ``Bystander``: a well-behaved client on a connection of its own, in a thread of its
own, sending a single-state Classify with a 2 s deadline 20 times a second and a health Check twice
a second. It then runs the class's attacks (``Attack.run(ctx)``, one coroutine; every answer is
counted in ``ctx.tally`` by kind and code), stops the bystander, and waits up to ``settle_s`` for the
server's RSS to come back to ``SETTLED_RATIO`` times idle. ``ClassFigures`` holds what it saw: the
attacks sent, the answers by code, the bystander's failed calls and health failures, idle, peak and
settled RSS (MiB), the server's CPU seconds from the attack's start to the end of the wait, and the
bytes the server's log grew by and its longest new line.

A class fails (``ClassFigures.failures``) when the bystander saw any failed call, health failed,
settled RSS is over ``SETTLED_RATIO`` times idle, the log grew by more than ``MAX_LOG_GROWTH`` bytes,
any answer was INTERNAL, UNKNOWN or an HTTP 5xx that is not Connect's documented UNAVAILABLE or
DEADLINE_EXCEEDED, or an attack found a must-hold check broken (``ctx.fail``: after descriptor
exhaustion, say, the HTTP edge must still answer).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import numpy as np
from grpc_health.v1 import health_pb2, health_pb2_grpc

from benchmarks import calls, hostile
from boaf.game import deal
from boaf.v1 import boaf_pb2 as pb

SETTLED_RATIO = 1.2  # settled RSS may be at most this times idle
MAX_LOG_GROWTH = 1_000_000  # bytes a class's attacks may add to the server's log
BYSTANDER_RATE = 20.0  # Classify calls a second
BYSTANDER_DEADLINE_S = 2.0
HEALTH_EVERY_S = 0.5
SAMPLE_EVERY_S = 0.1  # RSS samples while the attack runs (the peak, where clear_refs is refused)
SETTLE_POLL_S = 0.5
STEADY_RATIO = 0.02  # idle: two RSS reads a second apart within 2% of each other


@dataclass
class ClassRun:
    """What one class's attacks get: the server, a seeded generator, the size, and where to count."""

    name: str
    target: hostile.Target
    rng: np.random.Generator
    quick: bool
    work_dir: Path
    limits: Any  # boaf.v1 Limits, from GetServerInfo
    model_root: Path | None = None  # the model root the server watches, when the harness owns it
    tally: hostile.Tally = field(default_factory=hostile.Tally)
    findings: list[str] = field(default_factory=list)  # must-hold checks that broke: the class fails
    notes: list[str] = field(default_factory=list)
    other_logs: list[Path] = field(default_factory=list)  # logs of child servers the class started
    longest_message: int = 0  # characters of the longest error message an answer carried
    phases: list[tuple[float, str]] = field(default_factory=list)  # (perf_counter at its start, attack)

    def size(self, full: int, quick: int) -> int:
        """``full`` varied by seed (x0.75 to x1.25), or ``quick`` in a quick run."""
        return quick if self.quick else max(1, int(full * self.rng.uniform(0.75, 1.25)))

    def count(self, kind: str, code: str, seconds: float | None = None) -> None:
        self.tally.count(kind, code, seconds)

    def fail(self, text: str) -> None:
        self.findings.append(text)

    def note(self, text: str) -> None:
        self.notes.append(text)

    def phase(self, attack: str) -> None:
        """The attack that starts now: the bystander's failures from here on are counted against it."""
        self.phases.append((time.perf_counter(), attack))

    def quoted(self, chars: int) -> None:
        self.longest_message = max(self.longest_message, chars)


async def in_turn(ctx: ClassRun, *attacks: Callable[[ClassRun], Awaitable[None]]) -> None:
    """Run ``attacks`` one after the other, each a phase named after its function (``rapid_reset``: rapid reset)."""
    for attack in attacks:
        ctx.phase(attack.__name__.replace("_", " "))
        await attack(ctx)


@dataclass(frozen=True)
class Attack:
    """A class: its name, what it covers, and the coroutine that runs its attacks."""

    name: str
    covers: str
    run: Callable[[ClassRun], Awaitable[None]]


@dataclass
class ClassFigures:
    """What a class's run measured; ``None`` where the server is not a local process."""

    name: str
    sent: int = 0
    codes: dict[str, int] = field(default_factory=dict)
    calls: int = 0
    failed_calls: dict[str, int] = field(default_factory=dict)
    health_checks: int = 0
    health_failed: dict[str, int] = field(default_factory=dict)
    idle_mb: float | None = None
    peak_mb: float | None = None
    settled_mb: float | None = None
    settle_s: float = 0.0  # how long the wait for the settled RSS took
    settle_limit_s: float = 0.0
    cpu_s: float | None = None
    attack_s: float = 0.0
    log_bytes: int | None = None
    longest_line: int | None = None
    longest_message: int = 0
    findings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None

    def failures(self) -> list[str]:
        """Why the class failed; empty when it passed."""
        if self.skipped:
            return []
        found = list(self.findings)
        if self.failed_calls:
            found.append(f"bystander: {sum(self.failed_calls.values())} failed calls {self.failed_calls}")
        if self.health_failed:
            found.append(f"health failed {self.health_failed}")
        if self.settled_mb is not None and self.idle_mb and self.settled_mb > SETTLED_RATIO * self.idle_mb:
            found.append(f"settled RSS {self.settled_mb:,.0f} MiB > {SETTLED_RATIO:g}x idle {self.idle_mb:,.0f} MiB")
        if self.log_bytes is not None and self.log_bytes > MAX_LOG_GROWTH:
            found.append(f"log grew {self.log_bytes:,} bytes")
        bad = {code: n for code, n in self.codes.items() if is_failure(code)}
        if bad:
            found.append(f"answers {bad}")
        return found


def is_failure(code: str) -> bool:
    """INTERNAL, UNKNOWN, or an HTTP 5xx other than Connect's JSON-bodied 503 (UNAVAILABLE) and 504 (deadline)."""
    status = code.split(" ", 1)[0].rstrip(",")
    if hostile.is_failure(code):
        return True
    return len(status) == 3 and status.startswith("5") and status not in ("503", "504")


def boaf_command() -> list[str]:
    """The command that runs boaf's CLI: the ``boaf`` beside this Python (its venv's), else ``boaf`` on PATH."""
    beside = Path(sys.executable).with_name("boaf")
    return [str(beside)] if beside.is_file() else ["boaf"]


# ---------------------------------------------------------------- the bystander


class Bystander:
    """A well-behaved client on its own connection: Classify of one state, 2 s deadline, 20 a second; health."""

    def __init__(self, address: str) -> None:
        options = [("grpc.use_local_subchannel_pool", 1)]  # never shares a connection with an attack
        self._channel = grpc.insecure_channel(address, options=options)
        self._classify = self._channel.unary_unary("/boaf.v1.Boaf/Classify")
        self._health = health_pb2_grpc.HealthStub(self._channel)
        self._request = pb.ClassifyRequest(states=[calls.state_to_proto(deal(1))]).SerializeToString()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.calls = self.checks = 0
        self.failed: dict[str, int] = {}
        self.health_failed: dict[str, int] = {}
        self.failed_at: list[float] = []  # perf_counter of each failed call or health Check
        self._pending: list[grpc.Future] = []
        self._thread = threading.Thread(target=self._run, name="bystander", daemon=True)

    def start(self) -> None:
        """Connect (a first call, not counted), then call on the clock in a thread."""
        self._classify(self._request, timeout=hostile.SETUP_TIMEOUT_S)
        self._thread.start()

    def stop(self) -> None:
        """Stop calling; wait for the calls in flight (each ends by its deadline)."""
        self._stop.set()
        self._thread.join()
        for future in self._pending:
            with contextlib.suppress(grpc.FutureTimeoutError):
                future.exception(BYSTANDER_DEADLINE_S + 5.0)
        self._channel.close()

    def _run(self) -> None:
        started, n, next_health = time.perf_counter(), 0, 0.0
        while not self._stop.is_set():
            now = time.perf_counter() - started
            if now >= next_health:
                self._send(self._health.Check.future, health_pb2.HealthCheckRequest(service="boaf.v1.Boaf"), True)
                next_health += HEALTH_EVERY_S
            if now >= n / BYSTANDER_RATE:
                self._send(self._classify.future, self._request, False)
                n += 1
            self._stop.wait(max(0.0, min(n / BYSTANDER_RATE, next_health) - (time.perf_counter() - started)))

    def _send(self, call: Callable[..., grpc.Future], request: Any, health: bool) -> None:
        future = call(request, timeout=BYSTANDER_DEADLINE_S)
        future.add_done_callback(lambda done: self._done(done, health))
        self._pending = [f for f in self._pending if not f.done()] + [future]

    def _done(self, future: grpc.Future, health: bool) -> None:
        error = future.exception()
        failed = None if error is None else error.code().name if isinstance(error, grpc.Call) else type(error).__name__
        if health and error is None and future.result().status != health_pb2.HealthCheckResponse.SERVING:
            failed = "NOT_SERVING"
        with self._lock:
            if health:
                self.checks += 1
            else:
                self.calls += 1
            if failed is not None:
                self.failed_at.append(time.perf_counter())
                into = self.health_failed if health else self.failed
                into[failed] = into.get(failed, 0) + 1


# ---------------------------------------------------------------- the server's figures


class RssSampler:
    """The peak RSS of ``pid`` while it runs: VmHWM after a reset, else the largest of samples taken."""

    def __init__(self, pid: int | None) -> None:
        self.pid = pid
        self.reset = _reset_peak(pid)
        self.sampled = hostile.rss_mb(pid) or 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_EVERY_S):
            self.sampled = max(self.sampled, hostile.rss_mb(self.pid) or 0.0)

    def stop(self) -> float | None:
        self._stop.set()
        self._thread.join()
        if self.pid is None:
            return None
        peak = hostile.peak_rss_mb(self.pid) if self.reset else None
        return max(self.sampled, peak or 0.0)


def _reset_peak(pid: int | None) -> bool:
    # Writing 5 to clear_refs resets VmHWM to the RSS now (Linux 4.0 and later).
    if pid is None:
        return False
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def settle(pid: int | None, idle: float | None, limit_s: float) -> tuple[float | None, float]:
    """Wait up to ``limit_s`` for ``pid``'s RSS to be at most ``SETTLED_RATIO`` x ``idle``: (RSS MiB, seconds)."""
    started = time.perf_counter()
    rss = hostile.rss_mb(pid)
    while rss is not None and idle and rss > SETTLED_RATIO * idle and time.perf_counter() - started < limit_s:
        time.sleep(SETTLE_POLL_S)
        rss = hostile.rss_mb(pid)
    return rss, time.perf_counter() - started


def log_size(path: Path | None) -> int | None:
    """Bytes in the log at ``path`` now, or None."""
    try:
        return None if path is None else path.stat().st_size
    except OSError:
        return None


def log_growth(path: Path | None, since: int | None) -> tuple[int | None, int | None]:
    """(bytes added, longest added line in bytes) to the log at ``path`` past offset ``since``."""
    if path is None or since is None:
        return None, None
    longest = grown = 0
    with path.open("rb") as log:
        log.seek(since)
        for line in log:
            grown += len(line)
            longest = max(longest, len(line.rstrip(b"\n")))
    return grown, longest


def wait_until_idle(target: hostile.Target, limit_s: float = hostile.SETUP_TIMEOUT_S) -> float:
    """Wait until the server's background kernels are ready and its RSS is steady; the seconds it took.

    The puzzle RPCs answer UNAVAILABLE until the kernels compiled after SERVING are loaded; a small
    AnalyzePuzzle is asked until it answers otherwise. Then RSS is read every second until two reads
    are within ``STEADY_RATIO`` of each other. Each wait gives up at ``limit_s``.
    """
    started = time.perf_counter()
    request = pb.AnalyzePuzzleRequest(state=calls.state_to_proto(deal(1)), samples=1, time_limit_ms=100)
    with grpc.insecure_channel(target.grpc) as channel:
        analyze = channel.unary_unary("/boaf.v1.Boaf/AnalyzePuzzle")
        while time.perf_counter() - started < limit_s:
            try:
                analyze(request.SerializeToString(), timeout=30.0)
                break
            except grpc.RpcError as exc:
                if not isinstance(exc, grpc.Call) or exc.code() != grpc.StatusCode.UNAVAILABLE:
                    break
            time.sleep(1.0)
    before, now = 0.0, hostile.rss_mb(target.pid) or 0.0
    while abs(now - before) > STEADY_RATIO * now and time.perf_counter() - started < limit_s:
        time.sleep(1.0)
        before, now = now, hostile.rss_mb(target.pid) or 0.0
    return time.perf_counter() - started


# ---------------------------------------------------------------- a class's run


def run_class(attack: Attack, ctx: ClassRun, settle_limit_s: float) -> ClassFigures:
    """Run ``attack``'s coroutine against ``ctx.target`` with the bystander; measure; see the module's docstring."""
    target = ctx.target
    figures = ClassFigures(attack.name, settle_limit_s=settle_limit_s)
    figures.idle_mb = hostile.rss_mb(target.pid)
    log_start = log_size(target.log_path)
    cpu_start = hostile.cpu_seconds(target.pid)
    sampler = RssSampler(target.pid)
    bystander = Bystander(target.grpc)
    bystander.start()
    started = time.perf_counter()
    try:
        asyncio.run(_guarded(attack, ctx))
    finally:
        figures.attack_s = time.perf_counter() - started
        bystander.stop()
        figures.peak_mb = sampler.stop()
    figures.settled_mb, figures.settle_s = settle(target.pid, figures.idle_mb, settle_limit_s)
    cpu_end = hostile.cpu_seconds(target.pid)
    figures.cpu_s = None if cpu_start is None or cpu_end is None else cpu_end - cpu_start
    figures.log_bytes, figures.longest_line = log_growth(target.log_path, log_start)
    for path in ctx.other_logs:
        grown, longest = log_growth(path, 0)
        figures.log_bytes = (figures.log_bytes or 0) + (grown or 0)
        figures.longest_line = max(figures.longest_line or 0, longest or 0)
    _fill(figures, ctx, bystander)
    return figures


async def _guarded(attack: Attack, ctx: ClassRun) -> None:
    try:
        await attack.run(ctx)
    except Exception as exc:  # the harness's own surprise: the class is reported, not the run lost
        ctx.fail(f"the harness raised {type(exc).__name__}: {str(exc)[:200]}")


def _fill(figures: ClassFigures, ctx: ClassRun, bystander: Bystander) -> None:
    for by_code in ctx.tally.codes.values():
        for code, n in by_code.items():
            figures.codes[code] = figures.codes.get(code, 0) + n
            figures.sent += n
    figures.calls, figures.failed_calls = bystander.calls, dict(bystander.failed)
    figures.health_checks, figures.health_failed = bystander.checks, dict(bystander.health_failed)
    figures.longest_message = ctx.longest_message
    figures.findings, figures.notes = list(ctx.findings), list(ctx.notes)
    by_phase: dict[str, int] = {}
    for at in bystander.failed_at:
        attack = ([name for started, name in ctx.phases if started <= at] or ["the class's set-up"])[-1]
        by_phase[attack] = by_phase.get(attack, 0) + 1
    figures.notes += [f"bystander failures during {attack}: {n}" for attack, n in by_phase.items()]
    for kind in sorted(ctx.tally.codes):
        codes = ", ".join(f"{code}={n}" for code, n in sorted(ctx.tally.codes[kind].items(), key=lambda kv: -kv[1]))
        figures.notes.append(f"{kind}: {codes}")


# ---------------------------------------------------------------- report


def _mib(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


def table(results: list[ClassFigures]) -> list[str]:
    """The markdown table by class, then each class's findings and notes."""
    lines = [
        "| class | verdict | attacks sent | answers by code | bystander failed / calls | health failed / checks "
        "| RSS idle / peak / settled MiB (wait) | server CPU s | log growth bytes (longest line) |",
        "|---|---|---:|---|---:|---:|---|---:|---:|",
    ]
    for fig in results:
        if fig.skipped:
            lines.append(f"| {fig.name} | skipped: {fig.skipped} | | | | | | | |")
            continue
        codes = ", ".join(f"{code} {n:,}" for code, n in sorted(fig.codes.items(), key=lambda kv: -kv[1])[:6])
        more = len(fig.codes) - 6
        codes += f", {more} more" if more > 0 else ""
        wait = f"{fig.settle_s:.0f} s of ≤{fig.settle_limit_s:g} s"
        cpu = "n/a" if fig.cpu_s is None else f"{fig.cpu_s:.1f}"
        logs = "n/a" if fig.log_bytes is None else f"{fig.log_bytes:,} ({fig.longest_line:,})"
        lines.append(
            f"| {fig.name} | {'FAILED' if fig.failures() else 'passed'} | {fig.sent:,} | {codes} "
            f"| {sum(fig.failed_calls.values())} / {fig.calls} | {sum(fig.health_failed.values())} / "
            f"{fig.health_checks} | {_mib(fig.idle_mb)} / {_mib(fig.peak_mb)} / {_mib(fig.settled_mb)} ({wait}) "
            f"| {cpu} | {logs} |"
        )
    for fig in results:
        lines += ["", f"{fig.name}:"]
        lines += [f"  FAILED: {reason}" for reason in fig.failures()]
        if fig.longest_message:
            lines.append(f"  longest error message in an answer: {fig.longest_message:,} characters")
        lines += [f"  {note}" for note in fig.notes]
    return lines


def write_json(results: list[ClassFigures], path: Path, header: dict[str, Any]) -> None:
    """The figures of every class, with ``header`` (seed, quick, target), as JSON."""
    rows = [{**vars(fig), "failures": fig.failures()} for fig in results]
    path.write_text(json.dumps({**header, "classes": rows}, indent=2) + "\n")
