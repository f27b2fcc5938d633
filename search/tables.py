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

Tables are built once per process (per grid) and shared: do not write to them.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from search import kernel
from search.kernel import is_connected, now_s

__all__ = ["cell_cut_table", "compat_table", "is_connected", "line_table", "now_s"]


@cache
def compat_table() -> np.ndarray:
    """``uint64[52]``: bit ``b`` of entry ``a`` is set when cards ``a`` and ``b`` may join."""
    return kernel.compat_table()


@cache
def line_table(rows: int, cols: int) -> np.ndarray:
    """``uint64[rows*cols]``: bit ``t`` of entry ``s`` is set when cells ``s`` and ``t`` share a row or column."""
    return kernel.line_table(rows, cols)


@cache
def cell_cut_table(rows: int, cols: int) -> np.ndarray:
    """``uint16[2**(rows*cols)]``: the occupied cells' cut vertices, or ``uint16[0]`` past 16 cells (ms, once)."""
    if rows * cols > kernel.NARROW_CELLS:
        return np.zeros(0, dtype=np.uint16)
    table: np.ndarray = kernel.cell_cut_table(line_table(rows, cols))
    return table
