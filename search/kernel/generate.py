# mypy: disable-error-code="no-untyped-def"
"""Move generation: the children of a node, pruned and ordered, and ``play``/``unplay``.

A move ``x`` onto ``y`` removes card ``y`` from the compatibility graph and
keeps ``x``. So a child's graph is the parent's minus the target card, and
everything graph-based (pruning, ordering features, flockability) is computed
once per distinct target card, not once per child.
"""

from __future__ import annotations

import numpy as np

from boaf.game.bits import lean_njit, lowest_bit, popcount
from boaf.game.graph import U0, U1, bit, cut_cells, cut_vertices
from boaf.search.kernel import prune
from boaf.search.kernel.bundles import (
    BEST_SCORE,
    CELL_CUTS,
    CELL_SET,
    FACT_CUTS,
    FACT_HANGING,
    FACT_ONES,
    FACT_SET,
    FACT_TWOS,
    Board,
    cache_slot,
    locate,
)
from boaf.search.kernel.keys import CELLS_PER_WORD
from boaf.search.kernel.order import _child_scores, _sort_children, _square_scores
from boaf.search.kernel.prune import _frozen_block, _hanging, _leaf_stranded

ORDER_MAX_STACKS = 16  # above this many stacks, children are ordered by their graph's squared degrees (``_order``)
SQUARES_CUTOFF = 6  # ``ORDER_SQUARES`` orders the children of nodes of more stacks than this (4-10 are alike)


MAX_CHILDREN_PER_CELL = 51


@lean_njit(inline="always")
def _cell_cuts(occupied, tables, scratch):
    """The cut cells of the occupied cells ``occupied`` (two or more), from the table or a direct-mapped cache.

    The cuts depend on the cell set alone, and a search meets one set in many
    states (cells topped by other cards); past the table, ``cut_cells`` finds them
    on the grid's lines. ``cell_facts[CELL_SET, slot]`` holds
    the set whose cuts are in ``cell_facts[CELL_CUTS, slot]``; 0, never a
    queried set, marks a free slot. The table and a cache hit are read inline,
    and only a miss calls out (a call that passes ``Scratch`` costs some 200 words).
    """
    if tables.cell_cuts.shape[0] > 0:
        return np.uint64(tables.cell_cuts[occupied])
    cache = scratch.cell_facts
    slot = cache_slot(occupied, cache.shape[1])
    if cache[CELL_SET, slot] != occupied:
        cache[CELL_SET, slot] = occupied
        cache[CELL_CUTS, slot] = cut_cells(occupied, tables.rows, tables.cols, scratch.graph)
    return cache[CELL_CUTS, slot]


@lean_njit(inline="always")
def _graph_facts(present, compat, scratch):
    """``(cuts, degree-1 cards, degree-2 cards, hanging)`` of the compatibility graph on ``present``.

    What ``generate`` reads of G, through a direct-mapped cache of card sets
    (``scratch.facts``): a search meets one card set in many states, cards in
    other cells. ``hanging`` are the cut vertices ``_hanging`` names. A hit is
    read inline; a miss calls ``_new_facts``.
    """
    facts = scratch.facts
    slot = cache_slot(present, facts.shape[1])
    if facts[FACT_SET, slot] != present:
        _new_facts(present, compat, slot, facts, scratch.graph, scratch.sides)
    return facts[FACT_CUTS, slot], facts[FACT_ONES, slot], facts[FACT_TWOS, slot], facts[FACT_HANGING, slot]


@lean_njit()
def _new_facts(present, compat, slot, facts, graph, sides):
    """Fill ``_graph_facts``' cache slot ``slot`` for the card set ``present``."""
    cuts, _ = cut_vertices(present, compat, graph)
    ones = U0
    twos = U0
    p = present
    while p != U0:
        x = lowest_bit(p)
        p &= p - U1
        k = popcount(compat[x] & present)
        if k == 1:
            ones |= bit(x)
        elif k == 2:
            twos |= bit(x)
    facts[FACT_SET, slot] = present
    facts[FACT_CUTS, slot] = cuts
    facts[FACT_ONES, slot] = ones
    facts[FACT_TWOS, slot] = twos
    facts[FACT_HANGING, slot] = _hanging(cuts, present, compat, sides)


