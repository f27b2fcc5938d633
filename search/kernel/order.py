# mypy: disable-error-code="no-untyped-def"
"""Child ordering: each target card's score (subset-H estimate, connectivity, flockability), and the sort.

A child's vertex connectivity is computed from the parent's max-flows
(``_pair_flows``, ``_child_connectivity``, with its proof), not from scratch.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from game.bits import lowest_bit, popcount
from search.kernel.graph import (
    U0,
    U1,
    _augment,
    _bit,
    _degree_stats,
    _least_degree,
    _local_connectivity,
    node_connectivity,
)

SMALL_SORT = 24  # children sorted by insertion up to this many, by a merge sort beyond


TIE_BREAK = 1e-4  # weight of a child's flockability in its ordering score (below any subset-H difference)


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
