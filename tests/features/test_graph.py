"""Graph features on hand-built graphs with known answers, for the reference and the kernel."""

from __future__ import annotations

from typing import Any

import igraph
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boaf.features import compiled as kernel
from boaf.features.batch import from_digits
from boaf.features.determinants import adjacency_determinant, integer_determinant, spanning_tree_count
from boaf.features.graph import graph_features
from boaf.features.schema import FEATURE_INDEX, GRAPH_TOPICS, names_of

GRAPHS: dict[str, tuple[int, list[tuple[int, int]]]] = {
    "single node": (1, []),
    "path of 4": (4, [(0, 1), (1, 2), (2, 3)]),
    "star of 4": (4, [(0, 1), (0, 2), (0, 3)]),
    "cycle of 5": (5, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)]),
    "two triangles and a bridge": (6, [(0, 1), (1, 2), (0, 2), (2, 3), (3, 4), (4, 5), (3, 5)]),
    "complete 5": (5, [(i, j) for i in range(5) for j in range(i + 1, 5)]),
    "edge and odd bird": (3, [(0, 1)]),
}

# Every graph feature but avg_flockability (flockability / n), which has no hand-worked column below.
COLUMNS = [name for name in names_of(*GRAPH_TOPICS) if name != "avg_flockability"]

# One row per graph, values in COLUMNS order, worked out by hand.
EXPECTED: dict[str, tuple[float, ...]] = {
    "single node": (1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1),
    "path of 4": (4, 3, 1, 2, 1.5, 1.5, 0, 1, 1, 2, 4, 3, 4, 2, 1, 3, 1, 1, 8),
    "star of 4": (4, 3, 1, 3, 1, 1.5, 0, 1, 1, 1, 4, 3, 4, 3, 1, 2, 1, 0, 6),
    "cycle of 5": (5, 5, 2, 2, 2, 2, 0, 1, 1, 0, 0, 0, 1, 0, 2, 2, 5, 2, 10),
    "two triangles and a bridge": (6, 7, 2, 3, 2, 14 / 6, 0, 1, 1, 2, 2, 1, 2, 2, 1, 3, 9, 3, 10),
    "complete 5": (5, 10, 4, 4, 4, 4, 0, 1, 1, 0, 0, 0, 1, 0, 4, 1, 125, 4, 0),
    "edge and odd bird": (3, 1, 0, 1, 1, 2 / 3, 1, 2, 0, 0, 2, 1, 3, 2, 0, 1, 0, 0, 7),
}


def build(name: str) -> igraph.Graph:
    n, edges = GRAPHS[name]
    return igraph.Graph(n=n, edges=edges)


def kernel_values(g: igraph.Graph) -> dict[str, Any]:
    adjacency = np.array(g.get_adjacency().data, dtype=np.int64).reshape(g.vcount(), g.vcount())
    row, digits = kernel.graph_row(adjacency)
    values: dict[str, Any] = {name: row[FEATURE_INDEX[name]] for name in COLUMNS}
    primes = kernel.PRIMES[: digits.shape[1]]
    values["spanning_trees"] = int(from_digits(digits[None, kernel.SPANNING], primes, signed=False)[0])
    values["adjacency_det"] = int(from_digits(digits[None, kernel.DETERMINANT], primes, signed=True)[0])
    return values


@pytest.mark.parametrize("name", list(GRAPHS))
def test_reference_graph_features(name: str) -> None:
    got = graph_features(build(name))
    assert [got[c] for c in COLUMNS] == pytest.approx(list(EXPECTED[name]), abs=1e-12)


@pytest.mark.parametrize("name", list(GRAPHS))
def test_kernel_graph_features(name: str) -> None:
    got = kernel_values(build(name))
    assert [got[c] for c in COLUMNS] == pytest.approx(list(EXPECTED[name]), abs=1e-12)


def test_empty_graph_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one node"):
        graph_features(igraph.Graph())


@pytest.mark.parametrize(
    ("matrix", "det"),
    [([], 1), ([[7]], 7), ([[0, 1], [1, 0]], -1), ([[0, 2, 1], [3, 0, 4], [5, 6, 0]], 2 * 4 * 5 + 1 * 3 * 6)],
)
def test_integer_determinant(matrix: list[list[int]], det: int) -> None:
    assert integer_determinant(matrix) == det


def test_spanning_trees_of_complete_16_exceed_float_exactness() -> None:
    complete = [[int(i != j) for j in range(16)] for i in range(16)]
    assert spanning_tree_count(complete) == 16**14  # Cayley; > 2^53
    assert adjacency_determinant(complete) == 15


def test_kernel_exact_integers_on_complete_16() -> None:
    complete = np.ones((16, 16), dtype=np.int64) - np.eye(16, dtype=np.int64)
    _, digits = kernel.graph_row(complete)
    p0 = int(kernel.PRIMES[0])
    assert int(digits[kernel.SPANNING, 0]) + int(digits[kernel.SPANNING, 1]) * p0 == 16**14


@st.composite
def graphs(draw: st.DrawFn) -> igraph.Graph:
    n = draw(st.integers(1, 14))
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    density = draw(st.floats(0.0, 1.0))
    edges = [pair for pair in pairs if draw(st.floats(0.0, 1.0)) < density]
    return igraph.Graph(n=n, edges=edges)


@settings(max_examples=300, deadline=None)
@given(graphs())
def test_kernel_equals_reference_on_any_graph(g: igraph.Graph) -> None:
    # Card graphs are special (suits form cliques); arbitrary graphs stress the flows and bridges.
    expected = graph_features(g)
    got = kernel_values(g)
    assert [got[c] for c in COLUMNS] == pytest.approx([expected[c] for c in COLUMNS], abs=1e-12)


@pytest.mark.parametrize("density", [0.03, 0.08, 0.3, 0.9])
def test_kernel_equals_reference_on_graphs_of_up_to_52_nodes(density: float) -> None:
    # A whole deck's stacks: nodes up to bit 51 of boaf.game.graph's uint64 masks; the sparse graphs are disconnected,
    # with cut vertices in several components (articulation points count them all).
    rng = np.random.default_rng(round(density * 100))
    for n in (33, 52):
        upper = np.triu(rng.random((n, n)) < density, 1)
        g = igraph.Graph(n=n, edges=[(int(a), int(b)) for a, b in np.argwhere(upper)])
        expected = graph_features(g)
        got = kernel_values(g)
        assert [got[c] for c in COLUMNS] == pytest.approx([expected[c] for c in COLUMNS], abs=1e-12)
        assert (got["spanning_trees"], got["adjacency_det"]) == (expected["spanning_trees"], expected["adjacency_det"])
