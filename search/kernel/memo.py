# mypy: disable-error-code="no-untyped-def"
"""The memo tables: states known unsolvable, stored under their exact keys (``boaf.search.kernel.keys``).

A one-word table (grids of at most 16 cells) is open addressing over those
words, 0 marking a free slot, at most three quarters full: 8 bytes a slot,
11-21 bytes a stored state. A wide table holds the key words plus the stamp of
the solve that wrote a slot, so one table serves a whole batch without
clearing. A memory budget (``max_bytes``) caps the memo.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from boaf.game.bits import lean_njit
from boaf.game.graph import U0, U1
from boaf.search.kernel.keys import NARROW_CELLS, _narrow_slot, key_words
from boaf.search.kernel.status import OUT_OF_MEMORY, now_s

NARROW_ROWS = 1 << 10  # first capacity of a one-word table (8 KiB: cleared between the states of a batch)
WIDE_ROWS = 1 << 8  # first capacity of a wide table (a tiny 6x6 search clears 10 KiB, not 40; big ones grow it)


@lean_njit()
def _narrow_find(table, key):
    """Slot of the one-word ``key`` in ``table`` (``uint64[capacity, 1]``, 0 free), or ``-1 - slot`` of a free slot."""
    mask = np.uint64(table.shape[0] - 1)
    slot = _narrow_slot(key, mask)
    while True:
        v = table[slot, 0]
        if v == key:
            return slot
        if v == U0:
            return -1 - slot
        slot = np.int64((np.uint64(slot) + U1) & mask)


@njit(cache=True, nogil=True)
def narrow_grow(table):
    """A one-word table twice the size of ``table``, holding its keys."""
    grown = np.zeros((table.shape[0] * 2, 1), dtype=np.uint64)
    for i in range(table.shape[0]):
        if table[i, 0] != U0:
            grown[-1 - _narrow_find(grown, table[i, 0]), 0] = table[i, 0]
    return grown


@lean_njit(inline="always")
def _narrow_full(count, rows):
    # a one-word table is kept at most three quarters full
    return 4 * (count + 1) > 3 * rows


@lean_njit(inline="always")
def _hash(key):
    h = np.uint64(0x9E3779B97F4A7C15)
    for w in range(key.shape[0]):
        h ^= key[w]
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(31)
    return h


@lean_njit()
def _memo_find(table, stamp, key):
    """Slot of the wide ``key``, or ``-1 - slot`` of the free slot where it would go.

    ``table`` is ``uint64[capacity, words + 1]``: the full key, then the stamp of
    the solve that wrote it (other stamps count as free, so a table is reused
    across solves without clearing).
    """
    nw = key.shape[0]
    mask = np.uint64(table.shape[0] - 1)
    slot = np.int64(_hash(key) & mask)
    while True:
        if table[slot, nw] != stamp:
            return -1 - slot
        same = True
        for w in range(nw):
            if table[slot, w] != key[w]:
                same = False
                break
        if same:
            return slot
        slot = np.int64((np.uint64(slot) + U1) & mask)


@njit(cache=True, nogil=True)
def _memo_add(table, stamp, key, count, max_rows):
    """Insert the wide ``key``; returns the table (grown when over half full), the new count, and whether it fit.

    ``max_rows`` (0 for no cap) bounds the table *and* its growth: a table of
    ``r`` rows grows to ``2r``, and for a moment both are held, so it grows only
    while ``3r <= max_rows``. When it is half full and may not grow, the key is
    not stored and ``False`` is returned (the search then stops as out of memory).
    """
    count, stored = _wide_store(table, count, stamp, key, max_rows)
    if stored == GROW:
        return _memo_grow(table, stamp), count, True
    return table, count, stored == STORED


@njit(cache=True, nogil=True)
def _memo_grow(table, stamp):
    nw = table.shape[1] - 1
    grown = np.zeros((table.shape[0] * 2, nw + 1), dtype=np.uint64)
    for i in range(table.shape[0]):
        if table[i, nw] == stamp:
            at = -1 - _memo_find(grown, stamp, table[i, :nw])
            for w in range(nw + 1):  # (a loop: a row assignment compiles numpy's broadcasting checks, ~1.8 s)
                grown[at, w] = table[i, w]
    return grown


@njit(cache=True, nogil=True)
def _fit_memo(memo, width, max_bytes):
    """``memo`` when its rows are ``width`` words wide, else a new empty table of that width (``max_bytes / 2``)."""
    if memo.shape[1] == width:
        return memo
    rows = NARROW_ROWS if width == 1 else WIDE_ROWS
    while max_bytes > 0 and rows > 2 and 2 * rows * 8 * width > max_bytes:
        rows //= 2
    return np.zeros((rows, width), dtype=np.uint64)


def new_memo(ncells: int, capacity: int = 0, max_bytes: int = 0, wide: bool = False) -> np.ndarray:
    """An empty memo table for states of ``ncells`` cells (``capacity`` a power of two, 0 for the default).

    Grids of at most ``NARROW_CELLS`` cells get one-word rows (``_narrow_key``),
    unless ``wide``; other grids, best-n and Island Merge use wide rows (the kernel
    swaps a table of the wrong width for a fresh one). With ``max_bytes > 0``
    the capacity is halved until the table takes at most half of it.
    """
    width = 1 if ncells <= NARROW_CELLS and not wide else key_words(ncells) + 1
    rows = capacity or (NARROW_ROWS if width == 1 else WIDE_ROWS)
    while max_bytes > 0 and rows > 2 and 2 * rows * 8 * width > max_bytes:
        rows //= 2
    return np.zeros((rows, width), dtype=np.uint64)


STORED, GROW = -1, -2  # besides OUT_OF_MEMORY and TABLE_FULL, what ``_narrow_store`` and ``_wide_store`` return


@lean_njit()
def _narrow_store(table, count, key, max_rows):
    """Insert the one-word ``key`` into a table kept at most three quarters full; returns ``(count, STORED)``, or
    ``GROW`` when the table must grow first (``narrow_grow``, then store again), or ``OUT_OF_MEMORY`` when it may
    not: ``max_rows`` (0 for no cap) bounds the table and its growth as in ``_memo_add``."""
    at = _narrow_find(table, key)
    if at >= 0:
        return count, STORED
    if _narrow_full(count, table.shape[0]):
        if max_rows > 0 and 3 * table.shape[0] > max_rows:
            return count, OUT_OF_MEMORY
        return count, GROW
    table[-1 - at, 0] = key
    return count + 1, STORED


@lean_njit()
def _wide_store(table, count, stamp, key, max_rows):
    """Insert the wide ``key`` without growing: returns ``(count, STORED)``, or ``GROW`` when the key is stored
    and the table, now over half full, must grow (``_memo_grow``), or ``OUT_OF_MEMORY`` when the key does not fit
    (see ``_memo_add``)."""
    at = _memo_find(table, stamp, key)
    if at >= 0:
        return count, STORED
    if 2 * (count + 1) > table.shape[0] and max_rows > 0 and 3 * table.shape[0] > max_rows:
        return count, OUT_OF_MEMORY
    at = -1 - at
    nw = key.shape[0]
    for w in range(nw):
        table[at, w] = key[w]
    table[at, nw] = stamp
    count += 1
    return count, GROW if 2 * count > table.shape[0] else STORED


@njit(cache=True, nogil=True)
def grown_memo(table, stamp):
    """``table`` twice the size: a one-word table (``narrow_grow``) or a wide one (``_memo_grow``)."""
    if table.shape[1] == 1:
        return narrow_grow(table)
    return _memo_grow(table, stamp)


GROWTH_MARGIN = 2.0  # a growth is let start only if twice its estimated time is left before the deadline
GROWTH_S_PER_ROW = 1e-7  # a growth's seconds per row of the new table until one is timed (measured: 25-70 ns)


@njit(cache=True, nogil=True)
def grown_in_time(table, stamp, deadline, seconds_per_row):
    """``(grown_memo(table, stamp), seconds per row it took)``, or ``(table, -1.0)`` when a search whose
    ``deadline`` (``now_s`` seconds; 0 for none) is that close has no time for it.

    A growth allocates and clears a table of twice ``table``'s rows and moves its
    entries (at most three quarters of its rows) there, so its time is
    proportional to the rows it writes; the growth before it, timed, gives
    ``seconds_per_row`` (0 when none was: then ``GROWTH_S_PER_ROW``, since a
    search resumed on its memo may meet a large table at its first growth). The
    estimate for this one is that rate times its rows, times ``GROWTH_MARGIN``. A
    search refused a growth goes on without storing (``dfs``) or stops as UNKNOWN
    (``best_n``) before its deadline; one that grew regardless would pass it by
    the whole growth (a wide 4x13 table of 2^21 rows: 50-150 ms), since the clock
    is read between nodes, never during a growth.
    """
    rows = 2 * table.shape[0]
    rate = seconds_per_row if seconds_per_row > 0 else GROWTH_S_PER_ROW
    if deadline > 0 and now_s() + GROWTH_MARGIN * rate * rows >= deadline:
        return table, -1.0
    start = now_s()
    grown = grown_memo(table, stamp)
    return grown, (now_s() - start) / rows
