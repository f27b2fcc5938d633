# mypy: disable-error-code="no-untyped-def"
"""The option bits of ``dfs`` and ``best_n``, and the pruning rules they switch on, each with its proof.

``ordered`` switches on every rule below, ``compatible`` only ``SLEEP``; each
rule's proof is its function's docstring, and ``benchmarks/solver.py
--ablation`` prints what each saves, in nodes and time, in one process:

- ``PRUNE_LEAF`` and ``PRUNE_ANCHOR``: a child that strands a leaf of G
  (``_leaf_stranded``) is unsolvable.
- ``SLEEP``: sleep sets (``_fall_asleep``) skip a child reached by two
  commuting moves whose other order was searched; no node count of a
  memoised state changes.
- ``PRUNE_FROZEN``: a frozen block hanging from a cut vertex by one edge must
  be able to come down (``_frozen_block``).
- ``PRUNE_BLOCKS``: near a deal's root, no block hanging from G by one edge,
  even one that can move inside, may be stuck (``_stuck_block``).
"""

from __future__ import annotations

import numpy as np

from boaf.game.bits import lean_njit, lowest_bit, popcount
from boaf.game.graph import U0, U1, bit, cut_vertices, is_connected, reach_within
from boaf.search.kernel.bundles import board_of, cache_slot, locate

# option bits of ``dfs`` and ``best_n``
PRUNE_GRAPH = 1  # skip children whose compatibility graph is disconnected
ORDER = 2  # sort children by the subset-H estimate above the cutoff
PRUNE_CELLS = 4  # skip children whose occupied cells no longer link up by rows and columns
PRUNE_LEAF = 8  # skip children where a degree-1 card's only neighbour can no longer reach its line
PRUNE_ANCHOR = 16  # with PRUNE_LEAF: ... nor the one other neighbour of a degree-2 neighbour reach both lines
SLEEP = 32  # sleep sets: skip a child reached by two commuting moves whose other order was searched
ISLANDS = 64  # Island Merge: at a bridge of G, collapse one side first (memo keys carry the side, ``_island_split``)
PRUNE_FROZEN = 128  # a frozen block hanging from a cut vertex by one edge must be able to come down (``_frozen_block``)
ORDER_SQUARES = 256  # with ORDER: by the child graph's squared degrees above SQUARES_CUTOFF stacks, not subset H
PRUNE_BLOCKS = 512  # near the root: no block hanging from G by one edge may be stuck (``_stuck_block``)
ORDER_LATER = 1024  # set by ``dfs`` itself on wide keys: ``generate`` scores the children, ``dfs`` places them in turn


@lean_njit(inline="always")
def _walk_reaches(start, hops, cells, target, line, least):
    """True when a walk of ``least`` (0 or 1) to ``hops`` steps along rows and columns, from
    cell ``start`` through the cells of the mask ``cells``, ends in the mask ``target``.

    A card that moves empties its cell for good, so its walks never come back:
    breadth-first layers over unvisited cells decide it.
    """
    reach = bit(start)
    if least == 0 and reach & target != U0:
        return True
    frontier = reach
    for _ in range(hops):
        grow = U0
        f = frontier
        while f != U0:
            r = lowest_bit(f)
            f &= f - U1
            grow |= line[r]
        frontier = grow & cells & ~reach
        if frontier & target != U0:
            return True
        if frontier == U0:
            return False
        reach |= frontier
    return False


