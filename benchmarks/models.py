"""Figures for Classify: the learned model on the residue of seven held-out sets, beside baselines; and its cost.

    python benchmarks/models.py [--model DIR] [--sets NAME,...] [--json PATH] [--cache DIR] [--regenerate]
    python benchmarks/models.py --small      # the same seven generators, tiny, in seconds
    python benchmarks/models.py --cost [--random N] [--decision-deals D] [--deals A:B] [--singles S] [--lr-deals L]

By default it prints, for each held-out set of ``residue.py`` (see there: the
sets, their seeds, and how the residue is generated and labelled), the residue
(the states the exact path leaves open): its size, share and base rate; the
model's accuracy, log loss, Brier score, AUC and expected calibration error
beside the base-rate constant and a logistic regression on the same inputs,
both fitted on a separate training residue; then each set's whole-set figures.
Generated sets are cached under ``--cache`` (``out/residue``); ``--regenerate``
rebuilds them.

``--cost`` prints the older figures instead: for held-out random states,
held-out decision states (deals from 20,000, never trained on), balanced initial
deals (every unsolvable deal of a seed range plus as many random solvable ones,
split by OBUD / SFUD / FFUD) and the external set (deals 0-99, never trained or
tuned on), accuracy, AUC and Brier; the share settled exactly; accuracy on the
learned slice; and CPU ms per state on one core (the calling thread's clock), one
state per call and in 1,000-state batches; the paper's features-only
configuration from the model card, and Neller's logistic regression on decision
states.
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # one core: no compiled code may use a second thread
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

if not __package__:  # run as a script: its own folder is sys.path[0]; the repository's root imports it as benchmarks
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import brier_score_loss, roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from benchmarks import residue
from boaf.features import feature_matrix
from boaf.game import State, deal, parse_grid, random_states
from boaf.game.notation import parse_seed_range
from boaf.models import registry
from boaf.models.budget import timed_states
from boaf.models.classifier import CARD_FILE, Classifier, load_classifier
from boaf.models.datasets import DECISIONS_FIRST_SEED, DatasetSpec, generate_chunk
from boaf.search import SOLVABLE, solve_deals, solve_many

EXTERNAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "external" / "neller-states-deals-0-99.csv"
RANDOM_SEED = 2026  # no training set uses it (those seed each chunk with [seed, start])
DECISIONS_SEED = 20_000  # training decisions start at deal 1,100 and tuning ones at 40,000
BATCH = 1000
KINDS = {"odd_bird": "OBUD", "separated_flock": "SFUD", "exhausted": "FFUD"}


@dataclass
class Labelled:
    """A benchmark set: states of one grid, exact labels, and (for deals) each state's kind."""

    name: str
    states: list[State]
    solvable: np.ndarray
    kinds: np.ndarray | None = None


def external_set() -> Labelled:
    """The external labelled states (deals 0-99), for evaluation only."""
    states, labels = [], []
    for line in EXTERNAL.read_text(encoding="utf-8").splitlines():
        cells, label = line.rsplit(",", 1)
        text = cells.strip('"')
        grid = "/".join(" ".join(text[8 * r + 2 * c : 8 * r + 2 * c + 2] for c in range(4)) for r in range(4))
        states.append(parse_grid(grid))
        labels.append(int(label))
    return Labelled("external", states, np.array(labels, dtype=bool))


def random_set(count: int) -> Labelled:
    states = random_states(RANDOM_SEED, count)
    return Labelled("random", states, np.array([s is SOLVABLE for s in solve_many(states).status]))


def decisions_set(first_deal: int, deals: int, name: str = "decisions") -> Labelled:
    table = generate_chunk((DatasetSpec("decisions", first_deal, deals), 0, deals))
    states = [parse_grid(g) for g in table.column("grid").to_pylist()]
    return Labelled(name, states, np.asarray(table.column("solvable").to_pylist(), dtype=bool))


