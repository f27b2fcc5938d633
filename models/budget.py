"""Choosing the exact path's node budgets by measurement against Classify's latency targets, grid by grid.

``tune_budget(model_dir, sets)`` classifies held-out labelled sets with the
model at each candidate budget, timing 1,000-state batches and single states
on the calling thread's CPU clock (one core), and keeps, for each grid the sets
are on, the largest budget whose cost meets that grid's targets (``TARGETS``) on
every set of the grid: the more nodes, the more states are answered exactly.

The single states timed are every state of a set, or a seeded sample drawn from all
of it (``timed_states``), never its first ones: a set of decision states lists each
deal's states together, and 1,000 from its start come from 9 of its 40 deals, whose
residue (1.5% at 3,000 nodes) is not the set's (0.6%). A percentile of such a slice
measures those deals. The p99 says nothing of the states past it, which are the ones
a bigger budget makes dearer: a state the budget leaves open pays all of it, and then
the model. Past some budget the p99 stops growing (it lands on states settled below
the budget), and every budget up to the largest candidate would pass. So a budget
must also keep its worst case, the call of a state it leaves open (the median of the
timed ones, ``single_open_ms``), within ``TAIL_FACTOR`` times the p99 target. A budget
that leaves no timed state open is judged by its slowest timed call instead, the
least its worst case can be.
The 4x4 budget is the model's ``max_nodes``, which every grid without a budget
of its own gets; another grid's goes to ``by_grid`` (``boaf.models.exact_path``). It
writes the budgets beside the model (``exact_path.json``, read by the
classifier), each grid's measurements into the model card, and each grid's
sweep plot.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from boaf.game import State, parse_grid, random_states
from boaf.game.deals import random_state, seeded_rng
from boaf.models import plots
from boaf.models.classifier import CARD_FILE, Classifier, load_classifier
from boaf.models.datasets import DatasetSpec, exact_labels, generate_chunk
from boaf.models.errors import ModelError
from boaf.models.exact_path import ExactBudget, grid_key, write_exact_budget
from boaf.models.files import write_text_atomically
from boaf.search import SOLVABLE, UNKNOWN, solve_many

#: The call of a state a budget leaves open may take this many times its grid's p99 target.
TAIL_FACTOR = 2.0


@dataclass(frozen=True)
class LatencyTarget:
    """What Classify may cost on one grid, in CPU ms of one core: per state in 1,000-state batches
    (``batch_ms``), and the 99th percentile of one state's call (``single_p99_ms``); the call of
    a state the budget leaves open may take ``TAIL_FACTOR`` times that (``single_open_ms``)."""

    batch_ms: float
    single_p99_ms: float

    @property
    def single_open_ms(self) -> float:
        """What the call of a state the budget leaves open may take: ``TAIL_FACTOR`` times the p99 target."""
        return TAIL_FACTOR * self.single_p99_ms


#: The grid whose budget is the model's ``max_nodes``: every grid without a budget of its own gets it.
DEFAULT_GRID = "4x4"
#: 4x4's batch target, 0.3 ms a state, per card. A bigger grid's batch target is this times its cards:
#: a state may cost as much CPU per card as a 4x4 one (4x13: 0.975 ms), so the server's cost per card
#: served stays what it is on 4x4.
BATCH_MS_PER_CARD = 0.3 / 16
#: A single state of a bigger grid may take up to 5 ms (99th percentile); a 4x4 one 2 ms.
BIG_SINGLE_P99_MS = 5.0


def big_grid_target(rows: int, cols: int) -> LatencyTarget:
    """A grid bigger than 4x4: ``BATCH_MS_PER_CARD`` per card in batches, ``BIG_SINGLE_P99_MS`` for one state."""
    return LatencyTarget(BATCH_MS_PER_CARD * rows * cols, BIG_SINGLE_P99_MS)


#: The latency targets of each grid ``tune_budget`` sets a budget for, by ``grid_key``.
TARGETS: dict[str, LatencyTarget] = {
    DEFAULT_GRID: LatencyTarget(BATCH_MS_PER_CARD * 16, 2.0),
    "5x5": big_grid_target(5, 5),
    "6x6": big_grid_target(6, 6),
    "4x13": big_grid_target(4, 13),
}
#: The share of each target a chosen budget may use: timings on a shared machine vary by more than 10%.
HEADROOM = 0.8
BATCH = 1000
REPEATS = 3  # runs of each single state, one per pass over the states; its time is the least
CANDIDATES = (250, 500, 1000, 1500, 2000, 3000, 4000, 6000, 8000, 12000, 16000)
#: Seeds no training set uses: random states of seed 20141, decision states of deals from 40,000.
TUNING_RANDOM_SEED = 20_141
TUNING_DECISIONS_SEED = 40_000
#: The held-out random states of each bigger grid (k uniform in ⌈n/3⌉…n): seeds no training, gate,
#: benchmark or other tuning set uses (those are 0, 2026, 20,141+, 31,0xx-31,5xx, 70,009-70,016, 90,000).
GRID_SEEDS = {"5x5": 41_305, "6x6": 41_306, "4x13": 41_313}
#: Nodes of the search that labels a bigger grid's tuning states; a state it leaves open is timed but not scored.
LABEL_MAX_NODES = 200_000


@dataclass(frozen=True)
class LabelledStates:
    """States of one grid shape with their exact labels (``solvable``: bool), e.g. a held-out set.

    ``known`` (bool, or None: every label) marks the states whose label is known; the others
    are timed but not scored.
    """

    name: str
    states: list[State]
    solvable: np.ndarray
    known: np.ndarray | None = None

    @property
    def grid(self) -> str:
        """The states' grid (``grid_key``): ``"4x4"``."""
        return grid_key(self.states[0].rows, self.states[0].cols) if self.states else DEFAULT_GRID

    def scored(self) -> np.ndarray:
        """The mask of the states whose label is known."""
        return np.ones(len(self.states), dtype=bool) if self.known is None else self.known


