# mypy: disable-error-code="no-untyped-def"
"""The entry points: one search (``SEARCHES``) or a batch of states in one compiled call (``BATCHES``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from boaf.game.graph import U0
from boaf.search.kernel.best_n import best_n
from boaf.search.kernel.bundles import NO_SHARE, Budget, Config, Tables
from boaf.search.kernel.dfs import LEARNED_COLUMNS, dfs
from boaf.search.kernel.memo import NARROW_ROWS
from boaf.search.kernel.status import now_s

CONSTRAINED, COMPATIBLE, ORDERED, BEST_N = 0, 1, 2, 3


DFS_KERNEL, BEST_N_KERNEL = 0, 1
"""Which search an algorithm runs: ``SEARCHES[k]`` and ``BATCHES[k]`` are its single and batch kernels."""

# The two searches are separate compiled entry points (``search_states``, ``best_n``), so a process that never
# runs Best-n DFS never compiles it. DFS has one entry for one state and for a batch: each compiled entry
# re-optimises the whole search it links in (~2.5 s of a first start), so ``solve_one`` and ``solve_batch``
# are plain functions around ``search_states``. ``best_n_one`` gives ``best_n`` ``solve_one``'s parameter list.


def solve_one(root, tables, config, budget, *, memo, stamp, path, share):
    """One DFS search (``dfs``, through ``search_states``); returns ``(status, nodes, path_length, memo)``."""
    one, paths = root[None], path[None]  # (one row each: the entry's types, so no second compiled copy)
    return search_states(one, tables, config, budget, memo, stamp, paths, share, time_limit=0.0, rows=_NO_ROWS)


def best_n_one(root, tables, config, budget, *, memo, stamp, path, share):
    """One Best-n DFS search (``best_n``), with ``solve_one``'s parameters and result."""
    return best_n(root, tables, config, budget, memo, stamp, path)


class BatchResult(NamedTuple):
    """What a batch kernel returns, one row per state."""

    status: np.ndarray  # int8[n]
    nodes: np.ndarray  # int64[n]
    elapsed_ms: np.ndarray  # float64[n]
    paths: np.ndarray  # int8[n, ncells, 2]
    lengths: np.ndarray  # int64[n]
    learned: np.ndarray  # int64[n, len(LEARNED_COLUMNS)]: what each search learned (``dfs.LEARNED_COLUMNS``)


@njit(cache=True, nogil=True)
def _batch_result(n, ncells):
    """``BatchResult`` arrays for ``n`` states."""
    return BatchResult(
        np.empty(n, dtype=np.int8),
        np.zeros(n, dtype=np.int64),
        np.zeros(n, dtype=np.float64),
        np.zeros((n, ncells, 2), dtype=np.int8),
        np.zeros(n, dtype=np.int64),
        np.zeros((n, len(LEARNED_COLUMNS)), dtype=np.int64),
    )


@njit(cache=True, nogil=True, inline="always")
def _state_budget(budget, start, time_limit):
    """``budget`` for one state of a batch that starts at ``start``: its deadline ``time_limit`` seconds later
    (``time_limit <= 0``: ``budget.deadline``)."""
    deadline = start + time_limit if time_limit > 0 else budget.deadline
    return Budget(budget.max_nodes, deadline, budget.cancel, budget.max_bytes)


@njit(cache=True, nogil=True)
def _next_memo(memo):
    """The memo for the next state of a batch: one-word tables have no stamps, so they are cleared."""
    if memo.shape[1] == 1:
        if memo.shape[0] > NARROW_ROWS:
            return np.zeros((1, 0), dtype=np.uint64)  # a grown one is dropped
        memo[:, 0] = U0
    return memo


