"""Laws: what features must not depend on."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import states

from boaf.features import compute_features, feature_names, state_features
from boaf.features.schema import FEATURE_INDEX, Topic, names_of
from boaf.game import State

POSITIONAL = set(names_of(Topic.POSITIONS))


def transposed(state: State) -> State:
    cells = [state.cells[r * state.cols + c] for c in range(state.cols) for r in range(state.rows)]
    return State.from_cells(state.cols, state.rows, cells)


@settings(max_examples=100, deadline=None)
@given(states(), st.randoms(use_true_random=False))
def test_graph_and_card_features_ignore_which_cells_hold_the_cards(state: State, rng: object) -> None:
    cells = list(state.cells)
    rng.shuffle(cells)  # type: ignore[attr-defined]
    moved = State.from_cells(state.rows, state.cols, cells)
    before, after = state_features(state), state_features(moved)
    for name in feature_names():
        if name not in POSITIONAL:
            assert after[name] == pytest.approx(before[name], abs=1e-12), name


@settings(max_examples=100, deadline=None)
@given(states())
def test_every_feature_survives_transposing_the_grid(state: State) -> None:
    # Rows become columns, so "same row or column" and hence every feature is unchanged.
    matrix = compute_features([state, transposed(state)]).matrix
    np.testing.assert_allclose(matrix[1], matrix[0], rtol=0, atol=1e-12)


@settings(max_examples=50, deadline=None)
@given(st.lists(states(max_cells=16), min_size=1, max_size=8), st.randoms(use_true_random=False))
def test_batch_rows_do_not_depend_on_batch_order(batch: list[State], rng: object) -> None:
    order = list(range(len(batch)))
    rng.shuffle(order)  # type: ignore[attr-defined]
    matrix = compute_features(batch).matrix
    shuffled = compute_features([batch[i] for i in order]).matrix
    assert (shuffled == matrix[order]).all()
    assert matrix.shape[1] == len(FEATURE_INDEX)
