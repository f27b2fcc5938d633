# mypy: disable-error-code="no-untyped-def"
"""Island Merge (``ISLANDS``): at a bridge of G, collapse one side first.

``ISLANDS`` (Island Merge, the ``island-merge`` algorithm, on Compatible DFS;
``benchmarks/solver.py --by-stacks``): exact (``_island_split``), but 951.6 mean
nodes on 10,000 random states against Compatible's 718.5: a state met inside a
collapse and outside one is stored under two keys. On the hard deals it rarely
splits (``benchmarks/solver.py`` prints their nodes beside Compatible's).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from boaf.game.bits import lean_njit, lowest_bit, popcount
from boaf.game.graph import U0, U1, U6, U63, bit, cut_vertices, reach


class Islands(NamedTuple):
    """The island each depth of an Island Merge search works on (``_island_split``)."""

    tag: np.ndarray  # uint64[depths]: the island under way at depth d (0: none)
    split: np.ndarray  # int64[depths, 3]: its mode, a, b
    side: np.ndarray  # uint64[depths]: the side of a


@njit(cache=True, nogil=True)
def new_islands(on, depths):
    """An ``Islands`` for a search ``depths`` deep, no island under way; ``None`` when ``on`` is ``None``.

    ``on`` is ``Config.islands``. numba prunes a branch on ``arg is None`` for a
    direct argument before typing, so with ``None`` the search's ``Stack`` holds
    ``None``, and every function below that takes it compiles to its first line:
    the served copy of ``dfs`` holds none of Island Merge's code.
    """
    if on is None:
        return None
    return Islands(
        np.zeros(depths, dtype=np.uint64), np.zeros((depths, 3), dtype=np.int64), np.zeros(depths, dtype=np.uint64)
    )


@lean_njit(inline="always")
def _island_tag(a, b):
    # the memo word of "collapse the side of a (bridge a-b) first"; 0 is "no island under way"
    return np.uint64(a + 1) | (np.uint64(b + 1) << U6)


@lean_njit(inline="always")
def _island_key(key, tag):
    """``key`` (a wide key with a last word for the island) with ``tag`` as that word; returns it."""
    key[key.shape[0] - 1] = tag
    return key


@lean_njit()
def _island_split(present, compat, tag, scratch):
    """The island a node of Island Merge works on: ``(mode, a, b, side)``.

    With ``tag`` non-zero (mode 1) the node is collapsing the side ``side`` of
    the bridge ``a``-``b`` that holds ``a``: only moves between two cards of
    ``side`` are searched. With ``tag`` 0, mode 2 names a bridge ``a``-``b`` of
    G whose two sides (``side`` holding ``a``, the rest holding ``b``) both have
    two cards or more, the most even such bridge; mode 0 means there is none.
    Single-card sides are left alone: that is Araki's merging of a single-stack
    exterior island into its neighbour (it needs no collapse of its own).

    Proof that Island Merge is exact. Write ``R(S, a-b)`` for "``S`` has a
    solution that starts with moves inside the side ``A`` of ``a`` (the
    component of ``a`` in G minus ``b``) and brings ``A`` down to ``a`` alone",
    and ``R(S, 0)`` for "``S`` is solvable". The memo stores ``(S, tag)``
    only when ``R`` is false, and the search computes ``R`` by these rules:

    (1) Bridge split. Let ``a``-``b`` be a bridge of a connected G with sides
    ``A`` and ``B``, both of two cards or more. In a solution, take the first
    move joining a card of ``A`` and one of ``B``; the bridge is their only
    edge, so it is ``a`` onto ``b`` or ``b`` onto ``a``, and there is such a
    move (the last card of one side to go is covered from the other). If ``a``
    covers ``b``, the cards of ``B`` other than ``b`` would be left with no
    edge to the rest, a disconnected G, so ``B`` was already down to ``b``;
    likewise ``A`` down to ``a`` when ``b`` covers ``a``. Before that move
    every move is inside ``A`` or inside ``B``. A move inside ``A`` changes only
    cells topped by cards of ``A``, and a move is legal when its two top cards
    are compatible and their cells in line, so moves inside ``A`` and inside
    ``B`` commute: putting the moves inside the side that is brought down
    first at the front (in their order) gives a solution too. Hence
    ``R(S, 0) = R(S, a-b) or R(S, b-a)``.

    (2) Collapse step. With ``|A| >= 2`` a solution counted by ``R(S, a-b)``
    starts with a move inside ``A``, say covering ``y``; the rest is a solution
    of the child counted by ``R(child, a-b)``, with side ``A - y`` (``A - y`` is
    connected, or G is disconnected and the child is pruned), and once
    ``A - y`` is ``a`` alone the condition is empty: the child's tag is 0. The
    converse is concatenation. So ``R(S, a-b)`` is the "or" over the moves
    inside ``A`` of the children's ``R``.

    By (1) and (2), a node of mode 2 searches every move inside ``A`` (children
    tagged ``a-b``) and every move inside ``B`` (tagged ``b-a``); the bridge
    move itself disconnects G and is pruned. A node of mode 0 is a Compatible
    DFS node. Pruned children have ``R`` false (``R(S, t)`` implies ``S``
    solvable). By induction over the search, every ``(S, tag)`` finished
    without a solution has ``R`` false, so the memo is exact and the answer at
    the root (tag 0) is the solvability of the root. A state known unsolvable
    (tag 0 in the memo) also has every ``R`` false, so a tagged child is
    looked up under both keys.
    """
    if tag != U0:
        a = np.int64(tag & U63) - 1
        b = np.int64((tag >> U6) & U63) - 1
        return 1, a, b, reach(bit(a), present & ~bit(b), compat)
    cuts, connected = cut_vertices(present, compat, scratch)
    best = 1
    mode, sa, sb, side = 0, 0, 0, U0
    n = popcount(present)
    us = cuts
    while us != U0 and connected:
        u = lowest_bit(us)
        us &= us - U1
        vs = compat[u] & cuts & present
        while vs != U0:
            v = lowest_bit(vs)
            vs &= vs - U1
            if v < u:
                continue
            comp = reach(bit(u), present & ~bit(v), compat)
            if compat[v] & comp != bit(u):
                continue  # another edge joins the two sides: u-v is no bridge
            k = popcount(comp)
            small = min(k, n - k)
            if small > best:
                best = small
                mode, sa, sb, side = 2, u, v, comp
    return mode, sa, sb, side


@lean_njit()
def _keep_inside(cells, side, src, dst):
    """Keep the children ``src[i] -> dst[i]`` whose two cards are both in ``side``; returns how many."""
    kept = 0
    for i in range(src.shape[0]):
        if side & bit(cells[src[i]]) != U0 and side & bit(cells[dst[i]]) != U0:
            src[kept] = src[i]
            dst[kept] = dst[i]
            kept += 1
    return kept


@lean_njit()
def _enter_island(cells, present, compat, islands, depth, src, dst, scratch):
    """Record the island of the node at ``depth`` and keep only its children that stay inside it; returns how many.

    ``src`` and ``dst`` are the node's children; ``scratch`` is a ``GraphScratch``.
    ``islands`` ``None`` (no Island Merge) keeps them all.
    """
    if islands is None:
        return src.shape[0]
    mode, a, b, side = _island_split(present, compat, islands.tag[depth], scratch)
    islands.split[depth, 0] = mode
    islands.split[depth, 1] = a
    islands.split[depth, 2] = b
    islands.side[depth] = side
    if mode == 1:
        return _keep_inside(cells, side, src, dst)
    return src.shape[0]


@lean_njit()
def _tag_at(islands, depth):
    """The island under way at ``depth`` (0: none, and always with ``islands`` ``None``)."""
    if islands is None:
        return U0
    return islands.tag[depth]


@lean_njit()
def _tag_child(islands, depth, present, y):
    """Record at ``depth + 1`` the island of the child of the node at ``depth`` whose move covers card ``y``."""
    if islands is None:
        return
    islands.tag[depth + 1] = _child_tag(islands, depth, present, y)


@lean_njit(inline="always")
def _child_tag(islands, depth, present, y):
    """The tag of the child of the node at ``depth`` whose move covers card ``y`` (see ``_island_split``)."""
    mode, a, b = islands.split[depth, 0], islands.split[depth, 1], islands.split[depth, 2]
    side = islands.side[depth]
    if mode == 0:
        return U0
    if side & bit(y) != U0:
        return U0 if popcount(side & ~bit(y)) == 1 else _island_tag(a, b)
    rest = present & ~side & ~bit(y)
    return U0 if popcount(rest) == 1 else _island_tag(b, a)
