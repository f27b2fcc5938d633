"""The learned model where it works: the residue of seven held-out sets, beside two baselines.

Classify answers a state exactly when its budgeted search (the exact path) settles
it; the learned model answers the rest, the *residue*. A whole-set accuracy is
mostly the exact path's, so this benchmark judges the model on the residue alone,
beside the base-rate constant and a logistic regression on the same inputs. Both
baselines learn from a *training* residue: the same generator with another seed
(or seed range), never the test residue.

Seven held-out sets, none overlapping a range any training or tuning step uses
(random states: seeds 0, 2026, 20,141+, 70,009-70,016, 90,000, and the residue
model's 31,101/31,105/31,106/31,113 (training, shared with the baselines here) and
31,501-31,513 (its gate); decision states: deals 1,100-3,099, 20,000-20,099,
40,000-40,199, 60,000-60,799, 3,500,000-3,509,999 and 3,800,000-; deals: 0-100,000,
100,001-999,999 and -1,000,000…-1 for hard negatives, 2,100,000,000-2,100,999,999 and
2,140,000,000-2,140,299,999; plausible play: from 1,800,000,000 and 1,900,000,000):

1. ``random 4x4``: Araki's random states (k uniform in 1…16);
2. ``decisions``: Neller's decision states of deals from 3,000,000 (train: 3,500,000);
3. ``deals``: initial deals 2,000,000,000-2,005,999,999 (train: 2,100,000,000-2,102,999,999, whose
   first million the residue model trains on and the second search's sieve was read off),
   labelled, FFUDs found, by a census (``boaf.jobs.census``); six million, because the exact
   path leaves open only about 9 FFUDs a million;
4-6. ``random 5x5``, ``random 6x6``, ``random 4x13``: k uniform in ⌈n/3⌉…n;
7. ``plausible play``: positions a player reaches from random deals (from
   1,700,000,000; train: 1,800,000,000) by playing the move the Hint logic rates
   best (Classify on each move's result), or with probability ``NOISE`` a random one.
   The player follows the benchmarked model's hints, or those of another version
   with the same exact path (``player``, ``--player``): only the hints between open
   states differ, and playing the games again costs an hour of a core or more.

Sets 1, 2 and 4-7 are generated a batch at a time (each batch seeded by (seed,
batch)) until the residue holds ``min_states`` states and ``min_minority`` of its
minority class, or ``max_batches`` are spent. Residue states are labelled by the
exact solver (``search.solve_many``) with ``LABEL_MAX_NODES`` nodes; those it
cannot settle are left out and counted (decision states and deals come labelled
without a budget by their own generators). States the exact path settles are
right by construction: they count as right in the whole-set accuracy.
Generated sets are cached as JSON under ``--cache`` (keyed by everything that
determines them: the budget, the solver version, the seeds and targets).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler

from boaf import search
from boaf.game import State, deal, format_grid
from boaf.jobs.census import CensusChunk, census, census_chunk
from boaf.jobs.runner import Cluster
from boaf.models.classifier import Classifier
from boaf.models.metrics import Scores, scores
from boaf.models.residue import LABEL_MAX_NODES, NOISE, Residue, ResidueSpec, generate, open_deal_seeds

SMALL_LABEL_MAX_NODES = 100_000  # --small: a tiny run labels less
PREDICTORS = ("model", "constant", "logistic")
NO_SCORES = Scores(*[float("nan")] * 5)  # an empty residue's figures
EXACT_CHUNK = 100_000  # deals per exact-path call (and per step of the progress bar)
# Plausible play: 0.23% of the positions are open and 4-5% of those unsolvable, so its 50 of the minority took
# 869 batches (test) and 693 (train) of 50 games, 15-20 minutes of one core each; generation stops at the targets.
PLAUSIBLE_BATCHES = 4000


@dataclass(frozen=True)
class HeldOut:
    """How one held-out set is made: its generator, test and training seeds, batch size and targets."""

    name: str
    kind: str  # random, decisions, deals, plausible
    rows: int = 4
    cols: int = 4
    fewest_cards: int = 1  # random states: k is uniform in fewest_cards…rows*cols
    test_seed: int = 0
    train_seed: int = 0
    batch: int = 1000  # states (random), deals (decisions, deals) or games (plausible) per batch
    max_batches: int = 100  # deals: the range is exactly this many batches
    train_batches: int = 0  # deals: the training range's batches (0: max_batches)
    min_states: int = 300
    min_minority: int = 50
    label_nodes: int = LABEL_MAX_NODES  # nodes of the labelling search per residue state


def held_out_sets(small: bool = False) -> list[HeldOut]:
    """The seven sets; ``small``: the same generators with tiny batches and targets, for a run of seconds."""
    sets = [
        # Up to a million random states and 6,000 deals' decisions: at a 4,000-node budget their residues
        # hold about 15 unsolvable states in 146,000 random states and 10 in 33,000 decisions.
        HeldOut("random 4x4", "random", test_seed=31_001, train_seed=31_101, batch=2000, max_batches=500),
        HeldOut("decisions", "decisions", test_seed=3_000_000, train_seed=3_500_000, batch=20, max_batches=300),
        HeldOut(
            "deals",
            "deals",
            test_seed=2_000_000_000,
            train_seed=2_100_000_000,
            batch=EXACT_CHUNK,
            max_batches=60,
            train_batches=30,
        ),
        HeldOut("random 5x5", "random", 5, 5, 9, test_seed=31_005, train_seed=31_105, batch=1000),
        HeldOut("random 6x6", "random", 6, 6, 12, test_seed=31_006, train_seed=31_106, batch=500),
        HeldOut("random 4x13", "random", 4, 13, 18, test_seed=31_013, train_seed=31_113, batch=200),
        HeldOut(
            "plausible play",
            "plausible",
            test_seed=1_700_000_000,
            train_seed=1_800_000_000,
            batch=50,
            max_batches=PLAUSIBLE_BATCHES,
        ),
    ]
    if not small:
        return sets
    tiny = {"random": 300, "decisions": 2, "deals": 1500, "plausible": 3}
    return [
        replace(
            s,
            batch=tiny[s.kind] // (6 if s.cols == 13 else 1),
            max_batches=1 if s.kind == "deals" else 3,
            train_batches=0,
            min_states=8,
            min_minority=2,
            label_nodes=SMALL_LABEL_MAX_NODES,
        )
        for s in sets
    ]


def residue_spec(spec: HeldOut, seed: int) -> ResidueSpec:
    """The generator's terms for one split (``seed``) of ``spec``."""
    return ResidueSpec(
        spec.name,
        spec.kind,
        seed,
        spec.rows,
        spec.cols,
        spec.fewest_cards,
        spec.batch,
        spec.max_batches,
        spec.min_states,
        spec.min_minority,
        spec.label_nodes,
        NOISE,
    )