@dataclass(frozen=True)
class BudgetCost:
    """What Classify costs and scores at one budget on one labelled set of one grid.

    Times are CPU ms of the calling thread per state (one core): ``batch_ms``
    in 1,000-state batches, ``single_*`` one state per call (each the least of ``REPEATS`` runs),
    over ``timed_states``. ``accuracy`` counts the states whose label is known.
    """

    max_nodes: int
    name: str
    accuracy: float
    exact_share: float
    batch_ms: float
    single_mean_ms: float
    single_p50_ms: float
    single_p99_ms: float
    grid: str = DEFAULT_GRID
    single_open_ms: float = 0.0  # median call of a timed state left open, else the slowest; 0: not measured


#: The seed of ``timed_states``' sample.
TIMED_SEED = 99


def timed_states(states: Sequence[State], singles: int | None) -> list[State]:
    """The states of a set that are timed one by one: all of them, or ``singles`` drawn from all of them.

    The sample is seeded (``TIMED_SEED``) and keeps the set's order, so a measurement can be
    made again; drawn from the whole set, it has the set's mixture, whatever order the set lists it in.
    """
    return [states[i] for i in _timed_index(len(states), singles)]


def _timed_index(count: int, singles: int | None) -> list[int]:
    if singles is None or singles >= count:
        return list(range(count))
    return [int(i) for i in np.sort(np.random.default_rng(TIMED_SEED).choice(count, size=singles, replace=False))]


def measure_budget(
    classifier: Classifier, labelled: LabelledStates, max_nodes: int, singles: int | None = None
) -> BudgetCost:
    """Classify ``labelled`` with the exact path at ``max_nodes``, also timing ``timed_states`` one by one."""
    trial = replace(classifier, exact=_trial_budget(classifier.exact, max_nodes))
    states = labelled.states
    trial.classify(states[:2])  # compile and load before timing
    started = time.thread_time()
    answers = [trial.classify(states[i : i + BATCH]) for i in range(0, len(states), BATCH)]
    batch_ms = (time.thread_time() - started) * 1e3 / max(len(states), 1)
    p = np.concatenate([a.p_solvable for a in answers])
    exact = np.concatenate([a.exact for a in answers])
    timed = _timed_index(len(states), singles)
    single = _single_ms(trial, [states[i] for i in timed])
    scored = labelled.scored()
    return BudgetCost(
        max_nodes=max_nodes,
        name=labelled.name,
        accuracy=float(np.mean((p >= trial.threshold)[scored] == labelled.solvable[scored])),
        exact_share=float(np.mean(exact)),
        batch_ms=batch_ms,
        single_mean_ms=float(single.mean()),
        single_p50_ms=float(np.percentile(single, 50)),
        single_p99_ms=float(np.percentile(single, 99)),
        grid=labelled.grid,
        single_open_ms=_open_ms(single, exact[timed]),
    )


