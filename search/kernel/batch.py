# mypy: disable-error-code="no-untyped-def"
"""The entry points: one search (``SEARCHES``) or a batch of states in one compiled call (``BATCHES``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit

from search.kernel.best_n import best_n
from search.kernel.dfs import dfs
from search.kernel.graph import U0
from search.kernel.memo import NARROW_ROWS
from search.kernel.status import now_s

CONSTRAINED, COMPATIBLE, ORDERED, BEST_N = 0, 1, 2, 3


DFS_KERNEL, BEST_N_KERNEL = 0, 1
"""Which search an algorithm runs: ``SEARCHES[k]`` and ``BATCHES[k]`` are its single and batch kernels."""

# The two searches are separate compiled entry points (``dfs``, ``best_n``), so a process that never
# runs Best-n DFS never compiles it. ``solve_one`` and ``best_n_one`` give them one parameter list in
# Python (each passes on what its search reads: ``dfs`` ignores ``cohort``; ``best_n`` ignores
# ``coefs``, ``cutoff``, ``memo_min``, ``labels`` and ``fill``). They are plain functions on purpose:
# a compiled wrapper re-optimises the whole search it links in, ~1.4 s more of a first start.


def solve_one(
    root, rows, cols, compat, line, cell_cuts, options, coefs, cutoff, memo_min, cohort, max_nodes, deadline, cancel,
    memo, stamp, path, max_bytes, labels, fill,
):  # fmt: skip
    """One DFS search (``dfs``); returns ``(status, nodes, path_length, memo)``.

    ``labels`` and ``fill`` are ``dfs``'s (empty arrays for a search of its own).
    """
    return dfs(
        root, rows, cols, compat, line, cell_cuts, options, coefs, cutoff, memo_min, max_nodes, deadline, cancel, memo,
        stamp, path, max_bytes, labels, fill,
    )  # fmt: skip


def best_n_one(
    root, rows, cols, compat, line, cell_cuts, options, coefs, cutoff, memo_min, cohort, max_nodes, deadline, cancel,
    memo, stamp, path, max_bytes, labels, fill,
):  # fmt: skip
    """One Best-n DFS search (``best_n``), with ``solve_one``'s parameters and result."""
    return best_n(
        root, rows, cols, compat, line, cell_cuts, options, cohort, max_nodes, deadline, cancel, memo, stamp, path,
        max_bytes,
    )  # fmt: skip


@njit(cache=True, nogil=True)
def _batch_outputs(n, ncells):
    """``solve_batch``'s result arrays for ``n`` states, and an empty memo each search fits to its width."""
    status = np.empty(n, dtype=np.int8)
    nodes = np.zeros(n, dtype=np.int64)
    elapsed = np.zeros(n, dtype=np.float64)
    paths = np.zeros((n, ncells, 2), dtype=np.int8)
    lengths = np.zeros(n, dtype=np.int64)
    return status, nodes, elapsed, paths, lengths, np.zeros((1, 0), dtype=np.uint64)


@njit(cache=True, nogil=True)
def _next_memo(memo):
    """The memo for the next state of a batch: one-word tables have no stamps, so they are cleared."""
    if memo.shape[1] == 1:
        if memo.shape[0] > NARROW_ROWS:
            return np.zeros((1, 0), dtype=np.uint64)  # a grown one is dropped
        memo[:, 0] = U0
    return memo


@njit(cache=True, nogil=True)
def solve_batch(
    states, rows, cols, compat, line, cell_cuts, options, coefs, cutoff, memo_min, cohort, max_nodes, time_limit,
    cancel, max_bytes=0,
):  # fmt: skip
    """Solve every row of ``states`` (``int8[n, rows*cols]``) with DFS (``dfs``) in one call.

    ``time_limit`` (seconds, <= 0 for none) and ``max_bytes`` (<= 0 for none)
    apply to each state. Returns ``(status int8[n], nodes int64[n], elapsed_ms
    float64[n], paths int8[n, rows*cols, 2], path_lengths int64[n])``; a status
    may be ``OUT_OF_MEMORY``. One memo is reused for all states (fresh stamps, or cleared).
    """
    no_labels = np.empty(0, dtype=np.int64)
    status, nodes, elapsed, paths, lengths, memo = _batch_outputs(states.shape[0], rows * cols)
    for i in range(states.shape[0]):
        start = now_s()
        deadline = start + time_limit if time_limit > 0 else 0.0
        status[i], nodes[i], lengths[i], memo = dfs(
            states[i], rows, cols, compat, line, cell_cuts, options, coefs, cutoff, memo_min, max_nodes, deadline,
            cancel, memo, i + 1, paths[i], max_bytes, no_labels, no_labels,
        )  # fmt: skip
        memo = _next_memo(memo)
        elapsed[i] = (now_s() - start) * 1e3
    return status, nodes, elapsed, paths, lengths


@njit(cache=True, nogil=True)
def best_n_batch(
    states, rows, cols, compat, line, cell_cuts, options, coefs, cutoff, memo_min, cohort, max_nodes, time_limit,
    cancel, max_bytes=0,
):  # fmt: skip
    """``solve_batch`` with Best-n DFS (``best_n``): the same parameters and result."""
    status, nodes, elapsed, paths, lengths, memo = _batch_outputs(states.shape[0], rows * cols)
    for i in range(states.shape[0]):
        start = now_s()
        deadline = start + time_limit if time_limit > 0 else 0.0
        status[i], nodes[i], lengths[i], memo = best_n(
            states[i], rows, cols, compat, line, cell_cuts, options, cohort, max_nodes, deadline, cancel, memo, i + 1,
            paths[i], max_bytes,
        )  # fmt: skip
        memo = _next_memo(memo)
        elapsed[i] = (now_s() - start) * 1e3
    return status, nodes, elapsed, paths, lengths


SEARCHES: tuple[Callable[..., Any], ...] = (solve_one, best_n_one)  # by DFS_KERNEL, BEST_N_KERNEL
BATCHES = (solve_batch, best_n_batch)
