# mypy: disable-error-code="no-untyped-def"
"""The entry points: one search (``SEARCHES``) or a batch of states in one compiled call (``BATCHES``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from boaf.game.graph import U0
from boaf.search.kernel.best_n import best_n
from boaf.search.kernel.bundles import Budget, Share
from boaf.search.kernel.dfs import dfs
from boaf.search.kernel.memo import NARROW_ROWS
from boaf.search.kernel.status import now_s

CONSTRAINED, COMPATIBLE, ORDERED, BEST_N = 0, 1, 2, 3


DFS_KERNEL, BEST_N_KERNEL = 0, 1
"""Which search an algorithm runs: ``SEARCHES[k]`` and ``BATCHES[k]`` are its single and batch kernels."""

# The two searches are separate compiled entry points (``dfs``, ``best_n``), so a process that never
# runs Best-n DFS never compiles it. ``solve_one`` and ``best_n_one`` give them one parameter list in
# Python (``best_n`` reads no ``Share``). They are plain functions on purpose: a compiled wrapper
# re-optimises the whole search it links in, ~1.4 s more of a first start.


def solve_one(root, tables, config, budget, *, memo, stamp, path, share):
    """One DFS search (``dfs``); returns ``(status, nodes, path_length, memo)``."""
    return dfs(root, tables, config, budget, memo, stamp, path, share)


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


@njit(cache=True, nogil=True)
def _batch_result(n, ncells):
    """``BatchResult`` arrays for ``n`` states."""
    return BatchResult(
        np.empty(n, dtype=np.int8),
        np.zeros(n, dtype=np.int64),
        np.zeros(n, dtype=np.float64),
        np.zeros((n, ncells, 2), dtype=np.int8),
        np.zeros(n, dtype=np.int64),
    )


@njit(cache=True, nogil=True, inline="always")
def _state_budget(budget, start, time_limit):
    """``budget`` for one state of a batch that starts at ``start``: its deadline ``time_limit`` seconds later."""
    deadline = start + time_limit if time_limit > 0 else 0.0
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
def solve_batch(states, tables, config, budget, *, time_limit):
    """Solve every row of ``states`` (``int8[n, rows*cols]``) with DFS (``dfs``) in one call; returns a ``BatchResult``.

    ``time_limit`` (seconds, <= 0 for none) and ``budget.max_bytes`` apply to
    each state (``budget.deadline`` is not read); a status may be
    ``OUT_OF_MEMORY``. One memo serves every state (fresh stamps, or cleared).
    """
    out = _batch_result(states.shape[0], states.shape[1])
    share = Share(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))
    memo = np.zeros((1, 0), dtype=np.uint64)  # each search fits it to its width
    for i in range(states.shape[0]):
        start = now_s()
        each = _state_budget(budget, start, time_limit)
        out.status[i], out.nodes[i], out.lengths[i], memo = dfs(
            states[i], tables, config, each, memo, i + 1, out.paths[i], share
        )
        memo = _next_memo(memo)
        out.elapsed_ms[i] = (now_s() - start) * 1e3
    return out


@njit(cache=True, nogil=True)
def best_n_batch(states, tables, config, budget, *, time_limit):
    """``solve_batch`` with Best-n DFS (``best_n``): the same parameters and result."""
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