def census_table(seeds: range, cache: Path, small: bool, regenerate: bool) -> Any:
    """The census of ``seeds`` (one row per deal): read from ``cache``, or run (``small``: in-process) and kept."""
    path = cache / f"census-{seeds.start}-{seeds.stop}.parquet"
    if regenerate or not path.is_file():
        if small:
            pq.write_table(census_chunk(CensusChunk(seeds.start, seeds.stop)), path)
        else:
            census(seeds, output=path, cluster=Cluster(workers=1), chunk_size=20_000)
    return pq.read_table(path, columns=["seed", "status", "class"])


def deals_residue(
    classifier: Classifier,
    spec: HeldOut,
    seed: int,
    cache: Path,
    small: bool,
    regenerate: bool,
    step: Callable[[str], None],
) -> Residue:
    """Deals from ``seed``, ``spec.max_batches`` batches, labelled and classed by a census; open: by the exact path."""
    seeds = range(seed, seed + spec.batch * spec.max_batches)
    table = census_table(seeds, cache, small, regenerate)
    status = np.array(table.column("status").to_pylist())
    classes = np.array(table.column("class").to_pylist(), dtype=object)
    still_open = []
    for first in range(seeds.start, seeds.stop, spec.batch):
        still_open.append(open_deal_seeds(classifier, range(first, min(first + spec.batch, seeds.stop))))
        step(f"{sum(len(o) for o in still_open):,} open deals")
    open_seeds = np.concatenate(still_open)
    rows = open_seeds - seeds.start
    ffud = classes == "FFUD"
    notes = {
        "seeds": [seeds.start, seeds.stop - 1],
        "unsolvable": int(np.sum(status == search.UNSOLVABLE)),
        "ffud": int(ffud.sum()),
        "ffud_open": int(ffud[rows].sum()),
    }
    return Residue(
        len(seeds),
        len(seeds) - len(open_seeds),
        0,
        [deal(int(s)) for s in open_seeds],
        status[rows] == search.SOLVABLE,
        spec.max_batches,
        notes,
    )


