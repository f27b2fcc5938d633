"""The exact path of Classify: a budgeted exact search before the learned model.

Every state first gets the exact solver with a per-state node budget, the whole
batch in one compiled call (``search.solve_many``). A state the search settles
is answered exactly: P(solvable) is 1 or 0 and it is marked exact. Only the
states the budget leaves open go to the learned model.

The budget belongs to a model version: it is chosen by measurement against the
latency targets (``choose_budget``) and stored beside the ONNX file as
``exact_path.json``, which the classifier reads when it loads. A model
directory without the file has no exact path (budget 0), as models built before
it had.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from boaf.models.errors import ModelError
from boaf.models.files import write_text_atomically
from boaf.search import DEFAULT_ALGORITHM, SOLVABLE, UNKNOWN, UNSOLVABLE, solve_many

EXACT_FILE = "exact_path.json"


@dataclass(frozen=True)
class ExactBudget:
    """The exact path's settings: ``max_nodes`` per state (0: no exact path) and the search algorithm.

    ``measured`` is the measurement that chose the budget (a JSON object), kept for the model card.
    """

    max_nodes: int
    algorithm: str = DEFAULT_ALGORITHM
    measured: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict[str, Any]:
        """``{"max_nodes", "algorithm", "measured"}``, as ``exact_path.json`` holds it."""
        return asdict(self)


NO_EXACT_PATH = ExactBudget(0)


@dataclass(frozen=True)
class Predictions:
    """Classify's answer for each state, in input order.

    ``p_solvable`` (float64) is 1.0 or 0.0 where ``exact`` (bool) is set;
    ``nodes`` (uint64) is what the exact path's search expanded for the state.
    """

    p_solvable: np.ndarray
    exact: np.ndarray
    nodes: np.ndarray

    @classmethod
    def empty(cls, n: int) -> Predictions:
        """``n`` not-yet-filled answers: p 0, not exact, 0 nodes."""
        return cls(np.zeros(n), np.zeros(n, dtype=bool), np.zeros(n, dtype=np.uint64))

    def put(self, index: np.ndarray, part: Predictions) -> None:
        """Write ``part``'s answers at rows ``index``."""
        self.p_solvable[index], self.exact[index], self.nodes[index] = part.p_solvable, part.exact, part.nodes


_P_OF = {SOLVABLE: 1.0, UNSOLVABLE: 0.0, UNKNOWN: 0.5}  # an exact path's p by status (0.5: open)


def exact_search(
    cells: np.ndarray, rows: int, cols: int, budget: ExactBudget, cancel: np.ndarray | None = None
) -> Predictions:
    """The exact path alone, for a batch on one grid: settled states get p 1 or 0 and ``exact``.

    ``cells`` is an ``int8`` array ``(n, rows*cols)`` (``boaf.game.arrays``). The
    whole batch is one compiled call; open states come back with p 0.5. Once
    ``cancel[0]`` is set (``search.solve``'s flag) the searches stop and every
    state not yet settled stays open.
    """
    n = int(cells.shape[0])
    if budget.max_nodes == 0 or n == 0:
        return Predictions(np.full(n, 0.5), np.zeros(n, dtype=bool), np.zeros(n, dtype=np.uint64))
    batch = solve_many(
        cells, budget.algorithm, rows=rows, cols=cols, max_nodes=budget.max_nodes, cancel=cancel, reasons=False
    )
    p = np.fromiter((_P_OF[status] for status in batch.status), dtype=np.float64, count=n)
    return Predictions(p, p != 0.5, np.asarray(batch.nodes, dtype=np.uint64))


def read_exact_budget(directory: Path) -> ExactBudget:
    """The exact path of the model in ``directory``; ``NO_EXACT_PATH`` when it has no ``exact_path.json``.

    Raises ``ModelError`` naming the file when it is malformed.
    """
    path = directory / EXACT_FILE
    if not path.is_file():
        return NO_EXACT_PATH
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        budget = ExactBudget(int(data["max_nodes"]), str(data["algorithm"]), dict(data.get("measured", {})))
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"{path}: not an exact path (JSON with max_nodes and algorithm): {exc}") from exc
    if budget.max_nodes < 0:
        raise ModelError(f"{path}: max_nodes must be 0 or more, got {budget.max_nodes}")
    return budget


def write_exact_budget(directory: Path, budget: ExactBudget) -> Path:
    """Write ``budget`` as ``directory/exact_path.json`` atomically."""
    return write_text_atomically(directory / EXACT_FILE, json.dumps(budget.to_json(), indent=2) + "\n")
