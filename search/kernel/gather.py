# mypy: disable-error-code="no-untyped-def"
"""Gathering (``PRUNE_GATHER``): decide a state by the sets of cards that can be played into one stack.

A *block* ``(S, x, e)`` says: the cards of ``S`` (tops of stacks), left alone
on the board in their cells, can be played into one stack whose top is ``x``
and whose cell is ``e``. The state is solvable exactly when some block holds
all its cards. Blocks are built by size (``gather_refutes``) from two rules:

- ``({x}, x, cell of x)`` for every card;
- blocks ``(S, x, c')`` and ``(T, y, c)`` with ``S``, ``T`` disjoint, ``x``
  and ``y`` compatible and the cells ``c'``, ``c`` in one row or column give
  ``(S ∪ T, x, c)``.

Proof that these are all the blocks. *Sound*: play ``S`` into ``x`` at ``c'``
and ``T`` into ``y`` at ``c``; the two plays touch different stacks and cells,
and a move's legality depends only on its two stacks' tops and cells, so both
are legal on the board holding ``S ∪ T``; then ``x`` goes onto ``y``. *Complete*,
by induction on ``|S|``: take a play of ``S`` into one stack, top ``x`` in cell
``e``. Its last move puts ``x`` (in some cell ``c'``) onto ``y`` (in ``c = e``),
two stacks that hold a partition ``S_x``, ``S_y`` of ``S``. Every earlier move
joins two stacks whose cards end up in the same one of these two, so the
earlier moves split into a play of ``S_x`` alone into ``x`` at ``c'`` and a
play of ``S_y`` alone into ``y`` at ``c``: blocks, by induction, and the second
rule joins them.

The search keeps only blocks that a win can use. *Filter*: a block
``(S, x, e)`` is dropped when G, on the cards outside ``S`` together with ``x``
(``R``), is disconnected. Proof: in a win, by the induction above, every block
of the win's derivation is a stack at some moment ``t``. Each card ``z`` of
``R`` but the last top is covered once, by a compatible card; that card is not
in ``S`` minus ``x`` (those lie under ``x`` from ``t`` on, and before ``t`` they
only covered cards of ``S``), so it is in ``R``, and it is covered later than
``z`` or is the last top. Following coverers from any card of ``R`` reaches the
last top through edges of G inside ``R``: G on ``R`` is connected. So the win's
derivation survives the filter, and if no block of all the cards survives, the
state is unsolvable. Without a win nothing is claimed: the rule only ever
refutes.

Cost. The number of blocks grows with the solvable part of a state: a state
with a win has very many, an unsolvable one with a connected G few (the FFUD
deal 1163: 458 blocks and 49,366 units of work, ~0.2 ms, where the search
expands 34,341 nodes). Work counts joins tried, ``PROBE_COST`` more for a join
that makes a block and ``INSERT_COST`` more for a new one: a unit is ~3-4 ns,
whatever the state. So it runs on a search's root only, when the search has
expanded ``OPEN_AFTER`` nodes (at most ``FIRST_BLOCKS`` blocks: a solvable
root passes that long before its work runs out) and again at ``GATHER_AGAIN``
(at most ``GATHER_BLOCKS``), each time with ``GATHER_WORK_PER_NODE`` units for
each node expanded so far (a node is ~0.35 us: about the search's own time).
A search whose node budget is under ``OPEN_MIN_BUDGET`` (Classify's exact
path) gathers once, at ``OPEN_AFTER``, with the units of half its budget. Under
``GATHER_DEEP`` the gathering at ``GATHER_AGAIN`` gets ``DEEP_WORK_PER_NODE``
units a node, eight times as many: Classify's second search of a deal that
looks like an FFUD (``boaf.models.exact_path``) pays up to ~30 ms more there,
where most FFUDs its plain gathering leaves open are refuted (the rest take
80,000-600,000 nodes of search). The work bounds only when the rule gives up,
never what it claims: the proofs above hold for any work. It
reads the cancel flag and the clock every ``GATHER_CHECK`` units; its arrays
(~160 KB at most) are fixed by the cap, outside the memo's memory cap, like
open blocks'.

At nodes (``GATHER_NODES``, set by ``dfs`` on grids of more than 16 cells for
a search without a node budget under ``OPEN_MIN_BUDGET``). On sparse wide
grids an unsolvable 4x13 state of 18-21 cards can take the search
400,000-1,700,000 nodes, nearly every one a distinct dead state in its memo,
where gathering, which joins blocks of cards built apart, refutes it with
3,000-26,000 blocks in 3-35 ms; a solvable state's dead children cost it the
same. So a node at depth at most
``NODE_GATHER_DEPTH`` whose subtree reaches ``NODE_GATHER_FIRST`` nodes, and
then each ``NODE_GATHER_GROWTH`` times as many, is gathered
(``gather_node``) with ``NODE_WORK_PER_NODE`` units for each node of
its subtree, and closed as dead when no block holds its cards. When a block
holds them all, the node is won: the blocks say how (``_derive``), and the
search ends with the moves down to the node and then the block's. On sparse
wide grids the slow solvable states are of this kind: a node of 15-19 cards
whose search keeps entering dead children, where the blocks of all its cards
are found with 10^4-10^6 units (0.05-5 ms). A node's
gatherings cost at most twice its last, and its last at most
``NODE_WORK_PER_NODE`` units for each node of its subtree (up to ten nodes'
time; most stop far sooner, at their cap of blocks): a search that no gathering
helps pays that for each gathered depth on its path. Measured on 6x6 and 4x13
states it pays: 4,096 units a node took the states' time per node searched
from 0.88 to 0.80 us and their nodes down by a quarter, against 512. The
counts of the root and of the nodes on the line a slice stopped on go on over
the slices of a search run again (``boaf.search.restarts``,
``resume_gathered``), so no slice repeats the gatherings of the one before. Its blocks are capped by the work, by
``NODE_MAX_BLOCKS`` and by ``1/NODE_MEMORY_SHARE`` of the search's memory cap,
which ``dfs`` takes off its memo's rows: memo and blocks stay within the cap.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from boaf.game.bits import lean_njit, lowest_bit, popcount
from boaf.game.graph import U0, U1, bit, is_connected
from boaf.search.kernel.open_blocks import OPEN_MIN_BUDGET
from boaf.search.kernel.status import spent

PRUNE_GATHER = 4096  # the root, at OPEN_AFTER and GATHER_AGAIN nodes: some block must hold every card
GATHER_DEEP = 8192  # with PRUNE_GATHER: the gathering at GATHER_AGAIN gets DEEP_WORK_PER_NODE units a node
GATHER_AGAIN = 8_192  # nodes a search expands before its root's gathering is tried again, with more work
GATHER_WORK_PER_NODE = 128  # units of work for each node the search has expanded (about a node's time)
DEEP_WORK_PER_NODE = 1024  # and under GATHER_DEEP at GATHER_AGAIN (Classify's second search of FFUD-like deals)
GATHER_BLOCKS = 4_096  # the most blocks one root's gathering may hold (the FFUD deals of 0-100,000: 2,067 at most)
FIRST_BLOCKS = 1_024  # and at OPEN_AFTER nodes (an unsolvable deal's root holds a few hundred, a solvable one more)
GATHER_NODES = 16_384  # set by ``dfs`` itself on wide grids: a node whose subtree grows big is gathered too
NODE_GATHER_DEPTH = 2  # the deepest nodes gathered (the root is at 0)
NODE_GATHER_FIRST = 2_048  # a node's subtree is gathered when it reaches this many nodes (no node budget under 4,096)
NODE_GATHER_GROWTH = 2  # and again each time it has grown this many times larger
NODE_WORK_PER_NODE = 4096  # units of work for each node of the subtree
NODE_WORK_PER_BLOCK = 256  # and one block allowed for each this many units
NODE_MAX_BLOCKS = 1 << 20  # the most blocks of one node's gathering (40 MiB)
NODE_MEMORY_SHARE = 8  # and their arrays at most this share of the search's memory cap, which its memo leaves them
BLOCK_BYTES = 48  # a block's bytes: three words and two slots of the dedup table (``_gathered``), its top (``_derive``)
GATHER_CHECK = 65_536  # units of work between reads of the cancel flag and the clock
PROBE_COST = 3  # a join that makes a block counts as this many more: its look-up in the dedup table
INSERT_COST = 6  # and a new block as this many more again: the filter's reach over G
_FIB = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing of a block's card set
_HIGH = np.uint64(40)


@njit(cache=True, nogil=True)
def gather_refutes(root, compat, line, budget, after, deep):
    """True when no block holds every card of ``root`` (``int8[ncells]``): the state is unsolvable.

    ``budget`` is the search's (``boaf.search.kernel.bundles.Budget``) and ``after``
    the nodes it has expanded: the units of work allowed are
    ``GATHER_WORK_PER_NODE`` for each (``DEEP_WORK_PER_NODE`` when ``deep``, the
    search's ``GATHER_DEEP`` option, and ``after`` has reached ``GATHER_AGAIN``), or,
    under a node budget below ``OPEN_MIN_BUDGET``, for half the budget's nodes; the
    blocks, ``FIRST_BLOCKS`` before ``GATHER_AGAIN`` nodes and ``GATHER_BLOCKS`` from
    there. False when a block holds them all, or when the work, the blocks, the
    cancel flag or the deadline run out first.
    """
    small = _small_budget(budget.max_nodes)
    per_node = DEEP_WORK_PER_NODE if deep and after >= GATHER_AGAIN else GATHER_WORK_PER_NODE
    work = per_node * (budget.max_nodes // 2 if small else after)
    return _refutes(root, compat, line, budget, work, GATHER_BLOCKS if after >= GATHER_AGAIN else FIRST_BLOCKS)


REFUTED, GAVE_UP = -1, 0  # what ``gather_node`` found besides a win (its number of moves)


@njit(cache=True, nogil=True)
def gather_node(cells, compat, line, budget, subtree, moves):
    """Gather the state ``cells`` (``int8[ncells]``), a node of a search on a wide grid (``GATHER_NODES``) whose
    subtree has grown to ``subtree`` nodes: ``REFUTED`` when no block holds all its cards (it is unsolvable),
    ``k > 0`` when one does (a win: its ``k`` moves are written into ``moves[:k]`` as ``(source, target)``
    cells, ``_derive``), ``GAVE_UP`` when the work, the blocks, the cancel flag or the deadline run out first.

    The same rule as ``gather_refutes``, on any node rather than the root: a
    state whose cards no block holds has no win, wherever the search met it, and
    a block that holds them all is a win, played by its derivation. The work is
    ``NODE_WORK_PER_NODE`` units for each node of the subtree, the blocks at
    most one for each ``NODE_WORK_PER_BLOCK`` units, at most
    ``NODE_MAX_BLOCKS``, and their arrays at most ``1/NODE_MEMORY_SHARE`` of
    the search's memory cap (``BLOCK_BYTES`` a block); at least
    ``GATHER_BLOCKS`` (160 KiB, as the root's gathering) if the cap leaves
    room; rounded down to a power of 2. Room for fewer blocks than cards
    gathers nothing.
    """
    work = NODE_WORK_PER_NODE * subtree
    cap = max(GATHER_BLOCKS, min(work // NODE_WORK_PER_BLOCK, NODE_MAX_BLOCKS))
    if budget.max_bytes > 0:
        cap = min(cap, budget.max_bytes // (NODE_MEMORY_SHARE * BLOCK_BYTES))
    most = 1  # a power of 2, as the dedup table's probing needs
    while most * 2 <= cap:
        most *= 2
    found, n, cell, adj, aligned, blocks = _gathered(cells, compat, line, budget, work, most)
    if found == 0:
        return REFUTED
    if found < 0:
        return GAVE_UP
    return _derive(n, cell, (adj, aligned), blocks, moves, budget)


@njit(cache=True, nogil=True)
def _refutes(root, compat, line, budget, work, most):
    """True when no block holds every card of ``root``, found within ``work`` units and ``most`` blocks."""
    return _gathered(root, compat, line, budget, work, most)[0] == 0


@njit(cache=True, nogil=True)
def _gathered(root, compat, line, budget, work, most):
    """Build the blocks of ``root``'s cards within ``work`` units and ``most`` blocks: ``(found, n, cell, adj,
    aligned, blocks)``, ``found`` as ``_gather``'s (-1 too when there are fewer than two cards, no work or no
    room), card ``i`` of the ``n`` in cell ``cell[i]``, ``adj`` and ``aligned`` G and the cells in line as masks of
    cards, and ``blocks`` ``_gather``'s arrays."""
    ncells = root.shape[0]
    cell = np.empty(ncells, dtype=np.int64)
    n = np.int64(0)
    for c in range(ncells):
        if root[c] >= 0:
            cell[n] = c
            n += 1
    adj = np.zeros(n, dtype=np.uint64)
    aligned = np.zeros(n, dtype=np.uint64)
    for i in range(n):
        for j in range(n):
            if compat[root[cell[i]]] & bit(root[cell[j]]) != U0:
                adj[i] |= bit(j)
            if line[cell[i]] & bit(cell[j]) != U0:
                aligned[i] |= bit(j)
    room = n > 1 and work > 0 and most >= n  # (a block a card at least: a cap too small for them gathers nothing)
    size = most if room else 1
    blocks = (
        np.empty(size, dtype=np.uint64),
        np.empty(size, dtype=np.uint64),
        np.empty(size, dtype=np.uint64),
        np.full(2 * size, -1, dtype=np.int64),  # the dedup table: at most half full
        np.zeros((n + 1, n + 1), dtype=np.int64),
        np.zeros(n + 1, dtype=np.uint64),
        np.zeros(2, dtype=np.int64),
    )
    if not room:
        return -1, n, cell, adj, aligned, blocks
    return _gather(n, (adj, aligned, work, most), blocks, budget), n, cell, adj, aligned, blocks