def collect(
    classifier: Classifier,
    spec: HeldOut,
    split: str,
    cache: Path,
    small: bool,
    progress: Progress,
    regenerate: bool,
    player: Classifier | None = None,
) -> Residue:
    """The ``split`` ("test" or "train") residue of ``spec``, from the cache (unless ``regenerate``) or generated.

    Plausible play follows ``player``'s hints (None: ``classifier``'s), which must have the same exact path.
    """
    player = classifier if player is None else player
    if player.exact != classifier.exact:
        raise ValueError(f"the player {player.version} has another exact path than {classifier.version}")
    seed = spec.test_seed
    if split == "train":
        seed, spec = spec.train_seed, replace(spec, max_batches=spec.train_batches or spec.max_batches)
    key = {
        **asdict(spec),
        "split": split,
        "seed": seed,
        "max_nodes": classifier.exact.nodes_for(spec.rows, spec.cols),
        "deal_search": classifier.exact.deal_search(spec.rows, spec.cols),
        "algorithm": classifier.exact.algorithm,
        "solver_version": search.SOLVER_VERSION,
        "noise": NOISE,
        "model_version": player.version if spec.kind == "plausible" else None,
    }
    path = cache / f"{spec.name.replace(' ', '-')}-{split}-{'small' if small else 'full'}.json"
    if path.is_file() and not regenerate:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data["key"] == key:
            return Residue.from_json(data)
    task = progress.add_task(f"{spec.name}, {split}", total=spec.max_batches, status="")

    def step(status: str) -> None:
        progress.update(task, advance=1, status=status)

    if spec.kind == "deals":
        residue = deals_residue(classifier, spec, seed, cache, small, regenerate, step)
    else:
        residue = generate(player, residue_spec(spec, seed), step)
    progress.update(task, total=residue.batches, completed=residue.batches)
    path.write_text(json.dumps({"key": key, **residue.to_json()}), encoding="utf-8")
    return residue


@dataclass(frozen=True)
class Row:
    """One predictor on one set's test residue, and the whole-set accuracy it gives with the exact path."""

    set: str
    predictor: str
    fitted_on: str  # what the predictor learned from
    residue_states: int
    residue_share: float  # of the labelled test set's states
    base_rate: float  # the test residue's own solvable share
    train_rate: float  # the training residue's solvable share: the constant's p
    scores: Scores
    whole_set_accuracy: float


