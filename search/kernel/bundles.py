# mypy: disable-error-code="no-untyped-def"
"""What travels together through the search, as typed named tuples (numba compiles them as structs).

- ``Tables``: the read-only tables of a grid (``boaf.game.graph``).
- ``Config``: what the algorithm asks for: option bits, ordering coefficients and cutoff, memo floor, cohort,
  Island Merge.
- ``Budget``: nodes, deadline, cancel flag and memory cap.
- ``Share``: what a search shares with other threads' searches of one table (``dfs``).
- ``Board``: the masks of the current state, returned by ``play`` and ``unplay``.
- ``Scratch``: the work arrays of one search, each with one use (``new_scratch``).

Every int field is a plain ``int`` from Python (``np.int64`` in compiled code)
and every float a ``float``: another type is another compiled copy of the search.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from boaf.game.bits import lean_njit
from boaf.game.graph import U0, GraphScratch, bit, graph_scratch


class Tables(NamedTuple):
    """The read-only tables of a ``rows`` x ``cols`` grid (``boaf.game.graph``)."""

    rows: int
    cols: int
    compat: np.ndarray  # uint64[52]: compat_table()
    line: np.ndarray  # uint64[rows*cols]: line_table(rows, cols)
    cell_cuts: np.ndarray  # uint16[2**ncells]: cell_cut_table(line) up to 16 cells, empty beyond


class Config(NamedTuple):
    """What an algorithm asks of the search."""

    options: int  # the option bits (``boaf.search.kernel.prune``)
    coefs: np.ndarray | None  # float64[4]: the ordering model's subset-H coefficients; None: no subset H (its own copy)
    cutoff: int  # children are ordered above this many stacks
    memo_min: int  # the fewest stacks a state needs to be looked up in or added to the memo
    cohort: int  # Best-n DFS: the most nodes expanded together
    islands: bool | None  # Island Merge: True; None: no Island Merge, and a copy of ``dfs`` without its code


class Budget(NamedTuple):
    """When a search must stop: ``<= 0`` means no limit."""

    max_nodes: int  # expanded nodes
    deadline: float  # seconds on the ``now_s`` clock
    cancel: np.ndarray  # int64[1]: another thread sets ``cancel[0]`` to stop the search
    max_bytes: int  # the memo's memory cap


class Share(NamedTuple):
    """What a search shares with the other searches of one one-word table (``dfs``); empty arrays for none."""

    labels: np.ndarray  # int64[52]: each card's cell at the common root (``root_labels``)
    fill: np.ndarray  # int64[searches]: each search's entries in the table
    # int64[depths, 4] for a wide search run again on its own memo (``boaf.search.restarts``), whose gatherings at
    # nodes go on from call to call (``gather.resume_gathered``): for each depth gathered, on the line the last call
    # stopped on, its node's subtree so far, the size its next gathering waits for (0: none), the move into it
    gathered: np.ndarray


NO_SHARE = Share(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), np.empty((0, 4), dtype=np.int64))
"""The ``Share`` of a search of its own: nothing shared (read-only; every caller passes this one)."""


class Board(NamedTuple):
    """The masks of a state: occupied cells, cards on the board, and how many stacks."""

    occupied: np.uint64
    present: np.uint64
    n_stacks: np.int64


@lean_njit()
def board_of(cells):
    """The ``Board`` of ``cells`` (``int8[ncells]``, -1 for an empty cell)."""
    occupied = U0
    present = U0
    n_stacks = np.int64(0)
    for i in range(cells.shape[0]):
        if cells[i] >= 0:
            occupied |= bit(i)
            present |= bit(cells[i])
            n_stacks += 1
    return Board(occupied, present, n_stacks)


@lean_njit(inline="always")
def locate(cells, where):
    """Write each card's cell into ``where`` (``int64[52]``), for the cards of ``cells``."""
    for i in range(cells.shape[0]):
        if cells[i] >= 0:
            where[cells[i]] = i


# ``pairs`` rows (``boaf.search.kernel.order._pair_flows``): one column per vertex pair
PAIR_S, PAIR_T, PAIR_FLOW, PAIR_THROUGH, PAIR_T_PREDS, PAIR_PRED = 0, 1, 2, 3, 4, 5  # PAIR_PRED + card
PAIR_COLUMNS = 128

# ``facts`` rows (``boaf.search.kernel.generate._graph_facts``): per card set of G
FACT_SET, FACT_CUTS, FACT_ONES, FACT_TWOS, FACT_HANGING = 0, 1, 2, 3, 4
# ``cell_facts`` rows (``boaf.search.kernel.generate._cell_cuts``): per set of occupied cells
CELL_SET, CELL_CUTS = 0, 1

