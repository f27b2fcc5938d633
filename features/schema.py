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


#: One row of the README table: the features it names (with their kinds), its meaning and its source.
_Row = tuple[dict[str, Kind], str, str]


def _topic(topic: Topic, *rows: _Row) -> tuple[Feature, ...]:
    """The features of ``rows``, all of ``topic``; a row of several features gives them one meaning."""
    return tuple(
        Feature(name, kind, topic, meaning, source) for names, meaning, source in rows for name, kind in names.items()
    )


_INT, _REAL, _BIG = Kind.INTEGER, Kind.REAL, Kind.BIG_INTEGER
_STATS = ("min", "max", "median", "mean")
_STAT_KINDS = (_INT, _INT, _REAL, _REAL)


def _stats(prefix: str) -> dict[str, Kind]:
    """``prefix_min``, ``_max`` (integers of integer values), ``_median`` and ``_mean``."""
    return {f"{prefix}_{stat}": kind for stat, kind in zip(_STATS, _STAT_KINDS, strict=True)}


_ISLANDS = "components left when every bridge is removed (2-edge-connected components; an isolated node is one)"

#: Every feature, in column order; the README's feature table has one row per ``_Row`` here.
FEATURES: tuple[Feature, ...] = (
    # The compatibility graph G: one node per stack, an edge per compatible pair.
    *_topic(
        Topic.DEGREE,
        ({"n_stacks": _INT}, "n", "all"),
        ({"flockability": _INT}, 'edges of G (Kahn\'s "pair count")', "Neller 2019"),
        ({"avg_flockability": _REAL}, "edges / n", "Neller–Ziegler"),
        (_stats("degree"), "degrees in G", "Araki"),
        ({"odd_birds": _INT}, "nodes of degree 0 (0 when n = 1: a lone stack is solved)", "Neller 2019"),
    ),
    *_topic(
        Topic.CONNECTIVITY,
        ({"components": _INT, "is_connected": _INT}, "connected components of G; 1/0", "Araki, Neller"),
    ),
    *_topic(
        Topic.CRITICAL,
        ({"articulation_points": _INT}, "cut vertices (of any component)", "Araki"),
        ({"critical_nodes": _INT}, "articulation points ∪ degree-1 nodes", "Araki"),
        ({"critical_edges": _INT}, "edges whose two ends are both critical", "Araki"),
    ),
    *_topic(
        Topic.ISLANDS,
        ({"islands": _INT}, _ISLANDS, "Araki (our reading)"),
        ({"exterior_islands": _INT}, "islands touching exactly one bridge", "Araki (our reading)"),
    ),
    *_topic(
        Topic.CONNECTIVITY,
        ({"node_connectivity": _INT}, "vertex connectivity; 0 if disconnected or n ≤ 1, n−1 if complete", "Araki"),
        ({"diameter": _INT}, "longest finite shortest path, in edges (0 without edges)", "Neller 2019"),
    ),
    # Kahn's matrix features.
    *_topic(
        Topic.MATRICES,
        ({"spanning_trees": _BIG}, "Kirchhoff count, exact (1 for n = 1, 0 if disconnected)", "Kahn"),
        ({"adjacency_det": _BIG}, "abs(det A), exact (0 for n = 1)", "Kahn"),
        ({"a2_zeros": _INT}, "zero entries of A·A (n×n, diagonal included)", "Kahn"),
    ),
    # Legal moves now (positions matter).
    *_topic(
        Topic.POSITIONS,
        ({"mobility": _INT}, "unordered stack pairs that form a legal move now", "Neller 2019"),
        ({"mobility_per_card": _REAL}, "mobility / n", "Neller 2019"),
        ({"mobility_flockability_ratio": _REAL}, "mobility / flockability (0 when flockability is 0)", "Neller 2019"),
    ),
    *_topic(
        Topic.CARDS,
        ({"rank_clusters": _INT}, "maximal runs of consecutive present ranks (A–K do not wrap)", "Neller 2019"),
        ({"rank_std": _REAL}, "population std of ranks, A=1 … K=13", "Neller, Araki"),
        ({"suit_dominance": _REAL}, "(largest − smallest suit count) / n over all 4 suits", "Neller 2019"),
        ({"dominant_suit_ratio": _REAL}, "largest suit count / n", "Neller–Ziegler"),
        ({"suit_diversity": _INT}, "suits present", "Neller–Ziegler"),
        ({"rank_diversity": _INT}, "distinct ranks present", "Neller–Ziegler"),
        ({f"suit_ratio_{suit}": _REAL for suit in "cdhs"}, "suit count / n", "Araki"),
        ({"aces": _INT, "kings": _INT}, "count of A, of K", "Araki"),
    ),
    # Rows and columns.
    *_topic(
        Topic.POSITIONS,
        (_stats("rc_count"), "per stack: other stacks in its row or column", "Araki"),
        (_stats("rc_compat"), "per stack: legal moves from it now", "Araki"),
    ),
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
