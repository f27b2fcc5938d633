# mypy: disable-error-code="no-untyped-def"
"""The progress search: a small Compatible DFS whose figures describe a state, compiled for a whole batch.

``progress_batch`` runs, on each state of a batch, a depth-first search of at
most ``max_nodes`` expanded states and writes what it learned as one row of
``PROGRESS_COLUMNS`` (their meaning: ``boaf.search.progress``, the public face).
It is built from the search kernel's parts: ``generate`` with connectivity
pruning (``PRUNE_GRAPH``) and no ordering, the children sorted by target cell
then source (``order._sort_by_target``), ``play``/``unplay`` keeping the wide
key (``keys._plain_key``) move by move, and the exact memo of dead states
(``memo._memo_find``, ``memo._memo_add``; wide keys, one stamp per state of
the batch so one table serves the whole batch without clearing).

The memo never grows: it has ``progress_memo_rows(max_nodes)`` rows, more than
twice what a search of ``max_nodes`` expanded states may store, so it is never
half full. A search stores only states it proved dead: every move out of them
was tried and led to a dead or known-dead state, so a memo hit is a proof.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from boaf.game.graph import is_connected
from boaf.search.kernel.bundles import Config, Scratch, board_of, new_scratch
from boaf.search.kernel.dfs import MemoPlan, Stack, children_width, new_stack
from boaf.search.kernel.generate import generate, play, unplay
from boaf.search.kernel.keys import _plain_key, key_words
from boaf.search.kernel.memo import _memo_add, _memo_find
from boaf.search.kernel.order import _sort_by_target
from boaf.search.kernel.prune import PRUNE_GRAPH

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
"""``progress_outcome``: solved, proved unsolvable, budget spent."""

PROGRESS_CONFIG = Config(options=PRUNE_GRAPH, coefs=None, cutoff=99, memo_min=0, cohort=1, islands=None)
"""Connectivity pruning, no ordering (``cutoff`` above any grid's stacks), no Island Merge."""
PROGRESS_PLAN = MemoPlan(
    narrow=False,
    islands=False,
    packed_max=0,
    labels=np.empty(0, np.int64),
    fill=np.empty(0, np.int64),
    max_rows=0,
    stamp=0,
)
"""Wide keys in a table of the search's own."""


class _Frame(NamedTuple):
    """The progress search's stack (``dfs``'s: wide keys, no move ever asleep) and its scratch."""

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


@njit(cache=True, nogil=True, inline="always")  # one call site: no library of its own to optimise again
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
def progress_batch(cells, tables, config, plan, max_nodes, out, cancel):
    """Fill ``out[i]`` with the progress of state ``cells[i]``; returns the states done.

    ``cells`` is ``int8[n, ncells]``, ``tables`` the grid's ``Tables``, ``config`` and ``plan``
    ``PROGRESS_CONFIG`` and ``PROGRESS_PLAN``, ``max_nodes`` the expanded states a search may
    take, ``out`` ``float64[n, len(PROGRESS_COLUMNS)]``. Returns ``n``, or fewer once
    another thread sets ``cancel[0]`` (read before each state).
    """
    ncells = cells.shape[1]
    words = key_words(ncells)
    depths = ncells + 1  # a state of n stacks is at most n-1 moves deep
    width = children_width(ncells, tables.rows, tables.cols)
    stack = new_stack(depths, width, ncells, plan, words, None)  # no Island Merge
    frame = _Frame(stack, np.zeros(ncells + 1, dtype=np.int64), new_scratch(np.int64(256), width))
    memo = np.zeros((progress_memo_rows(max_nodes), words + 1), dtype=np.uint64)  # never half full: no growth
    for i in range(cells.shape[0]):
        if cancel[0] != 0:
            return i
        memo = _progress_one(cells[i], tables, config, max_nodes, memo, i + 1, frame, out[i])
    return cells.shape[0]


@njit(cache=True, nogil=True)
def progress_memo_rows(max_nodes):
    """The memo's rows: the least power of two of at least ``4 * max_nodes`` (more than twice what it may store)."""
    size = 1
    while size < 4 * max(max_nodes, 1):
        size *= 2
    return size
