"""The model trained on residue sets, and the retraining gate that judges a version on the residue.

Small fixed-seed sets: a check of the machinery, not of the figures (those are ``benchmarks/models.py``'s).
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from cli_runner import boaf

from boaf.models.classifier import CARD_FILE, load_classifier
from boaf.models.errors import ModelError
from boaf.models.exact_path import ExactBudget, grid_key
from boaf.models.metrics import scores
from boaf.models.registry import default_root, installed_version
from boaf.models.residue import TRAINING_SETS, Residue, ResidueSpec, cache_key, cached, generate
from boaf.models.residue_model import (
    FOLDS,
    GATE_MIN_MINORITY,
    GATE_MIN_STATES,
    GATE_SETS,
    GateRow,
    Part,
    folds,
    gate_budget_owner,
    out_of_fold,
    parts,
    residue_gate,
    retrain_residue,
    train_residue_model,
    whole_set_log_loss,
)
from boaf.search import SOLVABLE, solve_many

#: Tiny distributions: 5x5 and 4x13 states leave many open at the exact path's budget, so a few batches do.
TRAINING = (
    ResidueSpec("random 5x5", "random", 7_005, 5, 5, 9, batch=150, max_batches=4, min_states=120, min_minority=12),
    ResidueSpec("random 4x13", "random", 7_013, 4, 13, 18, batch=40, max_batches=4, min_states=60, min_minority=3),
)
GATE = (
    ResidueSpec("random 5x5", "random", 8_005, 5, 5, 9, batch=300, max_batches=8, min_states=100, min_minority=10),
    ResidueSpec("random 4x13", "random", 8_013, 4, 13, 18, batch=40, max_batches=3, min_states=50, min_minority=3),
)
CANDIDATES = ({"n_estimators": 40, "learning_rate": 0.1, "num_leaves": 7, "min_child_samples": 5},)


def quiet(_: str) -> None:
    pass


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The training and gate sets, generated once under the committed model's exact path."""
    directory = tmp_path_factory.mktemp("residue-sets")
    installed = load_classifier()
    for spec in TRAINING + GATE:
        cached(installed, spec, directory)
    return directory


def sets_in(cache: Path, specs: tuple[ResidueSpec, ...]) -> dict[str, Residue]:
    installed = load_classifier()
    return {spec.name: cached(installed, spec, cache) for spec in specs}


def test_a_residue_holds_exactly_the_open_states_with_the_solvers_labels() -> None:
    installed = load_classifier()
    spec = replace(TRAINING[0], max_batches=1)
    residue = generate(installed, spec)
    assert residue.states == spec.batch and residue.exact + len(residue.residue) + residue.dropped == spec.batch
    assert not installed.classify(residue.residue).exact.any()
    truth = solve_many(residue.residue).status
    assert [s is SOLVABLE for s in truth] == residue.solvable.tolist()


def test_a_cached_set_is_reused_only_under_the_same_key(cache: Path) -> None:
    installed = load_classifier()
    path = cache / f"random-5x5-{TRAINING[0].seed}.json"
    data = json.loads(path.read_text())
    assert data["key"] == cache_key(installed, TRAINING[0])
    rows, cols = TRAINING[0].rows, TRAINING[0].cols
    grid, nodes = grid_key(rows, cols), installed.exact.nodes_for(rows, cols)
    assert data["key"]["max_nodes"] == nodes
    other = replace(installed, exact=replace(installed.exact, by_grid={**installed.exact.by_grid, grid: nodes + 1}))
    assert cache_key(other, TRAINING[0]) != data["key"]


def test_the_folds_share_each_label_evenly_and_every_set_weighs_the_same(cache: Path) -> None:
    sets = sets_in(cache, TRAINING)
    for residue in sets.values():
        fold = folds(residue.solvable, 0)
        assert set(fold.tolist()) <= set(range(FOLDS))
        for value in (False, True):
            counts = np.bincount(fold[residue.solvable == value], minlength=FOLDS)
            assert counts.max() - counts.min() <= 1 and counts.sum() == int(np.sum(residue.solvable == value))
        assert np.array_equal(fold, folds(residue.solvable, 0))
        assert not np.array_equal(fold, folds(residue.solvable, 1))
    per_set = parts(sets, 0, ExactBudget(100))
    totals = {name: part.weight.sum() for name, part in per_set.items()}
    assert max(totals.values()) == pytest.approx(min(totals.values()))


