"""A call's time and its stop: the budget it runs within, the one cancel flag, and the alarm that sets it.

Every search and loop of a call polls its ``CancelFlag``; the ``Alarm`` expires the
flag at the call's deadline, and an edge sets it when the call ends (cancelled,
client gone, server stopping). Times are ``time.perf_counter`` seconds.
"""

from __future__ import annotations

import heapq
import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class SolveBudget:
    """Limits of one call: nodes (or states), and seconds counted from the call's arrival (``arrived``).

    ``arrived`` is on ``time.perf_counter``'s clock; a call that waited for a
    thread or a slot has that much less time left to search.
    """

    max_nodes: int
    time_limit_s: float
    arrived: float = field(default_factory=time.perf_counter)

    @property
    def deadline(self) -> float:
        """When the time limit runs out (``time.perf_counter`` seconds)."""
        return self.arrived + self.time_limit_s

    def seconds_left(self) -> float:
        """Seconds until ``deadline``; 0 once past."""
        return max(self.deadline - time.perf_counter(), 0.0)

    def search_seconds(self) -> float:
        """The time limit to hand a search or walk now: ``seconds_left``, at least 1 ms (a limit of 0 means none)."""
        return max(self.seconds_left(), 1e-3)


class CancelFlag:
    """Stops a running search from another thread: ``set()`` and the kernel returns at its next node.

    ``expire()`` sets it because the time limit ran out (``expired`` then says so).
    """

    def __init__(self) -> None:
        self.array = np.zeros(1, dtype=np.int64)  # the kernel polls element 0 without the GIL
        self.expired = False

    def set(self) -> None:
        """Ask the search to stop (safe from any thread, any number of times)."""
        self.array[0] = 1

    def expire(self) -> None:
        """Stop the search because its time limit ran out."""
        self.expired = True
        self.set()

    def is_set(self) -> bool:
        """True once ``set()`` has been called."""
        return bool(self.array[0])


class Alarm:
    """One thread that expires ``CancelFlag``s at their deadlines.

    Every search and loop polls its flag, so the flag is the one signal that
    stops a request at its time limit, whichever kernel or loop it is in (the
    kernels read the clock only every thousand nodes, which can be seconds on
    52-card grids).
    """

    def __init__(self) -> None:
        self._due: list[tuple[float, int, CancelFlag]] = []
        self._count = 0
        self._changed = threading.Condition()
        self._wakes_at = math.inf  # when the thread next looks by itself: a later deadline needs no wake-up
        threading.Thread(target=self._run, name="boaf-alarm", daemon=True).start()

    @contextmanager
    def armed(self, flag: CancelFlag, deadline: float) -> Iterator[CancelFlag]:
        """Expire ``flag`` at ``deadline`` (``time.perf_counter`` seconds) unless the block has ended."""
        with self._changed:
            self._count += 1
            entry = (deadline, self._count, flag)
            heapq.heappush(self._due, entry)
            if deadline < self._wakes_at:
                self._changed.notify()
        try:
            yield flag
        finally:
            with self._changed:
                if entry in self._due:
                    self._due.remove(entry)
                    heapq.heapify(self._due)

    def cancel_all(self) -> None:
        """Set every armed flag now (as a cancel, not a time limit): the server is stopping."""
        with self._changed:
            for _, _, flag in self._due:
                flag.set()

    def _run(self) -> None:
        with self._changed:
            while True:
                now = time.perf_counter()
                while self._due and self._due[0][0] <= now:
                    heapq.heappop(self._due)[2].expire()
                self._wakes_at = self._due[0][0] if self._due else math.inf
                self._changed.wait(None if not self._due else self._due[0][0] - now)
