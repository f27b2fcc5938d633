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

A 4x4 deal (all 16 cells filled) that the first search leaves open and that looks
like an FFUD (``boaf.features.looks_like_ffud``: a connected deal with few pairs and
many zeros in A·A) gets a second search of ``deal_nodes`` nodes when the budget has
one. Such deals are rare (0.2% of random deals, 0.01% of random 4x4 states), so the
extra search moves no latency percentile, and it settles most of the FFUDs the first
leaves open: they are the unsolvable deals a model finds hardest to single out. Its
gathering at 8,192 nodes works eight times longer than a plain search's
(``Algorithm.deep_gathering``), which is what refutes most of them.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from boaf.features import compute_features, looks_like_ffud
from boaf.game.errors import Stopped
from boaf.models.errors import ModelError
from boaf.models.files import write_text_atomically
from boaf.search import (
    DEFAULT_ALGORITHM,
    LEARNED_COLUMNS,
    SOLVABLE,
    UNKNOWN,
    UNSOLVABLE,
    Algorithm,
    algorithm_named,
    solve_many,
)

EXACT_FILE = "exact_path.json"
DEAL_GRID = (4, 4)  # the grid whose whole deals may get a second search
DEAL_SIEVE = "connected, flockability < 50, A·A zeros > 60"  # looks_like_ffud's rule, for ExactBudget.deal_search
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
    ``deal_nodes`` is the second search of a 4x4 deal the first leaves open and that looks
    like an FFUD (0: none; see the module docstring).
    """

    max_nodes: int
    algorithm: str = DEFAULT_ALGORITHM
    measured: dict[str, Any] = field(default_factory=dict, compare=False)
    by_grid: dict[str, int] = field(default_factory=dict, hash=False)
    deal_nodes: int = 0

    def nodes_for(self, rows: int, cols: int) -> int:
        """The node budget of a state on a ``rows × cols`` grid: its grid's own, else ``max_nodes``."""
        return self.by_grid.get(grid_key(rows, cols), self.max_nodes)

    def deal_nodes_for(self, rows: int, cols: int) -> int:
        """The second search's budget for an FFUD-like deal on a ``rows × cols`` grid: 0 but on 4x4."""
        return self.deal_nodes if (rows, cols) == DEAL_GRID else 0

    def deal_search(self, rows: int, cols: int) -> str:
        """The second search on a ``rows × cols`` grid in words, for keys of cached sets ("" for none)."""
        nodes = self.deal_nodes_for(rows, cols)
        return f"{nodes} nodes, deep gathering, {DEAL_SIEVE}" if nodes else ""

    def grid_budgets(self) -> list[tuple[int, int, int]]:
        """``(rows, cols, nodes)`` of each grid with a budget of its own, by rows then columns."""
        return sorted((*_grid_shape(grid), nodes) for grid, nodes in self.by_grid.items())

    def to_json(self) -> dict[str, Any]:
        """``{"max_nodes", "algorithm", "measured", "by_grid", "deal_nodes"}``, as ``exact_path.json`` holds it."""
        return asdict(self)


NO_EXACT_PATH = ExactBudget(0)


@dataclass(frozen=True)
class Predictions:
    """Classify's answer for each state, in input order.

    ``p_solvable`` (float64) is 1.0 or 0.0 where ``exact`` (bool) is set;
    ``nodes`` (uint64) is what the exact path's search expanded for the state;
    ``learned`` (int64, a row of ``boaf.search.LEARNED_COLUMNS`` each) what its first search learned.
    """

    p_solvable: np.ndarray
    exact: np.ndarray
    nodes: np.ndarray
    learned: np.ndarray

    @classmethod
    def empty(cls, n: int) -> Predictions:
        """``n`` not-yet-filled answers: p 0, not exact, 0 nodes, nothing learned."""
        return cls(np.zeros(n), np.zeros(n, dtype=bool), np.zeros(n, dtype=np.uint64), _nothing_learned(n))

    @classmethod
    def open(cls, n: int) -> Predictions:
        """``n`` states no search settled: p 0.5, not exact, 0 nodes, nothing learned."""
        return cls(np.full(n, 0.5), np.zeros(n, dtype=bool), np.zeros(n, dtype=np.uint64), _nothing_learned(n))

    def put(self, index: np.ndarray, part: Predictions) -> None:
        """Write ``part``'s answers at rows ``index``."""
        self.p_solvable[index], self.exact[index], self.nodes[index] = part.p_solvable, part.exact, part.nodes
        self.learned[index] = part.learned

    def add(self, index: np.ndarray, later: Predictions) -> None:
        """Take a later search's answers for the open rows ``index``: what it settled, and its nodes on top
        (``learned`` stays the first search's, which is what the model reads)."""
        settled = index[later.exact]
        self.p_solvable[settled], self.exact[settled] = later.p_solvable[later.exact], True
        self.nodes[index] += later.nodes


_P_OF = {SOLVABLE: 1.0, UNSOLVABLE: 0.0, UNKNOWN: 0.5}  # an exact path's p by status (0.5: open)


