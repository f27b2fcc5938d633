"""Classify's exact path: exact only where the budgeted search settles a state, and then the solver's answer."""

from __future__ import annotations

import json
import shutil
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boaf.game import State, deal, random_states
from boaf.models.calibration import CALIBRATION_FILE
from boaf.models.classifier import CHUNK_STATES, load_classifier
from boaf.models.errors import ClassifyStopped, ModelError
from boaf.models.exact_path import EXACT_FILE, NO_EXACT_PATH, ExactBudget, read_exact_budget, write_exact_budget
from boaf.models.registry import default_root
from boaf.search import SOLVABLE, UNKNOWN, solve_many

BUDGET = 300  # small, so that many random states stay open


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The committed model, with an exact path of ``BUDGET`` nodes written into its directory."""
    directory = tmp_path_factory.mktemp("model") / "v1"
    shutil.copytree(default_root(), directory)
    write_exact_budget(directory, ExactBudget(BUDGET))
    return directory


def _check_against_the_solver(states: list[State], model_dir: Path) -> None:
    answers = load_classifier(model_dir).classify(states)
    budgeted = solve_many(states, max_nodes=BUDGET)
    truth = solve_many(states)
    settled = np.array([s is not UNKNOWN for s in budgeted.status])
    np.testing.assert_array_equal(answers.exact, settled)
    solvable = np.array([s is SOLVABLE for s in truth.status])
    np.testing.assert_array_equal(answers.p_solvable[answers.exact], solvable[answers.exact].astype(float))
    np.testing.assert_array_equal(answers.nodes, budgeted.nodes)
    assert np.all(answers.nodes <= BUDGET)


def test_exact_is_set_exactly_where_the_budget_settles_and_equals_the_solver(model_dir: Path) -> None:
    states = random_states(41, 400)
    _check_against_the_solver(states, model_dir)
    answers = load_classifier(model_dir).classify(states)
    assert 0 < answers.exact.sum() < len(states)  # both paths are exercised
    learned = answers.p_solvable[~answers.exact]
    assert np.all((learned >= 0) & (learned <= 1))


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), stacks=st.integers(1, 16))
def test_exact_answers_are_the_solvers_for_any_stack_count(model_dir: Path, seed: int, stacks: int) -> None:
    _check_against_the_solver(random_states(seed, 20, stacks=stacks), model_dir)


def test_mixed_grids_keep_input_order(model_dir: Path) -> None:
    states = [*random_states(8, 10, rows=3, cols=5), deal(16), *random_states(9, 10), deal(1163, rows=2, cols=8)]
    classifier = load_classifier(model_dir)
    together = classifier.classify(states)
    for i, state in enumerate(states):
        alone = classifier.classify([state])
        assert (alone.p_solvable[0], alone.exact[0], alone.nodes[0]) == (
            together.p_solvable[i],
            together.exact[i],
            together.nodes[i],
        )


def test_the_budget_comes_from_the_model_directory(model_dir: Path, tmp_path: Path) -> None:
    assert load_classifier(model_dir).exact == ExactBudget(BUDGET)
    other = tmp_path / "v2"
    shutil.copytree(model_dir, other)
    write_exact_budget(other, ExactBudget(5, "compatible"))
    assert load_classifier(other).exact == ExactBudget(5, "compatible")
    (other / EXACT_FILE).unlink()
    assert load_classifier(other).exact == NO_EXACT_PATH
    (other / CALIBRATION_FILE).unlink(missing_ok=True)
    classifier = load_classifier(other)
    answers = classifier.classify(random_states(3, 30))
    assert not answers.exact.any() and not answers.nodes.any()
    np.testing.assert_array_equal(answers.p_solvable, classifier.predict(random_states(3, 30)))


def test_the_committed_model_has_an_exact_path() -> None:
    budget = read_exact_budget(default_root())
    assert budget.max_nodes > 0
    assert load_classifier().card["exact_path"]["max_nodes"] == budget.max_nodes


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("not json", "not an exact path"),
        (json.dumps({"algorithm": "ordered"}), "not an exact path"),
        (json.dumps({"max_nodes": "many", "algorithm": "ordered"}), "not an exact path"),
        (json.dumps({"max_nodes": -1, "algorithm": "ordered"}), "max_nodes must be 0 or more, got -1"),
    ],
)
def test_a_malformed_exact_path_is_refused_by_name(tmp_path: Path, text: str, match: str) -> None:
    (tmp_path / EXACT_FILE).write_text(text, encoding="utf-8")
    with pytest.raises(ModelError, match=match):
        read_exact_budget(tmp_path)


def test_a_cancelled_classify_stops_every_stage_and_makes_nothing_up() -> None:
    # The service sets the flag at the call's deadline: every stage (exact path, features, progress,
    # inference) stops, and the call ends ClassifyStopped rather than answering with made-up estimates.
    classifier = load_classifier()
    states = [deal(seed) for seed in range(1, 41)]
    with pytest.raises(ClassifyStopped, match="classify cancelled"):
        classifier.classify(states, cancel=np.ones(1, dtype=np.int64))


def test_a_flag_set_while_the_learned_path_runs_stops_it() -> None:
    # An exact path of 0 nodes sends every 52-card state to the features (~15 ms each): seconds of work
    # for 1,000 states, which a flag set 0.2 s in stops at the next state.
    classifier = replace(load_classifier(), exact=NO_EXACT_PATH)
    cells = np.array([np.random.default_rng(i).permutation(52) for i in range(1000)], np.int8)
    flag = np.zeros(1, dtype=np.int64)
    timer = threading.Timer(0.2, flag.__setitem__, (0, 1))
    timer.start()
    with pytest.raises(ClassifyStopped):
        classifier.classify_cells(cells, 4, 13, cancel=flag)
    timer.join()


def test_chunks_give_the_answers_of_one_pass(model_dir: Path) -> None:
    classifier = load_classifier(model_dir)
    states = random_states(11, 2 * CHUNK_STATES + 7)
    whole = classifier.classify(states)
    parts = [classifier.classify(states[i : i + 100]) for i in range(0, len(states), 100)]
    np.testing.assert_array_equal(whole.p_solvable, np.concatenate([p.p_solvable for p in parts]))
    np.testing.assert_array_equal(whole.exact, np.concatenate([p.exact for p in parts]))
