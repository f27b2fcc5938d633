"""Figures for the learned half: the model card's metrics, and classify latency through onnxruntime.

    python benchmarks/models.py [--model DIR] [--repeats N]

Prints the installed model's cross-validated and held-out metrics (from its
model card), its accuracy on the external labelled set (evaluation only), and
measures single-state and 10,000-state classify latency through onnxruntime,
with the time split into features, probe and ONNX inference.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

# Run as a script, this folder comes first on sys.path, and its features.py and
# models.py would shadow the packages of the same names.
sys.path = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import numpy as np  # noqa: E402

from features import feature_matrix  # noqa: E402
from game import State, parse_grid, random_states  # noqa: E402
from models import registry  # noqa: E402
from models.classifier import CARD_FILE, load_classifier  # noqa: E402
from models.inputs import probe_columns  # noqa: E402

EXTERNAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "external" / "neller-states-deals-0-99.csv"


def external_states() -> tuple[list[State], np.ndarray]:
    """The external labelled states (deals 0-99), for evaluation only."""
    states, labels = [], []
    for line in EXTERNAL.read_text(encoding="utf-8").splitlines():
        cells, label = line.rsplit(",", 1)
        text = cells.strip('"')
        grid = "/".join(" ".join(text[8 * r + 2 * c : 8 * r + 2 * c + 2] for c in range(4)) for r in range(4))
        states.append(parse_grid(grid))
        labels.append(int(label))
    return states, np.array(labels)


def print_card(card: dict) -> None:
    cv = card.get("cross_validation", {})
    for name in ("paper", "ours"):
        if name in cv:
            row = cv[name]
            print(
                f"{cv[name]['folds']}-fold CV, {name:5s} ({row['inputs']} inputs, {row['params']}): "
                f"accuracy {row['accuracy_mean']:.4%} ± {row['accuracy_std']:.4%}"
            )
    for name, m in card["evaluation"].items():
        print(
            f"held-out {name:15s}: {m['rows']:>7} rows  accuracy {m['accuracy']:.4%}  "
            f"AUC {m['auc']:.4f}  Brier {m['brier']:.4f}"
        )
    ordering = card.get("ordering")
    if ordering:
        print(
            f"ordering model: RMSE {ordering['rmse']:.3f} (paper 0.400); cutoff {ordering['cutoff']}; "
            f"Ordered DFS mean nodes {ordering['mean_nodes']:.1f} (paper 1,381), {ordering['mean_ms']:.3f} ms; "
            f"Compatible DFS {ordering['compatible_nodes']:.1f} nodes, {ordering['compatible_ms']:.3f} ms "
            f"on {ordering['sweep_states']} held-out random states"
        )
    print(f"parity: {card['parity']}")


def timed(fn, repeats: int) -> float:  # type: ignore[no-untyped-def]
    """Best wall time of ``repeats`` calls, in seconds."""
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None, help="model version directory or root")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    directory = registry.resolve(args.model)
    classifier = load_classifier(directory)
    print(f"model {classifier.version} (schema {classifier.schema_version}, probe {classifier.probe_nodes} nodes)")
    print_card(json.loads((directory / CARD_FILE).read_text(encoding="utf-8")))

    states, labels = external_states()
    p = classifier.predict(states)
    print(
        f"external set (deals 0-99, {len(states)} states, never trained on): "
        f"accuracy {np.mean((p >= 0.5) == labels):.4%}"
    )

    batch = random_states(2026, 10_000)
    one = batch[:1]
    classifier.predict(one)
    singles = [timed(lambda s=s: classifier.predict([s]), 1) for s in batch[:2000]]
    print(
        f"single-state classify: p50 {statistics.median(singles) * 1e3:.3f} ms, "
        f"p99 {np.percentile(singles, 99) * 1e3:.3f} ms"
    )
    total = timed(lambda: classifier.predict(batch), args.repeats)
    features = timed(lambda: feature_matrix(batch), args.repeats)
    probe = timed(lambda: probe_columns(batch, classifier.probe_nodes), args.repeats) if classifier.probe_nodes else 0.0
    inputs = np.zeros((len(batch), classifier.session.n_features))
    onnx = timed(lambda: classifier.predict_matrix(inputs), args.repeats)
    print(
        f"10,000-state classify: {total * 1e3:.1f} ms ({len(batch) / total:,.0f} states/s); "
        f"features {features * 1e3:.1f} ms, probe {probe * 1e3:.1f} ms, onnxruntime {onnx * 1e3:.1f} ms"
    )


if __name__ == "__main__":
    main()