@lean_njit()
def _leaf_stranded(leaves, present, occupied, where, compat, line, anchor):
    """True when some leaf of ``leaves`` can never be covered: the state (3+ stacks) is unsolvable.

    ``leaves`` are the cards of degree 1 in the compatibility graph on
    ``present``, ``occupied`` the occupied cells and ``where[card]`` a card's cell.

    Proof (``PRUNE_LEAF``). Take a leaf ``c`` in cell ``p`` whose one neighbour
    is ``d`` in cell ``q``, with at least three stacks. Cards only ever leave
    the graph, so ``d`` stays the only card that can cover ``c`` or that ``c``
    can cover. (i) ``c`` never moves before the last move: ``c`` onto ``d``
    leaves ``c`` with no neighbour and another stack on the board, an odd bird.
    (ii) ``d`` is never covered while ``c`` is on the board: by ``c``, see (i);
    by another card, ``c`` is left without a neighbour. (iii) So ``d`` moves
    only by covering one of its other neighbours, one per hop, at most
    ``deg(d) - 1`` hops, each onto a cell occupied at that time. A move empties
    its source and keeps its target occupied, so no empty cell ever fills
    again: every hop lands on a cell occupied *now*, other than ``p`` (``c``
    stays there). (iv) ``c`` leaves the board only when ``d`` covers it, or at
    the last move when ``c`` covers ``d``; both need ``d`` in a cell in line
    with ``p``. Hence, if no walk of at most ``deg(d) - 1`` steps along rows and
    columns from ``q`` through occupied cells other than ``p`` ends in line
    with ``p``, no move sequence reaches one stack. (With ``deg(d) == 1`` the
    pair is its own component, which the walk of zero steps also reports.)

    Proof (``anchor``, the ``PRUNE_ANCHOR`` option). Let moreover ``q`` be out of
    line with ``p`` and ``deg(d) == 2``, with ``e`` the other neighbour of ``d``.
    By (iii) ``d`` hops once, onto ``e``, and then ``c`` and ``d`` only have
    each other: the board must then hold just ``c`` and ``d``. So ``e`` is not
    covered before: by ``d`` it is that last hop, and by any other card ``x``,
    ``x`` stays on the board with ``c`` and ``d`` cut off from it. ``e`` covers
    neither ``d`` (that strands ``c``) nor ``c`` (not a neighbour), so ``e`` moves
    only by covering its other neighbours, at most ``deg(e) - 1`` hops onto
    cells occupied now other than ``p`` and ``q`` (``c`` and ``d`` never move
    before). When ``d`` covers it, ``e`` must be in line with ``q`` and, for the
    final move, with ``p``. Hence, if no walk of at most ``deg(e) - 1`` steps
    from ``e``'s cell through occupied cells other than ``p`` and ``q`` ends in a
    cell in line with both ``p`` and ``q``, the state is unsolvable. With a
    fourth card ``x`` still on the board the walk needs at least one step: the
    last card to go besides ``c``, ``d`` and ``e`` can only be covered by ``e``
    (``c`` and ``d`` cover nothing else, and ``x`` covering ``e`` is ruled out
    above), and that hop ends where ``d`` covers ``e``.
    """
    lv = leaves
    while lv != U0:
        c = lowest_bit(lv)
        lv &= lv - U1
        d = lowest_bit(compat[c] & present)
        p = where[c]
        q = where[d]
        if line[p] & bit(q) != U0:
            continue
        others = compat[d] & present & ~bit(c)
        if not _walk_reaches(q, popcount(others), occupied & ~bit(p), line[p], line, 0):
            return True
        if anchor and popcount(others) == 1:
            e = lowest_bit(others)
            cells = occupied & ~bit(p) & ~bit(q)
            hops = popcount(compat[e] & present) - 1
            least = 1 if popcount(present) > 3 else 0  # another card is still to go: e's last hop covers it
            if not _walk_reaches(where[e], hops, cells, line[p] & line[q] & cells, line, least):
                return True
    return False


FROZEN_MAX = 3  # the most cards of a pendant side that ``_frozen_block`` considers (its block adds one)


@lean_njit(inline="always")
def _side(x, rest, compat, seen, most):
    """``(side, seen)``: the cards of ``rest`` joined to card ``x``, if at most ``most`` and not yet
    ``seen`` (else 0), and ``seen`` with them (a large side's other cards may be met again: each is sized once
    more at most)."""
    if seen & bit(x) != U0:
        return U0, seen
    side = reach_within(bit(x), rest, compat, most)
    return side, seen | (side if side != U0 else bit(x))


