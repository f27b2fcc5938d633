# mypy: disable-error-code="no-untyped-def"
"""Child ordering: each target card's score (subset-H estimate, connectivity, flockability), and the sort.

A child's vertex connectivity is computed from the parent's max-flows
(``_pair_flows``, ``_child_connectivity``, with its proof), not from scratch.
"""

from __future__ import annotations

import numpy as np

from boaf.game.bits import lean_njit, lowest_bit, popcount
from boaf.game.graph import (
    U0,
    U1,
    augment,
    bit,
    clear_flow,
    degree_stats,
    least_degree,
    local_connectivity,
    node_connectivity,
)
from boaf.search.kernel.bundles import (
    PAIR_FLOW,
    PAIR_PRED,
    PAIR_S,
    PAIR_T,
    PAIR_T_PREDS,
    PAIR_THROUGH,
    cache_slot,
)

SMALL_SORT = 24  # children sorted by insertion up to this many, by a counting sort on their targets beyond
COUNT, BUCKET, START = 52, 104, 156  # ``_sort_children``'s work row (``SORT_WORK`` long): cards, counts, buckets


TIE_BREAK = 1e-4  # weight of a child's flockability in its ordering score (below any subset-H difference)


@lean_njit(inline="always")
def _save_pair(scratch, i, s, t, flow, through, t_preds):
    """Pair ``i`` of ``_pair_flows``: its ends, its paths and the flow that ``augment`` left in ``scratch.graph``."""
    pairs, pred = scratch.pairs, scratch.graph.pred
    pairs[PAIR_S, i] = s
    pairs[PAIR_T, i] = t
    pairs[PAIR_FLOW, i] = flow
    pairs[PAIR_THROUGH, i] = np.int64(through)
    pairs[PAIR_T_PREDS, i] = np.int64(t_preds)
    m = through
    while m != U0:
        x = lowest_bit(m)
        m &= m - U1
        pairs[PAIR_PRED + x, i] = pred[x]


@lean_njit()
def _pair_flows(present, compat, scratch):
    """Flows of Esfahanian–Hakimi's vertex pairs on G (``present``), for ``_child_connectivity``.

    ``v`` is a vertex of minimum degree ``lo``; its pairs are ``v`` with each
    non-neighbour and each non-adjacent pair of its neighbours. Pair ``i``
    is kept in column ``i`` of ``scratch.pairs``: its ends,
    the paths found (capped at ``lo + 1``; ``v``'s at ``lo``, all they can
    have), the mask of their inner vertices, the mask of their last inner
    vertices, and the predecessor of each inner vertex on its path (row
    ``PAIR_PRED + card``). Returns ``(v, pairs, kappa)``, with ``kappa``
    G's vertex connectivity (``node_connectivity``'s), or ``pairs = -1``
    when the pairs do not fit the ``PAIR_COLUMNS`` columns (more than 16 cards:
    never under ``ORDER_MAX_STACKS``).
    """
    v, lo = least_degree(present, compat)
    n = popcount(present)
    if n <= 1:
        return v, 0, 0
    neighbours = compat[v] & present
    others = present & ~neighbours & ~bit(v)
    if popcount(others) + lo * (lo - 1) // 2 > scratch.pairs.shape[1]:
        return v, -1, 0
    pairs, kappa = _pairs_from(v, others, present, compat, lo, scratch, np.int64(0), lo)
    a_mask = neighbours
    while a_mask != U0:
        x = lowest_bit(a_mask)
        a_mask &= a_mask - U1
        pairs, kappa = _pairs_from(x, a_mask & ~compat[x], present, compat, lo + 1, scratch, pairs, kappa)
    return v, pairs, kappa


@lean_njit(inline="always")
def _pairs_from(s, targets, present, compat, cap, scratch, pairs, kappa):
    """Save the flows from ``s`` to each of ``targets`` (capped at ``cap``) as pairs from column ``pairs`` on;
    returns the pairs saved so far and the least flow, ``kappa`` included."""
    while targets != U0:
        t = lowest_bit(targets)
        targets &= targets - U1
        f, through, t_preds = local_connectivity(s, t, present, compat, cap, scratch.graph)
        _save_pair(scratch, pairs, s, t, f, through, t_preds)
        pairs += 1
        kappa = min(kappa, f)
    return pairs, kappa


