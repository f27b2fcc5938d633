"""The learned model trained where it answers: on residue sets, calibrated on held-out residue, gated on residue.

``train_residue_model`` fits LightGBM on the residue sets of ``boaf.models.residue``
(the feature vector, a 300-node search's progress, ``boaf.search.progress``, and the summed-up features of
the states one move down, ``boaf.features.children``).
Weights: every set carries the same total weight, whatever its size, so that the
23,000 open deals (99.8% solvable) do not drown the 700 open decision states (92%
solvable); within a set every state weighs the same. The rows are cross-fitted: each
set's rows of each label are dealt at random into ``FOLDS`` folds, and every row is
scored by a model fitted on the other folds. The candidate parameters (``CANDIDATES``)
are judged by the weighted log loss of those out-of-fold scores, and the best one's are
recalibrated (``boaf.models.calibration``: the whole deals' curve, an isotonic curve for
each grid with enough rows, and a pooled one for the rest); the model shipped is
then fitted with those parameters on every row. So every unsolvable state both trains
the model and places its calibration curve, where a held-out calibration part would
keep a third of the few hundred that a 4x4 residue holds out of the fit. The model card
records, per set, the out-of-fold figures for the model and for the set's base-rate
constant.

``residue_gate`` decides whether a new version may replace the installed one. On
held-out residue sets (``GATE_SETS``, seeds no other step uses) generated under
the exact path of the smaller budget (with one algorithm, a deterministic search
that settles a state within b nodes settles it within any larger budget, so that
residue holds every state either version leaves open), each version answers with
its own exact path: its exact answers cost nothing in log loss. The new version
passes when, on every set, its whole-set log loss is no worse than the installed
one's and, on its own residue, its log loss is below the base-rate constant's
(the set's training residue rate). A residue too small for that comparison to mean
anything (``GATE_MIN_STATES``, ``GATE_MIN_MINORITY``) is judged on the whole set
alone, and the table says so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from boaf.features import SCHEMA_VERSION
from boaf.game import State
from boaf.game.arrays import states_to_array
from boaf.models import plots, registry
from boaf.models.calibration import Calibration, fit_calibration, write_calibration
from boaf.models.classifier import CARD_FILE, CLASSIFIER_FILE, Classifier, bounded, load_classifier
from boaf.models.errors import ModelError
from boaf.models.exact_path import ExactBudget, grid_key, whole_deals
from boaf.models.files import strict_json, write_json_atomically
from boaf.models.hard import PROGRESS_NODES, add_to_card, keep_search_settings, onnx_metadata
from boaf.models.inputs import input_names, model_inputs, states_by_shape
from boaf.models.metrics import Scores, scores
from boaf.models.onnx_export import export_onnx, parity
from boaf.models.residue import TRAINING_SETS, Residue, ResidueSpec, cached
from boaf.models.retrain_steps import new_version
from boaf.models.training import make_classifier

#: The model reads the summed-up features of the states one move down (``boaf.features.children``): what
#: each legal move would leave separates the residue better than the state's own features do (docs/model.md
#: compares the trainer with and without them on every held-out residue).
CHILD_FEATURES = True
#: It also reads what the exact path's own search learned before its budget ran out (``inputs.EXACT_COLUMNS``):
#: the search Classify has run already, so they cost nothing, and docs/model.md shows what they add.
EXACT_INPUTS = True
FOLDS = 5  # cross-fitting: each row is scored by the model fitted on the other folds
#: Candidate LightGBM parameters; the least weighted log loss out of fold wins.
CANDIDATES: tuple[dict[str, Any], ...] = (
    {"n_estimators": 300, "learning_rate": 0.03, "num_leaves": 15, "min_child_samples": 20},
    {"n_estimators": 600, "learning_rate": 0.02, "num_leaves": 7, "min_child_samples": 40},
    {"n_estimators": 200, "learning_rate": 0.05, "num_leaves": 31, "min_child_samples": 20},
)
#: Shared by every candidate: row and column subsampling, and some L2, against over-fitting small residues.
COMMON_PARAMS: dict[str, Any] = {"colsample_bytree": 0.8, "subsample": 0.8, "subsample_freq": 1, "reg_lambda": 1.0}
#: A gate set's residue judged against its constant must hold this many states and of its minority class: below
#: that the comparison is noise (24 plausible-play positions, all solvable, would pass or fail on one state).
GATE_MIN_STATES = 100
GATE_MIN_MINORITY = 10
#: Held-out residue sets for the retraining gate: the training distributions, other seeds, fewer states.
#: The deals are three million: since the exact path's second search, 300,000 left one FFUD open, and the
#: whole-set comparison on them weighed only how close to 1 each version puts solvable deals. Where it is
#: cheap (random 4x4, decisions, 5x5, 6x6: 1-4 minutes of one core each) a set holds 200 of its minority, not
#: 50: with 50, the 95% bootstrap interval of the 5x5 set's difference in whole-set log loss between two
#: versions ran from -3% to +9%, and a version the gate refused there at +2.5% was 4.9% better on the
#: benchmark's 5x5 set. Plausible play is played until its residue holds 300 positions and 50 unsolvable, as
#: the benchmark's: 20 batches of 50 games left 6 positions open, and 840 batches (19 minutes of a core) 346 with
#: 10 unsolvable; a version was refused on each of those while better on every other gate set and on both of
#: the benchmark's plausible-play sets (50 unsolvable each). Its 50 took 3,197 batches, about 50 minutes of a core.
GATE_SETS = (
    ResidueSpec("random 4x4", "random", 31_501, batch=2000, max_batches=1500, min_minority=200),
    ResidueSpec("decisions", "decisions", 3_800_000, batch=20, max_batches=600, min_minority=200),
    ResidueSpec(
        "deals", "deals", 2_140_000_000, batch=100_000, max_batches=30, min_states=10**9, label_nodes=20_000_000
    ),
    ResidueSpec("random 5x5", "random", 31_505, 5, 5, 9, batch=1000, min_minority=200),
    ResidueSpec("random 6x6", "random", 31_506, 6, 6, 12, batch=500, min_minority=200),
    ResidueSpec("random 4x13", "random", 31_513, 4, 13, 18, batch=200),
    ResidueSpec("plausible play", "plausible", 1_900_000_000, batch=50, max_batches=6000),
)
Log = Callable[[str], None]


@dataclass(frozen=True)
class Part:
    """A set's rows, or several sets' stacked: inputs, labels, per-row weights, whole 4x4 deals and folds."""

    inputs: np.ndarray
    solvable: np.ndarray
    weight: np.ndarray
    deal: np.ndarray
    fold: np.ndarray
    grid: np.ndarray  # each row's grid, "RxC"


def folds(solvable: np.ndarray, seed: int) -> np.ndarray:
    """Each row's fold in ``range(FOLDS)``: the rows of each label dealt in turn, in a random (seeded) order.

    So every fold holds each label's rows to within one, and a set with at least ``FOLDS``
    of its minority has some in every fold.
    """
    rng = np.random.default_rng(seed)
    out = np.empty(len(solvable), dtype=np.int64)
    for value in (False, True):
        rows = rng.permutation(np.flatnonzero(solvable == value))
        out[rows] = np.arange(len(rows)) % FOLDS
    return out


def parts(sets: Mapping[str, Residue], seed: int, exact: ExactBudget) -> dict[str, Part]:
    """Each set's rows with their folds; every set's rows weigh 1 in all, shared equally. ``exact`` is the exact
    path the model will serve behind, whose search's columns it reads (``EXACT_INPUTS``)."""
    out: dict[str, Part] = {}
    present = {name: residue for name, residue in sets.items() if len(residue.solvable)}
    rows_in_all = sum(len(residue.solvable) for residue in present.values())
    for name, residue in present.items():
        weight = rows_in_all / len(present) / len(residue.solvable)  # mean weight 1 over all sets' rows
        out[name] = Part(
            model_inputs(
                residue.residue, 0, PROGRESS_NODES, children=CHILD_FEATURES, exact=exact if EXACT_INPUTS else None
            ),
            residue.solvable,
            np.full(len(residue.solvable), weight),
            _whole_deals(residue.residue),
            folds(residue.solvable, seed),
            np.array([grid_key(s.rows, s.cols) for s in residue.residue]),
        )
    return out


