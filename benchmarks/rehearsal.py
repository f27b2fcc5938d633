"""A census rehearsal on a local Dask cluster, started as a user would.

    python benchmarks/rehearsal.py [--seeds 0:400000] [--workers 3] [--chunk-size 2500] [--out out/rehearsal]
                                   [--verify sample|all]

Starts ``dask scheduler`` on a free loopback port and ``--workers`` ``dask worker`` processes (one
thread each), each in a process group of its own, then runs the census as a user would:
``boaf census --seeds A:B --scheduler ADDR --chunk-size N --output OUT/census --json``, whose output is a
partitioned Parquet dataset (the form for censuses too large for one file). Once a quarter of its chunks are
written it SIGKILLs one worker (nanny and worker process, as if its machine died), and the census
must go on; once half are written it SIGKILLs the census client, leaving its parts behind,
and runs the same command again, which must resume from the parts already written.

Then it stops the cluster and checks the output: every seed of A:B once, in order; the same status,
reason, class and nodes as ``boaf.jobs.census.census_chunk`` computes in this process, for eight chunks
spread over the slice (every chunk with ``--verify all``); and the JSON summary agrees with the rows.

It prints the wall time of each phase, the steady throughput of each (deals/s between the first and
the last fifth of the parts it wrote, from their mtimes), the workers alive, the parts present
before the resume and the chunks the resume solved, and the verification; it exits 1 if anything
failed. Every process it starts is stopped in a ``finally`` and checked gone.

The rehearsal needs a slice of at least four chunks. The logs of every process go to ``OUT/logs``.
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

# Run as a script, this folder comes first on sys.path, and its features.py and models.py would
# shadow the packages of the same names. (Imported by a test, it comes last, and stays there.)
if __name__ == "__main__":
    sys.path = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from distributed import Client

from boaf import search
from boaf.game.notation import parse_seed_range
from boaf.jobs.census import DEFAULT_CHUNK_SIZE, CensusChunk, census_chunk
from boaf.jobs.runner import JOB_FILE
from boaf.models.files import PARTIAL_WRITES

BIN = Path(sys.executable).parent  # the venv's bin: boaf and dask are installed beside its python
BOAF = str(BIN / "boaf")
DASK = str(BIN / "dask")
KILL_WORKER_AT = 0.25  # of the chunks written
KILL_CLIENT_AT = 0.5
SAMPLE_CHUNKS = 8
CHECKED_COLUMNS = ["seed", "status", "reason", "class", "nodes"]
PART_NAME = re.compile(r"part-\d+\.parquet")
POLL_S = 0.05
STOP_GRACE_S = 10.0
GONE_TIMEOUT_S = 5.0
# Safety nets should the rehearsal itself be SIGKILLed and leave its cluster behind.
SCHEDULER_IDLE_TIMEOUT = "10 minutes"
WORKER_DEATH_TIMEOUT = "60s"

T = TypeVar("T")


class RehearsalFailed(Exception):
    """The census did not behave: a process exited or hung where it should not have."""


# ---------------------------------------------------------------- processes


@dataclass
class Group:
    """A process started in a session, hence a process group, of its own; stdout and stderr go to files."""

    name: str
    process: subprocess.Popen[bytes]
    stdout: Path
    stderr: Path

    def kill(self) -> None:
        """SIGKILL the whole group at once: the process and any children it started."""
        signal_group(self.process.pid, signal.SIGKILL)

    def tail(self, chars: int = 3000) -> str:
        """The end of its stderr."""
        return self.stderr.read_text(errors="replace")[-chars:]


class ProcessGroups:
    """Every process a rehearsal starts; leaving the ``with`` block stops them all, however it is left."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.started: list[Group] = []
        self.survivors: list[int] = []

    def start(self, name: str, command: list[str]) -> Group:
        """Start ``command`` in a new session, its stdout in ``LOG_DIR/name.out`` and stderr in ``name.log``."""
        stdout, stderr = self.log_dir / f"{name}.out", self.log_dir / f"{name}.log"
        with stdout.open("wb") as out, stderr.open("wb") as err:
            process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True
            )
        group = Group(name, process, stdout, stderr)
        self.started.append(group)
        return group

    def __enter__(self) -> ProcessGroups:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.survivors = stop_groups(self.started)
        if self.survivors:
            print(f"rehearsal: processes {self.survivors} survived SIGKILL", file=sys.stderr)


