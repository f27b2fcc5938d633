"""The feature schema: one declaration of every feature, and what is derived from it.

``FEATURES`` is the only place a feature is declared. Its order is the column
order of every feature matrix, table and export; the names, the integer
features, the kernel's column constants and the README's feature table all
follow from it (a test holds the README table to it).

``SCHEMA_VERSION`` must change whenever a name, the order or a definition
changes, so that a model trained on one schema is never fed another.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

SCHEMA_VERSION = "boaf-features-1"


class Kind(Enum):
    """What values a feature takes."""

    REAL = "real"
    #: Always a whole number: a count, a 0/1 flag or an exact integer that fits int64.
    INTEGER = "integer"
    #: An exact integer that can outgrow int64 (and float64 exactness) on large grids.
    #: Both such features fit int64 for every state of at most 17 stacks, hence every
    #: 4x4 state (Cayley: at most n^(n-2) spanning trees; Hadamard: |det A| <= (n-1)^(n/2)).
    BIG_INTEGER = "big integer"


class Topic(Enum):
    """What a feature describes; the reference and the kernel compute one topic at a time."""

    DEGREE = "degree"
    CONNECTIVITY = "connectivity"
    CRITICAL = "critical"
    ISLANDS = "islands"
    MATRICES = "matrices"
    CARDS = "cards"
    POSITIONS = "positions"


#: Topics of the compatibility graph G alone: neither the cards' ranks nor their cells matter.
GRAPH_TOPICS = frozenset({Topic.DEGREE, Topic.CONNECTIVITY, Topic.CRITICAL, Topic.ISLANDS, Topic.MATRICES})


@dataclass(frozen=True)
class Feature:
    """One column of the feature vector; ``meaning`` and ``source`` are its row of the README table."""

    name: str
    kind: Kind
    topic: Topic
    meaning: str
    source: str


def _family(names: dict[str, Kind], topic: Topic, meaning: str, source: str) -> tuple[Feature, ...]:
    """Features that share one meaning and source, and so one row of the README table."""
    return tuple(Feature(name, kind, topic, meaning, source) for name, kind in names.items())


_INT, _REAL, _BIG = Kind.INTEGER, Kind.REAL, Kind.BIG_INTEGER
_STATS = ("min", "max", "median", "mean")
_STAT_KINDS = (_INT, _INT, _REAL, _REAL)


def _stats(prefix: str) -> dict[str, Kind]:
    """``prefix_min``, ``_max`` (integers of integer values), ``_median`` and ``_mean``."""
    return {f"{prefix}_{stat}": kind for stat, kind in zip(_STATS, _STAT_KINDS, strict=True)}


FEATURES: tuple[Feature, ...] = (
    # The compatibility graph G: one node per stack, an edge per compatible pair.
    Feature("n_stacks", _INT, Topic.DEGREE, "n", "all"),
    Feature("flockability", _INT, Topic.DEGREE, 'edges of G (Kahn\'s "pair count")', "Neller 2019"),
    Feature("avg_flockability", _REAL, Topic.DEGREE, "edges / n", "Neller–Ziegler"),
    *_family(_stats("degree"), Topic.DEGREE, "degrees in G", "Araki"),
    Feature("odd_birds", _INT, Topic.DEGREE, "nodes of degree 0 (0 when n = 1: a lone stack is solved)", "Neller 2019"),
    *_family(
        {"components": _INT, "is_connected": _INT},
        Topic.CONNECTIVITY,
        "connected components of G; 1/0",
        "Araki, Neller",
    ),
    Feature("articulation_points", _INT, Topic.CRITICAL, "cut vertices (of any component)", "Araki"),
    Feature("critical_nodes", _INT, Topic.CRITICAL, "articulation points ∪ degree-1 nodes", "Araki"),
    Feature("critical_edges", _INT, Topic.CRITICAL, "edges whose two ends are both critical", "Araki"),
    Feature(
        "islands",
        _INT,
        Topic.ISLANDS,
        "components left when every bridge is removed (2-edge-connected components; an isolated node is one)",
        "Araki (our reading)",
    ),
    Feature("exterior_islands", _INT, Topic.ISLANDS, "islands touching exactly one bridge", "Araki (our reading)"),
    Feature(
        "node_connectivity",
        _INT,
        Topic.CONNECTIVITY,
        "vertex connectivity; 0 if disconnected or n ≤ 1, n−1 if complete",
        "Araki",
    ),
    Feature(
        "diameter", _INT, Topic.CONNECTIVITY, "longest finite shortest path, in edges (0 without edges)", "Neller 2019"
    ),
    # Kahn's matrix features.
    Feature("spanning_trees", _BIG, Topic.MATRICES, "Kirchhoff count, exact (1 for n = 1, 0 if disconnected)", "Kahn"),
    Feature("adjacency_det", _BIG, Topic.MATRICES, "abs(det A), exact (0 for n = 1)", "Kahn"),
    Feature("a2_zeros", _INT, Topic.MATRICES, "zero entries of A·A (n×n, diagonal included)", "Kahn"),
    # Legal moves now (positions matter).
    Feature("mobility", _INT, Topic.POSITIONS, "unordered stack pairs that form a legal move now", "Neller 2019"),
    Feature("mobility_per_card", _REAL, Topic.POSITIONS, "mobility / n", "Neller 2019"),
    Feature(
        "mobility_flockability_ratio",
        _REAL,
        Topic.POSITIONS,
        "mobility / flockability (0 when flockability is 0)",
        "Neller 2019",
    ),
    # Cards.
    Feature(
        "rank_clusters",
        _INT,
        Topic.CARDS,
        "maximal runs of consecutive present ranks (A–K do not wrap)",
        "Neller 2019",
    ),
    Feature("rank_std", _REAL, Topic.CARDS, "population std of ranks, A=1 … K=13", "Neller, Araki"),
    Feature(
        "suit_dominance", _REAL, Topic.CARDS, "(largest − smallest suit count) / n over all 4 suits", "Neller 2019"
    ),
    Feature("dominant_suit_ratio", _REAL, Topic.CARDS, "largest suit count / n", "Neller–Ziegler"),
    Feature("suit_diversity", _INT, Topic.CARDS, "suits present", "Neller–Ziegler"),
    Feature("rank_diversity", _INT, Topic.CARDS, "distinct ranks present", "Neller–Ziegler"),
    *_family({f"suit_ratio_{suit}": _REAL for suit in "cdhs"}, Topic.CARDS, "suit count / n", "Araki"),
    *_family({"aces": _INT, "kings": _INT}, Topic.CARDS, "count of A, of K", "Araki"),
    # Rows and columns.
    *_family(_stats("rc_count"), Topic.POSITIONS, "per stack: other stacks in its row or column", "Araki"),
    *_family(_stats("rc_compat"), Topic.POSITIONS, "per stack: legal moves from it now", "Araki"),
)

#: Column index of each feature in a feature matrix.
FEATURE_INDEX: dict[str, int] = {feature.name: i for i, feature in enumerate(FEATURES)}

#: Features whose value is always a whole number (counts, 0/1 flags, exact integers).
INTEGER_FEATURES: tuple[str, ...] = tuple(f.name for f in FEATURES if f.kind is not Kind.REAL)

#: Exact integers that can outgrow int64 (and float64 exactness) on large grids.
BIG_INTEGER_FEATURES: tuple[str, ...] = tuple(f.name for f in FEATURES if f.kind is Kind.BIG_INTEGER)

_INTEGER_SET = frozenset(INTEGER_FEATURES)


def feature_names() -> list[str]:
    """The feature names in schema order (a fresh list; safe to modify)."""
    return list(FEATURE_INDEX)


def is_integer_feature(name: str) -> bool:
    """True when ``name`` always takes whole-number values."""
    return name in _INTEGER_SET


def names_of(*topics: Topic) -> list[str]:
    """The names of the features of these topics, in schema order."""
    return [f.name for f in FEATURES if f.topic in topics]
