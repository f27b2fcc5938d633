# mypy: disable-error-code="no-untyped-def"
"""Island Merge (``ISLANDS``): at a bridge of G, collapse one side first.

``ISLANDS`` (Island Merge, the ``island-merge`` algorithm, on Compatible DFS;
``benchmarks/solver.py --by-stacks``): exact (``_island_split``), but 951.6 mean
nodes on 10,000 random states against Compatible's 718.5: a state met inside a
collapse and outside one is stored under two keys. On the hard deals it rarely
splits (same nodes as Compatible on four of six; -115618 2.13M -> 0.71M nodes).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from game.bits import lowest_bit, popcount
from search.kernel.graph import U0, U1, U6, U63, _bit, cut_vertices
from search.kernel.prune import _small_side


@njit(cache=True, nogil=True, inline="always")
def _reach(start, members, links):
    """The cards of ``members`` reached from card ``start`` (in ``members``) through ``links[card]`` masks."""
    return _small_side(start, members, links, np.int64(64))  # (no set of cards passes 64)


@njit(cache=True, nogil=True, inline="always")
def _island_tag(a, b):
    # the memo word of "collapse the side of a (bridge a-b) first"; 0 is "no island under way"
    return np.uint64(a + 1) | (np.uint64(b + 1) << U6)


@njit(cache=True, nogil=True)
def _island_split(present, compat, tag, tarjan_i, tarjan_u):
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
        return 1, a, b, _reach(a, present & ~_bit(b), compat)
    cuts, connected = cut_vertices(present, compat, tarjan_i[0], tarjan_i[1], tarjan_i[2], tarjan_i[3], tarjan_u)
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
            comp = _reach(u, present & ~_bit(v), compat)
            if compat[v] & comp != _bit(u):
                continue  # another edge joins the two sides: u-v is no bridge
            k = popcount(comp)
            small = min(k, n - k)
            if small > best:
                best = small
                mode, sa, sb, side = 2, u, v, comp
    return mode, sa, sb, side


@njit(cache=True, nogil=True)
def _keep_inside(cells, side, src, dst, count):
    """Keep the children whose two cards are both in ``side``; returns the new count."""
    kept = 0
    for i in range(count):
        if side & _bit(cells[src[i]]) != U0 and side & _bit(cells[dst[i]]) != U0:
            src[kept] = src[i]
            dst[kept] = dst[i]
            kept += 1
    return kept


@njit(cache=True, nogil=True)
def _enter_island(cells, present, compat, tag, island, island_side, depth, src, dst, count, tarjan_i, tarjan_u):
    """Record the island of the node at ``depth`` and keep only its children that stay inside it; returns the count."""
    mode, a, b, side = _island_split(present, compat, tag[depth], tarjan_i, tarjan_u)
    island[depth, 0] = mode
    island[depth, 1] = a
    island[depth, 2] = b
    island_side[depth] = side
    if mode == 1:
        return _keep_inside(cells, side, src, dst, count)
    return count


@njit(cache=True, nogil=True, inline="always")
def _child_tag(mode, a, b, side, present, y):
    """The tag of the child whose move covers card ``y`` (see ``_island_split``)."""
    if mode == 0:
        return U0
    if side & _bit(y) != U0:
        return U0 if popcount(side & ~_bit(y)) == 1 else _island_tag(a, b)
    rest = present & ~side & ~_bit(y)
    return U0 if popcount(rest) == 1 else _island_tag(b, a)
