# mypy: disable-error-code="no-untyped-def"
# mypy: disallow-untyped-calls=False, warn-return-any=False, check-untyped-defs=False
"""The compiled graph topics of the feature kernel: every feature of G, over ``boaf.game.graph``'s bitsets.

One function per graph topic of ``boaf.features.schema.Topic``, as in the reference
(``boaf.features.graph``), each writing its columns of a state's ``out`` row;
``graph_features`` runs them all. ``boaf.features.compiled`` calls it once per state.

G is a ``boaf.game.graph`` graph: the stacks of a state are numbered 0 … n-1 in
row-major cell order, node ``i``'s neighbours are the bits of ``adj[i]`` (a
``uint64``), and ``nodes`` is the mask of all n. Reach, cut vertices and vertex
connectivity are ``boaf.game.graph``'s (``reach``, ``all_cut_vertices``,
``node_connectivity``), with their work arrays in ``scratch.graph``; what is
here is only what the features alone need: degrees, diameter, bridges and
islands, and the two determinants.

Exact integers: the spanning-tree count and det(A) are computed modulo the
batch's primes (``tables.primes``, below 2^31 so that every product fits int64)
and written as Garner mixed-radix digits; ``boaf.features.batch`` turns them into
exact integers.
"""

from __future__ import annotations

from collections import namedtuple

import numba
import numpy as np

from boaf.features.schema import FEATURES, feature_names
from boaf.game.bits import lowest_bit, popcount
from boaf.game.graph import U0, U1, all_cut_vertices, bit, node_connectivity, reach

#: The column of each feature, by name (``COLUMN.degree_min``). It is made from the
#: schema, and numba folds a global tuple's fields into the code as constants.
COLUMN = namedtuple("Columns", feature_names())(*range(len(FEATURES)))

SPANNING, DETERMINANT = 0, 1  # rows of the digits output


@numba.njit(cache=True, nogil=True)
def count_stats(values, n, counts):
    """min, max, median, mean of values[:n] (n >= 1), each a whole number in 0 … n-1 (a degree, a count of
    other stacks), counting them into ``counts`` (at least n entries): O(n), where a sort is O(n²).

    The median is the middle value, or the mean of the two middle ones for an even n, as a float.
    """
    counts[:n] = 0
    total = 0
    for i in range(n):
        counts[values[i]] += 1
        total += values[i]
    smallest = 0
    while counts[smallest] == 0:
        smallest += 1
    largest = n - 1
    while counts[largest] == 0:
        largest -= 1
    low_rank, high_rank = (n - 1) // 2, n // 2  # positions of the middle value(s) in sorted order
    low = high = smallest
    seen = 0
    for v in range(smallest, largest + 1):
        if seen <= low_rank < seen + counts[v]:
            low = v
        if seen <= high_rank < seen + counts[v]:
            high = v
            break
        seen += counts[v]
    median = float(high) if n % 2 == 1 else (low + high) / 2.0
    return np.int64(smallest), np.int64(largest), median, total / n


# ---------------------------------------------------------------- exact integers


@numba.njit(cache=True, nogil=True)
def _inverse_mod(a, p):
    t, new_t, r, new_r = 0, 1, p, a
    while new_r != 0:
        q = r // new_r
        t, new_t = new_t, t - q * new_t
        r, new_r = new_r, r - q * new_r
    return t % p


@numba.njit(cache=True, nogil=True)
def _det_mod(mat, m, p, work):
    """det(mat[:m, :m]) mod p by Gaussian elimination (1 for m = 0)."""
    for i in range(m):
        for j in range(m):
            work[i, j] = mat[i, j] % p
    det = 1
    for c in range(m):
        pivot = -1
        for r in range(c, m):
            if work[r, c] != 0:
                pivot = r
                break
        if pivot < 0:
            return 0
        if pivot != c:
            for k in range(c, m):
                work[c, k], work[pivot, k] = work[pivot, k], work[c, k]
            det = (p - det) % p
        det = det * work[c, c] % p
        inv = _inverse_mod(work[c, c], p)
        for r in range(c + 1, m):
            f = work[r, c]
            if f != 0:
                f = f * inv % p
                for k in range(c, m):
                    work[r, k] = (work[r, k] - f * work[c, k]) % p
    return det