@lean_njit()
def _tiny_solvable(block, n, tables, tiny):
    """True when the ``n`` (at most 4) stacks topped by the cards ``block[:4]`` in the cells ``block[4:8]`` can come
    down to one, alone on a board.

    A plain exhaustive search (at most 3 moves deep); ``tiny`` is its stack.
    """
    if n <= 1:
        return True
    compat, line = tables.compat, tables.line
    at = tiny[:16]  # at[4 * d + i]: the cell of card i at depth d
    alive = tiny[16:24]  # the cards still on the board at depth d (a bit each)
    nxt = tiny[24:32]  # the next move to try at depth d (i * n + j: card i onto card j)
    for i in range(n):
        at[i] = block[4 + i]
    alive[0] = (1 << n) - 1
    nxt[0] = 0
    d = 0
    while d >= 0:
        if popcount(np.uint64(alive[d])) == 1:
            return True
        descended = False
        while nxt[d] < n * n:
            m = nxt[d]
            nxt[d] += 1
            i = m // n
            j = m % n
            if i == j or (alive[d] >> i) & 1 == 0 or (alive[d] >> j) & 1 == 0:
                continue
            if compat[block[i]] & bit(block[j]) == U0 or line[at[4 * d + i]] & bit(at[4 * d + j]) == U0:
                continue
            for x in range(n):
                at[4 * (d + 1) + x] = at[4 * d + x]
            at[4 * (d + 1) + i] = at[4 * d + j]
            alive[d + 1] = alive[d] & ~(1 << j)
            nxt[d + 1] = 0
            d += 1
            descended = True
            break
        if not descended:
            d -= 1
    return False


@lean_njit(inline="always")
def _block_comes_down(block, n, tables, scratch):
    """``_tiny_solvable`` through a direct-mapped cache (``scratch.block_facts``) of its answers.

    A frozen block keeps its cards and cells while the rest of the board moves,
    so a search meets the same small board again and again (-271101: 258,352 of
    its 456,835 nodes end on a frozen block). The key is exact: ``n`` and each
    card with its cell, 6 bits each (cards and cells are below 64), in the
    block's own order; a slot holds the key and, in its lowest bit, the answer.
    A slot's key is never 0 (``n >= 1`` sits above the cards), so an empty slot
    answers nothing.

    Proof that a hit is ``_tiny_solvable``'s answer: that search reads only the
    ``n`` cards, their cells and the grid's ``compat`` and ``line`` tables. The
    key holds the first two exactly (distinct blocks give distinct keys), and a
    ``Scratch`` only ever serves one grid's tables (``dfs`` and ``best_n`` make one
    per search, ``boaf.search.kernel.progress`` one per batch of one grid; ``grown_scratch``
    starts the cache empty). Tested against
    ``_tiny_solvable`` through evicting and hitting caches, and, with every
    rule, the whole search against the reference (``tests/search``).
    """
    key = np.uint64(n)
    for i in range(n):
        key = (key << np.uint64(12)) | (np.uint64(block[i]) << np.uint64(6)) | np.uint64(block[4 + i])
    cache = scratch.block_facts
    slot = cache_slot(key, cache.shape[0])
    if cache[slot] >> U1 == key:
        return cache[slot] & U1 != U0
    solvable = _tiny_solvable(block, n, tables, scratch.tiny)
    cache[slot] = (key << U1) | (U1 if solvable else U0)
    return solvable


