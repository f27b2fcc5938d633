# mypy: disable-error-code="no-untyped-def"
"""Open blocks (``PRUNE_OPEN``): a small part of G, played with the rest of the board left open, must come down.

``_stuck_block`` asks a block hanging from G by a single edge to play out; a
block tied to the rest by several edges, or through two cards, escapes it.
This rule asks less of the rest and so holds for any set of cards: it plays
the block ``B`` with the other cards ``R`` replaced by what they could at most
do (``_plays_out_open``). It runs once a search, on its root, when the search
has expanded ``OPEN_AFTER`` nodes (``dfs``), unless its node budget is under
``OPEN_MIN_BUDGET``: a deal that is hard enough to get there pays a few thousand
small positions, the rest nothing. Blocks are the
components of G minus one or two cards with at most ``OPEN_SIDE_MAX`` cards,
with their neighbours (``open_block_stuck``); grids of at most 16 cells.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from boaf.game.bits import lean_njit, lowest_bit, popcount
from boaf.game.graph import U0, U1, bit, reach
from boaf.search.kernel.bundles import cache_slot

PRUNE_OPEN = 2048  # the root, once the search has OPEN_AFTER nodes: no block of G may fail to come down, R open
OPEN_AFTER = 1_024  # nodes a search expands before its root's open blocks are searched
OPEN_MIN_BUDGET = 4 * OPEN_AFTER  # a search with a smaller node budget skips the check (``dfs._opens``)
OPEN_SIDE_MAX = 8  # the most cards of a side (its block adds the one or two cards it hangs from)
BLOCK_MAX = OPEN_SIDE_MAX + 2  # the most cards of a block
OPEN_CELLS = 16  # the largest grid the rule runs on: a card's place takes 6 bits of a position
OPEN_POSITIONS = 4_096  # the most positions one block's search may meet (past them it claims nothing)
OPEN_TOTAL = 8_192  # and all of a root's blocks together (~1 ms on mid-game states)
OPEN_TABLE = 8_192  # slots of the positions' table (twice ``OPEN_POSITIONS``)

_ALIVE, _COVERED = np.uint64(16), np.uint64(32)  # a card's 6 bits: state (alive, covered by R) above its cell
_GONE = np.uint64(1) << np.uint64(60)  # R is down to nothing: a position's last flag
_CHECK, _KEEP = np.bool_(True), np.bool_(False)  # ``_push``'s ``check`` (typed bools, not literals: one copy)


@lean_njit(inline="always")
def _slot(table, position):
    """``position``'s slot in ``table`` (open addressing): where it is, or the empty slot where it goes."""
    mask = table.shape[0] - 1
    slot = cache_slot(position, table.shape[0])
    while table[slot] != U0 and table[slot] != position:
        slot = (slot + 1) & mask
    return slot


@lean_njit()
def _open_dead(position, who):
    """True when the cards alive in ``position`` can never meet R again or each other: some component of G on them
    holds no card of ``boundary`` while R is on the board, or they fall apart once R is gone. ``who`` is
    ``(cards, n, boundary, compat)``."""
    cards, n, boundary, compat = who
    alive = U0
    for i in range(n):
        if (position >> np.uint64(6 * i)) & _ALIVE != U0:
            alive |= bit(cards[i])
    gone = position & _GONE != U0
    left = alive
    while left != U0:
        part = reach(left & (U0 - left), alive, compat)
        left &= ~part
        if gone and left != U0:
            return True
        if not gone and part & boundary == U0:
            return True
    return False


