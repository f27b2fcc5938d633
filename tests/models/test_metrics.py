"""The residue benchmark's figures: log loss, Brier score, AUC, expected calibration error, against hand values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import log_loss as sklearn_log_loss

from boaf.models.metrics import (
    accuracy,
    auc,
    binary_entropy,
    brier,
    expected_calibration_error,
    log_loss,
    scores,
)

LABELS = np.array([True] * 9 + [False])  # base rate 0.9


def test_the_constant_at_the_base_rate_scores_the_entropy_and_is_calibrated() -> None:
    p = np.full(len(LABELS), 0.9)
    assert log_loss(p, LABELS) == pytest.approx(binary_entropy(0.9)) == pytest.approx(0.325083, abs=1e-6)
    assert brier(p, LABELS) == pytest.approx(0.9 * 0.1)
    assert expected_calibration_error(p, LABELS) == pytest.approx(0.0, abs=1e-12)
    assert auc(p, LABELS) == 0.5
    assert accuracy(p, LABELS) == 0.9


def test_a_constant_off_the_rate_is_miscalibrated_by_the_gap() -> None:
    p = np.full(len(LABELS), 0.6)
    assert expected_calibration_error(p, LABELS) == pytest.approx(0.3)
    assert log_loss(p, LABELS) == pytest.approx(-(0.9 * math.log(0.6) + 0.1 * math.log(0.4)))


def test_certain_right_answers_cost_nothing_and_certain_wrong_ones_are_capped() -> None:
    y = np.array([True, False, True])
    assert log_loss(y.astype(float), y) == pytest.approx(0.0, abs=1e-12)
    assert brier(y.astype(float), y) == 0.0
    assert auc(y.astype(float), y) == 1.0
    assert expected_calibration_error(y.astype(float), y) == 0.0
    assert log_loss((~y).astype(float), y) == pytest.approx(-math.log(1e-15), rel=1e-4)


def test_ece_by_hand() -> None:
    # Bins [0.1, 0.2): p 0.1, 0.15, observed 1 of 2; [0.8, 0.9): p 0.8, observed 0 of 1.
    p, y = np.array([0.1, 0.15, 0.8]), np.array([True, False, False])
    assert expected_calibration_error(p, y) == pytest.approx(2 / 3 * abs(0.125 - 0.5) + 1 / 3 * 0.8)


def test_auc_of_one_label_is_undefined() -> None:
    assert math.isnan(auc(np.array([0.2, 0.7]), np.array([True, True])))


def test_binary_entropy_at_the_ends_and_the_middle() -> None:
    assert binary_entropy(0.0) == binary_entropy(1.0) == 0.0
    assert binary_entropy(0.5) == pytest.approx(math.log(2))


@settings(deadline=None)  # a shared machine: timing is not what is tested
@given(st.lists(st.tuples(st.floats(0.001, 0.999), st.booleans()), min_size=2, max_size=50))
def test_laws(pairs: list[tuple[float, bool]]) -> None:
    p = np.array([a for a, _ in pairs])
    y = np.array([b for _, b in pairs])
    figures = scores(p, y)
    assert 0.0 <= figures.ece <= 1.0 and 0.0 <= figures.brier <= 1.0 and 0.0 <= figures.accuracy <= 1.0
    if y.any() and not y.all():
        assert figures.log_loss == pytest.approx(sklearn_log_loss(y, p), rel=1e-9)


def test_auc_is_scikit_learns_with_ties() -> None:
    from sklearn.metrics import roc_auc_score  # the reference, from the train extra the tests have

    rng = np.random.default_rng(4)
    for _ in range(20):
        y = rng.random(200) < rng.uniform(0.05, 0.95)
        p = np.round(rng.random(200), 1)  # few distinct values: many ties
        if y.all() or not y.any():
            continue
        assert auc(p, y) == pytest.approx(roc_auc_score(y, p), abs=1e-12)