@njit(cache=True, nogil=True)
def _derive(n, cell, graph, blocks, moves, budget):
    """The moves of a win from ``_gather``'s blocks once it has found a block of all ``n`` cards; returns how many
    (``n - 1``), written into ``moves`` as ``(source, target)`` cells, or ``GAVE_UP`` when the cancel flag or the
    deadline stops it (``graph``: ``adj`` and ``aligned``, as ``_gather``'s).

    *Why it finds one.* A block of ``k > 1`` cards topped by ``x`` with end
    ``e`` was made by a join (``_absorb``): a block ``(S, x)`` with an end
    ``c'`` in line with ``e``, and a block ``(T, y)`` of the other cards, ``y``
    compatible with ``x`` and ``e`` one of its ends (a block's ends are those of
    all the joins that made it, and the filter only ever drops a block whole).
    Both are blocks ``_gather`` kept, made before it, so the same holds of them
    down to single cards. *Why it is a win* (the proof of soundness in the
    module docstring): play ``T`` into ``y`` at ``e`` and ``S`` into ``x`` at
    ``c'``, two plays on disjoint stacks and cells, then ``c' -> e``. The
    derivation is a tree of ``n - 1`` joins, walked from the top with a stack
    of (block, end) pairs; each join's move is written after the moves of its
    two parts (written last first, then reversed). The blocks are found again
    by a hash of (card set, top) over all the blocks kept (``_slot``). Finding a
    join scans the blocks topped by ``x`` (about ``count / n``) for each of the
    ``n - 1`` joins: in all about the blocks' count, as the gathering itself, and
    it reads the cancel flag and the clock as the gathering does.
    """
    sets, ends, _, table, first, _, at = blocks
    count = at[0]
    whole = count - 1  # the block of all the cards: the last made, alone in its group (size n, its top)
    top = np.empty(count, dtype=np.int64)
    for size in range(1, n):
        for x in range(n):
            for g in range(first[size, x], first[size, x + 1]):
                top[g] = x
    for x in range(n):  # (the groups of n cards before its top's are empty, those after never begun: 0)
        if first[n, x] == whole:
            top[whole] = x
    mask = np.uint64(table.shape[0] - 1)
    for i in range(table.shape[0]):
        table[i] = -1
    for g in range(count):
        slot = _slot(sets[g], top[g], mask)
        while table[slot] >= 0:
            slot = (slot + U1) & mask
        table[slot] = g
    todo = np.empty((n + 1, 2), dtype=np.int64)  # (each join pops one pair and pushes two: at most n at once)
    todo[0, 0], todo[0, 1] = whole, lowest_bit(ends[whole])
    pending, written = 1, 0
    while pending > 0:
        pending -= 1
        g, e = todo[pending, 0], todo[pending, 1]
        u = sets[g]
        if u & (u - U1) == U0:
            continue  # a single card: no moves
        if _stopped(budget):
            return GAVE_UP
        a, b, c = _split(u, top[g], e, blocks, top, graph, budget)
        if a < 0:
            return GAVE_UP  # (stopped: ``_split`` finds a join whenever it is let run, see above)
        moves[written, 0] = cell[c]
        moves[written, 1] = cell[e]
        written += 1
        todo[pending, 0], todo[pending, 1] = b, e
        todo[pending + 1, 0], todo[pending + 1, 1] = a, c
        pending += 2
    for i in range(written // 2):
        j = written - 1 - i
        moves[i, 0], moves[j, 0] = moves[j, 0], moves[i, 0]
        moves[i, 1], moves[j, 1] = moves[j, 1], moves[i, 1]
    return written


@lean_njit(inline="always")
def _slot(u, x, mask):
    """The first slot of the block (card set ``u``, top ``x``) in ``_derive``'s hash table."""
    return (((u ^ (np.uint64(x) << np.uint64(56))) * _FIB) >> _HIGH) & mask


@lean_njit()
def _split(u, x, e, blocks, top, graph, budget):
    """A join that made the block (``u``, top ``x``) with end ``e``: ``(a, b, c)``, the block ``a`` topped by ``x``
    with its end ``c`` in line with ``e``, and the block ``b`` of the other cards with end ``e`` (``top``: each
    block's top; ``blocks`` with ``_derive``'s hash table); ``(-1, -1, -1)`` when the cancel flag or the deadline
    stops it first."""
    sets, ends, reaches, table, first, tops, _ = blocks
    adj, aligned = graph
    mask = np.uint64(table.shape[0] - 1)
    size = popcount(u)
    for part in range(1, size):
        other = size - part
        for a in range(first[part, x], first[part, x + 1]):
            if a % GATHER_CHECK == 0 and _stopped(budget):
                return -1, -1, -1
            s = sets[a]
            if s & ~u != U0 or reaches[a] & bit(e) == U0:
                continue
            t = u & ~s
            ys = adj[x] & t & tops[other]
            while ys != U0:
                y = lowest_bit(ys)
                ys &= ys - U1
                slot = _slot(t, y, mask)
                while table[slot] >= 0 and not (sets[table[slot]] == t and top[table[slot]] == y):
                    slot = (slot + U1) & mask
                b = table[slot]
                if b >= 0 and ends[b] & bit(e) != U0:
                    m = ends[a]
                    while m != U0:
                        c = lowest_bit(m)
                        m &= m - U1
                        if aligned[c] & bit(e) != U0:
                            return a, b, c
    return -1, -1, -1  # (never: see ``_derive``)


@lean_njit()
def _gather(n, graph, blocks, budget):
    """Build the blocks of the ``n`` cards by size; 0 when none holds them all, 1 when one does, -1 when out of
    ``work``, of blocks or of time. ``blocks`` is (card sets, end cells, the cells in line with an end, dedup
    table, ``first[size, top]``, ``tops[size]``, ``at``): the blocks of one size and top are ``first[size, top]``
    up to the next entry, ``tops[size]`` the mask of the tops that have some."""
    sets, ends, reaches, _, first, tops, at = blocks
    adj, aligned, work, most = graph
    full = (U1 << np.uint64(n)) - U1 if n < 64 else ~U0
    graph = (adj, aligned, full, work, most)
    for x in range(n):
        first[1, x] = x
        sets[x] = bit(x)
        ends[x] = bit(x)
        reaches[x] = aligned[x]
    first[1, n] = n
    tops[1] = full
    at[0] = n  # blocks held (``at[1]``: units of work spent)
    for size in range(2, n + 1):
        for x in range(n):
            first[size, x] = at[0]
            for part in range(1, size):
                if tops[part] & bit(x) == U0 or tops[size - part] & adj[x] == U0:
                    continue  # exact: ``_absorb`` would loop over no block ``a``, or find no ``y`` for any, and count
                    # no work (the blocks it makes and the units it spends are the same with the skip as without)
                if not _absorb(x, part, size, graph, blocks, budget):
                    return -1
            at[0] = _settle(first[size, x], at[0], blocks, aligned)
            if at[0] > first[size, x]:
                tops[size] |= bit(x)
                if size == n:
                    return 1
        first[size, n] = at[0]
    return 0


@lean_njit()
def _absorb(x, part, size, graph, blocks, budget):
    """Join each block of ``part`` cards topped by ``x`` with each block of ``size - part`` cards it may cover,
    adding the new blocks of ``size`` cards topped by ``x`` (``at[0]`` counts the blocks, ``at[1]`` the work
    spent). False when the work (``graph[3]``), the blocks (``graph[4]``), the cancel flag or the deadline run out."""
    adj, _, full, work, most = graph
    sets, ends, reaches, table, first, tops, at = blocks
    mask = np.uint64(table.shape[0] - 1)
    other = size - part
    tried = at[1]
    for a in range(first[part, x], first[part, x + 1]):
        s, reach = sets[a], reaches[a]
        ys = adj[x] & ~s & tops[other]
        while ys != U0:
            y = lowest_bit(ys)
            ys &= ys - U1
            for b in range(first[other, y], first[other, y + 1]):
                t = sets[b]
                e = ends[b] & reach
                if t & s != U0 or e == U0:
                    continue
                u = s | t
                tried += PROBE_COST
                slot = ((u * _FIB) >> _HIGH) & mask
                while table[slot] >= 0 and sets[table[slot]] != u:
                    slot = (slot + U1) & mask
                if table[slot] >= 0:
                    if ends[table[slot]] != U0:  # (a block the filter dropped stays dropped)
                        ends[table[slot]] |= e
                    continue
                if at[0] == most:  # (the arrays' length)
                    return False
                tried += INSERT_COST
                table[slot] = at[0]
                sets[at[0]] = u
                ends[at[0]] = e if is_connected((full & ~u) | bit(x), adj) else U0  # the filter
                at[0] += 1
            tried += first[other, y + 1] - first[other, y]
        if tried > work or (tried // GATHER_CHECK != at[1] // GATHER_CHECK and _stopped(budget)):
            return False
        at[1] = tried
    return True


@lean_njit()
def _settle(start, count, blocks, aligned):
    """Empty the dedup table's slots of the blocks ``start`` up to ``count``, drop those the filter marked (no end
    cell) and note the cells in line with the others' ends; returns the new count."""
    sets, ends, reaches, table = blocks[:4]
    mask = np.uint64(table.shape[0] - 1)
    keep = start
    for g in range(start, count):
        slot = ((sets[g] * _FIB) >> _HIGH) & mask
        while table[slot] >= 0:
            table[slot] = -1
            slot = (slot + U1) & mask
        if ends[g] != U0:
            sets[keep] = sets[g]
            ends[keep] = ends[g]
            reach = U0
            m = ends[g]
            while m != U0:
                reach |= aligned[lowest_bit(m)]
                m &= m - U1
            reaches[keep] = reach
            keep += 1
    return keep


# ``Stack.since``'s columns in ``dfs`` (``GATHER_NODES``): the nodes when the node at depth d was entered, and the
# size its subtree must reach before it is gathered; what the calls before left for depth d (a row of
# ``Share.gathered``: its subtree, that size, the move into it); and 1 while the node at d is the one they left
ENTERED, WAIT, LEFT_SUBTREE, LEFT_WAIT, LEFT_SOURCE, LEFT_TARGET, ON_LEFT = 0, 1, 2, 3, 4, 5, 6


@lean_njit(inline="always")
def resume_gathered(since, left):
    """Start the counts of a search's gatherings at nodes: the root's from 0, or, for a call of a search run again on
    its own memo (``left``, ``Share.gathered``, non-empty), from where the calls before left the nodes of depth 0
    to ``NODE_GATHER_DEPTH`` on their last line (``enter_gathered`` takes up the others).

    ``boaf.search.restarts`` runs the main search in slices, each a new call.
    Counted per call, each node of the line the last slice stopped on would be
    gathered again at ``NODE_GATHER_FIRST`` nodes and each doubling, repeating
    the last slice's gatherings before any new one. Counted over the calls, its
    subtree is its nodes in all of them and its next gathering waits for the
    size the last call left, as in one long search. A gathering decides a node
    the same way whenever it runs (the proofs above hold for any work), so this
    moves only when, never what.
    """
    since[0, ENTERED], since[0, WAIT], since[0, ON_LEFT] = 0, NODE_GATHER_FIRST, 0
    if left.shape[0] == 0:
        return
    for d in range(min(left.shape[0], since.shape[0])):
        for k in range(4):
            since[d, LEFT_SUBTREE + k] = left[d, k]
    since[0, ENTERED] = -left[0, 0]  # (the subtree is ``nodes - since[0, ENTERED]``: this call's and the calls')
    since[0, WAIT] = max(left[0, 1], NODE_GATHER_FIRST)
    since[0, ON_LEFT] = 1


@lean_njit(inline="always")
def enter_gathered(since, nxt, src, dst, depth, nodes):
    """Start the count of the node just entered at ``depth`` (1 to ``NODE_GATHER_DEPTH``) at ``nodes``: from there,
    or, when it is the node the calls before left at that depth (its parent was, and the same move led to it), from
    where they left it (``resume_gathered``). ``nxt``, ``src``, ``dst``: the search's children by depth."""
    i = nxt[depth - 1] - 1
    same = since[depth - 1, ON_LEFT] == 1 and since[depth, LEFT_WAIT] > 0
    same = same and since[depth, LEFT_SOURCE] == src[depth - 1, i] and since[depth, LEFT_TARGET] == dst[depth - 1, i]
    since[depth, ENTERED] = nodes - since[depth, LEFT_SUBTREE] if same else nodes
    since[depth, WAIT] = max(since[depth, LEFT_WAIT], NODE_GATHER_FIRST) if same else NODE_GATHER_FIRST
    since[depth, ON_LEFT] = 1 if same else 0


@lean_njit(inline="always")
def leave_gathered(since, nxt, src, dst, depth, nodes, left):
    """Write into ``left`` (``Share.gathered``) what the next call takes up (``resume_gathered``), for a search
    stopped at ``depth`` after ``nodes``: for each depth from 0 to ``NODE_GATHER_DEPTH`` on its line, its node's
    subtree so far, the size its next gathering waits for and the move into it; a wait of 0 below ``depth``."""
    for d in range(left.shape[0]):
        left[d, 0], left[d, 1], left[d, 2], left[d, 3] = 0, 0, -1, -1
        if d <= depth and d < since.shape[0]:
            left[d, 0], left[d, 1] = nodes - since[d, ENTERED], since[d, WAIT]
            if d > 0:
                left[d, 2], left[d, 3] = src[d - 1, nxt[d - 1] - 1], dst[d - 1, nxt[d - 1] - 1]


@lean_njit(inline="always")
def _small_budget(max_nodes):
    """True for a node budget under ``OPEN_MIN_BUDGET`` (Classify's exact path): one gathering, of half its nodes."""
    return max_nodes > 0 and max_nodes < OPEN_MIN_BUDGET


@lean_njit(inline="always")
def _stopped(budget):
    """True when the search's cancel flag is raised or its deadline has passed (``spent``'s test, the clock read
    now: no node count applies here)."""
    return spent(np.int64(0), np.int64(0), budget.deadline, budget.cancel[0])
