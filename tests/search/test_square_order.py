"""The order above 16 stacks: each child's sum of squared degrees, computed from bit planes (``_square_scores``)."""

from __future__ import annotations

import numpy as np
import pytest

from boaf import search
from boaf.game.graph import compat_table
from boaf.search.kernel.order import TIE_BREAK, _square_scores


def squared_degrees(cards: list[int], compat: np.ndarray) -> int:
    mask = sum(1 << c for c in cards)
    return sum(bin(int(compat[c]) & mask).count("1") ** 2 for c in cards)


@pytest.mark.parametrize("size", [17, 30, 52])
def test_the_bit_plane_scores_are_the_children_s_squared_degrees_less_the_parent_s(size: int) -> None:
    compat = compat_table()
    rng = np.random.default_rng(size)
    for _ in range(20):
        cards = sorted(int(c) for c in rng.choice(52, size, replace=False))
        present = np.uint64(sum(1 << c for c in cards))
        scores = np.zeros(52)
        _square_scores(present, present, compat, scores)
        parent = squared_degrees(cards, compat)
        for y in cards:
            rest = [c for c in cards if c != y]
            edges_lost = bin(int(compat[y]) & int(present)).count("1")
            assert scores[y] == pytest.approx(squared_degrees(rest, compat) - parent - TIE_BREAK * edges_lost)


def test_every_4x13_deal_of_1_to_200_settles_within_a_node_budget() -> None:
    # Flockability alone left 158 and 190 unsettled after 1 s (1.5-2.6M nodes over the 200 deals).
    batch = search.solve_deals(np.arange(1, 201), rows=4, cols=13, max_nodes=100_000)
    assert search.UNKNOWN not in batch.status
    assert int(batch.nodes.sum()) < 200_000
