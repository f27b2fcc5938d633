# mypy: disable-error-code="no-untyped-def"
"""Best-n DFS (``best_n``, Neller 2019): cohorts of nodes taken from a global stack, children by flockability."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from game.bits import popcount
from game.graph import edge_count
from search.kernel.bundles import CUT_CACHE, Config, board_of, new_scratch
from search.kernel.generate import generate, play
from search.kernel.keys import _plain_key, key_words
from search.kernel.memo import _fit_memo, _memo_add, _memo_find
from search.kernel.prune import PRUNE_CELLS, PRUNE_GRAPH, root_prunable
from search.kernel.status import OUT_OF_MEMORY, SOLVABLE, UNKNOWN, UNSOLVABLE, spent

PARENT, SOURCE, TARGET, VALUE = 0, 1, 2, 3  # the columns of a node's ``info``: its parent record, move, heuristic


class Frontier(NamedTuple):
    """Best-n DFS's open nodes: the global stack S, the cohort Q and its children C, and the path records."""

    s_cells: np.ndarray  # int8[rows, ncells]: S's states
    s_info: np.ndarray  # int64[rows, 4]: and their info (PARENT, SOURCE, TARGET, VALUE)
    q_cells: np.ndarray  # int8[cohort, ncells]: the cohort being expanded
    q_info: np.ndarray  # int64[cohort, 4]
    c_cells: np.ndarray  # int8[rows, ncells]: the cohort's children
    c_info: np.ndarray  # int64[rows, 4]
    records: np.ndarray  # int64[rows, 3]: each expanded node's PARENT, SOURCE, TARGET
    order: np.ndarray  # int64[rows]: the children's order before they go on S


@njit(cache=True, nogil=True)
def _grow_rows(a, need):
    if need <= a.shape[0]:
        return a
    cap = max(need, 2 * a.shape[0])
    grown = np.empty((cap,) + a.shape[1:], dtype=a.dtype)  # noqa: RUF005 (numba builds tuples this way)
    grown[: a.shape[0]] = a
    return grown


@njit(cache=True, nogil=True)
def _new_frontier(root, cohort):
    """A ``Frontier`` whose cohort is the root alone."""
    ncells = root.shape[0]
    f = Frontier(
        np.empty((64, ncells), dtype=np.int8),
        np.empty((64, 4), dtype=np.int64),
        np.empty((cohort, ncells), dtype=np.int8),
        np.empty((cohort, 4), dtype=np.int64),
        np.empty((64, ncells), dtype=np.int8),
        np.empty((64, 4), dtype=np.int64),
        np.empty((1024, 3), dtype=np.int64),
        np.empty(64, dtype=np.int64),
    )
    f.q_cells[0] = root
    f.q_info[0, :] = -1
    return f


@njit(cache=True, nogil=True)
def _room(f, stacked, children, records):
    """``f`` with room for ``stacked`` states on S, ``children`` in C and ``records`` records (arrays double)."""
    return Frontier(
        _grow_rows(f.s_cells, stacked),
        _grow_rows(f.s_info, stacked),
        f.q_cells,
        f.q_info,
        _grow_rows(f.c_cells, children),
        _grow_rows(f.c_info, children),
        _grow_rows(f.records, records),
        _grow_rows(f.order, children),
    )


@njit(cache=True, nogil=True, inline="always")
def _frontier_bytes(f):
    return f.records.nbytes + f.s_cells.nbytes + f.s_info.nbytes + f.c_cells.nbytes + f.c_info.nbytes + f.order.nbytes


