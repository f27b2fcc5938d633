"""Training and evaluating the LightGBM solvability classifier.

Inputs (``boaf.models.inputs``) are rounded to float32 before training because the
served ONNX model compares in float32; trained on float32 values, LightGBM's
split thresholds fall between representable values and the export agrees with
it (checked by ``boaf.models.onnx_export.parity``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lightgbm as lgb
import numpy as np
import pyarrow.parquet as pq
from sklearn.metrics import brier_score_loss, log_loss, roc_auc_score
from sklearn.model_selection import StratifiedKFold

from boaf.game import parse_grid
from boaf.models.inputs import model_inputs

#: Araki et al. 2019's tuned point: 94.479% 10-fold CV accuracy on 500,000 random states.
PAPER_PARAMS: dict[str, Any] = {"learning_rate": 0.2, "n_estimators": 50, "num_leaves": 90}

#: Candidates tried on the validation split; the best by validation log-loss is kept.
TUNING_GRID: tuple[dict[str, Any], ...] = (
    {"learning_rate": 0.1, "n_estimators": 200, "num_leaves": 127, "min_child_samples": 20},
    {"learning_rate": 0.05, "n_estimators": 500, "num_leaves": 127, "min_child_samples": 40, "colsample_bytree": 0.8},
)


@dataclass(frozen=True)
class Labelled:
    """A labelled feature matrix: ``matrix`` (N × features, float32 values) and ``solvable`` (N, 0/1)."""

    matrix: np.ndarray
    solvable: np.ndarray
    stacks: np.ndarray = field(repr=False)

    def take(self, index: np.ndarray) -> Labelled:
        """The rows at ``index``."""
        return Labelled(self.matrix[index], self.solvable[index], self.stacks[index])

    def first_columns(self, count: int) -> Labelled:
        """The same rows with only the first ``count`` input columns."""
        return Labelled(self.matrix[:, :count], self.solvable, self.stacks)


def inputs_of_grids(grids: Iterable[str], probe_nodes: int) -> np.ndarray:
    """Model input matrix (``boaf.models.inputs``) of grid texts."""
    return model_inputs([parse_grid(g) for g in grids], probe_nodes)


def load_labelled(data_path: Path, probe_nodes: int) -> Labelled:
    """Model inputs and labels of a dataset's ``data.parquet``."""
    table = pq.read_table(data_path, columns=["grid", "solvable", "stacks"])
    grids = table.column("grid").to_pylist()
    return Labelled(
        matrix=inputs_of_grids(grids, probe_nodes),
        solvable=np.asarray(table.column("solvable").to_numpy(zero_copy_only=False), dtype=np.int8),
        stacks=np.asarray(table.column("stacks").to_numpy(), dtype=np.int8),
    )


def make_classifier(params: Mapping[str, Any], seed: int = 0, threads: int = 0) -> lgb.LGBMClassifier:
    """A LightGBM classifier with ``params``; deterministic for a given seed and thread count."""
    return lgb.LGBMClassifier(
        objective="binary",
        random_state=seed,
        deterministic=True,
        force_row_wise=True,
        n_jobs=threads or None,
        verbose=-1,
        **params,
    )


def fit(params: Mapping[str, Any], data: Labelled, seed: int = 0, threads: int = 0) -> lgb.LGBMClassifier:
    """Train a classifier on ``data``."""
    return make_classifier(params, seed, threads).fit(data.matrix, data.solvable)


def p_solvable(model: lgb.LGBMClassifier, matrix: np.ndarray) -> np.ndarray:
    """LightGBM's P(solvable) for each row."""
    return np.asarray(model.predict_proba(matrix))[:, 1]


def metrics(p: np.ndarray, solvable: np.ndarray, threshold: float = 0.5) -> dict[str, float]:
    """Accuracy, ROC AUC, Brier score and log-loss of predictions ``p`` against labels."""
    both_classes = len(np.unique(solvable)) == 2
    return {
        "rows": len(p),
        "accuracy": float(np.mean((p >= threshold) == (solvable == 1))),
        "auc": float(roc_auc_score(solvable, p)) if both_classes else float("nan"),
        "brier": float(brier_score_loss(solvable, p)),
        "log_loss": float(log_loss(solvable, np.clip(p, 1e-7, 1 - 1e-7), labels=[0, 1])),
        "positive_rate": float(np.mean(solvable)),
    }