def signal_group(pgid: int, signum: int) -> None:
    """Send ``signum`` to process group ``pgid``, if anything is left in it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signum)


def stop_groups(groups: list[Group]) -> list[int]:
    """SIGTERM every group, SIGKILL whatever is left after a grace period; return the pids still alive (none)."""
    for group in groups:
        signal_group(group.process.pid, signal.SIGTERM)
    give_up = time.monotonic() + STOP_GRACE_S
    for group in groups:
        with contextlib.suppress(subprocess.TimeoutExpired):
            group.process.wait(max(0.0, give_up - time.monotonic()))
    # Always, not only for leaders that hung: a nanny's worker process or resource tracker may outlive it.
    for group in groups:
        signal_group(group.process.pid, signal.SIGKILL)
        group.process.wait()
    return wait_until_gone({group.process.pid for group in groups})


def wait_until_gone(pgids: set[int]) -> list[int]:
    """Wait a little for the process groups ``pgids`` to empty; return the pids still in them."""
    give_up = time.monotonic() + GONE_TIMEOUT_S
    while (alive := live_members(pgids)) and time.monotonic() < give_up:
        time.sleep(POLL_S)
    return alive


def live_members(pgids: set[int]) -> list[int]:
    """Pids of the processes, zombies aside, in any of the process groups ``pgids`` (read from Linux's /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, _parent, group = stat.read_text().rpartition(")")[2].split()[:3]
        except OSError:  # it ended while we looked
            continue
        if int(group) in pgids and state != "Z":
            found.append(int(stat.parent.name))
    return found


def wait_for(probe: Callable[[], T | None], what: str, timeout_s: float, watched: Group) -> T:
    """Poll ``probe`` until it returns something; fail if ``watched`` exits first or ``timeout_s`` passes."""
    give_up = time.monotonic() + timeout_s
    while (found := probe()) is None:
        if (code := watched.process.poll()) is not None:
            raise RehearsalFailed(f"{watched.name} exited with {code} while waiting for {what}:\n{watched.tail()}")
        if time.monotonic() > give_up:
            raise RehearsalFailed(f"still waiting for {what} after {timeout_s:g} s")
        time.sleep(POLL_S)
    return found


def wait_until(condition: Callable[[], bool], what: str, timeout_s: float, watched: Group) -> None:
    """Poll ``condition`` until it holds; fail if ``watched`` exits first or ``timeout_s`` passes."""
    wait_for(lambda: True if condition() else None, what, timeout_s, watched)


# ---------------------------------------------------------------- the cluster and the census


@dataclass
class DaskCluster:
    """A ``dask scheduler`` and its ``dask worker`` processes, each a process group of its own."""

    address: str
    scheduler: Group
    workers: list[Group]


def start_cluster(groups: ProcessGroups, workers: int, timeout_s: float) -> DaskCluster:
    """``dask scheduler`` on a free loopback port (the OS picks it) and ``workers`` workers started for it."""
    scheduler_file = groups.log_dir / "scheduler.json"
    command = [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard"]
    command += ["--scheduler-file", str(scheduler_file), "--idle-timeout", SCHEDULER_IDLE_TIMEOUT]
    scheduler = groups.start("scheduler", command)
    address = wait_for(lambda: scheduler_address(scheduler_file), "the scheduler's address", timeout_s, scheduler)
    started = [groups.start(f"worker-{i}", worker_command(address, i, groups.log_dir)) for i in range(workers)]
    return DaskCluster(address, scheduler, started)


def scheduler_address(scheduler_file: Path) -> str | None:
    """The address in ``dask scheduler --scheduler-file``'s file, once it is written whole."""
    try:
        return str(json.loads(scheduler_file.read_text())["address"])
    except (FileNotFoundError, json.JSONDecodeError, KeyError):
        return None


def worker_command(address: str, index: int, log_dir: Path) -> list[str]:
    """One ``dask worker`` process of one thread, under a nanny, as one would start it on a machine."""
    return [
        *(DASK, "worker", address, "--nthreads", "1", "--nworkers", "1", "--host", "127.0.0.1", "--no-dashboard"),
        *("--name", f"worker-{index}", "--local-directory", str(log_dir / "scratch")),
        *("--death-timeout", WORKER_DEATH_TIMEOUT),
    ]


def census_command(seeds: range, address: str, output: Path, chunk_size: int) -> list[str]:
    """The census as a user runs it against an existing scheduler."""
    seed_range = f"{seeds.start}:{seeds.stop}"
    return [
        *(BOAF, "census", "--seeds", seed_range, "--scheduler", address, "--chunk-size", str(chunk_size)),
        *("--output", str(output), "--json"),
    ]


def parts_dir_of(output: Path) -> Path:
    """Where ``boaf census --output OUTPUT`` keeps its parts: a partitioned output is its own parts folder."""
    return output if output.suffix != ".parquet" else output.parent / f".{output.name}.parts"


@dataclass
class PartsWatch:
    """What the rehearsal saw of the census's parts directory, polled while the census runs.

    The census removes the directory once it has combined the parts, so what is known of the
    parts comes from these polls: each one's inode and mtime (ns) when first seen, and which
    were replaced by another file later (a finished chunk solved again).
    """

    parts_dir: Path
    seen: dict[str, tuple[int, int]] = field(default_factory=dict)
    rewritten: set[str] = field(default_factory=set)

    def poll(self) -> int:
        """Record the parts present now; return how many there are."""
        count = 0
        for entry in self._entries():
            if not PART_NAME.fullmatch(entry.name):
                continue
            try:
                stat = entry.stat()
            except FileNotFoundError:  # the census finished and removed it
                continue
            identity = (stat.st_ino, stat.st_mtime_ns)
            if self.seen.setdefault(entry.name, identity) != identity:
                self.rewritten.add(entry.name)
            count += 1
        return count

    def partial_writes(self) -> int:
        """Temporary files of parts being written (left behind by a killed client)."""
        return sum(1 for entry in self._entries() if fnmatch.fnmatch(entry.name, PARTIAL_WRITES))

    def job(self) -> dict[str, Any] | None:
        """The job's ``_job.json`` (chunks, chunk_size, seeds, grid, algorithm), once the census has written it."""
        try:
            return dict(json.loads((self.parts_dir / JOB_FILE).read_text()))
        except (FileNotFoundError, json.JSONDecodeError):
            return None

    def mtimes(self) -> list[float]:
        """The mtime of every part seen, in seconds since the epoch."""
        return [mtime_ns / 1e9 for _inode, mtime_ns in self.seen.values()]

    def _entries(self) -> list[os.DirEntry[str]]:
        try:
            return list(os.scandir(self.parts_dir))
        except FileNotFoundError:
            return []


# ---------------------------------------------------------------- the rehearsal


@dataclass
class Rehearsal:
    """What a rehearsal did and saw.

    ``marks`` are wall-clock times (``time.time()``, s), comparable with the parts' mtimes; ``job``
    is the census's ``_job.json``; ``pgids`` are the process groups it started, ``survivors`` the
    pids still alive in them after it stopped them (none, normally).
    """

    seeds: range
    workers: int
    output: Path
    watch: PartsWatch
    requested_chunk_size: int = 0  # given to boaf census (``chunk_size`` is what its job file says)
    address: str = ""
    job: dict[str, Any] = field(default_factory=dict)
    marks: dict[str, float] = field(default_factory=dict)
    workers_alive: dict[str, int] = field(default_factory=dict)
    parts_before_resume: int = 0
    partial_writes_left: int = 0
    summary: dict[str, Any] = field(default_factory=dict)
    pgids: list[int] = field(default_factory=list)
    survivors: list[int] = field(default_factory=list)

    @property
    def chunks(self) -> int:
        return int(self.job["chunks"])

    @property
    def chunk_size(self) -> int:
        return int(self.job["chunk_size"])

    @property
    def solved_by_resume(self) -> int:
        return self.chunks - self.parts_before_resume

    def mark(self, event: str) -> None:
        self.marks[event] = time.time()

    def seconds(self, start: str, stop: str) -> float:
        return self.marks[stop] - self.marks[start]

    def mtimes_between(self, start: str, stop: str) -> list[float]:
        return [t for t in self.watch.mtimes() if self.marks[start] <= t < self.marks[stop]]


def rehearse(
    seeds: range,
    workers: int,
    out_dir: Path,
    timeout_s: float = 600.0,
    say: Callable[[str], None] = lambda line: None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> Rehearsal:
    """Census ``seeds`` on a fresh local cluster of ``workers``, killing a worker, then the client, on the way.

    Each wait (for the cluster, for parts, for a process to end) fails after ``timeout_s``. Every
    process started is stopped before this returns or raises; ``survivors`` lists any that were not.
    ``say`` is given a line at each step.
    """
    check_options(seeds, workers, chunk_size)
    output = out_dir / "census"
    rehearsal = Rehearsal(seeds, workers, output, PartsWatch(parts_dir_of(output)), chunk_size)
    log_dir = clear_out_dir(out_dir, output, rehearsal.watch.parts_dir)
    rehearsal.mark("start")
    with ProcessGroups(log_dir) as groups:
        cluster = start_cluster(groups, workers, timeout_s)
        rehearsal.address = cluster.address
        with Client(cluster.address, timeout=f"{timeout_s}s") as observer:
            run_with_kills(rehearsal, groups, cluster, observer, timeout_s, say)
    rehearsal.mark("stopped")
    rehearsal.pgids = [group.process.pid for group in groups.started]
    rehearsal.survivors = groups.survivors
    return rehearsal


def check_options(seeds: range, workers: int, chunk_size: int) -> None:
    """Raise ``ValueError`` unless a worker can be killed and half the chunks are left when the client is."""
    if workers < 2:
        raise ValueError(f"the rehearsal kills a worker, so it needs at least 2 workers, got {workers}")
    if len(seeds) < 4 * chunk_size:
        raise ValueError(f"the rehearsal needs at least 4 chunks of {chunk_size:,} deals, got {len(seeds):,}")


def clear_out_dir(out_dir: Path, output: Path, parts_dir: Path) -> Path:
    """Remove what an earlier rehearsal left in ``out_dir``; return an empty log directory in it."""
    log_dir = out_dir / "logs"
    shutil.rmtree(parts_dir, ignore_errors=True)
    shutil.rmtree(log_dir, ignore_errors=True)
    if output.is_dir():
        shutil.rmtree(output)
    output.unlink(missing_ok=True)
    log_dir.mkdir(parents=True)
    return log_dir


def run_with_kills(
    rehearsal: Rehearsal,
    groups: ProcessGroups,
    cluster: DaskCluster,
    observer: Client,
    timeout_s: float,
    say: Callable[[str], None],
) -> None:
    """The census, a worker SIGKILLed, the client SIGKILLed, and the same command again to the end."""

    def alive() -> int:
        return len(observer.nthreads())

    workers = rehearsal.workers
    wait_until(lambda: alive() == workers, f"{workers} workers to connect", timeout_s, cluster.scheduler)
    rehearsal.mark("cluster up")
    rehearsal.workers_alive["at the start"] = alive()
    command = census_command(rehearsal.seeds, cluster.address, rehearsal.output, rehearsal.requested_chunk_size)
    say(f"{workers} workers up at {cluster.address}; running boaf {' '.join(command[1:])}")
    first = groups.start("census-1", command)
    kill_worker_after, kill_client_after = kill_points(rehearsal, first, timeout_s)
    wait_for_parts(rehearsal, kill_worker_after, first, timeout_s)
    cluster.workers[0].kill()
    rehearsal.mark("worker killed")
    say(f"{kill_worker_after} of {rehearsal.chunks} parts written: {cluster.workers[0].name} SIGKILLed")
    wait_until(lambda: alive() == workers - 1, "the scheduler to drop the killed worker", timeout_s, first)
    rehearsal.workers_alive["after the kill"] = alive()
    wait_for_parts(rehearsal, kill_client_after, first, timeout_s)
    kill_client(rehearsal, first)
    say(f"{rehearsal.parts_before_resume} of {rehearsal.chunks} parts written: the census client SIGKILLed; rerunning")
    resume(rehearsal, groups.start("census-2", command), timeout_s)
    say("the census completed; stopping the cluster")
    rehearsal.workers_alive["at the end"] = alive()


def kill_points(rehearsal: Rehearsal, client: Group, timeout_s: float) -> tuple[int, int]:
    """How many parts to wait for before killing a worker, then the client (from the job's _job.json)."""
    rehearsal.job = wait_for(rehearsal.watch.job, "the census's _job.json", timeout_s, client)
    kill_worker_after = max(1, round(rehearsal.chunks * KILL_WORKER_AT))
    return kill_worker_after, max(kill_worker_after + 1, round(rehearsal.chunks * KILL_CLIENT_AT))


def wait_for_parts(rehearsal: Rehearsal, parts: int, client: Group, timeout_s: float) -> None:
    """Wait for ``parts`` parts of the job to be written; fail if the client exits first."""
    wait_until(lambda: rehearsal.watch.poll() >= parts, f"{parts} parts", timeout_s, client)


def kill_client(rehearsal: Rehearsal, client: Group) -> None:
    """SIGKILL the census client mid-run and count what it left in its parts directory."""
    client.kill()
    client.process.wait()
    rehearsal.mark("client killed")
    rehearsal.parts_before_resume = rehearsal.watch.poll()
    rehearsal.partial_writes_left = rehearsal.watch.partial_writes()
    if rehearsal.parts_before_resume >= rehearsal.chunks:
        raise RehearsalFailed("the census wrote every part before its client was killed: rehearse a larger slice")


def resume(rehearsal: Rehearsal, client: Group, timeout_s: float) -> None:
    """Watch the rerun of the same command to its end; it must succeed and print the summary."""
    rehearsal.mark("resumed")
    give_up = time.monotonic() + timeout_s
    while (code := client.process.poll()) is None:
        rehearsal.watch.poll()
        if time.monotonic() > give_up:
            raise RehearsalFailed(f"the resumed census did not finish within {timeout_s:g} s")
        time.sleep(POLL_S)
    rehearsal.mark("done")
    if code != 0:
        raise RehearsalFailed(f"the resumed census exited with {code}:\n{client.tail()}")
    rehearsal.summary = json.loads(client.stdout.read_text())


# ---------------------------------------------------------------- verification


@dataclass
class Verification:
    """What was checked of a rehearsal's output, and what was wrong (nothing, normally)."""

    rows: int
    chunks_checked: int
    deals_checked: int
    unsolvable: int
    seconds: float
    problems: list[str]


def verify(rehearsal: Rehearsal, every_chunk: bool = False) -> Verification:
    """Check the output row by row against ``census_chunk`` run here, for a sample of chunks or every one."""
    started = time.perf_counter()
    table = pq.read_table(rehearsal.output, columns=CHECKED_COLUMNS)
    problems = seed_problems(table, rehearsal.seeds) + summary_problems(table, rehearsal)
    checked = chunks_to_check(rehearsal.chunks, every_chunk)
    deals = 0
    for index in checked:
        chunk = chunk_at(rehearsal, index)
        problems += chunk_problems(table, rehearsal.seeds, chunk)
        deals += chunk.stop - chunk.first
    unsolvable = int(pc.sum(pc.equal(table["status"], search.UNSOLVABLE)).as_py() or 0)
    return Verification(table.num_rows, len(checked), deals, unsolvable, time.perf_counter() - started, problems)


def seed_problems(table: pa.Table, seeds: range) -> list[str]:
    """Every seed once, in order, or what is wrong."""
    found = table["seed"].to_numpy()
    if np.array_equal(found, np.arange(seeds.start, seeds.stop)):
        return []
    repeated = len(found) - len(np.unique(found))
    missing = len(set(seeds) - set(found.tolist()))
    return [f"{len(found)} rows for {len(seeds)} seeds: {missing} missing, {repeated} repeated, or out of order"]


def summary_problems(table: pa.Table, rehearsal: Rehearsal) -> list[str]:
    """The JSON summary's range, deal count and unsolvable deals against the rows, or what differs."""
    seeds, summary = rehearsal.seeds, rehearsal.summary
    wanted = {"first": seeds.start, "last": seeds.stop - 1, "deals": len(seeds)}
    problems = [f"summary {k} is {summary.get(k)}, expected {v}" for k, v in wanted.items() if summary.get(k) != v]
    unsolvable = table.filter(pc.equal(table["status"], search.UNSOLVABLE)).select(["seed", "class", "nodes"])
    if summary.get("unsolvable") != unsolvable.to_pylist():
        problems.append("the summary's unsolvable deals differ from the output's")
    return problems


def chunks_to_check(chunks: int, every_chunk: bool) -> list[int]:
    """Every chunk, or ``SAMPLE_CHUNKS`` spread evenly from the first to the last."""
    if every_chunk or chunks <= SAMPLE_CHUNKS:
        return list(range(chunks))
    return sorted({round(i * (chunks - 1) / (SAMPLE_CHUNKS - 1)) for i in range(SAMPLE_CHUNKS)})


def chunk_at(rehearsal: Rehearsal, index: int) -> CensusChunk:
    """Chunk ``index`` of the job, as the census cut it."""
    first = rehearsal.seeds.start + index * rehearsal.chunk_size
    rows, cols = rehearsal.job["grid"]
    stop = min(first + rehearsal.chunk_size, rehearsal.seeds.stop)
    return CensusChunk(first, stop, rows, cols, rehearsal.job["algorithm"])


def chunk_problems(table: pa.Table, seeds: range, chunk: CensusChunk) -> list[str]:
    """The output's rows of ``chunk`` against ``census_chunk`` run here, or the first row that differs."""
    expected = census_chunk(chunk).select(CHECKED_COLUMNS).to_pylist()
    found = table.slice(chunk.first - seeds.start, chunk.stop - chunk.first).to_pylist()
    for row, want in zip(found, expected, strict=False):
        if row != want:
            return [f"seeds {chunk.first}:{chunk.stop}: found {row}, computed {want}"]
    if len(found) != len(expected):
        return [f"seeds {chunk.first}:{chunk.stop}: {len(found)} rows in the output, expected {len(expected)}"]
    return []


# ---------------------------------------------------------------- report


def steady_rate(mtimes: list[float], chunk_size: int) -> float | None:
    """Deals/s between the first and the last fifth of the parts written, by mtime; None below 5 parts."""
    if len(mtimes) < 5:
        return None
    ordered = sorted(mtimes)
    skip = len(ordered) // 5
    first, last = ordered[skip], ordered[-1 - skip]
    return (len(ordered) - 1 - 2 * skip) * chunk_size / (last - first) if last > first else None


def report(rehearsal: Rehearsal, verification: Verification | None) -> list[str]:
    """The figures of a rehearsal, and of its verification if there was one."""
    r = rehearsal
    total = r.seconds("start", "stopped") + (verification.seconds if verification else 0.0)
    lines = [
        f"census rehearsal: seeds {r.seeds.start}:{r.seeds.stop}, {len(r.seeds):,} deals in {r.chunks} chunks "
        f"of {r.chunk_size:,}; {r.workers} workers, scheduler {r.address}",
        phase_row("phase", "wall s", "parts", "steady deals/s", "workers"),
        phase_row("cluster start", f"{r.seconds('start', 'cluster up'):.1f}", workers=str(r.workers)),
        census_row(r, "census until a worker is SIGKILLed", "cluster up", "worker killed", r.workers),
        census_row(r, "census until its client is SIGKILLed", "worker killed", "client killed", r.workers - 1),
        census_row(r, "the same command again, to the end", "resumed", "done", r.workers - 1),
        phase_row("stop the cluster", f"{r.seconds('done', 'stopped'):.1f}"),
    ]
    if verification is not None:
        lines.append(phase_row(f"verify {verification.chunks_checked} chunks", f"{verification.seconds:.1f}"))
    lines.append(phase_row("total", f"{total:.1f}"))
    lines.append("workers alive: " + ", ".join(f"{count} {when}" for when, count in r.workers_alive.items()))
    lines.append(resume_line(r))
    if verification is not None:
        lines.append(verification_line(verification))
    gone = "all gone" if not r.survivors else f"STILL ALIVE: pids {r.survivors}"
    lines.append(f"processes: {len(r.pgids)} process groups started, {gone}")
    return lines


def phase_row(name: str, seconds: str, parts: str = "", rate: str = "", workers: str = "") -> str:
    return f"{name:<38}{seconds:>8}{parts:>8}{rate:>16}{workers:>9}"


def census_row(r: Rehearsal, name: str, start: str, stop: str, workers: int) -> str:
    """A phase of the census: its parts are those whose mtime falls in it."""
    mtimes = r.mtimes_between(start, stop)
    rate = steady_rate(mtimes, r.chunk_size)
    # The census removes its parts when it completes: the last few of the resume may never be seen.
    parts = r.solved_by_resume if start == "resumed" else len(mtimes)
    shown = "n/a" if rate is None else f"{rate:,.0f}"
    return phase_row(name, f"{r.seconds(start, stop):.1f}", str(parts), shown, str(workers))


def resume_line(r: Rehearsal) -> str:
    seen = sum(1 for t in r.watch.mtimes() if t >= r.marks["resumed"])
    return (
        f"parts: {r.parts_before_resume} of {r.chunks} present before the resume "
        f"({r.partial_writes_left} partial writes left behind); the resume solved {r.solved_by_resume} "
        f"({seen} seen as they were written); finished parts it rewrote: {len(r.watch.rewritten)}"
    )


def verification_line(v: Verification) -> str:
    if v.problems:
        return "verification FAILED:\n  " + "\n  ".join(v.problems[:10])
    return (
        f"verification: OK, {v.rows:,} seeds once each, in order; {v.chunks_checked} chunks "
        f"({v.deals_checked:,} deals) equal to census_chunk run here; the summary agrees ({v.unsolvable:,} unsolvable)"
    )


# ---------------------------------------------------------------- main


def seed_range(text: str) -> range:
    """``--seeds A:B``, with the census's own message when it is not a range."""
    try:
        return parse_seed_range(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def say(line: str) -> None:
    """A progress line, on stderr so that the figures on stdout stay clean."""
    print(f"rehearsal: {line}", file=sys.stderr, flush=True)


def stop_on_sigterm(signum: int, frame: FrameType | None) -> None:
    # SIGTERM must unwind through the finally blocks that stop the cluster, as Ctrl-C does.
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=seed_range, default="0:400000", help="seed range A:B (B excluded)")
    parser.add_argument("--workers", type=int, default=3, help="dask worker processes, one thread each (at least 2)")
    parser.add_argument("--chunk-size", type=int, default=DEFAULT_CHUNK_SIZE, help="deals per Dask task")
    parser.add_argument("--out", type=Path, default=Path("out/rehearsal"), help="output, parts and logs directory")
    parser.add_argument("--verify", choices=("sample", "all"), default="sample", help=f"{SAMPLE_CHUNKS} chunks, or all")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for each step")
    args = parser.parse_args(argv)
    try:
        check_options(args.seeds, args.workers, args.chunk_size)
    except ValueError as exc:
        parser.error(str(exc))
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    try:
        rehearsal = rehearse(args.seeds, args.workers, args.out, args.timeout, say, args.chunk_size)
    except RehearsalFailed as exc:
        print(f"rehearsal FAILED: {exc}\n(logs in {args.out / 'logs'})", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("rehearsal interrupted; every process it started is stopped", file=sys.stderr)
        return 130
    say(f"checking the output, and {'every chunk' if args.verify == 'all' else 'a sample'} against census_chunk here")
    verification = verify(rehearsal, every_chunk=args.verify == "all")
    print("\n".join(report(rehearsal, verification)))
    return 1 if verification.problems or rehearsal.survivors else 0


if __name__ == "__main__":
    sys.exit(main())