@njit(cache=True, nogil=True)
def best_n(root, tables, config, budget, memo, stamp, path):
    """Best-n DFS (Neller 2019, Algorithm 1) from ``root``; returns like ``dfs``.

    Cohorts of up to ``config.cohort`` nodes of equal heuristic value are taken
    from the top of a global stack S and expanded together; their unpruned
    children go on S sorted by flockability (edges of their compatibility
    graph), the preferred ones on top, ties in generation order. ``memo`` is
    the closed set (every expanded state), so a state is expanded once.

    ``budget.max_bytes > 0`` is shared: the memo gets half (a hard cap, as in
    ``dfs``), the global stack, cohort children and path records the other
    half, checked before each expansion (so they may pass it by at most one
    growth step).
    """
    ncells = root.shape[0]
    if board_of(root).n_stacks <= 1:
        return SOLVABLE, 0, 0, memo
    if root_prunable(root, tables, config.options):
        return UNSOLVABLE, 0, 0, memo
    memo = _fit_memo(memo, key_words(ncells) + 1, budget.max_bytes // 2)  # the closed set keys every state: wide
    max_rows = max(budget.max_bytes // 2 // memo.strides[0], 2) if budget.max_bytes > 0 else 0
    generation = Config(
        config.options & (PRUNE_GRAPH | PRUNE_CELLS), np.zeros(4), np.int64(99), config.memo_min, config.cohort
    )
    width = ncells * min(ncells - 1, tables.rows + tables.cols - 2) + 1
    src = np.empty(width, dtype=np.int8)
    dst = np.empty(width, dtype=np.int8)
    no_sleep = np.zeros(ncells, dtype=np.uint64)
    scratch = new_scratch(np.int64(CUT_CACHE))
    key = np.empty(memo.shape[1] - 1, dtype=np.uint64)
    f = _new_frontier(root, config.cohort)
    qn = 1
    sp = np.int64(0)
    nodes = 0
    n_records = np.int64(0)
    memo_count = np.int64(0)
    while qn > 0:
        cn = np.int64(0)
        for qi in range(qn):
            cells = f.q_cells[qi]
            _plain_key(cells, key)
            if _memo_find(memo, stamp, key) >= 0:
                continue
            memo, memo_count, fits = _memo_add(memo, stamp, key, memo_count, max_rows)
            if not fits or (budget.max_bytes > 0 and 2 * _frontier_bytes(f) > budget.max_bytes):
                return OUT_OF_MEMORY, nodes, 0, memo
            board = board_of(cells)
            if board.n_stacks == 1:
                return SOLVABLE, nodes, _unwind(f.records, f.q_info[qi], path), memo
            if spent(nodes, budget.max_nodes, budget.deadline, budget.cancel[0]):
                return UNKNOWN, nodes, 0, memo
            nodes += 1
            f = _room(f, 0, 0, n_records + 1)
            for k in range(3):
                f.records[n_records, k] = f.q_info[qi, k]
            n_records += 1
            count = generate(cells, board, tables, generation, src, dst, no_sleep, scratch)
            f = _room(f, 0, cn + count, 0)
            cn = _add_children(cells, board, tables.compat, src[:count], dst[:count], n_records - 1, f, cn)
        f, sp = _stack_children(f, cn, sp)
        qn, sp = _next_cohort(f, sp, config.cohort)
    return UNSOLVABLE, nodes, 0, memo


@njit(cache=True, nogil=True)
def _add_children(cells, board, compat, src, dst, parent, f, cn):
    """Put the children ``src[i] -> dst[i]`` of ``cells`` (record ``parent``) in C from row ``cn``; returns C's rows."""
    no_key = np.empty(0, dtype=np.uint64)
    edges = edge_count(board.present, compat)
    for i in range(src.shape[0]):
        child = f.c_cells[cn]
        child[:] = cells
        _, _, b = play(child, no_key, src[i], dst[i], board)
        f.c_info[cn, PARENT] = parent
        f.c_info[cn, SOURCE] = src[i]
        f.c_info[cn, TARGET] = dst[i]
        f.c_info[cn, VALUE] = edges - popcount(compat[b] & board.present)
        cn += 1
    return cn


@njit(cache=True, nogil=True)
def _stack_children(f, cn, sp):
    """Push C's ``cn`` children on S worst first, so the best (earliest of equals) ends on top; returns ``(f, sp)``."""
    order, info = f.order, f.c_info
    for i in range(cn):
        order[i] = i
    for i in range(1, cn):
        j = i
        while j > 0 and (
            info[order[j - 1], VALUE] > info[order[j], VALUE]
            or (info[order[j - 1], VALUE] == info[order[j], VALUE] and order[j - 1] < order[j])
        ):
            order[j - 1], order[j] = order[j], order[j - 1]
            j -= 1
    f = _room(f, sp + cn, 0, 0)
    for i in range(cn):
        f.s_cells[sp] = f.c_cells[order[i]]
        f.s_info[sp] = info[order[i]]
        sp += 1
    return f, sp


@njit(cache=True, nogil=True)
def _next_cohort(f, sp, cohort):
    """Pop up to ``cohort`` states of S's top value into Q; returns ``(qn, sp)``."""
    qn = 0
    if sp > 0:
        value = f.s_info[sp - 1, VALUE]
        while qn < cohort and sp > 0 and f.s_info[sp - 1, VALUE] == value:
            sp -= 1
            f.q_cells[qn] = f.s_cells[sp]
            f.q_info[qn] = f.s_info[sp]
            qn += 1
    return qn, sp


@njit(cache=True, nogil=True)
def _unwind(records, info, path):
    """Write the moves from the root to a goal entry (``info``: parent record, source, target) into ``path``."""
    length = 0
    r = info[0]
    path[0, 0] = info[1]
    path[0, 1] = info[2]
    length = 1
    while r >= 0 and records[r, 1] >= 0:
        path[length, 0] = records[r, 1]
        path[length, 1] = records[r, 2]
        length += 1
        r = records[r, 0]
    for i in range(length // 2):
        j = length - 1 - i
        a0, a1 = path[i, 0], path[i, 1]
        path[i, 0], path[i, 1] = path[j, 0], path[j, 1]
        path[j, 0], path[j, 1] = a0, a1
    return length