@numba.njit(cache=True, nogil=True)
def _garner(residues, k, primes, inv, out):
    for i in range(k):
        t = residues[i]
        p = primes[i]
        for j in range(i):
            t = (t - out[j]) % p * inv[j, i] % p
        out[i] = t


@numba.njit(cache=True, nogil=True)
def _det_digits(matrix, m, tables, scratch, digits):
    """det(matrix[:m, :m]) as Garner digits over ``tables.primes`` into ``digits``."""
    primes, residues = tables.primes, scratch.residues
    k = digits.shape[0]
    for q in range(k):
        residues[q] = _det_mod(matrix, m, primes[q], scratch.elimination)
    _garner(residues, k, primes, tables.inverses, digits)


# ---------------------------------------------------------------- graph topics, as in boaf.features.graph
#
# Each topic runs once per state, so it is inlined: a call would pass every scratch
# array through (about 4% of the batch path's time).


@numba.njit(cache=True, nogil=True, inline="always")
def _degree_features(adj, n, scratch, out):
    """n_stacks, flockability, avg_flockability, degree_*, odd_birds.

    Leaves every node's degree in ``scratch.degrees``.
    """
    degrees = scratch.degrees
    ends = 0
    odd = 0
    for v in range(n):
        degrees[v] = popcount(adj[v])
        ends += degrees[v]
        if degrees[v] == 0:
            odd += 1
    edges = ends // 2
    out[COLUMN.n_stacks] = n
    out[COLUMN.flockability] = edges
    out[COLUMN.avg_flockability] = edges / n
    smallest, largest, median, mean = count_stats(degrees, n, scratch.value_counts)
    out[COLUMN.degree_min], out[COLUMN.degree_max] = smallest, largest
    out[COLUMN.degree_median], out[COLUMN.degree_mean] = median, mean
    out[COLUMN.odd_birds] = odd if n > 1 else 0


@numba.njit(cache=True, nogil=True, inline="always")
def _critical_features(adj, n, nodes, scratch, out):
    """articulation_points, critical_nodes, critical_edges; returns the cut vertices as a mask.

    Articulation points are the cut vertices of every component (``all_cut_vertices``), as in the reference.
    """
    cut = all_cut_vertices(nodes, adj, scratch.graph)
    critical = cut
    for v in range(n):
        if scratch.degrees[v] == 1:
            critical |= bit(v)
    ends = 0
    left = critical
    while left != U0:
        ends += popcount(adj[lowest_bit(left)] & critical)
        left &= left - U1
    out[COLUMN.articulation_points] = popcount(cut)
    out[COLUMN.critical_nodes] = popcount(critical)
    out[COLUMN.critical_edges] = ends // 2
    return cut


@numba.njit(cache=True, nogil=True)
def _eccentricity(adj, v, nodes):
    """Edges on the longest shortest path from node ``v`` inside ``nodes`` (breadth first, ring by ring)."""
    depth = 0
    seen = bit(v)
    ring = seen
    while True:
        outer = U0
        while ring != U0:
            outer |= adj[lowest_bit(ring)]
            ring &= ring - U1
        ring = outer & nodes & ~seen
        if ring == U0:
            return depth
        seen |= ring
        depth += 1


@numba.njit(cache=True, nogil=True, inline="always")
def component_features(adj, nodes, out):
    """components and is_connected of G on ``nodes``; returns the number of components."""
    components = 0
    left = nodes
    while left != U0:
        components += 1
        left &= ~reach(bit(lowest_bit(left)), left, adj)
    out[COLUMN.components] = components
    out[COLUMN.is_connected] = 1 if components == 1 else 0
    return components


@numba.njit(cache=True, nogil=True, inline="always")
def _connectivity_features(adj, n, nodes, cut, scratch, out):
    """components, is_connected, node_connectivity, diameter; returns True when G is connected."""
    components = component_features(adj, nodes, out)
    if n <= 1 or components > 1:
        out[COLUMN.node_connectivity] = 0
    elif cut != U0:
        out[COLUMN.node_connectivity] = 1
    else:
        # Connected without a cut vertex: at least 2 from three nodes on, which spares node_connectivity its Tarjan.
        floor = np.int64(2) if n > 2 else np.int64(0)
        out[COLUMN.node_connectivity] = node_connectivity(nodes, adj, scratch.graph, floor)
    diameter = 0
    for v in range(n):
        diameter = max(diameter, _eccentricity(adj, v, nodes))
    out[COLUMN.diameter] = diameter
    return components == 1