def _stack(part_of: Mapping[str, Part]) -> Part:
    chosen = list(part_of.values())
    return Part(
        np.vstack([p.inputs for p in chosen]),
        np.concatenate([p.solvable for p in chosen]),
        np.concatenate([p.weight for p in chosen]),
        np.concatenate([p.deal for p in chosen]),
        np.concatenate([p.fold for p in chosen]),
        np.concatenate([p.grid for p in chosen]),
    )


def out_of_fold(params: Mapping[str, Any], rows: Part, seed: int) -> np.ndarray:
    """Each row's raw score from the model (``params``) fitted on the rows of the other folds."""
    raw = np.empty(len(rows.solvable), dtype=np.float64)
    for k in range(FOLDS):
        held = rows.fold == k
        if not held.any():
            continue
        model = make_classifier(dict(params), seed + k, threads=1).fit(
            rows.inputs[~held], rows.solvable[~held].astype(np.int8), sample_weight=rows.weight[~held]
        )
        raw[held] = np.asarray(model.predict_proba(rows.inputs[held]))[:, 1]
    return raw


def weighted_log_loss(p: np.ndarray, solvable: np.ndarray, weight: np.ndarray) -> float:
    """Weighted mean cross-entropy in nats (``p`` clipped to [1e-15, 1 - 1e-15])."""
    q = np.clip(p, 1e-15, 1 - 1e-15)
    loss = -np.where(solvable, np.log(q), np.log1p(-q))
    return float(np.sum(weight * loss) / np.sum(weight))


