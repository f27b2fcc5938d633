"""Exact solving: one state (``solve``) or many in one kernel call (``solve_many``, ``solve_deals``).

Every answer's status is a ``Status``: ``solvable``, ``unsolvable`` or ``unknown``
(a node budget or time limit ran out, or the search was cancelled). An unsolvable answer carries the
reason, read off the root's compatibility graph G: ``odd_bird`` when a card is
compatible with no other, ``separated_flock`` when G is disconnected without
odd birds, and ``exhausted`` when G is connected and only search could tell.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from typing import Any, TypedDict, Unpack

import numpy as np

from boaf.game import State
from boaf.game.arrays import state_to_array, states_to_array
from boaf.game.bits import shuffled_cells
from boaf.game.errors import IllegalMove
from boaf.game.validation import check_positive_int
from boaf.search import kernel
from boaf.search.algorithms import DEFAULT_ALGORITHM, Algorithm, algorithm_named
from boaf.search.errors import InvalidBudget, SolutionCheckFailed
from boaf.search.ordering import OrderingModel, default_ordering
from boaf.search.restarts import restarts_help, solve_restarting
from boaf.search.tables import compat_table, grid_tables, kernel_config, line_table
from boaf.search.threads import solve_split


class Status(StrEnum):
    """The status of an answer; each member is its own text (``"solvable"``), as JSON, CLI and Parquet show it."""

    SOLVABLE = "solvable"
    UNSOLVABLE = "unsolvable"
    UNKNOWN = "unknown"  # a node, time or memory budget ran out, or the search was cancelled


SOLVABLE, UNSOLVABLE, UNKNOWN = Status.SOLVABLE, Status.UNSOLVABLE, Status.UNKNOWN
_KERNEL_STATUS = {
    kernel.SOLVABLE: SOLVABLE,
    kernel.UNSOLVABLE: UNSOLVABLE,
    kernel.UNKNOWN: UNKNOWN,
    kernel.OUT_OF_MEMORY: UNKNOWN,
}
ODD_BIRD, SEPARATED_FLOCK, EXHAUSTED = "odd_bird", "separated_flock", "exhausted"
MEMORY = "memory"  # the reason of an unknown answer whose search reached its memory budget
MIB = 1 << 20
DEFAULT_COHORT = 4


@dataclass(frozen=True)
class SolveResult:
    """The answer for one state.

    ``moves`` is the solution as move text (empty unless solvable), ``nodes`` the
    states expanded, ``elapsed_ms`` the wall time of the search in milliseconds,
    ``reason`` why an unsolvable state is unsolvable (``None`` otherwise).
    """

    status: Status
    moves: list[str] = field(default_factory=list)
    nodes: int = 0
    elapsed_ms: float = 0.0
    reason: str | None = None
    algorithm: str = DEFAULT_ALGORITHM

    def to_json(self) -> dict[str, Any]:
        """``{"status", "moves", "nodes", "elapsed_ms", "reason", "algorithm"}``."""
        return {
            "status": self.status.value,
            "moves": list(self.moves),
            "nodes": self.nodes,
            "elapsed_ms": self.elapsed_ms,
            "reason": self.reason,
            "algorithm": self.algorithm,
        }


@dataclass(frozen=True)
class BatchResult:
    """Answers for many states of one grid (one entry per state).

    ``status`` holds each state's ``Status``; ``reasons`` the reason texts
    (``None`` unless unsolvable, or ``memory`` for a search stopped by its memory
    budget); ``nodes`` and ``elapsed_ms`` (milliseconds) are arrays, as are
    ``paths`` and ``path_lengths`` (see ``solution_moves``). ``learned``
    (``int64[n, len(LEARNED_COLUMNS)]``) is what each search learned on its way
    (``boaf.search.kernel.LEARNED_COLUMNS``; all 0 for Best-n DFS).
    """

    status: tuple[Status, ...]
    nodes: np.ndarray
    elapsed_ms: np.ndarray
    reasons: list[str | None]
    paths: np.ndarray
    path_lengths: np.ndarray
    learned: np.ndarray

    def status_names(self) -> list[str]:
        """The status of each state as plain text (``str``, not ``Status``), as Parquet columns hold it."""
        return [s.value for s in self.status]


def solve(
    state: State,
    algorithm: str | Algorithm = DEFAULT_ALGORITHM,
    *,
    max_nodes: int | None = None,
    time_limit: float | None = None,
    cohort: int = DEFAULT_COHORT,
    ordering: OrderingModel | None = None,
    cancel: np.ndarray | None = None,
    max_memory_mb: float | None = None,
    threads: int = 1,
) -> SolveResult:
    """Decide ``state`` exactly with the named algorithm.

    ``max_nodes`` caps the expanded states and ``time_limit`` the wall time in
    seconds; when either runs out the status is ``unknown``. ``max_memory_mb``
    caps the memory of the search's growing tables in MiB (the transposition
    table never grows past it); when a state no longer fits, the status is
    ``unknown`` with the reason ``memory``. ``cohort`` is
    best-n's n. ``cancel`` is an ``int64`` array of one element: setting
    ``cancel[0] = 1`` from another thread stops the search (``unknown``) at its
    next node. ``threads > 1`` searches the root's children side by side
    (``boaf.search.threads``): the status does not depend on it, the solution and
    node count may, and ``max_nodes`` then applies to each child. A solvable
    answer is replayed before it is returned.
    """
    algo = algorithm_named(algorithm)
    _check_budget(max_nodes, time_limit, cohort, max_memory_mb)
    check_positive_int(threads, "threads", error=InvalidBudget)
    model = ordering or default_ordering()
    root = state_to_array(state)
    max_bytes = _memory_bytes(max_memory_mb)
    memo = kernel.new_memo(root.shape[0], max_bytes=max_bytes)
    path = np.zeros((root.shape[0], 2), dtype=np.int8)
    flag = np.zeros(1, dtype=np.int64) if cancel is None else cancel
    _load_kernel(algo.kernel, algo.options & kernel.ISLANDS != 0)
    start = time.perf_counter()
    deadline = start + time_limit if time_limit else 0.0  # now_s's clock (perf_counter), read from Python
    tables, config = grid_tables(state.rows, state.cols), kernel_config(algo, model, cohort)
    budget = kernel.Budget(int(max_nodes or 0), float(deadline), flag, int(max_bytes))
    if threads > 1 and state.n_stacks > 1:
        status, nodes, path = solve_split(state, algo, tables, config, budget=budget, threads=threads)
        length = path.shape[0]
    elif restarts_help(state, algo):
        outcome = solve_restarting(
            state,
            config,
            root=root,
            memo=memo,
            path=path,
            tables_of=grid_tables,
            max_nodes=budget.max_nodes,
            deadline=deadline,
            cancel=flag,
            max_bytes=max_bytes,
        )
        status, nodes, path, length = outcome.status, outcome.nodes, outcome.path, outcome.path.shape[0]
    else:
        status, nodes, length, _ = kernel.SEARCHES[algo.kernel](
            root, tables, config, budget, memo=memo, stamp=1, path=path, share=kernel.NO_SHARE
        )
    elapsed_ms = (time.perf_counter() - start) * 1e3
    answer = _KERNEL_STATUS[int(status)]
    moves = checked_solution(state, path[:length]) if answer is SOLVABLE else []
    reason = unsolvable_reason(state) if answer is UNSOLVABLE else _unknown_reason(int(status))
    return SolveResult(answer, moves, int(nodes), elapsed_ms, reason, algo.name)


def solve_many(
    states: Sequence[State] | np.ndarray,
    algorithm: str | Algorithm = DEFAULT_ALGORITHM,
    *,
    rows: int = 4,
    cols: int = 4,
    max_nodes: int | None = None,
    time_limit: float | None = None,
    cohort: int = DEFAULT_COHORT,
    ordering: OrderingModel | None = None,
    cancel: np.ndarray | None = None,
    max_memory_mb: float | None = None,
    reasons: bool = True,
) -> BatchResult:
    """Solve many states of one grid in one kernel call, without per-state Python work.

    ``states`` is a sequence of ``State`` or an ``int8`` array ``(n, rows*cols)``
    (``rows``/``cols`` then name the grid). Budgets (nodes, seconds, MiB) apply
    to each state; a state that reaches ``max_memory_mb`` is ``unknown`` with
    the reason ``memory``. Paths are returned raw (``(source, target)`` cells);
    ``solution_moves`` turns one into checked move text. ``cancel`` is
    ``solve``'s: once set, the state under way and every later one come back
    ``unknown``. ``reasons=False`` leaves every reason ``None`` (the classifier's
    exact path, which needs only the status, skips finding them).
    """
    algo = algorithm_named(algorithm)
    _check_budget(max_nodes, time_limit, cohort, max_memory_mb)
    if not isinstance(states, np.ndarray):
        if states:
            rows, cols = states[0].rows, states[0].cols
        states = states_to_array(states)
    array = np.ascontiguousarray(states, dtype=np.int8).reshape(-1, rows * cols)
    flag = np.zeros(1, dtype=np.int64) if cancel is None else cancel
    model = ordering or default_ordering()
    return _run_batch(
        array,
        rows,
        cols,
        algo,
        max_nodes=max_nodes,
        time_limit=time_limit,
        cohort=cohort,
        model=model,
        cancel=flag,
        max_bytes=_memory_bytes(max_memory_mb),
        reasons=reasons,
    )


class BatchOptions(TypedDict, total=False):
    """``solve_many``'s keyword arguments, which ``solve_deals`` passes on."""

    rows: int
    cols: int
    max_nodes: int | None
    time_limit: float | None
    cohort: int
    ordering: OrderingModel | None
    cancel: np.ndarray | None
    max_memory_mb: float | None
    reasons: bool


