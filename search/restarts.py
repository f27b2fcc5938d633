"""Restarts for wide grids: one search resumed with its memo, and probes of the grid's symmetric images.

On grids of more than ``NARROW_CELLS`` cells a partly filled state may need
millions of nodes though it has short wins: the children are tried in a poor
order, and a depth-first search that starts down a bad branch stays there. Two
remedies, both exact and deterministic:

- **The main search resumes.** It runs in slices of growing node budgets
  (``FIRST_SLICE``, times ``SLICE_GROWTH`` each round), always with the same
  memo under the same stamp. A slice stopped by its budget has stored every
  state it proved unsolvable, and only those (the memo never holds a state
  whose search was cut short), so the next slice skips them: resuming costs
  the nodes on the way back to where the last slice stopped, not a new search.
- **Probes.** After each slice of the main search, each image of the state
  under a symmetry of the grid (``symmetries``: reflections of the rows and
  columns, and the transpose, which turns a 4x13 grid into 13x4) is searched
  from scratch with ``PROBE_SHARE`` of that slice's budget. The rules
  (same suit or adjacent or equal rank, same row or column) are the same in
  the image, so the image is won exactly when the state is, and its
  solution, its cells mapped back, is a solution of the state. The search
  orders children by scores with ties broken by cell and card order, which
  the images change: a state whose main order starts badly is often won in a
  few hundred nodes by one of them. A probe that decides its image decides the
  state (unsolvable too: every search is exhaustive within its budget).

The probes cost at most ``PROBE_SHARE`` times the main search's nodes, so an
unsolvable state that needs the whole search takes at most that much longer.
Nothing is random: the same state gets the same answer, nodes and moves.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from itertools import product

import numpy as np

from boaf.game import State
from boaf.search import kernel
from boaf.search.algorithms import Algorithm

FIRST_SLICE = 2_048  # nodes of the main search's first slice
SLICE_GROWTH = 4  # each slice of the main search has this many times the nodes of the one before
PROBE_SHARE = 1.0  # the probes of one round, together, get this share of the round's main slice
PROBE_MEMORY_SHARE = 4  # a probe's memo may take 1/this of the memory budget; the main search the rest


@dataclass(frozen=True)
class Symmetry:
    """A map of a ``rows`` x ``cols`` grid onto itself or its transpose: ``cells[i]`` is the image of cell ``i``."""

    rows: int  # the image's grid
    cols: int
    cells: np.ndarray  # int64[ncells]

    def image(self, state: State) -> State:
        """``state`` moved onto the image grid (cards and heights unchanged)."""
        n = state.rows * state.cols
        cards: list[int | None] = [None] * n
        sizes = [0] * n
        for i, (card, size) in enumerate(zip(state.cells, state.sizes, strict=True)):
            cards[int(self.cells[i])] = card
            sizes[int(self.cells[i])] = size
        return State(self.rows, self.cols, tuple(cards), tuple(sizes))

    def path_back(self, path: np.ndarray) -> np.ndarray:
        """A path of ``(source, target)`` cells on the image, as cells of the original grid."""
        inverse = np.empty_like(self.cells)
        inverse[self.cells] = np.arange(self.cells.shape[0])
        return inverse[path.astype(np.int64)].astype(np.int8)


def symmetries(rows: int, cols: int) -> list[Symmetry]:
    """The grid's symmetries other than the identity: row and column reflections, each with and without the
    transpose (a square grid's transpose is itself, another grid's is its ``cols`` x ``rows`` grid).

    Each keeps the relation "same row or same column" between cells, which is all
    the rules ask of the grid, so it maps the moves of a state onto the moves of
    its image one for one. Reflections that give the same map (a one-row grid's
    row reflection) are kept once.
    """
    found: list[Symmetry] = []
    seen = {(rows, cols, *range(rows * cols))}  # the identity
    for transpose, flip_rows, flip_cols in product((False, True), repeat=3):
        image_rows, image_cols = (cols, rows) if transpose else (rows, cols)
        cells = np.empty(rows * cols, dtype=np.int64)
        for r, c in product(range(rows), range(cols)):
            rr = rows - 1 - r if flip_rows else r
            cc = cols - 1 - c if flip_cols else c
            cells[r * cols + c] = cc * image_cols + rr if transpose else rr * image_cols + cc
        key = (image_rows, image_cols, *cells.tolist())
        if key not in seen:
            seen.add(key)
            found.append(Symmetry(image_rows, image_cols, cells))
    return found


def restarts_help(state: State, algo: Algorithm) -> bool:
    """True for the states ``solve`` decides by ``solve_restarting``: an ordered search (``ORDER``; the plain
    searches keep the reference's nodes and order) of a grid wider than one-word memo keys, with moves to make."""
    return (
        algo.kernel == kernel.DFS_KERNEL
        and algo.options & (kernel.ORDER | kernel.ISLANDS) == kernel.ORDER
        and state.rows * state.cols > kernel.NARROW_CELLS
        and state.n_stacks > 1
    )


@dataclass(frozen=True)
class Outcome:
    """What ``solve_restarting`` found: a kernel status, nodes in all, and the path on the original grid."""

    status: int
    nodes: int
    path: np.ndarray  # int8[length, 2]


class _Search:
    """One search of ``state`` that can be run again with a larger node budget, keeping its memo."""

    def __init__(self, state: State, config: kernel.Config, tables: kernel.Tables, max_bytes: int) -> None:
        self.root = np.array([-1 if c is None else c for c in state.cells], dtype=np.int8)
        self.config, self.tables, self.max_bytes = config, tables, max_bytes
        self.memo = kernel.new_memo(self.root.shape[0], max_bytes=max_bytes)
        self.path = np.zeros((self.root.shape[0], 2), dtype=np.int8)

    def run(self, max_nodes: int, deadline: float, cancel: np.ndarray) -> tuple[int, int, int]:
        """``(status, nodes, path length)`` of the search with at most ``max_nodes`` nodes (0: no cap)."""
        self._make_room()
        budget = kernel.Budget(int(max_nodes), float(deadline), cancel, int(self.max_bytes))
        status, nodes, length, self.memo = kernel.SEARCHES[kernel.DFS_KERNEL](
            self.root, self.tables, self.config, budget, memo=self.memo, stamp=STAMP, path=self.path, share=_NO_SHARE
        )
        return int(status), int(nodes), int(length)

    def _make_room(self) -> None:
        """Keep the entries stored so far to a quarter of the memo's rows before the search goes on.

        The kernel counts the entries of one call only: it grows a wide memo once
        that call's entries pass half its rows. With at most a quarter already
        there, the memo is then at most three quarters full, and after each
        growth the old entries are at most a quarter of the new rows, so open
        addressing always finds a free slot. A memo that may not grow (the
        memory budget) is replaced by an empty one: it only forgets.
        """
        entries = int(np.count_nonzero(self.memo[:, -1] == STAMP))
        while 4 * entries > self.memo.shape[0]:
            if self.max_bytes and 2 * self.memo.nbytes > self.max_bytes:
                self.memo = kernel.new_memo(self.root.shape[0], max_bytes=self.max_bytes)
                return
            self.memo = kernel.grown_memo(self.memo, STAMP)


STAMP = 1  # every slice of the main search stores under this stamp, so each finds what the ones before stored
_NO_SHARE = kernel.Share(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))