def train_residue_model(
    sets: Mapping[str, Residue],
    out: Path,
    installed: Classifier,
    version: str,
    *,
    seed: int = 0,
    log: Log = print,
    candidates: Sequence[Mapping[str, Any]] = CANDIDATES,
) -> dict[str, Any]:
    """Fit, choose, calibrate, export and describe a model trained on ``sets``; writes a version into ``out``.

    The version keeps the installed exact path and ordering model. Returns its card.
    """
    per_set = parts(sets, seed, installed.exact)
    rows = _stack(per_set)
    if len(np.unique(rows.solvable)) < 2:
        raise ModelError("the residue sets hold one class only: a model needs both; generate larger sets")
    best, raw, tried = _choose_params(rows, candidates, seed=seed, log=log)
    calibration = fit_calibration(raw, rows.solvable, weight=rows.weight, deals=rows.deal, grids=rows.grid)
    model = make_classifier(best, seed, threads=1).fit(
        rows.inputs, rows.solvable.astype(np.int8), sample_weight=rows.weight
    )
    out.mkdir(parents=True, exist_ok=True)
    names = input_names(0, PROGRESS_NODES, children=CHILD_FEATURES, exact=EXACT_INPUTS)
    metadata = onnx_metadata(version, children=CHILD_FEATURES, exact=EXACT_INPUTS)
    onnx_path = export_onnx(model, out / CLASSIFIER_FILE, metadata)
    check = parity(model, onnx_path, rows.inputs)
    if not check.passes():
        raise RuntimeError(f"ONNX parity failed on the training rows: {check}")
    write_calibration(out, calibration)
    figures, curves = _calibration_figures(calibration, raw, per_set, sets)
    plots.calibration_plot(curves, out / "plots" / "calibration.png")
    gains = np.asarray(model.booster_.feature_importance(importance_type="gain"), dtype=np.float64)
    plots.importance_plot(names, gains, out / "plots" / "importance.png")
    keep_search_settings(out, installed)
    card = {
        "model_version": version,
        "feature_schema": SCHEMA_VERSION,
        "probe_nodes": 0,
        "progress_nodes": PROGRESS_NODES,
        "child_features": CHILD_FEATURES,
        "exact_columns": EXACT_INPUTS,
        "inputs": names,
        "params": best,
        "candidates": tried,
        "trained_on": {
            name: {"states": r.states, "exact": r.exact, "residue": len(r.solvable), "minority": r.minority()}
            for name, r in sets.items()
        },
        "weighting": "every set the same total weight; equal weights within a set",
        "calibration": f"isotonic on {FOLDS}-fold out-of-fold scores; the model fitted on every row",
        "residue_calibration": figures,
        "parity": asdict(check),
        "ordering": installed.card.get("ordering"),
        "base_model": installed.card.get("base_model"),
        "exact_path": installed.card.get("exact_path", installed.exact.to_json()),
    }
    write_json_atomically(out / CARD_FILE, strict_json(card))
    for name, row in figures.items():
        log(
            f"{name}: {row['rows']:,} states out of fold, log loss {row['model']['log_loss']:.4f} "
            f"(constant {row['constant']['log_loss']:.4f}), ECE {row['model']['ece']:.4f}"
        )
    return card


