"""Compiling the numba kernels: once, before any request needs them, in parallel, and said so in the log.

numba compiles a kernel on its first call and keeps the machine code in its
cache (``NUMBA_CACHE_DIR``, or ``__pycache__`` beside the sources), so only the
first start on a machine pays: 40-110 s of CPU on the 2-core CI machine, against
well under a second to load the cache. The kernels fall into ``UNITS``, each
compiled by running a little real work through the public API of its package:

- ``search``, ``features`` and ``progress`` are what Classify, Solve and
  Features run; the server compiles them before it reports SERVING, with
  ``search_late``: kernels the search calls, compiled beside it so that its
  child (the start's longest) loads them from the cache instead.
- ``best_n`` (Solve with BEST_N, a rarely used algorithm: its search is a
  compiled entry point of its own, as big as the DFS one), ``islands`` (Solve
  with ISLAND_MERGE: a copy of the DFS search of its own, typed by its
  ``Config``, so that the served copy holds none of its code) and ``puzzles``
  (AnalyzePuzzle, GeneratePuzzle) compile in the background once the server is
  SERVING; until then those calls get UNAVAILABLE ("compiling, retry") with a
  retry hint. No compile ever runs inside a request.

When a unit is not in the cache, ``prepare`` compiles the cold units in parallel
child processes (``python -m boaf.service.core.warmup UNIT...``; each fills the shared cache),
one a core: the first unit alone, the others shared in order (``_groups``), and loads each
unit in this process from the cache as soon as its child says it is done
(the puzzle RPCs need not wait for Island Merge's compile). The children report
each kernel they compiled and its time, which this process logs, once per kernel; it also logs
how many units are done (``compiling kernels: 2 of 4 units done, 14 s``) as each ends and at least
every ``PROGRESS_EVERY_S``. The notice ``COMPILING`` comes first, before any kernel compiles.
Compile time is never charged to any request's budget, nor to the warm-up's
correctness checks (``DataPlane.warm_up`` starts their budget afterwards).
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from importlib import import_module

import numba
import numpy as np

from boaf import features, puzzles, search
from boaf.features.children import child_matrix
from boaf.game.arrays import state_to_array
from boaf.game.deals import deal
from boaf.game.state import State
from boaf.puzzles.generation import generate
from boaf.search import kernel
from boaf.search.progress import warm_up_progress
from boaf.search.tables import compat_table, kernel_config, line_table
from boaf.service.core.compile_log import COMPILING, Compiled, CompileProgress, CompileRecorder

log = logging.getLogger(__name__)

BEST_N = "best-n"
ISLAND_MERGE = "island-merge"

RETRY_AFTER_S = 5
"""The retry hint a call gets while the kernels it needs are compiling."""

PROGRESS_EVERY_S = 5.0
"""While units compile, the longest the log stays silent: it says how many units are done, and the seconds."""


@dataclass(frozen=True)
class Unit:
    """A group of kernels compiled together by running ``run`` (little work, through the public API).

    ``entries`` are the compiled functions ``run`` calls from Python, as
    ``module:attribute``; the unit is cached when all of them are, each with a
    signature that holds the text ``signature()`` names (when given: one copy
    of a function among several, such as the search's copy for one ``Config``).
    """

    name: str
    entries: tuple[str, ...]
    run: Callable[[], None]
    at_start: bool
    small: bool = False  # compiled in this process (under a second): not worth a child process
    signature: Callable[[], str] | None = None


def _run_game() -> None:

    deal(1)


def _run_search() -> None:
    # First a grid past 16 cells, which has no cell cut table: the search compiles at once, while the progress
    # unit's process compiles that table's kernel (``boaf.game.graph.cell_cut_table``, ~1 s) beside it.
    search.solve(deal(3, rows=4, cols=13), max_nodes=200)  # wide grids size their tables from Python
    state = deal(367297990)
    for algorithm in search.ALGORITHMS:  # every served DFS algorithm's options run through the same kernels
        if algorithm not in (BEST_N, ISLAND_MERGE):
            search.solve(state, algorithm=algorithm, max_nodes=200)
    search.solve(state, threads=2, max_nodes=200)
    search.solve_many([state, deal(1)], max_nodes=200)


def _config_type(algorithm: str) -> Callable[[], str]:
    """The numba type of ``algorithm``'s ``Config`` as text: which copy of the DFS search it runs."""

    def text() -> str:
        config = kernel_config(search.algorithm_named(algorithm), search.default_ordering())
        return str(numba.typeof(config))  # type: ignore[no-untyped-call]

    return text


def _run_islands() -> None:
    state = deal(367297990)
    search.solve(state, algorithm=ISLAND_MERGE, max_nodes=200)
    search.solve(state, algorithm=ISLAND_MERGE, threads=2, max_nodes=200)
    search.solve_many([state, deal(1)], algorithm=ISLAND_MERGE, max_nodes=200)
    search.solve(deal(3, rows=4, cols=13), algorithm=ISLAND_MERGE, max_nodes=200)


def _run_best_n() -> None:
    state = deal(367297990)
    search.solve(state, algorithm=BEST_N, max_nodes=200)
    search.solve(state, algorithm=BEST_N, threads=2, max_nodes=200)
    search.solve_many([state, deal(1)], algorithm=BEST_N, max_nodes=200)


def _run_search_late() -> None:
    # Kernels ``dfs`` calls: compiled in a child of their own beside the search's, each is in the cache by the time
    # that child types the call if it comes late enough, and is loaded (not compiled) there. The scratch's first
    # (``dfs`` types ``new_scratch`` some 2.5 s in: a race this child wins or loses at no cost), then what ``dfs``
    # calls after typing its loop (``_search``, some 18 s in): the caches' and the memo's growth, the root's open
    # blocks. ~3 s off the search's child, the start's longest.
    kernel.grown_scratch(kernel.new_scratch(np.int64(4), np.int64(4)))
    kernel.grown_memo(kernel.new_memo(16, capacity=4), 1)
    kernel.open_block_stuck(state_to_array(deal(-115618)), compat_table(), line_table(4, 4))
    budget = kernel.Budget(0, 0.0, np.zeros(1, dtype=np.int64), 0)
    kernel.gather_refutes(state_to_array(deal(1163)), compat_table(), line_table(4, 4), budget, np.int64(1024), False)


def _run_features() -> None:

    features.feature_matrix([deal(1), deal(2, rows=4, cols=13)])
    child_matrix(state_to_array(deal(1))[None, :], 4, 4)  # the models that read the states one move down


def _run_progress() -> None:

    warm_up_progress()


def _run_puzzles() -> None:

    three = State.from_cells(1, 3, [0, 4, 8])  # AC 2C 3C in a row
    puzzles.analyze(three)
    puzzles.analyze(deal(367297990, rows=2, cols=3), budget=2, samples=2)
    generate(cards=4, seed=1)


SEARCH_ENTRIES = ("boaf.search.kernel.batch:search_states",)
SEARCH_LATE_ENTRIES = (
    "boaf.search.kernel.bundles:new_scratch",
    "boaf.search.kernel.bundles:grown_scratch",
    "boaf.search.kernel.memo:grown_memo",
    "boaf.search.kernel.open_blocks:open_block_stuck",
    "boaf.search.kernel.gather:gather_refutes",
)
UNITS: tuple[Unit, ...] = (
    # First: the Game RPCs answer while the rest compiles, and dealing is the one kernel they use.
    Unit("game", ("boaf.game.bits:shuffled_cells",), _run_game, at_start=True, small=True),
    Unit("search", SEARCH_ENTRIES, _run_search, at_start=True, signature=_config_type(search.DEFAULT_ALGORITHM)),
    Unit("search_late", SEARCH_LATE_ENTRIES, _run_search_late, at_start=True),
    Unit(
        "features",
        ("boaf.features.compiled:batch_kernel", "boaf.features.children:children_kernel"),
        _run_features,
        at_start=True,
    ),
    Unit("progress", ("boaf.search.kernel.progress:progress_batch",), _run_progress, at_start=True),
    Unit(
        "best_n",
        ("boaf.search.kernel.best_n:best_n", "boaf.search.kernel.batch:best_n_batch"),
        _run_best_n,
        at_start=False,
    ),
    Unit(
        "puzzles",
        ("boaf.puzzles.compiled_enumeration:enumerate_groups", "boaf.puzzles.compiled_enumeration:label_groups"),
        _run_puzzles,
        at_start=False,
    ),
    # Last: Island Merge is the rarest call, and its copy of the search takes a core for as long as ``search``.
    Unit("islands", SEARCH_ENTRIES, _run_islands, at_start=False, signature=_config_type(ISLAND_MERGE)),
)
UNIT_NAMES = tuple(unit.name for unit in UNITS)
LATER_ALGORITHMS = {BEST_N: "best_n", ISLAND_MERGE: "islands"}
"""The Solve algorithms whose search compiles after SERVING, and the unit each needs."""


def unit_named(name: str) -> Unit:
    """The unit called ``name``; ``KeyError`` names the known ones."""
    for unit in UNITS:
        if unit.name == name:
            return unit
    raise KeyError(f"no kernel unit {name!r}; the units are {', '.join(UNIT_NAMES)}")


def is_cached(unit: Unit) -> bool:
    """True when numba's cache holds every entry kernel of ``unit`` for this code and this CPU target.

    Reads numba's cache index (internals: any surprise there reads as "not cached",
    which costs only a child process that finds everything in the cache).
    """
    text = unit.signature() if unit.signature is not None else ""
    return all(_entry_cached(entry, text) for entry in unit.entries)


def _entry_cached(entry: str, text: str) -> bool:
    module, name = entry.split(":")
    dispatcher = getattr(import_module(module), name)
    try:
        cache = dispatcher._cache
        codegen = dispatcher.targetctx.codegen()
        index = cache._cache_file._load_index()
        return any(key == cache._index_key(key[0], codegen) and text in str(key[0]) for key in index)
    except Exception:
        return False


@dataclass
class Kernels:
    """Which units are compiled and loaded in this process; ``prepare`` and ``prepare_later`` fill it.

    ``progress`` is the running compile's count of units (``None`` when no compile runs).
    """

    ready: set[str]
    compiled: list[Compiled]
    progress: CompileProgress | None = None

    def __init__(self) -> None:
        self.ready = set()
        self.compiled = []
        self.progress = None
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._children: set[subprocess.Popen[str]] = set()

    def stop(self) -> None:
        """Start no more compile processes, and end this server's running ones (the server is stopping)."""
        self._stopped.set()
        _terminate(self._children)

    def is_ready(self, name: str) -> bool:
        """True once unit ``name`` is loaded here: calls that need it run no compile."""
        with self._lock:
            return name in self.ready

    def prepare(
        self, units: Sequence[Unit], *, parallel: int | None = None, on_stage: Callable[[str], None] = print
    ) -> float:
        """Compile (in child processes) the units not in the cache and load them all here; returns the seconds.

        A compiled unit is loaded (and ready) as soon as its child ends, the others after the children.

        ``on_stage`` hears what is happening, once, when compiling starts.
        """
        started = time.perf_counter()
        recorder = CompileRecorder(self._log_compiled)
        cold = [unit for unit in units if not is_cached(unit)]
        with recorder.recording():
            if cold:  # said before any kernel compiles, a small unit's here included
                on_stage(COMPILING)
            for unit in units:
                if unit.small:
                    self._load(unit)
            in_children = [unit for unit in cold if not unit.small]
            if in_children:  # each loaded once compiled
                self._compile_in_children(in_children, parallel or _default_parallel(), started)
            for unit in units:
                if not unit.small and not self.is_ready(unit.name):
                    self._load_unless_stopped(unit)
        self.compiled += recorder.compiled
        return time.perf_counter() - started

    def _load_unless_stopped(self, unit: Unit) -> None:
        # Stopped: the children were ended, so loading would compile here, and a process that exits while this
        # thread is inside LLVM aborts. The stop waits only for the loader's next stage.
        if not self._stopped.is_set():
            self._load(unit)

    def _load(self, unit: Unit) -> None:
        started = time.perf_counter()
        unit.run()
        with self._lock:
            self.ready.add(unit.name)
        log.debug("kernels loaded", extra={"unit": unit.name, "seconds": round(time.perf_counter() - started, 3)})

    def _compile_in_children(self, units: Sequence[Unit], parallel: int, started: float) -> None:
        # The children of ``_groups``, side by side. Each unit is loaded here as soon as its child says it is
        # compiled: a quick unit's calls need not wait for a slow one's compile, nor for the rest of its child.
        named = {unit.name: unit for unit in units}

        def compile_group(group: Sequence[Unit]) -> None:
            if self._stopped.is_set():
                return
            names = [unit.name for unit in group]
            _compile_in_child(
                names, self._child_compiled, self._children, lambda name: self._load_unless_stopped(named[name])
            )
            for unit in group:  # what a failed child did not compile is compiled here
                if not self.is_ready(unit.name):
                    self._load_unless_stopped(unit)

        groups = _groups(units, parallel)
        self.progress = CompileProgress(0, len(units))
        said, said_at = 0, time.perf_counter()
        try:
            with ThreadPoolExecutor(max_workers=len(groups)) as pool:
                pending = {pool.submit(compile_group, group) for group in groups}
                while pending:  # a line as each unit ends, and at least every PROGRESS_EVERY_S: no long silence
                    done, pending = wait(pending, timeout=min(PROGRESS_EVERY_S, 0.25), return_when=FIRST_COMPLETED)
                    for future in done:
                        future.result()
                    ready = sum(self.is_ready(unit.name) for unit in units)
                    now = time.perf_counter()
                    if ready != said or now - said_at >= PROGRESS_EVERY_S or not pending:
                        self.progress = CompileProgress(ready, len(units))
                        _log_progress(self.progress, now - started)
                        said, said_at = ready, now
        finally:
            self.progress = None

    def _child_compiled(self, compiled: Compiled) -> None:
        with self._lock:
            self.compiled.append(compiled)
        self._log_compiled(compiled)

    def _log_compiled(self, compiled: Compiled) -> None:
        log.info(
            f"compiled kernel {compiled.kernel} in {compiled.seconds:.1f} s",
            extra={"kernel": compiled.kernel, "seconds": round(compiled.seconds, 2)},
        )


def _log_progress(progress: CompileProgress, seconds: float) -> None:
    log.info(
        f"compiling kernels: {progress.done} of {progress.total} units done, {seconds:.0f} s",
        extra={"units_done": progress.done, "units": progress.total, "seconds": round(seconds, 1)},
    )


def _groups(units: Sequence[Unit], parallel: int) -> list[list[Unit]]:
    """The units' child processes, in order: one a unit when there are enough cores for them all; otherwise
    the first (the longest, ``search``) alone and the others dealt in order among the other ``parallel - 1``.

    Each child costs an interpreter and numba's import (about 1.5 s of a core), and on 2 cores the units
    beside the search, one child each, made the longer line of the first start.
    """
    if parallel <= 1 or len(units) <= parallel:
        return [[unit] for unit in units]
    rest = list(units[1:])
    size = -(-len(rest) // (parallel - 1))
    return [[units[0]]] + [rest[i : i + size] for i in range(0, len(rest), size)]


def _default_parallel() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


_children: set[subprocess.Popen[str]] = set()
_children_lock = threading.Lock()


def _terminate(children: set[subprocess.Popen[str]]) -> None:
    with _children_lock:
        for child in children:
            child.terminate()


atexit.register(_terminate, _children)  # a child must not go on compiling for a process that has gone


def _compile_in_child(
    names: Sequence[str],
    on_compiled: Callable[[Compiled], None],
    running: set[subprocess.Popen[str]] | None = None,
    on_unit: Callable[[str], None] | None = None,
) -> bool:
    """Run ``python -m boaf.service.core.warmup NAME...``, hearing each kernel as it compiles and each unit
    (``on_unit``) once all of its kernels are in the cache; False when it failed.

    A child that fails (no cache directory it can write, say) costs nothing but
    its time: the parent then compiles what is missing itself, and logs it.
    """
    name = " ".join(names)
    command = [sys.executable, "-m", "boaf.service.core.warmup", *names]
    with tempfile.TemporaryFile("w+") as stderr:  # a file, not a pipe: a chatty child cannot block on it
        with _children_lock:
            try:
                child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True)
            except OSError as exc:
                log.warning("could not compile kernels in a child process", extra={"unit": name, "error": str(exc)})
                return False
            _children.add(child)
            if running is not None:
                running.add(child)
        assert child.stdout is not None
        try:
            with child:
                for line in child.stdout:
                    if line.startswith("{"):
                        report = json.loads(line)
                        if "unit" in report:
                            if on_unit is not None:
                                on_unit(report["unit"])
                        else:
                            on_compiled(Compiled(report["kernel"], float(report["seconds"])))
        finally:
            with _children_lock:
                _children.discard(child)
                if running is not None:
                    running.discard(child)
        stderr.seek(0)
        errors = stderr.read()
    if child.returncode != 0:
        tail = errors.strip().splitlines()[-1:] or ["(no output)"]
        log.warning("a kernel compile process failed", extra={"unit": name, "error": tail[0][:200]})
        return False
    return True


def main(argv: Sequence[str]) -> int:
    """``python -m boaf.service.core.warmup UNIT...``: compile the units into numba's cache, one JSON line a kernel
    and one a unit once it is done."""
    recorder = CompileRecorder(
        lambda c: print(json.dumps({"kernel": c.kernel, "seconds": round(c.seconds, 3)}), flush=True)
    )
    with recorder.recording():
        for name in argv:
            unit_named(name).run()
            print(json.dumps({"unit": name}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
