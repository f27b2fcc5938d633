"""The child features (``boaf.features.children``) against their plain definition."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from strategies import states

from boaf.features.batch import FeaturesStopped
from boaf.features.children import child_feature_names, child_matrix, plain_child_features
from boaf.game import State, deal, parse_grid, random_states
from boaf.game.arrays import states_to_array


def assert_matches_plain(batch_states: list[State]) -> None:
    rows, cols = batch_states[0].rows, batch_states[0].cols
    got = child_matrix(states_to_array(batch_states), rows, cols)
    assert got.shape == (len(batch_states), len(child_feature_names()))
    for state, row in zip(batch_states, got, strict=True):
        np.testing.assert_allclose(row, plain_child_features(state), rtol=0, atol=1e-9, err_msg=str(state))


@pytest.mark.parametrize(
    ("rows", "cols", "count"), [(4, 4, 400), (5, 5, 60), (6, 6, 30), (4, 13, 12), (1, 7, 50), (3, 5, 80)]
)
def test_random_states_match_the_plain_definition(rows: int, cols: int, count: int) -> None:
    assert_matches_plain(random_states(rows * 1000 + cols, count, rows=rows, cols=cols))


def test_whole_deals_match_the_plain_definition() -> None:
    assert_matches_plain([deal(seed) for seed in range(40)])
    assert_matches_plain([deal(seed, rows=4, cols=13) for seed in range(3)])


@settings(max_examples=100, deadline=None)
@given(states(max_cells=20))
def test_any_state_matches_the_plain_definition(state: State) -> None:
    assert_matches_plain([state])


def test_a_state_without_a_move_gets_zeros_and_a_lone_stack_too() -> None:
    stuck = parse_grid("AC KD/. .")  # one row of two stacks that share neither suit nor a near rank
    lone = parse_grid("AC ./. .")
    got = child_matrix(states_to_array([stuck, lone]), 2, 2)
    assert not list(stuck.legal_moves())
    np.testing.assert_array_equal(got, np.zeros_like(got))


def test_the_last_column_counts_the_ordered_moves() -> None:
    pair = parse_grid("AC 2C/. .")  # each may go onto the other: two children, each a lone stack
    got = child_matrix(states_to_array([pair]), 2, 2)[0]
    names = child_feature_names()
    assert got[names.index("children")] == 2
    assert got[names.index("child_mean_flockability")] == 0  # a lone stack has no edge


def test_a_set_cancel_flag_stops_before_the_next_state() -> None:
    cells = states_to_array([deal(seed, rows=4, cols=13) for seed in range(3)])
    with pytest.raises(FeaturesStopped, match="0 of 3 states"):
        child_matrix(cells, 4, 13, cancel=np.ones(1, dtype=np.int64))
    assert child_matrix(cells, 4, 13, cancel=np.zeros(1, dtype=np.int64)).shape[0] == 3
