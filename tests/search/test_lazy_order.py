"""``ORDER_LAZY`` searches exactly what the eager order searches: the same nodes, answers and moves.

The lazy order scores a child with connectivity = minimum degree (an upper
bound) and settles its exact score only when the search reaches it
(``dfs._settle``, with the proof). These tests hold solver v2's order
(``ORDERED_SUBSET_H``) to the eager order (without ``ORDER_LAZY``) node for node, on deals, on random states
of every stack count, and where it matters most: searches that backtrack through
the ordered levels, and the hard deals.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import search
from game import random_states
from search import kernel
from search.algorithms import ORDERED_SUBSET_H
from search.ordering import default_ordering

LAZY = ORDERED_SUBSET_H
EAGER = LAZY.without(kernel.ORDER_LAZY, "ordered-subset-h-eager")


def assert_same_search(lazy: search.BatchResult, eager: search.BatchResult) -> None:
    assert lazy.status == eager.status
    assert search.UNKNOWN not in lazy.status
    assert np.array_equal(lazy.nodes, eager.nodes)
    assert np.array_equal(lazy.path_lengths, eager.path_lengths)
    assert np.array_equal(lazy.paths, eager.paths)


def test_the_served_algorithms_do_not_order_by_subset_h() -> None:
    assert LAZY.options & kernel.ORDER_LAZY and not LAZY.options & kernel.ORDER_SQUARES
    assert search.algorithm_named("ordered").options & kernel.ORDER_SQUARES
    assert not any(a.options & kernel.ORDER_LAZY for a in search.ALGORITHMS.values())


def test_the_lazy_order_searches_the_eager_order_s_nodes_on_deals_0_to_5000() -> None:
    seeds = np.arange(0, 5_001)
    lazy, eager = search.solve_deals(seeds, LAZY), search.solve_deals(seeds, EAGER)
    assert_same_search(lazy, eager)
    assert int(np.sum(lazy.nodes)) > 1_000_000  # backtracking searches, through the lazily ordered levels


def test_the_lazy_order_searches_the_eager_order_s_nodes_on_random_states() -> None:
    states = random_states(2027, 3_000)
    assert_same_search(search.solve_many(states, LAZY), search.solve_many(states, EAGER))


@pytest.mark.parametrize("seed", [-115618, 27363, 1163])
def test_the_lazy_order_searches_the_eager_order_s_nodes_on_hard_deals(seed: int) -> None:
    assert_same_search(search.solve_deals([seed], LAZY), search.solve_deals([seed], EAGER))


@pytest.mark.parametrize("coefficient", [0.0, -0.25])
def test_a_connectivity_weight_of_zero_or_below_gives_the_eager_order(coefficient: float) -> None:
    # The bound needs a score that does not fall as connectivity rises; below zero, the order stays eager.
    model = default_ordering()
    other = dataclasses.replace(model, coefficients=(*model.coefficients[:2], coefficient))
    seeds = np.arange(0, 1_001)
    lazy = search.solve_deals(seeds, LAZY, ordering=other)
    eager = search.solve_deals(seeds, EAGER, ordering=other)
    assert_same_search(lazy, eager)