@lean_njit()
def _frozen_block(cuts, board, tables, scratch):
    """True when a frozen block hangs from G by one edge and can never come down: the state is unsolvable.

    ``cuts`` are cut vertices of G (those ``_hanging`` names suffice); ``scratch.where[card]`` must hold the cell of
    every card on the board.

    Proof (``PRUNE_FROZEN``). Let ``v`` be a cut vertex of G, ``S`` a component
    of G minus ``v``, ``B = S + v`` the block, and ``R`` the other cards, with
    (a) no two cards of ``B`` compatible and in line now, and (b) exactly one
    neighbour ``w`` of ``v`` in ``R``. Cards of ``S`` are compatible only with
    cards of ``B``, so a move that touches ``B`` is inside ``B`` or joins ``v``
    and ``w``. (1) While no card of ``B`` moves, the cards of ``B`` keep their
    cells (a cell's top card changes only when a card lands on it, and only
    ``w`` may land on a card of ``B``, on ``v``), so by (a) no move inside
    ``B`` is ever possible: the first move touching ``B`` joins ``v`` and
    ``w``. (2) ``w`` covering ``v`` leaves ``S`` with no neighbour while ``w``
    is on the board: G splits. ``v`` covering ``w`` leaves ``v`` with no
    neighbour in ``R``: G splits unless ``R`` is just ``w`` by then. (3) So
    every solution first brings ``R`` down to ``w`` alone, by moves inside
    ``R``, then ``v`` covers ``w`` from its cell ``p``: ``w`` then sits in a
    cell ``q`` in line with ``p``, occupied now (cells never refill) and not a
    cell of ``B``; and what is left, ``S`` in its cells with ``v`` in ``q``,
    must come down to one stack alone. If that small board is unsolvable for
    every such ``q``, so is the state. Checked for sides of up to ``FROZEN_MAX`` cards.
    """
    present, occupied, compat, line, where = board.present, board.occupied, tables.compat, tables.line, scratch.where
    block_cards = scratch.block
    sides = scratch.sides
    cv = cuts
    while cv != U0:
        v = lowest_bit(cv)
        cv &= cv - U1
        for j in range(_lone_sides(v, present, compat, sides, np.int64(FROZEN_MAX))):
            side = sides[j]
            block = side | bit(v)
            frozen = True
            block_cells = U0
            n = 0
            b = block
            while b != U0:
                c = lowest_bit(b)
                b &= b - U1
                block_cells |= bit(where[c])
                block_cards[n] = c
                block_cards[4 + n] = where[c]
                n += 1
                if compat[c] & block & _in_line(where, c, block, line) != U0:
                    frozen = False
            if not frozen:
                continue  # (a)
            vi = 4
            while block_cards[vi - 4] != v:
                vi += 1
            p = where[v]
            solvable = False
            qs = occupied & ~block_cells & line[p]
            while qs != U0 and not solvable:
                q = lowest_bit(qs)
                qs &= qs - U1
                block_cards[vi] = q
                solvable = _block_comes_down(block_cards, n, tables, scratch)
            block_cards[vi] = p
            if not solvable:
                return True
    return False


WIDE_MAX = 5  # the most cards of a side ``_stuck_block`` considers (its block adds one)
BLOCK_MAX = WIDE_MAX + 1  # the most cards of a block
_LEVELS = BLOCK_MAX + 1  # depths of ``_block_plays_out``: a move each but the last card's, and the jump
_ALIVE = _LEVELS * BLOCK_MAX  # offsets in ``scratch.tiny``: cells by depth, then cards alive, next move, jumped
_NEXT = _ALIVE + _LEVELS
_JUMPED = _NEXT + _LEVELS
TINY_SIZE = _JUMPED + _LEVELS  # and one more: the stamp of ``_block_plays_out``'s last search
STAMP_SHIFT = 48  # a position's key takes 48 bits; its search's stamp the 16 above