@lean_njit()
def _repaired_flow(i, y, child, compat, cap, scratch):
    """Pair ``i``'s local connectivity in G − y (``child``), capped at ``cap``, from its saved paths.

    The saved paths but the one through ``y`` (if any) are a feasible flow of
    G − y: they are restored in ``scratch.graph`` and augmented (``augment``).
    """
    pairs = scratch.pairs
    s = pairs[PAIR_S, i]
    t = pairs[PAIR_T, i]
    flow = pairs[PAIR_FLOW, i]
    through = np.uint64(pairs[PAIR_THROUGH, i])
    t_preds = np.uint64(pairs[PAIR_T_PREDS, i])
    if through & bit(y) != U0:
        # drop y's path: back to s along the predecessors, on to t along the successors
        x = y
        while x != s:
            through &= ~bit(x)
            x = pairs[PAIR_PRED + x, i]
        x = y
        while t_preds & bit(x) == U0:
            m = through
            while m != U0:
                z = lowest_bit(m)
                m &= m - U1
                if pairs[PAIR_PRED + z, i] == x:
                    break
            through &= ~bit(z)
            x = z
        t_preds &= ~bit(x)
        flow -= 1
    used, pred = scratch.graph.used, scratch.graph.pred
    clear_flow(child, scratch.graph)
    m = through
    while m != U0:
        x = lowest_bit(m)
        m &= m - U1
        used[x] = 1
        pred[x] = pairs[PAIR_PRED + x, i]
    if flow >= cap:
        return flow
    flow, _ = augment(s, t, child, compat, cap, scratch.graph, flow, t_preds)
    return flow


@lean_njit()
def _child_connectivity(y, child, lo, floor, v, pairs, compat, scratch):
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
        return node_connectivity(child, compat, scratch.graph, floor)
    saved = scratch.pairs
    k = lo
    yb = bit(y)
    for i in range(pairs):
        if k <= floor:
            break
        if saved[PAIR_S, i] == y or saved[PAIR_T, i] == y:
            continue
        bound = saved[PAIR_FLOW, i] - (1 if np.uint64(saved[PAIR_THROUGH, i]) & yb != U0 else 0)
        if bound >= k:
            continue
        k = min(k, _repaired_flow(i, y, child, compat, k, scratch))
    return k


