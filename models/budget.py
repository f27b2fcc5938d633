"""Choosing the exact path's node budget by measurement against Classify's latency targets.

``tune_budget(model_dir, sets)`` classifies held-out labelled sets with the
model at each candidate budget, timing 1,000-state batches and single states
on the calling thread's CPU clock (one core), and keeps the largest budget
whose cost meets both targets on every set: the more nodes, the more states
are answered exactly. It writes the budget beside the model
(``exact_path.json``, read by the classifier), the sweep into the model card,
and the sweep's plot.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from boaf.game import State, parse_grid, random_states
from boaf.models import plots
from boaf.models.classifier import CARD_FILE, Classifier, load_classifier
from boaf.models.datasets import DatasetSpec, exact_labels, generate_chunk
from boaf.models.errors import ModelError
from boaf.models.exact import ExactBudget, write_exact_budget
from boaf.models.files import write_text_atomically

#: What Classify may cost: CPU ms of one core per state in 1,000-state batches, and a single state's p99.
BATCH_MS_TARGET = 0.3
SINGLE_P99_MS_TARGET = 2.0
#: The share of each target a chosen budget may use: timings on a shared machine vary by more than 10%.
HEADROOM = 0.8
BATCH = 1000
REPEATS = 3  # runs of each single state, one per pass over the states; its time is the least
CANDIDATES = (250, 500, 1000, 1500, 2000, 3000, 4000, 6000, 8000, 12000, 16000)
#: Seeds no training set uses: random states of seed 20141, decision states of deals from 40,000.
TUNING_RANDOM_SEED = 20_141
TUNING_DECISIONS_SEED = 40_000


@dataclass(frozen=True)
class LabelledStates:
    """States of one grid shape with their exact labels (``solvable``: bool), e.g. a held-out set."""

    name: str
    states: list[State]
    solvable: np.ndarray


@dataclass(frozen=True)
class BudgetCost:
    """What Classify costs and scores at one budget on one labelled set.

    Times are CPU ms of the calling thread per state (one core): ``batch_ms``
    in 1,000-state batches, ``single_*`` one state per call (each the least of ``REPEATS`` runs).
    """

    max_nodes: int
    name: str
    accuracy: float
    exact_share: float
    batch_ms: float
    single_mean_ms: float
    single_p50_ms: float
    single_p99_ms: float


def measure_budget(classifier: Classifier, labelled: LabelledStates, max_nodes: int, singles: int) -> BudgetCost:
    """Classify ``labelled`` with the exact path at ``max_nodes``; ``singles`` states are also timed one by one."""
    trial = replace(classifier, exact=ExactBudget(max_nodes, classifier.exact.algorithm))
    states = labelled.states
    trial.classify(states[:2])  # compile and load before timing
    started = time.thread_time()
    answers = [trial.classify(states[i : i + BATCH]) for i in range(0, len(states), BATCH)]
    batch_ms = (time.thread_time() - started) * 1e3 / max(len(states), 1)
    p = np.concatenate([a.p_solvable for a in answers])
    exact = np.concatenate([a.exact for a in answers])
    single = _single_ms(trial, states[:singles])
    return BudgetCost(
        max_nodes=max_nodes,
        name=labelled.name,
        accuracy=float(np.mean((p >= trial.threshold) == labelled.solvable)),
        exact_share=float(np.mean(exact)),
        batch_ms=batch_ms,
        single_mean_ms=float(single.mean()),
        single_p50_ms=float(np.percentile(single, 50)),
        single_p99_ms=float(np.percentile(single, 99)),
    )


def choose_budget(costs: Sequence[BudgetCost], headroom: float = HEADROOM) -> int:
    """The largest budget whose cost meets both latency targets on every set, with ``headroom`` to spare.

    A budget meets them when ``batch_ms <= headroom * BATCH_MS_TARGET`` and
    ``single_p99_ms <= headroom * SINGLE_P99_MS_TARGET`` on each set measured.
    Raises ``ModelError`` when none does.
    """
    budgets = sorted({c.max_nodes for c in costs})
    fits = [
        b
        for b in budgets
        if all(
            c.batch_ms <= headroom * BATCH_MS_TARGET and c.single_p99_ms <= headroom * SINGLE_P99_MS_TARGET
            for c in costs
            if c.max_nodes == b
        )
    ]
    if not fits:
        raise ModelError(f"no budget of {budgets} meets the latency targets on this machine")
    return max(fits)


def _single_ms(classifier: Classifier, states: Sequence[State], repeats: int = REPEATS) -> np.ndarray:
    """Each state's CPU ms for one call: the least of ``repeats`` runs, a state's own cost without contention.

    The runs of a state are spread over ``repeats`` passes through all the states, not made back to back:
    another process's burst on a shared machine then spoils at most one of them.
    """
    passes = np.empty((repeats, len(states)))
    for r in range(repeats):
        for i, state in enumerate(states):
            started = time.thread_time()
            classifier.classify([state])
            passes[r, i] = time.thread_time() - started
    return np.asarray(passes.min(axis=0) * 1e3, dtype=np.float64)


def tuning_sets(random_count: int, decision_deals: int, seed: int = 0) -> list[LabelledStates]:
    """Held-out labelled sets to tune on: random states, and the decision states of ``decision_deals`` deals."""
    randoms = random_states(TUNING_RANDOM_SEED + seed, random_count)
    spec = DatasetSpec("decisions", TUNING_DECISIONS_SEED + seed * decision_deals, decision_deals)
    table = generate_chunk((spec, 0, decision_deals))
    decisions = [parse_grid(g) for g in table.column("grid").to_pylist()]
    decision_labels = np.asarray(table.column("solvable").to_pylist(), dtype=bool)
    return [
        LabelledStates("random", randoms, np.array(exact_labels(randoms), dtype=bool)),
        LabelledStates("decisions", decisions, decision_labels),
    ]


def tune_budget(
    model_dir: Path,
    sets: Sequence[LabelledStates],
    candidates: Sequence[int] = CANDIDATES,
    singles: int = 1000,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Sweep ``candidates`` on ``sets``, keep the largest budget within the targets, and write it into ``model_dir``.

    Writes ``exact_path.json``, the card's ``exact_path`` entry and
    ``plots/budget_sweep.png``; returns the card entry.
    """
    classifier = load_classifier(model_dir)
    costs = []
    for max_nodes in candidates:
        for labelled in sets:
            costs.append(cost := measure_budget(classifier, labelled, max_nodes, singles))
            log(
                f"{max_nodes:>6} nodes, {cost.name:9s}: accuracy {cost.accuracy:.4%}, exact {cost.exact_share:.2%}, "
                f"batch {cost.batch_ms:.3f} ms/state, single p99 {cost.single_p99_ms:.3f} ms"
            )
    chosen = choose_budget(costs)
    entry = {
        "max_nodes": chosen,
        "algorithm": classifier.exact.algorithm,
        "targets": {"batch_ms": BATCH_MS_TARGET, "single_p99_ms": SINGLE_P99_MS_TARGET, "headroom": HEADROOM},
        "at_budget": {s.name: slice_report(classifier, s, chosen) for s in sets},
        "sweep": [asdict(c) for c in costs],
    }
    measured = {"targets": entry["targets"], "costs": [asdict(c) for c in costs if c.max_nodes == chosen]}
    write_exact_budget(model_dir, ExactBudget(chosen, classifier.exact.algorithm, measured))
    _update_card(model_dir, entry)
    plots.budget_sweep_plot(costs, chosen, model_dir / "plots" / "budget_sweep.png")
    log(f"chosen budget: {chosen} nodes")
    return entry


def slice_report(classifier: Classifier, labelled: LabelledStates, max_nodes: int) -> dict[str, Any]:
    """At ``max_nodes``: accuracy overall and on the learned slice, and the share settled exactly by stack count."""
    trial = replace(classifier, exact=ExactBudget(max_nodes, classifier.exact.algorithm))
    answers = trial.classify(labelled.states)
    right = (answers.p_solvable >= trial.threshold) == labelled.solvable
    learned = ~answers.exact
    stacks = np.array([s.n_stacks for s in labelled.states])
    return {
        "rows": len(labelled.states),
        "accuracy": float(right.mean()),
        "exact_share": float(answers.exact.mean()),
        "learned_rows": int(learned.sum()),
        "learned_accuracy": float(right[learned].mean()) if learned.any() else None,
        "exact_share_by_stacks": {int(k): float(answers.exact[stacks == k].mean()) for k in np.unique(stacks)},
    }


def _update_card(model_dir: Path, entry: dict[str, Any]) -> None:
    path = model_dir / CARD_FILE
    card = json.loads(path.read_text(encoding="utf-8"))
    write_text_atomically(path, json.dumps({**card, "exact_path": entry}, indent=2) + "\n")