def _choose_params(
    rows: Part, candidates: Sequence[Mapping[str, Any]], *, seed: int, log: Log
) -> tuple[dict[str, Any], np.ndarray, list[dict[str, Any]]]:
    """The parameters (``COMMON_PARAMS`` and the best of ``candidates``) whose out-of-fold scores have the least
    weighted log loss before calibration; those scores; and each candidate's loss."""
    tried: list[dict[str, Any]] = []
    best: tuple[float, dict[str, Any], np.ndarray] | None = None
    for params in candidates:
        chosen = {**COMMON_PARAMS, **params}
        raw = out_of_fold(chosen, rows, seed)
        loss = weighted_log_loss(raw, rows.solvable, rows.weight)
        tried.append({"params": dict(params), "out_of_fold_log_loss_raw": loss})
        log(f"candidate {json.dumps(params)}: weighted log loss {loss:.4f} out of fold")
        if best is None or loss < best[0]:
            best = (loss, chosen, raw)
    if best is None:
        raise ModelError("no candidate parameters to train with")
    return best[1], best[2], tried


def _calibration_figures(
    calibration: Calibration, raw: np.ndarray, per_set: Mapping[str, Part], sets: Mapping[str, Residue]
) -> tuple[dict[str, dict[str, Any]], dict[str, tuple[np.ndarray, np.ndarray]]]:
    """Each set's rows scored out of fold and calibrated (the model against the constant of its set's rate), and
    its curve; ``raw`` holds the out-of-fold scores of ``per_set``'s rows, stacked in its order."""
    figures: dict[str, dict[str, Any]] = {}
    curves = {}
    start = 0
    for name, part in per_set.items():
        end = start + len(part.solvable)
        p = _estimate(calibration, raw[start:end], part.deal, part.grid)
        start = end
        rate = float(sets[name].solvable.mean())
        figures[name] = {
            "rows": len(part.solvable),
            "base_rate": float(part.solvable.mean()),
            "training_rate": rate,
            "model": asdict(scores(p, part.solvable)),
            "constant": asdict(scores(np.full(len(p), rate), part.solvable)),
        }
        curves[name] = (p, part.solvable.astype(np.float64))
    return figures, curves


def _estimate(calibration: Calibration, raw: np.ndarray, deals: np.ndarray, grids: np.ndarray) -> np.ndarray:
    """Calibrated, bounded estimates of raw scores, grid by grid (the pooled curve, the grids' and the deals')."""
    stacks = np.zeros(len(raw), dtype=np.int64)  # no stack-count curves
    out = np.empty(len(raw), dtype=np.float64)
    for grid in np.unique(grids):
        rows = grids == grid
        out[rows] = calibration.apply(raw[rows], stacks[rows], deals[rows], str(grid))
    return bounded(out, deals)


