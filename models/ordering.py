"""Training the ordering model: fit subset H's regression on labelled states, choose the cutoff, write the file.

Subset H (Araki et al. 2019) is ``degree_min``, ``degree_max`` and
``node_connectivity`` of a child's compatibility graph. The estimate only ranks
siblings, so only the coefficients' ratios matter to the search; RMSE against
the 0/1 label is reported for comparison with the paper (0.400).

The cutoff is the number of stacks at or below which children keep their
generation order. It is chosen by sweeping 2 … 16 for mean solve time on
held-out states, as in the paper's Figure 2.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import KFold

from boaf.features import feature_names
from boaf.game.state import State
from boaf.models.files import write_text_atomically
from boaf.models.training import Labelled
from boaf.search import SUBSET_H, Algorithm, OrderingModel, solve_many
from boaf.search.algorithms import ORDERED_SUBSET_H

ORDERING_FILE = "ordering.json"
CUTOFFS = tuple(range(2, 17))


@dataclass(frozen=True)
class OrderingFit:
    """Coefficients ``[intercept, degree_min, degree_max, node_connectivity]`` and their cross-validated RMSE."""

    coefficients: tuple[float, float, float, float]
    rmse: float
    rows: int


def subset_h_columns(matrix: np.ndarray) -> np.ndarray:
    """The subset-H columns (``SUBSET_H``) of a feature matrix, one row a state.

    ``boaf.search.ordering.subset_h`` is the same three numbers for one state's cards.
    """
    names = feature_names()
    return matrix[:, [names.index(name) for name in SUBSET_H]]


def fit_ordering(data: Labelled, folds: int = 10, seed: int = 0) -> OrderingFit:
    """Least-squares fit of the 0/1 label on subset H, with k-fold RMSE."""
    x, y = subset_h_columns(data.matrix), data.solvable.astype(np.float64)
    errors = []
    for train, test in KFold(n_splits=folds, shuffle=True, random_state=seed).split(x):
        model = LinearRegression().fit(x[train], y[train])
        errors.append(np.mean((model.predict(x[test]) - y[test]) ** 2))
    final = LinearRegression().fit(x, y)
    coefs = (float(final.intercept_), *(float(c) for c in final.coef_))
    return OrderingFit(coefficients=coefs, rmse=float(np.sqrt(np.mean(errors))), rows=len(y))  # type: ignore[arg-type]


@dataclass(frozen=True)
class Sweep:
    """Mean solve time (ms) and nodes for each cutoff, and Compatible DFS on the same states."""

    cutoffs: tuple[int, ...]
    mean_ms: tuple[float, ...]
    mean_nodes: tuple[float, ...]
    compatible_ms: float
    compatible_nodes: float

    @property
    def best(self) -> int:
        """The cutoff with the lowest mean time."""
        return self.cutoffs[int(np.argmin(self.mean_ms))]


def sweep_cutoff(
    states: Sequence[State], coefficients: Sequence[float], cutoffs: Sequence[int] = CUTOFFS, repeats: int = 3
) -> Sweep:
    """Solve ``states`` with Ordered DFS by subset H (``ORDERED_SUBSET_H``) at every cutoff and with Compatible DFS.

    Each configuration solves the whole batch in one compiled call, ``repeats``
    times, interleaved with the others, and keeps its fastest run, because the
    machines are shared and noisy. Times are mean ms per state.
    """
    intercept, *weights = coefficients
    configs: list[tuple[str | Algorithm, OrderingModel | None]] = [("compatible", None)]
    # The subset-H order is what the cutoff is for (``ordered`` itself orders by squared degrees).
    configs += [(ORDERED_SUBSET_H, OrderingModel(intercept, tuple(weights), c)) for c in cutoffs]  # type: ignore[arg-type]
    best_ms = [float("inf")] * len(configs)
    nodes = [0.0] * len(configs)
    per_state = 1000 / max(len(states), 1)
    for _ in range(repeats):
        for i, (algorithm, ordering) in enumerate(configs):
            started = time.perf_counter()
            batch = solve_many(list(states), algorithm, ordering=ordering)
            best_ms[i] = min(best_ms[i], (time.perf_counter() - started) * per_state)
            nodes[i] = float(np.mean(batch.nodes))
    return Sweep(tuple(cutoffs), tuple(best_ms[1:]), tuple(nodes[1:]), best_ms[0], nodes[0])


def write_ordering(
    path: Path, fit: OrderingFit, cutoff: int, sweep: Sweep | None, *, provenance: dict[str, Any]
) -> Path:
    """Write the ``ordering.json`` artifact the search reads, atomically."""
    intercept, *weights = fit.coefficients
    model = OrderingModel(intercept, (weights[0], weights[1], weights[2]), cutoff)
    data: dict[str, Any] = {
        **model.to_json(),
        "rmse": fit.rmse,
        "rows": fit.rows,
        **provenance,
    }
    if sweep is not None:
        data["sweep"] = {
            "cutoffs": list(sweep.cutoffs),
            "mean_ms": list(sweep.mean_ms),
            "mean_nodes": list(sweep.mean_nodes),
            "compatible_ms": sweep.compatible_ms,
            "compatible_nodes": sweep.compatible_nodes,
        }
    return write_text_atomically(path, json.dumps(data, indent=2) + "\n")
