# mypy: disable-error-code="no-untyped-def"
"""The bitset compatibility graph: connectivity, cut vertices, vertex connectivity by max-flow, degrees.

A set of cards is a ``uint64`` mask (bit ``card``); ``compat[card]`` is the
mask of the cards compatible with ``card``. ``U0``, ``U1``, ``U6`` and ``U63``
are the ``uint64`` constants every kernel module shifts and masks with.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from game.bits import lowest_bit, popcount

U0 = np.uint64(0)
U1 = np.uint64(1)
U6 = np.uint64(6)
U63 = np.uint64(63)


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