@njit(cache=True, nogil=True)
def search_states(states, tables, config, budget, memo, stamp, paths, share, *, time_limit, rows):
    """DFS (``dfs``) on every row of ``states`` (``int8[n, rows*cols]``); ``(status, nodes, length, memo)`` of the last.

    The search's one compiled entry, for one state (``solve_one``) and a batch
    (``solve_batch``). State ``i`` searches with stamp ``stamp + i``, its moves
    in ``paths[i]``; when ``rows`` (``int64[n, ROW_WIDTH]``) has a row ``i``, it gets the
    state's status, nodes, path length and nanoseconds, and a one-word memo is
    cleared after it (``_next_memo``: a batch's states are unrelated); columns
    ``LEARNED_AT`` on of the row get what its search learned (``LEARNED_COLUMNS``). One search
    passes no rows: its figures are returned, and its memo is returned as it is
    (threads share it). Each state's deadline is ``time_limit`` seconds after its
    start (``<= 0``: ``budget.deadline``); ``budget.max_bytes`` applies to each.
    """
    status, nodes, length = 0, 0, 0
    timed = rows.shape[0] > 0 or time_limit > 0  # (the clock holds the GIL: one search reads it only if asked)
    for i in range(states.shape[0]):
        start = now_s() if timed else 0.0
        each = _state_budget(budget, start, time_limit)
        status, nodes, length, memo, learned = dfs(states[i], tables, config, each, memo, stamp + i, paths[i], share)
        if i < rows.shape[0]:
            rows[i, 0], rows[i, 1], rows[i, 2] = status, nodes, length
            rows[i, 3] = round((now_s() - start) * 1e9)
            for j in range(learned.shape[0]):  # (element by element: a slice assignment adds to the compile)
                rows[i, LEARNED_AT + j] = learned[j]
            memo = _next_memo(memo)
    return status, nodes, length, memo


LEARNED_AT = 4  # a row of ``search_states``: status, nodes, path length, nanoseconds, then ``LEARNED_COLUMNS``
ROW_WIDTH = LEARNED_AT + len(LEARNED_COLUMNS)
_NO_ROWS = np.empty((0, ROW_WIDTH), dtype=np.int64)  # one search: its figures are returned, not written


def solve_batch(
    states: np.ndarray, tables: Tables, config: Config, budget: Budget, *, time_limit: float
) -> BatchResult:
    """Solve every row of ``states`` (``int8[n, rows*cols]``) with DFS in one compiled call; returns a ``BatchResult``.

    ``time_limit`` (seconds, <= 0 for none) and ``budget.max_bytes`` apply to
    each state (``budget.deadline`` is not read); a status may be
    ``OUT_OF_MEMORY``. One memo serves every state (fresh stamps, or cleared).
    """
    n = states.shape[0]
    paths, rows = np.zeros((n, states.shape[1], 2), dtype=np.int8), np.zeros((n, ROW_WIDTH), dtype=np.int64)
    flat = Budget(budget.max_nodes, 0.0, budget.cancel, budget.max_bytes)
    memo = np.zeros((1, 0), dtype=np.uint64)  # each search fits it to its width
    search_states(states, tables, config, flat, memo, 1, paths, NO_SHARE, time_limit=time_limit, rows=rows)
    status, nodes, elapsed_ms = rows[:, 0].astype(np.int8), rows[:, 1].copy(), rows[:, 3] / 1e6
    return BatchResult(status, nodes, elapsed_ms, paths, rows[:, 2].copy(), rows[:, LEARNED_AT:].copy())


@njit(cache=True, nogil=True)
def best_n_batch(states, tables, config, budget, *, time_limit):
    """``solve_batch`` with Best-n DFS (``best_n``): the same parameters and result (``learned`` all 0: Best-n
    DFS does not report it)."""
    out = _batch_result(states.shape[0], states.shape[1])
    memo = np.zeros((1, 0), dtype=np.uint64)
    for i in range(states.shape[0]):
        start = now_s()
        each = _state_budget(budget, start, time_limit)
        out.status[i], out.nodes[i], out.lengths[i], memo = best_n(
            states[i], tables, config, each, memo, i + 1, out.paths[i]
        )
        memo = _next_memo(memo)
        out.elapsed_ms[i] = (now_s() - start) * 1e3
    return out


SEARCHES: tuple[Callable[..., Any], ...] = (solve_one, best_n_one)  # by DFS_KERNEL, BEST_N_KERNEL
BATCHES = (solve_batch, best_n_batch)
