"""The retraining job: data, training, evaluation, export, cutoff sweep, model card, install.

``retrain(config)`` builds a new model version in a staging directory under
``config.out`` and installs it (see ``models.registry``) only when it is
complete and its checks pass: ONNX/LightGBM parity, and held-out accuracy at
least ``config.min_accuracy``. Datasets are kept under ``config.out/datasets``
and reused (or resumed) by later runs with the same parameters.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import platform
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from features import SCHEMA_VERSION, feature_names
from game import parse_grid
from models import plots, registry
from models.classifier import CARD_FILE, CLASSIFIER_FILE
from models.datasets import DECISIONS_FIRST_SEED, DatasetSpec, generate_dataset
from models.errors import ModelError
from models.onnx_export import export_onnx, parity
from models.ordering import ORDERING_FILE, fit_ordering, sweep_cutoff, write_ordering
from models.training import (
    PAPER_PARAMS,
    Labelled,
    cross_validate,
    fit,
    load_labelled,
    metrics,
    p_solvable,
    split_indices,
    tune,
)

PARITY_ROWS = 10_000


@dataclass(frozen=True)
class RetrainConfig:
    """Parameters of one retraining run."""

    out: Path
    rows: int = 500_000  # random states (training, tuning, test, cross-validation)
    decision_deals: int = 2_000  # deals from seed 1100 for the decisions dataset
    seed: int = 0
    cv_folds: int = 10
    sweep_states: int = 2_000  # held-out random states for the cutoff sweep
    min_accuracy: float = 0.90  # held-out random accuracy below which nothing is installed
    tuning: bool = True
    cluster: Any = field(default=None, compare=False)


Log = Callable[[str], None]


def retrain(config: RetrainConfig, log: Log = print) -> Path:
    """Run the whole job and return the installed version's directory."""
    started = time.perf_counter()
    data_root = config.out / "datasets"
    random_spec = DatasetSpec("random", config.seed, config.rows)
    decisions_spec = DatasetSpec("decisions", DECISIONS_FIRST_SEED, config.decision_deals)
    log(f"datasets: {config.rows} random states, decisions from {config.decision_deals} deals")
    manifests = {
        "random": generate_dataset(random_spec, data_root / _spec_name(random_spec), config.cluster),
        "decisions": generate_dataset(decisions_spec, data_root / _spec_name(decisions_spec), config.cluster),
    }
    log("features")
    random_data = load_labelled(data_root / _spec_name(random_spec) / "data.parquet")
    decisions_data, decision_deals = _load_decisions(data_root / _spec_name(decisions_spec) / "data.parquet")
    splits = _splits(random_data, decisions_data, decision_deals, config.seed)

    card: dict[str, Any] = {"datasets": manifests, "feature_schema": SCHEMA_VERSION, "features": feature_names()}
    log(f"{config.cv_folds}-fold cross-validation of the paper's configuration")
    card["cv_paper"] = {
        "params": PAPER_PARAMS,
        **cross_validate(PAPER_PARAMS, random_data, config.cv_folds, config.seed),
    }
    params = PAPER_PARAMS
    if config.tuning:
        log("tuning on the validation split")
        tuning = tune(splits["train"], splits["validation"], seed=config.seed)
        card["tuning"] = tuning
        params = tuning["best"]
        log(f"{config.cv_folds}-fold cross-validation of ours: {params}")
        card["cv_ours"] = {"params": params, **cross_validate(params, random_data, config.cv_folds, config.seed)}
    log("final fit")
    fit_started = time.perf_counter()
    model = fit(params, splits["train"], config.seed)
    card["training_s"] = time.perf_counter() - fit_started
    card["params"] = params
    card["evaluation"] = {
        name: metrics(p_solvable(model, splits[name].matrix), splits[name].solvable)
        for name in ("test_random", "test_decisions")
    }
    version = _version(config.seed)
    stage = registry.staging_dir(config.out, version)
    onnx_path = export_onnx(model, stage / CLASSIFIER_FILE, _onnx_metadata(version))
    check_rows = np.concatenate([splits["test_random"].matrix, splits["test_decisions"].matrix])[:PARITY_ROWS]
    check = parity(model, onnx_path, check_rows)
    card["parity"] = asdict(check)
    log(f"parity on {check.rows} rows: labels agree {check.label_agreement:.6f}, max |dp| {check.max_abs_dp:.2e}")

    log("ordering model and cutoff sweep")
    card["ordering"] = _ordering(splits, config, stage)
    _plot(model, splits, card, stage)
    card.update(_provenance(version, config, time.perf_counter() - started))
    (stage / CARD_FILE).write_text(json.dumps(card, indent=2, default=_jsonable) + "\n", encoding="utf-8")

    _gate(card, config)
    installed = registry.install(config.out, stage, version)
    log(f"installed model {version} in {installed}")
    return installed