def solve_deals(
    seeds: Sequence[int] | np.ndarray, algorithm: str | Algorithm = DEFAULT_ALGORITHM, **options: Unpack[BatchOptions]
) -> BatchResult:
    """Solve the seeded deals (SPEC §2) of ``seeds``, dealt inside the kernel, as ``solve_many`` (same options)."""
    cells = options.get("rows", 4) * options.get("cols", 4)
    return solve_many(shuffled_cells(np.asarray(seeds, dtype=np.int64), cells), algorithm, **options)


def solution_moves(state: State, batch: BatchResult, index: int) -> list[str]:
    """The checked move text of state ``index`` of a batch (empty unless solvable)."""
    if batch.status[index] is not SOLVABLE:
        return []
    return checked_solution(state, batch.paths[index, : batch.path_lengths[index]])


def checked_solution(state: State, path: np.ndarray) -> list[str]:
    """Move text of ``path`` (``(source, target)`` rows) from ``state``, replayed to one stack.

    ``State.replay`` checks each move legal where it is played, and the last must
    leave one stack. The text names each move's two top cards, which are unique,
    so it stands for exactly the replayed move. Raises ``SolutionCheckFailed`` (a
    bug, never bad input) when the path does not replay.
    """
    try:
        texts, stacks = state.replay_cells(path.tolist())
    except IllegalMove as error:
        raise SolutionCheckFailed(f"solution does not replay: {error}") from None
    if stacks != 1:
        raise SolutionCheckFailed(f"solution {' '.join(texts)!r} leaves {stacks} stacks")
    return texts


