"""The hard remainder: states Classify's exact path leaves open, and a model trained on them.

The learned model only ever sees states the budgeted search did not settle, so
it is trained on that distribution: states of 9-16 stacks whose compatibility
graph is connected and that the exact path's budget leaves open, labelled by
the solver with no node budget (states it cannot settle within
``LABEL_TIME_LIMIT_S`` are dropped and counted). Five sources, none of which
a benchmark or tuning set uses (the balanced deals are 0-100,000, the external
set deals 0-99):

- ``random``: random states of each stack count 9-16 (seeds from 70,000);
- ``decisions``: decision states of deals from 60,000 (Neller's generator);
- ``deals``: the open deals of seeds 100,001-, the FFUDs among them;
- ``ffud``: hard negatives, every FFUD among the deals of ``FFUD_RANGES`` past
  those (connected, unsolvable, and needing 100k-2.3M nodes): the open deals
  that a longer best-n search does not solve either are labelled, and the
  unsolvable ones kept;
- ``ffud_like``: random 16-card deals (seed 90,000) that Kahn's 3-heuristic
  flags as possible FFUDs and the budget leaves open, both labels kept.

``train_hard_model`` fits LightGBM on the feature vector and the progress of a
small budgeted search (``boaf.search.progress``, ``PROGRESS_NODES`` states; no probe:
on these states it would always say "undecided"), recalibrates it per stack count on a
held-out split (``boaf.models.calibration``), exports it to ONNX with a parity check
on the held-out rows, and writes a complete model version directory.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.metrics import brier_score_loss, roc_auc_score

from boaf.features import SCHEMA_VERSION, feature_matrix, feature_names
from boaf.features.kahn import A2_ZEROS_ABOVE, MAX_DETERMINANT, PAIR_COUNT_BELOW
from boaf.game import State, deal, parse_grid, random_states
from boaf.game.arrays import states_to_array
from boaf.models import plots, registry
from boaf.models.budget import CANDIDATES, tune_budget, tuning_sets
from boaf.models.calibration import fit_calibration, write_calibration
from boaf.models.classifier import CARD_FILE, CLASSIFIER_FILE, Classifier, bounded, load_classifier
from boaf.models.datasets import DatasetSpec, generate_chunk
from boaf.models.errors import ModelError
from boaf.models.exact_path import EXACT_FILE, ExactBudget, whole_deals, write_exact_budget
from boaf.models.files import strict_json, write_json_atomically
from boaf.models.inputs import input_names, model_inputs
from boaf.models.onnx_export import export_onnx, parity
from boaf.models.ordering import ORDERING_FILE
from boaf.models.retrain_steps import new_version
from boaf.models.training import Labelled, fit, metrics, split_indices
from boaf.search import SOLVABLE, UNKNOWN, solve_deals, solve_many

HARD_STACKS = range(9, 17)
RANDOM_SEED = 70_000
DECISIONS_SEED = 60_000
DEALS_FIRST_SEED = 100_001
#: Where hard negatives are hunted: a million deals either side of 0, less the benchmarks' 0-100,000.
FFUD_RANGES = (range(-1_000_000, 0), range(DEALS_FIRST_SEED, 1_000_000))
FFUD_SIEVE_NODES = 3000  # best-n nodes that solve most open solvable deals, so fewer need labelling
FFUD_LIKE_SEED = 90_000
PROGRESS_NODES = 300
LABEL_TIME_LIMIT_S = 30.0
#: Small enough that the ONNX file stays well under 5 MB.
HARD_PARAMS: dict[str, Any] = {
    "learning_rate": 0.05,
    "n_estimators": 400,
    "num_leaves": 63,
    "min_child_samples": 20,
    "colsample_bytree": 0.8,
}
Log = Callable[[str], None]


@dataclass(frozen=True)
class HardSet:
    """Open, connected states of 9-16 stacks with exact labels; ``group`` keeps a deal's states in one split."""

    states: list[State]
    solvable: np.ndarray
    source: np.ndarray
    group: np.ndarray
    dropped: int = 0  # states the solver could not settle within the time limit
    ffud_ranges: tuple[range, ...] = FFUD_RANGES  # the deals searched for hard negatives (the card records them)

    def take(self, index: np.ndarray) -> HardSet:
        return HardSet(
            [self.states[i] for i in index],
            self.solvable[index],
            self.source[index],
            self.group[index],
            ffud_ranges=self.ffud_ranges,
        )


