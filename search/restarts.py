"""Restarts for wide grids: one search resumed with its memo, and probes of the state's images.

On grids of more than ``NARROW_CELLS`` cells a partly filled state may need
millions of nodes though it has short wins: its children are tried in a poor
order, and a depth-first search that starts down a bad branch stays there. Two
remedies, both exact and deterministic:

- **The main search resumes.** It runs in slices of growing node budgets
  (``FIRST_SLICE``, times ``SLICE_GROWTH`` each round), always with the same
  memo under the same stamp. A slice stopped by its budget has stored every
  state it proved unsolvable, and only those (the memo never holds a state
  whose search was cut short), so the next slice skips them: resuming costs
  the nodes on the way back to where the last slice stopped, not a new search.
  The gatherings at nodes go on the same way (``kernel.Share.gathered``): the
  root's subtree, and that of each node gathered on the line the last slice
  stopped on, count their nodes in every slice, and no slice repeats the last
  one's gatherings, so slices can be short and the probes' rounds frequent.
- **Probes.** After each slice of the main search, ``PROBES_A_ROUND`` images
  of the state are searched from scratch, with ``PROBE_SHARE`` of that slice's
  nodes between them. An image is the state under a permutation of the rows,
  one of the columns and, every other probe, the transpose (``Symmetry``): the
  rules ask of two cells only whether they share a row or a column, which
  each of these keeps, so the image's moves are the state's moves, cell for
  cell, and a solution of the image, its cells mapped back, is a solution of
  the state. The search breaks ties by cell order, which the images change;
  half the probes also search their children in the order they are generated
  (``PROBE_ORDERS``), which on sparse grids often finds the win the main
  order misses. A probe that decides its image decides the state (unsolvable
  too: each search is exhaustive within its budget).

The images come from a generator seeded with ``PROBE_SEED`` and the round, so
the same state gets the same answer, nodes and moves every time. The probes
cost at most ``PROBE_SHARE`` times the main search's nodes, so a state that
needs the whole main search takes at most that much longer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from boaf.game import State
from boaf.game.arrays import state_to_array
from boaf.search import kernel
from boaf.search.algorithms import Algorithm
from boaf.search.kernel.gather import NODE_GATHER_DEPTH

FIRST_SLICE = 2_048  # nodes of the main search's first slice
SLICE_GROWTH = 2  # each slice of the main search has this many times the nodes of the one before
PROBES_A_ROUND = 16  # images probed after each slice of the main search
PROBE_SHARE = 1.0  # the probes of one round, together, get this share of the round's main slice
PROBE_ORDERS = ("generated", "main")  # probe k searches in order ``PROBE_ORDERS[k // 2 % 2]``
PROBE_SEED = 44  # with the round, the seed of the images' permutations
PROBE_MEMORY_SHARE = 4  # a probe's memo may take 1/this of the memory budget; the main search the rest


@dataclass(frozen=True)
class Symmetry:
    """A map of a ``rows`` x ``cols`` grid's cells onto a grid of as many cells that keeps "in one row or column".

    ``cells[i]`` is the image of cell ``i`` on the ``image_rows`` x ``image_cols`` grid.
    """

    image_rows: int
    image_cols: int
    cells: np.ndarray  # int64[rows * cols]

    def image(self, state: State) -> State:
        """``state`` moved onto the image grid (cards and heights unchanged)."""
        n = state.rows * state.cols
        cards: list[int | None] = [None] * n
        sizes = [0] * n
        for i, (card, size) in enumerate(zip(state.cells, state.sizes, strict=True)):
            cards[int(self.cells[i])] = card
            sizes[int(self.cells[i])] = size
        return State(self.image_rows, self.image_cols, tuple(cards), tuple(sizes))

    def image_cells(self, cells: np.ndarray) -> np.ndarray:
        """A state's cells (``state_to_array``'s ``int8`` cards, -1 for an empty cell) moved onto the image grid:
        ``image_cells(state_to_array(state))`` is ``state_to_array(image(state))``, without making a ``State``."""
        moved = np.empty_like(cells)
        moved[self.cells] = cells
        return moved

    def path_back(self, path: np.ndarray) -> np.ndarray:
        """A path of ``(source, target)`` cells on the image, as cells of the original grid."""
        inverse = np.empty_like(self.cells)
        inverse[self.cells] = np.arange(self.cells.shape[0])
        return inverse[path.astype(np.int64)].astype(np.int8)


def shuffled(rows: int, cols: int, rng: np.random.Generator, *, transpose: bool) -> Symmetry:
    """A random permutation of the rows and one of the columns, then the transpose if asked.

    Cells ``(r, c)`` and ``(r', c')`` share a row exactly when ``r = r'``, which
    a permutation of the rows keeps, and a column exactly when ``c = c'``,
    which a permutation of the columns keeps; the transpose swaps the two
    relations. So the map keeps "in one row or column", all the rules ask of
    the grid, and maps the moves of a state one for one onto its image's.
    """
    row_to, col_to = rng.permutation(rows), rng.permutation(cols)
    image_rows, image_cols = (cols, rows) if transpose else (rows, cols)
    rr, cc = np.repeat(row_to, cols), np.tile(col_to, rows)  # cell r * cols + c goes to row rr, column cc
    cells = (cc * image_cols + rr if transpose else rr * image_cols + cc).astype(np.int64)
    return Symmetry(image_rows, image_cols, cells)


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


STAMP = 1  # every slice of the main search stores under this stamp, so each finds what the ones before stored


class _Search:
    """One search of ``state`` that can be run again with a larger node budget, keeping its memo."""

    def __init__(
        self,
        root: np.ndarray,
        config: kernel.Config,
        tables: kernel.Tables,
        max_bytes: int,
        memo: np.ndarray | None = None,
        path: np.ndarray | None = None,
    ) -> None:
        self.root = root  # int8[cells]: the state's cards, -1 for an empty cell
        self.config, self.tables, self.max_bytes = config, tables, max_bytes
        self.memo = kernel.new_memo(root.shape[0], max_bytes=max_bytes) if memo is None else memo
        self.path = np.zeros((root.shape[0], 2), dtype=np.int8) if path is None else path
        # ``fill[STAMP]``: the entries stored so far, which the kernel counts on from call to call, growing the memo
        # when they pass half its rows as one search would (``kernel.dfs.dfs``: a wide memo's ``share.fill``);
        # ``gathered``: where the gatherings at nodes stand, so that they go on as one search's would.
        fill, gathered = np.zeros(STAMP + 1, dtype=np.int64), np.zeros((NODE_GATHER_DEPTH + 1, 4), dtype=np.int64)
        self.share = kernel.Share(np.empty(0, dtype=np.int64), fill, gathered)

    def run(self, max_nodes: int, deadline: float, cancel: np.ndarray) -> tuple[int, int, int]:
        """``(status, nodes, path length)`` of the search with at most ``max_nodes`` nodes (0: no cap)."""
        budget = kernel.Budget(int(max_nodes), float(deadline), cancel, int(self.max_bytes))
        status, nodes, length, self.memo = kernel.SEARCHES[kernel.DFS_KERNEL](
            self.root, self.tables, self.config, budget, memo=self.memo, stamp=STAMP, path=self.path, share=self.share
        )
        return int(status), int(nodes), int(length)


Probe = tuple[Symmetry, np.ndarray, kernel.Config]  # an image, its cells (``Symmetry.image_cells``), its config


def solve_restarting(
    state: State,
    config: kernel.Config,
    *,
    root: np.ndarray,
    memo: np.ndarray,
    path: np.ndarray,
    tables_of: Callable[[int, int], kernel.Tables],
    max_nodes: int,
    deadline: float,
    cancel: np.ndarray,
    max_bytes: int,
) -> Outcome:
    """Decide ``state`` by the main search in slices and the probes of its images.

    ``root``, ``memo`` and ``path`` are the main search's (``state_to_array``,
    ``kernel.new_memo``, ``int8[cells, 2]``); ``tables_of(rows, cols)`` gives a
    grid's kernel tables; ``max_nodes`` (0: none) caps the nodes of all searches
    together, ``deadline`` (``time.perf_counter`` seconds, the kernel's clock; 0:
    none) and ``cancel`` stop them all, and ``max_bytes`` (0: none) caps the main
    memo plus one probe's (a probe out of memory ends only that probe).
    """
    probe_bytes = max_bytes // PROBE_MEMORY_SHARE
    main = _Search(root, config, tables_of(state.rows, state.cols), max_bytes - probe_bytes, memo, path)
    spent, slice_nodes, round_ = 0, FIRST_SLICE, 0
    while True:
        cap = slice_nodes if not max_nodes else min(slice_nodes, max_nodes - spent)
        status, nodes, length = main.run(cap, deadline, cancel)
        spent += nodes
        if status != kernel.UNKNOWN or _stopped(spent, max_nodes, deadline, cancel):
            return Outcome(status, spent, main.path[:length].copy())
        probe_nodes = max(1, int(PROBE_SHARE * slice_nodes) // PROBES_A_ROUND)
        for symmetry, image, probe_config in probes(state, config, round_, root):
            cap = probe_nodes if not max_nodes else min(probe_nodes, max_nodes - spent)
            probe = _Search(image, probe_config, tables_of(symmetry.image_rows, symmetry.image_cols), probe_bytes)
            status, nodes, length = probe.run(cap, deadline, cancel)
            spent += nodes
            if status in (kernel.SOLVABLE, kernel.UNSOLVABLE):
                return Outcome(status, spent, symmetry.path_back(probe.path[:length]))
            if _stopped(spent, max_nodes, deadline, cancel):
                return Outcome(kernel.UNKNOWN, spent, main.path[:0].copy())
        slice_nodes *= SLICE_GROWTH
        round_ += 1


def probes(state: State, config: kernel.Config, round_: int, root: np.ndarray | None = None) -> Iterator[Probe]:
    """The probes of round ``round_``: ``PROBES_A_ROUND`` images of ``state`` (``root``: its cells, if at hand),
    each with its order's config, made one at a time as they are searched (a round that ends early makes no more)."""
    cells = state_to_array(state) if root is None else root
    rng = np.random.default_rng([PROBE_SEED, round_])
    generated = config._replace(options=config.options & ~(kernel.ORDER | kernel.ORDER_SQUARES), coefs=None)
    for k in range(PROBES_A_ROUND):
        symmetry = shuffled(state.rows, state.cols, rng, transpose=k % 2 == 1)
        order = PROBE_ORDERS[k // 2 % len(PROBE_ORDERS)]
        yield symmetry, symmetry.image_cells(cells), generated if order == "generated" else config


def _stopped(spent: int, max_nodes: int, deadline: float, cancel: np.ndarray) -> bool:
    """True when the node budget of all searches is spent, the cancel flag raised or the deadline passed."""
    return (0 < max_nodes <= spent) or bool(cancel[0]) or (deadline > 0 and time.perf_counter() >= deadline)