def unsolvable_reason(state: State) -> str:
    """Why an unsolvable ``state`` is unsolvable, from its compatibility graph."""
    present = _card_mask(state.top_cards())
    if kernel.has_odd_bird(present, compat_table()):
        return ODD_BIRD
    if not kernel.is_connected(present, compat_table()):
        return SEPARATED_FLOCK
    return EXHAUSTED


def cells_reason(cells: np.ndarray) -> str:
    """``unsolvable_reason`` for one row of a batch array (top cards, -1 for empty)."""
    present = _card_mask(int(c) for c in cells if c >= 0)
    if kernel.has_odd_bird(present, compat_table()):
        return ODD_BIRD
    if not kernel.is_connected(present, compat_table()):
        return SEPARATED_FLOCK
    return EXHAUSTED


def _run_batch(
    array: np.ndarray,
    rows: int,
    cols: int,
    algo: Algorithm,
    *,
    max_nodes: int | None,
    time_limit: float | None,
    cohort: int,
    model: OrderingModel,
    cancel: np.ndarray,
    max_bytes: int = 0,
    reasons: bool = True,
) -> BatchResult:
    # Plain ints and floats only: a numpy scalar (uint64, int32, float32) or an omitted default would be
    # another argument type, which numba compiles a second copy of the whole kernel for.
    budget = kernel.Budget(int(max_nodes or 0), 0.0, cancel, int(max_bytes))
    status, nodes, elapsed, paths, lengths, learned = kernel.BATCHES[algo.kernel](
        array, grid_tables(rows, cols), kernel_config(algo, model, cohort), budget, time_limit=float(time_limit or 0.0)
    )
    codes = status.tolist()
    answers = tuple(_KERNEL_STATUS[s] for s in codes)
    why: list[str | None] = [None] * len(codes)
    if reasons:
        why = [cells_reason(array[i]) if s == kernel.UNSOLVABLE else _unknown_reason(s) for i, s in enumerate(codes)]
    return BatchResult(answers, nodes, elapsed, why, paths, lengths, learned)


