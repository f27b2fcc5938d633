"""The compiled feature kernel: every feature of a batch of states, over bitsets.

This is the one module where speed beats beauty. It computes exactly what
``features.reference`` computes (tests hold it to that), for a batch of states
given as ``game.arrays`` int8 rows, without one Python call per state.

Representation: the stacks of a state are numbered 0 … n-1 in row-major cell
order; node ``i``'s neighbours in G are the bits of ``adj[i]`` (an int64, since
n <= 52 < 63 and numba turns mixed uint64/int64 arithmetic into floats).

Layout: one function per topic of ``features.schema.Topic``, as in the reference
(``features.graph``, ``features.cards``), each writing its columns of ``out``;
their work arrays come in one ``Scratch``, allocated once per batch.

Exact integers: the spanning-tree count and det(A) are computed modulo a few
primes below 2^31 (so every product fits int64) and returned as Garner
mixed-radix digits; ``features.batch`` turns them into exact integers. Enough
primes are used to exceed Cayley's bound n^(n-2) on spanning trees and twice
Hadamard's bound (n-1)^(n/2) on |det A| for the largest n of the batch.
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import NamedTuple

import numba
import numpy as np

from features.schema import FEATURE_INDEX, FEATURES, feature_names
from game.bits import lowest_bit, popcount
from game.cards import DECK_SIZE, SUITS, compatible

#: Primes just below 2^31, largest first.
PRIMES = np.array(
    [
        2147483647,
        2147483629,
        2147483587,
        2147483579,
        2147483563,
        2147483549,
        2147483543,
        2147483497,
        2147483489,
        2147483477,
        2147483423,
        2147483399,
    ],
    dtype=np.int64,
)

N_FEATURES = len(FEATURES)
SPANNING, DETERMINANT = 0, 1  # rows of the digits output


_COMPATIBLE = np.array([[compatible(a, b) for b in range(DECK_SIZE)] for a in range(DECK_SIZE)], dtype=np.bool_)

#: The column of each feature, by name (``COLUMN.degree_min``). It is made from the
#: schema, and numba folds a global tuple's fields into the code as constants.
COLUMN = namedtuple("Columns", feature_names())(*range(N_FEATURES))

#: The ``suit_ratio_*`` columns in the order of ``game.cards.SUITS`` (a card's suit is card % 4).
SUIT_RATIO_COLUMNS = tuple(FEATURE_INDEX[f"suit_ratio_{suit.lower()}"] for suit in SUITS)


class Scratch(NamedTuple):
    """Work arrays for one state at a time, allocated once per batch; each has one use.

    Bitsets are int64 rows with bit j for node j, as ``adj`` is.
    """

    degrees: np.ndarray  # degree of each node of G
    sorted_values: np.ndarray  # the insertion sort of ``_sorted_stats``
    flow: np.ndarray  # node connectivity: bit w of flow[u] when one unit flows u -> w
    through: np.ndarray  # node connectivity: 1 when a path passes through the node
    parent: np.ndarray  # node connectivity: search parent of each split node (2v in, 2v+1 out)
    queue: np.ndarray  # node connectivity: search queue of split nodes
    bridgeless: np.ndarray  # bitsets of G without its bridges
    bridge_ends: np.ndarray  # the two end nodes of each bridge
    island_of: np.ndarray  # island of each node
    bridges_at: np.ndarray  # bridges touching each island
    matrix: np.ndarray  # (n, n) the matrix whose determinant is taken
    elimination: np.ndarray  # (n, n) that matrix mod p during Gaussian elimination
    residues: np.ndarray  # a determinant mod each prime
    rank_counts: np.ndarray  # cards of each rank, A = 1 … K = 13 (0 stays empty)
    suit_counts: np.ndarray  # cards of each suit
    line_mates: np.ndarray  # per stack: other stacks in its row or column
    line_moves: np.ndarray  # per stack: legal moves from it now


def scratch_for(max_stacks: int, n_primes: int) -> Scratch:
    """Work arrays for states of up to ``max_stacks`` stacks and ``n_primes`` primes."""
    n = max_stacks

    def ints(*shape: int) -> np.ndarray:
        return np.empty(shape, dtype=np.int64)

    return Scratch(
        degrees=ints(n),
        sorted_values=ints(n),
        flow=ints(n),
        through=ints(n),
        parent=ints(2 * n),
        queue=ints(2 * n),
        bridgeless=ints(n),
        bridge_ends=ints(2 * n),
        island_of=ints(n),
        bridges_at=ints(n),
        matrix=ints(n, n),
        elimination=ints(n, n),
        residues=ints(n_primes),
        rank_counts=ints(14),
        suit_counts=ints(len(SUITS)),
        line_mates=ints(n),
        line_moves=ints(n),
    )


def primes_needed(max_stacks: int) -> int:
    """How many of ``PRIMES`` recover both exact integers for states of up to ``max_stacks`` stacks."""
    n = max(max_stacks, 2)
    trees_bits = (n - 2) * math.log2(n)
    det_bits = 1 + (n / 2) * math.log2(n - 1) if n > 2 else 1
    bits = max(trees_bits, det_bits) + 1
    per_prime = math.log2(float(PRIMES.min()))
    return max(1, math.ceil(bits / per_prime))


def garner_inverses(k: int) -> np.ndarray:
    """``inv[j, i]`` = PRIMES[j]^-1 mod PRIMES[i] for j < i < k (Garner's constants)."""
    inv = np.zeros((k, k), dtype=np.int64)
    for i in range(k):
        for j in range(i):
            inv[j, i] = pow(int(PRIMES[j]), -1, int(PRIMES[i]))
    return inv


# ---------------------------------------------------------------- bit helpers (popcount and lowest_bit: game.bits)


@numba.njit(cache=True, nogil=True)
def _neighbours(adj, nodes):  # type: ignore[no-untyped-def]
    """Bitset of the neighbours of the ``nodes`` bitset."""
    found = 0
    while nodes != 0:
        found |= adj[lowest_bit(nodes)]
        nodes &= nodes - 1
    return found


@numba.njit(cache=True, nogil=True)
def _reach(adj, start, allowed):  # type: ignore[no-untyped-def]
    """Bitset of nodes reachable from the ``start`` bitset inside ``allowed``."""
    seen = start & allowed
    frontier = seen
    while frontier != 0:
        frontier = _neighbours(adj, frontier) & allowed & ~seen
        seen |= frontier
    return seen


@numba.njit(cache=True, nogil=True)
def _eccentricity(adj, v, allowed):  # type: ignore[no-untyped-def]
    """Edges on the longest shortest path from node ``v`` inside ``allowed``."""
    seen = np.int64(1) << v
    frontier = seen
    depth = 0
    while True:
        frontier = _neighbours(adj, frontier) & allowed & ~seen
        if frontier == 0:
            return depth
        depth += 1
        seen |= frontier


@numba.njit(cache=True, nogil=True)
def _all_nodes(n):  # type: ignore[no-untyped-def]
    return (np.int64(1) << n) - 1


@numba.njit(cache=True, nogil=True)
def _sorted_stats(values, n, buf):  # type: ignore[no-untyped-def]
    """min, max, median, mean of values[:n] (n >= 1), sorting into ``buf``."""
    total = 0
    for i in range(n):
        x = values[i]
        total += x
        j = i
        while j > 0 and buf[j - 1] > x:
            buf[j] = buf[j - 1]
            j -= 1
        buf[j] = x
    median = float(buf[n // 2]) if n % 2 == 1 else (buf[n // 2 - 1] + buf[n // 2]) / 2.0
    return buf[0], buf[n - 1], median, total / n


# ---------------------------------------------------------------- exact integers


@numba.njit(cache=True, nogil=True)
def _inverse_mod(a, p):  # type: ignore[no-untyped-def]
    t, new_t, r, new_r = 0, 1, p, a
    while new_r != 0:
        q = r // new_r
        t, new_t = new_t, t - q * new_t
        r, new_r = new_r, r - q * new_r
    return t % p


@numba.njit(cache=True, nogil=True)
def _det_mod(mat, m, p, work):  # type: ignore[no-untyped-def]
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
def _garner(residues, k, primes, inv, out):  # type: ignore[no-untyped-def]
    for i in range(k):
        t = residues[i]
        p = primes[i]
        for j in range(i):
            t = (t - out[j]) % p * inv[j, i] % p
        out[i] = t


# ---------------------------------------------------------------- node connectivity


@numba.njit(cache=True, nogil=True)
def _local_connectivity(adj, n, s, t, cap, flow, through, parent, queue):  # type: ignore[no-untyped-def]
    """Internally vertex-disjoint s–t paths of non-adjacent s, t, counted up to ``cap``.

    Augmenting paths on the split graph: node 2v is v_in, 2v+1 is v_out;
    ``flow[u]`` has bit w when one unit flows u -> w; ``through[v]`` is 1 when a
    path passes through v.
    """
    for v in range(n):
        flow[v] = 0
        through[v] = 0
    # Common neighbours give disjoint two-edge paths at once; in dense graphs they
    # often reach the cap without a single search.
    paths = 0
    common = adj[s] & adj[t]
    for w in range(n):
        if paths >= cap:
            return paths
        if (common >> w) & 1:
            flow[s] |= np.int64(1) << w
            flow[w] |= np.int64(1) << t
            through[w] = 1
            paths += 1
    while paths < cap:
        for x in range(2 * n):
            parent[x] = -2
        source = 2 * s + 1
        parent[source] = -1
        head, tail = 0, 1
        queue[0] = source
        found = False
        while head < tail and not found:
            x = queue[head]
            head += 1
            v = x >> 1
            if x & 1:  # v_out: forward along unused edges, or back into v_in
                m = adj[v] & ~flow[v] & ~(np.int64(1) << s)
                while m != 0:
                    w = lowest_bit(m)
                    m &= m - 1
                    if parent[2 * w] == -2:
                        parent[2 * w] = x
                        if w == t:
                            found = True
                            break
                        queue[tail] = 2 * w
                        tail += 1
                if v != s and through[v] and parent[2 * v] == -2:
                    parent[2 * v] = x
                    queue[tail] = 2 * v
                    tail += 1
            else:  # v_in: through v if unused, or back along an edge carrying flow into v
                if not through[v] and parent[2 * v + 1] == -2:
                    parent[2 * v + 1] = x
                    queue[tail] = 2 * v + 1
                    tail += 1
                m = adj[v]
                while m != 0:
                    u = lowest_bit(m)
                    m &= m - 1
                    if (flow[u] >> v) & 1 and parent[2 * u + 1] == -2:
                        parent[2 * u + 1] = x
                        queue[tail] = 2 * u + 1
                        tail += 1
        if not found:
            break
        x = 2 * t
        while x != source:
            y = parent[x]
            a, b = y >> 1, x >> 1
            if a == b:  # split arc: in->out starts using v, out->in stops
                through[a] = 1 if (y & 1) == 0 else 0
            elif y & 1:  # a_out -> b_in: forward edge
                flow[a] |= np.int64(1) << b
            else:  # a_in -> b_out: cancel flow b -> a
                flow[b] &= ~(np.int64(1) << a)
            x = y
        paths += 1
    return paths


@numba.njit(cache=True, nogil=True)
def _node_connectivity(adj, n, min_degree, has_cut_vertex, flow, through, parent, queue):  # type: ignore[no-untyped-def]
    """Vertex connectivity of a connected graph with n >= 2 (Even's algorithm)."""
    full = _all_nodes(n)
    complete = True
    for v in range(n):
        if adj[v] != full & ~(np.int64(1) << v):
            complete = False
            break
    if complete:
        return n - 1
    if has_cut_vertex or min_degree <= 1:
        return 1
    best = min_degree
    i = np.int64(0)  # (a literal 0 would compile a second _local_connectivity for it)
    # Without a cut vertex the connectivity is at least 2, so 2 needs no proof.
    while i <= best and i < n and best > 2:
        for j in range(i + 1, n):
            if not (adj[i] >> j) & 1:
                k = _local_connectivity(adj, n, i, j, best, flow, through, parent, queue)
                if k < best:
                    best = k
        i += 1
    return best


# ---------------------------------------------------------------- graph topics, as in features.graph
#
# Each topic runs once per state, so it is inlined: a call would pass every scratch
# array through (about 4% of the batch path's time).


@numba.njit(cache=True, nogil=True, inline="always")
def _degree_features(adj, n, scratch, out):  # type: ignore[no-untyped-def]
    """n_stacks, flockability, avg_flockability, degree_*, odd_birds; returns the smallest degree.

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
    smallest, largest, median, mean = _sorted_stats(degrees, n, scratch.sorted_values)
    out[COLUMN.degree_min], out[COLUMN.degree_max] = smallest, largest
    out[COLUMN.degree_median], out[COLUMN.degree_mean] = median, mean
    out[COLUMN.odd_birds] = odd if n > 1 else 0
    return smallest


@numba.njit(cache=True, nogil=True)
def _is_cut_vertex(adj, n, v):  # type: ignore[no-untyped-def]
    """True when v's neighbours (at least two) fall apart once v is gone."""
    neighbours = adj[v]
    first = neighbours & -neighbours
    return _reach(adj, first, _all_nodes(n) & ~(np.int64(1) << v)) & neighbours != neighbours


@numba.njit(cache=True, nogil=True, inline="always")
def _critical_features(adj, n, degrees, out):  # type: ignore[no-untyped-def]
    """articulation_points, critical_nodes, critical_edges; returns the cut vertices as a bitset."""
    cut = 0
    leaves = 0
    for v in range(n):
        if degrees[v] == 1:
            leaves |= np.int64(1) << v
        elif degrees[v] >= 2 and _is_cut_vertex(adj, n, v):
            cut |= np.int64(1) << v
    critical = cut | leaves
    ends = 0
    for v in range(n):
        if (critical >> v) & 1:
            ends += popcount(adj[v] & critical)
    out[COLUMN.articulation_points] = popcount(cut)
    out[COLUMN.critical_nodes] = popcount(critical)
    out[COLUMN.critical_edges] = ends // 2
    return cut


@numba.njit(cache=True, nogil=True, inline="always")
def _connectivity_features(adj, n, min_degree, has_cut_vertex, scratch, out):  # type: ignore[no-untyped-def]
    """components, is_connected, node_connectivity, diameter; returns True when G is connected."""
    full = _all_nodes(n)
    components = 0
    left = full
    for v in range(n):
        if (left >> v) & 1:
            components += 1
            left &= ~_reach(adj, np.int64(1) << v, left)
    out[COLUMN.components] = components
    out[COLUMN.is_connected] = 1 if components == 1 else 0
    if n <= 1 or components > 1:
        out[COLUMN.node_connectivity] = 0
    else:
        paths = scratch.flow, scratch.through, scratch.parent, scratch.queue
        out[COLUMN.node_connectivity] = _node_connectivity(adj, n, min_degree, has_cut_vertex, *paths)
    diameter = 0
    for v in range(n):
        diameter = max(diameter, _eccentricity(adj, v, full))
    out[COLUMN.diameter] = diameter
    return components == 1


@numba.njit(cache=True, nogil=True)
def _remove_bridges(adj, n, bridgeless, bridge_ends):  # type: ignore[no-untyped-def]
    """Copy G into ``bridgeless`` without its bridges, listing their ends in ``bridge_ends``; returns the count."""
    for v in range(n):
        bridgeless[v] = adj[v]
    bridges = 0
    for u in range(n):
        for v in range(u + 1, n):
            # Ends with a common neighbour lie on a triangle, so only other edges can be bridges.
            if (adj[u] >> v) & 1 and adj[u] & adj[v] == 0:
                bridgeless[u] &= ~(np.int64(1) << v)
                bridgeless[v] &= ~(np.int64(1) << u)
                if (_reach(bridgeless, np.int64(1) << u, _all_nodes(n)) >> v) & 1:
                    bridgeless[u] |= np.int64(1) << v
                    bridgeless[v] |= np.int64(1) << u
                else:
                    bridge_ends[2 * bridges] = u
                    bridge_ends[2 * bridges + 1] = v
                    bridges += 1
    return bridges


@numba.njit(cache=True, nogil=True)
def _label_islands(bridgeless, n, island_of):  # type: ignore[no-untyped-def]
    """Number the components of G without its bridges into ``island_of``; returns how many there are."""
    islands = 0
    left = _all_nodes(n)
    for v in range(n):
        if (left >> v) & 1:
            members = _reach(bridgeless, np.int64(1) << v, left)
            left &= ~members
            while members != 0:
                island_of[lowest_bit(members)] = islands
                members &= members - 1
            islands += 1
    return islands


@numba.njit(cache=True, nogil=True, inline="always")
def _island_features(adj, n, scratch, out):  # type: ignore[no-untyped-def]
    """islands (G's components once every bridge is removed) and exterior_islands (touching one bridge)."""
    bridges = _remove_bridges(adj, n, scratch.bridgeless, scratch.bridge_ends)
    islands = _label_islands(scratch.bridgeless, n, scratch.island_of)
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
def _matrix_features(adj, n, connected, primes, inv, scratch, out, digits_row):  # type: ignore[no-untyped-def]
    """a2_zeros into ``out``; spanning_trees and det A as Garner digits into ``digits_row``."""
    zeros = 0
    for i in range(n):
        for j in range(n):
            if adj[i] & adj[j] == 0:
                zeros += 1
    out[COLUMN.a2_zeros] = zeros
    k = digits_row.shape[1]
    matrix, residues = scratch.matrix, scratch.residues
    # Laplacian with the last row and column deleted (Kirchhoff).
    if connected:
        for i in range(n - 1):
            for j in range(n - 1):
                matrix[i, j] = popcount(adj[i]) if i == j else -((adj[i] >> j) & 1)
        for q in range(k):
            residues[q] = _det_mod(matrix, n - 1, primes[q], scratch.elimination)
        _garner(residues, k, primes, inv, digits_row[SPANNING])
    else:
        digits_row[SPANNING, :] = 0
    for i in range(n):
        for j in range(n):
            matrix[i, j] = (adj[i] >> j) & 1
    for q in range(k):
        residues[q] = _det_mod(matrix, n, primes[q], scratch.elimination)
    _garner(residues, k, primes, inv, digits_row[DETERMINANT])


@numba.njit(cache=True, nogil=True)
def _graph_features(adj, n, primes, inv, scratch, out, digits_row):  # type: ignore[no-untyped-def]
    """Every feature of G into ``out``, the exact integers as Garner digits into ``digits_row``."""
    min_degree = _degree_features(adj, n, scratch, out)
    cut = _critical_features(adj, n, scratch.degrees, out)
    connected = _connectivity_features(adj, n, min_degree, cut != 0, scratch, out)
    _island_features(adj, n, scratch, out)
    _matrix_features(adj, n, connected, primes, inv, scratch, out, digits_row)


# ---------------------------------------------------------------- cards and positions, as in features.cards


@numba.njit(cache=True, nogil=True, inline="always")
def _card_features(cards, n, scratch, out):  # type: ignore[no-untyped-def]
    """rank_clusters … kings of these top cards (ranks A = 1 … K = 13)."""
    rank_counts, suit_counts = scratch.rank_counts, scratch.suit_counts
    rank_counts[:] = 0
    suit_counts[:] = 0
    total = 0.0
    for i in range(n):
        r = cards[i] // 4 + 1
        rank_counts[r] += 1
        suit_counts[cards[i] % 4] += 1
        total += r
    mean = total / n
    var = 0.0
    for i in range(n):
        d = (cards[i] // 4 + 1) - mean
        var += d * d
    out[COLUMN.rank_std] = np.sqrt(var / n)
    clusters = 0
    diversity = 0
    for r in range(1, 14):
        if rank_counts[r] > 0:
            diversity += 1
            if rank_counts[r - 1] == 0:
                clusters += 1
    out[COLUMN.rank_clusters] = clusters
    out[COLUMN.rank_diversity] = diversity
    largest = suit_counts.max()
    out[COLUMN.suit_dominance] = (largest - suit_counts.min()) / n
    out[COLUMN.dominant_suit_ratio] = largest / n
    present = 0
    for s in range(len(SUIT_RATIO_COLUMNS)):
        out[SUIT_RATIO_COLUMNS[s]] = suit_counts[s] / n
        if suit_counts[s] > 0:
            present += 1
    out[COLUMN.suit_diversity] = present
    out[COLUMN.aces] = rank_counts[1]
    out[COLUMN.kings] = rank_counts[13]


@numba.njit(cache=True, nogil=True, inline="always")
def _position_features(cards, cell_of, n, cols, compat, scratch, out):  # type: ignore[no-untyped-def]
    """mobility and its ratios, rc_count_*, rc_compat_*; needs flockability in ``out`` already."""
    line_mates, line_moves = scratch.line_mates, scratch.line_moves
    moves_twice = 0  # each legal pair is found from both of its stacks
    for i in range(n):
        mates = 0
        moves = 0
        row, col = cell_of[i] // cols, cell_of[i] % cols
        for j in range(n):
            if j != i and (cell_of[j] // cols == row or cell_of[j] % cols == col):
                mates += 1
                if compat[cards[i], cards[j]]:
                    moves += 1
        line_mates[i] = mates
        line_moves[i] = moves
        moves_twice += moves
    smallest, largest, median, mean = _sorted_stats(line_mates, n, scratch.sorted_values)
    out[COLUMN.rc_count_min], out[COLUMN.rc_count_max] = smallest, largest
    out[COLUMN.rc_count_median], out[COLUMN.rc_count_mean] = median, mean
    smallest, largest, median, mean = _sorted_stats(line_moves, n, scratch.sorted_values)
    out[COLUMN.rc_compat_min], out[COLUMN.rc_compat_max] = smallest, largest
    out[COLUMN.rc_compat_median], out[COLUMN.rc_compat_mean] = median, mean
    mobility = moves_twice // 2
    out[COLUMN.mobility] = mobility
    out[COLUMN.mobility_per_card] = mobility / n
    flock = out[COLUMN.flockability]
    out[COLUMN.mobility_flockability_ratio] = mobility / flock if flock > 0 else 0.0


# ---------------------------------------------------------------- batches


@numba.njit(cache=True, nogil=True)
def batch_kernel(cells, cols, compat, primes, inv, scratch, out, digits, cancel):  # type: ignore[no-untyped-def]
    """Fill ``out[s]`` (float64 features) and ``digits[s]`` (mixed-radix exact integers) per state.

    ``cells`` is the (N, rows*cols) int8 batch and ``scratch`` comes from
    ``scratch_for(rows*cols, len(primes))``; the two exact-integer columns of
    ``out`` are left for the caller to fill from ``digits``. ``cancel`` is an
    int64[1] flag another thread may set: it is read before each state (at most
    ~50 ms apart on 52 cards), and once set the kernel returns. Returns the
    states filled: N, or fewer when ``cancel`` stopped it.
    """
    n_states, n_cells = cells.shape
    cards = np.empty(n_cells, dtype=np.int64)
    cell_of = np.empty(n_cells, dtype=np.int64)
    adj = np.empty(n_cells, dtype=np.int64)
    for s in range(n_states):
        if cancel[0] != 0:
            return s
        n = np.int64(0)
        for c in range(n_cells):
            if cells[s, c] >= 0:
                cards[n] = cells[s, c]
                cell_of[n] = c
                n += 1
        for i in range(n):
            row = np.int64(0)
            for j in range(n):
                if j != i and compat[cards[i], cards[j]]:
                    row |= np.int64(1) << j
            adj[i] = row
        _graph_features(adj, n, primes, inv, scratch, out[s], digits[s])
        _card_features(cards, n, scratch, out[s])
        _position_features(cards, cell_of, n, cols, compat, scratch, out[s])
    return n_states


def compatibility_table() -> np.ndarray:
    """The 52×52 boolean compatibility table the kernel reads."""
    return _COMPATIBLE


@numba.njit(cache=True, nogil=True)
def _adjacency_kernel(adj, n, primes, inv, scratch, out, digits):  # type: ignore[no-untyped-def]
    _graph_features(adj, n, primes, inv, scratch, out, digits)


def graph_row(adjacency: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's graph features of any simple graph, for tests of graphs cards cannot make.

    ``adjacency`` is an n×n 0/1 matrix (1 <= n <= 52). Returns the feature row
    (only the graph columns are filled) and the Garner digits of the exact integers.
    """
    matrix = np.asarray(adjacency, dtype=np.int64)
    n = matrix.shape[0]
    adj = np.array([sum(int(matrix[i, j]) << j for j in range(n) if j != i) for i in range(n)], dtype=np.int64)
    k = primes_needed(n)
    out = np.zeros(N_FEATURES, dtype=np.float64)
    digits = np.zeros((2, k), dtype=np.int64)
    _adjacency_kernel(adj, n, PRIMES[:k], garner_inverses(k), scratch_for(n, k), out, digits)
    return out, digits
