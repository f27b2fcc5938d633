"""Compiled helpers shared by every numba kernel (``search``, ``features``, ``puzzles``, ``models``).

- ``popcount(x)``: the set bits of an integer (LLVM ``ctpop``), as an ``int64``.
- ``lowest_bit(x)``: the index of the lowest set bit of a non-zero integer
  (LLVM ``cttz``), as an ``int64``.
- ``shuffled_cells(seeds, ncells)``: the seeded deals (SPEC §2), one row of
  ``ncells`` cards per seed; ``boaf.game.deals.deal_cards`` is its first row for 52.

Both bit helpers take any integer type (``uint64`` masks in ``search``, ``int64``
in ``features``); they are numba intrinsics, callable only from compiled code.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from llvmlite import ir
from numba.extending import intrinsic

from boaf.game import numba_cache

numba_cache.install()  # before any kernel is defined: every boaf kernel's cache is stamped with all kernel sources

__all__ = ["lean_njit", "lowest_bit", "popcount", "shuffled_cells"]


def lean_njit(*, inline: str = "never") -> Any:
    """``numba.njit(cache=True, nogil=True)`` for compiled code that allocates nothing: without numba's reference
    counting (``_nrt=False``).

    With it, every array read out of a named tuple (``boaf.search.kernel.bundles``)
    and every array argument costs an atomic increment and decrement, on every
    node of a search: more than the rest of a node's work. Such a function may
    create views but no arrays, and may call only functions of its kind (numba
    compiles callees with the caller's flags).
    """
    options: dict[str, Any] = {"cache": True, "nogil": True, "_nrt": False, "inline": inline}
    return numba.njit(**options)


def _widened(builder: ir.IRBuilder, value: ir.Value) -> ir.Value:
    # the result of an LLVM bit count has the width of its argument: widen it to 64 bits
    if value.type.width < 64:
        return builder.zext(value, ir.IntType(64))
    return value


@intrinsic
def popcount(typingctx, x):  # type: ignore[no-untyped-def]
    """Set bits of ``x`` (any integer type), as an ``int64``."""
    if not isinstance(x, numba.types.Integer):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return _widened(builder, builder.ctpop(args[0]))

    return numba.types.int64(x), codegen


@intrinsic
def lowest_bit(typingctx, x):  # type: ignore[no-untyped-def]
    """Index of the lowest set bit of a non-zero ``x`` (any integer type), as an ``int64``."""
    if not isinstance(x, numba.types.Integer):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return _widened(builder, builder.cttz(args[0], ir.Constant(ir.IntType(1), 1)))

    return numba.types.int64(x), codegen


@numba.njit(cache=True, nogil=True)
def shuffled_cells(seeds: np.ndarray, ncells: int) -> np.ndarray:
    """``int8[len(seeds), ncells]``: the Microsoft FreeCell shuffle of each seed, in dealing order (SPEC §2).

    Seeds must lie in the 32-bit signed range (``boaf.game.deals`` checks them).
    """
    out = np.empty((seeds.shape[0], ncells), dtype=np.int8)
    deck = np.empty(52, dtype=np.int64)
    for k in range(seeds.shape[0]):
        for i in range(52):
            deck[i] = i
        state = seeds[k] & 0xFFFFFFFF
        for i in range(51, 0, -1):
            state = (214013 * state + 2531011) & 0x7FFFFFFF
            j = (state >> 16) % (i + 1)
            deck[i], deck[j] = deck[j], deck[i]
        for c in range(ncells):
            out[k, c] = deck[51 - c]
    return out
