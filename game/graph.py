# mypy: disable-error-code="no-untyped-def"
"""The bitset graph layer every kernel shares: tables, reach, cut vertices, vertex connectivity, degrees.

A graph is a node mask ``nodes`` (a ``uint64``, bit ``v`` for node ``v < 64``)
and a ``links`` array, ``links[v]`` the mask of ``v``'s neighbours (it may
name nodes outside ``nodes``: every function masks with ``nodes``). The
search's graph G has the cards on the board as nodes and ``compat_table()`` as
links; the grid has the occupied cells and ``line_table(rows, cols)``; the
feature kernel numbers a state's stacks 0 … n-1 and builds its own links.

What is here, written once:

- the tables: ``compat_table`` (cards that may join, by ``boaf.game.cards.compatible``),
  ``line_table`` (cells in one row or column) and ``cell_cut_table``;
- reach: ``reach``, ``reach_within``, ``is_connected``;
- ``cut_vertices`` (Tarjan, one component) and ``all_cut_vertices``;
- vertex connectivity by max-flow: ``local_connectivity``, ``clear_flow``, ``augment``,
  ``node_connectivity`` (Esfahanian–Hakimi);
- degrees: ``least_degree``, ``degree_range``, ``degree_stats``,
  ``edge_count``, ``has_odd_bird``.

Their scratch arrays come in one ``GraphScratch`` (``graph_scratch()``).
``U0``, ``U1``, ``U6`` and ``U63`` are the ``uint64`` constants kernels shift
and mask with: numba turns mixed ``uint64``/``int64`` arithmetic into floats.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

import numpy as np
from numba import njit

from boaf.game.bits import lean_njit, lowest_bit, popcount
from boaf.game.cards import DECK_SIZE, compatible

U0 = np.uint64(0)
U1 = np.uint64(1)
U6 = np.uint64(6)
U63 = np.uint64(63)

MAX_NODES = 64  # nodes are the bits of a uint64
QUEUE = 2 * MAX_NODES  # a flow search queues each node's two halves at most once


class GraphScratch(NamedTuple):
    """Work arrays of the flows and of Tarjan's search, one use each (``graph_scratch``)."""

    used: np.ndarray  # int64[MAX_NODES]: 1 when a path of the flow passes through the node
    pred: np.ndarray  # int64[MAX_NODES]: the node before it on its path, -1 if none
    queue: np.ndarray  # int64[QUEUE]: the augmenting search's queue of node halves
    side: np.ndarray  # int64[QUEUE]: 0 the in half, 1 the out half
    parent: np.ndarray  # int64[QUEUE]: each queued half's parent in the queue
    disc: np.ndarray  # int64[MAX_NODES]: Tarjan's discovery times
    low: np.ndarray  # int64[MAX_NODES]: Tarjan's low points
    above: np.ndarray  # uint64[MAX_NODES]: Tarjan's path from the root, as prefix masks (``_highest_back_edge``)
    stack_v: np.ndarray  # int64[MAX_NODES]: Tarjan's stack of nodes
    stack_m: np.ndarray  # uint64[MAX_NODES]: and of their unvisited neighbours
    lines: np.ndarray  # uint64[MAX_NODES]: ``cut_cells``' graph of rows and columns, each line's neighbours


@njit(cache=True, nogil=True)
def graph_scratch():
    """A fresh ``GraphScratch``."""
    return GraphScratch(
        np.zeros(MAX_NODES, dtype=np.int64),
        np.zeros(MAX_NODES, dtype=np.int64),
        np.zeros(QUEUE, dtype=np.int64),
        np.zeros(QUEUE, dtype=np.int64),
        np.zeros(QUEUE, dtype=np.int64),
        np.zeros(MAX_NODES, dtype=np.int64),
        np.zeros(MAX_NODES, dtype=np.int64),
        np.zeros(MAX_NODES, dtype=np.uint64),
        np.zeros(MAX_NODES, dtype=np.int64),
        np.zeros(MAX_NODES, dtype=np.uint64),
        np.zeros(MAX_NODES, dtype=np.uint64),
    )


# ---------------------------------------------------------------- tables


@cache
def compat_table() -> np.ndarray:
    """``uint64[52]``: bit ``b`` of entry ``a`` is set when cards ``a != b`` may join (shared: do not modify)."""
    table = np.zeros(DECK_SIZE, dtype=np.uint64)
    for a in range(DECK_SIZE):
        for b in range(DECK_SIZE):
            if a != b and compatible(a, b):
                table[a] |= np.uint64(1) << np.uint64(b)
    return table