def _whole_deals(states: Sequence[State]) -> np.ndarray:
    """Which of ``states`` are whole 4x4 deals, every cell filled (``whole_deals``, grid by grid)."""
    out = np.zeros(len(states), dtype=bool)
    for (rows, cols), index in states_by_shape(states).items():
        out[index] = whole_deals(states_to_array([states[i] for i in index]), rows, cols)
    return out


@dataclass(frozen=True)
class GateRow:
    """One held-out set's verdict: each version's whole-set log loss, and the new one's residue against its constant."""

    set: str
    states: int  # labelled states of the set (exact answers included)
    installed_log_loss: float  # whole set
    new_log_loss: float  # whole set
    new_residue: int  # states the new version leaves to its model
    new_residue_scores: Scores
    constant_residue_scores: Scores
    constant: float  # the base-rate constant: the set's training residue rate
    new_minority: int  # the residue's states of its minority class

    @property
    def judged(self) -> bool:
        """Whether the residue is large enough to judge against its constant (``GATE_MIN_STATES``, ``_MINORITY``)."""
        return self.new_residue >= GATE_MIN_STATES and self.new_minority >= GATE_MIN_MINORITY

    @property
    def beats_constant(self) -> bool:
        return self.new_residue_scores.log_loss < self.constant_residue_scores.log_loss

    @property
    def passes(self) -> bool:
        """No worse than the installed version on the whole set, and, where judged, better than the constant."""
        no_worse = self.new_log_loss <= self.installed_log_loss + 1e-12
        return no_worse and (self.beats_constant or not self.judged)


def whole_set_log_loss(classifier: Classifier, residue: Residue) -> tuple[float, np.ndarray, np.ndarray]:
    """The version's log loss over the whole set whose open part is ``residue``, its p and exact flags there.

    States outside ``residue`` are settled by (a budget no larger than) each version's exact path: loss 0.
    """
    labelled = residue.states - residue.dropped
    if not residue.residue:
        return 0.0, np.zeros(0), np.zeros(0, dtype=bool)
    answers = classifier.classify(residue.residue)
    q = np.clip(answers.p_solvable, 1e-15, 1 - 1e-15)
    loss = -np.where(residue.solvable, np.log(q), np.log1p(-q))
    return float(loss.sum() / max(labelled, 1)), answers.p_solvable, answers.exact


def residue_gate(
    installed: Classifier, new: Classifier, sets: Mapping[str, Residue], constants: Mapping[str, float]
) -> list[GateRow]:
    """Each held-out set's ``GateRow``; ``sets`` were generated under the smaller of the two exact paths."""
    rows = []
    for name, residue in sets.items():
        old_loss, _, _ = whole_set_log_loss(installed, residue)
        new_loss, p, exact = whole_set_log_loss(new, residue)
        learned = ~exact
        y = residue.solvable[learned]
        constant = constants[name]
        rows.append(
            GateRow(
                name,
                residue.states - residue.dropped,
                old_loss,
                new_loss,
                int(learned.sum()),
                scores(p[learned], y),
                scores(np.full(len(y), constant), y),
                constant,
                int(min(y.sum(), (~y).sum())),
            )
        )
    return rows


