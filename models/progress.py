# mypy: disable-error-code="no-untyped-def"
"""What a budgeted search learns on its way: features for the hard remainder (issue 14).

A state the exact path leaves open still tells something about itself to a
search that tries it: how close it came to one stack, how many dead states it
proved, how many of the root's moves it closed off. ``search_progress`` runs a
small Compatible DFS (connectivity pruning, a memo of dead states keyed on the
exact cells) on a whole batch in one compiled call and returns those figures
as columns (``PROGRESS_COLUMNS``):

- ``progress_nodes``: states expanded (at most the budget);
- ``progress_fewest_stacks``: the fewest stacks of any state it reached, over ``n_stacks``;
- ``progress_memo``: dead states it proved and memoised (how much the memo filled);
- ``progress_dead_ends``: expanded states none of whose moves kept the graph connected;
- ``progress_root_moves``: the root's moves that keep the graph connected;
- ``progress_root_dead``: those of them it proved dead within the budget;
- ``progress_outcome``: 1 solved, 0 proved unsolvable, 0.5 budget spent.

These are features, never answers: Classify's exact answers come from
``search`` alone (``models.exact``). This is compiled code where speed beats
beauty; ``progress_reference`` is the plain-Python search it is tested against.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from game.errors import Stopped
from search import compat_table, line_table
from search.tables import is_connected

PROGRESS_COLUMNS = (
    "progress_nodes",
    "progress_fewest_stacks",
    "progress_memo",
    "progress_dead_ends",
    "progress_root_moves",
    "progress_root_dead",
    "progress_outcome",
)
U0 = np.uint64(0)
U1 = np.uint64(1)
SOLVED, DEAD, SPENT = 1.0, 0.0, 0.5


class ProgressStopped(Stopped):
    """The cancel flag was set before every state of the batch had its search progress."""


def search_progress(
    cells: np.ndarray, rows: int, cols: int, max_nodes: int, cancel: np.ndarray | None = None
) -> np.ndarray:
    """``(n, len(PROGRESS_COLUMNS))`` float64: each state's search progress within ``max_nodes`` expanded states.

    ``cells`` is ``int8`` ``(n, rows*cols)`` (``game.arrays``); one compiled call for the batch.
    ``cancel`` is an int64[1] flag another thread may set: the search reads it before each
    state and once it is set the call raises ``ProgressStopped``.
    """
    cells = np.ascontiguousarray(cells, dtype=np.int8).reshape(-1, rows * cols)
    out = np.zeros((cells.shape[0], len(PROGRESS_COLUMNS)), dtype=np.float64)
    flag = np.zeros(1, dtype=np.int64) if cancel is None else cancel
    if cells.shape[0]:
        done = _progress_batch(cells, compat_table(), line_table(rows, cols), max(int(max_nodes), 1), out, flag)
        if done < cells.shape[0]:
            raise ProgressStopped(f"stopped after the search progress of {done} of {cells.shape[0]} states")
    return out


def warm_up_progress() -> None:
    """Compile (or load from numba's cache) the progress search, on one small state."""
    search_progress(np.array([[0, 1, -1, -1, 5, -1, -1, -1, -1]], dtype=np.int8), 3, 3, 2, np.zeros(1, np.int64))


@njit(cache=True, nogil=True)
def _hash(cells):
    h = np.uint64(1469598103934665603)
    for c in cells:
        h = (h ^ np.uint64(c + 1)) * np.uint64(1099511628211)
    return np.int64(h >> np.uint64(8))


@njit(cache=True, nogil=True)
def _memo_slot(table, used, cells):
    # The slot holding ``cells``, or the empty slot where it would go (open addressing, exact keys).
    mask = table.shape[0] - 1
    slot = _hash(cells) & mask
    while used[slot]:
        same = True
        for i in range(cells.shape[0]):
            if table[slot, i] != cells[i]:
                same = False
                break
        if same:
            return slot
        slot = (slot + 1) & mask
    return slot


@njit(cache=True, nogil=True)
def _moves(cells, compat, line, src, dst):
    # Every legal move (source cell onto target cell) whose child keeps a connected graph.
    present = U0
    for c in cells:
        if c >= 0:
            present |= U1 << np.uint64(c)
    count = 0
    for t in range(cells.shape[0]):
        if cells[t] < 0:
            continue
        # A move onto t buries card cells[t]: every child with that target has the same graph.
        if not is_connected(present & ~(U1 << np.uint64(cells[t])), compat):
            continue
        for s in range(cells.shape[0]):
            in_line = s != t and cells[s] >= 0 and (line[s] >> np.uint64(t)) & U1 != U0
            if in_line and (compat[cells[s]] >> np.uint64(cells[t])) & U1 != U0:
                src[count] = s
                dst[count] = t
                count += 1
    return count


@njit(cache=True, nogil=True)
def _progress_one(root, compat, line, max_nodes, table, used, depth_cells, src, dst, count, nxt, out):
    stacks = 0
    present = U0
    for c in root:
        if c >= 0:
            stacks += 1
            present |= U1 << np.uint64(c)
    out[:] = 0.0
    out[1] = 1.0
    if stacks <= 1:
        out[6] = SOLVED
        return
    if not is_connected(present, compat):
        out[6] = DEAD
        return
    used[:] = False
    depth_cells[0] = root
    nxt[0] = 0
    count[0] = _moves(root, compat, line, src[0], dst[0])
    nodes = 1
    fewest = stacks
    memo = 0
    dead_ends = 1 if count[0] == 0 else 0
    root_dead = 0
    depth = 0
    outcome = SPENT
    while True:
        if nxt[depth] >= count[depth]:
            # every move of this state is dead: so is the state
            if depth == 0:
                outcome = DEAD
                break
            slot = _memo_slot(table, used, depth_cells[depth])
            if not used[slot] and memo < table.shape[0] // 2:
                used[slot] = True
                table[slot] = depth_cells[depth]
                memo += 1
            depth -= 1
            if depth == 0:
                root_dead += 1
            continue
        k = nxt[depth]
        nxt[depth] += 1
        child = depth_cells[depth + 1]
        child[:] = depth_cells[depth]
        child[dst[depth, k]] = child[src[depth, k]]
        child[src[depth, k]] = -1
        left = stacks - depth - 1
        if left < fewest:
            fewest = left
        if left == 1:
            outcome = SOLVED
            break
        if used[_memo_slot(table, used, child)]:
            if depth == 0:
                root_dead += 1
            continue
        if nodes >= max_nodes:
            break
        nodes += 1
        depth += 1
        count[depth] = _moves(child, compat, line, src[depth], dst[depth])
        nxt[depth] = 0
        if count[depth] == 0:
            dead_ends += 1
    out[0] = nodes
    out[1] = fewest / stacks
    out[2] = memo
    out[3] = dead_ends
    out[4] = count[0]
    out[5] = root_dead
    out[6] = outcome


@njit(cache=True, nogil=True)
def _progress_batch(cells, compat, line, max_nodes, out, cancel):
    # Returns the states done: all of them, or fewer once ``cancel[0]`` is set.
    size = 1
    while size < 4 * max_nodes:
        size *= 2
    ncells = cells.shape[1]
    table = np.empty((size, ncells), dtype=np.int8)
    used = np.zeros(size, dtype=np.bool_)
    # per depth: the state, its moves and the next one to try (a state of n stacks is at most n-1 moves deep)
    depth_cells = np.empty((ncells + 1, ncells), dtype=np.int8)
    src = np.empty((ncells + 1, ncells * ncells), dtype=np.int64)
    dst = np.empty((ncells + 1, ncells * ncells), dtype=np.int64)
    count = np.zeros(ncells + 1, dtype=np.int64)
    nxt = np.zeros(ncells + 1, dtype=np.int64)
    for i in range(cells.shape[0]):
        if cancel[0] != 0:
            return i
        _progress_one(cells[i], compat, line, max_nodes, table, used, depth_cells, src, dst, count, nxt, out[i])
    return cells.shape[0]


def progress_reference(cells: np.ndarray, rows: int, cols: int, max_nodes: int) -> list[float]:
    """``search_progress`` of one state in plain Python (recursive, same move order): the test oracle."""
    compat, line = compat_table(), line_table(rows, cols)
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


def _table_size(max_nodes: int) -> int:
    size = 1
    while size < 4 * max(max_nodes, 1):
        size *= 2
    return size
