# mypy: disable-error-code="no-untyped-def"
"""The compiled enumeration: every distinct state reachable from a root, grouped by occupied cells.

This is the module where speed beats beauty; ``puzzles.reference`` is the plain
Python it is tested against.

A move empties one cell, so the cells still occupied are always a subset of the
root's k occupied cells, its *slots* (numbered row-major), and a state's depth
is k minus their number. States are stored in *groups*, one per set of occupied
slots (a k-bit mask). A state's key is exact and fits one ``uint64`` for up to
16 stacks: 4 bits per slot naming the root card shown there (cards are numbered
by their root slot; an empty slot holds 0, told apart by the group's mask).
Buried cards and stack heights never affect play, so two positions are the same
state exactly when their keys and masks are equal.

A group is a dense run of keys in one shared array: ``keys[group_start[mask] :
group_start[mask] + group_size[mask]]``; a state's *place* is its index in the run.

Every child of a state in group P lies in a group P − {s}, s being the move's
source slot. So the next depth is built group by group (``expand_groups``):
each child group C is gathered from its parent groups C + {s}, reading only
their moves out of s, and deduplicated in a small hash table that fits in
cache. Each move is generated once and recorded as the child's place, in a
block per (C, s): for each state of C + {s} in order, for each legal target
slot in increasing order. (Inside the loop a move is noted as its child's row
in the hash table; rows become places once the group is complete. Keeping
every other store out of that loop halves its time.) Labelling (``label_level``) then reads the blocks
back in the same order, bottom-up, without a single lookup.

The driver ``enumerate_groups`` runs whole depths in one call and can pause
before a large depth so that the caller may split it between threads: groups
of one depth are independent of each other.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from game.bits import popcount
from search import now_s

COMPLETE, OVER_BUDGET, OUT_OF_TIME, CANCELLED, INCONSISTENT, TOO_WIDE, PAUSED = range(7)
MAX_STACKS = 16  # 4 bits per slot in a uint64 key
EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)  # not a key: that would show card 15 in all 16 slots
CHECK_EVERY = 1 << 16  # states read between clock and cancel-flag checks

U15 = np.uint64(15)


@njit(cache=True, nogil=True, inline="always")
def _home(key, cap):
    # A mixed hash scaled to 0..cap-1 without a division (cap < 2**32).
    h = (key ^ (key >> np.uint64(29))) * np.uint64(0xBF58476D1CE4E5B9)
    return np.int64(((h >> np.uint64(32)) * np.uint64(cap)) >> np.uint64(32))


@njit(cache=True, nogil=True, inline="always")
def _find(table, cap, key):
    # The row of ``table[:cap]`` holding ``key``, or the free row where it belongs.
    i = _home(key, cap)
    while True:
        v = table[i]
        if v == key or v == EMPTY:  # noqa: SIM109 (plain compares compile tighter)
            return i
        i += 1
        if i == cap:
            i = 0


@njit(cache=True, nogil=True)
def _doubled(table, cap, rows, moves):
    # ``table[:cap]`` rehashed into twice the rows; the rows recorded in ``rows[:moves]`` follow.
    bigger = np.full(2 * cap, EMPTY, dtype=np.uint64)
    row = np.empty(cap, dtype=np.int64)
    for i in range(cap):
        if table[i] != EMPTY:
            row[i] = _find(bigger, 2 * cap, table[i])
            bigger[row[i]] = table[i]
    for e in range(moves):
        rows[e] = row[rows[e]]
    return bigger


@njit(cache=True, nogil=True)
def _grown(a, need):
    if need <= a.shape[0]:
        return a
    bigger = np.empty(max(need, a.shape[0] + a.shape[0] // 2), dtype=a.dtype)
    bigger[: a.shape[0]] = a
    return bigger


@njit(cache=True, nogil=True)
def _stopped(deadline, cancel):
    if cancel[0] != 0:
        return CANCELLED
    if deadline > 0 and now_s() > deadline:
        return OUT_OF_TIME
    return COMPLETE


@njit(cache=True, nogil=True)
def _targets(k, line, s, child, out):
    # The slots of ``child`` in line with slot s, increasing, into ``out``; returns how many.
    n = 0
    for t in range(k):
        if (line[s] & child) >> t & 1:
            out[n] = t
            n += 1
    return n


@njit(cache=True, nogil=True)
def next_groups(k, masks, first, last, group_start, group_size, line):
    """The candidate groups of the next depth, below ``masks[first:last]``, in increasing mask order.

    Returns ``(children, bounds)``; ``bounds[c]`` caps the moves into child c
    (0: none can reach it).
    """
    marked = np.zeros(1 << k, dtype=np.uint8)
    children = np.empty(max(1, (last - first) * k), dtype=np.int64)
    n = 0
    for g in range(first, last):
        parent = masks[g]
        for s in range(k):
            if (parent >> s) & 1:
                child = parent & ~(1 << s)
                if marked[child] == 0:
                    marked[child] = 1
                    children[n] = child
                    n += 1
    children = np.sort(children[:n])
    bounds = np.zeros(n, dtype=np.int64)
    for c in range(n):
        child = children[c]
        for s in range(k):
            parent = child | (1 << s)
            if parent != child and group_start[parent] >= 0:
                bounds[c] += group_size[parent] * popcount(line[s] & child)
    return children, bounds


@njit(cache=True, nogil=True)
def expand_groups(
    k, keys, group_start, group_size, line, compat, children, bounds, edge_like, widest, record, max_new, deadline,
    cancel,
):  # fmt: skip
    """Build the groups ``children`` of the next depth from their parents (read-only: threads may share them).

    ``edge_like`` is an empty array of the place dtype (``uint16`` or
    ``uint32``, largest value ``widest``): a group with more states ends the
    call with ``TOO_WIDE``. Moves are recorded only when ``record`` is true.
    More than ``max_new`` new states (0: no cap) ends it with ``OVER_BUDGET``;
    ``deadline`` (a ``now_s()`` time, 0 for none) and ``cancel[0]`` with
    ``OUT_OF_TIME`` / ``CANCELLED``.

    Returns ``(status, new_keys, sizes, new_edges, blocks)``: the children's
    keys one group after another, each child's state count, and the moves,
    the block of child c out of slot s starting at ``new_edges[blocks[c, s]]`` (-1: none).
    """
    n_children = children.shape[0]
    sizes = np.zeros(n_children, dtype=np.int64)
    blocks = np.full((n_children, k), -1, dtype=np.int64)
    total_bound = 0
    for c in range(n_children):
        total_bound += bounds[c]
    new_keys = np.empty(max(16, total_bound // 8), dtype=np.uint64)
    new_edges = np.empty(max(16, total_bound // 2 if record else 0), dtype=edge_like.dtype)
    rows = np.empty(16, dtype=np.uint32)  # the group's moves as table rows, until its places are known
    targets = np.empty(k, dtype=np.int64)
    table = np.full(16, EMPTY, dtype=np.uint64)  # the child group's keys, by hash
    place = np.empty(16, dtype=np.int64)
    used, m, work = 0, 0, 0
    for c in range(n_children):
        if bounds[c] == 0:
            continue
        child = children[c]
        cap = 16
        while 4 * cap < bounds[c]:
            cap *= 2
        if table.shape[0] < cap:
            table = np.full(cap, EMPTY, dtype=np.uint64)
        else:
            table[:cap] = EMPTY
        if record and rows.shape[0] < bounds[c]:
            rows = np.empty(bounds[c], dtype=np.uint32)
        n, moves = np.int64(0), np.int64(0)
        for s in range(k):
            parent = child | (1 << s)
            start = group_start[parent]
            if parent == child or start < 0:
                continue
            n_targets = _targets(k, line, s, child, targets)
            if n_targets == 0:
                continue
            size = group_size[parent]
            if record:
                blocks[c, s] = m + moves
            shift_s = np.uint64(4 * s)
            for i in range(start, start + size):
                key = keys[i]
                a = (key >> shift_s) & U15
                cleared = key & ~(U15 << shift_s)
                for j in range(n_targets):
                    shift_t = np.uint64(4 * targets[j])
                    if (compat[a] >> ((key >> shift_t) & U15)) & np.uint64(1):
                        new = (cleared & ~(U15 << shift_t)) | (a << shift_t)
                        at = _find(table, cap, new)
                        if table[at] == EMPTY:
                            table[at] = new
                            n += 1
                            if 3 * n > 2 * cap:
                                table = _doubled(table, cap, rows, moves)
                                cap *= 2
                                at = _find(table, cap, new)
                        if record:
                            rows[moves] = at
                            moves += 1
            work += size
            if work >= CHECK_EVERY:
                work = 0
                status = _stopped(deadline, cancel)
                if status != COMPLETE:
                    return status, new_keys[:used], sizes, new_edges[:m], blocks
        if record and n - 1 > widest:
            return TOO_WIDE, new_keys[:used], sizes, new_edges[:m], blocks
        # The group's states in table order; each move's row becomes the child's place.
        new_keys = _grown(new_keys, used + n)
        new_edges = _grown(new_edges, m + moves)
        if place.shape[0] < cap:
            place = np.empty(cap, dtype=np.int64)
        q = 0
        for i in range(cap):
            if table[i] != EMPTY:
                new_keys[used + q] = table[i]
                place[i] = q
                q += 1
        for e in range(moves):
            new_edges[m + e] = place[rows[e]]
        m += moves
        sizes[c] = n
        used += n
        if max_new > 0 and used > max_new:
            return OVER_BUDGET, new_keys[:used], sizes, new_edges[:m], blocks
    return COMPLETE, new_keys[:used], sizes, new_edges[:m], blocks


@njit(cache=True, nogil=True)
def append_groups(keys, used, edges, m, index, ngroups, children, sizes, new_keys, new_edges, blocks):
    """Append one ``expand_groups`` result to the shared arrays (``index`` as made by ``start_groups``).

    Returns ``(keys, used, edges, m, ngroups)``, the arrays possibly grown.
    """
    group_start, group_size, block_start, masks, _, _ = index
    keys = _grown(keys, used + new_keys.shape[0])
    keys[used : used + new_keys.shape[0]] = new_keys
    edges = _grown(edges, m + new_edges.shape[0])
    edges[m : m + new_edges.shape[0]] = new_edges
    offset = used
    for c in range(children.shape[0]):
        if sizes[c] == 0:
            continue
        child = children[c]
        group_start[child], group_size[child] = offset, sizes[c]
        offset += sizes[c]
        for s in range(blocks.shape[1]):
            if blocks[c, s] >= 0:
                block_start[child, s] = m + blocks[c, s]
        masks[ngroups] = child
        ngroups += 1
    return keys, used + new_keys.shape[0], edges, m + new_edges.shape[0], ngroups


@njit(cache=True, nogil=True)
def start_groups(k, root_key, edge_like):
    """The enumeration's arrays holding the root alone: ``(keys, edges, index)``.

    ``index`` is ``(group_start, group_size, block_start, masks,
    level_group_start, level_size)``, the arrays that find groups, moves and
    depths (see ``enumerate_groups``).
    """
    nmasks = 1 << k
    group_start = np.full(nmasks, -1, dtype=np.int64)
    group_size = np.zeros(nmasks, dtype=np.int64)
    block_start = np.full((nmasks, k), -1, dtype=np.int64)
    masks = np.empty(nmasks, dtype=np.int64)
    level_group_start = np.full(k + 1, -1, dtype=np.int64)
    level_size = np.zeros(k, dtype=np.int64)
    keys = np.empty(1024, dtype=np.uint64)
    edges = np.empty(1024, dtype=edge_like.dtype)
    keys[0] = root_key
    group_start[nmasks - 1], group_size[nmasks - 1] = 0, 1
    masks[0] = nmasks - 1
    level_group_start[0], level_group_start[1] = 0, 1
    level_size[0] = 1
    return keys, edges, (group_start, group_size, block_start, masks, level_group_start, level_size)


@njit(cache=True, nogil=True)
def enumerate_groups(
    k, depth, keys, used, edges, m, index, line, compat, widest, record, max_states, last_depth, pause_at, deadline,
    cancel,
):  # fmt: skip
    """Build depths ``depth + 1 … last_depth`` one after another, from arrays made by ``start_groups``.

    Moves are recorded when ``record`` is true (see ``expand_groups``).

    Stops before expanding a depth of at least ``pause_at`` states (0: never)
    with ``PAUSED``, so that the caller can split it between threads. A depth
    that would pass ``max_states`` in all (0: no cap) is left out whole
    (``OVER_BUDGET``). Depths not completed keep ``level_group_start[d+1]`` at -1.

    Returns ``(status, depth, keys, used, edges, m)``: ``depth`` is the
    deepest complete depth.
    """
    group_start, group_size, _, masks, level_group_start, level_size = index
    total = 0
    for d in range(depth + 1):
        total += level_size[d]
    while depth < last_depth:
        first, last = level_group_start[depth], level_group_start[depth + 1]
        if pause_at > 0 and level_size[depth] >= pause_at:
            return PAUSED, depth, keys, used, edges, m
        children, bounds = next_groups(k, masks, first, last, group_start, group_size, line)
        room = max_states - total if max_states > 0 else 0
        if max_states > 0 and room <= 0:
            return OVER_BUDGET, depth, keys, used, edges, m
        status, new_keys, sizes, new_edges, blocks = expand_groups(
            k,
            keys,
            group_start,
            group_size,
            line,
            compat,
            children,
            bounds,
            edges[:0],
            widest,
            record,
            room,
            deadline,
            cancel,
        )
        if status != COMPLETE:
            return status, depth, keys, used, edges, m
        keys, used, edges, m, ngroups = append_groups(
            keys, used, edges, m, index, last, children, sizes, new_keys, new_edges, blocks
        )
        level_group_start[depth + 2] = ngroups
        level_size[depth + 1] = new_keys.shape[0]
        total += new_keys.shape[0]
        depth += 1
    return COMPLETE, depth, keys, used, edges, m


@njit(cache=True, nogil=True)
def label_level(
    k,
    d,
    first,
    last,
    keys,
    group_start,
    group_size,
    masks,
    edges,
    block_start,
    line,
    compat,
    solvable,
    deadline,
    cancel,
):
    """Label the states of groups ``masks[first:last]`` at depth ``d``; depth d+1 must be labelled.

    Writes ``solvable`` for those states only (threads may label disjoint
    ranges of one depth). Returns ``(status, solvable_count, tension_sum,
    tension_count)``: over the range, the solvable states and, over the
    solvable states that have moves, the sum of Browne's tension 1 − winning
    ÷ legal moves and their number. The status is ``INCONSISTENT`` if the
    recorded moves disagree with the states (a bug, never a silent label).
    """
    good, tension_sum, tension_count, work = 0, 0.0, 0, 0
    if d == k - 1:
        for g in range(first, last):
            start = group_start[masks[g]]
            for i in range(start, start + group_size[masks[g]]):
                solvable[i] = 1
                good += 1
        return COMPLETE, good, tension_sum, tension_count
    winning = np.zeros(1024, dtype=np.uint8)  # at most 16 × 15 moves: a byte each
    legal = np.zeros(1024, dtype=np.uint8)
    targets = np.empty(k, dtype=np.int64)
    for g in range(first, last):
        parent = masks[g]
        start, size = group_start[parent], group_size[parent]
        if winning.shape[0] < size:
            winning = np.zeros(size, dtype=np.uint8)
            legal = np.zeros(size, dtype=np.uint8)
        else:
            winning[:size] = 0
            legal[:size] = 0
        for s in range(k):
            if (parent >> s) & 1 == 0:
                continue
            child = parent & ~(1 << s)
            n_targets = _targets(k, line, s, child, targets)
            if n_targets == 0:
                continue
            e, child_start, child_size = block_start[child, s], group_start[child], group_size[child]
            shift_s = np.uint64(4 * s)
            for i in range(size):
                key = keys[start + i]
                a = (key >> shift_s) & U15
                for j in range(n_targets):
                    if (compat[a] >> ((key >> np.uint64(4 * targets[j])) & U15)) & np.uint64(1):
                        if e < 0 or edges[e] >= child_size:
                            return INCONSISTENT, good, tension_sum, tension_count
                        winning[i] += solvable[child_start + edges[e]]
                        legal[i] += 1
                        e += 1
        for i in range(size):
            if winning[i] > 0:
                solvable[start + i] = 1
                good += 1
                tension_sum += 1.0 - winning[i] / legal[i]
                tension_count += 1
        work += size * (k - d)
        if work >= CHECK_EVERY:
            work = 0
            status = _stopped(deadline, cancel)
            if status != COMPLETE:
                return status, good, tension_sum, tension_count
    return COMPLETE, good, tension_sum, tension_count


@njit(cache=True, nogil=True)
def label_groups(
    k, keys, group_start, group_size, masks, level_group_start, edges, block_start, line, compat, deadline, cancel
):
    """Label a complete enumeration bottom-up in one call (``label_level`` on every depth).

    Returns ``(status, solvable uint8[len(keys)], level_solvable int64[k],
    tension_sum float64[k], tension_count int64[k])``.
    """
    solvable = np.zeros(keys.shape[0], dtype=np.uint8)
    level_solvable = np.zeros(k, dtype=np.int64)
    tension_sum = np.zeros(k, dtype=np.float64)
    tension_count = np.zeros(k, dtype=np.int64)
    for d in range(k - 1, -1, -1):
        status, good, t_sum, t_count = label_level(
            k, d, level_group_start[d], level_group_start[d + 1], keys, group_start, group_size, masks, edges,
            block_start, line, compat, solvable, deadline, cancel,
        )  # fmt: skip
        if status != COMPLETE:
            return status, solvable, level_solvable, tension_sum, tension_count
        level_solvable[d], tension_sum[d], tension_count[d] = good, t_sum, t_count
    return COMPLETE, solvable, level_solvable, tension_sum, tension_count


@njit(cache=True, nogil=True)
def find_state(keys, group_start, group_size, mask, key):
    """The index of the state (``mask``, ``key``) in ``keys``, or -1 when it was not enumerated."""
    start = group_start[mask]
    if start < 0:
        return -1
    for i in range(start, start + group_size[mask]):
        if keys[i] == key:
            return i
    return -1


@njit(cache=True, nogil=True)
def decode_level(k, keys, group_start, group_size, masks, first, last, count, slot_cell, cards, ncells):
    """The ``count`` states of groups ``masks[first:last]`` as ``int8[count, ncells]`` top cards (-1 empty)."""
    out = np.full((count, ncells), -1, dtype=np.int8)
    r = 0
    for g in range(first, last):
        m = masks[g]
        for i in range(group_start[m], group_start[m] + group_size[m]):
            key = keys[i]
            for s in range(k):
                if (m >> s) & 1:
                    out[r, slot_cell[s]] = cards[(key >> np.uint64(4 * s)) & U15]
            r += 1
    return out