KINDS = 4 + 13 + 2  # ``Scratch.kinds``: 4 suits, then 13 ranks between two empty masks
SORT_WORK = 4 * 52  # ``order._sort_children``'s work: the cards, each card's children, its bucket; bucket slots
BEST_SCORE = 52  # ``Scratch.scores``: the highest score of a node's children's targets (``ORDER_LATER``)
CUT_CACHE = 256  # slots of each direct-mapped cache of a new search
BIG_SEARCH = 4_000  # nodes after which a search's caches get BIG_CACHE slots
BIG_CACHE = 16384  # slots of each direct-mapped cache of a search past BIG_SEARCH nodes (a power of 2)


class Scratch(NamedTuple):
    """The work arrays of one search; each has one use."""

    graph: GraphScratch  # flows and Tarjan's search (``boaf.game.graph``)
    pairs: np.ndarray  # int64[PAIR_PRED + 52, PAIR_COLUMNS]: the parent's vertex pairs and their paths
    scores: np.ndarray  # float64[53]: each target card's ordering score; at BEST_SCORE the highest (ORDER_LATER)
    score_masks: np.ndarray  # uint64[slots]: the card set of each score-cache slot (``_child_scores``)
    score_values: np.ndarray  # float64[slots]: its score
    score_kappas: np.ndarray  # int64[slots]: its vertex connectivity
    facts: np.ndarray  # uint64[5, slots]: what ``_graph_facts`` knows of a card set
    cell_facts: np.ndarray  # uint64[2, slots]: the cut cells of a set of occupied cells
    where: np.ndarray  # int64[52]: the cell of each card on the board
    tiny: np.ndarray  # int64[64]: ``_tiny_solvable``'s or ``_block_plays_out``'s stack (cells by depth, ...)
    block: np.ndarray  # int64[12]: ``_frozen_block``'s cards (0-3) and cells (4-7), or ``_stuck_block``'s (0-5, 6-11)
    sides: np.ndarray  # uint64[8]: a cut vertex's small sides (``_lone_sides``)
    visited: np.ndarray  # uint64[2048]: the positions ``_block_plays_out`` met, with its search's stamp
    sort_work: np.ndarray  # int64[2, max(width, SORT_WORK)]: ``_sort_children``'s children and buckets
    kinds: np.ndarray  # uint64[KINDS]: the cells of each suit and rank (``generate._sort_into_kinds``)
    block_facts: np.ndarray  # uint64[slots]: whether a small block in its cells comes down (``_block_comes_down``)


@njit(cache=True, nogil=True)
def new_scratch(slots, width):
    """A ``Scratch`` whose caches have ``slots`` slots (a power of two), for nodes of at most ``width`` children."""
    return _with_caches(
        graph_scratch(),
        np.empty((PAIR_PRED + 52, PAIR_COLUMNS), dtype=np.int64),
        np.zeros(BEST_SCORE + 1, dtype=np.float64),
        np.zeros(52, dtype=np.int64),
        np.empty((2, max(width, SORT_WORK)), dtype=np.int64),
        np.zeros(KINDS, dtype=np.uint64),
        slots,
    )


@njit(cache=True, nogil=True)
def grown_scratch(scratch):
    """``scratch`` with empty caches of ``BIG_CACHE`` slots: a long search meets many card and cell sets."""
    return _with_caches(
        scratch.graph, scratch.pairs, scratch.scores, scratch.where, scratch.sort_work, scratch.kinds,
        np.int64(BIG_CACHE),
    )  # fmt: skip


@njit(cache=True, nogil=True, inline="always")
def _with_caches(graph, pairs, scores, where, sort_work, kinds, slots):
    return Scratch(
        graph,
        pairs,
        scores,
        np.zeros(slots, dtype=np.uint64),
        np.zeros(slots, dtype=np.float64),
        np.zeros(slots, dtype=np.int64),
        np.zeros((5, slots), dtype=np.uint64),
        np.zeros((2, slots), dtype=np.uint64),
        where,
        np.zeros(64, dtype=np.int64),
        np.zeros(12, dtype=np.int64),
        np.zeros(8, dtype=np.uint64),
        np.empty(2048, dtype=np.uint64),  # cleared by its first search (its stamp starts at 1)
        sort_work,
        kinds,
        np.zeros(slots, dtype=np.uint64),
    )


@lean_njit(inline="always")
def cache_slot(mask, slots):
    """The slot of a node set ``mask`` in a direct-mapped cache of ``slots`` slots (a power of two)."""
    return np.int64(((mask * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)) & np.uint64(slots - 1))
