# mypy: disable-error-code="no-untyped-def"
# mypy: disallow-untyped-calls=False, warn-return-any=False, check-untyped-defs=False
"""The compiled feature kernel: every feature of a batch of states, over bitsets.

This is the one module where speed beats beauty. It computes exactly what
``boaf.features.reference`` computes (tests hold it to that), for a batch of states
given as ``boaf.game.arrays`` int8 rows, without one Python call per state.

Representation: the stacks of a state are numbered 0 … n-1 in row-major cell
order, and G is a ``boaf.game.graph`` graph over them: node ``i``'s neighbours are
the bits of ``adj[i]`` (a ``uint64``), made from ``boaf.game.graph.compat_table()``.

Layout: ``batch_kernel`` (here) runs, per state, the graph topics of
``boaf.features.compiled_graph`` and the card and position topics here (as in the
reference's ``boaf.features.graph`` and ``boaf.features.cards``), each writing its
columns of ``out``. What they read comes in one ``Tables`` per batch
(``tables_for``), their work arrays in one ``Scratch`` (``scratch_for``).

Exact integers: the spanning-tree count and det(A) are computed modulo a few
primes below 2^31 (so every product fits int64) and returned as Garner
mixed-radix digits; ``boaf.features.batch`` turns them into exact integers. Enough
primes are used to exceed Cayley's bound n^(n-2) on spanning trees and twice
Hadamard's bound (n-1)^(n/2) on |det A| for the largest n of the batch.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np

from boaf.features.compiled_graph import COLUMN, DETERMINANT, SPANNING, count_stats, graph_features
from boaf.features.schema import FEATURE_INDEX, FEATURES
from boaf.game.bits import popcount
from boaf.game.cards import SUITS
from boaf.game.graph import U0, GraphScratch, bit, compat_table, graph_scratch, line_table

__all__ = [
    "COLUMN",
    "DETERMINANT",
    "N_FEATURES",
    "PRIMES",
    "SPANNING",
    "Scratch",
    "Tables",
    "batch_kernel",
    "graph_row",
    "line_features",
    "load_stacks",
    "scratch_for",
    "tables_for",
]

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

#: The ``suit_ratio_*`` columns in the order of ``boaf.game.cards.SUITS`` (a card's suit is card % 4).
SUIT_RATIO_COLUMNS = tuple(FEATURE_INDEX[f"suit_ratio_{suit.lower()}"] for suit in SUITS)


class Tables(NamedTuple):
    """What the kernel reads for one grid, made once per batch (``tables_for``)."""

    compat: np.ndarray  # uint64[52]: boaf.game.graph.compat_table(), the cards each card may join
    line: (
        np.ndarray
    )  # uint64[rows*cols]: boaf.game.graph.line_table(rows, cols), the cells in each cell's row or column
    primes: np.ndarray  # int64[k]: the first k of PRIMES
    inverses: np.ndarray  # int64[k, k]: Garner's constants of those primes (garner_inverses)


class Scratch(NamedTuple):
    """Work arrays for one state at a time, allocated once per batch; each has one use.

    Bitsets are uint64 masks with bit j for node j, as ``adj`` is.
    """

    degrees: np.ndarray  # degree of each node of G
    value_counts: np.ndarray  # ``count_stats``'s counts, one per value 0 … n-1
    graph: GraphScratch  # boaf.game.graph's work arrays: cut vertices and node connectivity
    bridgeless: np.ndarray  # uint64 bitsets of G without its bridges
    bridge_ends: np.ndarray  # the two end nodes of each bridge
    island_of: np.ndarray  # island of each node
    bridges_at: np.ndarray  # bridges touching each island
    matrix: np.ndarray  # (n, n) the matrix whose determinant is taken
    elimination: np.ndarray  # (n, n) that matrix mod p during Gaussian elimination
    residues: np.ndarray  # a determinant mod each prime
    rank_counts: np.ndarray  # cards of each rank, A = 1 … K = 13 (0 stays empty)
    suit_counts: np.ndarray  # cards of each suit
    line_masks: np.ndarray  # per stack: the stacks in its row or column, as a uint64 mask
    line_mates: np.ndarray  # per stack: other stacks in its row or column
    line_moves: np.ndarray  # per stack: legal moves from it now


def scratch_for(max_stacks: int, n_primes: int) -> Scratch:
    """Work arrays for states of up to ``max_stacks`` stacks and ``n_primes`` primes."""
    n = max_stacks

    def ints(*shape: int) -> np.ndarray:
        return np.empty(shape, dtype=np.int64)

    return Scratch(
        degrees=ints(n),
        value_counts=ints(n),
        graph=graph_scratch(),
        bridgeless=np.empty(n, dtype=np.uint64),
        bridge_ends=ints(2 * n),
        island_of=ints(n),
        bridges_at=ints(n),
        matrix=ints(n, n),
        elimination=ints(n, n),
        residues=ints(n_primes),
        rank_counts=ints(14),
        suit_counts=ints(len(SUITS)),
        line_masks=np.empty(n, dtype=np.uint64),
        line_mates=ints(n),
        line_moves=ints(n),
    )


def tables_for(rows: int, cols: int) -> Tables:
    """The tables of a ``rows`` x ``cols`` grid, with the primes its exact integers need."""
    k = primes_needed(rows * cols)
    return Tables(compat_table(), line_table(rows, cols), PRIMES[:k], garner_inverses(k))


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


# ---------------------------------------------------------------- cards and positions, as in boaf.features.cards


@numba.njit(cache=True, nogil=True, inline="always")
def _card_features(cards, n, scratch, out):
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
def _stacks_in(mask, keys, n):
    """The mask of the stacks ``j < n`` whose key (a card, a cell) is a bit of ``mask``."""
    found = U0
    for j in range(n):
        if mask & bit(keys[j]) != U0:
            found |= bit(j)
    return found


@numba.njit(cache=True, nogil=True, inline="always")
def _position_features(adj, cell_of, n, line, scratch, out):
    """mobility and its ratios, rc_count_*, rc_compat_*; needs flockability in ``out`` already.

    Stacks are line mates when their cells share a row or column (``line``); a legal move joins line mates that
    are neighbours in G.
    """
    for i in range(n):
        scratch.line_masks[i] = _stacks_in(line[cell_of[i]], cell_of, n)
    line_features(adj, scratch.line_masks, n, scratch, out)


@numba.njit(cache=True, nogil=True, inline="always")
def line_features(adj, mates, n, scratch, out):
    """``_position_features`` from each stack's line mates given as masks (``mates[i]``, bit j for stack j)."""
    line_mates, line_moves = scratch.line_mates, scratch.line_moves
    moves_twice = 0  # each legal pair is found from both of its stacks
    for i in range(n):
        line_mates[i] = popcount(mates[i])
        line_moves[i] = popcount(mates[i] & adj[i])
        moves_twice += line_moves[i]
    smallest, largest, median, mean = count_stats(line_mates, n, scratch.value_counts)
    out[COLUMN.rc_count_min], out[COLUMN.rc_count_max] = smallest, largest
    out[COLUMN.rc_count_median], out[COLUMN.rc_count_mean] = median, mean
    smallest, largest, median, mean = count_stats(line_moves, n, scratch.value_counts)
    out[COLUMN.rc_compat_min], out[COLUMN.rc_compat_max] = smallest, largest
    out[COLUMN.rc_compat_median], out[COLUMN.rc_compat_mean] = median, mean
    mobility = moves_twice // 2
    out[COLUMN.mobility] = mobility
    out[COLUMN.mobility_per_card] = mobility / n
    flock = out[COLUMN.flockability]
    out[COLUMN.mobility_flockability_ratio] = mobility / flock if flock > 0 else 0.0