@lean_njit()
def _stuck_block(cells, board, tables, scratch, budget):
    """True when a block hanging from G by one edge in the state ``cells`` can never play out: it is unsolvable.

    Proof (``PRUNE_BLOCKS``), ``_frozen_block``'s widened to blocks that can move
    inside. Let ``v`` be a cut vertex of G, ``S`` a component of G minus ``v``,
    ``B = S + v`` the block, ``R`` the other cards, and ``w`` the only neighbour
    of ``v`` in ``R``. Cards of ``S`` are compatible only with cards of ``B``,
    so a move is inside ``B``, inside ``R``, or joins ``v`` and ``w``.
    (1) Until that join, moves inside ``B`` and inside ``R`` touch disjoint
    cards and cells (a cell's top card changes only when a card lands on it),
    so ``B`` plays out in its own cells exactly as it would alone on the board,
    whatever ``R`` does. (2) A card of ``S`` covering ``v`` before the join
    leaves that card with no neighbour outside ``S`` while ``w`` is on the
    board: G splits. (3) ``w`` covering ``v`` leaves what is left of ``S``
    with no neighbour while ``w`` is on the board, so it needs ``B`` down to
    ``v`` alone: end (A). ``v`` covering ``w`` leaves ``v`` no neighbour in
    ``R``, so G splits unless ``R`` is just ``w`` by then; then ``v`` stands in
    ``w``'s cell ``q``, in line with ``v``'s cell, occupied now (cells never
    refill) and not a cell of ``B``, and what is left of ``B`` must come down
    to one stack by itself: end (B). (4) Without the join ``B`` and ``R`` stay
    two stacks at least. So a solution needs ``B``, played alone without
    covering ``v``, to reach (A), or (B) after one jump of ``v`` to such a
    ``q``; ``_block_plays_out`` searches both.

    Each block's search sees at most ``budget`` positions (past them it claims
    nothing). ``dfs`` checks the nodes of 13 stacks or more at depth up to 3
    (``dfs.BLOCKS_BUDGET``), for sides of up to ``WIDE_MAX`` cards: a deal's
    first moves, where a stuck block prunes the most, at no measurable cost in
    time; checked at every node, its searches cost more time than the nodes
    they save (``docs/history/solver-v3.md``). It decides the FFUD deals 6727
    and 59481 at the root's children.
    """
    present, occupied, compat = board.present, board.occupied, tables.compat
    if board.n_stacks <= 3:
        return False
    cuts, _ = cut_vertices(present, compat, scratch.graph)
    locate(cells, scratch.where)
    cards, where, sides = scratch.block, scratch.where, scratch.sides
    while cuts != U0:
        v = lowest_bit(cuts)
        cuts &= cuts - U1
        for j in range(_lone_sides(v, present, compat, sides, np.int64(WIDE_MAX))):
            n, vi, block_cells = np.int64(0), np.int64(0), U0
            b = sides[j] | bit(v)
            while b != U0:
                c = lowest_bit(b)
                b &= b - U1
                vi = n if c == v else vi
                cards[n], cards[BLOCK_MAX + n] = c, where[c]
                block_cells |= bit(where[c])
                n += 1
            qs = occupied & ~block_cells
            if not _block_plays_out(cards, n, vi, qs, tables, scratch.tiny, scratch.visited, budget):
                return True
    return False