@lean_njit(inline="always")
def generate(cells, board, tables, config, src, dst, sleep, scratch):
    """Children of a node into ``src``/``dst``; returns their count.

    ``sleep[cell]`` is the mask of target cells of the moves out of ``cell`` that
    are asleep (see ``dfs``): those are not generated.

    Generation order: sources row-major, then targets row-major (as
    ``State.legal_moves``). Pruning tests are made once per distinct target
    card (graph) or source cell (cells), since that is all a child's graph or
    grid depends on. With ``ORDER`` and more than ``cutoff`` stacks, children
    are stably sorted by descending score (``_order``); with ``ORDER_SQUARES``
    too, at more than ``SQUARES_CUTOFF`` stacks, by the sum of squared degrees
    of their graph (``_square_scores``; ``benchmarks/solver.py --ablation``
    prints both orders). Nothing but ``src``, ``dst`` and ``scratch`` is
    written.

    Inlined into the search: a call that passes ``Scratch`` would push some 200
    words on every node (numba passes each array of a named tuple as its own
    arguments); inlining costs 1-2 s more of the search kernel's compile on a
    first start.
    """
    options = config.options
    n_stacks = board.n_stacks
    bad = U0  # target cards whose removal disconnects G
    bad_cells = U0  # source cells whose emptying splits the grid
    # Cards of degree 1 and 2 in G: G minus card b has as leaves the degree-1 cards
    # that are not b's neighbours and the degree-2 cards that are.
    deg1 = U0
    deg2 = U0
    located = False  # ``scratch.where`` holds the cells of this node's cards
    if options & (prune.PRUNE_GRAPH | prune.PRUNE_LEAF | prune.PRUNE_FROZEN) != 0 and n_stacks > 2:
        cuts, ones, twos, hanging = _graph_facts(board.present, tables.compat, scratch)
        if options & prune.PRUNE_GRAPH != 0:
            bad = cuts
        if options & prune.PRUNE_LEAF != 0 and n_stacks > 3:
            deg1, deg2 = ones, twos
        if options & prune.PRUNE_FROZEN != 0 and hanging != U0 and n_stacks > 3:
            located = True
            locate(cells, scratch.where)
            if _frozen_block(hanging, board, tables, scratch):
                return 0
    if options & prune.PRUNE_CELLS != 0 and n_stacks > 2:
        bad_cells = _cell_cuts(board.occupied, tables, scratch)
    anchor = options & prune.PRUNE_ANCHOR != 0
    compat, line, occupied = tables.compat, tables.line, board.occupied
    count = 0
    targets = U0  # the children's target cards
    kinds = scratch.kinds
    bad_targets = _sort_into_kinds(cells, occupied, bad, kinds)
    o = occupied & ~bad_cells
    while o != U0:
        s = lowest_bit(o)
        o &= o - U1
        tm = line[s] & occupied & ~sleep[s] & ~bad_targets & _compatible_cells(cells[s], kinds)
        while tm != U0:
            t = lowest_bit(tm)
            tm &= tm - U1
            b = cells[t]
            if deg1 | deg2 != U0:
                leaves = ((deg1 & ~compat[b]) | (deg2 & compat[b])) & ~bit(b)
                if leaves != U0:
                    if not located:
                        located = True
                        locate(cells, scratch.where)
                    if _child_stranded(leaves, s, t, cells, board, tables, anchor, scratch.where):
                        continue
            src[count] = s
            dst[count] = t
            count += 1
            targets |= bit(b)
    if ordered(config, n_stacks, count):
        _order(cells, board, compat, config, src[:count], dst[:count], scratch, targets)
    return count


@lean_njit(inline="always")
def ordered(config, n_stacks, count):
    """True when ``generate`` orders the ``count`` children of a node of ``n_stacks`` stacks (``_order``)."""
    squares = config.options & prune.ORDER_SQUARES != 0
    return config.options & prune.ORDER != 0 and n_stacks > (SQUARES_CUTOFF if squares else config.cutoff) and count > 1


@lean_njit(inline="always")
def _sort_into_kinds(cells, occupied, bad, kinds):
    """Write the occupied cells of each suit into ``kinds[0:4]`` and of each rank ``r`` into ``kinds[5 + r]``
    (``kinds[4]`` and ``kinds[18]`` stay empty); returns the cells of the cards ``bad``.

    Two cards may join when they share a suit or their ranks differ by at most one
    (``boaf.game.cards.compatible``, the rule ``compat_table`` holds), so the cells
    whose cards join card ``a`` are four of these masks (``_compatible_cells``):
    ``generate`` then walks only the moves there are, not every pair of cells in
    line (on a full 6x6 grid, some 160 moves among 360 pairs).
    """
    for k in range(kinds.shape[0]):
        kinds[k] = U0
    bad_cells = U0
    o = occupied
    while o != U0:
        i = lowest_bit(o)
        o &= o - U1
        c = cells[i]
        kinds[c & 3] |= bit(i)
        kinds[5 + (c >> 2)] |= bit(i)
        bad_cells |= ((bad >> np.uint64(c)) & U1) << np.uint64(i)
    return bad_cells


@lean_njit(inline="always")
def _compatible_cells(a, kinds):
    """The cells of ``_sort_into_kinds``' masks whose cards may join card ``a`` (with ``a``'s own cell)."""
    r = 4 + (a >> 2)
    return kinds[a & 3] | kinds[r] | kinds[r + 1] | kinds[r + 2]