def balanced_deals(seeds: range) -> Labelled:
    """Every unsolvable deal of ``seeds`` and as many solvable ones drawn at random (seed 0)."""
    answers = solve_deals(np.arange(seeds.start, seeds.stop))
    solvable = np.array([s is SOLVABLE for s in answers.status])
    bad = np.flatnonzero(~solvable)
    good = np.random.default_rng(0).choice(np.flatnonzero(solvable), size=len(bad), replace=False)
    chosen = np.sort(np.concatenate([bad, good]))
    kinds = np.array(["solvable" if solvable[i] else KINDS[answers.reasons[i] or ""] for i in chosen])
    states = [deal(seeds.start + int(i)) for i in chosen]
    return Labelled(f"deals {seeds.start}:{seeds.stop}", states, solvable[chosen], kinds)


def cpu_ms(call, *args) -> float:  # type: ignore[no-untyped-def]
    started = time.thread_time()
    call(*args)
    return (time.thread_time() - started) * 1e3


def report(classifier: Classifier, labelled: Labelled, singles: int) -> None:
    states, y = labelled.states, labelled.solvable
    classifier.classify(states[:2])
    batches = [
        cpu_ms(classifier.classify, states[i : i + BATCH]) / len(states[i : i + BATCH])
        for i in range(0, len(states), BATCH)
    ]
    single = np.array([cpu_ms(classifier.classify, [s]) for s in timed_states(states, singles)])
    answers = classifier.classify(states)
    p, exact = answers.p_solvable, answers.exact
    right = (p >= classifier.threshold) == y
    alone = (classifier.predict(states) >= classifier.threshold) == y
    learned = ~exact
    auc = roc_auc_score(y, p) if len(np.unique(y)) == 2 else float("nan")
    print(
        f"{labelled.name} ({len(states):,} states, {y.mean():.1%} solvable): accuracy {right.mean():.4%}, "
        f"AUC {auc:.4f}, Brier {brier_score_loss(y, p):.4f}; exact {exact.mean():.2%}; learned slice "
        f"{learned.sum():,} states, accuracy {right[learned].mean() if learned.any() else float('nan'):.4%} "
        f"(the model alone on the whole set: {alone.mean():.4%})"
    )
    print(
        f"  CPU ms/state, one core: single ({len(single):,} drawn from the set) mean {single.mean():.3f}, "
        f"p50 {np.percentile(single, 50):.3f}, p99 {np.percentile(single, 99):.3f}; "
        f"{BATCH:,}-state batches ({len(batches)}) mean {np.mean(batches):.3f}, "
        f"p50 {np.percentile(batches, 50):.3f}, p99 {np.percentile(batches, 99):.3f}"
    )
    stacks = np.array([s.n_stacks for s in states])
    by_stacks = [f"{k}: {right[stacks == k].mean():.1%}" for k in range(9, 17) if np.any(stacks == k)]
    print(f"  accuracy by stacks: {', '.join(by_stacks)}")
    if labelled.kinds is not None:
        by_kind = [
            f"{kind} {right[labelled.kinds == kind].sum()}/{np.sum(labelled.kinds == kind)}"
            for kind in ("OBUD", "SFUD", "FFUD", "solvable")
        ]
        print(f"  right by kind: {', '.join(by_kind)} (FFUD recall is the FFUD figure)")


def print_card(card: dict) -> None:
    cv = card.get("cross_validation") or card.get("base_model", {}).get("cross_validation") or {}
    for name in ("paper", "ours"):
        if name in cv:
            row = cv[name]
            print(
                f"{row['folds']}-fold CV on {row['rows']:,} random states, {name} ({row['inputs']} inputs, "
                f"{row['params']}), model alone: accuracy {row['accuracy_mean']:.4%} ± {row['accuracy_std']:.4%}"
            )