def _splits(random_data: Labelled, decisions: Labelled, deals: np.ndarray, seed: int) -> dict[str, Labelled]:
    train_r, val_r, test_r = split_indices(len(random_data.solvable), (0.8, 0.1, 0.1), seed)
    # Decision states are split by deal so that no deal is in both training and test.
    unique = np.unique(deals)
    train_d, val_d, test_d = (
        np.isin(deals, unique[part]) for part in split_indices(len(unique), (0.8, 0.1, 0.1), seed)
    )
    return {
        "train": _concat(random_data.take(train_r), decisions.take(np.flatnonzero(train_d))),
        "validation": _concat(random_data.take(val_r), decisions.take(np.flatnonzero(val_d))),
        "test_random": random_data.take(test_r),
        "test_decisions": decisions.take(np.flatnonzero(test_d)),
        "ordering_train": random_data.take(train_r),
        "sweep": random_data.take(test_r),
    }


def _concat(a: Labelled, b: Labelled) -> Labelled:
    return Labelled(
        np.concatenate([a.matrix, b.matrix]),
        np.concatenate([a.solvable, b.solvable]),
        np.concatenate([a.stacks, b.stacks]),
    )


def _load_decisions(path: Path) -> tuple[Labelled, np.ndarray]:
    import pyarrow.parquet as pq

    return load_labelled(path), pq.read_table(path, columns=["deal"]).column("deal").to_numpy()


def _ordering(splits: dict[str, Labelled], config: RetrainConfig, stage: Path) -> dict[str, Any]:
    fitted = fit_ordering(splits["ordering_train"], folds=config.cv_folds, seed=config.seed)
    grids = _sweep_grids(config)
    sweep = sweep_cutoff([parse_grid(g) for g in grids], fitted.coefficients)
    write_ordering(stage / ORDERING_FILE, fitted, sweep.best, sweep, {"feature_schema": SCHEMA_VERSION})
    plots.cutoff_sweep_plot(
        sweep.cutoffs, sweep.mean_ms, sweep.compatible_ms, sweep.best, stage / "plots" / "cutoff_sweep.png"
    )
    return {
        "coefficients": fitted.coefficients,
        "rmse": fitted.rmse,
        "cutoff": sweep.best,
        "mean_nodes_at_cutoff": sweep.mean_nodes[sweep.cutoffs.index(sweep.best)],
        "mean_ms_at_cutoff": min(sweep.mean_ms),
        "compatible_nodes": sweep.compatible_nodes,
        "compatible_ms": sweep.compatible_ms,
        "sweep_states": len(grids),
    }


def _sweep_grids(config: RetrainConfig) -> list[str]:
    # Held out: a random dataset seed that training never sees.
    from game import format_grid, random_states

    return [format_grid(s) for s in random_states(config.seed + 10_007, config.sweep_states)]


def _plot(model: Any, splits: dict[str, Labelled], card: dict[str, Any], stage: Path) -> None:
    curves = {
        name: (p_solvable(model, splits[name].matrix), splits[name].solvable.astype(np.float64))
        for name in ("test_random", "test_decisions")
    }
    plots.roc_plot(curves, stage / "plots" / "roc.png")
    plots.calibration_plot(curves, stage / "plots" / "calibration.png")
    gains = np.asarray(model.booster_.feature_importance(importance_type="gain"), dtype=np.float64)
    plots.importance_plot(feature_names(), gains, stage / "plots" / "importance.png")


def _gate(card: dict[str, Any], config: RetrainConfig) -> None:
    parity_ok = card["parity"]["label_agreement"] >= 0.9999 and card["parity"]["max_abs_dp"] <= 1e-4
    if not parity_ok:
        raise ModelError(f"ONNX parity check failed: {card['parity']}; nothing installed")
    accuracy = card["evaluation"]["test_random"]["accuracy"]
    if accuracy < config.min_accuracy:
        raise ModelError(f"held-out accuracy {accuracy:.4f} is below {config.min_accuracy}; nothing installed")


def _version(seed: int) -> str:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-s{seed}"


def _onnx_metadata(version: str) -> dict[str, str]:
    return {
        "model_version": version,
        "feature_schema": SCHEMA_VERSION,
        "feature_names": ",".join(feature_names()),
        "threshold": "0.5",
    }


def _provenance(version: str, config: RetrainConfig, elapsed_s: float) -> dict[str, Any]:
    packages = ("boaf", "lightgbm", "onnxruntime", "onnxmltools", "numpy", "scikit-learn", "numba", "igraph")
    return {
        "model_version": version,
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


def _spec_name(spec: DatasetSpec) -> str:
    digest = hashlib.sha256(json.dumps(asdict(spec), sort_keys=True).encode()).hexdigest()[:10]
    return f"{spec.generator}-{spec.count}-s{spec.seed}-{digest}"


def _jsonable(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} to the model card")