def solve_restarting(
    state: State,
    config: kernel.Config,
    *,
    tables_of: Callable[[int, int], kernel.Tables],
    max_nodes: int,
    deadline: float,
    cancel: np.ndarray,
    max_bytes: int,
) -> Outcome:
    """Decide ``state`` by the main search in slices and the probes of its images.

    ``tables_of(rows, cols)`` gives a grid's kernel tables; ``max_nodes`` (0: none)
    caps the nodes of all searches together, ``deadline`` (``time.perf_counter``
    seconds, the kernel's clock; 0: none) and ``cancel`` stop them all, and
    ``max_bytes`` (0: none) caps the main memo plus one probe's (a probe out of
    memory ends only that probe).
    """
    probe_bytes = max_bytes // PROBE_MEMORY_SHARE
    main = _Search(state, config, tables_of(state.rows, state.cols), max_bytes - probe_bytes)
    images: list[tuple[Symmetry, State]] = []  # made once the first slice has not decided the state
    spent, slice_nodes = 0, FIRST_SLICE
    while True:
        cap = slice_nodes if not max_nodes else min(slice_nodes, max_nodes - spent)
        status, nodes, length = main.run(cap, deadline, cancel)
        spent += nodes
        if status != kernel.UNKNOWN or _stopped(spent, max_nodes, deadline, cancel):
            return Outcome(status, spent, main.path[:length].copy())
        images = images or [(s, s.image(state)) for s in symmetries(state.rows, state.cols)]
        probe_nodes = max(1, int(PROBE_SHARE * slice_nodes) // max(1, len(images)))
        for symmetry, image in images:
            cap = probe_nodes if not max_nodes else min(probe_nodes, max_nodes - spent)
            probe = _Search(image, config, tables_of(image.rows, image.cols), probe_bytes)
            status, nodes, length = probe.run(cap, deadline, cancel)
            spent += nodes
            if status in (kernel.SOLVABLE, kernel.UNSOLVABLE):
                return Outcome(status, spent, symmetry.path_back(probe.path[:length]))
            if _stopped(spent, max_nodes, deadline, cancel):
                return Outcome(kernel.UNKNOWN, spent, main.path[:0].copy())
        slice_nodes *= SLICE_GROWTH


def _stopped(spent: int, max_nodes: int, deadline: float, cancel: np.ndarray) -> bool:
    """True when the node budget of all searches is spent, the cancel flag raised or the deadline passed."""
    return (0 < max_nodes <= spent) or bool(cancel[0]) or (deadline > 0 and time.perf_counter() >= deadline)