def cross_validate(params: Mapping[str, Any], data: Labelled, folds: int = 10, seed: int = 0) -> dict[str, Any]:
    """Stratified k-fold accuracy of ``params`` on ``data`` (mean, std and per fold)."""
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    scores = []
    for train, test in splitter.split(data.matrix, data.solvable):
        model = fit(params, data.take(train), seed)
        scores.append(metrics(p_solvable(model, data.matrix[test]), data.solvable[test])["accuracy"])
    return {
        "folds": folds,
        "accuracy_mean": float(np.mean(scores)),
        "accuracy_std": float(np.std(scores)),
        "per_fold": scores,
    }


def tune(
    train: Labelled, validation: Labelled, grid: Sequence[Mapping[str, Any]] = TUNING_GRID, seed: int = 0
) -> dict[str, Any]:
    """Fit every candidate on ``train``, score on ``validation``, and return the best by log-loss with the table."""
    table: list[dict[str, Any]] = []
    for params in (PAPER_PARAMS, *grid):
        started = time.perf_counter()
        model = fit(params, train, seed)
        scores = metrics(p_solvable(model, validation.matrix), validation.solvable)
        table.append({"params": dict(params), **scores, "fit_s": time.perf_counter() - started})
    best = min(table, key=lambda row: float(row["log_loss"]))
    return {"best": best["params"], "candidates": table}


def split_indices(n: int, fractions: Sequence[float], seed: int) -> list[np.ndarray]:
    """A seeded random partition of ``range(n)`` into parts of the given fractions (the last takes the rest)."""
    order = np.random.default_rng(seed).permutation(n)
    bounds = np.cumsum([round(f * n) for f in fractions[:-1]])
    return [np.sort(part) for part in np.split(order, bounds)]


@dataclass(frozen=True)
class Splits:
    """Train / validation rows from every dataset, and each dataset's own held-out test rows."""

    train: Labelled
    validation: Labelled
    tests: dict[str, Labelled]
    random_rows: Labelled | None = None  # train + validation rows of the random datasets (for k-fold CV)


def split_datasets(data_dirs: Sequence[Path], seed: int, probe_nodes: int) -> Splits:
    """Split each dataset 80/10/10 (by deal where rows come from deals, so no deal is in two parts)."""
    trains, validations, tests, randoms = [], [], {}, []
    for data_dir in data_dirs:
        manifest = json.loads((data_dir / "manifest.json").read_text(encoding="utf-8"))
        data_path = data_dir / "data.parquet"
        data = load_labelled(data_path, probe_nodes)
        deals = pq.read_table(data_path, columns=["deal"]).column("deal").to_numpy()
        train, validation, test = _three_way(deals, seed)
        trains.append(data.take(train))
        validations.append(data.take(validation))
        tests[f"test_{manifest['generator']}"] = data.take(test)
        if manifest["generator"] == "random":
            randoms += [trains[-1], validations[-1]]
    return Splits(concat(trains), concat(validations), tests, concat(randoms) if randoms else None)


def concat(parts: Sequence[Labelled]) -> Labelled:
    """Rows of several labelled sets, in order."""
    return Labelled(
        np.concatenate([p.matrix for p in parts]),
        np.concatenate([p.solvable for p in parts]),
        np.concatenate([p.stacks for p in parts]),
    )


def _three_way(deals: np.ndarray, seed: int) -> list[np.ndarray]:
    if np.all(deals < 0):
        return split_indices(len(deals), (0.8, 0.1, 0.1), seed)
    unique = np.unique(deals)
    return [np.flatnonzero(np.isin(deals, unique[p])) for p in split_indices(len(unique), (0.8, 0.1, 0.1), seed)]
