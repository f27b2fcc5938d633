"""The retraining job and its steps: train, tune the cutoff, retrain (all of it, then install).

- ``train_classifier(data_dirs, out)``: cross-validation, tuning, final fit,
  held-out evaluation, ONNX export with a parity check, plots; writes
  ``classifier.onnx`` and ``model_card.json`` into ``out``.
- ``tune_cutoff(out, …)``: the subset-H ordering model and the cutoff sweep;
  writes ``ordering.json`` and the sweep plot into ``out``.
- ``retrain(config)``: generates the datasets, runs both steps in a staging
  directory under ``config.out`` and installs the version (``models.registry``)
  only when it is complete and its checks pass: ONNX/LightGBM parity, and
  held-out random accuracy of at least ``config.min_accuracy``. An interrupted
  or failed run leaves the installed model untouched. Datasets are kept under
  ``config.out/datasets`` and reused, or resumed, by later runs.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import platform
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from features import SCHEMA_VERSION, feature_names
from game import State, random_states
from models import plots, registry
from models.classifier import CARD_FILE, CLASSIFIER_FILE
from models.datasets import DECISIONS_FIRST_SEED, DatasetSpec, exact_labels, generate_dataset
from models.errors import ModelError
from models.inputs import DEFAULT_PROBE_NODES, input_names
from models.onnx_export import Parity, export_onnx, parity
from models.ordering import ORDERING_FILE, fit_ordering, sweep_cutoff, write_ordering
from models.training import (
    PAPER_PARAMS,
    TUNING_GRID,
    Labelled,
    concat,
    cross_validate,
    fit,
    inputs_of_grids,
    load_labelled,
    metrics,
    p_solvable,
    split_datasets,
    tune,
)

PARITY_ROWS = 10_000
Log = Callable[[str], None]


@dataclass(frozen=True)
class RetrainConfig:
    """Parameters of one retraining run."""

    out: Path
    rows: int = 500_000  # random states (training, tuning, test, cross-validation)
    decision_deals: int = 2_000  # deals from seed 1100 for the decisions dataset
    seed: int = 0
    cv_folds: int = 10
    ordering_states: int = 50_000  # random training states the ordering model is fitted on
    sweep_states: int = 2_000  # held-out random states for the cutoff sweep
    min_accuracy: float = 0.90  # held-out random accuracy below which nothing is installed
    tuned: bool = True
    probe_nodes: int = DEFAULT_PROBE_NODES  # node budget of the exact probe in the model inputs (0: none)
    tuning_grid: tuple[dict[str, Any], ...] = TUNING_GRID  # candidates besides the paper's point
    cluster: Any = field(default=None, compare=False)


def retrain(config: RetrainConfig, log: Log = print) -> Path:
    """Run the whole job and return the installed version's directory."""
    started = time.perf_counter()
    config.out.mkdir(parents=True, exist_ok=True)
    specs = [
        DatasetSpec("random", config.seed, config.rows),
        DatasetSpec("decisions", DECISIONS_FIRST_SEED, config.decision_deals),
    ]
    data_dirs = []
    for spec in specs:
        log(f"dataset: {spec.generator}, {spec.count} {'states' if spec.generator == 'random' else 'deals'}")
        data_dirs.append(config.out / "datasets" / dataset_dir_name(spec))
        generate_dataset(spec, data_dirs[-1], config.cluster)
    version = _version(config.seed)
    stage = registry.staging_dir(config.out, version)
    card = train_classifier(
        data_dirs,
        stage,
        config.tuned,
        config.seed,
        config.cv_folds,
        version,
        log,
        config.tuning_grid,
        config.probe_nodes,
    )
    fit_rows = load_labelled(data_dirs[0] / "data.parquet", probe_nodes=0)
    fit_rows = fit_rows.take(np.arange(min(config.ordering_states, config.rows)))
    card["ordering"] = tune_cutoff(stage, fit_rows, config.sweep_states, config.seed, config.cv_folds, log)
    card.update(_provenance(version, config, time.perf_counter() - started))
    _write_card(stage, card)
    _gate(card, config.min_accuracy)
    installed = registry.install(config.out, stage, version)
    log(f"installed model {version} in {installed}")
    return installed


