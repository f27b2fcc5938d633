"""The steps of a retraining run: train the classifier, tune the ordering cutoff.

- ``train_classifier(data_dirs, out)``: cross-validation, tuning, final fit,
  held-out evaluation, ONNX export with a parity check, plots; writes
  ``classifier.onnx`` and ``model_card.json`` into ``out``.
- ``tune_cutoff(out, …)``: the subset-H ordering model and the cutoff sweep;
  writes ``ordering.json`` and the sweep plot into ``out``.

The whole job (generate the datasets on Dask, run both steps in a staging
directory, install the version when its checks pass) is ``boaf.jobs.retrain``.
"""

from __future__ import annotations

import datetime as dt
import json
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from boaf.features import SCHEMA_VERSION, feature_names
from boaf.game import State, format_grid, random_states
from boaf.models import plots
from boaf.models.classifier import CARD_FILE, CLASSIFIER_FILE
from boaf.models.datasets import exact_labels
from boaf.models.files import write_json_atomically
from boaf.models.inputs import DEFAULT_PROBE_NODES, input_names
from boaf.models.onnx_export import export_onnx, parity
from boaf.models.ordering import ORDERING_FILE, fit_ordering, sweep_cutoff, write_ordering
from boaf.models.training import (
    PAPER_PARAMS,
    TUNING_GRID,
    Labelled,
    concat,
    cross_validate,
    fit,
    inputs_of_grids,
    metrics,
    p_solvable,
    split_datasets,
    tune,
)

PARITY_ROWS = 10_000
Log = Callable[[str], None]


def train_classifier(
    data_dirs: Sequence[Path],
    out: Path,
    *,
    tuned: bool = True,
    seed: int = 0,
    cv_folds: int = 0,
    version: str | None = None,
    log: Log = print,
    tuning_grid: Sequence[dict[str, Any]] = TUNING_GRID,
    probe_nodes: int = DEFAULT_PROBE_NODES,
) -> dict[str, Any]:
    """Train on the datasets' training splits and write the classifier and its card into ``out``.

    With ``cv_folds``, the card also holds k-fold accuracy of the paper's
    configuration on the features alone (the papers' setting) and of ours.
    """
    version = version or new_version(seed)
    out.mkdir(parents=True, exist_ok=True)
    log("features and splits")
    splits = split_datasets(data_dirs, seed, probe_nodes)
    card: dict[str, Any] = {
        "model_version": version,
        "feature_schema": SCHEMA_VERSION,
        "probe_nodes": probe_nodes,
        "inputs": input_names(probe_nodes),
        "datasets": [json.loads((d / "manifest.json").read_text(encoding="utf-8")) for d in data_dirs],
    }
    params = PAPER_PARAMS
    if tuned:
        log("tuning on the validation split")
        card["tuning"] = tune(splits.train, splits.validation, tuning_grid, seed=seed)
        params = card["tuning"]["best"]
    if cv_folds and splits.random_rows is not None:
        card["cross_validation"] = cross_validation(splits.random_rows, params, cv_folds, seed, log=log)
    log(f"final fit: {params}")
    fit_started = time.perf_counter()
    model = fit(params, concat([splits.train, splits.validation]), seed)
    card["training_s"] = time.perf_counter() - fit_started
    card["params"] = params
    card["evaluation"] = {name: metrics(p_solvable(model, t.matrix), t.solvable) for name, t in splits.tests.items()}
    onnx_path = export_onnx(model, out / CLASSIFIER_FILE, _onnx_metadata(version, probe_nodes))
    check = parity(model, onnx_path, concat(list(splits.tests.values())).matrix[:PARITY_ROWS])
    card["parity"] = asdict(check)
    log(f"parity on {check.rows} rows: labels agree {check.label_agreement:.6f}, max |dp| {check.max_abs_dp:.2e}")
    _plot_classifier(model, splits.tests, out, input_names(probe_nodes))
    write_card(out, card)
    return card


