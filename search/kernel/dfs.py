# mypy: disable-error-code="no-untyped-def"
"""The depth-first search (``dfs``): Constrained, Compatible, Ordered and Island Merge DFS.

Nodes count *expanded* states: states with more than one stack, not already
known unsolvable, whose children were generated. The search is one loop over
an explicit stack (``Stack``); what differs between the memo's two key
schemes (``MemoPlan``) is asked of ``_child_known`` and ``_store_dead``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from game.graph import U0, bit
from search.kernel.bundles import BIG_SEARCH, CUT_CACHE, board_of, grown_scratch, new_scratch
from search.kernel.generate import generate, play, unplay
from search.kernel.islands import Islands, _child_tag, _enter_island, _island_key, new_islands
from search.kernel.keys import (
    NARROW_CELLS,
    _copy_words,
    _key_children,
    _narrow_key,
    _packed_child,
    _packed_labels,
    _plain_key,
    _ranked_key,
    key_words,
    narrow_max_stacks,
    root_labels,
)
from search.kernel.memo import _fit_memo, _memo_add, _memo_find, _narrow_add, _narrow_find, _narrow_full
from search.kernel.prune import ISLANDS, SLEEP, _fall_asleep, root_prunable
from search.kernel.status import OUT_OF_MEMORY, SOLVABLE, TABLE_FULL, UNKNOWN, UNSOLVABLE, spent


class MemoPlan(NamedTuple):
    """How one search keys and stores its states (fixed for the search)."""

    narrow: bool  # one-word keys (``_narrow_key``, ``_ranked_key``); else wide keys (``_plain_key``)
    islands: bool  # wide keys carry the island under way in their last word (Island Merge)
    packed_max: int  # one-word keys: more stacks than this take a ranked key
    labels: np.ndarray  # one-word keys: each card's root cell (``root_labels``)
    fill: np.ndarray  # a shared one-word table: each search's entries (empty: the table is this search's own)
    max_rows: int  # the memo's row cap (0: none)


class Stack(NamedTuple):
    """The search's explicit stack: per depth, a node's children and what its move changed."""

    src: np.ndarray  # int8[depths, width]: the children's source cells
    dst: np.ndarray  # int8[depths, width]: and target cells
    children: np.ndarray  # int64[depths]: how many children
    nxt: np.ndarray  # int64[depths]: the next child to search
    moved: np.ndarray  # int8[depths, 2]: the two cards of the move out of depth d
    sleep: np.ndarray  # uint64[depths, ncells]: targets of the moves out of a cell asleep at depth d
    done: np.ndarray  # uint64[depths, ncells]: and searched there
    cur: np.ndarray  # uint64[words]: the wide key of the current state, kept move by move (empty: one-word keys)
    key: np.ndarray  # uint64[words]: a key being looked up
    packed: np.ndarray  # uint64[depths]: one-word keys: the packed labels at depth d
    child_key: np.ndarray  # uint64[depths, width]: one-word keys of the children
    isles: Islands  # Island Merge: the island each depth works on


@njit(cache=True, nogil=True)
def _new_stack(cells, n_stacks, rows, cols, plan, words):
    """A ``Stack`` for a search from ``cells`` (``n_stacks`` stacks) on a ``rows`` x ``cols`` grid."""
    ncells = cells.shape[0]
    width = ncells * min(ncells - 1, rows + cols - 2) + 1  # the most children a node may have
    stack = Stack(
        np.empty((n_stacks, width), dtype=np.int8),
        np.empty((n_stacks, width), dtype=np.int8),
        np.zeros(n_stacks, dtype=np.int64),
        np.zeros(n_stacks, dtype=np.int64),
        np.empty((n_stacks, 2), dtype=np.int8),
        np.zeros((n_stacks, ncells), dtype=np.uint64),
        np.zeros((n_stacks, ncells), dtype=np.uint64),
        np.zeros(0 if plan.narrow else words, dtype=np.uint64),
        np.zeros(words, dtype=np.uint64),
        np.zeros(n_stacks + 1, dtype=np.uint64),
        np.empty((n_stacks, width) if plan.narrow else (1, 1), dtype=np.uint64),
        new_islands(n_stacks + 1),
    )
    if plan.narrow:
        stack.packed[0] = _packed_labels(cells, plan.labels)
    else:
        _plain_key(cells, stack.cur)  # (an Island Merge key's last word, the island, stays 0 here)
    return stack


@njit(cache=True, nogil=True)
def dfs(root, tables, config, budget, memo, stamp, path, share):
    """Constrained, Compatible or Ordered DFS from ``root`` (``int8[ncells]``); ``(status, nodes, length, memo)``.

    ``tables``, ``config``, ``budget`` and ``share`` are ``search.kernel.bundles``'
    named tuples. On ``SOLVABLE`` the moves are ``path[:length]`` as ``(source,
    target)`` cells. The memo may be grown or replaced (a table of the wrong
    width) and is returned for reuse: a wide table with a fresh ``stamp``, a
    one-word table once cleared. ``budget.cancel[0] != 0`` stops the search as
    ``UNKNOWN`` at its next node; a state that no longer fits ``max_bytes``
    stops it as ``OUT_OF_MEMORY`` (the memo is the only structure that grows).

    On grids of at most ``NARROW_CELLS`` cells (Island Merge aside) the memo has
    one-word keys (``_narrow_key``, ``_ranked_key``) from the card labels
    (``share.labels``, ``root_labels``; empty: the root's own). A non-empty
    ``share.fill`` shares a one-word memo between threads: it never grows,
    ``fill[stamp]`` counts this search's entries (``stamp`` names the search),
    and once the table would pass three quarters full the search stops as
    ``TABLE_FULL`` (the caller grows it and searches again: every entry is a
    state proved unsolvable, so a restart keeps what was learned). Two threads
    writing one free slot at once lose one entry, which only costs a later search.
    """
    ncells = root.shape[0]
    islands = config.options & ISLANDS != 0
    sleeping = config.options & SLEEP != 0
    narrow = ncells <= NARROW_CELLS and not islands
    words = key_words(ncells) + (1 if islands else 0)  # Island Merge keys carry the island under way
    memo = _fit_memo(memo, 1 if narrow else words + 1, budget.max_bytes)
    board = board_of(root)
    if board.n_stacks <= 1:
        return SOLVABLE, 0, 0, memo
    if root_prunable(root, tables, config.options):
        return UNSOLVABLE, 0, 0, memo
    labels = share.labels
    if narrow and labels.shape[0] == 0:
        labels = np.empty(52, dtype=np.int64)
        root_labels(root, labels)
    max_rows = budget.max_bytes // memo.strides[0] if budget.max_bytes > 0 else 0
    plan = MemoPlan(narrow, islands, narrow_max_stacks(ncells), labels, share.fill, max_rows)
    cells = root.copy()
    stack = _new_stack(cells, board.n_stacks, tables.rows, tables.cols, plan, words)
    scratch = new_scratch(np.int64(CUT_CACHE))
    memo_count = np.int64(0)
    nodes = 1
    depth = np.int64(0)
    fresh = True  # the node at ``depth`` was just entered: its children are not generated yet
    while True:
        if fresh:
            fresh = False
            stack.nxt[depth] = 0
            count = generate(
                cells, board, tables, config, stack.src[depth], stack.dst[depth], stack.sleep[depth], scratch
            )
            if islands:
                count = _enter_island(
                    cells, board.present, tables.compat, stack.isles, depth, stack.src[depth, :count],
                    stack.dst[depth, :count], scratch.graph,
                )  # fmt: skip
            stack.children[depth] = count
            if narrow and config.memo_min <= board.n_stacks - 1 <= plan.packed_max:
                _key_children(
                    stack.packed[depth], board.occupied, cells, labels, stack.src[depth, :count],
                    stack.dst[depth, :count], memo, stack.child_key[depth],
                )  # fmt: skip
        if stack.nxt[depth] < stack.children[depth]:
            i = stack.nxt[depth]
            stack.nxt[depth] += 1
            s = stack.src[depth, i]
            t = stack.dst[depth, i]
            if sleeping and i > 0:
                stack.done[depth, stack.src[depth, i - 1]] |= bit(stack.dst[depth, i - 1])
            board, a, b = play(cells, stack.cur, s, t, board)
            stack.moved[depth, 0] = a
            stack.moved[depth, 1] = b
            if board.n_stacks == 1:
                return SOLVABLE, nodes, _write_path(stack, depth, path), memo
            if islands:
                stack.isles.tag[depth + 1] = _child_tag(stack.isles, depth, board.present, b)
            if board.n_stacks >= config.memo_min and _child_known(memo, stamp, plan, stack, depth, i, cells, board):
                board = unplay(cells, stack.cur, s, t, a, b, board)
                continue
            if spent(budget, nodes):
                return UNKNOWN, nodes, 0, memo
            _enter_child(stack, plan, depth, s, t, a, board.occupied | bit(s), sleeping)
            depth += 1
            nodes += 1
            fresh = True
            if nodes == BIG_SEARCH:
                scratch = grown_scratch(scratch)
        else:
            if depth == 0:
                return UNSOLVABLE, nodes, 0, memo
            if board.n_stacks >= config.memo_min:
                memo, memo_count, status = _store_dead(memo, memo_count, stamp, plan, stack, depth, cells, board)
                if status != UNSOLVABLE:
                    return status, nodes, 0, memo
            depth -= 1
            i = stack.nxt[depth] - 1
            a, b = stack.moved[depth, 0], stack.moved[depth, 1]
            board = unplay(cells, stack.cur, stack.src[depth, i], stack.dst[depth, i], a, b, board)


@njit(cache=True, nogil=True)
def _write_path(stack, depth, path):
    """The moves from the root down to the move just played at ``depth`` into ``path``; returns how many."""
    for d in range(depth + 1):
        path[d, 0] = stack.src[d, stack.nxt[d] - 1]
        path[d, 1] = stack.dst[d, stack.nxt[d] - 1]
    return depth + 1


@njit(cache=True, nogil=True, inline="always")
def _enter_child(stack, plan, depth, s, t, a, occupied, sleeping):
    """Set up depth ``depth + 1`` for the child of card ``a``'s move ``s -> t`` (``occupied``: the parent's)."""
    if plan.narrow:
        stack.packed[depth + 1] = _packed_child(stack.packed[depth], occupied, s, t, plan.labels[a])
    if sleeping:
        _fall_asleep(stack.sleep[depth], stack.done[depth], s, t, stack.sleep[depth + 1])
        stack.done[depth + 1, :] = U0


@njit(cache=True, nogil=True, inline="always")
def _child_known(memo, stamp, plan, stack, depth, i, cells, board):
    """True when the memo holds the child just played (child ``i`` of depth ``depth``): it is unsolvable.

    An Island Merge child whose island is under way is looked up under its
    tagged key and its plain key (a state known unsolvable has every ``R``
    false, see ``_island_split``).
    """
    if plan.narrow:
        if board.n_stacks <= plan.packed_max:
            return _narrow_find(memo, stack.child_key[depth, i]) >= 0
        return _narrow_find(memo, _ranked_key(cells, plan.labels, board.occupied, cells.shape[0])) >= 0
    key = stack.key
    _copy_words(stack.cur, key)
    tag = stack.isles.tag[depth + 1]
    if plan.islands and tag != U0:
        found = _memo_find(memo, stamp, _island_key(key, tag)) >= 0
        key[key.shape[0] - 1] = U0
        if found:
            return True
    return _memo_find(memo, stamp, key) >= 0


@njit(cache=True, nogil=True)
def _store_dead(memo, count, stamp, plan, stack, depth, cells, board):
    """Store the state at ``depth``, proved unsolvable; returns ``(memo, count, status)``.

    ``status`` is ``UNSOLVABLE`` when it was stored, ``OUT_OF_MEMORY`` when the
    memo may not grow (``max_rows``), ``TABLE_FULL`` when a shared table would
    pass three quarters full.
    """
    if not plan.narrow:
        key = stack.key
        _copy_words(stack.cur, key)
        if plan.islands:
            _island_key(key, stack.isles.tag[depth])
        memo, count, fits = _memo_add(memo, stamp, key, count, plan.max_rows)
        return memo, count, UNSOLVABLE if fits else OUT_OF_MEMORY
    if board.n_stacks <= plan.packed_max:
        k = _narrow_key(stack.packed[depth], board.occupied, cells.shape[0])
    else:
        k = _ranked_key(cells, plan.labels, board.occupied, cells.shape[0])
    if plan.fill.shape[0] == 0:
        memo, count, fits = _narrow_add(memo, k, count, plan.max_rows)
        return memo, count, UNSOLVABLE if fits else OUT_OF_MEMORY
    at = _narrow_find(memo, k)
    if at < 0:
        if _narrow_full(plan.fill.sum(), memo.shape[0]):
            return memo, count, TABLE_FULL
        memo[-1 - at, 0] = k
        plan.fill[stamp] += 1
    return memo, count, UNSOLVABLE