@lean_njit(inline="always")
def _child_stranded(leaves, s, t, cells, board, tables, anchor, where):
    """``_leaf_stranded`` for the child of the move ``s -> t``, with ``where`` the cells of the node's cards."""
    a = cells[s]
    where[a] = t
    child_present = board.present & ~bit(cells[t])
    stranded = _leaf_stranded(
        leaves, child_present, board.occupied & ~bit(s), where, tables.compat, tables.line, anchor
    )
    where[a] = s
    return stranded


@lean_njit()
def _order(cells, board, compat, config, src, dst, scratch, targets):
    """Sort the children ``src``/``dst`` stably by descending score of their target card (``targets``: those cards).

    With ``ORDER_SQUARES`` the score is the sum of the squared degrees of the
    child's graph (``_square_scores``). Without it, up to ``ORDER_MAX_STACKS``
    stacks (the most the ordering model was fitted on: a 4x4 deal) the score
    is the subset-H estimate (``_child_scores``), and above, it is the
    squared degrees, ties broken by the child's edges: a few popcounts a target instead
    of connectivity flows on graphs of up to 52 cards, which would make tiny
    searches on 5x5 and 6x6 grids cost 10-40x a 4x4 search of as many nodes.
    With it the search settles every 4x13 deal of 1-1000 within 1 s
    (``benchmarks/solver.py`` prints the 5x5 and 4x13 rows).

    With ``ORDER_LATER`` the scores are left in ``scratch.scores``, with the
    highest at ``BEST_SCORE``, and the children in generation order: ``dfs``
    places them one at a time (``dfs._place_next``), and a search that needs
    only a node's first child does not pay for sorting the rest.
    """
    present, scores = board.present, scratch.scores
    if config.coefs is None or board.n_stacks > ORDER_MAX_STACKS or config.options & prune.ORDER_SQUARES != 0:
        best = _square_scores(present, targets, compat, scores)
    else:
        best = _subset_h_scores(config.coefs, present, targets, compat, scratch)
    if config.options & prune.ORDER_LATER == 0:
        _sort_children(cells, scores, src, dst, src.shape[0], targets, scratch.sort_work)
    else:
        scores[BEST_SCORE] = best


@lean_njit()
def _subset_h_scores(coefs, present, targets, compat, scratch):
    """``_child_scores`` into ``scratch.scores``; returns the highest score of ``targets``.

    ``coefs`` is ``None`` for every served algorithm (``boaf.search.tables.kernel_config``):
    numba then drops this body before typing it (its branch pruning on a ``None``
    argument), and ``_order``'s test ``config.coefs is None`` is a constant, so
    the search's compiled copy holds no connectivity flows: they were a third of
    its compile on a first start. Subset H (``ORDERED_SUBSET_H``: benchmarks,
    tests, the retraining job's cutoff sweep) passes the model's coefficients
    and gets a copy of the search of its own, compiled when first used.
    """
    if coefs is None:
        return 0.0
    _child_scores(present, targets, compat, coefs, scratch)
    scores = scratch.scores
    best = scores[lowest_bit(targets)]
    while targets != U0:
        best = max(best, scores[lowest_bit(targets)])
        targets &= targets - U1
    return best


@lean_njit(inline="always")
def _toggle_move(key, s, t, a, b):
    """Update the wide key for the move of card ``a`` in cell ``s`` onto card ``b`` in cell ``t`` (or undo it)."""
    key[s // CELLS_PER_WORD] ^= np.uint64(a + 1) << np.uint64(6 * (s % CELLS_PER_WORD))
    key[t // CELLS_PER_WORD] ^= np.uint64((a + 1) ^ (b + 1)) << np.uint64(6 * (t % CELLS_PER_WORD))


@lean_njit(inline="always")
def play(cells, key, s, t, board):
    """Move the card in cell ``s`` onto the card in cell ``t``; returns the child's ``Board`` and the two cards.

    A non-empty wide ``key`` is kept up to date (one-word keys are built from ``_packed_child``).
    """
    a = cells[s]
    b = cells[t]
    cells[t] = a
    cells[s] = -1
    if key.shape[0] > 0:
        _toggle_move(key, s, t, a, b)
    return Board(board.occupied & ~bit(s), board.present & ~bit(b), board.n_stacks - 1), a, b


@lean_njit(inline="always")
def unplay(cells, key, s, t, a, b, board):
    """Undo ``play`` of card ``a`` in cell ``s`` onto card ``b`` in cell ``t``; returns the parent's ``Board``."""
    cells[s] = a
    cells[t] = b
    if key.shape[0] > 0:
        _toggle_move(key, s, t, a, b)
    return Board(board.occupied | bit(s), board.present | bit(b), board.n_stacks + 1)
