"""The retraining job: datasets, both training steps, and installation only when the checks pass.

``retrain(config)`` generates the datasets (``boaf.jobs.dataset``), runs the steps of
``boaf.models.retrain_steps`` in a staging directory under ``config.out`` and installs the
version (``boaf.models.registry``) only when it is complete and its checks pass:
ONNX/LightGBM parity (``boaf.models.onnx_export.Parity``), and held-out random
accuracy of at least ``config.min_accuracy``. An interrupted or failed run
leaves the installed model untouched. Datasets are kept under
``config.out/datasets`` and reused, or resumed, by later runs.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import platform
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from boaf.jobs.dataset import generate_dataset
from boaf.jobs.runner import Cluster
from boaf.models import registry
from boaf.models.datasets import DECISIONS_FIRST_SEED, DatasetSpec
from boaf.models.errors import ModelError
from boaf.models.inputs import DEFAULT_PROBE_NODES
from boaf.models.onnx_export import Parity
from boaf.models.provenance import package_version
from boaf.models.retrain_steps import Log, new_version, train_classifier, tune_cutoff, write_card
from boaf.models.training import TUNING_GRID, load_labelled


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
    cluster: Cluster | None = field(default=None, compare=False)


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
    version = new_version(config.seed)
    stage = registry.staging_dir(config.out, version)
    card = train_classifier(
        data_dirs,
        stage,
        tuned=config.tuned,
        seed=config.seed,
        cv_folds=config.cv_folds,
        version=version,
        log=log,
        tuning_grid=config.tuning_grid,
        probe_nodes=config.probe_nodes,
    )
    fit_rows = load_labelled(data_dirs[0] / "data.parquet", probe_nodes=0)
    fit_rows = fit_rows.take(np.arange(min(config.ordering_states, config.rows)))
    card["ordering"] = tune_cutoff(stage, fit_rows, config.sweep_states, config.seed, folds=config.cv_folds, log=log)
    card.update(_provenance(config, time.perf_counter() - started))
    write_card(stage, card)
    _gate(card, config.min_accuracy)
    installed = registry.install(config.out, stage, version)
    log(f"installed model {version} in {installed}")
    return installed


def dataset_dir_name(spec: DatasetSpec) -> str:
    """A directory name that changes with every parameter of ``spec``."""
    digest = hashlib.sha256(json.dumps(asdict(spec), sort_keys=True).encode()).hexdigest()[:10]
    return f"{spec.generator}-{spec.count}-s{spec.seed}-{digest}"


def _gate(card: dict[str, Any], min_accuracy: float) -> None:
    if not Parity(**card["parity"]).passes():
        raise ModelError(f"ONNX parity check failed: {card['parity']}; nothing installed")
    accuracy = card["evaluation"]["test_random"]["accuracy"]
    if accuracy < min_accuracy:
        raise ModelError(f"held-out accuracy {accuracy:.4f} is below {min_accuracy}; nothing installed")


def _provenance(config: RetrainConfig, elapsed_s: float) -> dict[str, Any]:
    packages = ("boaf", "lightgbm", "onnxruntime", "onnxmltools", "numpy", "scikit-learn", "numba", "igraph")
    return {
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "config": {k: v for k, v in asdict(config).items() if k != "cluster"},
        "elapsed_s": elapsed_s,
        "python": platform.python_version(),
        "packages": {name: package_version(name) for name in packages},
    }
