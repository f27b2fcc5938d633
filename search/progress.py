"""What a budgeted search learns on its way: figures that describe a state the exact path leaves open.

A state that the exact path leaves open (the residue; terms: docs/glossary.md)
still tells something about itself to a search that tries it: how close it came to one
stack, how many dead states it proved, how many of the root's moves it closed
off. ``search_progress`` runs a small Compatible DFS on a whole batch in one
compiled call (``boaf.search.kernel.progress``) and returns those figures as
columns (``PROGRESS_COLUMNS``), each a float64:

- ``progress_nodes``: states expanded (at most the budget);
- ``progress_fewest_stacks``: the fewest stacks of any state it reached, over ``n_stacks``;
- ``progress_memo``: dead states it proved and memoised (how much the memo filled);
- ``progress_dead_ends``: expanded states none of whose moves kept the graph connected;
- ``progress_root_moves``: the root's moves that keep the graph connected;
- ``progress_root_dead``: those of them it proved dead within the budget;
- ``progress_outcome``: 1 solved, 0 proved unsolvable, 0.5 budget spent.

These are features, never answers: the classifier reads them as model inputs
(``boaf.models.inputs``), and its exact answers come from ``solve_many`` alone.
``progress_reference`` is the plain-Python search the compiled one is tested against.
"""

from __future__ import annotations

import numpy as np

from boaf.game.errors import Stopped
from boaf.search.kernel.progress import (
    DEAD,
    PROGRESS_COLUMNS,
    PROGRESS_CONFIG,
    PROGRESS_PLAN,
    SOLVED,
    SPENT,
    progress_batch,
    progress_memo_rows,
)
from boaf.search.tables import compat_table, grid_tables

__all__ = [
    "DEAD",
    "PROGRESS_COLUMNS",
    "SOLVED",
    "SPENT",
    "ProgressStopped",
    "progress_reference",
    "search_progress",
    "warm_up_progress",
]


class ProgressStopped(Stopped):
    """The cancel flag was set before every state of the batch had its search progress."""


def search_progress(
    cells: np.ndarray, rows: int, cols: int, max_nodes: int, *, cancel: np.ndarray | None = None
) -> np.ndarray:
    """``(n, len(PROGRESS_COLUMNS))`` float64: each state's search progress within ``max_nodes`` expanded states.

    ``cells`` is ``int8`` ``(n, rows*cols)`` (``boaf.game.arrays``); one compiled call for the batch.
    ``cancel`` is an int64[1] flag another thread may set: the search reads it before each
    state and once it is set the call raises ``ProgressStopped``.
    """
    cells = np.ascontiguousarray(cells, dtype=np.int8).reshape(-1, rows * cols)
    out = np.zeros((cells.shape[0], len(PROGRESS_COLUMNS)), dtype=np.float64)
    flag = np.zeros(1, dtype=np.int64) if cancel is None else cancel
    if cells.shape[0]:
        tables = grid_tables(rows, cols)
        done = progress_batch(cells, tables, PROGRESS_CONFIG, PROGRESS_PLAN, max(int(max_nodes), 1), out, flag)
        if done < cells.shape[0]:
            raise ProgressStopped(f"stopped after the search progress of {done} of {cells.shape[0]} states")
    return out


def warm_up_progress() -> None:
    """Compile (or load from numba's cache) the progress search, on one small state."""
    state = np.array([[0, 1, -1, -1, 5, -1, -1, -1, -1]], dtype=np.int8)
    search_progress(state, 3, 3, 2, cancel=np.zeros(1, np.int64))


def progress_reference(cells: np.ndarray, rows: int, cols: int, max_nodes: int) -> list[float]:
    """``search_progress`` of one state in plain Python (recursive, same move order): the test oracle."""
    compat, line = compat_table(), grid_tables(rows, cols).line
    root = [int(c) for c in cells]

    def moves(state: list[int]) -> list[tuple[int, int]]:
        return _reference_moves(state, compat, line)

    stacks = len(_present(root))
    if stacks <= 1:
        return [0, 1.0, 0, 0, 0, 0, SOLVED]
    if not _connected(_present(root), compat):
        return [0, 1.0, 0, 0, 0, 0, DEAD]
    stats = {"nodes": 1, "fewest": stacks, "memo": 0, "dead_ends": 0, "root_dead": 0}
    dead: set[tuple[int, ...]] = set()
    capacity = progress_memo_rows(max_nodes) // 2

    class Stop(Exception):
        pass

    def search(state: list[int], depth: int) -> bool:
        children = moves(state)
        if not children:
            stats["dead_ends"] += 1
        for s, t in children:
            child = list(state)
            child[t], child[s] = child[s], -1
            left = stacks - depth - 1
            stats["fewest"] = min(stats["fewest"], left)
            if left == 1:
                return True
            if tuple(child) in dead:
                stats["root_dead"] += depth == 0
                continue
            if stats["nodes"] >= max_nodes:
                raise Stop
            stats["nodes"] += 1
            if search(child, depth + 1):
                return True
            if len(dead) < capacity:
                dead.add(tuple(child))
                stats["memo"] += 1
            stats["root_dead"] += depth == 0
        return False

    try:
        outcome = SOLVED if search(root, 0) else DEAD
    except Stop:
        outcome = SPENT
    root_moves = len(moves(root))
    return [
        stats["nodes"],
        stats["fewest"] / stacks,
        stats["memo"],
        stats["dead_ends"],
        root_moves,
        stats["root_dead"],
        outcome,
    ]


def _present(state: list[int]) -> set[int]:
    """The cards of ``state`` (a list of cells, -1 empty)."""
    return {c for c in state if c >= 0}


def _connected(cards: set[int], compat: np.ndarray) -> bool:
    """True when ``cards`` form one component of the compatibility graph (``compat``: a mask per card)."""
    if not cards:
        return True
    seen, todo = set(), [min(cards)]
    while todo:
        c = todo.pop()
        if c in seen:
            continue
        seen.add(c)
        todo += [d for d in cards if d != c and int(compat[c]) >> d & 1]
    return seen == cards


def _reference_moves(state: list[int], compat: np.ndarray, line: np.ndarray) -> list[tuple[int, int]]:
    """The ``(source, target)`` moves of ``state`` that leave the other cards connected, by target then source."""
    cards = _present(state)
    out = []
    for t, target in enumerate(state):
        if target < 0 or not _connected(cards - {target}, compat):
            continue
        for s, source in enumerate(state):
            if s != t and source >= 0 and int(line[s]) >> t & 1 and int(compat[source]) >> target & 1:
                out.append((s, t))
    return out
