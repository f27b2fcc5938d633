"""Giving memory back after large calls: glibc's ``malloc_trim``, once a burst is over.

glibc keeps what a burst freed in its heaps (one per thread that allocated), and a
call that failed keeps its parsed request in a reference cycle until the cyclic
collector runs, which an idle server never triggers; so an idle server would stay
near its peak RSS: a burst of maximum-size HTTP batches cut by their deadline left
it at twice its idle RSS. The trim collects first, then trims. Any call that held a large request or answer (both edges,
by request size; the data plane, by states; every puzzle call) asks
``give_memory_back_soon()``; one background thread trims ``TRIM_DELAY_S`` after
the last ask, so no call waits for it and a burst gets one trim. Elsewhere than
glibc (musl, macOS) it does nothing.

Some requests are refused where no boaf code runs after them (gRPC core's own size
refusal), and any path may forget to ask; so the same thread also watches the RSS
every ``WATCH_EVERY_S``: once ``settle_heap`` has taken the idle RSS (after the warm-up,
and again after the background kernels), an RSS past ``ABOVE_IDLE`` times it is
trimmed (again only when it grew by that much since the last trim, or
``RETRIM_EVERY_S`` later: memory that calls still hold is not trimmed over and over).
So whatever a burst held, refused requests included, is given back within seconds of
its end.

``bound_heap`` (called by ``boaf serve`` as it starts) bounds glibc's heaps the way
``MALLOC_ARENA_MAX`` and ``MALLOC_MMAP_THRESHOLD_`` would, which must be set before a
process starts: at most ``ARENAS`` heaps, and every block of ``MMAP_THRESHOLD_BYTES``
or more in a mapping of its own, unmapped when freed (glibc would otherwise raise that
threshold to the largest block freed, up to 32 MiB, keeping a burst's large requests
in its heaps).

A model reload (``boaf.service.core.reload``) holds two models for a while: ``check_reload_fits``
counts the second one against ``BOAF_MEMORY_LIMIT_MB`` before it is loaded.
"""

from __future__ import annotations

import ctypes
import gc
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from boaf.service.core.settings import MIB, Settings, env_name

TRIM_DELAY_S = 0.5  # how long after a large call the heap is trimmed (a burst gets one trim)
TRIM_EVERY_S = 2.0  # at most one collect-and-trim this often
LARGE_REQUEST_BYTES = 256 * 1024  # a request this large asks for a trim when its call ends
WATCH_EVERY_S = 2.0  # how often the trimmer reads the RSS when nobody asked
ABOVE_IDLE = 1.1  # an RSS past this many times the idle RSS is trimmed ...
RETRIM_EVERY_S = 30.0  # ... again after this long, or sooner when it grew by ABOVE_IDLE since the last trim
ARENAS = 4  # glibc heaps at most (its default: 8 per core; each keeps what its threads freed)
MMAP_THRESHOLD_BYTES = 128 * 1024  # blocks this large are mapped apart and unmapped when freed (glibc's start value)
M_MMAP_THRESHOLD, M_ARENA_MAX = -3, -8  # mallopt's parameters (malloc.h)


class MemoryReturn:
    """The background trimmer of the module notes."""

    def __init__(self) -> None:
        self._trim = _malloc_trim()
        self._due = threading.Event()
        self._started = False
        self._lock = threading.Lock()
        self._idle_rss = 0  # bytes, once settled; 0: not watching
        self.trims = 0  # how many times it has trimmed (for tests)

    def soon(self) -> None:
        """Ask for a trim soon (cheap; a burst of calls gets one trim after it)."""
        if self._start():
            self._due.set()

    def watch(self) -> None:
        """Take the RSS now as the idle RSS, and trim whenever the RSS is well past it (module notes)."""
        self._idle_rss = rss_bytes()
        self._start()

    def _start(self) -> bool:
        if self._trim is None:
            return False
        with self._lock:
            if not self._started:
                threading.Thread(target=self._run, name="boaf-memory-return", daemon=True).start()
                self._started = True
        return True

    def _run(self) -> None:
        last, after_last = -TRIM_EVERY_S, 0
        while True:
            if self._due.wait(WATCH_EVERY_S):
                # The rest of a burst ends meanwhile, and asks for the same trim.
                time.sleep(max(TRIM_DELAY_S, last + TRIM_EVERY_S - time.monotonic()))
            elif not self._past_idle(after_last, time.monotonic() - last):
                continue
            self._due.clear()
            last = time.monotonic()
            self._collect_and_trim()
            after_last = rss_bytes()

    def _past_idle(self, after_last: int, since_last_s: float) -> bool:
        if not self._idle_rss:
            return False
        rss = rss_bytes()
        if rss <= ABOVE_IDLE * self._idle_rss:
            return False
        return rss > ABOVE_IDLE * after_last or since_last_s >= RETRIM_EVERY_S

    def trim_now(self) -> None:
        """Collect and trim in this thread, now (nothing off glibc)."""
        if self._trim is not None:
            self._collect_and_trim()

    def _collect_and_trim(self) -> None:
        assert self._trim is not None
        # A call that failed keeps its request alive in a cycle (exception, traceback, frame, exception)
        # that only the cyclic collector frees, and an idle server never triggers it: collect, then trim.
        gc.collect()
        self._trim(0)
        self.trims += 1