def open_and_connected(states: Sequence[State], budget: ExactBudget) -> np.ndarray:
    """Indices of ``states`` with 9-16 stacks and a connected graph that the exact path leaves open."""
    if not states:
        return np.zeros(0, dtype=np.intp)
    stacks = np.array([s.n_stacks for s in states])
    status = solve_many(list(states), budget.algorithm, max_nodes=budget.max_nodes).status
    candidates = np.flatnonzero((stacks >= HARD_STACKS.start) & (np.array(status) == UNKNOWN))
    index: np.ndarray = candidates[connected([states[i] for i in candidates.tolist()])]
    return index


def connected(states: Sequence[State]) -> np.ndarray:
    """Indices of ``states`` whose compatibility graph is connected."""
    if not states:
        return np.zeros(0, dtype=np.intp)
    return np.flatnonzero(feature_matrix(list(states))[:, feature_names().index("is_connected")] > 0)


def labelled(states: list[State], source: str, group: np.ndarray) -> HardSet:
    """``states`` labelled by the solver without a node budget; those it cannot settle in time are dropped."""
    answers = solve_many(states, time_limit=LABEL_TIME_LIMIT_S).status
    known = np.array([a is not UNKNOWN for a in answers], dtype=bool)
    keep = np.flatnonzero(known)
    return HardSet(
        [states[i] for i in keep],
        np.array([answers[i] is SOLVABLE for i in keep], dtype=bool),
        np.full(len(keep), source),
        group[keep],
        int((~known).sum()),
    )


def hard_random(per_stack: int, budget: ExactBudget) -> HardSet:
    states = [s for k in HARD_STACKS for s in random_states(RANDOM_SEED + k, per_stack, stacks=k)]
    index = open_and_connected(states, budget)
    return labelled([states[i] for i in index], "random", GROUP_RANDOM - index)


def hard_decisions(deals: int, budget: ExactBudget) -> HardSet:
    table = generate_chunk((DatasetSpec("decisions", DECISIONS_SEED, deals), 0, deals))
    states = [parse_grid(g) for g in table.column("grid").to_pylist()]
    labels = np.asarray(table.column("solvable").to_pylist(), dtype=bool)
    seeds = np.asarray(table.column("deal").to_numpy())
    index = open_and_connected(states, budget)
    return HardSet([states[i] for i in index], labels[index], np.full(len(index), "decisions"), seeds[index])


def hard_deals(count: int, budget: ExactBudget) -> HardSet:
    seeds = np.arange(DEALS_FIRST_SEED, DEALS_FIRST_SEED + count)
    status = solve_deals(seeds, budget.algorithm, max_nodes=budget.max_nodes).status
    open_seeds = seeds[np.array(status) == UNKNOWN]
    states = [deal(int(s)) for s in open_seeds]
    index = connected(states)
    return labelled([states[i] for i in index], "deals", open_seeds[index])


def hard_negatives(after: int, budget: ExactBudget, ffud_ranges: tuple[range, ...] = FFUD_RANGES) -> HardSet:
    """The FFUDs among the deals of ``ffud_ranges`` from seed ``after`` on (the ``deals`` source holds those before)."""
    ranges = [range(max(r.start, after), r.stop) if r.start >= DEALS_FIRST_SEED else r for r in ffud_ranges]
    seeds = np.concatenate([np.arange(r.start, r.stop) for r in ranges])
    status = solve_deals(seeds, budget.algorithm, max_nodes=budget.max_nodes).status
    open_seeds = seeds[np.array(status) == UNKNOWN]
    longer = solve_deals(open_seeds, "best-n", max_nodes=FFUD_SIEVE_NODES).status
    open_seeds = open_seeds[np.array(longer) == UNKNOWN]
    states = [deal(int(s)) for s in open_seeds]
    index = connected(states)
    found = labelled([states[i] for i in index], "ffud", open_seeds[index])
    return found.take(np.flatnonzero(~found.solvable))


def hard_ffud_like(count: int, budget: ExactBudget) -> HardSet:
    """Random 16-card deals flagged by Kahn's 3-heuristic and left open by the budget, labelled."""
    states = random_states(FFUD_LIKE_SEED, count, stacks=16)
    matrix = feature_matrix(states)
    column = {name: matrix[:, i] for i, name in enumerate(feature_names())}
    flagged = np.flatnonzero(
        (column["is_connected"] > 0)
        & (column["adjacency_det"] <= MAX_DETERMINANT)
        & (column["flockability"] < PAIR_COUNT_BELOW)
        & (column["a2_zeros"] > A2_ZEROS_ABOVE)
    )
    candidates = [states[i] for i in flagged]
    index = flagged[open_and_connected(candidates, budget)]
    return labelled([states[i] for i in index], "ffud_like", GROUP_FFUD_LIKE - index)


