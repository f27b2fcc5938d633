# mypy: disable-error-code="no-untyped-def"
# mypy: disallow-untyped-calls=False, warn-return-any=False, check-untyped-defs=False
"""The features of the states one move down, summed up: what each legal move would leave.

For every state of a batch, every legal move is made (each ordered pair: stack ``a``
onto stack ``b`` leaves ``a``'s top card in ``b``'s cell and ``a``'s cell empty), and a
cheap subset of the feature vector (``CHILD_BASE``) is computed for each child. The
columns are each base feature's minimum, maximum and mean over the children, then the
number of children (``child_feature_names()``). A state with no legal move gets zeros.

The subset leaves out the features whose cost grows fastest with the stacks (cut
vertices, islands, vertex connectivity, diameter, the determinants) and ``n_stacks``,
which is one less than the parent's in every child. On the residue sets of
``boaf.models.residue`` the cheap subset separates as well as the whole vector did
(docs/features.md), at a fraction of the cost: a 4x13 state has about 100 children,
and each child here costs under a microsecond (its graph is made from the parent's in O(n)).

``child_matrix`` is the batch call: one compiled kernel for the batch, which reads the
cancel flag before each state, as ``boaf.features.batch``'s kernel does, and equals
the plain definition (each child made by ``State.apply``, its features by
``feature_matrix``) exactly; a test holds it to that.
"""

from __future__ import annotations

import numba
import numpy as np

from boaf.features.batch import FeaturesStopped, feature_matrix
from boaf.features.compiled import (
    N_FEATURES,
    _card_features,
    _stacks_in,
    line_features,
    load_stacks,
    scratch_for,
    tables_for,
)
from boaf.features.compiled_graph import _degree_features, component_features
from boaf.features.schema import FEATURE_INDEX
from boaf.game.bits import lowest_bit
from boaf.game.graph import U0, U1, bit
from boaf.game.state import State

#: The features summed up over the children, in schema order.
CHILD_BASE: tuple[str, ...] = (
    "flockability",
    "avg_flockability",
    "degree_min",
    "degree_max",
    "degree_median",
    "degree_mean",
    "odd_birds",
    "components",
    "is_connected",
    "mobility",
    "mobility_per_card",
    "mobility_flockability_ratio",
    "rank_clusters",
    "rank_std",
    "suit_dominance",
    "dominant_suit_ratio",
    "suit_diversity",
    "rank_diversity",
    "suit_ratio_c",
    "suit_ratio_d",
    "suit_ratio_h",
    "suit_ratio_s",
    "aces",
    "kings",
    "rc_count_min",
    "rc_count_max",
    "rc_count_median",
    "rc_count_mean",
    "rc_compat_min",
    "rc_compat_max",
    "rc_compat_median",
    "rc_compat_mean",
)
CHILD_STATS = ("min", "max", "mean")
#: The schema columns of ``CHILD_BASE``, for the kernel.
_BASE_COLUMNS = np.array([FEATURE_INDEX[name] for name in CHILD_BASE], dtype=np.int64)


def child_feature_names() -> list[str]:
    """The columns of ``child_matrix``: ``child_<stat>_<feature>`` by stat, then feature, then ``children``."""
    return [f"child_{stat}_{name}" for stat in CHILD_STATS for name in CHILD_BASE] + ["children"]


def child_matrix(cells: np.ndarray, rows: int, cols: int, *, cancel: np.ndarray | None = None) -> np.ndarray:
    """The (N, len(child_feature_names())) float64 matrix of a batch of valid ``boaf.game.arrays`` cells.

    ``cancel`` is an int64[1] flag another thread may set: the kernel reads it before each
    state, and once it is set the call raises ``FeaturesStopped``.
    """
    cells = np.ascontiguousarray(cells, dtype=np.int8).reshape(-1, rows * cols)
    flag = np.zeros(1, dtype=np.int64) if cancel is None else cancel
    out = np.zeros((cells.shape[0], len(CHILD_STATS) * len(CHILD_BASE) + 1), dtype=np.float64)
    tables = tables_for(rows, cols)
    done = children_kernel(cells, tables, scratch_for(rows * cols, len(tables.primes)), _BASE_COLUMNS, out, flag)
    if done < cells.shape[0]:
        raise FeaturesStopped(f"stopped after the child features of {done} of {cells.shape[0]} states (cancelled)")
    return out


