# mypy: disable-error-code="no-untyped-def"
"""The compiled enumeration: every distinct state reachable from a root, grouped by occupied cells.

This is the module where speed beats beauty; ``boaf.puzzles.reference`` is the plain
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
each child group C is gathered (``_gather``) from its parent groups C + {s}, reading only
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

What travels together through the calls is bundled in typed named tuples
(numba compiles them as structs): ``Tables`` (the root's slot tables),
``Config`` (what a walk records, when it pauses), ``Budget`` (the state cap,
deadline and cancel flag), ``Index`` (where groups, moves and depths are),
``Store`` (the growing arrays of states and moves), ``Expansion`` (what one
``expand_groups`` call built) and ``Building`` (the child group under
construction). Every int field is a plain ``int`` from Python and an
``np.int64`` in compiled code: another type is another compiled copy.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from boaf.game.bits import popcount
from boaf.search import now_s

COMPLETE, OVER_BUDGET, OUT_OF_TIME, CANCELLED, INCONSISTENT, TOO_WIDE, PAUSED = range(7)
MAX_STACKS = 16  # 4 bits per slot in a uint64 key
EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)  # not a key: that would show card 15 in all 16 slots
CHECK_EVERY = 1 << 16  # states read between clock and cancel-flag checks

U15 = np.uint64(15)


class Tables(NamedTuple):
    """The root's read-only slot tables (``enumeration._slot_tables``), shared by every call of a walk."""

    k: int  # the root's stacks: its slots, numbered row-major
    line: np.ndarray  # int64[k]: bit t of ``line[s]`` when slots s and t share a row or a column
    compat: np.ndarray  # uint64[k]: ``compat[a]``, the cards that may join card a (cards named by their root slot)


class Config(NamedTuple):
    """What a walk records, and when it pauses."""

    edge_like: np.ndarray  # an empty array of the place dtype moves are recorded in (``uint16`` or ``uint32``)
    widest: int  # that dtype's largest value: a group with more states ends the call with ``TOO_WIDE``
    record: bool  # record every move (labelling needs them)
    pause_at: int  # ``enumerate_groups`` pauses before a depth of at least this many states (0: never)


class Budget(NamedTuple):
    """When a call must stop: ``<= 0`` means no limit."""

    max_states: int  # states kept: in all (``enumerate_groups``), new ones (``expand_groups``); labelling: unused
    deadline: float  # seconds on the ``now_s`` clock
    cancel: np.ndarray  # int64[1]: another thread sets ``cancel[0]`` to stop the call


class Index(NamedTuple):
    """Where the groups, moves and depths are (``start_groups``): fixed sizes, filled in place depth by depth."""

    group_start: np.ndarray  # int64[2**k]: the first index in ``keys`` of the group of a mask (-1: no such group)
    group_size: np.ndarray  # int64[2**k]: that group's states
    block_start: np.ndarray  # int64[2**k, k]: the first index in ``edges`` of the moves into group C out of slot s
    masks: np.ndarray  # int64[2**k]: the groups' masks as built, depth by depth, increasing within a depth
    level_group_start: np.ndarray  # int64[k+1]: depth d is ``masks[level_group_start[d] : …[d+1]]`` (-1: not yet)
    level_size: np.ndarray  # int64[k]: the states of each depth


class Store(NamedTuple):
    """The states and moves found so far; a new one whenever an array grows."""

    keys: np.ndarray  # uint64[>= used]: every state's key, group after group
    used: int  # the keys in use
    edges: np.ndarray  # uint16 or uint32[>= moves]: every recorded move as its child's place, block after block
    moves: int  # the edges in use


class Expansion(NamedTuple):
    """The child groups one ``expand_groups`` call built, for ``append_groups``."""

    keys: np.ndarray  # uint64[]: the children's keys, one group after another
    sizes: np.ndarray  # int64[children]: each child's states (0: none)
    edges: np.ndarray  # the place dtype: the moves, each as its child's place
    blocks: np.ndarray  # int64[children, k]: the moves into child c out of slot s start at ``edges[blocks[c, s]]``