def tune_cutoff(
    out: Path, fit_rows: Labelled, sweep_states: int, seed: int, *, folds: int = 10, log: Log = print
) -> dict[str, Any]:
    """Fit the ordering model on ``fit_rows``, sweep the cutoff on held-out random states, write ``ordering.json``.

    When ``out`` already holds a model card, its ``ordering`` entry is updated too.
    """
    log(f"ordering model on {len(fit_rows.solvable)} states; cutoff sweep on {sweep_states} held-out states")
    fitted = fit_ordering(fit_rows, folds=max(folds, 2), seed=seed)
    # Held out: a random seed no dataset of this run uses.
    held_out = random_states(seed + 10_007, sweep_states)
    sweep = sweep_cutoff(held_out, fitted.coefficients)
    write_ordering(out / ORDERING_FILE, fitted, sweep.best, sweep, provenance={"feature_schema": SCHEMA_VERSION})
    plots.cutoff_sweep_plot(
        sweep.cutoffs, sweep.mean_ms, sweep.compatible_ms, sweep.best, path=out / "plots" / "cutoff_sweep.png"
    )
    best = sweep.cutoffs.index(sweep.best)
    summary = {
        "coefficients": list(fitted.coefficients),
        "rmse": fitted.rmse,
        "cutoff": sweep.best,
        "mean_nodes": sweep.mean_nodes[best],
        "mean_ms": sweep.mean_ms[best],
        "compatible_nodes": sweep.compatible_nodes,
        "compatible_ms": sweep.compatible_ms,
        "sweep_states": sweep_states,
    }
    card_path = out / CARD_FILE
    if card_path.is_file():
        card = json.loads(card_path.read_text(encoding="utf-8"))
        write_card(out, {**card, "ordering": summary})
    return summary


def labelled_random_states(count: int, seed: int) -> Labelled:
    """``count`` random states labelled by the exact solver, in this process (for small runs)."""
    states = random_states(seed, count)
    return _labelled(states)


def _labelled(states: Sequence[State]) -> Labelled:
    return Labelled(
        matrix=inputs_of_grids((format_grid(s) for s in states), probe_nodes=0),
        solvable=np.array(exact_labels(states), dtype=np.int8),
        stacks=np.array([s.n_stacks for s in states], dtype=np.int8),
    )


def cross_validation(rows: Labelled, params: dict[str, Any], folds: int, seed: int, *, log: Log) -> dict[str, Any]:
    """k-fold accuracy on random states: the paper's configuration on the features alone, and ours on all inputs."""
    paper_rows = rows.first_columns(len(feature_names()))
    result = {}
    for name, candidate, data in (("paper", PAPER_PARAMS, paper_rows), ("ours", params, rows)):
        log(f"{folds}-fold cross-validation on {len(rows.solvable)} random states: {name} {candidate}")
        scores = cross_validate(candidate, data, folds, seed)
        result[name] = {"params": candidate, "inputs": data.matrix.shape[1], "rows": len(rows.solvable), **scores}
    return result


def _plot_classifier(model: Any, tests: dict[str, Labelled], out: Path, names: list[str]) -> None:
    curves = {name: (p_solvable(model, t.matrix), t.solvable.astype(np.float64)) for name, t in tests.items()}
    plots.roc_plot(curves, out / "plots" / "roc.png")
    plots.calibration_plot(curves, out / "plots" / "calibration.png")
    gains = np.asarray(model.booster_.feature_importance(importance_type="gain"), dtype=np.float64)
    plots.importance_plot(names, gains, out / "plots" / "importance.png")


def write_card(out: Path, card: dict[str, Any]) -> None:
    """Write ``card`` as ``out/model_card.json`` atomically (paths and numpy scalars as JSON)."""
    write_json_atomically(out / CARD_FILE, card)


def new_version(seed: int) -> str:
    """A fresh model version name: UTC time, the seed, and a random tail."""
    # Time first so versions sort by age; the random tail keeps two runs in one second apart.
    return dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S") + f"-s{seed}-{uuid.uuid4().hex[:6]}"


def _onnx_metadata(version: str, probe_nodes: int) -> dict[str, str]:
    return {
        "model_version": version,
        "feature_schema": SCHEMA_VERSION,
        "probe_nodes": str(probe_nodes),
        "inputs": ",".join(input_names(probe_nodes)),
        "threshold": "0.5",
    }