@numba.njit(cache=True, nogil=True)
def _remove_bridges(adj, n, nodes, bridgeless, bridge_ends):
    """Copy G into ``bridgeless`` without its bridges, listing their ends in ``bridge_ends``; returns the count."""
    for v in range(n):
        bridgeless[v] = adj[v]
    bridges = 0
    for u in range(n):
        for v in range(u + 1, n):
            # Ends with a common neighbour lie on a triangle, so only other edges can be bridges.
            if adj[u] & bit(v) != U0 and adj[u] & adj[v] == U0:
                bridgeless[u] &= ~bit(v)
                bridgeless[v] &= ~bit(u)
                if reach(bit(u), nodes, bridgeless) & bit(v) != U0:
                    bridgeless[u] |= bit(v)
                    bridgeless[v] |= bit(u)
                else:
                    bridge_ends[2 * bridges] = u
                    bridge_ends[2 * bridges + 1] = v
                    bridges += 1
    return bridges


@numba.njit(cache=True, nogil=True)
def _label_islands(bridgeless, nodes, island_of):
    """Number the components of G without its bridges into ``island_of``; returns how many there are."""
    islands = 0
    left = nodes
    while left != U0:
        members = reach(bit(lowest_bit(left)), left, bridgeless)
        left &= ~members
        while members != U0:
            island_of[lowest_bit(members)] = islands
            members &= members - U1
        islands += 1
    return islands


@numba.njit(cache=True, nogil=True, inline="always")
def _island_features(adj, n, nodes, scratch, out):
    """islands (G's components once every bridge is removed) and exterior_islands (touching one bridge)."""
    bridges = _remove_bridges(adj, n, nodes, scratch.bridgeless, scratch.bridge_ends)
    islands = _label_islands(scratch.bridgeless, nodes, scratch.island_of)
    bridges_at = scratch.bridges_at
    bridges_at[:islands] = 0
    for end in range(2 * bridges):
        bridges_at[scratch.island_of[scratch.bridge_ends[end]]] += 1
    exterior = 0
    for i in range(islands):
        if bridges_at[i] == 1:
            exterior += 1
    out[COLUMN.islands] = islands
    out[COLUMN.exterior_islands] = exterior


@numba.njit(cache=True, nogil=True, inline="always")
def _matrix_features(adj, n, connected, tables, scratch, out, digits_row):
    """a2_zeros into ``out``; spanning_trees and det A as Garner digits into ``digits_row``."""
    zeros = 0
    for i in range(n):
        for j in range(n):
            if adj[i] & adj[j] == U0:
                zeros += 1
    out[COLUMN.a2_zeros] = zeros
    matrix = scratch.matrix
    # Laplacian with the last row and column deleted (Kirchhoff).
    if connected:
        for i in range(n - 1):
            for j in range(n - 1):
                matrix[i, j] = popcount(adj[i]) if i == j else -popcount(adj[i] & bit(j))
        _det_digits(matrix, n - 1, tables, scratch, digits_row[SPANNING])
    else:
        digits_row[SPANNING, :] = 0
    for i in range(n):
        for j in range(n):
            matrix[i, j] = popcount(adj[i] & bit(j))
    _det_digits(matrix, n, tables, scratch, digits_row[DETERMINANT])


@numba.njit(cache=True, nogil=True, inline="always")  # into batch_kernel: no library of its own to optimise again
def graph_features(adj, n, tables, scratch, out, digits_row):
    """Every feature of G into ``out``, the exact integers as Garner digits into ``digits_row``.

    ``adj`` is ``uint64[n]`` (at least ``n`` long), ``tables`` and ``scratch`` are ``boaf.features.compiled``'s.
    """
    nodes = (U1 << np.uint64(n)) - U1
    _degree_features(adj, n, scratch, out)
    cut = _critical_features(adj, n, nodes, scratch, out)
    connected = _connectivity_features(adj, n, nodes, cut, scratch, out)
    _island_features(adj, n, nodes, scratch, out)
    _matrix_features(adj, n, connected, tables, scratch, out, digits_row)
