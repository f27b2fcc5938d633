"""The exact path of Classify: a budgeted exact search before the learned model.

Every state first gets the exact solver with a per-state node budget, the whole
batch in one compiled call (``search.solve_many``). A state the search settles
is answered exactly: P(solvable) is 1 or 0 and it is marked exact. Only the
states the budget leaves open go to the learned model.

The budget belongs to a model version: it is chosen by measurement against the
latency targets (``boaf.models.budget``) and stored beside the ONNX file as
``exact_path.json``, which the classifier reads when it loads. A grid may have a
budget of its own (``by_grid``, keyed ``"RxC"``: a 4x13 state costs more per node
than a 4x4 one); every other grid gets ``max_nodes``. A model directory without
the file has no exact path (budget 0), as models built before it had, and a file
without ``by_grid`` gives every grid ``max_nodes``.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from boaf.models.errors import ModelError
from boaf.models.files import write_text_atomically
from boaf.search import DEFAULT_ALGORITHM, SOLVABLE, UNKNOWN, UNSOLVABLE, solve_many

EXACT_FILE = "exact_path.json"
_GRID_KEY = re.compile(r"[1-9][0-9]*x[1-9][0-9]*")  # grid_key's form


def grid_key(rows: int, cols: int) -> str:
    """A grid's name in ``ExactBudget.by_grid``: ``"4x13"`` for 4 rows of 13 cells."""
    return f"{rows}x{cols}"


def _grid_shape(grid: str) -> tuple[int, int]:
    rows, cols = grid.split("x")
    return int(rows), int(cols)


@dataclass(frozen=True)
class ExactBudget:
    """The exact path's settings: nodes per state (0: no exact path) and the search algorithm.

    A state of a grid named in ``by_grid`` (``grid_key``: ``{"4x13": 500}``) gets that grid's
    budget; every other grid gets ``max_nodes`` (``nodes_for``). ``measured`` is the
    measurement that chose the budgets (a JSON object), kept for the model card.
    """

    max_nodes: int
    algorithm: str = DEFAULT_ALGORITHM
    measured: dict[str, Any] = field(default_factory=dict, compare=False)
    by_grid: dict[str, int] = field(default_factory=dict, hash=False)

    def nodes_for(self, rows: int, cols: int) -> int:
        """The node budget of a state on a ``rows × cols`` grid: its grid's own, else ``max_nodes``."""
        return self.by_grid.get(grid_key(rows, cols), self.max_nodes)

    def grid_budgets(self) -> list[tuple[int, int, int]]:
        """``(rows, cols, nodes)`` of each grid with a budget of its own, by rows then columns."""
        return sorted((*_grid_shape(grid), nodes) for grid, nodes in self.by_grid.items())

    def to_json(self) -> dict[str, Any]:
        """``{"max_nodes", "algorithm", "measured", "by_grid"}``, as ``exact_path.json`` holds it."""
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
    cells: np.ndarray, rows: int, cols: int, budget: ExactBudget, *, cancel: np.ndarray | None = None
) -> Predictions:
    """The exact path alone, for a batch on one grid: settled states get p 1 or 0 and ``exact``.

    ``cells`` is an ``int8`` array ``(n, rows*cols)`` (``boaf.game.arrays``). Each state's
    search gets the grid's budget, ``budget.nodes_for(rows, cols)`` nodes. The whole batch
    is one compiled call; open states come back with p 0.5. Once ``cancel[0]`` is set
    (``search.solve``'s flag) the searches stop and every state not yet settled stays open.
    """
    n, max_nodes = int(cells.shape[0]), budget.nodes_for(rows, cols)
    if max_nodes == 0 or n == 0:
        return Predictions(np.full(n, 0.5), np.zeros(n, dtype=bool), np.zeros(n, dtype=np.uint64))
    batch = solve_many(cells, budget.algorithm, rows=rows, cols=cols, max_nodes=max_nodes, cancel=cancel, reasons=False)
    p = np.fromiter((_P_OF[status] for status in batch.status), dtype=np.float64, count=n)
    return Predictions(p, p != 0.5, np.asarray(batch.nodes, dtype=np.uint64))


def read_exact_budget(directory: Path) -> ExactBudget:
    """The exact path of the model in ``directory``; ``NO_EXACT_PATH`` when it has no ``exact_path.json``.

    A file without ``by_grid`` (written before grids had budgets of their own) gives every
    grid ``max_nodes``. Raises ``ModelError`` naming the file when it is malformed: a budget
    below 0, or a ``by_grid`` key that is not a grid (``"4x13"``).
    """
    path = directory / EXACT_FILE
    if not path.is_file():
        return NO_EXACT_PATH
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        by_grid = {str(grid): int(nodes) for grid, nodes in dict(data.get("by_grid", {})).items()}
        budget = ExactBudget(int(data["max_nodes"]), str(data["algorithm"]), dict(data.get("measured", {})), by_grid)
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"{path}: not an exact path (JSON with max_nodes and algorithm): {exc}") from exc
    for name, nodes in {"max_nodes": budget.max_nodes, **{f"by_grid[{g!r}]": n for g, n in by_grid.items()}}.items():
        if nodes < 0:
            raise ModelError(f"{path}: {name} must be 0 or more, got {nodes}")
    for grid in by_grid:
        if not _GRID_KEY.fullmatch(grid):
            raise ModelError(f"{path}: by_grid key {grid!r} is not a grid (rows x columns, e.g. '4x13')")
    return budget


def write_exact_budget(directory: Path, budget: ExactBudget) -> Path:
    """Write ``budget`` as ``directory/exact_path.json`` atomically."""
    return write_text_atomically(directory / EXACT_FILE, json.dumps(budget.to_json(), indent=2) + "\n")
