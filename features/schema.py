"""The feature schema: names, order, kinds and the version string.

The order here is the column order of every feature matrix, table and export.
``SCHEMA_VERSION`` must change whenever a name, the order or a definition
changes, so that a model trained on one schema is never fed another.
"""

from __future__ import annotations

SCHEMA_VERSION = "boaf-features-1"

#: Features whose value is always a whole number (counts, 0/1 flags, exact integers).
INTEGER_FEATURES: tuple[str, ...] = (
    "n_stacks",
    "flockability",
    "degree_min",
    "degree_max",
    "odd_birds",
    "components",
    "is_connected",
    "articulation_points",
    "critical_nodes",
    "critical_edges",
    "islands",
    "exterior_islands",
    "node_connectivity",
    "diameter",
    "spanning_trees",
    "adjacency_det",
    "a2_zeros",
    "mobility",
    "rank_clusters",
    "suit_diversity",
    "rank_diversity",
    "aces",
    "kings",
    "rc_count_min",
    "rc_count_max",
    "rc_compat_min",
    "rc_compat_max",
)

#: Exact integers that can outgrow int64 (and float64 exactness) on large grids.
#: Both fit int64 for every state of at most 17 stacks, hence every 4x4 state
#: (Cayley: at most n^(n-2) spanning trees; Hadamard: |det A| <= (n-1)^(n/2)).
BIG_INTEGER_FEATURES: tuple[str, ...] = ("spanning_trees", "adjacency_det")

_NAMES: tuple[str, ...] = (
    # The compatibility graph G: one node per stack, an edge per compatible pair.
    "n_stacks",
    "flockability",
    "avg_flockability",
    "degree_min",
    "degree_max",
    "degree_median",
    "degree_mean",
    "odd_birds",
    "components",
    "is_connected",
    "articulation_points",
    "critical_nodes",
    "critical_edges",
    "islands",
    "exterior_islands",
    "node_connectivity",
    "diameter",
    # Kahn's matrix features.
    "spanning_trees",
    "adjacency_det",
    "a2_zeros",
    # Legal moves now (positions matter).
    "mobility",
    "mobility_per_card",
    "mobility_flockability_ratio",
    # Cards.
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
    # Rows and columns.
    "rc_count_min",
    "rc_count_max",
    "rc_count_median",
    "rc_count_mean",
    "rc_compat_min",
    "rc_compat_max",
    "rc_compat_median",
    "rc_compat_mean",
)

#: Column index of each feature in a feature matrix.
FEATURE_INDEX: dict[str, int] = {name: i for i, name in enumerate(_NAMES)}


def feature_names() -> list[str]:
    """The feature names in schema order (a fresh list; safe to modify)."""
    return list(_NAMES)


def is_integer_feature(name: str) -> bool:
    """True when ``name`` always takes whole-number values."""
    return name in _INTEGER_SET


_INTEGER_SET = frozenset(INTEGER_FEATURES)