def neller_logistic_regression(train_deals: int, test: Labelled) -> None:
    """Logistic regression on the feature vector, trained on decision states of training-range deals."""
    train = decisions_set(DECISIONS_FIRST_SEED, train_deals, "lr-train")
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    model.fit(np.arcsinh(feature_matrix(train.states)), train.solvable)
    accuracy = model.score(np.arcsinh(feature_matrix(test.states)), test.solvable)
    print(
        f"logistic regression (Neller 2019's method, 43 features, trained on {len(train.states):,} decision states "
        f"of deals {DECISIONS_FIRST_SEED}-{DECISIONS_FIRST_SEED + train_deals - 1}): {test.name} accuracy "
        f"{accuracy:.4%} (published: 75.45%)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None, help="model version directory or root")
    parser.add_argument(
        "--small",
        action="store_true",
        help="a run of seconds (with --cost: 3,000 random states, 15 deals, deals 0:20001)",
    )
    parser.add_argument("--sets", default="", help="comma-separated set names (default: all seven)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures as JSON here")
    parser.add_argument("--cache", type=Path, default=Path("out/residue"), help="where generated sets are kept")
    parser.add_argument("--regenerate", action="store_true", help="rebuild the cached sets (and censuses)")
    parser.add_argument(
        "--player",
        type=Path,
        default=None,
        help="plausible play follows this version's hints (default: the model's; the same exact path)",
    )
    parser.add_argument("--cost", action="store_true", help="the older accuracy and cost figures on four sets")
    parser.add_argument("--random", type=int, default=10_000, help="--cost: held-out random states")
    parser.add_argument("--decision-deals", type=int, default=100, help="--cost: deals of held-out decision states")
    parser.add_argument("--deals", default="0:100001", help="--cost: seed range A:B of the balanced initial deals")
    parser.add_argument("--singles", type=int, default=2000, help="--cost: states per set timed one per call")
    parser.add_argument("--lr-deals", type=int, default=200, help="--cost: deals the logistic regression trains on")
    args = parser.parse_args()
    directory = registry.resolve(args.model)
    classifier = load_classifier(directory)
    print(
        f"model {classifier.version}: exact path {classifier.exact.algorithm} DFS, {classifier.exact.max_nodes:,} "
        f"nodes per state; learned model with "
        f"{f'a {classifier.probe_nodes}-node probe' if classifier.probe_nodes else 'no probe'}"
        f"{f', reading a {classifier.progress_nodes}-node search progress' if classifier.progress_nodes else ''}"
        f"{', what the exact path searched' if classifier.exact_columns else ''}"
        f"{' and the states one move down' if classifier.child_features else ''}"
    )
    if args.cost:
        cost_report(classifier, directory, args)
        return
    names = [n.strip() for n in args.sets.split(",") if n.strip()] or None
    player = None if args.player is None else load_classifier(registry.resolve(args.player))
    if player is not None:
        print(f"plausible play follows the hints of model {player.version}")
    rows, whole = residue.run(classifier, args.cache, args.small, names, args.regenerate, player)
    for line in residue.table_lines(rows, whole):
        print(line)
    if args.json is not None:
        args.json.write_text(json.dumps(residue.to_json(rows, whole), indent=2) + "\n", encoding="utf-8")


def cost_report(classifier: Classifier, directory: Path, args: argparse.Namespace) -> None:
    if args.small:
        args.random, args.decision_deals, args.deals, args.singles, args.lr_deals = 3000, 15, "0:20001", 500, 40
    print_card(json.loads((directory / CARD_FILE).read_text(encoding="utf-8")))
    decisions = decisions_set(DECISIONS_SEED, args.decision_deals)
    sets = [random_set(args.random), decisions, balanced_deals(parse_seed_range(args.deals)), external_set()]
    for labelled in sets:
        report(classifier, labelled, args.singles)
    neller_logistic_regression(args.lr_deals, decisions)


if __name__ == "__main__":
    main()
