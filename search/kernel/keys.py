# mypy: disable-error-code="no-untyped-def"
"""Exact memo keys of a state: one word on small grids, several words elsewhere.

The memo key of a state is exact, never a hash. On grids of at most 16
cells it is one ``uint64`` (``_narrow_key``): the occupied-cell mask, then a
4-bit label (the card's cell at the root) for each occupied cell's top card
(a 4x4 state of up to 12 stacks; one of more stacks, after the first moves,
has the rank of its labels instead, ``_ranked_key``). Elsewhere (and for
best-n and Island Merge) the key is 6 bits per cell (card + 1, 0 for empty),
10 cells per ``uint64`` word, ``ceil(ncells / 10)`` words (one more with
``ISLANDS``: the island under way, see ``boaf.search.kernel.islands``).
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba import njit
from numba.core import cgutils
from numba.extending import intrinsic

from boaf.game.bits import lean_njit, popcount
from boaf.game.graph import U0, U1, bit

CELLS_PER_WORD = 10


NARROW_CELLS = 16  # grids of at most this many cells get one-word memo entries (``_narrow_key``)


U15 = np.uint64(15)


@intrinsic
def _prefetch_row(typingctx, table, row):
    # a hint that row ``row`` of the 2-D array ``table`` is read soon (llvm.prefetch: read, keep in all caches)
    def codegen(context, builder, signature, args):
        table_type = signature.args[0]
        array = context.make_array(table_type)(context, builder, args[0])
        zero = context.get_constant(numba.types.intp, 0)
        at = cgutils.get_item_pointer(context, builder, table_type, array, [args[1], zero])
        byte_ptr = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        hint = ir.FunctionType(ir.VoidType(), [byte_ptr, i32, i32, i32])
        prefetch = cgutils.get_or_insert_function(builder.module, hint, "llvm.prefetch.p0")
        builder.call(
            prefetch, [builder.bitcast(at, byte_ptr), ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)]
        )
        return context.get_dummy_value()

    return numba.types.void(table, numba.types.int64), codegen


@njit(cache=True, nogil=True)
def key_words(ncells: int) -> int:
    """Number of ``uint64`` words in the wide exact key of a state of ``ncells`` cells."""
    return (ncells + CELLS_PER_WORD - 1) // CELLS_PER_WORD


@njit(cache=True, nogil=True)
def narrow_max_stacks(ncells: int) -> int:
    """The most stacks a state of ``ncells <= NARROW_CELLS`` cells may have to get a one-word key."""
    return (64 - ncells) // 4


@lean_njit()
def _plain_key(cells, key):
    """The wide exact key of ``cells``: 6 bits per cell (card + 1), ten cells per word."""
    for w in range(key.shape[0]):
        key[w] = U0
    for i in range(cells.shape[0]):
        v = np.uint64(cells[i] + 1)
        key[i // CELLS_PER_WORD] |= v << np.uint64(6 * (i % CELLS_PER_WORD))


@lean_njit(inline="always")
def _copy_words(source, target):
    # a loop: ``target[:] = source`` compiles numpy's broadcasting and its shape error (~1.7 s of a first start),
    # and needs numba's runtime; any 1-D arrays of one length
    for w in range(source.shape[0]):
        target[w] = source[w]


@lean_njit()
def root_labels(root, labels):
    """Write into ``labels`` (``int64[52]``) each card's cell at ``root``, -1 for cards not on it.

    These are the 4-bit labels of one-word keys (``_narrow_key``): a search that
    starts below another root (a thread's share of a split search) is given
    that root's labels, so that every search of a shared table keys alike.
    """
    for c in range(52):
        labels[c] = -1
    for i in range(root.shape[0]):
        if root[i] >= 0:
            labels[root[i]] = i


@lean_njit()
def _packed_labels(cells, labels):
    """The labels of the top cards of ``cells``, occupied cells in order, 4 bits each from bit 0."""
    packed = U0
    shift = 0
    for i in range(cells.shape[0]):
        if cells[i] >= 0:
            packed |= np.uint64(labels[cells[i]]) << np.uint64(shift)
            shift += 4
    return packed


@lean_njit(inline="always")
def _packed_child(packed, occupied, s, t, label):
    """``packed`` (of a state with occupied cells ``occupied``) after the move ``s -> t`` of the card ``label``.

    The nibble of ``t`` (its rank among the occupied cells) takes the label,
    and the nibble of ``s`` is cut out, the ones above it moving down.
    """
    rt = np.uint64(4 * popcount(occupied & (bit(t) - U1)))
    packed = (packed & ~(U15 << rt)) | (np.uint64(label) << rt)
    rs = 4 * popcount(occupied & (bit(s) - U1))
    low = packed & ((U1 << np.uint64(rs)) - U1)
    high = packed >> np.uint64(rs + 4) if rs + 4 < 64 else U0
    return low | (high << np.uint64(rs))


@lean_njit(inline="always")
def _narrow_key(packed, occupied, ncells):
    """The one-word exact key of a state: its occupied-cell mask, then its ``packed`` labels above bit ``ncells``.

    Exact for a grid of at most 16 cells and at most ``narrow_max_stacks``
    stacks (12 on 4x4; more take ``_ranked_key``): every card on the board was on the root (cards only
    leave it), and a root of at most 16 cells holds at most 16 cards, so the
    labels (each card's root cell) are distinct 4-bit numbers. The mask says
    which cells are occupied and the nibbles, in cell order, which card tops
    each: two states with one key are the same state. ``ncells + 4 * stacks
    <= 64``, so the key fits one word, and it is never 0 (a memoised state
    has stacks), so 0 marks a free slot.
    """
    return (packed << np.uint64(ncells)) | occupied


@lean_njit()
def _ranked_key(cells, labels, occupied, ncells):
    """The one-word exact key of a state of more than ``narrow_max_stacks`` stacks (few: the first moves).

    The occupied-cell mask, then, above bit ``ncells``, the rank of the
    labels of the occupied cells' top cards in cell order among all such
    sequences of distinct labels: the ``j``-th label's position among the
    labels not yet used, in base ``ncells - j`` (a partial Lehmer code). The
    rank is below ``ncells! <= 16! < 2^45``, so the key fits one word; the mask
    and the rank give back the state. Its mask has more bits set than any
    ``_narrow_key``'s, so the two kinds never collide.
    """
    unused = bit(ncells) - U1
    rank = U0
    j = 0
    for i in range(ncells):
        if cells[i] >= 0:
            x = labels[cells[i]]
            rank = rank * np.uint64(ncells - j) + np.uint64(popcount(unused & (bit(x) - U1)))
            unused &= ~bit(x)
            j += 1
    return (rank << np.uint64(ncells)) | occupied


@lean_njit()
def _key_children(packed, occupied, cells, labels, src, dst, memo, keys):
    """The one-word keys of the children ``src[i] -> dst[i]`` into ``keys``, each slot's cache line fetched ahead.

    The children are looked up one by one later, each after its elder
    siblings' subtrees; on hard deals most are found in the table at once,
    and their lookups, each a likely cache miss, then overlap. (Children of
    more than ``narrow_max_stacks`` stacks take their ranked key when looked
    up, and the caller does not fetch them ahead.)
    """
    ncells = cells.shape[0]
    mask = np.uint64(memo.shape[0] - 1)
    for i in range(src.shape[0]):
        s = src[i]
        k = _narrow_key(_packed_child(packed, occupied, s, dst[i], labels[cells[s]]), occupied & ~bit(s), ncells)
        keys[i] = k
        _prefetch_row(memo, _narrow_slot(k, mask))


@lean_njit(inline="always")
def _narrow_slot(key, mask):
    h = key * np.uint64(0x9E3779B97F4A7C15)
    return np.int64((h ^ (h >> np.uint64(29))) & mask)
