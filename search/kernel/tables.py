# mypy: disable-error-code="no-untyped-def"
"""The read-only tables a search is handed: card compatibility, the cells in line, each cell's cut cells.

``compat[card]``: ``uint64`` mask of the cards compatible with ``card``.
``line[cell]``: ``uint64`` mask of the other cells in its row or column.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numba import njit

from search.kernel.graph import cut_vertices


@cache
def compat_table() -> np.ndarray:
    """``uint64[52]``: bit ``b`` of entry ``a`` is set when cards ``a != b`` are compatible (shared: do not modify)."""
    table = np.zeros(52, dtype=np.uint64)
    for a in range(52):
        for b in range(52):
            if a != b and (a % 4 == b % 4 or abs(a // 4 - b // 4) <= 1):
                table[a] |= np.uint64(1) << np.uint64(b)
    return table


def line_table(rows: int, cols: int) -> np.ndarray:
    """``uint64[rows*cols]``: bit ``j`` of entry ``i`` is set when cells ``i != j`` share a row or column."""
    n = rows * cols
    table = np.zeros(n, dtype=np.uint64)
    for i in range(n):
        for j in range(n):
            if i != j and (i // cols == j // cols or i % cols == j % cols):
                table[i] |= np.uint64(1) << np.uint64(j)
    return table


@njit(cache=True, nogil=True)
def cell_cut_table(line):
    """``uint16[2**ncells]`` for a grid of at most 16 cells: entry ``m`` is the mask of the cut vertices of the
    occupied cells ``m`` under "shares a row or column" (``cut_vertices``), so that the search reads them in one load.
    """
    ncells = line.shape[0]
    table = np.zeros(1 << ncells, dtype=np.uint16)
    disc = np.empty(64, dtype=np.int64)
    low = np.empty(64, dtype=np.int64)
    parent = np.empty(64, dtype=np.int64)
    stack_v = np.empty(64, dtype=np.int64)
    stack_m = np.empty(64, dtype=np.uint64)
    for m in range(1, 1 << ncells):
        cuts, _ = cut_vertices(np.uint64(m), line, disc, low, parent, stack_v, stack_m)
        table[m] = np.uint16(cuts)
    return table