@cache
def line_table(rows: int, cols: int) -> np.ndarray:
    """``uint64[rows*cols]``: bit ``j`` of entry ``i`` is set when cells ``i != j`` share a row or column (shared)."""
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
    occupied cells ``m`` under "shares a row or column" (``cut_vertices``), so that a search reads them in one load.
    """
    ncells = line.shape[0]
    table = np.zeros(1 << ncells, dtype=np.uint16)
    scratch = graph_scratch()
    for m in range(1, 1 << ncells):
        cuts, _ = cut_vertices(np.uint64(m), line, scratch)
        table[m] = np.uint16(cuts)
    return table


# ---------------------------------------------------------------- reach


@lean_njit(inline="always")
def bit(i):
    """The mask of node ``i`` alone."""
    return U1 << np.uint64(i)


@lean_njit()
def reach_within(start, members, links, limit):
    """The nodes of ``members`` reached from the mask ``start`` (inside ``members``) through ``links``; 0 once
    they are more than ``limit``."""
    seen = start & members
    frontier = seen
    while frontier != U0:
        grow = U0
        f = frontier
        while f != U0:
            grow |= links[lowest_bit(f)]
            f &= f - U1
        frontier = grow & members & ~seen
        seen |= frontier
        if popcount(seen) > limit:
            return U0
    return seen


@lean_njit(inline="always")
def reach(start, members, links):
    """The nodes of ``members`` reached from the mask ``start`` (inside ``members``) through ``links``."""
    return reach_within(start, members, links, np.int64(MAX_NODES))


@lean_njit()
def is_connected(nodes, links):
    """True when the graph on ``nodes`` has at most one component."""
    return nodes == U0 or reach(nodes & (~nodes + U1), nodes, links) == nodes


# ---------------------------------------------------------------- cut vertices


@lean_njit()
def cut_vertices(nodes, links, scratch):
    """Articulation points of the component of the lowest node of ``nodes`` (Tarjan, one pass).

    Returns ``(cuts, connected)``: the mask of the nodes of that component whose
    removal splits it, and whether it is all of ``nodes``. Removing any node of
    a disconnected graph leaves it disconnected, so a search reads ``cuts``
    only when ``connected``; ``all_cut_vertices`` takes every component.
    """
    if nodes == U0:
        return U0, True
    disc, low, stack_v, stack_m = scratch.disc, scratch.low, scratch.stack_v, scratch.stack_m
    root = lowest_bit(nodes)
    visited = bit(root)
    disc[root] = 0
    low[root] = 0
    clock = 0
    sp = 0
    stack_v[0] = root
    stack_m[0] = links[root] & nodes
    scratch.above[0] = visited
    root_children = 0
    cuts = U0
    while sp >= 0:
        v = stack_v[sp]
        m = stack_m[sp] & ~visited
        if m != U0:
            w = lowest_bit(m)
            stack_m[sp] = m & (m - U1)
            visited |= bit(w)
            clock += 1
            if sp == 0:
                root_children += 1
            sp = _descend(w, sp, clock, links[w] & nodes, scratch)
        else:
            lv = min(low[v], _highest_back_edge(links[v], sp, scratch))
            low[v] = lv
            sp -= 1
            if sp >= 0:
                p = stack_v[sp]
                if lv < low[p]:
                    low[p] = lv
                if sp > 0 and lv >= disc[p]:
                    cuts |= bit(p)
    if root_children > 1:
        cuts |= bit(root)
    return cuts, visited == nodes


@lean_njit(inline="always")
def _descend(w, sp, clock, neighbours, scratch):
    """Tarjan's step from the node at ``sp`` down to the node ``w`` it just found, at time ``clock``, with
    ``neighbours`` left to try from it; returns the new top of the path."""
    scratch.disc[w] = clock
    scratch.low[w] = clock
    scratch.above[sp + 1] = scratch.above[sp] | bit(w)
    scratch.stack_v[sp + 1] = w
    scratch.stack_m[sp + 1] = neighbours
    return sp + 1


@lean_njit(inline="always")
def _highest_back_edge(neighbours, sp, scratch):
    """The least discovery time of a neighbour of the node at ``sp`` on Tarjan's path above its parent (if
    none: ``MAX_NODES``): its own term of the low point.

    A depth-first search of an undirected graph leaves no cross edges: each edge
    not in the tree joins a node to an ancestor or a descendant. A descendant was
    found later, so it cannot lower the low point below the node's own time, and
    the tree edge to the parent is not a back edge: only the ancestors above the
    parent count, and they lie on the path in order of discovery. The first whose
    prefix mask ``above[i]`` meets the neighbours is found by bisection.
    """
    if sp < 2:
        return MAX_NODES
    above = scratch.above
    hits = neighbours & above[sp - 2]
    if hits == U0:
        return MAX_NODES
    lo, hi = 0, sp - 2
    while lo < hi:
        mid = (lo + hi) >> 1
        if above[mid] & hits != U0:
            hi = mid
        else:
            lo = mid + 1
    return scratch.disc[scratch.stack_v[lo]]


@lean_njit()
def cut_cells(occupied, rows, cols, scratch):
    """The cells of ``occupied`` whose emptying splits the cells (linked when they share a row or column) into more
    parts: ``all_cut_vertices(occupied, line_table(rows, cols))``, on rows + cols nodes instead of the cells.

    Proof. Let B be the bipartite graph whose nodes are the grid's lines (rows
    and columns) and whose edges are the occupied cells, each joining its row
    and its column. Two cells share a line exactly when their edges share an
    end, so the cells' graph is B's line graph, and its parts are the sets of
    edges of B's parts. Emptying cell ``e = (r, c)`` deletes edge ``e``. If ``e``
    is not a bridge, its part of B stays one part and so do its edges. If it is,
    the part falls into the side of ``r`` and the side of ``c``, and its other
    edges into two parts exactly when each side keeps an edge: when ``r`` and
    ``c`` each have another occupied cell. So the cut cells are the bridges of B
    whose two lines have two cells or more, found by Tarjan's search on B (a
    tree edge ``p–v`` is a bridge when ``low[v] > disc[p]``; B is simple, so the
    one edge back to the parent is the tree edge). Rows are B's nodes
    ``0..rows-1``, columns ``rows..rows+cols-1``; ``scratch.lines`` holds their
    neighbours.
    """
    adj, disc, low, stack_v, stack_m = scratch.lines, scratch.disc, scratch.low, scratch.stack_v, scratch.stack_m
    _line_graph(occupied, rows, cols, adj)
    cuts = U0
    visited = U0
    clock = 0
    for start in range(rows):
        if adj[start] == U0 or visited & bit(start) != U0:
            continue
        visited |= bit(start)
        clock += 1
        disc[start], low[start] = clock, clock
        sp = 0
        stack_v[0], stack_m[0], scratch.above[0] = start, adj[start], bit(start)
        while sp >= 0:
            v = stack_v[sp]
            m = stack_m[sp] & ~visited
            if m != U0:
                w = lowest_bit(m)
                stack_m[sp] = m & (m - U1)
                visited |= bit(w)
                clock += 1
                sp = _descend(w, sp, clock, adj[w], scratch)
                continue
            lv = min(low[v], _highest_back_edge(adj[v], sp, scratch))
            low[v] = lv
            sp -= 1
            if sp >= 0:
                p = stack_v[sp]
                low[p] = min(low[p], lv)
                if lv > disc[p] and popcount(adj[v]) > 1 and popcount(adj[p]) > 1:
                    r, c = min(p, v), max(p, v) - rows
                    cuts |= bit(r * cols + c)
    return cuts


@lean_njit(inline="always")
def _line_graph(occupied, rows, cols, adj):
    """``cut_cells``' B: ``adj[row]`` the columns (as nodes ``rows + c``) of the row's occupied cells, and back."""
    width = (U1 << np.uint64(cols)) - U1
    for c in range(cols):
        adj[rows + c] = U0
    for r in range(rows):
        in_row = (occupied >> np.uint64(r * cols)) & width
        adj[r] = in_row << np.uint64(rows)
        while in_row != U0:
            c = lowest_bit(in_row)
            in_row &= in_row - U1
            adj[rows + c] |= bit(r)


@lean_njit()
def all_cut_vertices(nodes, links, scratch):
    """Articulation points of the graph on ``nodes``, component by component (a node whose removal adds one)."""
    cuts = U0
    left = nodes
    while left != U0:
        component = reach(left & (~left + U1), left, links)
        found, _ = cut_vertices(component, links, scratch)
        cuts |= found
        left &= ~component
    return cuts


# ---------------------------------------------------------------- vertex connectivity


@lean_njit()
def local_connectivity(s, t, nodes, links, cap, scratch):
    """``(paths, through, t_preds)``: internally vertex-disjoint ``s``–``t`` paths, counting stops at ``cap``.

    ``through`` is the mask of the inner nodes of the paths found: without
    any one node of it at least ``paths - 1`` of them remain, without any
    other node all ``paths``, and ``t_preds`` the last inner node of each
    path. Non-adjacent ``s`` and ``t`` are assumed. ``paths`` may pass ``cap``
    when ``s`` and ``t`` have more common neighbours than that. The paths are
    left in ``scratch`` (``augment``).
    """
    used, pred = scratch.used, scratch.pred
    clear_flow(nodes, scratch)
    # Common neighbours are disjoint paths of length two: enough of them answer
    # at once, and the rest start the flow (any feasible flow may be augmented).
    common = links[s] & links[t] & nodes
    m = common
    while m != U0:
        w = lowest_bit(m)
        m &= m - U1
        used[w] = 1
        pred[w] = s
    flow = popcount(common)
    if flow >= cap:
        return flow, common, common
    flow, t_preds = augment(s, t, nodes, links, cap, scratch, flow, common)
    through = U0
    p = nodes
    while p != U0:
        i = lowest_bit(p)
        p &= p - U1
        if used[i] == 1:
            through |= bit(i)
    return flow, through, t_preds


@lean_njit(inline="always")
def clear_flow(nodes, scratch):
    """No path of the flow in ``scratch`` passes through a node of ``nodes``."""
    p = nodes
    while p != U0:
        i = lowest_bit(p)
        p &= p - U1
        scratch.used[i] = 0
        scratch.pred[i] = -1


@lean_njit()
def augment(s, t, nodes, links, cap, scratch, flow, t_preds):
    """Augment the ``flow`` ``s``–``t`` paths in ``scratch`` up to ``cap``; returns ``(paths, t_preds)``.

    Unit-capacity max flow with every node but ``s`` and ``t`` split into an
    in and an out half. A node carries at most one path, so the flow is
    stored as ``used[v]`` (its inner arc carries a path) and ``pred[v]`` (the
    node before ``v`` on its path, -1 if none), with ``t_preds`` the nodes
    whose path enters ``t``. Every residual step is O(1) or one bit loop. Any
    feasible flow may be the start: augmenting paths reach the maximum from
    each (Ford–Fulkerson).
    """
    used, pred, queue, side, parent = scratch.used, scratch.pred, scratch.queue, scratch.side, scratch.parent
    while flow < cap:
        seen_in = bit(s)
        seen_out = bit(s)
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
                # out half: arcs u -> w that carry no flow; the reverse of a used node's inner arc
                nxt = links[u] & nodes & ~seen_in
                while nxt != U0:
                    w = lowest_bit(nxt)
                    nxt &= nxt - U1
                    if (w == t and t_preds & bit(u) != U0) or (w != t and pred[w] == u):
                        continue
                    seen_in |= bit(w)
                    queue[tail] = w
                    side[tail] = 0
                    parent[tail] = here
                    tail += 1
                    if w == t:
                        found = tail - 1
                        break
                if found < 0 and u != s and used[u] == 1 and seen_in & bit(u) == U0:
                    seen_in |= bit(u)
                    queue[tail] = u
                    side[tail] = 0
                    parent[tail] = here
                    tail += 1
            else:
                # in half: the inner arc when unused; back along the flow into u
                if used[u] == 0 and seen_out & bit(u) == U0:
                    seen_out |= bit(u)
                    queue[tail] = u
                    side[tail] = 1
                    parent[tail] = here
                    tail += 1
                p = pred[u]
                if p >= 0 and seen_out & bit(p) == U0:
                    seen_out |= bit(p)
                    queue[tail] = p
                    side[tail] = 1
                    parent[tail] = here
                    tail += 1
        if found < 0:
            break
        flow += 1
        t_preds = _push_path(found, t, scratch, t_preds)
    return flow, t_preds


@lean_njit(inline="always")
def _push_path(found, t, scratch, t_preds):
    """One more path in ``scratch``'s flow: the augmenting path that ``augment``'s search reached ``t`` by (its
    queue entry ``found``, walked back by ``parent``); returns the new ``t_preds``.

    It walks back from ``t``, later arcs first, so a cancelled flow into a node is
    cleared before the new one is set.
    """
    used, pred, queue, side, parent = scratch.used, scratch.pred, scratch.queue, scratch.side, scratch.parent
    i = found
    while i != 0:
        j = parent[i]
        a, b = queue[j], queue[i]
        if side[j] == 1 and side[i] == 0:
            if a == b:
                used[a] = 0
            elif b == t:
                t_preds |= bit(a)
            else:
                pred[b] = a
        elif side[j] == 0 and side[i] == 1:
            if a == b:
                used[a] = 1
            elif pred[a] == b:
                pred[a] = -1
        i = j
    return t_preds


@lean_njit()
def node_connectivity(nodes, links, scratch, floor):
    """Vertex connectivity of the graph on ``nodes``: 0 when disconnected or at most one node.

    Esfahanian–Hakimi: with ``v`` of minimum degree, the minimum of local
    connectivities from ``v`` to its non-neighbours and between non-adjacent
    neighbours of ``v``; the minimum degree bounds it, and a complete graph
    gives n - 1. ``floor`` is a known lower bound: the search stops as soon as
    it is reached.
    """
    n = popcount(nodes)
    if n <= 1:
        return 0
    # Connectivity 0, 1 and 2 come from one pass of Tarjan's cut vertices; only 3+ needs flows.
    # (A floor of 2 or more already says the graph is 2-connected.)
    if floor < 2:
        cuts, connected = cut_vertices(nodes, links, scratch)
        if not connected:
            return 0
        if cuts != U0 or n == 2:
            return 1
        floor = 2
    v, k = least_degree(nodes, links)
    neighbours = links[v] & nodes
    stop = max(floor, 1)
    k = _least_flow(v, nodes & ~neighbours & ~bit(v), nodes, links, k, stop, scratch)
    a_mask = neighbours
    while a_mask != U0 and k > stop:
        x = lowest_bit(a_mask)
        a_mask &= a_mask - U1
        k = _least_flow(x, a_mask & ~links[x], nodes, links, k, stop, scratch)
    return k


@lean_njit()
def _least_flow(s, targets, nodes, links, k, stop, scratch):
    """The least of ``k`` and the local connectivities from ``s`` to each of ``targets`` (capped at the running
    least), or a value at most ``stop`` as soon as one is found."""
    while targets != U0 and k > stop:
        t = lowest_bit(targets)
        targets &= targets - U1
        f, _, _ = local_connectivity(s, t, nodes, links, k, scratch)
        if f < k:
            k = f
    return k


# ---------------------------------------------------------------- degrees


@lean_njit(inline="always")
def least_degree(nodes, links):
    """``(v, d)``: the first node of least degree ``d`` in the graph on ``nodes`` (non-empty)."""
    lo, _, _, v = degree_stats(nodes, links)
    return v, lo


@lean_njit(inline="always")
def degree_stats(nodes, links):
    """``(min, max, sum, v)`` of the degrees of the graph on ``nodes`` in one pass, ``v`` the first node of least
    degree (0, 0, 0, -1 when empty)."""
    lo = 99
    hi = 0
    total = 0
    v = -1
    p = nodes
    while p != U0:
        c = lowest_bit(p)
        p &= p - U1
        d = popcount(links[c] & nodes)
        if d < lo:
            lo = d
            v = c
        hi = max(hi, d)
        total += d
    return (lo if lo < 99 else 0), hi, total, v


@lean_njit()
def degree_range(nodes, links):
    """``(min, max)`` degree of the graph on ``nodes`` (0, 0 when empty)."""
    lo, hi, _, _ = degree_stats(nodes, links)
    return lo, hi


@lean_njit()
def edge_count(nodes, links):
    """Edges of the graph on ``nodes`` (of G: its flockability)."""
    _, _, total, _ = degree_stats(nodes, links)
    return total // 2


@lean_njit()
def has_odd_bird(nodes, links):
    """True when some node of ``nodes`` (two or more) has no neighbour among them."""
    if popcount(nodes) < 2:
        return False
    p = nodes
    while p != U0:
        c = lowest_bit(p)
        p &= p - U1
        if links[c] & nodes == U0:
            return True
    return False
