"""What stops an analysis or a generation: a deadline, a cancel flag and a node budget per search.

Deadlines are on ``time.perf_counter``'s clock, ``None`` for none. A time limit
handed on to a callee is never below ``MIN_TIME_LIMIT_S``, since 0 there means
no limit at all.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from boaf.puzzles.errors import AnalysisStopped
from boaf.search import SOLVABLE, UNKNOWN, solve_many

MIN_TIME_LIMIT_S = 1e-3


def deadline_after(time_limit: float | None) -> float | None:
    """The deadline ``time_limit`` seconds from now; ``None`` without a limit (``None`` or 0)."""
    return time.perf_counter() + time_limit if time_limit else None


def seconds_left(deadline: float | None) -> float | None:
    """Seconds to ``deadline``, at least ``MIN_TIME_LIMIT_S``; ``None`` without a deadline."""
    return None if deadline is None else max(deadline - time.perf_counter(), MIN_TIME_LIMIT_S)


def check_stop(
    deadline: float | None, cancel: np.ndarray | None, *, task: str = "analysis", doing: str = "estimating"
) -> None:
    """Raise ``AnalysisStopped`` once ``cancel[0]`` is set or ``deadline`` has passed.

    The messages are ``"{task} cancelled"`` and ``"time limit ran out while {doing}"``.
    """
    if cancel is not None and cancel[0] != 0:
        raise AnalysisStopped(f"{task} cancelled")
    if deadline is not None and time.perf_counter() > deadline:
        raise AnalysisStopped(f"time limit ran out while {doing}")


@dataclass(frozen=True)
class SearchLimits:
    """What stops the searches and walks of one estimate or generation: a deadline, a cancel flag, a node budget.

    ``deadline`` is on ``time.perf_counter``'s clock (None: none); ``cancel`` an
    ``int64[1]`` flag another thread may set; ``max_nodes`` each search's node
    budget (None: none), which also bounds its memory (the memo grows with nodes).
    """

    deadline: float | None = None
    cancel: np.ndarray | None = None
    max_nodes: int | None = None

    def seconds_left(self) -> float | None:
        """Seconds to the deadline (at least 1 ms), or None without one."""
        return seconds_left(self.deadline)

    def check(self) -> None:
        """Raise ``AnalysisStopped`` once cancelled or past the deadline."""
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            raise AnalysisStopped("time limit ran out while estimating")
        check_stop(self.deadline, self.cancel)

    def over_budget(self) -> str:
        """Why a search came back unknown when neither the deadline nor the flag stopped it."""
        return "stopped" if self.max_nodes is None else f"took more than {self.max_nodes:,} nodes (the search budget)"

    def count_solvable(self, cells: np.ndarray, rows: int, cols: int) -> int:
        """Solvable rows of ``cells`` (``int8[n, rows*cols]``); ``AnalysisStopped`` if any search is cut short."""
        # A batch's time limit applies to each state, so under a deadline the states go one at a time
        # (~30 µs a call), each within the time left.
        chunks = [cells] if self.deadline is None else np.split(cells, cells.shape[0])
        solvable = 0
        for chunk in chunks:
            batch = solve_many(
                chunk,
                rows=rows,
                cols=cols,
                max_nodes=self.max_nodes,
                time_limit=self.seconds_left(),
                cancel=self.cancel,
            )
            if UNKNOWN in batch.status:
                self.check()
                raise AnalysisStopped(f"a sampled state {self.over_budget()}")
            solvable += batch.status.count(SOLVABLE)
        return solvable
