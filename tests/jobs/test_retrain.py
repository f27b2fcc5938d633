"""A tiny end-to-end retrain: a loadable model, and nothing installed when a run is interrupted."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import boaf.jobs.retrain as retrain_module
from boaf.game import random_states
from boaf.jobs.retrain import RetrainConfig, retrain
from boaf.jobs.runner import Cluster
from boaf.models import registry
from boaf.models.classifier import load_classifier


def _tiny(out: Path) -> RetrainConfig:
    return RetrainConfig(
        out=out,
        rows=3000,
        decision_deals=12,
        cv_folds=2,
        ordering_states=2000,
        sweep_states=150,
        min_accuracy=0.75,
        tuning_grid=({"learning_rate": 0.1, "n_estimators": 60, "num_leaves": 31},),
        cluster=Cluster(workers=2),
    )


def test_tiny_retrain_installs_a_loadable_model_and_an_interrupted_one_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    installed = retrain(_tiny(tmp_path), log=lambda _: None)
    assert registry.installed_version(tmp_path) == installed.name
    for name in ("classifier.onnx", "ordering.json", "model_card.json", "plots/roc.png", "plots/calibration.png"):
        assert (installed / name).is_file(), name
    assert (installed / "plots" / "cutoff_sweep.png").is_file() and (installed / "plots" / "importance.png").is_file()

    card = json.loads((installed / "model_card.json").read_text())
    assert card["parity"]["label_agreement"] >= 0.9999 and card["parity"]["max_abs_dp"] <= 1e-4
    assert {"test_random", "test_decisions"} <= set(card["evaluation"])
    assert {"paper", "ours"} <= set(card["cross_validation"])
    assert all(len(d["sha256"]) == 64 for d in card["datasets"])
    assert 2 <= json.loads((installed / "ordering.json").read_text())["cutoff"] <= 16

    classifier = load_classifier(tmp_path)
    p = classifier.predict(random_states(1, 200))
    assert classifier.version == installed.name and np.all((p >= 0) & (p <= 1))

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(retrain_module, "tune_cutoff", interrupted)
    with pytest.raises(KeyboardInterrupt):
        retrain(_tiny(tmp_path), log=lambda _: None)  # same datasets, reused
    assert registry.installed_version(tmp_path) == installed.name
    assert load_classifier(tmp_path).version == installed.name