@lean_njit()
def _plays_out_open(block, n, boundary, rest_cells, line, compat, work, positions):
    """The positions met, negated when the block of the ``n`` cards ``block[:BLOCK_MAX]`` in the cells
    ``block[BLOCK_MAX:]`` cannot come down with the rest of the board open (positive when it can, or when its
    search would meet more than ``positions`` positions: it then claims nothing). ``work`` is ``(table, todo,
    used)``: the table of positions met (empty), the stack of positions to expand, and the slots filled, one a
    position met (the caller empties them again).

    The rest ``R`` (its cells ``rest_cells``, not empty) is replaced by what it
    could at most do, and the search is exhaustive (a position is the block's
    cards alive, each in its cell, those R has covered with the cell, and
    whether R is gone). Proof, for any set ``B`` of cards with R = the other
    cards not empty: call a card of ``B`` *open* when it is compatible with a
    card of R (``boundary``; cards only leave, so no other card of ``B`` ever
    meets R). Map a real play to positions: the block's cards where they
    are, the open cells ``O`` = ``rest_cells`` with the cells where R covered a
    block card (a superset of R's cells at every time: R's cells change only
    by R covering a block card, which adds that cell, or by a move that
    empties one), and R gone exactly when R has no card left (a card of R
    leaves only when covered, and only a block card's cover leaves no card of
    R in its place). Each real move is (a) inside ``B``: the same move here;
    (b) inside R: no change; (c) an open card ``x`` covering a card of R in a
    cell ``c`` of R (so of ``O``) in line with ``x``: here ``x`` goes to ``c``,
    and R is gone if that was its last card, else R had two cards, so ``O``
    has two cells; (d) a card of R, from a cell of R (so of ``O``) in line
    with an open card ``x``, covering ``x``: here ``x`` is covered in its
    cell, which joins ``O``. A real play that ends in one stack ends here with
    R gone and one block card left, or with no block card left (the last
    stack is R's): the ends searched for. Every real state on that play is
    solvable, so maps to no position ``_open_dead`` names: a component of
    alive block cards with no open card while R is on the board is a
    component of G beside R's cards, and with R gone the alive block cards
    are all of G. So if no end is reachable here, the state is unsolvable.
    """
    cards, cells = block[:BLOCK_MAX], block[BLOCK_MAX:]
    table, todo, used = work
    who = (cards, n, boundary, compat)
    start = _first_position(cells, n)
    used[0] = _slot(table, start)
    table[used[0]] = start
    todo[0] = start
    top = np.int64(1)  # (an int64, not a literal: one compiled copy of ``_push``)
    met = np.int64(1)
    while top > 0 and met <= positions:
        top -= 1
        position = todo[top]
        gone = position & _GONE != U0
        open_cells, alive = _open_cells(position, n, rest_cells)
        if (gone and alive == 1) or (not gone and alive == 0):
            return met
        for i in range(n):
            shift_i = np.uint64(6 * i)
            field = (position >> shift_i) & np.uint64(63)
            if field & _ALIVE == U0:
                continue
            p = np.int64(field & np.uint64(15))
            cleared = position & ~(np.uint64(63) << shift_i)
            jumps = open_cells & line[p] if boundary & bit(cards[i]) != U0 else U0  # (empty once R is gone)
            if jumps != U0:  # card i meets R: it jumps to an open cell in line, or R covers it from one
                many = popcount(open_cells) >= 2
                while jumps != U0:
                    c = lowest_bit(jumps)
                    jumps &= jumps - U1
                    moved = cleared | ((_ALIVE | np.uint64(c)) << shift_i)
                    if many:
                        top, met = _push(moved, who, work, top, met, _KEEP)  # (the same cards alive: not dead)
                    top, met = _push(_emptied(moved, n) | _GONE, who, work, top, met, _CHECK)
                top, met = _push(cleared | ((_COVERED | np.uint64(p)) << shift_i), who, work, top, met, _CHECK)
            for j in range(n):  # pushed last, so searched first: the block's own covers, then R's
                shift_j = np.uint64(6 * j)
                other = (position >> shift_j) & np.uint64(63)
                if j == i or other & _ALIVE == U0:
                    continue
                q = np.int64(other & np.uint64(15))
                if compat[cards[i]] & bit(cards[j]) == U0 or line[p] & bit(q) == U0:
                    continue
                child = (cleared & ~(np.uint64(63) << shift_j)) | ((_ALIVE | np.uint64(q)) << shift_i)
                top, met = _push(child, who, work, top, met, _CHECK)
    return met if met > positions else -met


@lean_njit(inline="always")
def _first_position(cells, n):
    """The block's first position: its ``n`` cards alive, card ``i`` in the cell ``cells[i]``, R on the board."""
    start = np.uint64(0)
    for i in range(n):
        start |= (_ALIVE | np.uint64(cells[i])) << np.uint64(6 * i)
    return start


@lean_njit(inline="always")
def _open_cells(position, n, rest_cells):
    """``(open cells, alive cards)`` of ``position``: R's cells ``rest_cells`` with the cells where R covered a
    block card (none once R is gone), and how many of the block's ``n`` cards are alive."""
    gone = position & _GONE != U0
    open_cells = U0 if gone else rest_cells
    alive = 0
    for i in range(n):
        field = (position >> np.uint64(6 * i)) & np.uint64(63)
        if field & _ALIVE != U0:
            alive += 1
        elif field & _COVERED != U0 and not gone:
            open_cells |= bit(field & np.uint64(15))
    return open_cells, alive


@lean_njit(inline="always")
def _emptied(position, n):
    """``position`` with the cells of the cards R covered forgotten (R is gone: its cells no longer count)."""
    for i in range(n):
        shift = np.uint64(6 * i)
        if (position >> shift) & _COVERED != U0:
            position &= ~(np.uint64(63) << shift)
    return position


