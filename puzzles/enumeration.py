"""The reachable states of a root, level by level, from the compiled kernel."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from game import State
from game.arrays import state_to_array
from puzzles import kernel
from puzzles.errors import AnalysisStopped, InvalidPuzzleRequest
from search import kernel as search_kernel


@dataclass(frozen=True)
class Enumeration:
    """Distinct states reachable from a root, grouped by depth (moves played).

    ``cells[level_start[d]:level_start[d+1]]`` are the states of depth ``d``
    (``int8`` top cards, -1 empty). ``complete_depths`` levels were finished;
    when that is every depth, ``complete`` is true and (if asked for) ``edges``
    hold each state's children in ``legal_moves`` order, CSR-style via ``edge_start``.
    """

    rows: int
    cols: int
    depths: int
    cells: np.ndarray
    level_start: np.ndarray
    edge_start: np.ndarray
    edges: np.ndarray
    complete: bool

    @property
    def complete_depths(self) -> int:
        """How many depths (from 0) are fully enumerated."""
        finished = [d for d in range(self.depths) if self.level_start[d + 1] >= 0]
        return len(finished)

    def level(self, depth: int) -> np.ndarray:
        """The states of ``depth`` as an ``int8`` array ``(n, rows*cols)``; the depth must be complete."""
        return self.cells[self.level_start[depth] : self.level_start[depth + 1]]

    def level_size(self, depth: int) -> int:
        """Distinct states at ``depth`` (a complete depth)."""
        return int(self.level_start[depth + 1] - self.level_start[depth])


def enumerate_states(
    state: State,
    max_states: int | None = None,
    *,
    keep_edges: bool = True,
    time_limit: float | None = None,
    cancel: np.ndarray | None = None,
) -> Enumeration:
    """Enumerate every state reachable from ``state``, stopping once ``max_states`` states are kept.

    ``time_limit`` is in seconds; ``cancel`` an ``int64[1]`` flag another thread may
    set. Either one stopping the walk raises ``AnalysisStopped``; the budget does not.
    """
    if max_states is not None and (isinstance(max_states, bool) or not isinstance(max_states, int) or max_states < 1):
        raise InvalidPuzzleRequest(f"budget must be a positive number of states, got {max_states!r}")
    depths = state.n_stacks
    flag = np.zeros(1, dtype=np.int64) if cancel is None else cancel
    deadline = search_kernel.now_s() + time_limit if time_limit else 0.0
    status, cells, level_start, edge_start, edges = kernel.enumerate_levels(
        state_to_array(state), _compat(), _line(state.rows, state.cols), depths, max_states or 0,
        keep_edges, deadline, flag,
    )  # fmt: skip
    if status == kernel.OUT_OF_TIME:
        raise AnalysisStopped(f"time limit of {time_limit} s ran out while enumerating states")
    if status == kernel.CANCELLED:
        raise AnalysisStopped("analysis cancelled")
    complete = status == kernel.COMPLETE
    return Enumeration(state.rows, state.cols, depths, cells, level_start, edge_start, edges, complete)


@cache
def _compat() -> np.ndarray:
    return search_kernel.compat_table()


@cache
def _line(rows: int, cols: int) -> np.ndarray:
    return search_kernel.line_table(rows, cols)
