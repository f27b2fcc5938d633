"""The compiled batch path equals the reference: exactly on integers, to 1e-9 on floats."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from strategies import states

from boaf.features import SCHEMA_VERSION, compute_features, feature_matrix, feature_names, feature_table, state_features
from boaf.features.batch import CHUNK_STATES, FeatureBatch, FeaturesStopped, arrow_schema
from boaf.features.schema import BIG_INTEGER_FEATURES, FEATURE_INDEX, INTEGER_FEATURES, is_integer_feature
from boaf.game import InvalidState, State, deal, parse_grid, random_states
from boaf.game.arrays import states_to_array


def assert_matches_reference(batch: FeatureBatch, batch_states: list[State]) -> None:
    names = feature_names()
    for i, state in enumerate(batch_states):
        expected = state_features(state)
        for name in names:
            if name in BIG_INTEGER_FEATURES:
                assert int(batch.exact[name][i]) == expected[name], (name, state)
                assert batch.matrix[i, FEATURE_INDEX[name]] == float(expected[name]), (name, state)
            elif is_integer_feature(name):
                assert batch.matrix[i, FEATURE_INDEX[name]] == expected[name], (name, state)
            else:
                assert batch.matrix[i, FEATURE_INDEX[name]] == pytest.approx(expected[name], abs=1e-9), (name, state)


def test_random_4x4_states_of_every_size_match_the_reference() -> None:
    batch_states = random_states(2024, 2000)
    assert {s.n_stacks for s in batch_states} == set(range(1, 17))
    assert_matches_reference(compute_features(states_to_array(batch_states)), batch_states)


def test_deals_match_the_reference() -> None:
    batch_states = [deal(seed) for seed in range(200)]
    assert_matches_reference(compute_features(batch_states), batch_states)


@pytest.mark.parametrize(("rows", "cols", "count"), [(3, 5, 300), (1, 7, 100), (5, 4, 150), (6, 8, 25)])
def test_other_grids_match_the_reference(rows: int, cols: int, count: int) -> None:
    batch_states = random_states(rows * 100 + cols, count, rows=rows, cols=cols)
    assert_matches_reference(compute_features(batch_states), batch_states)


def test_mixed_grid_shapes_keep_input_order() -> None:
    batch_states = [deal(1), *random_states(5, 20, rows=2, cols=3), deal(2), *random_states(6, 20, rows=5, cols=5)]
    assert_matches_reference(compute_features(batch_states), batch_states)


@settings(max_examples=150, deadline=None)
@given(states())
def test_any_state_matches_the_reference(state: State) -> None:
    assert_matches_reference(compute_features([state]), [state])


def test_large_grids_keep_exact_integers_beyond_int64() -> None:
    full = random_states(11, 3, rows=7, cols=7, stacks=49)
    table = feature_table(full)
    trees = [state_features(s)["spanning_trees"] for s in full]
    assert all(t > np.iinfo(np.int64).max for t in trees)
    assert table.column("spanning_trees").null_count == 3
    assert [int(t) for t in table.column("spanning_trees_text").to_pylist()] == trees


def test_feature_table_schema_and_exact_int64() -> None:
    table = feature_table([deal(1163), parse_grid("AC KD")])
    assert table.schema.equals(arrow_schema())
    assert table.schema.metadata[b"boaf.features.schema"] == SCHEMA_VERSION.encode()
    assert table.column_names[: len(feature_names())] == feature_names()
    assert table.column("spanning_trees").to_pylist() == [185552640, 0]
    assert table.column("spanning_trees_text").null_count == 2
    for name in INTEGER_FEATURES:
        assert table.schema.field(name).type == pa.int64()


def test_spanning_trees_above_2_to_53_are_exact() -> None:
    # All clubs plus a run of diamonds: dense enough that the count passes 2^53.
    # (No 16-card state does: its most is about 3e14, so 4x4 floats are exact.)
    state = parse_grid("AC 2C 3C 4C 5C 6C/7C 8C 9C TC JC QC/KC 5D 6D 7D 8D 9D")
    exact = state_features(state)["spanning_trees"]
    assert 2**53 < exact < 2**63
    assert compute_features([state]).exact["spanning_trees"][0] == exact
    assert feature_table([state]).column("spanning_trees").to_pylist() == [exact]


def test_spanning_trees_beyond_int64_go_to_the_text_column() -> None:
    state = parse_grid("AC 2C 3C 4C 5C/6C 7C 8C 9C TC/JC QC KC 4D 5D/6D 7D 8D 9D TD")
    exact = state_features(state)["spanning_trees"]
    assert exact > 2**63
    table = feature_table([state])
    assert table.column("spanning_trees").to_pylist() == [None]
    assert table.column("spanning_trees_text").to_pylist() == [str(exact)]


def test_empty_batch() -> None:
    assert feature_matrix([]).shape == (0, len(feature_names()))


@pytest.mark.parametrize(
    ("cells", "shape", "match"),
    [
        (np.full((2, 16), -1, dtype=np.int8), {}, "state 0: no stacks"),
        (np.array([[0, 0] + [-1] * 14], dtype=np.int8), {}, "state 0: a card appears twice"),
        (np.array([[0, 60] + [-1] * 14], dtype=np.int8), {}, "cells must hold -1"),
        (np.zeros((1, 15), dtype=np.int8), {}, "needs rows and cols"),
        (np.zeros((1, 6), dtype=np.int8), {"rows": 2, "cols": 2}, "does not match"),
        (np.zeros(16, dtype=np.int8), {}, "2-dimensional"),
    ],
)
def test_bad_arrays_are_refused(cells: np.ndarray, shape: dict[str, int], match: str) -> None:
    with pytest.raises(InvalidState, match=match):
        feature_matrix(cells, **shape)


def test_a_batch_of_several_chunks_equals_its_parts() -> None:
    cells = states_to_array(random_states(7, 2 * CHUNK_STATES + 3))
    whole, head, tail = compute_features(cells), compute_features(cells[:5]), compute_features(cells[5:])
    np.testing.assert_array_equal(whole.matrix, np.concatenate([head.matrix, tail.matrix]))
    for name in BIG_INTEGER_FEATURES:
        assert list(whole.exact[name]) == list(head.exact[name]) + list(tail.exact[name])


def test_a_set_cancel_flag_stops_the_kernel_before_the_next_state() -> None:
    cells = states_to_array([deal(seed, rows=4, cols=13) for seed in range(3)])
    with pytest.raises(FeaturesStopped, match="0 of 3 states"):
        feature_matrix(cells, 4, 13, cancel=np.ones(1, dtype=np.int64))
    assert feature_matrix(cells, 4, 13, cancel=np.zeros(1, dtype=np.int64)).shape[0] == 3
