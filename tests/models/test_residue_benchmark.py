"""The residue benchmark (``benchmarks/residue.py``), small: the table's shape and the baselines' arithmetic.

A check of the harness, not a benchmark: the figures of so small a run mean nothing, and nothing here
depends on timing.
"""

from __future__ import annotations

import json
import math
from dataclasses import astuple, replace
from pathlib import Path

import numpy as np
import pytest

from benchmarks import residue
from boaf.models.classifier import load_classifier
from boaf.models.metrics import binary_entropy

SETS = ("random 4x4", "decisions", "deals", "random 5x5", "random 6x6", "random 4x13", "plausible play")


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("residue")


@pytest.fixture(scope="module")
def small_run(cache: Path) -> tuple[list[residue.Row], dict]:
    return residue.run(load_classifier(), cache, small=True)


def test_every_set_has_the_model_and_both_baselines(small_run: tuple[list[residue.Row], dict]) -> None:
    rows, whole = small_run
    assert [(r.set, r.predictor) for r in rows] == [(s, p) for s in SETS for p in residue.PREDICTORS]
    assert list(whole) == list(SETS)
    for name, w in whole.items():
        assert w["states"] > 0 and 0.0 <= w["exact_share"] <= 1.0
        assert w["residue"] == next(r.residue_states for r in rows if r.set == name)
    assert whole["deals"]["notes"]["seeds"] == [2_000_000_000, 2_000_001_499]


def test_the_constant_scores_what_its_rate_implies(small_run: tuple[list[residue.Row], dict]) -> None:
    """The constant p = r (the training residue's rate) on a residue of rate b: cross-entropy, Brier, ECE |r - b|."""
    constants = [r for r in small_run[0] if r.predictor == "constant" and r.residue_states]
    assert constants
    for row in constants:
        r, b, s = row.train_rate, row.base_rate, row.scores
        q = min(max(r, 1e-15), 1 - 1e-15)
        assert s.log_loss == pytest.approx(-(b * math.log(q) + (1 - b) * math.log1p(-q)), abs=1e-9)
        assert s.brier == pytest.approx(b * (1 - r) ** 2 + (1 - b) * r**2, abs=1e-12)
        assert s.ece == pytest.approx(abs(r - b), abs=1e-12)
        assert s.accuracy == pytest.approx(b if r >= 0.5 else 1 - b)
        assert math.isnan(s.auc) or s.auc == 0.5
        if r == b:
            assert s.log_loss == pytest.approx(binary_entropy(b)) and s.ece == pytest.approx(0.0, abs=1e-12)


def test_whole_set_accuracy_counts_exact_answers_right(small_run: tuple[list[residue.Row], dict]) -> None:
    rows, whole = small_run
    for row in rows:
        w = whole[row.set]
        labelled = w["states"] - w["dropped"]
        assert row.residue_share == pytest.approx(row.residue_states / labelled)
        if row.residue_states == 0:
            assert row.whole_set_accuracy == 1.0
        elif not math.isnan(row.scores.accuracy):
            exact = labelled - row.residue_states
            assert row.whole_set_accuracy == pytest.approx(
                (exact + row.scores.accuracy * row.residue_states) / labelled
            )


def test_a_second_run_reads_the_cache_and_agrees(cache: Path, small_run: tuple[list[residue.Row], dict]) -> None:
    assert len(list(cache.glob("*-small.json"))) == 2 * len(SETS)
    again, _ = residue.run(load_classifier(), cache, small=True, names=["random 6x6"])
    first = [r for r in small_run[0] if r.set == "random 6x6"]
    figures = [[*astuple(r.scores), r.whole_set_accuracy] for r in (*again, *first)]
    np.testing.assert_array_equal(figures[: len(again)], figures[len(again) :])


def test_the_table_has_a_line_per_row_and_per_set(small_run: tuple[list[residue.Row], dict]) -> None:
    rows, whole = small_run
    lines = list(residue.table_lines(rows, whole))
    assert len(lines) == 2 + len(rows) + 1 + 2 + len(whole) + 2
    assert lines[-1].startswith("deals: ") and "FFUDs called unsolvable" in lines[-1]
    columns = lines[0].count("|")
    assert all(line.count("|") == columns for line in lines[2 : 2 + len(rows)])
    assert residue.to_json(rows, whole)["sets"] == whole


def test_the_deals_calls_add_up_to_the_census(small_run: tuple[list[residue.Row], dict]) -> None:
    """Every FFUD of the census is settled exactly or open (and then called by the model); counts match the census."""
    _, whole = small_run
    calls, notes = whole["deals"]["calls"], whole["deals"]["notes"]
    assert calls["ffud"] == notes["ffud"] == calls["ffud_exact"] + calls["ffud_open"]
    assert calls["ffud_open"] == notes["ffud_open"]
    assert 0 <= calls["ffud_open_called_unsolvable"] <= calls["ffud_open"]
    assert calls["solvable"] == whole["deals"]["states"] - notes["unsolvable"]
    assert 0 <= calls["solvable_called_unsolvable"] <= calls["solvable"]


def test_plausible_play_may_follow_another_versions_hints(cache: Path) -> None:
    """``--player``: the games follow that version's hints, and the cached set is keyed by it; a player with
    another exact path is refused (its residue would not be the benchmarked model's)."""
    model = load_classifier()
    player = replace(model, version="another-version")
    residue.run(model, cache, small=True, names=["plausible play"], player=player)
    keys = [json.loads(p.read_text(encoding="utf-8"))["key"] for p in cache.glob("plausible-play-*-small.json")]
    assert sorted(k["model_version"] for k in keys) == ["another-version", "another-version"]
    elsewhere = replace(model, exact=replace(model.exact, max_nodes=model.exact.max_nodes + 1))
    with pytest.raises(ValueError, match="another exact path"):
        residue.run(model, cache, small=True, names=["plausible play"], player=elsewhere)