def evaluate(classifier: Classifier, name: str, test: Residue, train: Residue) -> list[Row]:
    """The model, the constant (the training residue's rate) and a logistic regression on the test residue."""
    y = test.solvable
    p = {"model": model_p(classifier, test.residue) if test.residue else np.zeros(0)}
    rate = float(train.solvable.mean()) if len(train.solvable) else 0.5
    p["constant"] = np.full(len(y), rate)
    p["logistic"] = logistic_p(classifier, train, test)
    fitted = {
        "model": f"model {classifier.version}",
        "constant": f"training residue rate {rate:.4f} ({len(train.solvable):,} states)",
        "logistic": f"training residue ({len(train.solvable):,} states)",
    }
    labelled = test.states - test.dropped
    rows = []
    for predictor in PREDICTORS:
        defined = len(y) and not np.isnan(p[predictor]).any()  # NaN: the logistic regression could not be fitted
        figures = scores(p[predictor], y, classifier.threshold) if defined else NO_SCORES
        right = test.exact + (figures.accuracy * len(y) if len(y) else 0)
        rows.append(
            Row(
                name,
                predictor,
                fitted[predictor],
                len(y),
                len(y) / labelled,
                float(y.mean()) if len(y) else float("nan"),
                rate,
                figures,
                right / labelled,
            )
        )
    return rows


def model_p(classifier: Classifier, states: list[State]) -> np.ndarray:
    """Classify's P(solvable) for residue states: the served pipeline, which leaves them all to the model."""
    answers = classifier.classify(states)
    if answers.exact.any():
        raise RuntimeError(f"the exact path settled {int(answers.exact.sum())} residue states: the cache is stale")
    return np.asarray(answers.p_solvable)


def logistic_p(classifier: Classifier, train: Residue, test: Residue) -> np.ndarray:
    """A logistic regression on the model's inputs (arcsinh, standardised) fitted on ``train``; NaN if it cannot be."""
    if len(np.unique(train.solvable)) < 2 or not test.residue:
        return np.full(len(test.solvable), np.nan)
    inputs = {name: classifier.inputs(part.residue) for name, part in (("train", train), ("test", test))}
    model = make_pipeline(FunctionTransformer(np.arcsinh), StandardScaler(), LogisticRegression(max_iter=5000))
    model.fit(inputs["train"], train.solvable)
    return np.asarray(model.predict_proba(inputs["test"])[:, 1])


def run(
    classifier: Classifier,
    cache: Path,
    small: bool = False,
    names: list[str] | None = None,
    regenerate: bool = False,
    player: Classifier | None = None,
) -> tuple[list[Row], dict[str, dict[str, Any]]]:
    """Every set's rows, and each set's whole-set figures (states, exact share, dropped, targets met, notes).

    ``player`` is the version whose hints plausible play follows (None: ``classifier``; see ``collect``).
    """
    cache.mkdir(parents=True, exist_ok=True)
    rows: list[Row] = []
    whole: dict[str, dict[str, Any]] = {}
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, TextColumn("{task.fields[status]}"), transient=False) as progress:
        for spec in held_out_sets(small):
            if names and spec.name not in names:
                continue
            test, train = (
                collect(classifier, spec, split, cache, small, progress, regenerate, player)
                for split in ("test", "train")
            )
            rows += evaluate(classifier, spec.name, test, train)
            whole[spec.name] = whole_set(spec, test, train)
            if spec.kind == "deals":
                seeds = range(spec.test_seed, spec.test_seed + spec.batch * spec.max_batches)
                whole[spec.name]["calls"] = deal_calls(classifier, test, census_table(seeds, cache, small, False))
    return rows, whole


