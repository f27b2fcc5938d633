# mypy: disable-error-code="no-untyped-def"
"""The compiled enumeration: every distinct state reachable from a root, level by level.

This is the module where speed beats beauty; ``puzzles.reference`` is the plain
Python it is tested against. Representation as in ``search.kernel``: ``cells``
is ``int8[ncells]`` (top card or -1), ``compat[card]`` and ``line[cell]`` are
``uint64`` bit masks. A state's key is exact (6 bits per cell, 10 cells per
``uint64`` word), so two positions are the same state exactly when every cell
shows the same top card: buried cards and stack heights never affect play.

Level ``d`` holds the states reachable in exactly ``d`` moves. Every move joins
two stacks, so a state's level is fixed by its stack count, and the levels form
a layered graph whose edges (one per legal move) are kept in CSR form so that
solvability can be labelled bottom-up without any search.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from search.kernel import now_s

COMPLETE, OVER_BUDGET, OUT_OF_TIME, CANCELLED = 0, 1, 2, 3
CELLS_PER_WORD = 10
CHECK_EVERY = 4096  # expanded states between clock and cancel-flag checks

U1 = np.uint64(1)
U6 = np.uint64(6)


def key_words(ncells: int) -> int:
    """``uint64`` words in the exact key of a state of ``ncells`` cells."""
    return (ncells + CELLS_PER_WORD - 1) // CELLS_PER_WORD


@njit(cache=True, nogil=True)
def _pack(cells, key):
    key[:] = 0
    for i in range(cells.shape[0]):
        word = i // CELLS_PER_WORD
        shift = np.uint64(6 * (i % CELLS_PER_WORD))
        key[word] |= np.uint64(cells[i] + 1) << shift


@njit(cache=True, nogil=True, inline="always")
def _set_cell(key, cell, value):
    word = cell // CELLS_PER_WORD
    shift = np.uint64(6 * (cell % CELLS_PER_WORD))
    key[word] = (key[word] & ~(np.uint64(63) << shift)) | (np.uint64(value) << shift)


@njit(cache=True, nogil=True)
def _hash(key):
    h = np.uint64(0x9E3779B97F4A7C15)
    for w in range(key.shape[0]):
        h ^= key[w]
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(29)
    return h


@njit(cache=True, nogil=True)
def _slot(table, key):
    # Linear probing; a slot holds a full key and its state index + 1 (0 when empty),
    # side by side so that a probe touches one cache line.
    words = key.shape[0]
    mask = np.uint64(table.shape[0] - 1)
    i = _hash(key) & mask
    while True:
        if table[i, words] == 0:
            return i
        same = True
        for w in range(words):
            if table[i, w] != key[w]:
                same = False
                break
        if same:
            return i
        i = (i + U1) & mask


@njit(cache=True, nogil=True)
def _put(table, slot, key, index):
    words = key.shape[0]
    for w in range(words):
        table[slot, w] = key[w]
    table[slot, words] = index + 1


@njit(cache=True, nogil=True)
def _rehash(size, keys, lo, hi):
    table = np.zeros((size, keys.shape[1] + 1), dtype=np.uint64)
    for j in range(lo, hi):
        _put(table, _slot(table, keys[j]), keys[j], j)
    return table


@njit(cache=True, nogil=True)
def _grow2(a, need):
    if need <= a.shape[0]:
        return a
    b = np.empty((max(need, 2 * a.shape[0]), a.shape[1]), dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


@njit(cache=True, nogil=True)
def _grow1(a, need):
    if need <= a.shape[0]:
        return a
    b = np.empty(max(need, 2 * a.shape[0]), dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


@njit(cache=True, nogil=True)
def enumerate_levels(root, compat, line, levels, max_states, keep_edges, deadline, cancel):
    """Every distinct state reachable from ``root`` in ``0 … levels-1`` moves.

    ``max_states`` caps the total states kept (0 for no cap); ``deadline`` is a
    ``now_s()`` time (0 for none); setting ``cancel[0]`` stops the walk. Returns
    ``(status, cells int8[n, ncells], level_start int64[levels+1], edge_start
    int64[n+1], edges int32[m])``; ``level_start[d+1]`` is ``-1`` for levels not
    completed. Edges (child indices, in ``legal_moves`` order) are kept only
    when ``keep_edges``; the states of each level follow the order of discovery.
    """
    ncells = root.shape[0]
    words = (ncells + CELLS_PER_WORD - 1) // CELLS_PER_WORD
    cells = np.empty((1024, ncells), dtype=np.int8)
    keys = np.empty((1024, words), dtype=np.uint64)
    edge_start = np.zeros(1025, dtype=np.int64)
    edges = np.empty(4096 if keep_edges else 0, dtype=np.int32)  # child indices: states stay below 2**31
    level_start = np.full(levels + 1, -1, dtype=np.int64)
    key = np.empty(words, dtype=np.uint64)
    cells[0] = root
    _pack(root, keys[0])
    level_start[0], level_start[1] = 0, 1
    n, m, expanded = 1, 0, 0
    for d in range(levels - 1):
        lo, hi = level_start[d], level_start[d + 1]
        table = np.zeros((1 << 10, words + 1), dtype=np.uint64)
        for i in range(lo, hi):
            expanded += 1
            if expanded % CHECK_EVERY == 0:
                if cancel[0] != 0:
                    return CANCELLED, cells[:n], level_start, edge_start[: n + 1], edges[:m]
                if deadline > 0 and now_s() > deadline:
                    return OUT_OF_TIME, cells[:n], level_start, edge_start[: n + 1], edges[:m]
            edge_start[i] = m
            for s in range(ncells):
                a = cells[i, s]
                if a < 0:
                    continue
                for t in range(ncells):
                    b = cells[i, t]
                    if b < 0 or (line[s] >> np.uint64(t)) & U1 == 0 or (compat[a] >> np.uint64(b)) & U1 == 0:
                        continue
                    # The child's key differs from the parent's in two cells only.
                    key[:] = keys[i]
                    _set_cell(key, s, 0)
                    _set_cell(key, t, a + 1)
                    slot = _slot(table, key)
                    j = np.int64(table[slot, words]) - 1
                    if j < 0:
                        if max_states > 0 and n >= max_states:
                            return OVER_BUDGET, cells[:n], level_start, edge_start[: n + 1], edges[:m]
                        cells = _grow2(cells, n + 1)
                        keys = _grow2(keys, n + 1)
                        edge_start = _grow1(edge_start, n + 2)
                        cells[n] = cells[i]
                        cells[n, t] = a
                        cells[n, s] = -1
                        keys[n] = key
                        _put(table, slot, key, n)
                        j = n
                        n += 1
                        if 2 * (n - hi) > table.shape[0]:
                            table = _rehash(2 * table.shape[0], keys, hi, n)
                    if keep_edges:
                        edges = _grow1(edges, m + 1)
                        edges[m] = j
                        m += 1
        level_start[d + 2] = n
    for i in range(level_start[levels - 1], n + 1):
        edge_start[i] = m
    return COMPLETE, cells[:n], level_start, edge_start[: n + 1], edges[:m]


@njit(cache=True, nogil=True)
def label_levels(level_start, edge_start, edges, levels):
    """Bottom-up labels of a complete enumeration with edges.

    Returns ``(solvable uint8[n], winning int64[n])``: a state of the last level
    (one stack) is solvable; any other is solvable when one of its children is,
    and ``winning`` counts its children that are.
    """
    n = edge_start.shape[0] - 1
    solvable = np.zeros(n, dtype=np.uint8)
    winning = np.zeros(n, dtype=np.int64)
    for i in range(level_start[levels - 1], n):
        solvable[i] = 1
    for i in range(level_start[levels - 1] - 1, -1, -1):
        w = 0
        for e in range(edge_start[i], edge_start[i + 1]):
            w += solvable[edges[e]]
        winning[i] = w
        solvable[i] = 1 if w > 0 else 0
    return solvable, winning