GROUP_RANDOM, GROUP_FFUD_LIKE = -(10**9), -2 * 10**9  # group numbers apart from every deal seed


def build_hard_set(
    per_stack: int,
    decision_deals: int,
    deals: int,
    budget: ExactBudget,
    *,
    log: Log,
    ffud_like: int = 0,
    ffud_ranges: tuple[range, ...] = FFUD_RANGES,
) -> HardSet:
    """The sources together (see the module docstring); ``ffud_like`` random 16-card deals are sieved.

    ``ffud_ranges`` are the deals searched for hard negatives (a smaller set makes a quick run).
    """
    parts = []
    sources: list[tuple[str, Callable[[int, ExactBudget], HardSet], int]] = [
        ("random", hard_random, per_stack),
        ("decisions", hard_decisions, decision_deals),
        ("deals", hard_deals, deals),
        ("ffud", lambda after, b: hard_negatives(after, b, ffud_ranges), DEALS_FIRST_SEED + deals),
    ]
    if ffud_like:
        sources.append(("ffud_like", hard_ffud_like, ffud_like))
    for name, make, size in sources:
        started = time.perf_counter()
        part = make(size, budget)
        parts.append(part)
        log(
            f"hard set, {name}: {len(part.states):,} open connected states ({part.solvable.mean():.1%} solvable, "
            f"{part.dropped} unsettled in {LABEL_TIME_LIMIT_S:.0f} s dropped) in {time.perf_counter() - started:.0f} s"
        )
    return HardSet(
        [s for p in parts for s in p.states],
        np.concatenate([p.solvable for p in parts]),
        np.concatenate([p.source for p in parts]),
        np.concatenate([p.group for p in parts]),
        sum(p.dropped for p in parts),
        ffud_ranges,
    )


def split_hard_set(hard: HardSet, seed: int) -> tuple[HardSet, HardSet, HardSet]:
    """Train / calibration / test, 70/15/15 by group (a deal's states stay together), stratified: the groups that
    hold an unsolvable state are split apart from the others, so that a hard set with few unsolvable states
    still trains on some (a kind with a single group puts it in train)."""
    groups = np.unique(hard.group)
    negative = np.isin(groups, hard.group[~hard.solvable])
    chosen: list[list[np.ndarray]] = [[], [], []]
    for kind in (groups[negative], groups[~negative]):
        for i, part in enumerate(split_indices(len(kind), (0.7, 0.15, 0.15), seed)):
            chosen[i].append(kind[part])
    train, calibrate, test = (hard.take(np.flatnonzero(np.isin(hard.group, np.concatenate(c)))) for c in chosen)
    return train, calibrate, test