@lean_njit()
def _push(child, who, work, top, met, check):
    """Queue ``child`` unless met before or (when ``check``) dead (``_open_dead``); ``(top, met)`` after. Past
    ``todo``'s room it is dropped, with ``met`` past every budget: the search then claims nothing."""
    table, todo, used = work
    if met >= todo.shape[0]:
        return top, met
    slot = _slot(table, child)
    if table[slot] != U0:
        return top, met
    table[slot] = child
    used[met] = slot
    met += 1
    if check and _open_dead(child, who):
        return top, met
    todo[top] = child
    return top + 1, met


@njit(cache=True, nogil=True)
def open_block_stuck(root, compat, line):
    """True when some open block of the state ``root`` (``int8[ncells]``, at most ``OPEN_CELLS`` cells) cannot come
    down (``_plays_out_open``): the state is unsolvable.

    The blocks: each component ``C`` of G minus a card ``a``, or minus two cards
    ``a``, ``b``, with at most ``OPEN_SIDE_MAX`` cards, together with its
    neighbours (``a``, ``b`` or both), when cards are left outside it. Each
    block is searched once (smaller sides first), at most ``OPEN_POSITIONS``
    positions each and ``OPEN_TOTAL`` for all: bounded work (0.02 ms on a deal's
    root, 2 ms at most on mid-game states), of the order of the search's own
    stretch between clock checks (``CHECK_EVERY`` nodes), so it reads neither
    the clock nor the cancel flag; ``dfs`` reads both at its next node. Its
    arrays are fixed (~130 KB), like ``Scratch``, outside the memo's memory cap.
    """
    ncells = root.shape[0]
    present = U0
    where = np.empty(64, dtype=np.int64)
    for cell in range(ncells):
        if root[cell] >= 0:
            present |= bit(root[cell])
            where[root[cell]] = cell
    if ncells > OPEN_CELLS or popcount(present) < 4:
        return False
    work = (
        np.zeros(OPEN_TABLE, dtype=np.uint64),
        np.zeros(OPEN_POSITIONS + 1, dtype=np.uint64),
        np.zeros(OPEN_POSITIONS + 1, dtype=np.int64),
    )
    block_cards = np.empty(2 * BLOCK_MAX, dtype=np.int64)
    tried = np.zeros(256, dtype=np.uint64)
    spent = 0
    for size in range(1, OPEN_SIDE_MAX + 1):
        a_left = present
        while a_left != U0:
            a = lowest_bit(a_left)
            a_left &= a_left - U1
            b_left = present & ~(bit(a) - U1)  # b = a stands for a alone; else b > a
            while b_left != U0:
                b = lowest_bit(b_left)
                b_left &= b_left - U1
                without = present & ~bit(a) & ~bit(b)
                left = without
                while left != U0:
                    side = reach(left & (U0 - left), without, compat)
                    left &= ~side
                    if popcount(side) != size:
                        continue
                    block = side
                    s = side
                    while s != U0:
                        block |= compat[lowest_bit(s)] & present
                        s &= s - U1
                    rest = present & ~block
                    if rest == U0 or _tried(tried, block):
                        continue
                    n, boundary, rest_cells = _lay_out_block(block, rest, where, compat, block_cards)
                    budget = min(OPEN_POSITIONS, OPEN_TOTAL - spent)
                    met = _plays_out_open(block_cards, n, boundary, rest_cells, line, compat, work, budget)
                    if met < 0:
                        return True
                    for k in range(met):
                        work[0][work[2][k]] = U0  # the table empty again: only the slots filled
                    spent += met
                    if spent >= OPEN_TOTAL:
                        return False
    return False


@lean_njit(inline="always")
def _lay_out_block(block, rest, where, compat, block_cards):
    """``(n, boundary, rest_cells)`` of the block of cards ``block``: its ``n`` cards written to
    ``block_cards[:n]`` and their cells (``where``) to ``block_cards[BLOCK_MAX:BLOCK_MAX + n]``, in increasing
    card order; those compatible with a card of ``rest``; and the cells of the cards of ``rest``."""
    n = 0
    boundary = U0
    bl = block
    while bl != U0:
        c = lowest_bit(bl)
        bl &= bl - U1
        block_cards[n] = c
        block_cards[BLOCK_MAX + n] = where[c]
        if compat[c] & rest != U0:
            boundary |= bit(c)
        n += 1
    rest_cells = U0
    r = rest
    while r != U0:
        rest_cells |= bit(where[lowest_bit(r)])
        r &= r - U1
    return n, boundary, rest_cells


@lean_njit(inline="always")
def _tried(tried, block):
    """True when ``block`` was searched already; else it is noted (a direct-mapped set: a miss only searches a
    block twice)."""
    slot = cache_slot(block, tried.shape[0])
    if tried[slot] == block:
        return True
    tried[slot] = block
    return False
