# mypy: disable-error-code="no-untyped-def"
"""What a budgeted search learns on its way: features for the hard remainder.

A state the exact path leaves open still tells something about itself to a
search that tries it: how close it came to one stack, how many dead states it
proved, how many of the root's moves it closed off. ``search_progress`` runs a
small Compatible DFS on a whole batch in one compiled call and returns those
figures as columns (``PROGRESS_COLUMNS``). It is built from the search
kernel's parts: its move generator (connectivity pruning, ``PRUNE_GRAPH``;
children by target cell, then source), ``play``/``unplay`` and its exact memo
of dead states (wide keys, a stamp per state of the batch).

- ``progress_nodes``: states expanded (at most the budget);
- ``progress_fewest_stacks``: the fewest stacks of any state it reached, over ``n_stacks``;
- ``progress_memo``: dead states it proved and memoised (how much the memo filled);
- ``progress_dead_ends``: expanded states none of whose moves kept the graph connected;
- ``progress_root_moves``: the root's moves that keep the graph connected;
- ``progress_root_dead``: those of them it proved dead within the budget;
- ``progress_outcome``: 1 solved, 0 proved unsolvable, 0.5 budget spent.

These are features, never answers: Classify's exact answers come from
``search`` alone (``boaf.models.exact_path``). This is compiled code where speed beats
beauty; ``progress_reference`` is the plain-Python search it is tested against.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from boaf.game.errors import Stopped
from boaf.game.graph import is_connected
from boaf.search.kernel import PRUNE_GRAPH, Config, Scratch, board_of, new_scratch
from boaf.search.kernel.dfs import MemoPlan, Stack, children_width, new_stack
from boaf.search.kernel.generate import generate, play, unplay
from boaf.search.kernel.keys import _plain_key, key_words
from boaf.search.kernel.memo import _memo_add, _memo_find
from boaf.search.kernel.order import _sort_by_target
from boaf.search.tables import compat_table, grid_tables

PROGRESS_COLUMNS = (
    "progress_nodes",
    "progress_fewest_stacks",
    "progress_memo",
    "progress_dead_ends",
    "progress_root_moves",
    "progress_root_dead",
    "progress_outcome",
)
NODES, FEWEST, MEMO, DEAD_ENDS, ROOT_MOVES, ROOT_DEAD, OUTCOME = range(len(PROGRESS_COLUMNS))
SOLVED, DEAD, SPENT = 1.0, 0.0, 0.5
CONFIG = Config(PRUNE_GRAPH, None, 99, 0, 1, None)  # connectivity pruning, no ordering
PLAN = MemoPlan(False, False, 0, np.empty(0, np.int64), np.empty(0, np.int64), 0, 0)  # wide keys, its own table


class ProgressStopped(Stopped):
    """The cancel flag was set before every state of the batch had its search progress."""


def search_progress(
    cells: np.ndarray, rows: int, cols: int, max_nodes: int, cancel: np.ndarray | None = None
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
        done = _progress_batch(cells, grid_tables(rows, cols), CONFIG, PLAN, max(int(max_nodes), 1), out, flag)
        if done < cells.shape[0]:
            raise ProgressStopped(f"stopped after the search progress of {done} of {cells.shape[0]} states")
    return out


def warm_up_progress() -> None:
    """Compile (or load from numba's cache) the progress search, on one small state."""
    search_progress(np.array([[0, 1, -1, -1, 5, -1, -1, -1, -1]], dtype=np.int8), 3, 3, 2, np.zeros(1, np.int64))


class _Frame(NamedTuple):
    """The progress search's stack (``boaf.search.kernel.dfs``'s: wide keys, no move ever asleep) and its scratch."""

    stack: Stack
    tally: np.ndarray  # int64[ncells + 1]: ``_sort_by_target``'s counts
    scratch: Scratch


@njit(cache=True, nogil=True)
def _children(cells, board, tables, config, frame, depth):
    """Generate the children of ``cells`` at ``depth``, by target cell then source; returns how many."""
    stack = frame.stack
    count = generate(
        cells, board, tables, config, stack.src[depth], stack.dst[depth], stack.sleep[depth], frame.scratch
    )
    _sort_by_target(stack.src[depth], stack.dst[depth], count, frame.tally, frame.scratch.sort_work[0])
    stack.children[depth] = count
    stack.nxt[depth] = 0
    return count


@njit(cache=True, nogil=True, inline="always")
def _known(memo, stamp, stack):
    """True when the memo holds the current state (``stack.cur``)."""
    for w in range(stack.cur.shape[0]):
        stack.key[w] = stack.cur[w]
    return _memo_find(memo, stamp, stack.key) >= 0


@njit(cache=True, nogil=True)
def _progress_one(root, tables, config, max_nodes, memo, stamp, frame, out):
    """Fill ``out`` (one row of ``PROGRESS_COLUMNS``) with the progress of a search from ``root``; returns the memo."""
    board = board_of(root)
    stacks = board.n_stacks
    out[:] = 0.0
    out[FEWEST] = 1.0
    if stacks <= 1:
        out[OUTCOME] = SOLVED
        return memo
    if not is_connected(board.present, tables.compat):
        out[OUTCOME] = DEAD
        return memo
    cells = root.copy()
    stack = frame.stack
    _plain_key(cells, stack.cur)
    root_moves = _children(cells, board, tables, config, frame, np.int64(0))
    nodes, fewest, stored, root_dead = 1, stacks, np.int64(0), 0
    dead_ends = 1 if root_moves == 0 else 0
    depth = 0
    outcome = SPENT
    while True:
        if stack.nxt[depth] >= stack.children[depth]:
            # every move of this state is dead: so is the state
            if depth == 0:
                outcome = DEAD
                break
            if not _known(memo, stamp, stack):
                memo, stored, _ = _memo_add(memo, stamp, stack.key, stored, np.int64(0))
            depth -= 1
            i = stack.nxt[depth] - 1
            a, b = stack.moved[depth, 0], stack.moved[depth, 1]
            board = unplay(cells, stack.cur, stack.src[depth, i], stack.dst[depth, i], a, b, board)
            root_dead += 1 if depth == 0 else 0
            continue
        i = stack.nxt[depth]
        stack.nxt[depth] += 1
        s, t = stack.src[depth, i], stack.dst[depth, i]
        board, a, b = play(cells, stack.cur, s, t, board)
        fewest = min(fewest, board.n_stacks)
        if board.n_stacks == 1:
            outcome = SOLVED
            break
        if _known(memo, stamp, stack):
            board = unplay(cells, stack.cur, s, t, a, b, board)
            root_dead += 1 if depth == 0 else 0
            continue
        if nodes >= max_nodes:
            break
        stack.moved[depth, 0], stack.moved[depth, 1] = a, b
        nodes += 1
        depth += 1
        dead_ends += 1 if _children(cells, board, tables, config, frame, depth) == 0 else 0
    out[NODES], out[FEWEST], out[MEMO], out[DEAD_ENDS] = nodes, fewest / stacks, stored, dead_ends
    out[ROOT_MOVES], out[ROOT_DEAD], out[OUTCOME] = root_moves, root_dead, outcome
    return memo


@njit(cache=True, nogil=True)
def _progress_batch(cells, tables, config, plan, max_nodes, out, cancel):
    # Returns the states done: all of them, or fewer once ``cancel[0]`` is set.
    ncells = cells.shape[1]
    words = key_words(ncells)
    depths = ncells + 1  # a state of n stacks is at most n-1 moves deep
    width = children_width(ncells, tables.rows, tables.cols)
    stack = new_stack(depths, width, ncells, plan, words, None)  # no Island Merge
    frame = _Frame(stack, np.zeros(ncells + 1, dtype=np.int64), new_scratch(np.int64(256), width))
    memo = np.zeros((_table_size(max_nodes), words + 1), dtype=np.uint64)  # never half full: no growth
    for i in range(cells.shape[0]):
        if cancel[0] != 0:
            return i
        memo = _progress_one(cells[i], tables, config, max_nodes, memo, i + 1, frame, out[i])
    return cells.shape[0]


def progress_reference(cells: np.ndarray, rows: int, cols: int, max_nodes: int) -> list[float]:
    """``search_progress`` of one state in plain Python (recursive, same move order): the test oracle."""
    compat, line = compat_table(), grid_tables(rows, cols).line
    root = [int(c) for c in cells]

    def present(state: list[int]) -> set[int]:
        return {c for c in state if c >= 0}

    def connected(cards: set[int]) -> bool:
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

    def moves(state: list[int]) -> list[tuple[int, int]]:
        cards = present(state)
        out = []
        for t, target in enumerate(state):
            if target < 0 or not connected(cards - {target}):
                continue
            for s, source in enumerate(state):
                if s != t and source >= 0 and int(line[s]) >> t & 1 and int(compat[source]) >> target & 1:
                    out.append((s, t))
        return out

    stacks = len(present(root))
    if stacks <= 1:
        return [0, 1.0, 0, 0, 0, 0, SOLVED]
    if not connected(present(root)):
        return [0, 1.0, 0, 0, 0, 0, DEAD]
    stats = {"nodes": 1, "fewest": stacks, "memo": 0, "dead_ends": 0, "root_dead": 0}
    dead: set[tuple[int, ...]] = set()
    capacity = _table_size(max_nodes) // 2

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


@njit(cache=True, nogil=True)
def _table_size(max_nodes):
    """The memo's rows: the least power of two of at least ``4 * max_nodes`` (more than twice what it may store)."""
    size = 1
    while size < 4 * max(max_nodes, 1):
        size *= 2
    return size
