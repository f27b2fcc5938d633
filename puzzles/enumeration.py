"""The reachable states of a root, depth by depth, and their labels, from the compiled kernel.

A depth of at least ``SPLIT_AT`` states is expanded (and labelled) by up to
``THREADS`` threads at once: the kernel releases the GIL and the groups of one
depth are independent. Smaller work runs in one call.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from typing import Any

import numpy as np

from boaf.game import State
from boaf.game.arrays import state_to_array
from boaf.game.validation import check_positive_int
from boaf.puzzles import compiled_enumeration as kernel
from boaf.puzzles.errors import AnalysisStopped, InvalidPuzzleRequest
from boaf.search import compat_table, line_table

THREADS = max(1, min(4, os.cpu_count() or 1))
SPLIT_AT = 100_000  # states in a depth before its work is shared between threads
PLACE_TYPES = (np.uint16, np.uint32)  # a move's child place fits 16 bits unless its group is huge


@dataclass(frozen=True)
class Enumeration:
    """Distinct states reachable from ``root``, grouped by depth (moves played).

    The root's k occupied cells are its slots: ``slot_cell[s]`` is the cell of
    slot s and ``cards[s]`` the card dealt there. The states live in the
    kernel's groups (``keys``, ``group_start``, ``group_size``, ``masks``,
    ``level_group_start``; see ``boaf.puzzles.compiled_enumeration``) and ``sizes[d]`` counts the
    states of depth d; ``edges`` and ``block_start`` record every move when
    ``moves`` is true (labelling needs them).
    ``complete_depths`` depths were finished; ``complete`` is true when that is
    every depth. Puzzles of more than ``kernel.MAX_STACKS`` stacks are not
    enumerated: only the root is known.
    """

    root: State
    slot_cell: np.ndarray
    cards: np.ndarray
    keys: np.ndarray
    group_start: np.ndarray
    group_size: np.ndarray
    masks: np.ndarray
    level_group_start: np.ndarray
    sizes: np.ndarray
    edges: np.ndarray
    block_start: np.ndarray
    complete: bool
    moves: bool = True

    @property
    def rows(self) -> int:
        """Grid rows."""
        return self.root.rows

    @property
    def cols(self) -> int:
        """Grid columns."""
        return self.root.cols

    @property
    def depths(self) -> int:
        """k depths, 0 … k−1, for k stacks."""
        return self.root.n_stacks

    @property
    def complete_depths(self) -> int:
        """How many depths (from 0) are fully enumerated."""
        return int((self.level_group_start[1:] >= 0).sum())

    @property
    def states(self) -> int:
        """Distinct states kept (every complete depth)."""
        return int(self.sizes[: self.complete_depths].sum())

    def level_size(self, depth: int) -> int:
        """Distinct states at ``depth`` (a complete depth)."""
        return int(self.sizes[depth])

    def level(self, depth: int) -> np.ndarray:
        """The states of ``depth`` as an ``int8`` array ``(n, rows*cols)``; the depth must be complete."""
        if not 0 <= depth < self.complete_depths:
            raise ValueError(f"depth {depth} was not enumerated (complete depths: {self.complete_depths})")
        if self.masks.shape[0] == 0:  # too many stacks to enumerate: the root alone
            return state_to_array(self.root)[None, :]
        first, last = int(self.level_group_start[depth]), int(self.level_group_start[depth + 1])
        level: np.ndarray = kernel.decode_level(
            self.index,
            self.keys,
            first,
            last,
            count=int(self.sizes[depth]),
            slot_cell=self.slot_cell,
            cards=self.cards,
            ncells=self.rows * self.cols,
        )
        return level

    def locate(self, state: State) -> int:
        """The index of ``state`` in ``keys`` (and in the labels), or -1 when it was not enumerated."""
        if self.masks.shape[0] == 0:
            return -1
        card_slot = {int(card): s for s, card in enumerate(self.cards)}
        cell_slot = {int(cell): s for s, cell in enumerate(self.slot_cell)}
        mask, key = 0, 0
        for cell, card in enumerate(state.cells):
            if card is None:
                continue
            if cell not in cell_slot or card not in card_slot:
                return -1
            mask |= 1 << cell_slot[cell]
            key |= card_slot[card] << (4 * cell_slot[cell])
        return int(kernel.find_state(self.keys, self.group_start, self.group_size, mask, key=np.uint64(key)))

    @property
    def index(self) -> kernel.Index:
        """The kernel's index of the groups, moves and depths (``masks`` cut to the groups built)."""
        return kernel.Index(
            self.group_start, self.group_size, self.block_start, self.masks, self.level_group_start, self.sizes
        )

    @property
    def store(self) -> kernel.Store:
        """The kernel's states and moves."""
        return kernel.Store(self.keys, self.keys.shape[0], self.edges, self.edges.shape[0])


