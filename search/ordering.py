"""The ordering model of Ordered DFS: a linear regression on subset H and a cutoff.

Subset H (Araki 2019) is ``degree_min``, ``degree_max`` and ``node_connectivity``
of a child's compatibility graph. Children are sorted by the estimate only when
their parent has more than ``cutoff`` stacks. The numbers live in a JSON
artifact, ``models/artifacts/ordering.json``, written by ``python -m
models.ordering_fit``; this module reads it as a data file (``search`` never
imports ``models`` code).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from search.errors import InvalidOrderingModel

SUBSET_H = ("degree_min", "degree_max", "node_connectivity")
DEFAULT_PATH = Path(__file__).resolve().parent.parent / "models" / "artifacts" / "ordering.json"


@dataclass(frozen=True)
class OrderingModel:
    """``estimate = intercept + coefficients · (degree_min, degree_max, node_connectivity)``."""

    intercept: float
    coefficients: tuple[float, float, float]
    cutoff: int

    def kernel_coefs(self) -> np.ndarray:
        """``float64[4]``: intercept then the three coefficients, as the kernel takes them."""
        return np.array([self.intercept, *self.coefficients], dtype=np.float64)

    def to_json(self) -> dict[str, object]:
        """The artifact's JSON form."""
        return {
            "features": list(SUBSET_H),
            "intercept": self.intercept,
            "coefficients": list(self.coefficients),
            "cutoff": self.cutoff,
        }


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


@cache
def default_ordering() -> OrderingModel:
    """The committed artifact, read once per process."""
    return read_ordering(DEFAULT_PATH)


def subset_h(cards: Sequence[int]) -> tuple[int, int, int]:
    """``(degree_min, degree_max, node_connectivity)`` of the compatibility graph on ``cards``.

    Computed by the kernel's own graph code, the very numbers Ordered DFS
    sorts by. Node connectivity is 0 when the graph is disconnected or has at
    most one node, and n - 1 for a complete graph.
    """
    from search import kernel

    present = np.uint64(sum(1 << c for c in cards))
    compat = kernel.compat_table()
    lo, hi = kernel.degree_range(present, compat)
    kappa = kernel.node_connectivity(present, compat, np.empty((10, 128), dtype=np.int64))
    return int(lo), int(hi), int(kappa)
