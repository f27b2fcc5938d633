"""Kernel pieces against plain definitions: graph measures, deals, the ordering model."""

from __future__ import annotations

import json
from pathlib import Path

import igraph
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import search
from game import compatible, deal_cards
from search import kernel
from search.ordering import read_ordering, subset_h

card_sets = st.lists(st.integers(0, 51), min_size=0, max_size=20, unique=True)


def graph(cards: list[int]) -> igraph.Graph:
    edges = [(i, j) for i in range(len(cards)) for j in range(i + 1, len(cards)) if compatible(cards[i], cards[j])]
    return igraph.Graph(n=len(cards), edges=edges)


def mask(cards: list[int]) -> np.uint64:
    return np.uint64(sum(1 << c for c in cards))


@given(cards=card_sets)
@settings(max_examples=300, deadline=None)
def test_subset_h_matches_igraph(cards: list[int]) -> None:
    g = graph(cards)
    n = len(cards)
    connected = n > 1 and g.is_connected()
    kappa = 0 if not connected else (n - 1 if g.ecount() == n * (n - 1) // 2 else g.vertex_connectivity())
    degrees = g.degree() or [0]
    assert subset_h(cards) == (min(degrees), max(degrees), kappa)


@given(cards=card_sets)
@settings(max_examples=300, deadline=None)
def test_cut_vertices_are_the_articulation_points(cards: list[int]) -> None:
    g = graph(cards)
    scratch = np.empty((4, 64), dtype=np.int64)
    cuts, connected = kernel.cut_vertices(
        mask(cards), kernel.compat_table(), scratch[0], scratch[1], scratch[2], scratch[3], np.empty(64, np.uint64)
    )
    assert connected == (len(cards) <= 1 or g.is_connected())
    if connected:
        assert cuts == mask([cards[v] for v in g.articulation_points()])


@given(seeds=st.lists(st.integers(-(2**31), 2**31 - 1), min_size=1, max_size=5))
@settings(deadline=None)  # the first call loads the compiled kernel
def test_deals_in_the_kernel_are_the_game_deals(seeds: list[int]) -> None:
    dealt = kernel.deal_cells(np.array(seeds, dtype=np.int64), 52)
    assert [row.tolist() for row in dealt] == [deal_cards(s) for s in seeds]


def test_the_committed_ordering_model_reads(tmp_path: Path) -> None:
    model = search.default_ordering()
    assert 2 <= model.cutoff <= 16 and len(model.coefficients) == 3
    bad = tmp_path / "ordering.json"
    bad.write_text(json.dumps({"features": ["degree_min"], "intercept": 0, "coefficients": [1], "cutoff": 3}))
    with pytest.raises(search.InvalidOrderingModel, match="features must be"):
        read_ordering(bad)
    with pytest.raises(search.InvalidOrderingModel, match="ordering model"):
        read_ordering(tmp_path / "missing.json")