def _unknown_reason(status: int) -> str | None:
    return MEMORY if status == kernel.OUT_OF_MEMORY else None


def _memory_bytes(max_memory_mb: float | None) -> int:
    return int(max_memory_mb * MIB) if max_memory_mb else 0


def _check_budget(
    max_nodes: int | None, time_limit: float | None, cohort: int, max_memory_mb: float | None = None
) -> None:
    if max_nodes is not None:
        check_positive_int(max_nodes, "max_nodes", error=InvalidBudget)
    if time_limit is not None and not (isinstance(time_limit, int | float) and time_limit > 0):
        raise InvalidBudget(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    if max_memory_mb is not None and (
        isinstance(max_memory_mb, bool) or not isinstance(max_memory_mb, int | float) or not max_memory_mb > 0
    ):
        raise InvalidBudget(f"max_memory_mb must be a positive number of MiB, got {max_memory_mb!r}")
    check_positive_int(cohort, "cohort", error=InvalidBudget)


def _card_mask(cards: Any) -> np.uint64:
    mask = 0
    for card in cards:
        mask |= 1 << card
    return np.uint64(mask)


@cache
def _load_kernel(search: int, islands: bool) -> None:
    # The first call of a compiled function loads it from numba's cache (a few
    # hundred ms); do that outside the timed search. Island Merge has a copy of its own.
    one = np.array([0], dtype=np.int8)
    options, island_merge = (kernel.ISLANDS, True) if islands else (0, None)
    config = kernel.Config(options=options, coefs=None, cutoff=0, memo_min=0, cohort=1, islands=island_merge)
    budget = kernel.Budget(0, 0.0, np.zeros(1, dtype=np.int64), 0)
    # A one-stack root returns before it reads a table: no cell cut table (its kernel compiles on its own).
    tables = kernel.Tables(1, 1, compat_table(), line_table(1, 1), np.zeros(0, dtype=np.uint16))
    kernel.SEARCHES[search](
        one,
        tables,
        config,
        budget,
        memo=kernel.new_memo(1),
        stamp=1,
        path=np.zeros((1, 2), np.int8),
        share=kernel.NO_SHARE,
    )