def plain_child_features(state: State) -> np.ndarray:
    """The definition ``child_matrix`` is held to, one state at a time: every legal move made with
    ``State.apply``, each child's features from ``feature_matrix``, their minimum, maximum and mean, and how many."""
    children = [state.apply(move) for move in state.legal_moves()]
    if not children:
        return np.zeros(len(CHILD_STATS) * len(CHILD_BASE) + 1)
    columns = feature_matrix(children)[:, _BASE_COLUMNS]
    return np.concatenate([columns.min(axis=0), columns.max(axis=0), columns.mean(axis=0), [len(children)]])


@numba.njit(cache=True, nogil=True, inline="always")
def _without(mask, a):
    """``mask`` over stacks 0 … n-1 renumbered for the child without stack ``a``: bits above ``a`` move down one."""
    below = (U1 << np.uint64(a)) - U1
    return (mask & below) | ((mask >> np.uint64(a + 1)) << np.uint64(a))


@numba.njit(cache=True, nogil=True, inline="always")
def _child_row(parent, a, b, tables, scratch, row, kid):
    """The ``CHILD_BASE`` features (and ``n_stacks``) of the child of ``parent`` where stack ``a`` went onto stack
    ``b``, into ``row``.

    ``parent`` is ``(cards, cell_of, adj, mates, n)``: the parent's stacks in row-major order, G's bitsets and each
    stack's line mates as a mask. The child's are made from them in O(n): a's card takes b's place, a's cell
    empties, and the stacks after ``a`` are renumbered one down (``_without``), which keeps row-major order.
    Stack i of the child other than b is G-adjacent to b when its card is compatible with a's (bit i of adj[a]);
    b's neighbours are a's. ``kid`` is ``(cards, cell_of, adj, mates)``, work arrays for the child.
    """
    cards, cell_of, adj, mates, n = parent
    kid_cards, kid_cell, kid_adj, kid_mates = kid
    drop = ~(bit(a) | bit(b))
    m = np.int64(0)
    for i in range(n):
        if i == a:
            continue
        if i == b:
            kid_cards[m] = cards[a]
            kid_adj[m] = _without(adj[a] & drop, a)
        else:
            kid_cards[m] = cards[i]
            joined = bit(b) if adj[a] & bit(i) != U0 else U0
            kid_adj[m] = _without((adj[i] & drop) | joined, a)
        kid_cell[m] = cell_of[i]
        kid_mates[m] = _without(mates[i] & ~bit(a), a)
        m += 1
    _degree_features(kid_adj, m, scratch, row)
    component_features(kid_adj, (U1 << np.uint64(m)) - U1, row)
    _card_features(kid_cards, m, scratch, row)
    line_features(kid_adj, kid_mates, m, scratch, row)


@numba.njit(cache=True, nogil=True)
def children_kernel(cells, tables, scratch, columns, out, cancel):
    """Fill ``out[s]`` with the summed-up child features of state ``s``; returns the states filled (fewer than
    N when ``cancel`` was set).

    ``columns`` holds the schema columns summed up (k of them): ``out[s, :k]`` gets their minima,
    ``[k:2k]`` their maxima, ``[2k:3k]`` their means and ``[3k]`` the number of children.
    """
    n_states, n_cells = cells.shape
    k = columns.shape[0]
    cards = np.empty(n_cells, dtype=np.int64)
    cell_of = np.empty(n_cells, dtype=np.int64)
    adj = np.empty(n_cells, dtype=np.uint64)
    mates = np.empty(n_cells, dtype=np.uint64)
    kid = (
        np.empty(n_cells, dtype=np.int64),
        np.empty(n_cells, dtype=np.int64),
        np.empty(n_cells, dtype=np.uint64),
        np.empty(n_cells, dtype=np.uint64),
    )
    row = np.zeros(N_FEATURES, dtype=np.float64)
    for s in range(n_states):
        if cancel[0] != 0:
            return s
        n = load_stacks(cells[s], tables.compat, cards, cell_of, adj)
        for i in range(n):
            mates[i] = _stacks_in(tables.line[cell_of[i]], cell_of, n)
        parent = (cards, cell_of, adj, mates, n)
        low, high, total = out[s, :k], out[s, k : 2 * k], out[s, 2 * k : 3 * k]
        low[:] = np.inf
        high[:] = -np.inf
        total[:] = 0.0
        children = 0
        for a in range(n):
            targets = mates[a] & adj[a]
            while targets != U0:
                b = lowest_bit(targets)
                targets &= targets - U1
                _child_row(parent, a, b, tables, scratch, row, kid)
                for q in range(k):
                    x = row[columns[q]]
                    low[q] = min(low[q], x)
                    high[q] = max(high[q], x)
                    total[q] += x
                children += 1
        if children == 0:
            out[s, : 3 * k] = 0.0
        else:
            for q in range(k):
                total[q] /= children
        out[s, 3 * k] = children
    return n_states