def exact_search(
    cells: np.ndarray,
    rows: int,
    cols: int,
    budget: ExactBudget,
    *,
    cancel: np.ndarray | None = None,
    second: bool = True,
) -> Predictions:
    """The exact path alone, for a batch on one grid: settled states get p 1 or 0 and ``exact``.

    ``cells`` is an ``int8`` array ``(n, rows*cols)`` (``boaf.game.arrays``). Each state's
    search gets the grid's budget, ``budget.nodes_for(rows, cols)`` nodes, and on 4x4 the
    deals it leaves open that look like an FFUD a second search of ``budget.deal_nodes``
    (``search_again``; ``second=False`` leaves that to the caller, who has their features).
    Each search is one compiled call for the whole batch; open states come back with p 0.5
    and ``nodes`` counts both searches. Once ``cancel[0]`` is set (``search.solve``'s flag)
    the searches stop and every state not yet settled stays open.
    """
    n, max_nodes = int(cells.shape[0]), budget.nodes_for(rows, cols)
    if max_nodes == 0 or n == 0:
        return Predictions.open(n)
    answers = _search(cells, rows, cols, max_nodes, budget.algorithm, cancel)
    if second and budget.deal_nodes_for(rows, cols):
        still_open = np.flatnonzero(~answers.exact)
        deals = still_open[np.all(cells[still_open] >= 0, axis=1)]
        if deals.size and not _stopped(cancel):
            try:
                features = compute_features(cells[deals], rows, cols, cancel=cancel).matrix
            except Stopped:
                return answers
            answers.add(deals, search_again(cells[deals], rows, cols, features=features, budget=budget, cancel=cancel))
    return answers


def search_again(
    cells: np.ndarray,
    rows: int,
    cols: int,
    *,
    features: np.ndarray,
    budget: ExactBudget,
    cancel: np.ndarray | None = None,
) -> Predictions:
    """The second search of open states on one grid: 4x4 whole deals that look like an FFUD get ``deal_nodes``.

    ``features`` holds each state's feature row (``boaf.features``' schema order; a model input
    matrix's first columns will do). Its gathering works eight times longer at 8,192 nodes
    (``Algorithm.deep_gathering``). States not searched again, and all of them once ``cancel``
    is set, come back open: p 0.5, 0 nodes.
    """
    answers = Predictions.open(int(cells.shape[0]))
    nodes = budget.deal_nodes_for(rows, cols)
    looks = ffud_like_deals(cells, rows, cols, features) if nodes else np.zeros(0, dtype=np.intp)
    if looks.size and not _stopped(cancel):
        deep = algorithm_named(budget.algorithm).deep_gathering()
        answers.put(looks, _search(cells[looks], rows, cols, nodes, deep, cancel))
    return answers


def ffud_like_deals(cells: np.ndarray, rows: int, cols: int, features: np.ndarray) -> np.ndarray:
    """The rows of ``cells`` (a ``rows × cols`` grid; feature rows ``features``) that are 4x4 FFUD-like deals."""
    if (rows, cols) != DEAL_GRID:
        return np.zeros(0, dtype=np.intp)
    return np.flatnonzero(looks_like_ffud(features) & whole_deals(cells, rows, cols))


def whole_deals(cells: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """Which rows of ``cells`` (a ``rows × cols`` grid) are whole 4x4 deals, every cell filled (bool)."""
    if (rows, cols) != DEAL_GRID:
        return np.zeros(cells.shape[0], dtype=bool)
    return np.asarray(np.all(cells >= 0, axis=1))


def _search(
    cells: np.ndarray, rows: int, cols: int, max_nodes: int, algorithm: str | Algorithm, cancel: np.ndarray | None
) -> Predictions:
    """One budgeted search of every state of ``cells``: p 1 or 0 where it settles, 0.5 where not."""
    n = int(cells.shape[0])
    batch = solve_many(cells, algorithm, rows=rows, cols=cols, max_nodes=max_nodes, cancel=cancel, reasons=False)
    p = np.fromiter((_P_OF[status] for status in batch.status), dtype=np.float64, count=n)
    return Predictions(p, p != 0.5, np.asarray(batch.nodes, dtype=np.uint64), batch.learned)


def _nothing_learned(n: int) -> np.ndarray:
    return np.zeros((n, len(LEARNED_COLUMNS)), dtype=np.int64)


def _stopped(cancel: np.ndarray | None) -> bool:
    return cancel is not None and bool(cancel[0])


def read_exact_budget(directory: Path) -> ExactBudget:
    """The exact path of the model in ``directory``; ``NO_EXACT_PATH`` when it has no ``exact_path.json``.

    A file without ``by_grid`` (written before grids had budgets of their own) gives every
    grid ``max_nodes``, and one without ``deal_nodes`` no second search. Raises ``ModelError``
    naming the file when it is malformed: a budget below 0, or a ``by_grid`` key that is not
    a grid (``"4x13"``).
    """
    path = directory / EXACT_FILE
    if not path.is_file():
        return NO_EXACT_PATH
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        by_grid = {str(grid): int(nodes) for grid, nodes in dict(data.get("by_grid", {})).items()}
        budget = ExactBudget(
            int(data["max_nodes"]),
            str(data["algorithm"]),
            dict(data.get("measured", {})),
            by_grid,
            int(data.get("deal_nodes", 0)),
        )
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"{path}: not an exact path (JSON with max_nodes and algorithm): {exc}") from exc
    named = {"max_nodes": budget.max_nodes, "deal_nodes": budget.deal_nodes}
    for name, nodes in {**named, **{f"by_grid[{g!r}]": n for g, n in by_grid.items()}}.items():
        if nodes < 0:
            raise ModelError(f"{path}: {name} must be 0 or more, got {nodes}")
    for grid in by_grid:
        if not _GRID_KEY.fullmatch(grid):
            raise ModelError(f"{path}: by_grid key {grid!r} is not a grid (rows x columns, e.g. '4x13')")
    return budget


def write_exact_budget(directory: Path, budget: ExactBudget) -> Path:
    """Write ``budget`` as ``directory/exact_path.json`` atomically."""
    return write_text_atomically(directory / EXACT_FILE, json.dumps(budget.to_json(), indent=2) + "\n")