def test_out_of_fold_scores_come_from_models_that_never_saw_their_rows() -> None:
    """A row's out-of-fold score ignores its own label: flipping the labels of fold 0 leaves fold 0's scores."""
    rng = np.random.default_rng(3)
    inputs = rng.normal(size=(400, 3))
    solvable = inputs[:, 0] + 0.3 * rng.normal(size=400) > 0
    fold = folds(solvable, 0)
    rows = Part(inputs, solvable, np.ones(400), np.zeros(400, dtype=bool), fold, np.full(400, "4x4"))
    flipped = Part(inputs, np.where(fold == 0, ~solvable, solvable), np.ones(400), rows.deal, fold, rows.grid)
    params = {**CANDIDATES[0], "min_child_samples": 5}
    raw, raw_flipped = out_of_fold(params, rows, 0), out_of_fold(params, flipped, 0)
    assert np.array_equal(raw[fold == 0], raw_flipped[fold == 0])
    assert not np.array_equal(raw[fold != 0], raw_flipped[fold != 0])
    assert scores(raw, solvable).auc > 0.9


def test_a_tiny_model_trains_loads_and_describes_its_residue(cache: Path, tmp_path: Path) -> None:
    installed = load_classifier()
    card = train_residue_model(
        sets_in(cache, TRAINING), tmp_path, installed, "tiny", seed=0, log=quiet, candidates=CANDIDATES
    )
    model = load_classifier(tmp_path)
    assert model.version == "tiny" and model.exact == installed.exact and model.progress_nodes == 300
    assert model.child_features and card["child_features"] and card["inputs"][-1] == "children"
    assert model.calibration is not None and not model.calibration.by_stacks
    assert set(card["residue_calibration"]) == {s.name for s in TRAINING}
    assert card["parity"]["label_agreement"] == 1.0
    for row in card["residue_calibration"].values():
        r, b = min(max(row["training_rate"], 1e-15), 1 - 1e-15), row["base_rate"]
        assert row["rows"] > 0 and math.isfinite(row["model"]["log_loss"])
        assert row["constant"]["log_loss"] == pytest.approx(-(b * math.log(r) + (1 - b) * math.log1p(-r)))
    answers = model.classify(sets_in(cache, GATE)["random 5x5"].residue)
    assert not answers.exact.any() and np.all((answers.p_solvable > 0) & (answers.p_solvable < 1))
    assert (tmp_path / "plots" / "calibration.png").is_file()


def test_the_whole_set_log_loss_counts_exact_answers_as_free(cache: Path) -> None:
    installed = load_classifier()
    residue = sets_in(cache, GATE)["random 5x5"]
    loss, p, exact = whole_set_log_loss(installed, residue)
    assert not exact.any()
    per_state = scores(p, residue.solvable).log_loss
    assert loss == pytest.approx(per_state * len(residue.solvable) / (residue.states - residue.dropped))


def test_the_gate_refuses_a_model_worse_than_its_residues_base_rate(cache: Path, tmp_path: Path) -> None:
    """A tiny model trained on inverted labels is confidently wrong: the gate refuses it and installs nothing."""
    installed = load_classifier()
    inverted = tmp_path / "inverted-sets"
    inverted.mkdir()
    for spec in TRAINING:
        path = cache / f"{spec.name.replace(' ', '-')}-{spec.seed}.json"
        data = json.loads(path.read_text())
        data["solvable"] = [not v for v in data["solvable"]]
        (inverted / path.name).write_text(json.dumps(data))
    for spec in GATE:
        name = f"{spec.name.replace(' ', '-')}-{spec.seed}.json"
        (inverted / name).write_text((cache / name).read_text())
    lines: list[str] = []
    with pytest.raises(ModelError, match="refused: on random 5x5"):
        retrain_residue(
            tmp_path / "out",
            inverted,
            None,
            seed=0,
            log=lines.append,
            training=TRAINING,
            gate=GATE,
            candidates=CANDIDATES,
        )
    assert installed_version(tmp_path / "out") is None
    stage = next((tmp_path / "out").glob(".*.staging"))
    gate = json.loads((stage / CARD_FILE).read_text())["gate"]
    row = next(r for r in gate if r["set"] == "random 5x5")
    assert not row["passes"] and row["model"]["log_loss"] > row["constant_scores"]["log_loss"]
    assert any("FAIL" in line for line in lines)
    assert installed.version == load_classifier().version


def test_the_gate_passes_a_version_no_worse_on_every_set(cache: Path, tmp_path: Path) -> None:
    """The installed model against itself: equal whole-set log loss; the verdict then rests on the constant alone."""
    installed = load_classifier()
    sets = sets_in(cache, GATE)
    constants = {name: float(r.solvable.mean()) for name, r in sets.items()}
    rows = residue_gate(installed, installed, sets, constants)
    for row in rows:
        assert row.new_log_loss == pytest.approx(row.installed_log_loss)
        beats = row.new_residue_scores.log_loss < row.constant_residue_scores.log_loss
        assert row.judged == (row.new_residue >= GATE_MIN_STATES and row.new_minority >= GATE_MIN_MINORITY)
        assert row.passes == (beats or not row.judged)
    assert any(row.judged for row in rows)


