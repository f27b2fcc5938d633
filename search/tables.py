"""The compiled search's lookup tables and clock, public so that other compiled code shares them.

- ``compat_table()[card]``: ``uint64`` mask of the cards compatible with ``card``.
- ``line_table(rows, cols)[cell]``: ``uint64`` mask of the other cells in its
  row or column.
- ``cell_cut_table(rows, cols)[mask]``: on grids of at most 16 cells, the mask
  of the cells whose emptying splits the occupied cells ``mask`` (by rows and
  columns); empty on larger grids, where the kernel finds them itself.
- ``is_connected(present, compat)``: compiled; True when the compatibility graph
  on the card mask ``present`` has at most one component.
- ``now_s()``: the monotonic clock of the compiled code, in seconds:
  ``time.perf_counter``, read through numba's object mode. Deadlines handed to
  kernels are on it. Python code reads ``time.perf_counter()`` itself: called
  from Python, ``now_s`` compiles afresh in every process (numba cannot cache
  a function with object-mode code as an entry point).

- ``grid_tables(rows, cols)``: the three as the kernel's ``Tables``; ``kernel_config``
  the kernel's ``Config`` of an algorithm and an ordering model.

Tables are built once per process (per grid) and shared: do not write to them.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

import numpy as np

from boaf.game.graph import compat_table, is_connected, line_table
from boaf.search import kernel
from boaf.search.kernel import now_s

if TYPE_CHECKING:
    from boaf.search.algorithms import Algorithm
    from boaf.search.ordering import OrderingModel

__all__ = ["cell_cut_table", "compat_table", "grid_tables", "is_connected", "kernel_config", "line_table", "now_s"]


@cache
def cell_cut_table(rows: int, cols: int) -> np.ndarray:
    """``uint16[2**(rows*cols)]``: the occupied cells' cut vertices, or ``uint16[0]`` past 16 cells (ms, once)."""
    if rows * cols > kernel.NARROW_CELLS:
        return np.zeros(0, dtype=np.uint16)
    table: np.ndarray = kernel.cell_cut_table(line_table(rows, cols))
    return table


@cache
def grid_tables(rows: int, cols: int) -> kernel.Tables:
    """The kernel's ``Tables`` of a ``rows`` x ``cols`` grid (built once per process and grid: do not write to them)."""
    return kernel.Tables(int(rows), int(cols), compat_table(), line_table(rows, cols), cell_cut_table(rows, cols))


def kernel_config(algo: Algorithm, model: OrderingModel, cohort: int = 1) -> kernel.Config:
    """The kernel's ``Config`` for ``algo`` ordered by ``model`` (plain ints: one compiled copy of the search).

    Only an algorithm that orders by subset H (``ORDER`` without ``ORDER_SQUARES``)
    gets the model's coefficients; the others get ``None``, and so the copy of
    the search without subset H's flows (``boaf.search.kernel.generate._subset_h_scores``).
    Likewise only Island Merge (``ISLANDS``) gets ``islands=True``; the others get
    ``None``, and a copy of ``dfs`` without Island Merge's code (``boaf.search.kernel.islands``).
    """
    options, memo_min = int(algo.options), int(algo.memo_min)
    subset_h = options & kernel.ORDER != 0 and options & kernel.ORDER_SQUARES == 0
    coefs = model.kernel_coefs() if subset_h else None
    islands = True if options & kernel.ISLANDS != 0 else None
    return kernel.Config(
        options=options, coefs=coefs, cutoff=int(model.cutoff), memo_min=memo_min, cohort=int(cohort), islands=islands
    )
