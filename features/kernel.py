"""The compiled feature kernel: every feature of a batch of states, over bitsets.

This is the one module where speed beats beauty. It computes exactly what
``features.reference`` computes (tests hold it to that), for a batch of states
given as ``game.arrays`` int8 rows, without one Python call per state.

Representation: the stacks of a state are numbered 0 … n-1 in row-major cell
order; node ``i``'s neighbours in G are the bits of ``adj[i]`` (an int64, since
n <= 52 < 63 and numba turns mixed uint64/int64 arithmetic into floats).

Exact integers: the spanning-tree count and det(A) are computed modulo a few
primes below 2^31 (so every product fits int64) and returned as Garner
mixed-radix digits; ``features.batch`` turns them into exact integers. Enough
primes are used to exceed Cayley's bound n^(n-2) on spanning trees and twice
Hadamard's bound (n-1)^(n/2) on |det A| for the largest n of the batch.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from llvmlite import ir
from numba.extending import intrinsic

from features.schema import FEATURE_INDEX, feature_names
from game.cards import DECK_SIZE, compatible

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

N_FEATURES = len(feature_names())
SPANNING, DETERMINANT = 0, 1  # rows of the digits output

_COMPATIBLE = np.array([[compatible(a, b) for b in range(DECK_SIZE)] for a in range(DECK_SIZE)], dtype=np.bool_)

# Column indices, as plain ints the kernel can fold in as constants.
_F = {name: i for name, i in FEATURE_INDEX.items()}
F_N = _F["n_stacks"]
F_FLOCK = _F["flockability"]
F_AVG_FLOCK = _F["avg_flockability"]
F_DEG_MIN = _F["degree_min"]
F_DEG_MAX = _F["degree_max"]
F_DEG_MED = _F["degree_median"]
F_DEG_MEAN = _F["degree_mean"]
F_ODD = _F["odd_birds"]
F_COMP = _F["components"]
F_CONN = _F["is_connected"]
F_AP = _F["articulation_points"]
F_CRIT_N = _F["critical_nodes"]
F_CRIT_E = _F["critical_edges"]
F_ISL = _F["islands"]
F_EXT = _F["exterior_islands"]
F_KAPPA = _F["node_connectivity"]
F_DIAM = _F["diameter"]
F_TREES = _F["spanning_trees"]
F_DET = _F["adjacency_det"]
F_A2Z = _F["a2_zeros"]
F_MOB = _F["mobility"]
F_MOB_CARD = _F["mobility_per_card"]
F_MOB_RATIO = _F["mobility_flockability_ratio"]
F_CLUST = _F["rank_clusters"]
F_RSTD = _F["rank_std"]
F_SDOM = _F["suit_dominance"]
F_DSR = _F["dominant_suit_ratio"]
F_SDIV = _F["suit_diversity"]
F_RDIV = _F["rank_diversity"]
F_SUIT0 = _F["suit_ratio_c"]
F_ACES = _F["aces"]
F_KINGS = _F["kings"]
F_RC = _F["rc_count_min"]  # min, max, median, mean follow in that order
F_RCC = _F["rc_compat_min"]
assert [_F[f"suit_ratio_{s}"] - F_SUIT0 for s in "cdhs"] == [0, 1, 2, 3]
for _prefix in ("rc_count", "rc_compat"):
    assert [_F[f"{_prefix}_{s}"] - _F[f"{_prefix}_min"] for s in ("min", "max", "median", "mean")] == [0, 1, 2, 3]


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


# ---------------------------------------------------------------- bit helpers


@intrinsic
def _popcount(typingctx, x):  # type: ignore[no-untyped-def]
    """Set bits of a non-negative int64 (LLVM ctpop)."""

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.ctpop(args[0])

    return numba.types.int64(numba.types.int64), codegen


@intrinsic
def _lowest_bit(typingctx, x):  # type: ignore[no-untyped-def]
    """Index of the lowest set bit of a non-zero int64 (LLVM cttz)."""

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))

    return numba.types.int64(numba.types.int64), codegen


@numba.njit(cache=True, nogil=True)
def _reach(adj, n, start, allowed):  # type: ignore[no-untyped-def]
    """Bitset of nodes reachable from the ``start`` bitset inside ``allowed``."""
    seen = start & allowed
    frontier = seen
    while frontier != 0:
        nxt = 0
        f = frontier
        while f != 0:
            nxt |= adj[_lowest_bit(f)]
            f &= f - 1
        nxt &= allowed & ~seen
        seen |= nxt
        frontier = nxt
    return seen


@numba.njit(cache=True, nogil=True)
def _components(adj, n, allowed):  # type: ignore[no-untyped-def]
    count = 0
    left = allowed
    for v in range(n):
        if (left >> v) & 1:
            count += 1
            left &= ~_reach(adj, n, np.int64(1) << v, left)
    return count


@numba.njit(cache=True, nogil=True)
def _eccentricity(adj, n, v, allowed):  # type: ignore[no-untyped-def]
    seen = np.int64(1) << v
    frontier = seen
    depth = 0
    while True:
        nxt = 0
        f = frontier
        while f != 0:
            nxt |= adj[_lowest_bit(f)]
            f &= f - 1
        nxt &= allowed & ~seen
        if nxt == 0:
            return depth
        depth += 1
        seen |= nxt
        frontier = nxt


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


@numba.njit(cache=True, nogil=True)
def _exact_digits(adj, n, connected, primes, inv, mat, work, residues, digits_row):  # type: ignore[no-untyped-def]
    k = digits_row.shape[1]
    # Laplacian with the last row and column deleted (Kirchhoff).
    if connected:
        for i in range(n - 1):
            for j in range(n - 1):
                if i == j:
                    mat[i, j] = _popcount(adj[i])
                else:
                    mat[i, j] = -((adj[i] >> j) & 1)
        for q in range(k):
            residues[q] = _det_mod(mat, n - 1, primes[q], work)
        _garner(residues, k, primes, inv, digits_row[SPANNING])
    else:
        digits_row[SPANNING, :] = 0
    for i in range(n):
        for j in range(n):
            mat[i, j] = (adj[i] >> j) & 1
    for q in range(k):
        residues[q] = _det_mod(mat, n, primes[q], work)
    _garner(residues, k, primes, inv, digits_row[DETERMINANT])


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
                    w = _lowest_bit(m)
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
                    u = _lowest_bit(m)
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
    full = (np.int64(1) << n) - 1
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
    i = 0
    # Without a cut vertex the connectivity is at least 2, so 2 needs no proof.
    while i <= best and i < n and best > 2:
        for j in range(i + 1, n):
            if not (adj[i] >> j) & 1:
                k = _local_connectivity(adj, n, i, j, best, flow, through, parent, queue)
                if k < best:
                    best = k
        i += 1
    return best


# ---------------------------------------------------------------- one state


@numba.njit(cache=True, nogil=True)
def _graph_features(adj, n, out, buf_a, buf_b, flow, through, parent, queue):  # type: ignore[no-untyped-def]
    full = (np.int64(1) << n) - 1
    edges = 0
    for v in range(n):
        buf_a[v] = _popcount(adj[v])
        edges += buf_a[v]
    edges //= 2
    dmin, dmax, dmed, dmean = _sorted_stats(buf_a, n, buf_b)
    odd = 0
    leaves = 0
    for v in range(n):
        if buf_a[v] == 0:
            odd += 1
        elif buf_a[v] == 1:
            leaves |= np.int64(1) << v
    out[F_N] = n
    out[F_FLOCK] = edges
    out[F_AVG_FLOCK] = edges / n
    out[F_DEG_MIN], out[F_DEG_MAX], out[F_DEG_MED], out[F_DEG_MEAN] = dmin, dmax, dmed, dmean
    out[F_ODD] = odd if n > 1 else 0
    components = _components(adj, n, full)
    out[F_COMP] = components
    out[F_CONN] = 1 if components == 1 else 0

    # Cut vertices: v (degree >= 2) whose neighbours fall apart once v is gone.
    cut = 0
    for v in range(n):
        if buf_a[v] >= 2:
            nb = adj[v]
            first = nb & -nb
            if _reach(adj, n, first, full & ~(np.int64(1) << v)) & nb != nb:
                cut |= np.int64(1) << v
    critical = cut | leaves
    out[F_AP] = _popcount(cut)
    out[F_CRIT_N] = _popcount(critical)
    critical_edges = 0
    for v in range(n):
        if (critical >> v) & 1:
            critical_edges += _popcount(adj[v] & critical)
    out[F_CRIT_E] = critical_edges // 2

    # Bridges: edges whose ends share no neighbour and fall apart without the edge.
    reduced = flow  # borrow: adjacency minus bridges
    for v in range(n):
        reduced[v] = adj[v]
    bridge_u = parent  # borrow: bridge end points, one pair per bridge
    n_bridges = 0
    for u in range(n):
        for v in range(u + 1, n):
            if (adj[u] >> v) & 1 and adj[u] & adj[v] == 0:
                reduced[u] &= ~(np.int64(1) << v)
                reduced[v] &= ~(np.int64(1) << u)
                if (_reach(reduced, n, np.int64(1) << u, full) >> v) & 1:
                    reduced[u] |= np.int64(1) << v
                    reduced[v] |= np.int64(1) << u
                else:
                    bridge_u[2 * n_bridges] = u
                    bridge_u[2 * n_bridges + 1] = v
                    n_bridges += 1
    # Islands: label the components of the reduced graph, count bridges touching each.
    island = buf_b
    touching = through
    islands = 0
    left = full
    for v in range(n):
        if (left >> v) & 1:
            members = _reach(reduced, n, np.int64(1) << v, left)
            left &= ~members
            for u in range(n):
                if (members >> u) & 1:
                    island[u] = islands
            touching[islands] = 0
            islands += 1
    for b in range(n_bridges):
        touching[island[bridge_u[2 * b]]] += 1
        touching[island[bridge_u[2 * b + 1]]] += 1
    exterior = 0
    for i in range(islands):
        if touching[i] == 1:
            exterior += 1
    out[F_ISL] = islands
    out[F_EXT] = exterior

    diameter = 0
    for v in range(n):
        e = _eccentricity(adj, n, v, full)
        if e > diameter:
            diameter = e
    out[F_DIAM] = diameter

    if n <= 1 or components > 1:
        out[F_KAPPA] = 0
    else:
        out[F_KAPPA] = _node_connectivity(adj, n, dmin, cut != 0, flow, through, parent, queue)

    zeros = 0
    for i in range(n):
        for j in range(n):
            if adj[i] & adj[j] == 0:
                zeros += 1
    out[F_A2Z] = zeros
    return components == 1


@numba.njit(cache=True, nogil=True)
def _card_features(cards, cell_of, n, cols, compat, out, buf_a, buf_b, buf_c):  # type: ignore[no-untyped-def]
    rank_seen = np.zeros(14, dtype=np.int64)
    suits = np.zeros(4, dtype=np.int64)
    total = 0.0
    for i in range(n):
        r = cards[i] // 4 + 1
        rank_seen[r] += 1
        suits[cards[i] % 4] += 1
        total += r
    mean = total / n
    var = 0.0
    for i in range(n):
        d = (cards[i] // 4 + 1) - mean
        var += d * d
    out[F_RSTD] = np.sqrt(var / n)
    clusters = 0
    diversity = 0
    for r in range(1, 14):
        if rank_seen[r] > 0:
            diversity += 1
            if rank_seen[r - 1] == 0:
                clusters += 1
    out[F_CLUST] = clusters
    out[F_RDIV] = diversity
    smax = suits.max()
    smin = suits.min()
    out[F_SDOM] = (smax - smin) / n
    out[F_DSR] = smax / n
    sdiv = 0
    for s in range(4):
        out[F_SUIT0 + s] = suits[s] / n
        if suits[s] > 0:
            sdiv += 1
    out[F_SDIV] = sdiv
    out[F_ACES] = rank_seen[1]
    out[F_KINGS] = rank_seen[13]

    mobility2 = 0
    for i in range(n):
        count = 0
        moves = 0
        ri, ci = cell_of[i] // cols, cell_of[i] % cols
        for j in range(n):
            if j != i and (cell_of[j] // cols == ri or cell_of[j] % cols == ci):
                count += 1
                if compat[cards[i], cards[j]]:
                    moves += 1
        buf_a[i] = count
        buf_c[i] = moves
        mobility2 += moves
    out[F_RC], out[F_RC + 1], out[F_RC + 2], out[F_RC + 3] = _sorted_stats(buf_a, n, buf_b)
    out[F_RCC], out[F_RCC + 1], out[F_RCC + 2], out[F_RCC + 3] = _sorted_stats(buf_c, n, buf_b)
    mobility = mobility2 // 2
    out[F_MOB] = mobility
    out[F_MOB_CARD] = mobility / n
    flock = out[F_FLOCK]
    out[F_MOB_RATIO] = mobility / flock if flock > 0 else 0.0


@numba.njit(cache=True, nogil=True)
def batch_kernel(cells, cols, compat, primes, inv, out, digits):  # type: ignore[no-untyped-def]
    """Fill ``out[s]`` (float64 features) and ``digits[s]`` (mixed-radix exact integers) per state.

    ``cells`` is the (N, rows*cols) int8 batch; the two exact-integer columns of
    ``out`` are left for the caller to fill from ``digits``.
    """
    n_states, n_cells = cells.shape
    cards = np.empty(n_cells, dtype=np.int64)
    cell_of = np.empty(n_cells, dtype=np.int64)
    adj = np.empty(n_cells, dtype=np.int64)
    buf_a = np.empty(n_cells, dtype=np.int64)
    buf_b = np.empty(n_cells, dtype=np.int64)
    buf_c = np.empty(n_cells, dtype=np.int64)
    flow = np.empty(n_cells, dtype=np.int64)
    through = np.empty(n_cells, dtype=np.int64)
    parent = np.empty(2 * n_cells * n_cells + 2, dtype=np.int64)
    queue = np.empty(2 * n_cells + 2, dtype=np.int64)
    mat = np.empty((n_cells, n_cells), dtype=np.int64)
    work = np.empty((n_cells, n_cells), dtype=np.int64)
    residues = np.empty(primes.shape[0], dtype=np.int64)
    for s in range(n_states):
        n = 0
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
        connected = _graph_features(adj, n, out[s], buf_a, buf_b, flow, through, parent, queue)
        _card_features(cards, cell_of, n, cols, compat, out[s], buf_a, buf_b, buf_c)
        _exact_digits(adj, n, connected, primes, inv, mat, work, residues, digits[s])


def compatibility_table() -> np.ndarray:
    """The 52×52 boolean compatibility table the kernel reads."""
    return _COMPATIBLE


@numba.njit(cache=True, nogil=True)
def _adjacency_kernel(adj, n, primes, inv, out, digits):  # type: ignore[no-untyped-def]
    flow = np.empty(n, dtype=np.int64)
    through = np.empty(n, dtype=np.int64)
    parent = np.empty(2 * n + 2, dtype=np.int64)
    queue = np.empty(2 * n + 2, dtype=np.int64)
    buf_a = np.empty(n, dtype=np.int64)
    buf_b = np.empty(n, dtype=np.int64)
    mat = np.empty((n, n), dtype=np.int64)
    work = np.empty((n, n), dtype=np.int64)
    residues = np.empty(primes.shape[0], dtype=np.int64)
    connected = _graph_features(adj, n, out, buf_a, buf_b, flow, through, parent, queue)
    _exact_digits(adj, n, connected, primes, inv, mat, work, residues, digits)


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
    _adjacency_kernel(adj, n, PRIMES[:k], garner_inverses(k), out, digits)
    return out, digits
