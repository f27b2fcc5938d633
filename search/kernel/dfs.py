# mypy: disable-error-code="no-untyped-def"
"""The compiled search kernel: bitset states, exact memo, every algorithm.

This is the one module where speed beats beauty. Everything here is numba
``nopython`` code (``cache=True`` so a process compiles it once per machine,
``nogil=True`` so solves may run in threads side by side).

Representation (any grid with ``rows * cols <= 52``):

- ``cells``: ``int8[ncells]``, the top card of each cell or -1 when empty.
- ``present``: ``uint64`` mask of the cards on the board (bit ``card``).
- ``compat[card]``: ``uint64`` mask of the cards compatible with ``card``.
- ``line[cell]``: ``uint64`` mask of the other cells in its row or column.
- The memo key of a state is exact, never a hash. On grids of at most 16
  cells it is one ``uint64`` (``_narrow_key``): the occupied-cell mask, then a
  4-bit label (the card's cell at the root) for each occupied cell's top card
  (a 4x4 state of up to 12 stacks; one of more stacks, after the first moves,
  has the rank of its labels instead, ``_ranked_key``). The table is open addressing over those words, 0 marking a free
  slot, at most three quarters full: 8 bytes a slot, 11-21 bytes a stored
  state. Elsewhere (and for best-n and Island Merge) the key is 6 bits per
  cell (card + 1, 0 for empty), 10 cells per ``uint64`` word, ``ceil(ncells /
  10)`` words (one more with ``ISLANDS``: the island under way, see
  ``_island_split``), plus the stamp of the solve that wrote a slot, so one
  table serves a whole batch without clearing.

Measured and deleted (issue 13): a ``CANONICAL`` option (memo keys of the
canonical member of the state's symmetry class: rows and columns sorted by
their card sets, and the transpose on square grids) cut the nodes of the
hardest deals by only ~6% (360528: 3.82M -> 3.59M) and cost more in key
building than it saved; a ``LOOKAHEAD`` option (looking all children up in the
memo at once, to overlap cache misses) doubled the mean time per deal, since
most deals are solved long before most children are visited.

Solver v2 (issue 13) option bits, on in ``ordered`` (``SLEEP`` in ``compatible`` too),
measured in the same process by ``benchmarks/solver.py --ablation``:
``PRUNE_LEAF`` and ``PRUNE_ANCHOR`` (stranded leaves, ``_leaf_stranded``) decide
360528 and 731678 at the root's children (3.8M / 3.6M nodes before) and
cut 557593 from 1.1M nodes to 18, 174024 12.7x, -115618 3.2x; ``SLEEP`` (sleep
sets, ``_fall_asleep``) changes no node count of a memoised state and saves
1.3-1.6x of the time on -4965 and -115618 by not probing commuted children.
Six hard deals: 23.0 s -> 3.3 s. ``PRUNE_FROZEN`` (a frozen block hanging from
a cut vertex by one edge, ``_frozen_block``) then decides -4965 and eight of the
ten hardest deals of the census -500,000..499,999 at the root (-4965: 2,348,019
nodes -> 1). A memory budget (``max_bytes``) caps the memo.

``ISLANDS`` (Island Merge, the ``island-merge`` algorithm, on Compatible DFS;
``benchmarks/solver.py --by-stacks``): exact (``_island_split``), but 951.6 mean
nodes on 10,000 random states against Compatible's 718.5: a state met inside a
collapse and outside one is stored under two keys. On the hard deals it rarely
splits (same nodes as Compatible on four of six; -115618 2.13M -> 0.71M nodes).

A move ``x`` onto ``y`` removes card ``y`` from the compatibility graph and
keeps ``x``. So a child's graph is the parent's minus the target card, and
everything graph-based (pruning, ordering features, flockability) is computed
once per distinct target card, not once per child.

Statuses: ``SOLVABLE``, ``UNSOLVABLE``, ``UNKNOWN`` (a node or time budget ran
out, or the cancel flag was raised). Nodes count *expanded* states: states with
more than one stack, not already known unsolvable, whose children were generated.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from functools import cache
from typing import Any

import numba
import numpy as np
from llvmlite import ir
from numba import njit
from numba.core import cgutils
from numba.core.errors import NumbaWarning
from numba.extending import intrinsic

from game.bits import lowest_bit, popcount

# The clock is read in a short object-mode block every CHECK_EVERY nodes; numba
# warns that such a block holds the GIL, which is the point of keeping it rare.
warnings.filterwarnings("ignore", category=NumbaWarning, module=__name__)
warnings.filterwarnings("ignore", message=".*object mode.*", category=NumbaWarning)

SOLVABLE, UNSOLVABLE, UNKNOWN = 1, 0, 2
OUT_OF_MEMORY = 3  # the status of a search stopped by its memory budget (reported as unknown)
TABLE_FULL = 4  # a search sharing a fixed table stopped to let it grow (``dfs``, ``search.threads``)
CONSTRAINED, COMPATIBLE, ORDERED, BEST_N = 0, 1, 2, 3
CHECK_EVERY = 1024  # nodes between clock checks (the cancel flag, a plain load, is read at every node)
SMALL_SORT = 24  # children sorted by insertion up to this many, by a merge sort beyond
ORDER_MAX_STACKS = 16  # above this many stacks, children are ordered by flockability alone (see ``_generate``)
TIE_BREAK = 1e-4  # weight of a child's flockability in its ordering score (below any subset-H difference)
CELLS_PER_WORD = 10
MAX_CHILDREN_PER_CELL = 51
# Literal ints: an int handed to a compiled call here is ``np.int64(...)``, never a bare ``0`` or a
# constant. numba types a literal argument (``n = 0`` before a loop, ``FROZEN_MAX``) as
# ``Literal[int](0)`` and compiles a copy of the callee, and of all it calls, for that literal, then
# another for ``int64``: a first start compiled ``_generate`` and nine more twice.
# ``tests/service/test_kernels.py`` fails on any literal signature.

U0 = np.uint64(0)
U1 = np.uint64(1)
U6 = np.uint64(6)
U63 = np.uint64(63)


@intrinsic
def _prefetch_row(typingctx, table, row):
    # a hint that row ``row`` of the 2-D array ``table`` is read soon (llvm.prefetch: read, keep in all caches)
    def codegen(context, builder, signature, args):
        table_type = signature.args[0]
        array = context.make_array(table_type)(context, builder, args[0])
        zero = context.get_constant(numba.types.intp, 0)
        at = cgutils.get_item_pointer(context, builder, table_type, array, [args[1], zero])
        byte_ptr = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        hint = ir.FunctionType(ir.VoidType(), [byte_ptr, i32, i32, i32])
        prefetch = cgutils.get_or_insert_function(builder.module, hint, "llvm.prefetch.p0")
        builder.call(
            prefetch, [builder.bitcast(at, byte_ptr), ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)]
        )
        return context.get_dummy_value()

    return numba.types.void(table, numba.types.int64), codegen


# ---------------------------------------------------------------- tables


@cache
def compat_table() -> np.ndarray:
    """``uint64[52]``: bit ``b`` of entry ``a`` is set when cards ``a != b`` are compatible (shared: do not modify)."""
    table = np.zeros(52, dtype=np.uint64)
    for a in range(52):
        for b in range(52):
            if a != b and (a % 4 == b % 4 or abs(a // 4 - b // 4) <= 1):
                table[a] |= np.uint64(1) << np.uint64(b)
    return table


def line_table(rows: int, cols: int) -> np.ndarray:
    """``uint64[rows*cols]``: bit ``j`` of entry ``i`` is set when cells ``i != j`` share a row or column."""
    n = rows * cols
    table = np.zeros(n, dtype=np.uint64)
    for i in range(n):
        for j in range(n):
            if i != j and (i // cols == j // cols or i % cols == j % cols):
                table[i] |= np.uint64(1) << np.uint64(j)
    return table


@njit(cache=True, nogil=True)
def cell_cut_table(line):
    """``uint16[2**ncells]`` for a grid of at most 16 cells: entry ``m`` is the mask of the cut vertices of the
    occupied cells ``m`` under "shares a row or column" (``cut_vertices``), so that the search reads them in one load.
    """
    ncells = line.shape[0]
    table = np.zeros(1 << ncells, dtype=np.uint16)
    disc = np.empty(64, dtype=np.int64)
    low = np.empty(64, dtype=np.int64)
    parent = np.empty(64, dtype=np.int64)
    stack_v = np.empty(64, dtype=np.int64)
    stack_m = np.empty(64, dtype=np.uint64)
    for m in range(1, 1 << ncells):
        cuts, _ = cut_vertices(np.uint64(m), line, disc, low, parent, stack_v, stack_m)
        table[m] = np.uint16(cuts)
    return table


# ---------------------------------------------------------------- clock


@njit(cache=True, nogil=True)
def now_s() -> float:
    """Monotonic clock in seconds (holds the GIL for about a microsecond)."""
    with numba.objmode(t="float64"):
        t = time.perf_counter()
    return t


# ---------------------------------------------------------------- graph


@njit(cache=True, nogil=True, inline="always")
def _bit(i):
    return U1 << np.uint64(i)


@njit(cache=True, nogil=True)
def is_connected(present, compat):
    """True when the compatibility graph on the card mask ``present`` has at most one component."""
    return _all_reached(present, compat)


@njit(cache=True, nogil=True, inline="always")
def _all_reached(members, links):
    """True when every bit of ``members`` is reached from its lowest bit through ``links[bit]`` masks."""
    if members == U0:
        return True
    reach = members & (~members + U1)
    frontier = reach
    while frontier != U0:
        grow = U0
        f = frontier
        while f != U0:
            c = lowest_bit(f)
            f &= f - U1
            grow |= links[c]
        frontier = grow & members & ~reach
        reach |= frontier
    return reach == members


@njit(cache=True, nogil=True)
def cut_vertices(nodes, adjacency, disc, low, parent, stack_v, stack_m):
    """Articulation points of the graph on the bit set ``nodes`` (Tarjan, one pass).

    ``adjacency[v]`` is the neighbour mask of ``v``; the other arguments are
    ``int64[64]`` / ``uint64[64]`` scratch. Returns ``(cuts, connected)``: the mask
    of vertices whose removal disconnects the rest, and whether the graph is
    connected. Removing any vertex of a disconnected graph leaves it
    disconnected, so callers only use ``cuts`` when ``connected``.
    """
    if nodes == U0:
        return U0, True
    root = lowest_bit(nodes)
    visited = _bit(root)
    disc[root] = 0
    low[root] = 0
    parent[root] = -1
    clock = 0
    sp = 0
    stack_v[0] = root
    stack_m[0] = adjacency[root] & nodes
    root_children = 0
    cuts = U0
    while sp >= 0:
        v = stack_v[sp]
        m = stack_m[sp] & ~visited
        if m != U0:
            w = lowest_bit(m)
            stack_m[sp] = m & (m - U1)
            visited |= _bit(w)
            clock += 1
            disc[w] = clock
            low[w] = clock
            parent[w] = v
            if v == root:
                root_children += 1
            sp += 1
            stack_v[sp] = w
            stack_m[sp] = adjacency[w] & nodes
        else:
            back = adjacency[v] & nodes & visited
            if parent[v] >= 0:
                back &= ~_bit(parent[v])
            lv = low[v]
            while back != U0:
                u = lowest_bit(back)
                back &= back - U1
                if disc[u] < lv:
                    lv = disc[u]
            low[v] = lv
            sp -= 1
            if sp >= 0:
                p = stack_v[sp]
                if lv < low[p]:
                    low[p] = lv
                if p != root and lv >= disc[p]:
                    cuts |= _bit(p)
    if root_children > 1:
        cuts |= _bit(root)
    return cuts, visited == nodes


@njit(cache=True, nogil=True)
def has_odd_bird(present, compat):
    """True when some card of ``present`` (two or more cards) is compatible with no other."""
    if popcount(present) < 2:
        return False
    p = present
    while p != U0:
        c = lowest_bit(p)
        p &= p - U1
        if compat[c] & present == U0:
            return True
    return False


@njit(cache=True, nogil=True)
def _local_connectivity(s, t, present, compat, cap, work):
    """``(paths, through, t_preds)``: internally vertex-disjoint ``s``–``t`` paths, counting stops at ``cap``.

    ``through`` is the mask of the inner vertices of the paths found: without
    any one vertex of it at least ``paths - 1`` of them remain, without any
    other vertex all ``paths`` (``_child_connectivity`` reads it so), and
    ``t_preds`` the last inner vertex of each path. Non-adjacent ``s`` and
    ``t`` are assumed. ``paths`` may pass ``cap`` when ``s`` and ``t`` have more
    common neighbours than that. The paths are left in ``work`` (``_augment``).
    """
    used = work[0]
    pred = work[4]
    p = present
    while p != U0:
        i = lowest_bit(p)
        p &= p - U1
        used[i] = 0
        pred[i] = -1
    # Common neighbours are disjoint paths of length two: enough of them answer
    # at once, and the rest start the flow (any feasible flow may be augmented).
    common = compat[s] & compat[t] & present
    m = common
    while m != U0:
        w = lowest_bit(m)
        m &= m - U1
        used[w] = 1
        pred[w] = s
    flow = popcount(common)
    if flow >= cap:
        return flow, common, common
    flow, t_preds = _augment(s, t, present, compat, cap, work, flow, common)
    through = U0
    p = present
    while p != U0:
        i = lowest_bit(p)
        p &= p - U1
        if used[i] == 1:
            through |= _bit(i)
    return flow, through, t_preds


@njit(cache=True, nogil=True)
def _augment(s, t, present, compat, cap, work, flow, t_preds):
    """Augment the ``flow`` ``s``–``t`` paths in ``work`` up to ``cap``; returns ``(paths, t_preds)``.

    Unit-capacity max flow with every vertex but ``s`` and ``t`` split into an
    in and an out half. A vertex carries at most one path, so the flow is
    stored as ``used[v]`` (row 0: its inner arc carries a path) and
    ``pred[v]`` (row 4: the vertex before ``v`` on its path, -1 if none), with
    ``t_preds`` the vertices whose path enters ``t``. Every residual step is
    O(1) or one bit loop. Any feasible flow may be the start: augmenting
    paths reach the maximum from each (Ford–Fulkerson). ``work`` rows 1-3 are
    the search's scratch.
    """
    used = work[0]
    queue = work[1]
    side = work[2]  # 0: in half, 1: out half
    parent = work[3]
    pred = work[4]
    while flow < cap:
        seen_in = _bit(s)
        seen_out = _bit(s)
        head = 0
        tail = 1
        queue[0] = s
        side[0] = 1
        found = -1
        while head < tail and found < 0:
            u = queue[head]
            here = head
            head += 1
            if side[here] == 1:
                # out half: arcs u -> w that carry no flow; the reverse of a used vertex's inner arc
                nxt = compat[u] & present & ~seen_in
                while nxt != U0:
                    w = lowest_bit(nxt)
                    nxt &= nxt - U1
                    if (w == t and t_preds & _bit(u) != U0) or (w != t and pred[w] == u):
                        continue
                    seen_in |= _bit(w)
                    queue[tail] = w
                    side[tail] = 0
                    parent[tail] = here
                    tail += 1
                    if w == t:
                        found = tail - 1
                        break
                if found < 0 and u != s and used[u] == 1 and seen_in & _bit(u) == U0:
                    seen_in |= _bit(u)
                    queue[tail] = u
                    side[tail] = 0
                    parent[tail] = here
                    tail += 1
            else:
                # in half: the inner arc when unused; back along the flow into u
                if used[u] == 0 and seen_out & _bit(u) == U0:
                    seen_out |= _bit(u)
                    queue[tail] = u
                    side[tail] = 1
                    parent[tail] = here
                    tail += 1
                p = pred[u]
                if p >= 0 and seen_out & _bit(p) == U0:
                    seen_out |= _bit(p)
                    queue[tail] = p
                    side[tail] = 1
                    parent[tail] = here
                    tail += 1
        if found < 0:
            break
        flow += 1
        # walk back from t: later arcs first, so a cancelled flow into a vertex is cleared before the new one is set
        i = found
        while i != 0:
            j = parent[i]
            a, b = queue[j], queue[i]
            if side[j] == 1 and side[i] == 0:
                if a == b:
                    used[a] = 0
                elif b == t:
                    t_preds |= _bit(a)
                else:
                    pred[b] = a
            elif side[j] == 0 and side[i] == 1:
                if a == b:
                    used[a] = 1
                elif pred[a] == b:
                    pred[a] = -1
            i = j
    return flow, t_preds


@njit(cache=True, nogil=True, inline="always")
def _least_degree(present, compat):
    """``(v, d)``: the first card of least degree ``d`` in the graph on ``present`` (non-empty)."""
    v = -1
    lo = 99
    p = present
    while p != U0:
        c = lowest_bit(p)
        p &= p - U1
        d = popcount(compat[c] & present)
        if d < lo:
            lo = d
            v = c
    return v, lo


@njit(cache=True, nogil=True)
def node_connectivity(present, compat, work, floor=0):
    """Vertex connectivity of the graph on ``present``: 0 when disconnected or at most one node.

    Esfahanian–Hakimi: with ``v`` of minimum degree, the minimum of local
    connectivities from ``v`` to its non-neighbours and between non-adjacent
    neighbours of ``v``; the minimum degree bounds it, and a complete graph gives n - 1.
    ``floor`` is a known lower bound: the search stops as soon as it is reached.
    """
    n = popcount(present)
    if n <= 1:
        return 0
    # Connectivity 0, 1 and 2 come from one pass of Tarjan's cut vertices; only 3+ needs flows.
    # (A floor of 2 or more already says the graph is 2-connected.)
    if floor < 2:
        cuts, connected = cut_vertices(present, compat, work[5], work[6], work[7], work[8], work[9].view(np.uint64))
        if not connected:
            return 0
        if cuts != U0 or n == 2:
            return 1
        floor = 2
    v, k = _least_degree(present, compat)
    neighbours = compat[v] & present
    others = present & ~neighbours & ~_bit(v)
    stop = max(floor, 1)
    while others != U0 and k > stop:
        w = lowest_bit(others)
        others &= others - U1
        f, _, _ = _local_connectivity(v, w, present, compat, k, work)
        if f < k:
            k = f
    a_mask = neighbours
    while a_mask != U0 and k > stop:
        x = lowest_bit(a_mask)
        a_mask &= a_mask - U1
        b_mask = a_mask & ~compat[x]
        while b_mask != U0 and k > stop:
            y = lowest_bit(b_mask)
            b_mask &= b_mask - U1
            f, _, _ = _local_connectivity(x, y, present, compat, k, work)
            if f < k:
                k = f
    return k


@njit(cache=True, nogil=True)
def degree_range(present, compat):
    """``(min, max)`` degree of the compatibility graph on ``present`` (0, 0 when empty)."""
    lo = 99
    hi = 0
    p = present
    while p != U0:
        c = lowest_bit(p)
        p &= p - U1
        d = popcount(compat[c] & present)
        lo = min(lo, d)
        hi = max(hi, d)
    if lo == 99:
        lo = 0
    return lo, hi


@njit(cache=True, nogil=True, inline="always")
def _degree_stats(present, compat):
    """``(min, max, sum)`` of the degrees of the compatibility graph on ``present`` (non-empty), in one pass."""
    lo = 99
    hi = 0
    total = 0
    p = present
    while p != U0:
        c = lowest_bit(p)
        p &= p - U1
        d = popcount(compat[c] & present)
        lo = min(lo, d)
        hi = max(hi, d)
        total += d
    return lo, hi, total


@njit(cache=True, nogil=True)
def flockability(present, compat):
    """Edges of the compatibility graph on ``present``."""
    total = 0
    p = present
    while p != U0:
        c = lowest_bit(p)
        p &= p - U1
        total += popcount(compat[c] & present)
    return total // 2


# ---------------------------------------------------------------- keys and memo

NARROW_CELLS = 16  # grids of at most this many cells get one-word memo entries (``_narrow_key``)
NARROW_ROWS = 1 << 10  # first capacity of a one-word table (8 KiB: cleared between the states of a batch)
WIDE_ROWS = 1 << 10  # first capacity of a wide table
U15 = np.uint64(15)


@njit(cache=True, nogil=True)
def key_words(ncells: int) -> int:
    """Number of ``uint64`` words in the wide exact key of a state of ``ncells`` cells."""
    return (ncells + CELLS_PER_WORD - 1) // CELLS_PER_WORD


@njit(cache=True, nogil=True)
def narrow_max_stacks(ncells: int) -> int:
    """The most stacks a state of ``ncells <= NARROW_CELLS`` cells may have to get a one-word key."""
    return (64 - ncells) // 4


@njit(cache=True, nogil=True)
def _plain_key(cells, key):
    """The wide exact key of ``cells``: 6 bits per cell (card + 1), ten cells per word."""
    for w in range(key.shape[0]):
        key[w] = U0
    for i in range(cells.shape[0]):
        v = np.uint64(cells[i] + 1)
        key[i // CELLS_PER_WORD] |= v << np.uint64(6 * (i % CELLS_PER_WORD))


@njit(cache=True, nogil=True, inline="always")
def _copy_words(source, target):
    # a loop: ``target[:] = source`` compiles numpy's broadcasting and its shape error, ~1.7 s of a first start
    for w in range(source.shape[0]):
        target[w] = source[w]


@njit(cache=True, nogil=True)
def root_labels(root, labels):
    """Write into ``labels`` (``int64[52]``) each card's cell at ``root``, -1 for cards not on it.

    These are the 4-bit labels of one-word keys (``_narrow_key``): a search that
    starts below another root (a thread's share of a split search) is given
    that root's labels, so that every search of a shared table keys alike.
    """
    for c in range(52):
        labels[c] = -1
    for i in range(root.shape[0]):
        if root[i] >= 0:
            labels[root[i]] = i


@njit(cache=True, nogil=True)
def _packed_labels(cells, labels):
    """The labels of the top cards of ``cells``, occupied cells in order, 4 bits each from bit 0."""
    packed = U0
    shift = 0
    for i in range(cells.shape[0]):
        if cells[i] >= 0:
            packed |= np.uint64(labels[cells[i]]) << np.uint64(shift)
            shift += 4
    return packed


@njit(cache=True, nogil=True, inline="always")
def _packed_child(packed, occupied, s, t, label):
    """``packed`` (of a state with occupied cells ``occupied``) after the move ``s -> t`` of the card ``label``.

    The nibble of ``t`` (its rank among the occupied cells) takes the label,
    and the nibble of ``s`` is cut out, the ones above it moving down.
    """
    rt = np.uint64(4 * popcount(occupied & (_bit(t) - U1)))
    packed = (packed & ~(U15 << rt)) | (np.uint64(label) << rt)
    rs = 4 * popcount(occupied & (_bit(s) - U1))
    low = packed & ((U1 << np.uint64(rs)) - U1)
    high = packed >> np.uint64(rs + 4) if rs + 4 < 64 else U0
    return low | (high << np.uint64(rs))


@njit(cache=True, nogil=True, inline="always")
def _narrow_key(packed, occupied, ncells):
    """The one-word exact key of a state: its occupied-cell mask, then its ``packed`` labels above bit ``ncells``.

    Exact for a grid of at most 16 cells and at most ``narrow_max_stacks``
    stacks (12 on 4x4; more take ``_ranked_key``): every card on the board was on the root (cards only
    leave it), and a root of at most 16 cells holds at most 16 cards, so the
    labels (each card's root cell) are distinct 4-bit numbers. The mask says
    which cells are occupied and the nibbles, in cell order, which card tops
    each: two states with one key are the same state. ``ncells + 4 * stacks
    <= 64``, so the key fits one word, and it is never 0 (a memoised state
    has stacks), so 0 marks a free slot.
    """
    return (packed << np.uint64(ncells)) | occupied


@njit(cache=True, nogil=True)
def _ranked_key(cells, labels, occupied, ncells):
    """The one-word exact key of a state of more than ``narrow_max_stacks`` stacks (few: the first moves).

    The occupied-cell mask, then, above bit ``ncells``, the rank of the
    labels of the occupied cells' top cards in cell order among all such
    sequences of distinct labels: the ``j``-th label's position among the
    labels not yet used, in base ``ncells - j`` (a partial Lehmer code). The
    rank is below ``ncells! <= 16! < 2^45``, so the key fits one word; the mask
    and the rank give back the state. Its mask has more bits set than any
    ``_narrow_key``'s, so the two kinds never collide.
    """
    unused = _bit(ncells) - U1
    rank = U0
    j = 0
    for i in range(ncells):
        if cells[i] >= 0:
            x = labels[cells[i]]
            rank = rank * np.uint64(ncells - j) + np.uint64(popcount(unused & (_bit(x) - U1)))
            unused &= ~_bit(x)
            j += 1
    return (rank << np.uint64(ncells)) | occupied


@njit(cache=True, nogil=True)
def _key_children(packed, occupied, cells, labels, src, dst, count, ncells, ranked, memo, keys):
    """The one-word keys of a node's children into ``keys``, each slot's cache line fetched ahead.

    The children are looked up one by one later, each after its elder
    siblings' subtrees; on hard deals most are found in the table at once,
    and their lookups, each a likely cache miss, then overlap. (Children of
    more than ``narrow_max_stacks`` stacks, ``ranked``, take their ranked key
    when looked up, and are not fetched ahead.)
    """
    if ranked:
        return
    mask = np.uint64(memo.shape[0] - 1)
    for i in range(count):
        s = src[i]
        k = _narrow_key(_packed_child(packed, occupied, s, dst[i], labels[cells[s]]), occupied & ~_bit(s), ncells)
        keys[i] = k
        _prefetch_row(memo, _narrow_slot(k, mask))


@njit(cache=True, nogil=True, inline="always")
def _narrow_slot(key, mask):
    h = key * np.uint64(0x9E3779B97F4A7C15)
    return np.int64((h ^ (h >> np.uint64(29))) & mask)


@njit(cache=True, nogil=True)
def _narrow_find(table, key):
    """Slot of the one-word ``key`` in ``table`` (``uint64[capacity, 1]``, 0 free), or ``-1 - slot`` of a free slot."""
    mask = np.uint64(table.shape[0] - 1)
    slot = _narrow_slot(key, mask)
    while True:
        v = table[slot, 0]
        if v == key:
            return slot
        if v == U0:
            return -1 - slot
        slot = np.int64((np.uint64(slot) + U1) & mask)


@njit(cache=True, nogil=True)
def narrow_grow(table):
    """A one-word table twice the size of ``table``, holding its keys."""
    grown = np.zeros((table.shape[0] * 2, 1), dtype=np.uint64)
    for i in range(table.shape[0]):
        if table[i, 0] != U0:
            grown[-1 - _narrow_find(grown, table[i, 0]), 0] = table[i, 0]
    return grown


@njit(cache=True, nogil=True, inline="always")
def _narrow_full(count, rows):
    # a one-word table is kept at most three quarters full
    return 4 * (count + 1) > 3 * rows


@njit(cache=True, nogil=True)
def _narrow_add(table, key, count, max_rows):
    """Insert the one-word ``key``; returns the table (grown rather than pass 3/4 full), the count, and whether it fit.

    ``max_rows`` (0 for no cap) bounds the table and its growth as in ``_memo_add``.
    """
    at = _narrow_find(table, key)
    if at >= 0:
        return table, count, True
    if _narrow_full(count, table.shape[0]):
        if max_rows > 0 and 3 * table.shape[0] > max_rows:
            return table, count, False
        table = narrow_grow(table)
        at = _narrow_find(table, key)
    table[-1 - at, 0] = key
    return table, count + 1, True


@njit(cache=True, nogil=True, inline="always")
def _hash(key):
    h = np.uint64(0x9E3779B97F4A7C15)
    for w in range(key.shape[0]):
        h ^= key[w]
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(31)
    return h


@njit(cache=True, nogil=True)
def _memo_find(table, stamp, key):
    """Slot of the wide ``key``, or ``-1 - slot`` of the free slot where it would go.

    ``table`` is ``uint64[capacity, words + 1]``: the full key, then the stamp of
    the solve that wrote it (other stamps count as free, so a table is reused
    across solves without clearing).
    """
    nw = key.shape[0]
    mask = np.uint64(table.shape[0] - 1)
    slot = np.int64(_hash(key) & mask)
    while True:
        if table[slot, nw] != stamp:
            return -1 - slot
        same = True
        for w in range(nw):
            if table[slot, w] != key[w]:
                same = False
                break
        if same:
            return slot
        slot = np.int64((np.uint64(slot) + U1) & mask)


@njit(cache=True, nogil=True)
def _memo_add(table, stamp, key, count, max_rows):
    """Insert the wide ``key``; returns the table (grown when over half full), the new count, and whether it fit.

    ``max_rows`` (0 for no cap) bounds the table *and* its growth: a table of
    ``r`` rows grows to ``2r``, and for a moment both are held, so it grows only
    while ``3r <= max_rows``. When it is half full and may not grow, the key is
    not stored and ``False`` is returned (the search then stops as out of memory).
    """
    at = _memo_find(table, stamp, key)
    if at >= 0:
        return table, count, True
    if 2 * (count + 1) > table.shape[0] and max_rows > 0 and 3 * table.shape[0] > max_rows:
        return table, count, False
    at = -1 - at
    nw = key.shape[0]
    for w in range(nw):
        table[at, w] = key[w]
    table[at, nw] = stamp
    count += 1
    if 2 * count > table.shape[0]:
        table = _memo_grow(table, stamp)
    return table, count, True


@njit(cache=True, nogil=True)
def _memo_grow(table, stamp):
    nw = table.shape[1] - 1
    grown = np.zeros((table.shape[0] * 2, nw + 1), dtype=np.uint64)
    for i in range(table.shape[0]):
        if table[i, nw] == stamp:
            at = -1 - _memo_find(grown, stamp, table[i, :nw])
            for w in range(nw + 1):  # (a loop: a row assignment compiles numpy's broadcasting checks, ~1.8 s)
                grown[at, w] = table[i, w]
    return grown


@njit(cache=True, nogil=True)
def _fit_memo(memo, width, max_bytes):
    """``memo`` when its rows are ``width`` words wide, else a new empty table of that width (``max_bytes / 2``)."""
    if memo.shape[1] == width:
        return memo
    rows = NARROW_ROWS if width == 1 else WIDE_ROWS
    while max_bytes > 0 and rows > 2 and 2 * rows * 8 * width > max_bytes:
        rows //= 2
    return np.zeros((rows, width), dtype=np.uint64)


def new_memo(ncells: int, capacity: int = 0, max_bytes: int = 0, wide: bool = False) -> np.ndarray:
    """An empty memo table for states of ``ncells`` cells (``capacity`` a power of two, 0 for the default).

    Grids of at most ``NARROW_CELLS`` cells get one-word rows (``_narrow_key``),
    unless ``wide``; other grids, best-n and Island Merge use wide rows (the kernel
    swaps a table of the wrong width for a fresh one). With ``max_bytes > 0``
    the capacity is halved until the table takes at most half of it.
    """
    width = 1 if ncells <= NARROW_CELLS and not wide else key_words(ncells) + 1
    rows = capacity or (NARROW_ROWS if width == 1 else WIDE_ROWS)
    while max_bytes > 0 and rows > 2 and 2 * rows * 8 * width > max_bytes:
        rows //= 2
    return np.zeros((rows, width), dtype=np.uint64)


# ---------------------------------------------------------------- the search

# option bits of ``dfs`` and ``best_n``
PRUNE_GRAPH = 1  # skip children whose compatibility graph is disconnected
ORDER = 2  # sort children by the subset-H estimate above the cutoff
PRUNE_CELLS = 4  # skip children whose occupied cells no longer link up by rows and columns
PRUNE_LEAF = 32  # skip children where a degree-1 card's only neighbour can no longer reach its line
PRUNE_ANCHOR = 64  # with PRUNE_LEAF: ... nor the one other neighbour of a degree-2 neighbour reach both lines
SLEEP = 128  # sleep sets: skip a child reached by two commuting moves whose other order was searched
PRUNE_FROZEN = 512  # a frozen block hanging from a cut vertex by one edge must be able to come down (``_frozen_block``)
ISLANDS = 256  # Island Merge: at a bridge of G, collapse one side first (memo keys carry the side, ``_island_split``)


@njit(cache=True, nogil=True, inline="always")
def _walk_reaches(start, hops, cells, target, line, least):
    """True when a walk of ``least`` (0 or 1) to ``hops`` steps along rows and columns, from
    cell ``start`` through the cells of the mask ``cells``, ends in the mask ``target``.

    A card that moves empties its cell for good, so its walks never come back:
    breadth-first layers over unvisited cells decide it.
    """
    reach = _bit(start)
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


@njit(cache=True, nogil=True)
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
        if line[p] & _bit(q) != U0:
            continue
        others = compat[d] & present & ~_bit(c)
        if not _walk_reaches(q, popcount(others), occupied & ~_bit(p), line[p], line, 0):
            return True
        if anchor and popcount(others) == 1:
            e = lowest_bit(others)
            cells = occupied & ~_bit(p) & ~_bit(q)
            hops = popcount(compat[e] & present) - 1
            least = 1 if popcount(present) > 3 else 0  # another card is still to go: e's last hop covers it
            if not _walk_reaches(where[e], hops, cells, line[p] & line[q] & cells, line, least):
                return True
    return False


FROZEN_MAX = 3  # the most cards of a pendant side that ``_frozen_block`` considers (its block adds one)


@njit(cache=True, nogil=True)
def _small_side(start, members, links, limit):
    """The cards of ``members`` reached from ``start`` through ``links``, or 0 once there are more than ``limit``."""
    reach = _bit(start)
    frontier = reach
    while frontier != U0:
        grow = U0
        f = frontier
        while f != U0:
            c = lowest_bit(f)
            f &= f - U1
            grow |= links[c]
        frontier = grow & members & ~reach
        reach |= frontier
        if popcount(reach) > limit:
            return U0
    return reach


@njit(cache=True, nogil=True)
def _tiny_solvable(cards, cells, n, compat, line, work):
    """True when the ``n`` (at most 4) stacks topped by ``cards`` in ``cells`` can come down to one, alone on a board.

    A plain exhaustive search (at most 3 moves deep); ``work`` rows 10 and 11 are its stack.
    """
    if n <= 1:
        return True
    at = work[10]  # at[4 * d + i]: the cell of card i at depth d
    alive = work[11, :8]  # the cards still on the board at depth d (a bit each)
    nxt = work[11, 8:16]  # the next move to try at depth d (i * n + j: card i onto card j)
    for i in range(n):
        at[i] = cells[i]
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
            if compat[cards[i]] & _bit(cards[j]) == U0 or line[at[4 * d + i]] & _bit(at[4 * d + j]) == U0:
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


@njit(cache=True, nogil=True)
def _frozen_block(cuts, present, occupied, cells, where, compat, line, work):
    """True when a frozen block hangs from G by one edge and can never come down: the state is unsolvable.

    ``cuts`` are cut vertices of G (those ``_hanging`` names suffice); ``where[card]`` must hold the cell of every
    card on the board.

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
    cards = work[11, 16:20]
    spots = work[11, 20:24]
    cv = cuts
    while cv != U0:
        v = lowest_bit(cv)
        cv &= cv - U1
        rest = present & ~_bit(v)
        around = compat[v] & rest
        seen = U0
        m = around
        while m != U0:
            x = lowest_bit(m)
            m &= m - U1
            if seen & _bit(x) != U0:
                continue
            side = _small_side(x, rest, compat, np.int64(FROZEN_MAX))
            if side == U0:
                seen |= _bit(x)  # a large side (its other cards may be met again: each is sized once more at most)
                continue
            seen |= side
            if popcount(around & ~side) != 1:
                continue  # (b)
            block = side | _bit(v)
            frozen = True
            block_cells = U0
            n = 0
            b = block
            while b != U0:
                c = lowest_bit(b)
                b &= b - U1
                block_cells |= _bit(where[c])
                cards[n] = c
                spots[n] = where[c]
                n += 1
                if compat[c] & block & _in_line(where, c, block, line) != U0:
                    frozen = False
            if not frozen:
                continue  # (a)
            vi = 0
            while cards[vi] != v:
                vi += 1
            p = where[v]
            solvable = False
            qs = occupied & ~block_cells & line[p]
            while qs != U0 and not solvable:
                q = lowest_bit(qs)
                qs &= qs - U1
                spots[vi] = q
                solvable = _tiny_solvable(cards, spots, n, compat, line, work)
            spots[vi] = p
            if not solvable:
                return True
    return False


@njit(cache=True, nogil=True, inline="always")
def _in_line(where, c, block, line):
    """The cards of ``block`` whose cells are in line with card ``c``'s cell."""
    out = U0
    b = block
    while b != U0:
        y = lowest_bit(b)
        b &= b - U1
        if line[where[c]] & _bit(where[y]) != U0:
            out |= _bit(y)
    return out


@njit(cache=True, nogil=True)
def _cells_linked(occupied, line):
    """True when the occupied cells form one group under 'shares a row or column'.

    Cells only ever empty, and stacks only merge along such links, so a split
    grid can never come down to one stack.
    """
    return _all_reached(occupied, line)


PAIR_ROW = 12  # ``work`` rows from here hold ``_pair_flows``'s pairs (see there)
WORK_ROWS = PAIR_ROW + 5 + 52  # connectivity (0-9), ``_tiny_solvable`` (10-11), the pairs


@njit(cache=True, nogil=True, inline="always")
def _save_pair(work, i, s, t, flow, through, t_preds):
    """Pair ``i`` of ``_pair_flows``: its ends, its paths and the flow that ``_augment`` left in ``work``."""
    work[PAIR_ROW, i] = s
    work[PAIR_ROW + 1, i] = t
    work[PAIR_ROW + 2, i] = flow
    work[PAIR_ROW + 3, i] = np.int64(through)
    work[PAIR_ROW + 4, i] = np.int64(t_preds)
    m = through
    while m != U0:
        x = lowest_bit(m)
        m &= m - U1
        work[PAIR_ROW + 5 + x, i] = work[4, x]


@njit(cache=True, nogil=True)
def _pair_flows(present, compat, work):
    """Flows of Esfahanian–Hakimi's vertex pairs on G (``present``), for ``_child_connectivity``.

    ``v`` is a vertex of minimum degree ``lo``; its pairs are ``v`` with each
    non-neighbour and each non-adjacent pair of its neighbours. Pair ``i``
    is kept in column ``i`` of ``work``'s rows from ``PAIR_ROW``: its ends,
    the paths found (capped at ``lo + 1``; ``v``'s at ``lo``, all they can
    have), the mask of their inner vertices, the mask of their last inner
    vertices, and the predecessor of each inner vertex on its path (row
    ``PAIR_ROW + 5 + card``). Returns ``(v, pairs, kappa)``, with ``kappa``
    G's vertex connectivity (``node_connectivity``'s), or ``pairs = -1``
    when the pairs do not fit ``work``'s 128 columns (more than 16 cards:
    never under ``ORDER_MAX_STACKS``).
    """
    v, lo = _least_degree(present, compat)
    n = popcount(present)
    if n <= 1:
        return v, 0, 0
    neighbours = compat[v] & present
    others = present & ~neighbours & ~_bit(v)
    if popcount(others) + lo * (lo - 1) // 2 > work.shape[1]:
        return v, -1, 0
    kappa = lo
    pairs = 0
    o = others
    while o != U0:
        w = lowest_bit(o)
        o &= o - U1
        f, through, t_preds = _local_connectivity(v, w, present, compat, lo, work)
        _save_pair(work, pairs, v, w, f, through, t_preds)
        pairs += 1
        kappa = min(kappa, f)
    a_mask = neighbours
    while a_mask != U0:
        x = lowest_bit(a_mask)
        a_mask &= a_mask - U1
        b_mask = a_mask & ~compat[x]
        while b_mask != U0:
            y = lowest_bit(b_mask)
            b_mask &= b_mask - U1
            f, through, t_preds = _local_connectivity(x, y, present, compat, lo + 1, work)
            _save_pair(work, pairs, x, y, f, through, t_preds)
            pairs += 1
            kappa = min(kappa, f)
    return v, pairs, kappa


@njit(cache=True, nogil=True)
def _repaired_flow(i, y, child, compat, cap, work):
    """Pair ``i``'s local connectivity in G − y (``child``), capped at ``cap``, from its saved paths.

    The saved paths but the one through ``y`` (if any) are a feasible flow of
    G − y: they are restored in ``work`` and augmented (``_augment``).
    """
    s = work[PAIR_ROW, i]
    t = work[PAIR_ROW + 1, i]
    flow = work[PAIR_ROW + 2, i]
    through = np.uint64(work[PAIR_ROW + 3, i])
    t_preds = np.uint64(work[PAIR_ROW + 4, i])
    if through & _bit(y) != U0:
        # drop y's path: back to s along the predecessors, on to t along the successors
        x = y
        while x != s:
            through &= ~_bit(x)
            x = work[PAIR_ROW + 5 + x, i]
        x = y
        while t_preds & _bit(x) == U0:
            m = through
            while m != U0:
                z = lowest_bit(m)
                m &= m - U1
                if work[PAIR_ROW + 5 + z, i] == x:
                    break
            through &= ~_bit(z)
            x = z
        t_preds &= ~_bit(x)
        flow -= 1
    used = work[0]
    pred = work[4]
    p = child
    while p != U0:
        x = lowest_bit(p)
        p &= p - U1
        used[x] = 0
        pred[x] = -1
    m = through
    while m != U0:
        x = lowest_bit(m)
        m &= m - U1
        used[x] = 1
        pred[x] = work[PAIR_ROW + 5 + x, i]
    if flow >= cap:
        return flow
    flow, _ = _augment(s, t, child, compat, cap, work, flow, t_preds)
    return flow


@njit(cache=True, nogil=True)
def _child_connectivity(y, child, lo, floor, v, pairs, compat, work):
    """Vertex connectivity of G − y (``child``, minimum degree ``lo``) from G's ``_pair_flows``.

    Proof. Let G − y be non-complete with ``v`` in it. For any vertex ``v``
    of a graph, the minimum local connectivity over ``v``'s Esfahanian–Hakimi
    pairs is the connectivity: every non-adjacent pair has at least that
    many disjoint paths, and for a minimum cut S either ``v`` is outside S
    and a vertex ``w`` of another component of G − S is a non-neighbour
    of ``v`` that S separates from it, or ``v`` is in S and, S being
    minimum, has a neighbour in every component of G − S, two of which are
    non-adjacent and separated by S. ``v`` need not have minimum degree
    (that only keeps the pairs few). G − y's pairs for G's ``v`` are G's
    pairs without ``y``. A pair's paths in G are vertex-disjoint inside,
    so ``y`` lies on at most one of them: G − y keeps ``paths - 1`` of them
    if ``y`` is in ``through``, all ``paths`` otherwise. A pair whose
    bound reaches ``lo`` (an upper bound on the connectivity) cannot lower
    it; the others get their flow on G − y, the kept paths augmented, capped
    at the running minimum. The minimum of ``lo`` and those flows is the
    connectivity, also when G − y is complete (no pairs: ``lo = n - 1``).
    ``floor`` is a known lower bound: reaching it ends the search. For
    ``y = v`` this falls back to ``node_connectivity``.
    """
    if y == v or pairs < 0:
        return node_connectivity(child, compat, work, floor)
    k = lo
    yb = _bit(y)
    for i in range(pairs):
        if k <= floor:
            break
        if work[PAIR_ROW, i] == y or work[PAIR_ROW + 1, i] == y:
            continue
        bound = work[PAIR_ROW + 2, i] - (1 if np.uint64(work[PAIR_ROW + 3, i]) & yb != U0 else 0)
        if bound >= k:
            continue
        k = min(k, _repaired_flow(i, y, child, compat, k, work))
    return k


@njit(cache=True, nogil=True)
def _child_scores(present, compat, targets, coefs, work, scores, score_masks, score_values, score_kappas):
    """Linear-regression estimate on subset H of G minus each target card (indexed by card).

    Sibling subtrees reach the same card sets in different orders, so scores
    are kept in a direct-mapped cache keyed by the exact card mask (a slot holds
    one mask; a different mask simply replaces it), with each mask's node
    connectivity: a node's own connectivity was mostly computed when it was
    scored as a child. The children's connectivities come from one set of
    flows on G (``_pair_flows``, ``_child_connectivity``), not a set per child.
    """
    slots = np.uint64(score_masks.shape[0] - 1)
    slot = np.int64(((present * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)) & slots)
    flows = False  # ``_pair_flows`` has run on G
    v = -1
    pairs = 0
    if score_masks[slot] == present:
        own = score_kappas[slot]
    else:
        v, pairs, own = _pair_flows(present, compat, work)
        flows = True
        if pairs < 0:
            own = node_connectivity(present, compat, work, np.int64(0))
    # Removing one vertex lowers connectivity by at most one, and connectivity
    # never exceeds the minimum degree: often these bounds meet and no flow is needed.
    floor = max(own - 1, 0)
    t = targets
    while t != U0:
        y = lowest_bit(t)
        t &= t - U1
        child = present & ~_bit(y)
        slot = np.int64(((child * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)) & slots)
        if score_masks[slot] == child:
            scores[y] = score_values[slot]
            continue
        lo, hi, degrees = _degree_stats(child, compat)
        if lo <= floor:
            kappa = lo
        else:
            if not flows:
                v, pairs, _ = _pair_flows(present, compat, work)
                flows = True
            kappa = _child_connectivity(y, child, lo, floor, v, pairs, compat, work)
        # ties on subset H are common (small integers); break them by flockability, Neller's best single ordering
        estimate = coefs[0] + coefs[1] * lo + coefs[2] * hi + coefs[3] * kappa
        scores[y] = estimate + TIE_BREAK * (degrees // 2)
        score_masks[slot] = child
        score_values[slot] = scores[y]
        score_kappas[slot] = kappa


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
def _hanging(cuts, present, compat):
    """The cut vertices ``v`` of G with a side of 2 to ``FROZEN_MAX`` cards and one neighbour beyond it.

    What ``_frozen_block``'s conditions ask of G alone (its (b)), so that the
    cells are looked at only where a block may hang. A side of one card, a
    leaf, is left to ``PRUNE_ANCHOR``, whose walk asks more than a cell in line.
    """
    out = U0
    cv = cuts
    while cv != U0:
        v = lowest_bit(cv)
        cv &= cv - U1
        rest = present & ~_bit(v)
        around = compat[v] & rest
        if popcount(around) > FROZEN_MAX + 1:
            continue  # all of v's neighbours but one lie in a side of at most FROZEN_MAX cards
        seen = U0
        m = around
        while m != U0:
            x = lowest_bit(m)
            m &= m - U1
            if seen & _bit(x) != U0:
                continue
            side = _small_side(x, rest, compat, np.int64(FROZEN_MAX))
            if side == U0:
                seen |= _bit(x)
                continue
            seen |= side
            if popcount(side) >= 2 and popcount(around & ~side) == 1:
                out |= _bit(v)
                break
    return out


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


@njit(cache=True, nogil=True)
def _sort_children(cells, scores, src, dst, count):
    """Sort the first ``count`` children stably by descending score of their target card.

    Insertion sort for the few children of a 4x4 node; a stable merge sort
    (``argsort``) for the hundred or more of a large grid's.
    """
    if count <= SMALL_SORT:
        for i in range(1, count):
            j = i
            while j > 0 and scores[cells[dst[j - 1]]] < scores[cells[dst[j]]]:
                src[j - 1], src[j] = src[j], src[j - 1]
                dst[j - 1], dst[j] = dst[j], dst[j - 1]
                j -= 1
        return
    keys = np.empty(count, dtype=np.float64)
    for i in range(count):
        keys[i] = -scores[cells[dst[i]]]
    order = np.argsort(keys, kind="mergesort")
    old_src = src[:count].copy()
    old_dst = dst[:count].copy()
    for i in range(count):
        src[i] = old_src[order[i]]
        dst[i] = old_dst[order[i]]


@njit(cache=True, nogil=True)
def root_prunable(root, rows, cols, compat, line, options):
    """True when the root itself fails a pruning test of ``options`` (so it is unsolvable)."""
    occupied = U0
    present = U0
    for i in range(rows * cols):
        if root[i] >= 0:
            occupied |= _bit(i)
            present |= _bit(root[i])
    if popcount(present) <= 1:
        return False
    if options & PRUNE_GRAPH != 0 and not is_connected(present, compat):
        return True
    return options & PRUNE_CELLS != 0 and not _cells_linked(occupied, line)


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


@njit(cache=True, nogil=True)
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
    drop = ~(_bit(s) | _bit(t))
    for c in range(child.shape[0]):
        child[c] = (asleep[c] | searched[c]) & drop
    child[s] = U0
    child[t] = U0


@njit(cache=True, nogil=True, inline="always")
def _reach(start, members, links):
    """The cards of ``members`` reached from card ``start`` (in ``members``) through ``links[card]`` masks."""
    return _small_side(start, members, links, np.int64(64))  # (no set of cards passes 64)


@njit(cache=True, nogil=True, inline="always")
def _island_tag(a, b):
    # the memo word of "collapse the side of a (bridge a-b) first"; 0 is "no island under way"
    return np.uint64(a + 1) | (np.uint64(b + 1) << U6)


@njit(cache=True, nogil=True)
def _island_split(present, compat, tag, tarjan_i, tarjan_u):
    """The island a node of Island Merge works on: ``(mode, a, b, side)``.

    With ``tag`` non-zero (mode 1) the node is collapsing the side ``side`` of
    the bridge ``a``-``b`` that holds ``a``: only moves between two cards of
    ``side`` are searched. With ``tag`` 0, mode 2 names a bridge ``a``-``b`` of
    G whose two sides (``side`` holding ``a``, the rest holding ``b``) both have
    two cards or more, the most even such bridge; mode 0 means there is none.
    Single-card sides are left alone: that is Araki's merging of a single-stack
    exterior island into its neighbour (it needs no collapse of its own).

    Proof that Island Merge is exact. Write ``R(S, a-b)`` for "``S`` has a
    solution that starts with moves inside the side ``A`` of ``a`` (the
    component of ``a`` in G minus ``b``) and brings ``A`` down to ``a`` alone",
    and ``R(S, 0)`` for "``S`` is solvable". The memo stores ``(S, tag)``
    only when ``R`` is false, and the search computes ``R`` by these rules:

    (1) Bridge split. Let ``a``-``b`` be a bridge of a connected G with sides
    ``A`` and ``B``, both of two cards or more. In a solution, take the first
    move joining a card of ``A`` and one of ``B``; the bridge is their only
    edge, so it is ``a`` onto ``b`` or ``b`` onto ``a``, and there is such a
    move (the last card of one side to go is covered from the other). If ``a``
    covers ``b``, the cards of ``B`` other than ``b`` would be left with no
    edge to the rest, a disconnected G, so ``B`` was already down to ``b``;
    likewise ``A`` down to ``a`` when ``b`` covers ``a``. Before that move
    every move is inside ``A`` or inside ``B``. A move inside ``A`` changes only
    cells topped by cards of ``A``, and a move is legal when its two top cards
    are compatible and their cells in line, so moves inside ``A`` and inside
    ``B`` commute: putting the moves inside the side that is brought down
    first at the front (in their order) gives a solution too. Hence
    ``R(S, 0) = R(S, a-b) or R(S, b-a)``.

    (2) Collapse step. With ``|A| >= 2`` a solution counted by ``R(S, a-b)``
    starts with a move inside ``A``, say covering ``y``; the rest is a solution
    of the child counted by ``R(child, a-b)``, with side ``A - y`` (``A - y`` is
    connected, or G is disconnected and the child is pruned), and once
    ``A - y`` is ``a`` alone the condition is empty: the child's tag is 0. The
    converse is concatenation. So ``R(S, a-b)`` is the "or" over the moves
    inside ``A`` of the children's ``R``.

    By (1) and (2), a node of mode 2 searches every move inside ``A`` (children
    tagged ``a-b``) and every move inside ``B`` (tagged ``b-a``); the bridge
    move itself disconnects G and is pruned. A node of mode 0 is a Compatible
    DFS node. Pruned children have ``R`` false (``R(S, t)`` implies ``S``
    solvable). By induction over the search, every ``(S, tag)`` finished
    without a solution has ``R`` false, so the memo is exact and the answer at
    the root (tag 0) is the solvability of the root. A state known unsolvable
    (tag 0 in the memo) also has every ``R`` false, so a tagged child is
    looked up under both keys.
    """
    if tag != U0:
        a = np.int64(tag & U63) - 1
        b = np.int64((tag >> U6) & U63) - 1
        return 1, a, b, _reach(a, present & ~_bit(b), compat)
    cuts, connected = cut_vertices(present, compat, tarjan_i[0], tarjan_i[1], tarjan_i[2], tarjan_i[3], tarjan_u)
    best = 1
    mode, sa, sb, side = 0, 0, 0, U0
    n = popcount(present)
    us = cuts
    while us != U0 and connected:
        u = lowest_bit(us)
        us &= us - U1
        vs = compat[u] & cuts & present
        while vs != U0:
            v = lowest_bit(vs)
            vs &= vs - U1
            if v < u:
                continue
            comp = _reach(u, present & ~_bit(v), compat)
            if compat[v] & comp != _bit(u):
                continue  # another edge joins the two sides: u-v is no bridge
            k = popcount(comp)
            small = min(k, n - k)
            if small > best:
                best = small
                mode, sa, sb, side = 2, u, v, comp
    return mode, sa, sb, side


@njit(cache=True, nogil=True)
def _keep_inside(cells, side, src, dst, count):
    """Keep the children whose two cards are both in ``side``; returns the new count."""
    kept = 0
    for i in range(count):
        if side & _bit(cells[src[i]]) != U0 and side & _bit(cells[dst[i]]) != U0:
            src[kept] = src[i]
            dst[kept] = dst[i]
            kept += 1
    return kept


@njit(cache=True, nogil=True)
def _enter_island(cells, present, compat, tag, island, island_side, depth, src, dst, count, tarjan_i, tarjan_u):
    """Record the island of the node at ``depth`` and keep only its children that stay inside it; returns the count."""
    mode, a, b, side = _island_split(present, compat, tag[depth], tarjan_i, tarjan_u)
    island[depth, 0] = mode
    island[depth, 1] = a
    island[depth, 2] = b
    island_side[depth] = side
    if mode == 1:
        return _keep_inside(cells, side, src, dst, count)
    return count


@njit(cache=True, nogil=True, inline="always")
def _child_tag(mode, a, b, side, present, y):
    """The tag of the child whose move covers card ``y`` (see ``_island_split``)."""
    if mode == 0:
        return U0
    if side & _bit(y) != U0:
        return U0 if popcount(side & ~_bit(y)) == 1 else _island_tag(a, b)
    rest = present & ~side & ~_bit(y)
    return U0 if popcount(rest) == 1 else _island_tag(b, a)


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


# ---------------------------------------------------------------- batches

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