@lean_njit()
def _child_scores(present, targets, compat, coefs, scratch):
    """Linear-regression estimate on subset H of G minus each target card, into ``scratch.scores`` (by card).

    Sibling subtrees reach the same card sets in different orders, so scores
    are kept in a direct-mapped cache keyed by the exact card mask (a slot holds
    one mask; a different mask simply replaces it), with each mask's node
    connectivity: a node's own connectivity was mostly computed when it was
    scored as a child. The children's connectivities come from one set of
    flows on G (``_pair_flows``, ``_child_connectivity``), not a set per child.
    """
    scores, masks, values, kappas = scratch.scores, scratch.score_masks, scratch.score_values, scratch.score_kappas
    slots = masks.shape[0]
    slot = cache_slot(present, slots)
    flows = False  # ``_pair_flows`` has run on G
    v = -1
    pairs = 0
    if masks[slot] == present:
        own = kappas[slot]
    else:
        v, pairs, own = _pair_flows(present, compat, scratch)
        flows = True
        if pairs < 0:
            own = node_connectivity(present, compat, scratch.graph, np.int64(0))
    # Removing one vertex lowers connectivity by at most one, and connectivity
    # never exceeds the minimum degree: often these bounds meet and no flow is needed.
    floor = max(own - 1, 0)
    t = targets
    while t != U0:
        y = lowest_bit(t)
        t &= t - U1
        child = present & ~bit(y)
        slot = cache_slot(child, slots)
        if masks[slot] == child:
            scores[y] = values[slot]
            continue
        lo, hi, degrees, _ = degree_stats(child, compat)
        if lo <= floor:
            kappa = lo
        else:
            if not flows:
                v, pairs, _ = _pair_flows(present, compat, scratch)
                flows = True
            kappa = _child_connectivity(y, child, lo, floor, v, pairs, compat, scratch)
        # ties on subset H are common (small integers); break them by flockability, Neller's best single ordering
        estimate = coefs[0] + coefs[1] * lo + coefs[2] * hi + coefs[3] * kappa
        scores[y] = estimate + TIE_BREAK * (degrees // 2)
        masks[slot] = child
        values[slot] = scores[y]
        kappas[slot] = kappa


@lean_njit()
def _square_scores(present, targets, compat, scores):
    """Each target card's score: its child's sum of squared degrees, into ``scores`` (``ORDER_SQUARES``, above 16);
    returns the highest.

    Less the parent's, which all children share: removing ``y`` of degree ``d``
    drops ``d²`` and lowers each neighbour ``x``'s degree by one, ``2·deg(x) - 1``
    off its square. The neighbours' degree sum is read off bit planes of the
    degrees (plane ``j`` holds the cards whose degree has bit ``j``: a popcount a
    plane, not one a neighbour), built in one pass over G. Ties are broken by
    flockability (the child's edges), as under subset H. Ordering only: it
    changes no answer, only which child is searched first.
    """
    p0 = p1 = p2 = p3 = p4 = U0  # bit planes of the degrees, which are below 32 (at most 12 + 3 + 6 = 21)
    best = -np.inf
    p = present
    while p != U0:
        x = lowest_bit(p)
        p &= p - U1
        d = np.uint64(popcount(compat[x] & present))
        s = np.uint64(x)
        p0 |= (d & U1) << s
        p1 |= ((d >> U1) & U1) << s
        p2 |= ((d >> np.uint64(2)) & U1) << s
        p3 |= ((d >> np.uint64(3)) & U1) << s
        p4 |= ((d >> np.uint64(4)) & U1) << s
    while targets != U0:
        y = lowest_bit(targets)
        targets &= targets - U1
        ny = compat[y] & present
        d = popcount(ny)
        around = (
            popcount(ny & p0)
            + 2 * popcount(ny & p1)
            + 4 * popcount(ny & p2)
            + 8 * popcount(ny & p3)
            + 16 * popcount(ny & p4)
        )
        score = -(d * d + 2 * around - d) - TIE_BREAK * d
        scores[y] = score
        best = max(best, score)
    return best


@lean_njit()
def _sort_children(cells, scores, src, dst, count, targets, work):
    """Sort the first ``count`` children stably by descending score of their target card (``targets``: those cards).

    Insertion sort for the few children of a 4x4 node. Beyond ``SMALL_SORT``, a
    counting sort: the target cards (at most 52) are sorted by insertion, cards of
    equal score share a bucket, and the children are dealt into the buckets in
    their own order. A child's key is its target's score, so this is the order of
    any stable sort by descending score, at two passes over the children instead
    of a merge sort's ``log2(count)`` (on tiny 6x6 searches the merge sort took a
    third of the time). ``work`` is ``int64[2, n]``: row 0 holds the children
    (``n >= count``), row 1 the cards, their counts and buckets (``n >= SORT_WORK``).
    """
    if count <= SMALL_SORT:
        for i in range(1, count):
            s, t = src[i], dst[i]
            key = scores[cells[t]]
            j = i
            while j > 0 and scores[cells[dst[j - 1]]] < key:
                src[j], dst[j] = src[j - 1], dst[j - 1]
                j -= 1
            src[j], dst[j] = s, t
        return
    moves, w = work[0], work[1]
    n = 0
    while targets != U0:  # the cards by descending score, each inserted as it comes
        y = lowest_bit(targets)
        targets &= targets - U1
        w[COUNT + y] = 0
        key = scores[y]
        j = n
        while j > 0 and scores[w[j - 1]] < key:
            w[j] = w[j - 1]
            j -= 1
        w[j] = y
        n += 1
    for i in range(count):
        w[COUNT + cells[dst[i]]] += 1
    at = 0
    bucket = START - 1
    for k in range(n):  # a card's bucket (the index of its next free slot), at BUCKET + card
        y = w[k]
        if k == 0 or scores[y] != scores[w[k - 1]]:
            bucket += 1
            w[bucket] = at
        w[BUCKET + y] = bucket
        at += w[COUNT + y]
    for i in range(count):
        b = w[BUCKET + cells[dst[i]]]
        moves[w[b]] = np.int64(src[i]) * 256 + dst[i]
        w[b] += 1
    for i in range(count):
        src[i] = moves[i] // 256
        dst[i] = moves[i] % 256


@lean_njit()
def _sort_by_target(src, dst, count, tally, moves):
    """Sort the first ``count`` children stably by target cell (a counting sort; ``tally`` is ``int64[ncells + 1]``,
    ``moves`` an ``int64`` buffer of at least ``count``).

    Children come from ``generate`` by source, then target; this puts them by
    target, then source (the order of ``boaf.search.kernel.progress``'s search).
    """
    for c in range(tally.shape[0]):
        tally[c] = 0
    for i in range(count):
        tally[dst[i] + 1] += 1
        moves[i] = np.int64(src[i]) * 256 + dst[i]
    for c in range(tally.shape[0] - 1):
        tally[c + 1] += tally[c]
    for i in range(count):
        t = moves[i] % 256
        at = tally[t]
        tally[t] += 1
        src[at] = moves[i] // 256
        dst[at] = t