def test_a_residue_too_small_to_judge_is_judged_on_the_whole_set_alone() -> None:
    """A handful of residue states, all solvable: the constant's edge there is noise, so only the whole set counts."""
    right, wrong = scores(np.full(24, 0.93), np.ones(24, bool)), scores(np.full(24, 0.945), np.ones(24, bool))
    row = GateRow("plausible play", 10_000, 0.0005, 0.0001, 24, right, wrong, 0.945, 0)
    assert not row.judged and not row.beats_constant and row.passes
    worse = replace(row, new_log_loss=0.0006)
    assert not worse.passes
    judged = replace(row, new_residue=GATE_MIN_STATES, new_minority=GATE_MIN_MINORITY)
    assert judged.judged and not judged.passes


def test_the_gate_generates_its_sets_under_the_smaller_budget() -> None:
    installed = load_classifier()
    bigger = replace(installed, exact=replace(installed.exact, max_nodes=installed.exact.max_nodes * 2))
    assert gate_budget_owner(installed, bigger, 4, 4) is installed
    assert gate_budget_owner(bigger, installed, 4, 4) is installed
    wide = replace(bigger, exact=replace(bigger.exact, by_grid={"4x13": 100}))
    assert gate_budget_owner(installed, wide, 4, 13) is wide and gate_budget_owner(installed, wide, 4, 4) is installed
    other = replace(installed, exact=replace(installed.exact, algorithm="compatible"))
    with pytest.raises(ModelError, match="one algorithm"):
        gate_budget_owner(installed, other, 4, 4)


def test_the_gate_owner_is_the_version_without_the_second_search_of_ffud_like_deals() -> None:
    installed = load_classifier()
    plain = replace(installed, exact=replace(installed.exact, deal_nodes=0))
    second = replace(installed, exact=replace(installed.exact, deal_nodes=8192))
    assert gate_budget_owner(second, plain, 4, 4) is plain and gate_budget_owner(plain, second, 4, 4) is plain
    assert gate_budget_owner(second, plain, 4, 13) is second  # no second search off 4x4: the two are alike
    crossed = replace(plain, exact=replace(plain.exact, max_nodes=plain.exact.max_nodes * 2))
    with pytest.raises(ModelError, match="leaves open all the other's on 4x4"):
        gate_budget_owner(second, crossed, 4, 4)


def test_boaf_train_residue_refuses_a_worse_model_and_installs_nothing(cache: Path, tmp_path: Path) -> None:
    """The command end to end, its sets read from --cache: every training set holds a tiny residue with inverted
    labels (stored under the real sets' keys), every gate set a tiny true one; it exits 1 and names the sets."""
    installed = load_classifier()
    small = json.loads((cache / f"random-5x5-{TRAINING[0].seed}.json").read_text())
    gate = json.loads((cache / f"random-5x5-{GATE[0].seed}.json").read_text())
    sets = tmp_path / "sets"
    sets.mkdir()
    for spec in TRAINING_SETS:
        data = {**small, "key": cache_key(installed, spec), "solvable": [not v for v in small["solvable"]]}
        (sets / f"{spec.name.replace(' ', '-')}-{spec.seed}.json").write_text(json.dumps(data))
    for spec in GATE_SETS:
        data = {**gate, "key": cache_key(installed, spec)}
        (sets / f"{spec.name.replace(' ', '-')}-{spec.seed}.json").write_text(json.dumps(data))
    result = boaf("train-residue", "--out", str(tmp_path / "out"), "--cache", str(sets))
    assert result.returncode == 1, result.stderr
    assert "refused: on random 4x4" in result.stderr
    assert installed_version(tmp_path / "out") is None


def test_the_committed_card_is_strict_json_and_records_the_residue_gate() -> None:
    # GetServerInfo sends the card as a protobuf Struct, which cannot hold NaN or infinities.
    def refuse(constant: str) -> None:
        raise AssertionError(f"model card holds {constant}")

    card = json.loads((default_root() / CARD_FILE).read_text(encoding="utf-8"), parse_constant=refuse)
    names = [spec.name for spec in TRAINING_SETS]
    assert list(card["trained_on"]) == names and list(card["residue_calibration"]) == names
    assert [row["set"] for row in card["gate"]] == [spec.name for spec in GATE_SETS]
    assert all(row["passes"] for row in card["gate"]) and card["exact_path"]["max_nodes"] > 0