class Building(NamedTuple):
    """The child group ``expand_groups`` is building: its keys in a hash table, its moves as rows of it."""

    table: np.ndarray  # uint64[>= cap]: the group's keys by hash, ``EMPTY`` in a free row
    cap: np.int64  # the rows in use, ``table[:cap]``: a power of two, at least 16
    n: np.int64  # the group's states so far
    rows: np.ndarray  # uint32[]: the group's moves so far, each noted as its child's row in the table
    moves: np.int64  # the moves so far


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
def _stopped(budget):
    if budget.cancel[0] != 0:
        return CANCELLED
    if budget.deadline > 0 and now_s() > budget.deadline:
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
def next_groups(tables, index, first, last):
    """The candidate groups of the next depth, below ``index.masks[first:last]``, in increasing mask order.

    Returns ``(children, bounds)``; ``bounds[c]`` caps the moves into child c
    (0: none can reach it).
    """
    k, line, masks = tables.k, tables.line, index.masks
    group_start, group_size = index.group_start, index.group_size
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
def expand_groups(tables, keys, index, children, bounds, config, budget):
    """Build the groups ``children`` of the next depth from their parents (read-only: threads may share them).

    A group with more states than ``config.widest`` ends the call with
    ``TOO_WIDE``. Moves are recorded only when ``config.record`` is true.
    More than ``budget.max_states`` new states (0: no cap) ends it with
    ``OVER_BUDGET``; ``budget.deadline`` (a ``now_s()`` time, 0 for none) and
    ``budget.cancel[0]`` with ``OUT_OF_TIME`` / ``CANCELLED``.

    Returns ``(status, Expansion)``: the children's keys one group after
    another, each child's state count, and the moves, the block of child c
    out of slot s starting at ``edges[blocks[c, s]]`` (-1: none).
    """
    k, line, compat = tables
    group_start, group_size = index.group_start, index.group_size
    record, widest, max_new = config.record, config.widest, budget.max_states
    n_children = children.shape[0]
    sizes = np.zeros(n_children, dtype=np.int64)
    blocks = np.full((n_children, k), -1, dtype=np.int64)
    total_bound = 0
    for c in range(n_children):
        total_bound += bounds[c]
    new_keys = np.empty(max(16, total_bound // 8), dtype=np.uint64)
    new_edges = np.empty(max(16, total_bound // 2 if record else 0), dtype=config.edge_like.dtype)
    targets = np.empty(k, dtype=np.int64)
    table, rows = np.full(16, EMPTY, dtype=np.uint64), np.empty(16, dtype=np.uint32)
    group = Building(table, np.int64(16), np.int64(0), rows, np.int64(0))
    place = np.empty(16, dtype=np.int64)  # each table row's place in its group
    used, m, work = np.int64(0), np.int64(0), 0
    for c in range(n_children):
        if bounds[c] == 0:
            continue
        child = children[c]
        group = _emptied(group, bounds[c], record)
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
                blocks[c, s] = m + group.moves
            group = _gather(group, keys[start : start + size], s, targets[:n_targets], compat, record)
            work += size
            if work >= CHECK_EVERY:
                work = 0
                status = _stopped(budget)
                if status != COMPLETE:
                    return status, Expansion(new_keys[:used], sizes, new_edges[:m], blocks)
        if record and group.n - 1 > widest:
            return TOO_WIDE, Expansion(new_keys[:used], sizes, new_edges[:m], blocks)
        new_keys = _grown(new_keys, used + group.n)
        new_edges = _grown(new_edges, m + group.moves)
        if place.shape[0] < group.cap:
            place = np.empty(group.cap, dtype=np.int64)
        _place(group, new_keys, used, new_edges, m, place)
        m += group.moves
        sizes[c] = group.n
        used += group.n
        if max_new > 0 and used > max_new:
            return OVER_BUDGET, Expansion(new_keys[:used], sizes, new_edges[:m], blocks)
    return COMPLETE, Expansion(new_keys[:used], sizes, new_edges[:m], blocks)


@njit(cache=True, nogil=True, inline="always")
def _emptied(group, bound, record):
    # ``group`` emptied for a child of at most ``bound`` moves in: at least 4 table rows a move, and rows for them.
    cap = np.int64(16)
    while 4 * cap < bound:
        cap *= 2
    table, rows = group.table, group.rows
    if table.shape[0] < cap:
        table = np.full(cap, EMPTY, dtype=np.uint64)
    else:
        table[:cap] = EMPTY
    if record and rows.shape[0] < bound:
        rows = np.empty(bound, dtype=np.uint32)
    return Building(table, cap, np.int64(0), rows, np.int64(0))


@njit(cache=True, nogil=True, inline="always")
def _gather(group, parent_keys, s, targets, compat, record):
    # ``group`` with the children of the states ``parent_keys`` by their moves out of slot s into ``targets``, in
    # order; a move is noted (when ``record``) as its child's row in the table.
    table, cap, n, rows, moves = group
    shift_s = np.uint64(4 * s)
    for i in range(parent_keys.shape[0]):
        key = parent_keys[i]
        a = (key >> shift_s) & U15
        cleared = key & ~(U15 << shift_s)
        for j in range(targets.shape[0]):
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
    return Building(table, cap, n, rows, moves)


@njit(cache=True, nogil=True, inline="always")
def _place(group, keys, used, edges, m, place):
    # The complete group's states into ``keys[used:]`` in table order; each move's row becomes the child's place
    # in ``edges[m:]``.
    table, rows = group.table, group.rows
    q = 0
    for i in range(group.cap):
        if table[i] != EMPTY:
            keys[used + q] = table[i]
            place[i] = q
            q += 1
    for e in range(group.moves):
        edges[m + e] = place[rows[e]]


@njit(cache=True, nogil=True)
def append_groups(store, index, ngroups, children, expansion):
    """Append one ``expand_groups`` result to the shared arrays (``index`` as made by ``start_groups``).

    Returns ``(store, ngroups)``, the store's arrays possibly grown.
    """
    group_start, group_size, block_start, masks, _, _ = index
    keys, used, edges, m = store
    new_keys, sizes, new_edges, blocks = expansion
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
    return Store(keys, used + new_keys.shape[0], edges, m + new_edges.shape[0]), ngroups


@njit(cache=True, nogil=True)
def start_groups(k, root_key, edge_like):
    """The enumeration's arrays holding the root alone: ``(index, store)`` (see ``Index`` and ``Store``)."""
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
    index = Index(group_start, group_size, block_start, masks, level_group_start, level_size)
    return index, Store(keys, np.int64(1), edges, np.int64(0))


@njit(cache=True, nogil=True)
def enumerate_groups(tables, config, budget, index, *, store, depth, last_depth):
    """Build depths ``depth + 1 … last_depth`` one after another, from arrays made by ``start_groups``.

    Moves are recorded when ``config.record`` is true (see ``expand_groups``).

    Stops before expanding a depth of at least ``config.pause_at`` states (0:
    never) with ``PAUSED``, so that the caller can split it between threads. A
    depth that would pass ``budget.max_states`` in all (0: no cap) is left out
    whole (``OVER_BUDGET``). Depths not completed keep
    ``level_group_start[d+1]`` at -1.

    Returns ``(status, depth, store)``: ``depth`` is the deepest complete depth.
    """
    level_group_start, level_size = index.level_group_start, index.level_size
    max_states, pause_at = budget.max_states, config.pause_at
    total = 0
    for d in range(depth + 1):
        total += level_size[d]
    while depth < last_depth:
        first, last = level_group_start[depth], level_group_start[depth + 1]
        if pause_at > 0 and level_size[depth] >= pause_at:
            return PAUSED, depth, store
        children, bounds = next_groups(tables, index, first, last)
        room = max_states - total if max_states > 0 else np.int64(0)
        if max_states > 0 and room <= 0:
            return OVER_BUDGET, depth, store
        room_budget = Budget(room, budget.deadline, budget.cancel)
        status, expansion = expand_groups(tables, store.keys, index, children, bounds, config, room_budget)
        if status != COMPLETE:
            return status, depth, store
        store, ngroups = append_groups(store, index, last, children, expansion)
        level_group_start[depth + 2] = ngroups
        level_size[depth + 1] = expansion.keys.shape[0]
        total += expansion.keys.shape[0]
        depth += 1
    return COMPLETE, depth, store


@njit(cache=True, nogil=True)
def label_level(tables, index, store, solvable, d, first, last, budget):
    """Label the states of groups ``index.masks[first:last]`` at depth ``d``; depth d+1 must be labelled.

    Writes ``solvable`` for those states only (threads may label disjoint
    ranges of one depth). Returns ``(status, solvable_count, tension_sum,
    tension_count)``: over the range, the solvable states and, over the
    solvable states that have moves, the sum of Browne's tension 1 − winning
    ÷ legal moves and their number. The status is ``INCONSISTENT`` if the
    recorded moves disagree with the states (a bug, never a silent label).
    """
    k, line, compat = tables
    group_start, group_size, block_start, masks, _, _ = index
    keys, edges = store.keys, store.edges
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
            status = _stopped(budget)
            if status != COMPLETE:
                return status, good, tension_sum, tension_count
    return COMPLETE, good, tension_sum, tension_count


@njit(cache=True, nogil=True)
def label_groups(tables, index, store, budget):
    """Label a complete enumeration bottom-up in one call (``label_level`` on every depth).

    Returns ``(status, solvable uint8[store.used], level_solvable int64[k],
    tension_sum float64[k], tension_count int64[k])``.
    """
    k, level_group_start = tables.k, index.level_group_start
    solvable = np.zeros(store.used, dtype=np.uint8)
    level_solvable = np.zeros(k, dtype=np.int64)
    tension_sum = np.zeros(k, dtype=np.float64)
    tension_count = np.zeros(k, dtype=np.int64)
    for d in range(k - 1, -1, -1):
        first, last = level_group_start[d], level_group_start[d + 1]
        status, good, t_sum, t_count = label_level(tables, index, store, solvable, d, first, last, budget)
        if status != COMPLETE:
            return status, solvable, level_solvable, tension_sum, tension_count
        level_solvable[d], tension_sum[d], tension_count[d] = good, t_sum, t_count
    return COMPLETE, solvable, level_solvable, tension_sum, tension_count


@njit(cache=True, nogil=True)
def find_state(keys, group_start, group_size, mask, *, key):
    """The index of the state (``mask``, ``key``) in ``keys``, or -1 when it was not enumerated."""
    start = group_start[mask]
    if start < 0:
        return -1
    for i in range(start, start + group_size[mask]):
        if keys[i] == key:
            return i
    return -1


@njit(cache=True, nogil=True)
def decode_level(index, keys, first, last, *, count, slot_cell, cards, ncells):
    """The ``count`` states of groups ``index.masks[first:last]`` as ``int8[count, ncells]`` top cards (-1 empty).

    The root's k slots: ``slot_cell[s]`` is the cell of slot s and ``cards[s]`` the card dealt there.
    """
    k, group_start, group_size, masks = slot_cell.shape[0], index.group_start, index.group_size, index.masks
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