def _open_ms(single: np.ndarray, exact: np.ndarray) -> float:
    """The median of the timed calls ``single`` (ms) of the states left open (``exact`` False, same order), else
    the largest call."""
    left_open = ~exact
    return float(np.median(single[left_open])) if left_open.any() else float(single.max(initial=0.0))


def _trial_budget(exact: ExactBudget, max_nodes: int) -> ExactBudget:
    """``exact`` with ``max_nodes`` for every grid, its second search of FFUD-like deals kept."""
    return ExactBudget(max_nodes, exact.algorithm, deal_nodes=exact.deal_nodes)


def choose_budget(costs: Sequence[BudgetCost], target: LatencyTarget | None = None, headroom: float = HEADROOM) -> int:
    """The largest budget whose cost meets ``target`` (default: 4x4's) on every set, with ``headroom`` to spare.

    A budget meets it when ``batch_ms <= headroom * target.batch_ms``,
    ``single_p99_ms <= headroom * target.single_p99_ms`` and
    ``single_open_ms <= headroom * target.single_open_ms`` on each set measured.
    Raises ``ModelError`` when none does.
    """
    bar = TARGETS[DEFAULT_GRID] if target is None else target
    budgets = sorted({c.max_nodes for c in costs})
    fits = [b for b in budgets if all(_meets(c, bar, headroom) for c in costs if c.max_nodes == b)]
    if not fits:
        raise ModelError(
            f"no budget of {budgets} meets the latency targets on this machine (batch {bar.batch_ms:.3g} ms/state, "
            f"single p99 {bar.single_p99_ms:.3g} ms, a state left open {bar.single_open_ms:.3g} ms, "
            f"each with headroom {headroom:g})"
        )
    return max(fits)


def _meets(cost: BudgetCost, target: LatencyTarget, headroom: float) -> bool:
    return (
        cost.batch_ms <= headroom * target.batch_ms
        and cost.single_p99_ms <= headroom * target.single_p99_ms
        and cost.single_open_ms <= headroom * target.single_open_ms
    )


def choose_grid_budgets(costs: Sequence[BudgetCost], headroom: float = HEADROOM) -> dict[str, int]:
    """Each grid's budget: ``choose_budget`` on that grid's costs against its own ``TARGETS`` entry.

    Raises ``ModelError`` naming every grid no budget fits, or a grid without targets.
    """
    grids = list(dict.fromkeys(c.grid for c in costs))
    targets = latency_targets(grids)
    chosen, refused = {}, []
    for grid in grids:
        try:
            chosen[grid] = choose_budget([c for c in costs if c.grid == grid], targets[grid], headroom)
        except ModelError as exc:
            refused.append(f"{grid}: {exc}")
    if refused:
        raise ModelError("; ".join(refused))
    return chosen


def latency_targets(grids: Sequence[str]) -> dict[str, LatencyTarget]:
    """``TARGETS`` of ``grids``; raises ``ModelError`` naming a grid that has none."""
    unknown = [g for g in grids if g not in TARGETS]
    if unknown:
        raise ModelError(f"no latency targets for grid {', '.join(unknown)}; grids with targets: {', '.join(TARGETS)}")
    return {g: TARGETS[g] for g in grids}


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
    """Held-out labelled 4x4 sets to tune on: random states, and the decision states of ``decision_deals`` deals."""
    randoms = random_states(TUNING_RANDOM_SEED + seed, random_count)
    spec = DatasetSpec("decisions", TUNING_DECISIONS_SEED + seed * decision_deals, decision_deals)
    table = generate_chunk((spec, 0, decision_deals))
    decisions = [parse_grid(g) for g in table.column("grid").to_pylist()]
    decision_labels = np.asarray(table.column("solvable").to_pylist(), dtype=bool)
    return [
        LabelledStates("random", randoms, np.array(exact_labels(randoms), dtype=bool)),
        LabelledStates("decisions", decisions, decision_labels),
    ]