@dataclass(frozen=True)
class Labels:
    """Solvability of every enumerated state, with per-depth totals.

    ``solvable[i]`` labels the state at index i of ``Enumeration.keys``
    (``Enumeration.locate``); per depth, ``level_solvable`` counts the solvable
    states and ``tension_sum`` / ``tension_count`` sum Browne's tension over
    the solvable states that have moves.
    """

    solvable: np.ndarray
    level_solvable: np.ndarray
    tension_sum: np.ndarray
    tension_count: np.ndarray


def enumerate_states(
    state: State,
    max_states: int | None = None,
    *,
    moves: bool = True,
    depth: int | None = None,
    time_limit: float | None = None,
    cancel: np.ndarray | None = None,
) -> Enumeration:
    """Enumerate every state reachable from ``state``, keeping at most ``max_states`` states.

    A depth that would pass ``max_states`` is left out whole (the enumeration is
    then not ``complete``). ``moves`` records every move, for ``label_states``;
    without them a walk takes about a third of the memory. ``depth`` stops the
    walk after that depth (the enumeration is then not ``complete`` either). ``time_limit`` is in seconds; ``cancel`` an
    ``int64[1]`` flag another thread may set. Either one stopping the walk
    raises ``AnalysisStopped``; the budget does not.
    """
    if max_states is not None:
        check_positive_int(max_states, "budget", error=InvalidPuzzleRequest, kind="number of states")
    slot_cell = np.array([i for i, card in enumerate(state.cells) if card is not None], dtype=np.int64)
    cards = np.array([state.cells[i] for i in slot_cell], dtype=np.int8)
    if len(slot_cell) > kernel.MAX_STACKS:
        return _root_only(state, slot_cell, cards)
    tables = kernel.Tables(state.n_stacks, *_slot_tables(state, slot_cell, cards))
    pause_at = SPLIT_AT if THREADS > 1 else 0
    for place in PLACE_TYPES:
        config = kernel.Config(np.empty(0, place), int(np.iinfo(place).max), moves, pause_at)
        walk = _Walk(tables, config, kernel.Budget(max_states or 0, _deadline(time_limit), _flag(cancel)))
        status = walk.run(state.n_stacks - 1 if depth is None else min(depth, state.n_stacks - 1))
        if status != kernel.TOO_WIDE:
            break
    _raise_if_stopped(status, time_limit)
    index, store = walk.index, walk.store
    return Enumeration(
        state, slot_cell, cards, store.keys[: store.used], index.group_start, index.group_size,
        index.masks[: walk.ngroups], index.level_group_start, index.level_size, store.edges[: store.moves],
        index.block_start, status == kernel.COMPLETE and walk.depth == state.n_stacks - 1, moves,
    )  # fmt: skip


class _Walk:
    """The enumeration under way: the kernel's arrays, depth by depth."""

    def __init__(self, tables: kernel.Tables, config: kernel.Config, budget: kernel.Budget) -> None:
        self.tables, self.config, self.budget = tables, config, budget
        root_key = np.uint64(sum(s << (4 * s) for s in range(tables.k)))
        self.index, self.store = kernel.start_groups(tables.k, root_key, config.edge_like)
        self.depth = 0

    @property
    def ngroups(self) -> int:
        return int(self.index.level_group_start[self.depth + 1])

    def run(self, last_depth: int) -> int:
        while self.depth < last_depth:
            status, self.depth, self.store = kernel.enumerate_groups(
                self.tables,
                self.config,
                self.budget,
                self.index,
                store=self.store,
                depth=self.depth,
                last_depth=last_depth,
            )
            if status != kernel.PAUSED:
                return int(status)
            status = self._expand_in_threads()
            if status != kernel.COMPLETE:
                return status
        return kernel.COMPLETE

    def _expand_in_threads(self) -> int:
        # One depth, its child groups split in contiguous runs of about equal work.
        d, index, max_states = self.depth, self.index, self.budget.max_states
        first, last = int(index.level_group_start[d]), int(index.level_group_start[d + 1])
        children, bounds = kernel.next_groups(self.tables, index, first, last)
        room = max_states - int(index.level_size[: d + 1].sum()) if max_states else 0
        if max_states and room <= 0:
            return kernel.OVER_BUDGET
        budget = kernel.Budget(room, self.budget.deadline, self.budget.cancel)
        runs = _runs(bounds, THREADS)

        def expand(run: tuple[int, int]) -> Any:
            lo, hi = run
            return kernel.expand_groups(
                self.tables, self.store.keys, index, children[lo:hi], bounds[lo:hi], self.config, budget
            )

        results = list(_pool().map(expand, runs))
        for status, _ in results:
            if status != kernel.COMPLETE:
                return int(status)
        added = sum(expansion.keys.shape[0] for _, expansion in results)
        if max_states and added > room:
            return kernel.OVER_BUDGET
        ngroups = last
        for (lo, hi), (_, expansion) in zip(runs, results, strict=True):
            self.store, ngroups = kernel.append_groups(self.store, index, ngroups, children[lo:hi], expansion)
        index.level_group_start[d + 2] = ngroups
        index.level_size[d + 1] = added
        self.depth = d + 1
        return kernel.COMPLETE