# ---------------------------------------------------------------- batches


@numba.njit(cache=True, nogil=True, inline="always")
def load_stacks(cells, compat, cards, cell_of, adj):
    """A state's stacks in row-major order: each one's top card and cell, and G's bitsets; returns how many."""
    n = np.int64(0)
    for c in range(cells.shape[0]):
        if cells[c] >= 0:
            cards[n] = cells[c]
            cell_of[n] = c
            n += 1
    for i in range(n):
        adj[i] = _stacks_in(compat[cards[i]], cards, n)
    return n


@numba.njit(cache=True, nogil=True)
def batch_kernel(cells, tables, scratch, out, *, digits, cancel):
    """Fill ``out[s]`` (float64 features) and ``digits[s]`` (mixed-radix exact integers) per state.

    ``cells`` is the (N, rows*cols) int8 batch, ``tables`` is ``tables_for(rows, cols)``
    and ``scratch`` comes from ``scratch_for(rows*cols, len(tables.primes))``; the
    two exact-integer columns of ``out`` are left for the caller to fill from
    ``digits``. ``cancel`` is an int64[1] flag another thread may set: it is read
    before each state (at most ~50 ms apart on 52 cards), and once set the kernel
    returns. Returns the states filled: N, or fewer when ``cancel`` stopped it.
    """
    n_states, n_cells = cells.shape
    cards = np.empty(n_cells, dtype=np.int64)
    cell_of = np.empty(n_cells, dtype=np.int64)
    adj = np.empty(n_cells, dtype=np.uint64)
    for s in range(n_states):
        if cancel[0] != 0:
            return s
        n = load_stacks(cells[s], tables.compat, cards, cell_of, adj)
        graph_features(adj, n, tables, scratch, out[s], digits[s])
        _card_features(cards, n, scratch, out[s])
        _position_features(adj, cell_of, n, tables.line, scratch, out[s])
    return n_states


def graph_row(adjacency: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's graph features of any simple graph, for tests of graphs cards cannot make.

    ``adjacency`` is an n×n 0/1 matrix (1 <= n <= 52). Returns the feature row
    (only the graph columns are filled) and the Garner digits of the exact integers.
    """
    matrix = np.asarray(adjacency, dtype=np.int64)
    n = matrix.shape[0]
    adj = np.array([sum(int(matrix[i, j]) << j for j in range(n) if j != i) for i in range(n)], dtype=np.uint64)
    tables = tables_for(1, n)
    out = np.zeros(N_FEATURES, dtype=np.float64)
    digits = np.zeros((2, len(tables.primes)), dtype=np.int64)
    graph_features(adj, n, tables, scratch_for(n, len(tables.primes)), out, digits)
    return out, digits