def train_hard_model(
    hard: HardSet, out: Path, installed: Classifier, version: str, *, seed: int = 0, log: Log = print
) -> dict[str, Any]:
    """Train, recalibrate, export and check the hard-remainder model; write a model version into ``out``.

    ``installed`` supplies the exact path and the ordering model the version
    keeps, and the baseline the card compares the new model with on the test split.
    """
    out.mkdir(parents=True, exist_ok=True)
    train, calibrate, test = split_hard_set(hard, seed)
    if train.solvable.all() or not train.solvable.any():
        kind = "solvable" if train.solvable.any() else "unsolvable"
        raise ModelError(
            f"the hard set's training split holds only {kind} states ({len(train.states):,} of "
            f"{len(hard.states):,}): a model needs both; build a larger hard set"
        )
    inputs = {name: _inputs(part) for name, part in (("train", train), ("calibrate", calibrate), ("test", test))}
    log(f"hard set split: {len(train.states):,} train, {len(calibrate.states):,} calibrate, {len(test.states):,} test")
    train_set = Labelled(inputs["train"], train.solvable.astype(np.int8), _stacks(train))
    model = fit(HARD_PARAMS, train_set, seed, threads=1)  # one core: the machine is shared
    raw = {name: np.asarray(model.predict_proba(m))[:, 1] for name, m in inputs.items()}
    calibration = fit_calibration(raw["calibrate"], calibrate.solvable, _stacks(calibrate))
    # Bounded as Classify bounds its estimates: the figures are the served model's.
    test_deals = whole_deals(states_to_array(test.states), 4, 4)  # the hard set is 4x4
    calibrated = bounded(calibration.apply(raw["test"], _stacks(test)), test_deals)
    onnx_path = export_onnx(model, out / CLASSIFIER_FILE, onnx_metadata(version))
    check = parity(model, onnx_path, inputs["test"])
    if not check.passes():
        raise RuntimeError(f"ONNX parity failed on the hard test split: {check}")
    write_calibration(out, calibration)
    y = test.solvable.astype(np.float64)
    curves = {"hard test, raw": (raw["test"], y), "hard test, recalibrated": (calibrated, y)}
    plots.calibration_plot(curves, out / "plots" / "calibration.png")
    plots.roc_plot(curves, out / "plots" / "roc.png")
    gains = np.asarray(model.booster_.feature_importance(importance_type="gain"), dtype=np.float64)
    plots.importance_plot(input_names(0, PROGRESS_NODES), gains, out / "plots" / "importance.png")
    keep_search_settings(out, installed)
    card = {
        "model_version": version,
        "feature_schema": SCHEMA_VERSION,
        "probe_nodes": 0,
        "progress_nodes": PROGRESS_NODES,
        "inputs": input_names(0, PROGRESS_NODES),
        "params": HARD_PARAMS,
        "hard_set": _describe(hard, train, calibrate, test),
        "evaluation": {
            "hard_test": {
                "raw": metrics(raw["test"], test.solvable.astype(np.int8)),
                "calibrated": metrics(calibrated, test.solvable.astype(np.int8)),
                "installed_model": metrics(installed.predict(test.states), test.solvable.astype(np.int8)),
                "by_stacks": _by_stacks(calibrated, test),
                "reliability": reliability(calibrated, test.solvable),
            }
        },
        "parity": asdict(check),
        "ordering": installed.card.get("ordering"),
        # The version it was built on: its training sets and cross-validation (the papers' comparisons) stay on record.
        "base_model": installed.card.get("base_model")
        or {
            key: installed.card.get(key)
            for key in ("model_version", "datasets", "cross_validation", "params", "evaluation")
        },
        "exact_path": installed.card.get("exact_path", {EXACT_FILE: installed.exact.to_json()}),
    }
    write_json_atomically(out / CARD_FILE, strict_json(card))
    log(f"hard test split: {json.dumps(card['evaluation']['hard_test']['calibrated'])}")
    log(f"installed model on it: {json.dumps(card['evaluation']['hard_test']['installed_model'])}")
    return card


def reliability(p: np.ndarray, solvable: np.ndarray, bins: int = 10) -> list[dict[str, Any]]:
    """Rows of a reliability table: per bin of p, the count, mean p and observed solvable share."""
    which = np.clip((p * bins).astype(int), 0, bins - 1)
    return [
        {
            "bin": f"{b / bins:.1f}-{(b + 1) / bins:.1f}",
            "rows": int(np.sum(which == b)),
            "mean_p": float(p[which == b].mean()),
            "observed": float(solvable[which == b].mean()),
        }
        for b in range(bins)
        if np.any(which == b)
    ]


def _by_stacks(p: np.ndarray, part: HardSet) -> dict[int, dict[str, float | None]]:
    stacks, y = _stacks(part), part.solvable
    out = {}
    for k in np.unique(stacks):
        rows = stacks == k
        both = len(np.unique(y[rows])) == 2
        out[int(k)] = {
            "rows": int(rows.sum()),
            "accuracy": float(np.mean((p[rows] >= 0.5) == y[rows])),
            "auc": float(roc_auc_score(y[rows], p[rows])) if both else None,
            "brier": float(brier_score_loss(y[rows], p[rows])),
            "mean_p": float(p[rows].mean()),
            "observed": float(y[rows].mean()),
        }
    return out