def deal_calls(classifier: Classifier, test: Residue, census: Any) -> dict[str, int]:
    """How Classify calls the deals of a census: FFUDs and solvable deals called unsolvable (exact or p < 0.5).

    A deal the exact path settles is called right; a residue deal is called by the model's p.
    """
    seeds = np.array(census.column("seed").to_pylist())
    classes = np.array(census.column("class").to_pylist(), dtype=object)
    status = np.array(census.column("status").to_pylist())
    p = model_p(classifier, test.residue) if test.residue else np.zeros(0)
    called_unsolvable = {format_grid(s): bool(q < classifier.threshold) for s, q in zip(test.residue, p, strict=True)}
    ffud_grids = [format_grid(deal(int(seed))) for seed in seeds[classes == "FFUD"]]
    ffud_open = [g for g in ffud_grids if g in called_unsolvable]
    solvable_open = [s for s, y in zip(test.residue, test.solvable, strict=True) if y]
    return {
        "ffud": len(ffud_grids),
        "ffud_exact": len(ffud_grids) - len(ffud_open),
        "ffud_open_called_unsolvable": sum(called_unsolvable[g] for g in ffud_open),
        "ffud_open": len(ffud_open),
        "solvable": int(np.sum(status == search.SOLVABLE)),
        "solvable_called_unsolvable": sum(called_unsolvable[format_grid(s)] for s in solvable_open),
    }


def whole_set(spec: HeldOut, test: Residue, train: Residue) -> dict[str, Any]:
    return {
        "states": test.states,
        "exact_share": test.exact / max(test.states, 1),
        "dropped": test.dropped,
        "residue": len(test.solvable),
        "minority": test.minority(),
        "targets_met": len(test.solvable) >= spec.min_states and test.minority() >= spec.min_minority,
        "batches": test.batches,
        "train_residue": len(train.solvable),
        "train_minority": train.minority(),
        "train_dropped": train.dropped,
        "notes": test.notes,
        "train_notes": train.notes,
    }


def table_lines(rows: list[Row], whole: dict[str, dict[str, Any]]) -> Iterator[str]:
    """The residue table, then the whole-set table, as Markdown."""
    yield (
        "| set | residue: states, share of the set | base rate: test residue (training residue) "
        "| predictor | accuracy | log loss | Brier | AUC | ECE |"
    )
    yield "|---|---|---|---|---|---|---|---|---|"
    for r in rows:
        s = r.scores
        where = f"{r.residue_states:,}, {r.residue_share:.2%} | {r.base_rate:.2%} ({r.train_rate:.2%})"
        yield (
            f"| {r.set} | {where} | {r.predictor} | {s.accuracy:.2%} | {s.log_loss:.3f} | {s.brier:.3f} | "
            f"{s.auc:.3f} | {s.ece:.3f} |"
        )
    yield ""
    yield (
        "| set | states | settled exactly | dropped | residue (minority) | training residue (minority) "
        "| whole-set accuracy: model / constant / logistic |"
    )
    yield "|---|---|---|---|---|---|---|"
    for name, w in whole.items():
        acc = " / ".join(f"{r.whole_set_accuracy:.2%}" for r in rows if r.set == name)
        met = "" if w["targets_met"] else " (targets not met)"
        yield (
            f"| {name} | {w['states']:,} | {w['exact_share']:.2%} | {w['dropped']} | {w['residue']:,} "
            f"({w['minority']}){met} | {w['train_residue']:,} ({w['train_minority']}) | {acc} |"
        )
    calls = [(name, w["calls"]) for name, w in whole.items() if "calls" in w]
    if calls:
        yield ""
        for name, figures in calls:
            yield calls_line(name, figures)


def calls_line(name: str, calls: dict[str, int]) -> str:
    """The census-labelled deals' calls as one line: FFUD recall and solvable deals called unsolvable."""
    ffud_called = calls["ffud_exact"] + calls["ffud_open_called_unsolvable"]
    return (
        f"{name}: {ffud_called} of {calls['ffud']} FFUDs called unsolvable ({ffud_called / max(calls['ffud'], 1):.1%}: "
        f"{calls['ffud_exact']} exactly, {calls['ffud_open_called_unsolvable']} of {calls['ffud_open']} open ones "
        f"by the model); {calls['solvable_called_unsolvable']} of {calls['solvable']:,} solvable deals called "
        f"unsolvable ({calls['solvable_called_unsolvable'] / max(calls['solvable'], 1):.3%})"
    )


def to_json(rows: list[Row], whole: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"rows": [asdict(r) for r in rows], "sets": whole}