def train_classifier(
    data_dirs: Sequence[Path],
    out: Path,
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
    version = version or _version(seed)
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
        card["cross_validation"] = cross_validation(splits.random_rows, params, cv_folds, seed, log)
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
    _write_card(out, card)
    return card


def tune_cutoff(
    out: Path, fit_rows: Labelled, sweep_states: int, seed: int, folds: int = 10, log: Log = print
) -> dict[str, Any]:
    """Fit the ordering model on ``fit_rows``, sweep the cutoff on held-out random states, write ``ordering.json``.

    When ``out`` already holds a model card, its ``ordering`` entry is updated too.
    """
    log(f"ordering model on {len(fit_rows.solvable)} states; cutoff sweep on {sweep_states} held-out states")
    fitted = fit_ordering(fit_rows, folds=max(folds, 2), seed=seed)
    # Held out: a random seed no dataset of this run uses.
    held_out = random_states(seed + 10_007, sweep_states)
    sweep = sweep_cutoff(held_out, fitted.coefficients)
    write_ordering(out / ORDERING_FILE, fitted, sweep.best, sweep, {"feature_schema": SCHEMA_VERSION})
    plots.cutoff_sweep_plot(
        sweep.cutoffs, sweep.mean_ms, sweep.compatible_ms, sweep.best, out / "plots" / "cutoff_sweep.png"
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
        _write_card(out, {**card, "ordering": summary})
    return summary


def labelled_random_states(count: int, seed: int) -> Labelled:
    """``count`` random states labelled by the exact solver, in this process (for small runs)."""
    states = random_states(seed, count)
    return _labelled(states)


def dataset_dir_name(spec: DatasetSpec) -> str:
    """A directory name that changes with every parameter of ``spec``."""
    digest = hashlib.sha256(json.dumps(asdict(spec), sort_keys=True).encode()).hexdigest()[:10]
    return f"{spec.generator}-{spec.count}-s{spec.seed}-{digest}"


def _labelled(states: Sequence[State]) -> Labelled:
    from game import format_grid

    return Labelled(
        matrix=inputs_of_grids((format_grid(s) for s in states), probe_nodes=0),
        solvable=np.array(exact_labels(states), dtype=np.int8),
        stacks=np.array([s.n_stacks for s in states], dtype=np.int8),
    )


def cross_validation(rows: Labelled, params: dict[str, Any], folds: int, seed: int, log: Log) -> dict[str, Any]:
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


def _gate(card: dict[str, Any], min_accuracy: float) -> None:
    if not Parity(**card["parity"]).passes():
        raise ModelError(f"ONNX parity check failed: {card['parity']}; nothing installed")
    accuracy = card["evaluation"]["test_random"]["accuracy"]
    if accuracy < min_accuracy:
        raise ModelError(f"held-out accuracy {accuracy:.4f} is below {min_accuracy}; nothing installed")


def _write_card(out: Path, card: dict[str, Any]) -> None:
    (out / CARD_FILE).write_text(json.dumps(card, indent=2, default=_jsonable) + "\n", encoding="utf-8")


def _version(seed: int) -> str:
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


def _provenance(version: str, config: RetrainConfig, elapsed_s: float) -> dict[str, Any]:
    packages = ("boaf", "lightgbm", "onnxruntime", "onnxmltools", "numpy", "scikit-learn", "numba", "igraph")
    return {
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "config": {k: v for k, v in asdict(config).items() if k != "cluster"},
        "elapsed_s": elapsed_s,
        "python": platform.python_version(),
        "packages": {name: _package_version(name) for name in packages},
    }


def _package_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def _jsonable(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} to the model card")
