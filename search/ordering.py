"""The ordering model the search reads: subset-H coefficients and a cutoff, their default and their file.

Subset H (Araki 2019) is ``degree_min``, ``degree_max`` and ``node_connectivity``
of a child's compatibility graph. Children are sorted by the estimate only when
their parent has more than ``cutoff`` stacks. ``boaf.models.ordering`` fits the model
and writes it as a JSON artifact beside the classifier; the caller that holds a
model (the service, with the classifier it serves) passes it to the solver, and
``read_ordering`` reads such a file. Without one, the solver uses
``DEFAULT_ORDERING``, a plain constant: ``search`` reads no file of the
``models`` package.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from boaf.game.graph import compat_table, degree_range, graph_scratch, node_connectivity
from boaf.search.errors import InvalidOrderingModel

SUBSET_H = ("degree_min", "degree_max", "node_connectivity")


@dataclass(frozen=True)
class OrderingModel:
    """``estimate = intercept + coefficients · (degree_min, degree_max, node_connectivity)``."""

    intercept: float
    coefficients: tuple[float, float, float]
    cutoff: int

    def kernel_coefs(self) -> np.ndarray:
        """``float64[4]``: intercept then the three coefficients, as the kernel takes them (which only reads them).

        One array per model, made once: every solve passes it, and a single Classify is one solve.
        """
        return _kernel_coefs(self.intercept, self.coefficients)

    def to_json(self) -> dict[str, object]:
        """The artifact's JSON form."""
        return {
            "features": list(SUBSET_H),
            "intercept": self.intercept,
            "coefficients": list(self.coefficients),
            "cutoff": self.cutoff,
        }


@functools.cache
def _kernel_coefs(intercept: float, coefficients: tuple[float, float, float]) -> np.ndarray:
    return np.array([intercept, *coefficients], dtype=np.float64)  # writeable: numba types a read-only one apart


def read_ordering(path: Path) -> OrderingModel:
    """Read an ordering artifact; raises ``InvalidOrderingModel`` naming the file and the fault."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InvalidOrderingModel(f"ordering model {path}: {exc}") from exc
    try:
        features = tuple(data["features"])
        coefficients = tuple(float(c) for c in data["coefficients"])
        model = OrderingModel(float(data["intercept"]), coefficients, int(data["cutoff"]))  # type: ignore[arg-type]
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidOrderingModel(f"ordering model {path}: missing or bad field ({exc})") from exc
    if features != SUBSET_H or len(coefficients) != len(SUBSET_H):
        raise InvalidOrderingModel(f"ordering model {path}: features must be {list(SUBSET_H)}, got {list(features)}")
    return model


#: The committed model's fit (50,000 random states, cutoff swept 2 … 16); a test in
#: ``tests/models`` keeps it equal to ``models/artifacts/ordering.json``.
DEFAULT_ORDERING = OrderingModel(
    intercept=0.11393344208036948,
    coefficients=(-0.07527611263586204, 0.03331418836490879, 0.25923981110815475),
    cutoff=11,
)


def default_ordering() -> OrderingModel:
    """The model the solver uses when the caller passes none: ``DEFAULT_ORDERING``."""
    return DEFAULT_ORDERING


def subset_h(cards: Sequence[int]) -> tuple[int, int, int]:
    """``(degree_min, degree_max, node_connectivity)`` of the compatibility graph on ``cards``.

    Computed by the kernel's own graph code, the very numbers Ordered DFS
    sorts by. Node connectivity is 0 when the graph is disconnected or has at
    most one node, and n - 1 for a complete graph.
    """
    present = np.uint64(sum(1 << c for c in cards))
    compat = compat_table()
    lo, hi = degree_range(present, compat)
    kappa = node_connectivity(present, compat, graph_scratch(), 0)
    return int(lo), int(hi), int(kappa)
