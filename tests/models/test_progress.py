"""The budgeted search's progress (the hard model's extra inputs): the compiled batch equals the plain reference."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boaf.game import deal, random_states
from boaf.game.arrays import states_to_array
from boaf.models.inputs import input_names, model_inputs
from boaf.search import SOLVABLE, solve_many
from boaf.search.probe import probe
from boaf.search.progress import PROGRESS_COLUMNS, SOLVED, SPENT, ProgressStopped, progress_reference, search_progress


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), budget=st.integers(1, 400))
def test_the_compiled_batch_equals_the_reference(seed: int, budget: int) -> None:
    states = random_states(seed, 8)
    cells = states_to_array(states)
    got = search_progress(cells, 4, 4, budget)
    for i in range(len(states)):
        np.testing.assert_allclose(got[i], progress_reference(cells[i], 4, 4, budget))


def test_other_grids_and_an_empty_batch() -> None:
    states = random_states(3, 6, rows=3, cols=5)
    cells = states_to_array(states)
    got = search_progress(cells, 3, 5, 50)
    for i in range(len(states)):
        np.testing.assert_allclose(got[i], progress_reference(cells[i], 3, 5, 50))
    assert search_progress(np.zeros((0, 16), dtype=np.int8), 4, 4, 50).shape == (0, len(PROGRESS_COLUMNS))


def test_a_solved_outcome_is_solvable_and_the_budget_holds() -> None:
    states = random_states(7, 200)
    progress = search_progress(states_to_array(states), 4, 4, 100)
    assert np.all(progress[:, 0] <= 100)
    solved = progress[:, PROGRESS_COLUMNS.index("progress_outcome")] == SOLVED
    assert solved.any()
    assert all(s is SOLVABLE for s in solve_many([st for st, ok in zip(states, solved, strict=True) if ok]).status)


def test_an_ffud_is_never_solved_and_its_search_stops_short_of_one_stack() -> None:
    progress = search_progress(states_to_array([deal(1163)]), 4, 4, 300)[0]
    assert progress[PROGRESS_COLUMNS.index("progress_outcome")] == SPENT
    assert progress[PROGRESS_COLUMNS.index("progress_fewest_stacks")] > 1 / 16


def test_model_inputs_append_the_progress_columns_in_input_order() -> None:
    states = random_states(9, 5) + random_states(9, 3, rows=3, cols=3) + random_states(10, 2)
    matrix = model_inputs(states, 0, 120)
    assert matrix.shape == (10, len(input_names(0, 120)))
    assert input_names(0, 120)[-len(PROGRESS_COLUMNS) :] == list(PROGRESS_COLUMNS)
    alone = search_progress(states_to_array(states[5:8]), 3, 3, 120)
    np.testing.assert_allclose(matrix[5:8, -len(PROGRESS_COLUMNS) :], alone.astype(np.float32))


def test_a_set_cancel_flag_stops_the_search_before_the_next_state() -> None:
    cells = states_to_array([deal(seed) for seed in range(4)])
    with pytest.raises(ProgressStopped, match="0 of 4 states"):
        search_progress(cells, 4, 4, 300, cancel=np.ones(1, dtype=np.int64))


# sha256 (first 16 hex digits) of the progress columns (budget 300) and the compatible probe (1,500 nodes) of
# random states, the classifier's search inputs, as the one-file search kernel (276dc88) computed them before
# issue 24 split it into typed, lean parts, and before solver v3 reordered ``ordered`` (issue 25, which is no
# classifier input): the classifier's inputs did not move.
INPUT_DIGESTS = {(4, 4, 400): "b859ba8deebcf432", (5, 5, 60): "2e66c804edc747f1", (4, 13, 20): "b8abf07bcab549a0"}


@pytest.mark.parametrize(("rows", "cols", "count"), list(INPUT_DIGESTS))
def test_the_classifiers_search_inputs_are_the_one_file_kernels(rows: int, cols: int, count: int) -> None:
    cells = states_to_array(list(random_states(2024, count, rows=rows, cols=cols)))
    digest = hashlib.sha256(np.ascontiguousarray(search_progress(cells, rows, cols, 300), np.float64).tobytes())
    outcome, nodes = probe(cells, rows, cols, 1500, algorithm="compatible")
    digest.update(np.ascontiguousarray(outcome, np.float64).tobytes())
    digest.update(np.ascontiguousarray(nodes, np.float64).tobytes())
    assert digest.hexdigest()[:16] == INPUT_DIGESTS[rows, cols, count]