@lean_njit()
def _block_plays_out(block, n, vi, qs, tables, tiny, visited, budget):
    """True when a block, played alone, can reach one of the ends of ``_stuck_block``'s proof (or is too wide
    to tell within ``budget`` positions).

    The block is the ``n`` (at most ``BLOCK_MAX``) cards ``block[:n]`` in the cells
    ``block[BLOCK_MAX:BLOCK_MAX + n]``; ``block[vi]`` is its cut vertex v. The ends:
    (A) v alone; (B) after v has jumped once to a cell of ``qs`` in line with its
    own, one stack. Before the jump no card covers v. A plain exhaustive search of
    at most ``n`` plies that does not search a position twice; ``tiny``
    (``TINY_SIZE`` and a stamp) is its stack, ``visited`` (a power of two) the
    positions met.
    """
    compat, line = tables.compat, tables.line
    at = tiny[:_ALIVE]  # at[BLOCK_MAX * d + i]: the cell of card i at depth d
    alive = tiny[_ALIVE:_NEXT]  # the cards still on the board at depth d (a bit each)
    nxt = tiny[_NEXT:_JUMPED]  # the next move to try at depth d: i * n + j (card i onto card j), then jumps
    jumped = tiny[_JUMPED:TINY_SIZE]  # 1 + the cell v jumped to, 0 before the jump
    stamp = tiny[TINY_SIZE] + 1 if tiny[TINY_SIZE] < 0xFFFF else 1
    if stamp == 1:
        visited[:] = U0  # stamps start again
    tiny[TINY_SIZE] = stamp
    for i in range(n):
        at[i] = block[BLOCK_MAX + i]
    alive[0], nxt[0], jumped[0] = (1 << n) - 1, 0, 0
    pairs, d = n * n, 0
    no_jump = pairs + 63  # past every jump (cells are fewer than 64)
    while d >= 0:
        a, here, m = alive[d], BLOCK_MAX * d, nxt[d]
        if popcount(np.uint64(a)) == 1 and (jumped[d] != 0 or a == 1 << vi):
            return True  # (B) or (A)
        if m == 0:
            if not _first_visit(visited, stamp, a, at[here : here + n], jumped[d]):
                m = no_jump  # met before: nothing new below
            else:
                budget -= 1
                if budget < 0:
                    return True  # too wide to settle here: claim nothing
        i, j, q = -1, -1, -1
        while m < pairs and j < 0:
            x, y = m // n, m % n
            m += 1
            movable = x != y and (a >> x) & 1 != 0 and (a >> y) & 1 != 0 and (y != vi or jumped[d] != 0)
            if movable and compat[block[x]] & bit(block[y]) != U0 and line[at[here + x]] & bit(at[here + y]) != U0:
                i, j = x, y
        if j < 0 and jumped[d] == 0 and pairs <= m < no_jump:
            jumps = qs & line[at[here + vi]] & ~(bit(m - pairs) - U1)
            q = lowest_bit(jumps) if jumps != U0 else -1
            m = pairs + q + 1 if q >= 0 else no_jump
        nxt[d] = m
        if j < 0 and q < 0:
            d -= 1  # no move left here
            continue
        below = here + BLOCK_MAX
        for x in range(n):
            at[below + x] = at[here + x]
        if j >= 0:
            at[below + i], alive[d + 1], jumped[d + 1] = at[here + j], a & ~(1 << j), jumped[d]
        else:
            at[below + vi], alive[d + 1], jumped[d + 1] = q, a, q + 1
        nxt[d + 1] = 0
        d += 1
    return False