def rss_bytes() -> int:
    """This process's resident memory now, in bytes (0 where ``/proc`` has no ``statm``)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def bound_heap() -> bool:
    """Bound glibc's heaps (module notes): ``ARENAS`` at most, large blocks unmapped when freed; False off glibc.

    Takes effect for heaps made from now on: called first thing when a server starts.
    """
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False  # not glibc
    return bool(mallopt(M_ARENA_MAX, ARENAS)) and bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES))


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(None)
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):
        return None  # not glibc: nothing to trim with
    return trim


MEMORY = MemoryReturn()  # one per process: the heaps are the process's


def settle_heap() -> None:
    """Collect, then move every object alive now (modules, numba's and onnxruntime's) out of the collector's sight.

    Called once the server has warmed up (and again after the background kernels), so
    that a full collection later scans only what calls made since: ~1 ms instead of
    the ~0.1-0.2 s it takes over a loaded server's 130,000 objects (``gc.freeze``).
    The RSS then is the idle RSS the trimmer watches against (module notes).
    """
    gc.collect()
    gc.freeze()
    MEMORY.trim_now()
    MEMORY.watch()


def give_memory_back_soon() -> None:
    """Trim the C heap once the calls under way have ended (``TRIM_DELAY_S`` after the last ask)."""
    MEMORY.soon()


MODEL_BYTES_PER_FILE_BYTE = 16  # a second copy of the committed model (1.9 MB of ONNX) added 22.5 MiB of RSS: 12x


class ReloadRefused(Exception):
    """A new model version would not fit in ``BOAF_MEMORY_LIMIT_MB`` beside the served one."""


def model_memory_mb(directory: Path) -> int:
    """The memory a loaded copy of the model in ``directory`` holds, in MiB (from its ONNX file's size)."""
    onnx = directory / "classifier.onnx"
    size = onnx.stat().st_size if onnx.is_file() else 0
    return -(-size * MODEL_BYTES_PER_FILE_BYTE // MIB)


def reload_memory_mb(settings: Settings, directory: Path) -> dict[str, int]:
    """``Settings.worst_case_memory_mb`` while a reload holds two models: the parts, ``reload`` (the model in
    ``directory``, loading beside the served one, which ``base`` counts) and their ``total``, in MiB."""
    parts = {part: mb for part, mb in settings.worst_case_memory_mb().items() if part != "total"}
    parts["reload"] = model_memory_mb(directory)
    return {**parts, "total": sum(parts.values())}


def check_reload_fits(settings: Settings, directory: Path) -> None:
    """Raise ``ReloadRefused`` when the limits' worst case with a second model exceeds the memory limit."""
    need = reload_memory_mb(settings, directory)
    if need["total"] > settings.memory_limit_mb:
        sums = ", ".join(f"{part} {mb:,}" for part, mb in need.items() if part != "total")
        raise ReloadRefused(
            f"{directory.name}: a reload holds two models at once, and the limits then need up to "
            f"{need['total']:,} MiB ({sums}), past {env_name('memory_limit_mb')}={settings.memory_limit_mb:,}; "
            "lower the limits or raise the memory limit, or restart to serve it"
        )
