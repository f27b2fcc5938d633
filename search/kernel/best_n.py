# mypy: disable-error-code="no-untyped-def"
"""Best-n DFS (``best_n``, Neller 2019): cohorts of nodes taken from a global stack, children by flockability."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from boaf.game.bits import lean_njit, popcount
from boaf.game.graph import edge_count
from boaf.search.kernel.bundles import CUT_CACHE, Config, board_of, new_scratch
from boaf.search.kernel.generate import generate, play
from boaf.search.kernel.keys import _copy_words, _plain_key, key_words
from boaf.search.kernel.memo import GROW, _fit_memo, _memo_find, _wide_store, grown_in_time
from boaf.search.kernel.prune import PRUNE_CELLS, PRUNE_GRAPH, root_prunable
from boaf.search.kernel.status import OUT_OF_MEMORY, SOLVABLE, UNKNOWN, UNSOLVABLE, spent

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
    no_key: np.ndarray  # uint64[0]: the children are built by ``play`` with no key to keep
    key: np.ndarray  # uint64[words]: the wide key of the node being expanded
    src: np.ndarray  # int8[width]: its children's source cells
    dst: np.ndarray  # int8[width]: and target cells
    no_sleep: np.ndarray  # uint64[ncells]: no move is asleep


@njit(cache=True, nogil=True)
def _grow_rows(a, need):
    if need <= a.shape[0]:
        return a
    cap = max(need, 2 * a.shape[0])
    grown = np.empty((cap,) + a.shape[1:], dtype=a.dtype)  # noqa: RUF005 (numba builds tuples this way)
    grown[: a.shape[0]] = a
    return grown


@njit(cache=True, nogil=True)
def _new_frontier(root, cohort, words, width):
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
        np.empty(0, dtype=np.uint64),
        np.empty(words, dtype=np.uint64),
        np.empty(width, dtype=np.int8),
        np.empty(width, dtype=np.int8),
        np.zeros(ncells, dtype=np.uint64),
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
        f.no_key,
        f.key,
        f.src,
        f.dst,
        f.no_sleep,
    )


@lean_njit(inline="always")
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
        config.options & (PRUNE_GRAPH | PRUNE_CELLS), None, np.int64(99), config.memo_min, config.cohort, None
    )
    width = ncells * min(ncells - 1, tables.rows + tables.cols - 2) + 1
    scratch = new_scratch(np.int64(CUT_CACHE), width)
    f = _new_frontier(root, config.cohort, memo.shape[1] - 1, width)
    at = np.zeros(AT, dtype=np.int64)
    at[QN], at[STAMP], at[MAX_ROWS] = 1, stamp, max_rows
    per_row = 0.0  # seconds per row of the memo's last growth (``grown_in_time``)
    while True:
        code = _expand(tables, generation, budget, scratch, f, memo, at, config.cohort)
        if code == GROW:
            memo, per_row = grown_in_time(memo, stamp, budget.deadline, per_row)
            if per_row < 0:
                return UNKNOWN, at[NODES], 0, memo
        elif code == ROOM and at[QI] < at[QN]:
            f = _room(f, np.int64(0), at[CN] + at[COUNT], at[RECORDS] + 1)
        elif code == ROOM:
            f = _room(f, at[SP] + at[CN], np.int64(0), np.int64(0))
        elif code == SOLVABLE:
            return SOLVABLE, at[NODES], _unwind(f.records, f.q_info[at[QI]], path), memo
        else:
            return code, at[NODES], 0, memo


# ``at``: the place of ``_expand_cohort``, kept between its calls
QI, QN, CN, COUNT, RECORDS, NODES, MEMO_COUNT, SP, PHASE, STAMP, MAX_ROWS, AT = range(12)
NEW_NODE, STORED_NODE, GENERATED = 0, 1, 2  # at[PHASE]: how far the node at[QI] has come
ROOM, COHORT_DONE = -3, -4  # besides a status and GROW, what ``_expand_cohort`` returns


@lean_njit()
def _expand(tables, generation, budget, scratch, f, memo, at, cohort):
    """Expand cohorts from the place ``at`` until the search ends; returns its status (``SOLVABLE``: the node
    ``at[QI]`` is the goal), or ``GROW`` / ``ROOM`` when ``best_n`` must grow the memo or the frontier and call
    again."""
    while True:
        code = _expand_cohort(tables, generation, budget, scratch, f, memo, at)
        if code != COHORT_DONE:
            return code
        if at[SP] + at[CN] > f.s_cells.shape[0]:
            return ROOM
        at[SP] = _stack_children(f, at[CN], at[SP])
        at[QN], at[SP] = _next_cohort(f, at[SP], cohort)
        at[QI], at[CN] = 0, 0
        if at[QN] == 0:
            return UNSOLVABLE


@lean_njit(inline="always")
def _expand_cohort(tables, generation, budget, scratch, f, memo, at):
    """Expand the cohort's nodes from ``at[QI]`` on, their children into C; returns ``COHORT_DONE``, a status
    when the search ends (``SOLVABLE``: the node ``at[QI]`` is the goal), or ``GROW`` / ``ROOM`` when ``best_n``
    must grow the memo or the frontier and call again (the node's ``at[PHASE]`` says where it goes on)."""
    while at[QI] < at[QN]:
        cells = f.q_cells[at[QI]]
        if at[PHASE] == NEW_NODE:
            _plain_key(cells, f.key)
            if _memo_find(memo, at[STAMP], f.key) >= 0:
                at[QI] += 1
                continue
            at[MEMO_COUNT], stored = _wide_store(memo, at[MEMO_COUNT], at[STAMP], f.key, at[MAX_ROWS])
            if stored == OUT_OF_MEMORY:
                return OUT_OF_MEMORY
            at[PHASE] = STORED_NODE
            if stored == GROW:
                return GROW
        board = board_of(cells)
        if at[PHASE] == STORED_NODE:
            if budget.max_bytes > 0 and 2 * _frontier_bytes(f) > budget.max_bytes:
                return OUT_OF_MEMORY
            if board.n_stacks == 1:
                return SOLVABLE
            if spent(at[NODES], budget.max_nodes, budget.deadline, budget.cancel[0]):
                return UNKNOWN
            at[NODES] += 1
            at[COUNT] = generate(cells, board, tables, generation, f.src, f.dst, f.no_sleep, scratch)
            at[PHASE] = GENERATED
        if at[RECORDS] + 1 > f.records.shape[0] or at[CN] + at[COUNT] > f.c_cells.shape[0]:
            return ROOM
        _record(f, at[QI], at[RECORDS])
        at[RECORDS] += 1
        count = at[COUNT]
        at[CN] = _add_children(cells, board, tables.compat, f.src[:count], f.dst[:count], at[RECORDS] - 1, f, at[CN])
        at[QI] += 1
        at[PHASE] = NEW_NODE
    return COHORT_DONE


@lean_njit()
def _record(f, qi, n_records):
    """Record the cohort's node ``qi`` (its parent record and move) as record ``n_records``."""
    for k in range(3):
        f.records[n_records, k] = f.q_info[qi, k]


@lean_njit()
def _add_children(cells, board, compat, src, dst, parent, f, cn):
    """Put the children ``src[i] -> dst[i]`` of ``cells`` (record ``parent``) in C from row ``cn``; returns C's rows."""
    edges = edge_count(board.present, compat)
    for i in range(src.shape[0]):
        child = f.c_cells[cn]
        _copy_words(cells, child)
        _, _, b = play(child, f.no_key, src[i], dst[i], board)
        f.c_info[cn, PARENT] = parent
        f.c_info[cn, SOURCE] = src[i]
        f.c_info[cn, TARGET] = dst[i]
        f.c_info[cn, VALUE] = edges - popcount(compat[b] & board.present)
        cn += 1
    return cn


@lean_njit()
def _stack_children(f, cn, sp):
    """Push C's ``cn`` children on S (room made) worst first, so the best (earliest of equals) ends on top;
    returns S's new top."""
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
    for i in range(cn):
        _copy_words(f.c_cells[order[i]], f.s_cells[sp])
        _copy_words(info[order[i]], f.s_info[sp])
        sp += 1
    return sp


@lean_njit()
def _next_cohort(f, sp, cohort):
    """Pop up to ``cohort`` states of S's top value into Q; returns ``(qn, sp)``."""
    qn = 0
    if sp > 0:
        value = f.s_info[sp - 1, VALUE]
        while qn < cohort and sp > 0 and f.s_info[sp - 1, VALUE] == value:
            sp -= 1
            _copy_words(f.s_cells[sp], f.q_cells[qn])
            _copy_words(f.s_info[sp], f.q_info[qn])
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
