# mypy: disable-error-code="no-untyped-def"
"""Move generation: the children of a node, pruned and ordered, and ``_play``/``_unplay``.

A move ``x`` onto ``y`` removes card ``y`` from the compatibility graph and
keeps ``x``. So a child's graph is the parent's minus the target card, and
everything graph-based (pruning, ordering features, flockability) is computed
once per distinct target card, not once per child.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from game.bits import lowest_bit, popcount
from search.kernel.graph import U0, U1, _bit, cut_vertices
from search.kernel.keys import CELLS_PER_WORD
from search.kernel.order import _child_scores, _sort_children
from search.kernel.prune import (
    ORDER,
    PRUNE_ANCHOR,
    PRUNE_CELLS,
    PRUNE_FROZEN,
    PRUNE_GRAPH,
    PRUNE_LEAF,
    _frozen_block,
    _hanging,
    _leaf_stranded,
)

ORDER_MAX_STACKS = 16  # above this many stacks, children are ordered by flockability alone (see ``_generate``)


MAX_CHILDREN_PER_CELL = 51


CUT_CACHE = 256  # slots of each direct-mapped cache of cut vertices (``_cached_cuts``) and of scores
BIG_SEARCH = 4_000  # nodes after which a search's caches get BIG_CACHE slots
BIG_CACHE = 16384  # (-4965: 555 -> 511 ns a node)


@njit(cache=True, nogil=True)
def _score_cache(slots):
    """An empty score cache of ``slots`` slots: card masks, scores, connectivities (``_child_scores``)."""
    return np.zeros(slots, dtype=np.uint64), np.zeros(slots, dtype=np.float64), np.zeros(slots, dtype=np.int64)


@njit(cache=True, nogil=True)
def _cached_cuts(nodes, links, keys, values, tarjan_i, tarjan_u):
    """``cut_vertices(nodes, links)``'s cuts (``nodes`` non-empty), through a direct-mapped cache.

    The cuts depend on the node set alone (the card set for G, the occupied
    cells for the grid), and a search meets one set in many states: cards in
    other cells, or cells topped by other cards. ``keys[slot]`` holds the set
    whose cuts are in ``values[slot]``; 0, never a queried set, marks a free slot.
    """
    slot = np.int64(((nodes * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)) & np.uint64(keys.shape[0] - 1))
    if keys[slot] == nodes:
        return values[slot]
    cuts, _ = cut_vertices(nodes, links, tarjan_i[0], tarjan_i[1], tarjan_i[2], tarjan_i[3], tarjan_u)
    keys[slot] = nodes
    values[slot] = cuts
    return cuts


@njit(cache=True, nogil=True)
def _graph_facts(present, compat, cache, tarjan_i, tarjan_u):
    """``(cuts, degree-1 cards, degree-2 cards, hanging)`` of the compatibility graph on ``present``, through ``cache``.

    As ``_cached_cuts``, for what ``_generate`` reads of G: rows 0 and 1 of
    ``cache`` hold the card sets and their cut vertices, rows 4 and 5 their
    cards of degree 1 and 2, row 6 the cut vertices ``_hanging`` names.
    """
    slot = np.int64(((present * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)) & np.uint64(cache.shape[1] - 1))
    if cache[0, slot] != present:
        cuts, _ = cut_vertices(present, compat, tarjan_i[0], tarjan_i[1], tarjan_i[2], tarjan_i[3], tarjan_u)
        ones = U0
        twos = U0
        p = present
        while p != U0:
            x = lowest_bit(p)
            p &= p - U1
            k = popcount(compat[x] & present)
            if k == 1:
                ones |= _bit(x)
            elif k == 2:
                twos |= _bit(x)
        cache[0, slot] = present
        cache[1, slot] = cuts
        cache[4, slot] = ones
        cache[5, slot] = twos
        cache[6, slot] = _hanging(cuts, present, compat)
    return cache[1, slot], cache[4, slot], cache[5, slot], cache[6, slot]


@njit(cache=True, nogil=True)
def _generate(
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
    src,
    dst,
    work,
    scores,
    score_cache,
    tarjan_i,
    tarjan_u,
    where,
    sleep,
    cut_cache,
):
    """Children of a node into ``src``/``dst``; returns their count.

    ``sleep[cell]`` is the mask of target cells of the moves out of ``cell`` that
    are asleep (see ``dfs``): those are not generated.

    Generation order: sources row-major, then targets row-major (as
    ``State.legal_moves``). Pruning tests are made once per distinct target
    card (graph) or source cell (cells), since that is all a child's graph or
    grid depends on. With ``ORDER`` and more than ``cutoff`` stacks, children
    are stably sorted by descending score. Above ``ORDER_MAX_STACKS`` (the most
    stacks the ordering model was fitted on: a 4x4 deal) the score is the
    child's flockability alone (its graph's edges: the parent's less the
    target's degree), one popcount a target instead of connectivity flows on
    graphs of up to 52 cards, which made tiny searches on 5x5 and 6x6 grids
    cost 10-40x a 4x4 search of as many nodes.
    """
    count = 0
    bad = U0  # target cards whose removal disconnects G
    bad_cells = U0  # source cells whose emptying splits the grid
    # Cards of degree 1 and 2 in G: G minus card b has as leaves the degree-1 cards
    # that are not b's neighbours and the degree-2 cards that are.
    deg1 = U0
    deg2 = U0
    located = False  # ``where`` holds the cells of this node's cards
    if options & (PRUNE_GRAPH | PRUNE_LEAF | PRUNE_FROZEN) != 0 and n_stacks > 2:
        cuts, ones, twos, hanging = _graph_facts(present, compat, cut_cache, tarjan_i, tarjan_u)
        if options & PRUNE_GRAPH != 0:
            bad = cuts
        if options & PRUNE_LEAF != 0 and n_stacks > 3:
            deg1, deg2 = ones, twos
        if options & PRUNE_FROZEN != 0 and hanging != U0 and n_stacks > 3:
            located = True
            for i in range(cells.shape[0]):
                if cells[i] >= 0:
                    where[cells[i]] = i
            if _frozen_block(hanging, present, occupied, cells, where, compat, line, work):
                return 0
    if options & PRUNE_CELLS != 0 and n_stacks > 2:
        if cell_cuts.shape[0] > 0:
            bad_cells = np.uint64(cell_cuts[occupied])
        else:
            bad_cells = _cached_cuts(occupied, line, cut_cache[2], cut_cache[3], tarjan_i, tarjan_u)
    anchor = options & PRUNE_ANCHOR != 0
    o = occupied & ~bad_cells
    while o != U0:
        s = lowest_bit(o)
        o &= o - U1
        a = cells[s]
        tm = line[s] & occupied & ~sleep[s]
        ca = compat[a] & ~bad
        while tm != U0:
            t = lowest_bit(tm)
            tm &= tm - U1
            b = cells[t]
            if ca & _bit(b) == U0:
                continue
            if deg1 | deg2 != U0:
                leaves = ((deg1 & ~compat[b]) | (deg2 & compat[b])) & ~_bit(b)
                if leaves != U0:
                    if not located:
                        located = True
                        for i in range(cells.shape[0]):
                            if cells[i] >= 0:
                                where[cells[i]] = i
                    where[a] = t
                    stranded = _leaf_stranded(
                        leaves, present & ~_bit(b), occupied & ~_bit(s), where, compat, line, anchor
                    )
                    where[a] = s
                    if stranded:
                        continue
            src[count] = s
            dst[count] = t
            count += 1
    if options & ORDER != 0 and n_stacks > cutoff and count > 1:
        targets = U0
        for i in range(count):
            targets |= _bit(cells[dst[i]])
        if n_stacks <= ORDER_MAX_STACKS:
            _child_scores(present, compat, targets, coefs, work, scores, score_cache[0], score_cache[1], score_cache[2])
        else:
            while targets != U0:
                y = lowest_bit(targets)
                targets &= targets - U1
                scores[y] = -popcount(compat[y] & present)  # the child's edges, less the parent's
        _sort_children(cells, scores, src, dst, count)
    return count


@njit(cache=True, nogil=True, inline="always")
def _toggle_move(key, s, t, a, b):
    """Update the wide key for the move of card ``a`` in cell ``s`` onto card ``b`` in cell ``t`` (or undo it)."""
    key[s // CELLS_PER_WORD] ^= np.uint64(a + 1) << np.uint64(6 * (s % CELLS_PER_WORD))
    key[t // CELLS_PER_WORD] ^= np.uint64((a + 1) ^ (b + 1)) << np.uint64(6 * (t % CELLS_PER_WORD))


@njit(cache=True, nogil=True, inline="always")
def _play(cells, key, s, t, a, b, occupied, present, n_stacks):
    """Move card ``a`` from cell ``s`` onto card ``b`` in cell ``t``; returns ``occupied, present, n_stacks``.

    A non-empty wide ``key`` is kept up to date (one-word keys are built from ``_packed_child``).
    """
    cells[t] = a
    cells[s] = -1
    if key.shape[0] > 0:
        _toggle_move(key, s, t, a, b)
    return occupied & ~_bit(s), present & ~_bit(b), n_stacks - 1


@njit(cache=True, nogil=True, inline="always")
def _unplay(cells, key, s, t, a, b, occupied, present, n_stacks):
    """Undo ``_play`` (the same arguments); returns the old ``occupied, present, n_stacks``."""
    cells[s] = a
    cells[t] = b
    if key.shape[0] > 0:
        _toggle_move(key, s, t, a, b)
    return occupied | _bit(s), present | _bit(b), n_stacks + 1
