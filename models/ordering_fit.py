"""Fit the ordering model of Ordered DFS: ``python -m models.ordering_fit``.

1. Random states of Araki's kind (SPEC §5), labelled solvable (1) or not (0) by
   the exact solver. Only states whose compatibility graph is connected are
   kept, since Ordered DFS only ever scores such children.
2. Least squares of the label on subset H (degree_min, degree_max,
   node_connectivity) plus an intercept, as in Araki 2019.
3. The ordering cutoff: Ordered DFS with the fitted coefficients on held-out
   random states, for every cutoff 2 … 16; the one with the lowest mean solve
   time wins (mean nodes breaks near-ties, since timings are noisy).

Writes ``models/artifacts/ordering.json`` (coefficients, cutoff, the sweep and
the fit's RMSE). A later issue turns this into the full retraining job.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

import search
from game import random_states
from search.ordering import DEFAULT_PATH, OrderingModel, subset_h

CUTOFFS = range(2, 17)


def labelled_features(seed: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Subset H (``float64[n, 3]``) and labels (``float64[n]``) of the connected states among ``count``."""
    states = random_states(seed, count)
    batch = search.solve_many(states, "compatible")
    rows, labels = [], []
    for state, status in zip(states, batch.status.tolist(), strict=True):
        if state.n_stacks < 2 or search.unsolvable_reason(state) != search.EXHAUSTED:
            continue  # odd birds and separated flocks are pruned, never ordered
        rows.append(subset_h(state.top_cards()))
        labels.append(1.0 if status == 1 else 0.0)
    return np.array(rows, dtype=np.float64), np.array(labels, dtype=np.float64)


def fit_linear(features: np.ndarray, labels: np.ndarray) -> tuple[float, tuple[float, float, float], float]:
    """Least squares ``labels ~ 1 + features``: intercept, coefficients and RMSE."""
    design = np.hstack([np.ones((features.shape[0], 1)), features])
    solution, *_ = np.linalg.lstsq(design, labels, rcond=None)
    rmse = float(np.sqrt(np.mean((design @ solution - labels) ** 2)))
    return float(solution[0]), (float(solution[1]), float(solution[2]), float(solution[3])), rmse


def sweep_cutoff(
    intercept: float, coefficients: tuple[float, float, float], seed: int, count: int
) -> list[dict[str, float]]:
    """Mean solve time (ms) and nodes of Ordered DFS on held-out random states, per cutoff."""
    states = random_states(seed, count)
    curve = []
    for cutoff in CUTOFFS:
        model = OrderingModel(intercept, coefficients, cutoff)
        search.solve_many(states[:50], "ordered", ordering=model)  # warm caches before timing
        batch = search.solve_many(states, "ordered", ordering=model)
        curve.append(
            {"cutoff": cutoff, "mean_ms": float(batch.elapsed_ms.mean()), "mean_nodes": float(batch.nodes.mean())}
        )
    return curve


def best_cutoff(curve: list[dict[str, float]]) -> int:
    """The cutoff of lowest mean time; within 2% of it, the one of fewest nodes."""
    fastest = min(point["mean_ms"] for point in curve)
    near = [point for point in curve if point["mean_ms"] <= fastest * 1.02]
    return int(min(near, key=lambda point: point["mean_nodes"])["cutoff"])


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Fit, sweep and write the artifact; returns what was written."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=int, default=20_000, help="random states to fit on")
    parser.add_argument("--held-out", type=int, default=4_000, help="random states for the cutoff sweep")
    parser.add_argument("--seed", type=int, default=2019)
    parser.add_argument("--output", type=Path, default=DEFAULT_PATH)
    args = parser.parse_args(argv)

    features, labels = labelled_features(args.seed, args.train)
    intercept, coefficients, rmse = fit_linear(features, labels)
    curve = sweep_cutoff(intercept, coefficients, args.seed + 1, args.held_out)
    model = OrderingModel(intercept, coefficients, best_cutoff(curve))
    artifact = {
        **model.to_json(),
        "rmse": rmse,
        "training": {"generator": "random", "seed": args.seed, "states": args.train, "connected": len(labels)},
        "sweep": {"generator": "random", "seed": args.seed + 1, "states": args.held_out, "curve": curve},
    }
    args.output.write_text(json.dumps(artifact, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: artifact[k] for k in ("intercept", "coefficients", "cutoff", "rmse")}))
    return artifact


if __name__ == "__main__":
    main()
