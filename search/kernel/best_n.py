# mypy: disable-error-code="no-untyped-def"
"""Best-n DFS (``best_n``, Neller 2019): cohorts of nodes taken from a global stack, children by flockability."""

from __future__ import annotations

import numpy as np
from numba import njit

from game.bits import popcount
from search.kernel.generate import CUT_CACHE, _generate, _score_cache
from search.kernel.graph import U0, _bit, flockability
from search.kernel.keys import _plain_key, key_words
from search.kernel.memo import _fit_memo, _memo_add, _memo_find
from search.kernel.order import WORK_ROWS
from search.kernel.prune import PRUNE_CELLS, PRUNE_GRAPH, root_prunable
from search.kernel.status import CHECK_EVERY, OUT_OF_MEMORY, SOLVABLE, UNKNOWN, UNSOLVABLE, now_s


@njit(cache=True, nogil=True)
def _grow_rows(a, need):
    if need <= a.shape[0]:
        return a
    cap = max(need, 2 * a.shape[0])
    grown = np.empty((cap,) + a.shape[1:], dtype=a.dtype)  # noqa: RUF005 (numba builds tuples this way)
    grown[: a.shape[0]] = a
    return grown


@njit(cache=True, nogil=True)
def best_n(
    root,
    rows,
    cols,
    compat,
    line,
    cell_cuts,
    options,
    cohort,
    max_nodes,
    deadline,
    cancel,
    memo,
    stamp,
    path,
    max_bytes,
):
    """Best-n DFS (Neller 2019, Algorithm 1) from ``root``; returns like ``dfs``.

    Cohorts of up to ``cohort`` nodes of equal heuristic value are taken from the
    top of a global stack S and expanded together; their unpruned children go
    on S sorted by flockability (edges of their compatibility graph), the
    preferred ones on top, ties in generation order. ``memo`` is the closed set
    (every expanded state), so a state is expanded once.

    ``max_bytes > 0`` is shared: the memo gets half (a hard cap, as in ``dfs``),
    the global stack, cohort children and path records the other half, checked
    before each expansion (so they may pass it by at most one growth step).
    """
    ncells = rows * cols
    n_root = 0
    for i in range(ncells):
        if root[i] >= 0:
            n_root += 1
    if n_root <= 1:
        return SOLVABLE, 0, 0, memo
    if root_prunable(root, rows, cols, compat, line, options):
        return UNSOLVABLE, 0, 0, memo
    memo = _fit_memo(memo, key_words(ncells) + 1, max_bytes // 2)  # the closed set keys every state: wide
    width = ncells * min(ncells - 1, rows + cols - 2) + 1
    s_cells = np.empty((64, ncells), dtype=np.int8)
    s_info = np.empty((64, 4), dtype=np.int64)  # parent record, source, target, heuristic
    q_cells = np.empty((cohort, ncells), dtype=np.int8)
    q_info = np.empty((cohort, 4), dtype=np.int64)
    pq_cells = np.empty((64, ncells), dtype=np.int8)
    pq_info = np.empty((64, 4), dtype=np.int64)
    records = np.empty((1024, 3), dtype=np.int64)  # parent record, source, target
    src = np.empty(width, dtype=np.int8)
    dst = np.empty(width, dtype=np.int8)
    order = np.empty(64, dtype=np.int64)
    work = np.empty((WORK_ROWS, 128), dtype=np.int64)
    scores = np.zeros(52, dtype=np.float64)
    score_cache = _score_cache(np.int64(CUT_CACHE))
    tarjan_i = np.empty((4, 64), dtype=np.int64)
    tarjan_u = np.empty(64, dtype=np.uint64)
    where = np.zeros(52, dtype=np.int64)  # the cell of each card on the board (scratch of _generate)
    cut_cache = np.zeros((7, CUT_CACHE), dtype=np.uint64)  # see ``_cached_cuts`` and ``_graph_facts``
    key = np.empty(memo.shape[1] - 1, dtype=np.uint64)
    coefs = np.zeros(4)
    no_sleep = np.zeros(ncells, dtype=np.uint64)
    generate_options = options & (PRUNE_GRAPH | PRUNE_CELLS)
    max_rows = max(max_bytes // 2 // memo.strides[0], 2) if max_bytes > 0 else 0
    q_cells[0] = root
    q_info[0, 0] = -1
    q_info[0, 1] = -1
    q_info[0, 2] = -1
    qn = 1
    sp = np.int64(0)
    nodes = 0
    n_records = np.int64(0)
    memo_count = np.int64(0)
    while qn > 0:
        pqn = np.int64(0)
        for qi in range(qn):
            cells = q_cells[qi]
            _plain_key(cells, key)
            if _memo_find(memo, stamp, key) >= 0:
                continue
            memo, memo_count, fits = _memo_add(memo, stamp, key, memo_count, max_rows)
            rest = records.nbytes + s_cells.nbytes + s_info.nbytes + pq_cells.nbytes + pq_info.nbytes + order.nbytes
            if not fits or (max_bytes > 0 and 2 * rest > max_bytes):
                return OUT_OF_MEMORY, nodes, 0, memo
            occupied = U0
            present = U0
            n_stacks = np.int64(0)
            for i in range(ncells):
                if cells[i] >= 0:
                    occupied |= _bit(i)
                    present |= _bit(cells[i])
                    n_stacks += 1
            if n_stacks == 1:
                return SOLVABLE, nodes, _unwind(records, q_info[qi], path), memo
            if max_nodes > 0 and nodes >= max_nodes:
                return UNKNOWN, nodes, 0, memo
            nodes += 1
            if cancel[0] != 0 or (nodes % CHECK_EVERY == 0 and deadline > 0 and now_s() >= deadline):
                return UNKNOWN, nodes, 0, memo
            records = _grow_rows(records, n_records + 1)
            records[n_records, 0] = q_info[qi, 0]
            records[n_records, 1] = q_info[qi, 1]
            records[n_records, 2] = q_info[qi, 2]
            n_records += 1
            count = _generate(
                cells,
                occupied,
                present,
                line,
                cell_cuts,
                compat,
                generate_options,
                coefs,
                n_stacks,
                np.int64(99),
                src,
                dst,
                work,
                scores,
                score_cache,
                tarjan_i,
                tarjan_u,
                where,
                no_sleep,
                cut_cache,
            )
            edges = flockability(present, compat)
            pq_cells = _grow_rows(pq_cells, pqn + count)
            pq_info = _grow_rows(pq_info, pqn + count)
            for i in range(count):
                s = src[i]
                t = dst[i]
                b = cells[t]
                pq_cells[pqn] = cells
                pq_cells[pqn, t] = cells[s]
                pq_cells[pqn, s] = -1
                pq_info[pqn, 0] = n_records - 1
                pq_info[pqn, 1] = s
                pq_info[pqn, 2] = t
                pq_info[pqn, 3] = edges - popcount(compat[b] & present)
                pqn += 1
        # push the cohort's children worst first, so the best (earliest of equals) ends on top
        order = _grow_rows(order, pqn)
        for i in range(pqn):
            order[i] = i
        for i in range(1, pqn):
            j = i
            while j > 0 and (
                pq_info[order[j - 1], 3] > pq_info[order[j], 3]
                or (pq_info[order[j - 1], 3] == pq_info[order[j], 3] and order[j - 1] < order[j])
            ):
                order[j - 1], order[j] = order[j], order[j - 1]
                j -= 1
        s_cells = _grow_rows(s_cells, sp + pqn)
        s_info = _grow_rows(s_info, sp + pqn)
        for i in range(pqn):
            s_cells[sp] = pq_cells[order[i]]
            s_info[sp] = pq_info[order[i]]
            sp += 1
        qn = 0
        if sp > 0:
            value = s_info[sp - 1, 3]
            while qn < cohort and sp > 0 and s_info[sp - 1, 3] == value:
                sp -= 1
                q_cells[qn] = s_cells[sp]
                q_info[qn] = s_info[sp]
                qn += 1
    return UNSOLVABLE, nodes, 0, memo


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