def grid_tuning_set(grid: str, count: int, seed: int = 0) -> LabelledStates:
    """``count`` held-out random states of a bigger grid (``GRID_SEEDS``), k uniform in ⌈n/3⌉…n.

    Labelled by a search of ``LABEL_MAX_NODES`` nodes; a state it leaves open stays in the set (it is
    timed: the hardest states make the p99) with ``known`` False.
    """
    if grid not in GRID_SEEDS:
        raise ModelError(f"no held-out states for grid {grid}; grids with their own: {', '.join(GRID_SEEDS)}")
    rows, cols = (int(n) for n in grid.split("x"))
    cards, rng = rows * cols, seeded_rng(GRID_SEEDS[grid] + seed)
    states = [random_state(rng, rows, cols, int(rng.integers(math.ceil(cards / 3), cards + 1))) for _ in range(count)]
    status = solve_many(states, max_nodes=LABEL_MAX_NODES, reasons=False).status
    known = np.array([s is not UNKNOWN for s in status], dtype=bool)
    return LabelledStates(f"random {grid}", states, np.array([s is SOLVABLE for s in status], dtype=bool), known)


def grid_tuning_sets(
    grids: Sequence[str], random_count: int, decision_deals: int, grid_states: int, *, seed: int = 0
) -> list[LabelledStates]:
    """The held-out sets of ``grids``: 4x4's ``tuning_sets``, and ``grid_states`` random states of each other grid."""
    latency_targets(grids)  # refuse a grid without targets before generating anything
    sets = tuning_sets(random_count, decision_deals, seed) if DEFAULT_GRID in grids else []
    return sets + [grid_tuning_set(g, grid_states, seed) for g in grids if g != DEFAULT_GRID]


def tune_budget(
    model_dir: Path,
    sets: Sequence[LabelledStates],
    candidates: Sequence[int] = CANDIDATES,
    singles: int | None = None,
    *,
    log: Callable[[str], None] = print,
    deal_nodes: int | None = None,
) -> dict[str, Any]:
    """Sweep ``candidates`` on ``sets``, keep each grid's largest budget within its targets, and write them.

    The grids are those of ``sets``; a grid not measured keeps the budget it had. Writes into ``model_dir``
    ``exact_path.json``, the card's ``exact_path`` entry and each grid's sweep plot
    (``plots/budget_sweep.png`` for 4x4, ``plots/budget_sweep_4x13.png``...); returns the card entry.
    ``singles`` states of each set are timed one by one (None: all; ``timed_states``).
    Raises ``ModelError``, writing nothing, when no candidate meets a grid's targets. ``deal_nodes``
    sets the second search of FFUD-like 4x4 deals (``ExactBudget.deal_nodes``), measured with every
    candidate and written with the budgets; None keeps the model's.
    """
    grids = list(dict.fromkeys(s.grid for s in sets))
    targets = latency_targets(grids)
    classifier = load_classifier(model_dir)
    if deal_nodes is not None:
        classifier = replace(classifier, exact=replace(classifier.exact, deal_nodes=deal_nodes))
    costs = [c for g in grids for c in _sweep(classifier, [s for s in sets if s.grid == g], candidates, singles, log)]
    chosen = choose_grid_budgets(costs)
    measured = {g: _grid_record(costs, g, chosen[g], targets[g]) for g in grids}
    previous = classifier.exact
    budget = ExactBudget(
        chosen.get(DEFAULT_GRID, previous.max_nodes),
        previous.algorithm,
        {"grids": {**_grid_records(previous.measured, previous.max_nodes), **measured}},
        {**previous.by_grid, **{g: n for g, n in chosen.items() if g != DEFAULT_GRID}},
        previous.deal_nodes,
    )
    card_grids = {
        g: {**measured[g], "at_budget": {s.name: slice_report(classifier, s, chosen[g]) for s in sets if s.grid == g}}
        for g in grids
    }
    entry = _update_card(model_dir, budget, card_grids, costs)
    write_exact_budget(model_dir, budget)
    for grid in grids:
        name = "budget_sweep.png" if grid == DEFAULT_GRID else f"budget_sweep_{grid}.png"
        limits = {k: HEADROOM * v for k, v in measured[grid]["targets"].items() if k.endswith("_ms")}
        plots.budget_sweep_plot([c for c in costs if c.grid == grid], chosen[grid], model_dir / "plots" / name, limits)
        log(f"chosen budget for {grid}: {chosen[grid]} nodes ({_latency_line(measured[grid])})")
    return entry