@lean_njit(inline="always")
def _first_visit(visited, stamp, alive, cells, jumped):
    """False when ``_block_plays_out``'s search ``stamp`` met this position before (cards ``alive`` in ``cells``,
    ``jumped``); else records it. Entries of other stamps are free. A full table records nothing more (the
    search is then plain, never wrong)."""
    key = np.uint64(alive) | (np.uint64(jumped) << np.uint64(6))
    for i in range(cells.shape[0]):
        if (alive >> i) & 1 != 0:
            key |= np.uint64(cells[i]) << np.uint64(12 + 6 * i)
    key |= np.uint64(stamp) << np.uint64(STAMP_SHIFT)
    size = visited.shape[0]
    slot = cache_slot(key, size)
    for _ in range(size // 4):  # linear probing over a quarter of the table at most
        if visited[slot] == key:
            return False
        if visited[slot] >> np.uint64(STAMP_SHIFT) != np.uint64(stamp):
            visited[slot] = key
            return True
        slot = (slot + 1) & (size - 1)
    return True


@lean_njit(inline="always")
def _in_line(where, c, block, line):
    """The cards of ``block`` whose cells are in line with card ``c``'s cell."""
    out = U0
    b = block
    while b != U0:
        y = lowest_bit(b)
        b &= b - U1
        if line[where[c]] & bit(where[y]) != U0:
            out |= bit(y)
    return out


@lean_njit()
def _cells_linked(occupied, line):
    """True when the occupied cells form one group under 'shares a row or column'.

    Cells only ever empty, and stacks only merge along such links, so a split
    grid can never come down to one stack.
    """
    return is_connected(occupied, line)


@lean_njit()
def _hanging(cuts, present, compat, sides):
    """The cut vertices ``v`` of G with a side of 2 to ``FROZEN_MAX`` cards and one neighbour beyond it.

    What ``_frozen_block``'s conditions ask of G alone (its (b)), so that the
    cells are looked at only where a block may hang. A side of one card, a
    leaf, is left to ``PRUNE_ANCHOR``, whose walk asks more than a cell in line.
    ``sides`` is ``_lone_sides``' scratch.
    """
    out = U0
    cv = cuts
    while cv != U0:
        v = lowest_bit(cv)
        cv &= cv - U1
        for j in range(_lone_sides(v, present, compat, sides, np.int64(FROZEN_MAX))):
            if popcount(sides[j]) >= 2:
                out |= bit(v)
                break
    return out


@lean_njit()
def _lone_sides(v, present, compat, sides, most):
    """The sides of the cut vertex ``v`` (components of G − v) of at most ``most`` cards with exactly one of
    ``v``'s neighbours beyond them (``_frozen_block``'s (b)), into ``sides``; returns how many.

    None when ``v`` has more than ``most + 1`` neighbours: such a side holds all of them but one.
    """
    rest = present & ~bit(v)
    around = compat[v] & rest
    if popcount(around) > most + 1:
        return 0
    n = 0
    seen = U0
    m = around
    while m != U0:
        x = lowest_bit(m)
        m &= m - U1
        side, seen = _side(x, rest, compat, seen, most)
        if side != U0 and popcount(around & ~side) == 1:
            sides[n] = side
            n += 1
    return n


@lean_njit()
def root_prunable(root, tables, options):
    """True when the root (``int8[ncells]`` cells) itself fails a pruning test of ``options`` (so it is unsolvable)."""
    board = board_of(root)
    if board.n_stacks <= 1:
        return False
    if options & PRUNE_GRAPH != 0 and not is_connected(board.present, tables.compat):
        return True
    return options & PRUNE_CELLS != 0 and not _cells_linked(board.occupied, tables.line)


@lean_njit()
def _fall_asleep(asleep, searched, s, t, child):
    """The sleep set of the child reached by the move ``s -> t``, as target masks per source cell.

    It holds the moves asleep at the parent or already searched from it that
    touch neither ``s`` nor ``t``.

    Proof that sleeping moves are never needed, together with the memo. Two
    moves on four distinct cells commute: each leaves the other's two cells
    as they were, so each stays legal after the other and both orders reach
    the same state. Claim: while the search runs, every state it has finished
    is unsolvable, and every move asleep at a state ``u`` leads from ``u`` to an
    unsolvable state. By induction over the search: a state is finished
    when each child was found solvable (then the search stops), pruned (each
    rule is a proof of unsolvability), found in the memo (which only holds
    finished states), searched and finished, or asleep, so it is unsolvable.
    A move ``m`` asleep at the child ``u·x`` of ``u`` was searched from ``u``
    before ``x`` or asleep at ``u``; either way ``u·m`` is unsolvable, and
    ``u·x·m = u·m·x`` is one of its children, hence unsolvable too. So the memo
    only ever holds unsolvable states and a skipped child is never the way to
    a solution: the search finds the same answer and the same solution,
    skipping only children that would fail (memo hits, or small states that
    are not memoised and would be searched again), so it expands no more nodes.
    """
    drop = ~(bit(s) | bit(t))
    for c in range(child.shape[0]):
        child[c] = (asleep[c] | searched[c]) & drop
    child[s] = U0
    child[t] = U0