def _describe(hard: HardSet, *parts: HardSet) -> dict[str, Any]:
    sources = {
        str(s): {"rows": int(np.sum(hard.source == s)), "solvable": float(hard.solvable[hard.source == s].mean())}
        for s in np.unique(hard.source)
    }
    return {
        "rows": len(hard.states),
        "dropped_unsettled": hard.dropped,
        "label_time_limit_s": LABEL_TIME_LIMIT_S,
        "sources": sources,
        "splits": [len(p.states) for p in parts],
        "seeds": {
            "random": RANDOM_SEED,
            "decisions": DECISIONS_SEED,
            "deals": DEALS_FIRST_SEED,
            "ffud": [[r.start, r.stop - 1] for r in hard.ffud_ranges],
            "ffud_like": FFUD_LIKE_SEED,
        },
    }


def _inputs(part: HardSet) -> np.ndarray:
    return model_inputs(part.states, 0, PROGRESS_NODES)


def _stacks(part: HardSet) -> np.ndarray:
    return np.array([s.n_stacks for s in part.states])


def keep_search_settings(out: Path, installed: Classifier) -> None:
    """Give the version in ``out`` the installed one's exact path (``exact_path.json``) and ordering model."""
    write_exact_budget(out, installed.exact)
    if installed.ordering_path is not None:
        shutil.copyfile(installed.ordering_path, out / ORDERING_FILE)


def onnx_metadata(
    version: str, *, children: bool = False, exact: bool = False, progress_nodes: int = PROGRESS_NODES
) -> dict[str, str]:
    """The ONNX metadata of a model reading the features and a ``progress_nodes`` search's progress (no probe;
    0: none), and, when ``children``, the child features (``boaf.features.children``), when ``exact``, what the
    exact path's search learned (``boaf.models.inputs.EXACT_COLUMNS``)."""
    return {
        "model_version": version,
        "feature_schema": SCHEMA_VERSION,
        "probe_nodes": "0",
        "progress_nodes": str(progress_nodes),
        "child_features": "1" if children else "0",
        "exact_columns": "1" if exact else "0",
        "inputs": ",".join(input_names(0, progress_nodes, children=children, exact=exact)),
        "threshold": "0.5",
    }


def retrain_hard(
    out: Path,
    installed_dir: Path | None = None,
    *,
    per_stack: int = 4000,
    decision_deals: int = 800,
    deals: int = 50_000,
    gate_states: int = 5000,
    gate_deals: int = 40,
    seed: int = 0,
    log: Log = print,
    ffud_like: int = 1_000_000,
    ffud_ranges: tuple[range, ...] = FFUD_RANGES,
    budgets: Sequence[int] = CANDIDATES,
) -> Path:
    """Build the hard set, train on it, re-tune the budget, and install the version under ``out`` if it is no worse.

    The new version must classify held-out random and decision states (seeds
    no other step uses) at least as accurately as the installed model, or it
    is refused (``ModelError``) and nothing is installed. ``ffud_ranges`` (the
    deals searched for hard negatives) and ``budgets`` (the budget sweep's
    candidates) are the defaults but in quick runs.
    """
    installed = load_classifier(installed_dir)
    hard = build_hard_set(
        per_stack, decision_deals, deals, installed.exact, log=log, ffud_like=ffud_like, ffud_ranges=ffud_ranges
    )
    version = new_version(seed)
    out.mkdir(parents=True, exist_ok=True)
    stage = registry.staging_dir(out, version)
    train_hard_model(hard, stage, installed, version, seed=seed, log=log)
    tune_budget(stage, tuning_sets(gate_states, gate_deals, seed), budgets, log=log)
    gate = {s.name: _accuracies(installed, load_classifier(stage), s) for s in tuning_sets(gate_states, gate_deals, 1)}
    add_to_card(stage, {"gate": gate})
    worse = [name for name, row in gate.items() if row["new"] < row["installed"]]
    log(f"held-out gate: {json.dumps(gate)}")
    if worse:
        raise ModelError(f"refused: the new model is less accurate than the installed one on {', '.join(worse)}")
    return registry.install(out, stage, version)


def _accuracies(installed: Classifier, new: Classifier, labelled: Any) -> dict[str, float]:
    def accuracy(model: Classifier) -> float:
        return float(np.mean((model.classify(labelled.states).p_solvable >= model.threshold) == labelled.solvable))

    return {"installed": accuracy(installed), "new": accuracy(new), "rows": len(labelled.states)}


def add_to_card(directory: Path, entries: dict[str, Any]) -> None:
    """Merge ``entries`` into ``directory``'s model card (strict JSON, written atomically)."""
    path = directory / CARD_FILE
    card = json.loads(path.read_text(encoding="utf-8"))
    write_json_atomically(path, strict_json({**card, **entries}))