def gate_budget_owner(installed: Classifier, new: Classifier, rows: int, cols: int) -> Classifier:
    """The version whose exact path on ``rows`` x ``cols`` leaves open every state the other's does.

    That is the smaller budget on that grid, when both search with one algorithm: a search
    given more nodes settles every state one given fewer does, and so does a second search of
    FFUD-like deals (``ExactBudget.deal_nodes``) beside none. Raises ``ModelError`` when
    neither leaves open all the other's (one has the larger first budget, the other the
    larger second).
    """
    mine = (installed.exact.nodes_for(rows, cols), installed.exact.deal_nodes_for(rows, cols))
    theirs = (new.exact.nodes_for(rows, cols), new.exact.deal_nodes_for(rows, cols))
    if installed.exact.algorithm != new.exact.algorithm and min(mine[0], theirs[0]):
        raise ModelError(
            f"the gate compares exact paths of one algorithm; installed uses {installed.exact.algorithm!r}, "
            f"the new version {new.exact.algorithm!r}"
        )
    if mine[0] <= theirs[0] and mine[1] <= theirs[1]:
        return installed
    if theirs[0] <= mine[0] and theirs[1] <= mine[1]:
        return new
    raise ModelError(
        f"the gate needs one exact path that leaves open all the other's on {rows}x{cols}; the installed "
        f"version has {mine[0]} nodes and {mine[1]} for FFUD-like deals, the new one {theirs[0]} and {theirs[1]}"
    )


def gate_table(rows: Sequence[GateRow]) -> list[dict[str, Any]]:
    """The gate's rows as JSON for the model card (and GetServerInfo, which sends the card)."""
    return [
        {
            "set": r.set,
            "states": r.states,
            "installed_log_loss": r.installed_log_loss,
            "new_log_loss": r.new_log_loss,
            "residue": r.new_residue,
            "constant": r.constant,
            "model": asdict(r.new_residue_scores),
            "constant_scores": asdict(r.constant_residue_scores),
            "minority": r.new_minority,
            "judged_against_constant": r.judged,
            "passes": r.passes,
        }
        for r in rows
    ]


def retrain_residue(
    out: Path,
    cache: Path,
    installed_dir: Path | None = None,
    *,
    seed: int = 0,
    log: Log = print,
    training: Sequence[ResidueSpec] = TRAINING_SETS,
    gate: Sequence[ResidueSpec] = GATE_SETS,
    candidates: Sequence[Mapping[str, Any]] = CANDIDATES,
) -> Path:
    """Generate (or reuse from ``cache``) the residue sets, train, gate, and install the version under ``out``.

    Nothing is installed unless the gate passes on every set (``ModelError`` names the sets that failed);
    the card records the gate's table either way, in the staging directory.
    """
    installed = load_classifier(installed_dir)
    sets = {spec.name: cached(installed, spec, cache, _told(log, spec.name)) for spec in training}
    version = new_version(seed)
    out.mkdir(parents=True, exist_ok=True)
    stage = registry.staging_dir(out, version)
    train_residue_model(sets, stage, installed, version, seed=seed, log=log, candidates=candidates)
    new = load_classifier(stage)
    held_out = {
        spec.name: cached(
            gate_budget_owner(installed, new, spec.rows, spec.cols), spec, cache, _told(log, f"gate: {spec.name}")
        )
        for spec in gate
    }
    constants = {name: float(sets[name].solvable.mean()) if len(sets[name].solvable) else 0.5 for name in held_out}
    rows = residue_gate(installed, new, held_out, constants)
    add_to_card(stage, {"gate": gate_table(rows)})
    for row in rows:
        log(
            f"gate, {row.set}: whole-set log loss {row.new_log_loss:.5f} (installed {row.installed_log_loss:.5f}); "
            f"residue {row.new_residue:,}: {row.new_residue_scores.log_loss:.4f} "
            f"(constant {row.constant_residue_scores.log_loss:.4f}){'' if row.judged else ', too small to judge'} "
            f"{'pass' if row.passes else 'FAIL'}"
        )
    failed = [row.set for row in rows if not row.passes]
    if failed:
        raise ModelError(
            f"refused: on {', '.join(failed)} the new model is worse than the installed one on the whole set "
            f"or no better than its residue's base-rate constant (figures in {stage / CARD_FILE})"
        )
    return registry.install(out, stage, version)


def _told(log: Log, name: str) -> Callable[[str], None]:
    return lambda status: log(f"{name}: {status}")