def label_states(
    enumeration: Enumeration, *, time_limit: float | None = None, cancel: np.ndarray | None = None
) -> Labels:
    """The solvability of every state of a complete enumeration, labelled bottom-up."""
    if not enumeration.complete or not enumeration.moves:
        raise ValueError("only a complete enumeration with its moves can be labelled")
    e = enumeration
    tables = kernel.Tables(e.depths, *_slot_tables(e.root, e.slot_cell, e.cards))
    index, store = e.index, e.store
    budget = kernel.Budget(0, _deadline(time_limit), _flag(cancel))
    if THREADS == 1 or e.states < SPLIT_AT:
        status, solvable, level_solvable, tension_sum, tension_count = kernel.label_groups(tables, index, store, budget)
        _raise_if_unlabelled(status, time_limit)
        return Labels(solvable, level_solvable, tension_sum, tension_count)
    solvable = np.zeros(e.keys.shape[0], dtype=np.uint8)
    level_solvable = np.zeros(e.depths, dtype=np.int64)
    tension_sum = np.zeros(e.depths, dtype=np.float64)
    tension_count = np.zeros(e.depths, dtype=np.int64)
    for d in range(e.depths - 1, -1, -1):
        first, last = int(e.level_group_start[d]), int(e.level_group_start[d + 1])
        work = e.group_size[e.masks[first:last]]
        runs = _runs(work, THREADS) if e.sizes[d] >= SPLIT_AT else [(0, last - first)]

        def label(run: tuple[int, int], d: int = d, first: int = first) -> Any:
            return kernel.label_level(tables, index, store, solvable, d, first + run[0], first + run[1], budget)

        results = list(_pool().map(label, runs))
        for status, good, t_sum, t_count in results:
            _raise_if_unlabelled(status, time_limit)
            level_solvable[d] += good
            tension_sum[d] += t_sum
            tension_count[d] += t_count
    return Labels(solvable, level_solvable, tension_sum, tension_count)


def _runs(work: np.ndarray, parts: int) -> list[tuple[int, int]]:
    # Contiguous index runs of about equal total work.
    cumulative = np.cumsum(work)
    total = int(cumulative[-1]) if len(cumulative) else 0
    cuts = [0] + [int(np.searchsorted(cumulative, total * i / parts)) for i in range(1, parts)] + [len(work)]
    return [(lo, hi) for lo, hi in pairwise(cuts) if hi > lo]


@cache
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(THREADS, thread_name_prefix="boaf-puzzles")


def _root_only(state: State, slot_cell: np.ndarray, cards: np.ndarray) -> Enumeration:
    empty = np.zeros(0, dtype=np.int64)
    level_group_start = np.full(state.n_stacks + 1, -1, dtype=np.int64)
    level_group_start[:2] = 0
    sizes = np.zeros(state.n_stacks, dtype=np.int64)
    sizes[0] = 1
    keys = np.zeros(0, dtype=np.uint64)
    complete = state.n_stacks == 1
    return Enumeration(
        state, slot_cell, cards, keys, empty, empty, empty, level_group_start, sizes, np.zeros(0, np.uint16),
        np.zeros((0, 0), np.int64), complete,
    )  # fmt: skip


def _slot_tables(state: State, slot_cell: np.ndarray, cards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # line[s]: slots sharing a row or column with slot s; compat[a]: cards that may join card a.
    bit = np.uint64(1) << np.arange(len(slot_cell), dtype=np.uint64)  # bit[t]: slot t's bit
    in_line = (line_table(state.rows, state.cols)[slot_cell, None] >> slot_cell.astype(np.uint64)) & np.uint64(1)
    joins = (compat_table()[cards, None] >> cards.astype(np.uint64)) & np.uint64(1)
    return (in_line * bit).sum(axis=1, dtype=np.uint64).astype(np.int64), (joins * bit).sum(axis=1, dtype=np.uint64)


def _deadline(time_limit: float | None) -> float:
    # now_s's clock is time.perf_counter; from Python it is read directly (now_s compiles, uncached, each run)
    return time.perf_counter() + time_limit if time_limit else 0.0


def _flag(cancel: np.ndarray | None) -> np.ndarray:
    return np.zeros(1, dtype=np.int64) if cancel is None else cancel


def _raise_if_unlabelled(status: int, time_limit: float | None) -> None:
    if status == kernel.INCONSISTENT:
        raise RuntimeError("the recorded moves disagree with the enumeration; the labels would be wrong")
    _raise_if_stopped(status, time_limit)


def _raise_if_stopped(status: int, time_limit: float | None) -> None:
    if status == kernel.OUT_OF_TIME:
        raise AnalysisStopped(f"time limit of {time_limit} s ran out during the analysis")
    if status == kernel.CANCELLED:
        raise AnalysisStopped("analysis cancelled")
