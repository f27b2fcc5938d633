# mypy: disable-error-code="no-untyped-def"
"""The depth-first search (``dfs``): Constrained, Compatible, Ordered and Island Merge DFS.

Nodes count *expanded* states: states with more than one stack, not already
known unsolvable, whose children were generated.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from search.kernel.generate import BIG_CACHE, BIG_SEARCH, CUT_CACHE, _generate, _play, _score_cache, _unplay
from search.kernel.graph import U0, _bit
from search.kernel.islands import _child_tag, _enter_island
from search.kernel.keys import (
    NARROW_CELLS,
    _copy_words,
    _key_children,
    _narrow_key,
    _packed_child,
    _packed_labels,
    _plain_key,
    _ranked_key,
    key_words,
    narrow_max_stacks,
    root_labels,
)
from search.kernel.memo import _fit_memo, _memo_add, _memo_find, _narrow_add, _narrow_find, _narrow_full
from search.kernel.order import WORK_ROWS
from search.kernel.prune import ISLANDS, SLEEP, _fall_asleep, root_prunable
from search.kernel.status import CHECK_EVERY, OUT_OF_MEMORY, SOLVABLE, TABLE_FULL, UNKNOWN, UNSOLVABLE, now_s


@njit(cache=True, nogil=True)
def dfs(
    root,
    rows,
    cols,
    compat,
    line,
    cell_cuts,
    options,
    coefs,
    cutoff,
    memo_min,
    max_nodes,
    deadline,
    cancel,
    memo,
    stamp,
    path,
    max_bytes,
    labels,
    fill,
):
    """Constrained, Compatible or Ordered DFS from ``root`` (``int8[ncells]``).

    ``cell_cuts`` is ``cell_cut_table``'s for grids of at most 16 cells (empty
    otherwise: the cuts are then found per node). ``options`` is a set of the
    bits above; ``memo_min`` is the fewest stacks a
    state needs to be looked up in or added to the memo (smaller subtrees are
    cheaper to search again than to look up). Returns ``(status, nodes,
    path_length, memo)``; on ``SOLVABLE`` the moves are ``path[:path_length]``
    as ``(source, target)`` cells. The memo may be grown or replaced (a table
    of the wrong width) and is returned for reuse: a wide table with a fresh
    ``stamp``, a one-word table once cleared. ``max_nodes <= 0`` and
    ``deadline <= 0`` (seconds on the ``now_s`` clock) mean no budget;
    ``cancel[0] != 0`` stops the search as ``UNKNOWN`` at its next node.
    ``max_bytes > 0`` caps the memo, the only structure that grows with the
    search (see ``_memo_add``); a state that no longer fits stops the search as
    ``OUT_OF_MEMORY``.

    On grids of at most ``NARROW_CELLS`` cells (Island Merge aside) the memo has
    one-word keys (``_narrow_key``, ``_ranked_key``) from the card ``labels``
    (``int64[52]``, ``root_labels``; empty: the root's own).
    A non-empty ``fill`` (``int64``: the entry counts of every search sharing
    the table) shares a one-word memo between threads: it never grows,
    ``fill[stamp]`` counts this search's entries (a one-word table has no
    stamps, so ``stamp`` names the search), and once the table would pass three quarters full the search
    stops as ``TABLE_FULL`` (the caller grows it and searches again: every
    entry is a state proved unsolvable, so a restart keeps what was learned).
    Two threads writing one free slot at once lose one entry, which only
    costs a later search.
    """
    ncells = rows * cols
    islands = options & ISLANDS != 0
    narrow = ncells <= NARROW_CELLS and not islands
    nw = key_words(ncells) + (1 if islands else 0)  # Island Merge keys carry the island under way
    memo = _fit_memo(memo, 1 if narrow else nw + 1, max_bytes)
    max_rows = max_bytes // memo.strides[0] if max_bytes > 0 else 0
    packed_max = narrow_max_stacks(ncells)  # more stacks than this take a ranked key
    shared = fill.shape[0] > 0
    if narrow and labels.shape[0] == 0:
        labels = np.empty(52, dtype=np.int64)
        root_labels(root, labels)
    cells = root.copy()
    occupied = U0
    present = U0
    n_stacks = np.int64(0)  # (not 0: see "Literal ints" at the top)
    for i in range(ncells):
        if cells[i] >= 0:
            occupied |= _bit(i)
            present |= _bit(cells[i])
            n_stacks += 1
    if n_stacks <= 1:
        return SOLVABLE, 0, 0, memo
    if root_prunable(root, rows, cols, compat, line, options):
        return UNSOLVABLE, 0, 0, memo
    width = ncells * min(ncells - 1, rows + cols - 2) + 1
    src = np.empty((n_stacks, width), dtype=np.int8)
    dst = np.empty((n_stacks, width), dtype=np.int8)
    count = np.zeros(n_stacks, dtype=np.int64)
    nxt = np.zeros(n_stacks, dtype=np.int64)
    moved = np.empty((n_stacks, 2), dtype=np.int8)  # the cards of the move out of depth d
    # sleep[d, cell]: targets of the moves out of ``cell`` asleep at depth d; done[d, cell]: searched there
    sleep = np.zeros((n_stacks, ncells), dtype=np.uint64)
    done = np.zeros((n_stacks, ncells), dtype=np.uint64)
    sleeping = options & SLEEP != 0
    work = np.empty((WORK_ROWS, 128), dtype=np.int64)
    scores = np.zeros(52, dtype=np.float64)
    score_cache = _score_cache(np.int64(CUT_CACHE))
    tarjan_i = np.empty((4, 64), dtype=np.int64)
    tarjan_u = np.empty(64, dtype=np.uint64)
    where = np.zeros(52, dtype=np.int64)  # the cell of each card on the board (scratch of _generate)
    cut_cache = np.zeros((7, CUT_CACHE), dtype=np.uint64)  # see ``_cached_cuts`` and ``_graph_facts``
    key = np.zeros(nw, dtype=np.uint64)
    cur = np.zeros(0 if narrow else nw, dtype=np.uint64)  # the wide key of the current state, kept move by move
    if not narrow:
        _plain_key(cells, cur)  # (an Island Merge key's last word, the island, stays 0 here)
    packed = np.zeros(n_stacks + 1, dtype=np.uint64)  # one-word keys: the packed labels at depth d
    child_key = np.empty((n_stacks, width) if narrow else (1, 1), dtype=np.uint64)  # one-word keys of children
    if narrow:
        packed[0] = _packed_labels(cells, labels)
    tag = np.zeros(n_stacks + 1, dtype=np.uint64)  # Island Merge: the island under way at depth d (0: none)
    island = np.zeros((n_stacks + 1, 3), dtype=np.int64)  # its mode, a, b (see ``_island_split``)
    island_side = np.zeros(n_stacks + 1, dtype=np.uint64)
    memo_count = np.int64(0)
    nodes = 1
    depth = np.int64(0)
    fresh = True  # the node at ``depth`` was just entered: its children are not generated yet
    while True:
        if fresh:
            fresh = False
            nxt[depth] = 0
            count[depth] = _generate(
                cells,
                occupied,
                present,
                line,
                cell_cuts,
                compat,
                options,
                coefs,
                n_stacks,
                cutoff,
                src[depth],
                dst[depth],
                work,
                scores,
                score_cache,
                tarjan_i,
                tarjan_u,
                where,
                sleep[depth],
                cut_cache,
            )
            if islands:
                count[depth] = _enter_island(
                    cells,
                    present,
                    compat,
                    tag,
                    island,
                    island_side,
                    depth,
                    src[depth],
                    dst[depth],
                    count[depth],
                    tarjan_i,
                    tarjan_u,
                )
            if narrow and n_stacks - 1 >= memo_min:
                _key_children(
                    packed[depth], occupied, cells, labels, src[depth], dst[depth], count[depth],
                    ncells, n_stacks - 1 > packed_max, memo, child_key[depth],
                )  # fmt: skip
        if nxt[depth] < count[depth]:
            i = nxt[depth]
            nxt[depth] += 1
            s = src[depth, i]
            t = dst[depth, i]
            if sleeping and i > 0:
                done[depth, src[depth, i - 1]] |= _bit(dst[depth, i - 1])
            a = cells[s]
            b = cells[t]
            occupied, present, n_stacks = _play(cells, cur, s, t, a, b, occupied, present, n_stacks)
            moved[depth, 0] = a
            moved[depth, 1] = b
            if n_stacks == 1:
                for d in range(depth + 1):
                    path[d, 0] = src[d, nxt[d] - 1]
                    path[d, 1] = dst[d, nxt[d] - 1]
                return SOLVABLE, nodes, depth + 1, memo
            if islands:
                tag[depth + 1] = _child_tag(
                    island[depth, 0], island[depth, 1], island[depth, 2], island_side[depth], present, b
                )
            if n_stacks >= memo_min:
                if narrow:
                    k = child_key[depth, i] if n_stacks <= packed_max else _ranked_key(cells, labels, occupied, ncells)
                    known = _narrow_find(memo, k) >= 0
                else:
                    _copy_words(cur, key)
                    known = False
                    if islands and tag[depth + 1] != U0:
                        key[nw - 1] = tag[depth + 1]
                        known = _memo_find(memo, stamp, key) >= 0
                        key[nw - 1] = U0
                    known = known or _memo_find(memo, stamp, key) >= 0
                if known:
                    occupied, present, n_stacks = _unplay(cells, cur, s, t, a, b, occupied, present, n_stacks)
                    continue
            if max_nodes > 0 and nodes >= max_nodes:
                return UNKNOWN, nodes, 0, memo
            if cancel[0] != 0 or (nodes % CHECK_EVERY == 0 and deadline > 0 and now_s() >= deadline):
                return UNKNOWN, nodes, 0, memo
            if narrow:
                packed[depth + 1] = _packed_child(packed[depth], occupied | _bit(s), s, t, labels[a])
            if sleeping:
                _fall_asleep(sleep[depth], done[depth], s, t, sleep[depth + 1])
                done[depth + 1, :] = U0
            depth += 1
            nodes += 1
            fresh = True
            if nodes == BIG_SEARCH:
                # a long search: caches big enough for its card and cell sets (too costly to clear for every short one)
                cut_cache = np.zeros((7, BIG_CACHE), dtype=np.uint64)
                score_cache = _score_cache(np.int64(BIG_CACHE))
        else:
            if depth == 0:
                return UNSOLVABLE, nodes, 0, memo
            if n_stacks >= memo_min:
                if narrow:
                    if n_stacks <= packed_max:
                        k = _narrow_key(packed[depth], occupied, ncells)
                    else:
                        k = _ranked_key(cells, labels, occupied, ncells)
                    if shared:
                        at = _narrow_find(memo, k)
                        if at < 0:
                            if _narrow_full(fill.sum(), memo.shape[0]):
                                return TABLE_FULL, nodes, 0, memo
                            memo[-1 - at, 0] = k
                            fill[stamp] += 1
                        fits = True
                    else:
                        memo, memo_count, fits = _narrow_add(memo, k, memo_count, max_rows)
                else:
                    _copy_words(cur, key)
                    if islands:
                        key[nw - 1] = tag[depth]
                    memo, memo_count, fits = _memo_add(memo, stamp, key, memo_count, max_rows)
                if not fits:
                    return OUT_OF_MEMORY, nodes, 0, memo
            depth -= 1
            i = nxt[depth] - 1
            occupied, present, n_stacks = _unplay(
                cells, cur, src[depth, i], dst[depth, i], moved[depth, 0], moved[depth, 1], occupied, present, n_stacks
            )