def _sweep(
    classifier: Classifier,
    sets: Sequence[LabelledStates],
    candidates: Sequence[int],
    singles: int | None,
    log: Callable[[str], None],
) -> list[BudgetCost]:
    """Every candidate's cost on every set of one grid, each logged as it is measured."""
    costs = []
    for max_nodes in candidates:
        for labelled in sets:
            costs.append(cost := measure_budget(classifier, labelled, max_nodes, singles))
            log(
                f"{cost.grid:>4} {max_nodes:>6} nodes, {cost.name:11s}: accuracy {cost.accuracy:.4%}, "
                f"exact {cost.exact_share:.2%}, batch {cost.batch_ms:.3f} ms/state, "
                f"single p50 {cost.single_p50_ms:.3f} ms, p99 {cost.single_p99_ms:.3f} ms, "
                f"a state left open {cost.single_open_ms:.3f} ms"
            )
    return costs


def _grid_record(costs: Sequence[BudgetCost], grid: str, chosen: int, target: LatencyTarget) -> dict[str, Any]:
    """One grid's budget, its targets and what each of its sets cost at that budget (``exact_path.json``)."""
    return {
        "max_nodes": chosen,
        "targets": {**asdict(target), "single_open_ms": target.single_open_ms, "headroom": HEADROOM},
        "costs": [asdict(c) for c in costs if c.grid == grid and c.max_nodes == chosen],
    }


def _latency_line(record: dict[str, Any]) -> str:
    targets = record["targets"]
    worst_batch = max(c["batch_ms"] for c in record["costs"])
    worst_p99 = max(c["single_p99_ms"] for c in record["costs"])
    worst_open = max(c.get("single_open_ms", 0.0) for c in record["costs"])
    return (
        f"batch {worst_batch:.3f} ms/state of {targets['batch_ms']:.3g}, "
        f"single p99 {worst_p99:.3f} ms of {targets['single_p99_ms']:.3g}, "
        f"a state left open {worst_open:.3f} ms of {targets.get('single_open_ms', 0.0):.3g}, worst set"
    )


def _grid_records(previous: dict[str, Any], max_nodes: int) -> dict[str, Any]:
    """Each grid's record of an earlier tuning: its ``grids``, or 4x4's alone from before grids had budgets."""
    if "grids" in previous:
        return dict(previous["grids"])
    if "targets" in previous:
        kept = {k: v for k, v in previous.items() if k not in {"algorithm", "by_grid"}}
        return {DEFAULT_GRID: {"max_nodes": max_nodes, **kept}}
    return {}


def slice_report(classifier: Classifier, labelled: LabelledStates, max_nodes: int) -> dict[str, Any]:
    """At ``max_nodes``: accuracy overall and on the learned slice, and the share settled exactly by stack count.

    Accuracies count the states whose label is known (``rows_scored`` of ``rows``).
    """
    trial = replace(classifier, exact=_trial_budget(classifier.exact, max_nodes))
    answers = trial.classify(labelled.states)
    scored = labelled.scored()
    right = (answers.p_solvable >= trial.threshold) == labelled.solvable
    learned = ~answers.exact & scored
    stacks = np.array([s.n_stacks for s in labelled.states])
    return {
        "rows": len(labelled.states),
        "rows_scored": int(scored.sum()),
        "accuracy": float(right[scored].mean()) if scored.any() else None,
        "exact_share": float(answers.exact.mean()),
        "learned_rows": int(learned.sum()),
        "learned_accuracy": float(right[learned].mean()) if learned.any() else None,
        "exact_share_by_stacks": {int(k): float(answers.exact[stacks == k].mean()) for k in np.unique(stacks)},
    }


def _update_card(
    model_dir: Path, budget: ExactBudget, grids: dict[str, dict[str, Any]], costs: Sequence[BudgetCost]
) -> dict[str, Any]:
    """Write the card's ``exact_path`` entry: the budgets, and each grid's record with its sweep; returns it."""
    path = model_dir / CARD_FILE
    card = json.loads(path.read_text(encoding="utf-8"))
    swept = {g: {**record, "sweep": [asdict(c) for c in costs if c.grid == g]} for g, record in grids.items()}
    entry = {
        "max_nodes": budget.max_nodes,
        "by_grid": budget.by_grid,
        "deal_nodes": budget.deal_nodes,
        "algorithm": budget.algorithm,
        "grids": {**_grid_records(card.get("exact_path", {}), budget.max_nodes), **swept},
    }
    write_text_atomically(path, json.dumps({**card, "exact_path": entry}, indent=2) + "\n")
    return entry
