"""The compiled search kernel: bitset states, exact memo, every algorithm.

This is the one package where speed beats beauty. Everything here is numba
``nopython`` code (``cache=True`` so a process compiles it once per machine,
``nogil=True`` so solves may run in threads side by side). Its modules, each
importing only the ones above it in this list:

- ``status``: the statuses a search ends with, the clock (``now_s``) and the budget test (``spent``).
- ``bundles``: what travels together, as typed named tuples (``Tables``, ``Config``,
  ``Budget``, ``Share``, ``Board``, ``Scratch``).
- ``keys`` and ``memo``: exact memo keys and the tables that store them.
- ``prune``: the option bits and each pruning rule, with its proof.
- ``order``: the children's scores and their sort.
- ``generate``: move generation, ``play`` and ``unplay``.
- ``islands``: Island Merge.
- ``open_blocks``: open blocks (``PRUNE_OPEN``), searched on a search's root once it is ``OPEN_AFTER`` nodes deep.
- ``gather``: gathering (``PRUNE_GATHER``), the sets of cards that can be played into one stack, built on a
  search's root at ``OPEN_AFTER`` and ``GATHER_AGAIN`` nodes, and on wide grids at nodes near the root whose
  subtree grows big (``GATHER_NODES``): no set of all the cards, no win.
- ``dfs`` and ``best_n``: the two searches.
- ``progress``: the progress search, a small DFS made of the parts above whose figures are model inputs
  (``boaf.search.progress`` is its public face).
- ``batch``: the entry points Python calls (``SEARCHES``, ``BATCHES``): DFS has one compiled entry,
  ``search_states``, for one state and for a batch, with ``dfs`` inlined into it.

The bitset graph (connectivity, cut vertices, flows, degrees) and the tables
(``compat_table``, ``line_table``, ``cell_cut_table``) are ``boaf.game.graph``'s, shared
with the feature kernel and the progress search.

Representation (any grid with ``rows * cols <= 52``):

- ``cells``: ``int8[ncells]``, the top card of each cell or -1 when empty.
- ``present``: ``uint64`` mask of the cards on the board (bit ``card``).
- ``compat[card]``: ``uint64`` mask of the cards compatible with ``card``.
- ``line[cell]``: ``uint64`` mask of the other cells in its row or column.
- The memo key of a state is exact, never a hash (``keys``, ``memo``).

Memo keys are not canonical under the grid's symmetries, and children are
looked up in the memo one at a time: canonical keys cost more to build than
the nodes they save, and a batched lookup visits children that a solved deal
never reaches (``docs/history/solver-v2.md``).

Statuses: ``SOLVABLE``, ``UNSOLVABLE``, ``UNKNOWN`` (a node or time budget ran
out, or the cancel flag was raised). Nodes count *expanded* states: states with
more than one stack, not already known unsolvable, whose children were generated.

This package re-exports the names the rest of boaf uses, so ``from search import
kernel`` then ``kernel.solve_one`` reads as before the split.
"""

from __future__ import annotations

from boaf.game.graph import (
    cell_cut_table,
    compat_table,
    cut_vertices,
    degree_range,
    has_odd_bird,
    is_connected,
    line_table,
    node_connectivity,
)
from boaf.search.kernel.batch import (
    BATCHES,
    BEST_N_KERNEL,
    DFS_KERNEL,
    SEARCHES,
    best_n_batch,
    search_states,
    solve_batch,
    solve_one,
)
from boaf.search.kernel.best_n import best_n
from boaf.search.kernel.bundles import (
    NO_SHARE,
    Board,
    Budget,
    Config,
    Scratch,
    Share,
    Tables,
    board_of,
    grown_scratch,
    new_scratch,
)
from boaf.search.kernel.dfs import LEARNED_COLUMNS
from boaf.search.kernel.gather import GATHER_AGAIN, GATHER_DEEP, PRUNE_GATHER, gather_refutes
from boaf.search.kernel.keys import NARROW_CELLS, narrow_max_stacks, root_labels
from boaf.search.kernel.memo import grown_memo, narrow_grow, new_memo
from boaf.search.kernel.open_blocks import OPEN_AFTER, OPEN_MIN_BUDGET, PRUNE_OPEN, open_block_stuck
from boaf.search.kernel.prune import (
    ISLANDS,
    ORDER,
    ORDER_SQUARES,
    PRUNE_ANCHOR,
    PRUNE_BLOCKS,
    PRUNE_CELLS,
    PRUNE_FROZEN,
    PRUNE_GRAPH,
    PRUNE_LEAF,
    SLEEP,
    root_prunable,
)

# Literal ints: an int handed to a compiled call here is ``np.int64(...)``, never a bare ``0`` or a
# constant. numba types a literal argument (``n = 0`` before a loop, ``FROZEN_MAX``) as
# ``Literal[int](0)`` and compiles a copy of the callee, and of all it calls, for that literal, then
# another for ``int64``: a first start compiled ``generate`` and nine more twice.
# ``tests/service/test_kernels.py`` fails on any literal signature.
from boaf.search.kernel.status import OUT_OF_MEMORY, SOLVABLE, TABLE_FULL, UNKNOWN, UNSOLVABLE, now_s

__all__ = [
    "BATCHES",
    "BEST_N_KERNEL",
    "DFS_KERNEL",
    "GATHER_AGAIN",
    "GATHER_DEEP",
    "ISLANDS",
    "LEARNED_COLUMNS",
    "NARROW_CELLS",
    "NO_SHARE",
    "OPEN_AFTER",
    "OPEN_MIN_BUDGET",
    "ORDER",
    "ORDER_SQUARES",
    "OUT_OF_MEMORY",
    "PRUNE_ANCHOR",
    "PRUNE_BLOCKS",
    "PRUNE_CELLS",
    "PRUNE_FROZEN",
    "PRUNE_GATHER",
    "PRUNE_GRAPH",
    "PRUNE_LEAF",
    "PRUNE_OPEN",
    "SEARCHES",
    "SLEEP",
    "SOLVABLE",
    "TABLE_FULL",
    "UNKNOWN",
    "UNSOLVABLE",
    "Board",
    "Budget",
    "Config",
    "Scratch",
    "Share",
    "Tables",
    "best_n",
    "best_n_batch",
    "board_of",
    "cell_cut_table",
    "compat_table",
    "cut_vertices",
    "degree_range",
    "gather_refutes",
    "grown_memo",
    "grown_scratch",
    "has_odd_bird",
    "is_connected",
    "line_table",
    "narrow_grow",
    "narrow_max_stacks",
    "new_memo",
    "new_scratch",
    "node_connectivity",
    "now_s",
    "open_block_stuck",
    "root_labels",
    "root_prunable",
    "search_states",
    "solve_batch",
    "solve_one",
]
