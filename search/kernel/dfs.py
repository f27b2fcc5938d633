# mypy: disable-error-code="no-untyped-def"
"""The depth-first search (``dfs``): Constrained, Compatible, Ordered and Island Merge DFS.

Nodes count *expanded* states: states with more than one stack, not already
known unsolvable, whose children were generated. The search is one loop over
an explicit stack (``Stack``); what differs between the memo's two key
schemes (``MemoPlan``) is asked of ``_child_known`` and ``_store_dead``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from boaf.game.bits import lean_njit
from boaf.game.graph import U0, bit
from boaf.search.kernel.bundles import BEST_SCORE, BIG_SEARCH, CUT_CACHE, Config, board_of, grown_scratch, new_scratch
from boaf.search.kernel.gather import (
    ENTERED,
    GATHER_AGAIN,
    GATHER_DEEP,
    GATHER_NODES,
    NODE_GATHER_DEPTH,
    NODE_GATHER_GROWTH,
    NODE_MEMORY_SHARE,
    ON_LEFT,
    PRUNE_GATHER,
    REFUTED,
    WAIT,
    _small_budget,
    enter_gathered,
    gather_node,
    gather_refutes,
    leave_gathered,
    resume_gathered,
)
from boaf.search.kernel.generate import generate, ordered, play, unplay
from boaf.search.kernel.islands import Islands, _enter_island, _island_key, _tag_at, _tag_child, new_islands
from boaf.search.kernel.keys import (
    NARROW_CELLS,
    _copy_words,
    _key_children,
    _narrow_key,
    _packed_child,
    _packed_labels,
    _plain_key,
    _ranked_key,
    key_words,
    narrow_max_stacks,
    root_labels,
)
from boaf.search.kernel.memo import (
    GROW,
    STORED,
    _fit_memo,
    _memo_find,
    _narrow_find,
    _narrow_full,
    _narrow_store,
    _wide_store,
    grown_in_time,
)
from boaf.search.kernel.open_blocks import OPEN_AFTER, PRUNE_OPEN, open_block_stuck
from boaf.search.kernel.order import _sort_children
from boaf.search.kernel.prune import ORDER_LATER, PRUNE_BLOCKS, SLEEP, _fall_asleep, _stuck_block, root_prunable
from boaf.search.kernel.status import SOLVABLE, TABLE_FULL, UNKNOWN, UNSOLVABLE, spent


class MemoPlan(NamedTuple):
    """How one search keys and stores its states (fixed for the search)."""

    narrow: bool  # one-word keys (``_narrow_key``, ``_ranked_key``); else wide keys (``_plain_key``)
    islands: bool  # wide keys carry the island under way in their last word (Island Merge)
    packed_max: int  # one-word keys: more stacks than this take a ranked key
    labels: np.ndarray  # one-word keys: each card's root cell (``root_labels``)
    fill: np.ndarray  # a shared one-word table: each search's entries (empty: the table is this search's own)
    max_rows: int  # the memo's row cap (0: none)
    stamp: int  # the stamp of this search's wide entries, or its index in ``fill``


class Stack(NamedTuple):
    """The search's explicit stack: per depth, a node's children and what its move changed."""

    src: np.ndarray  # int8[depths, width]: the children's source cells
    dst: np.ndarray  # int8[depths, width]: and target cells
    children: np.ndarray  # int64[depths]: how many children
    nxt: np.ndarray  # int64[depths]: the next child to search
    moved: np.ndarray  # int8[depths, 2]: the two cards of the move out of depth d
    sleep: np.ndarray  # uint64[depths, ncells]: targets of the moves out of a cell asleep at depth d
    done: np.ndarray  # uint64[depths, ncells]: and searched there
    cur: np.ndarray  # uint64[words]: the wide key of the current state, kept move by move (empty: one-word keys)
    key: np.ndarray  # uint64[words]: a key being looked up
    packed: np.ndarray  # uint64[depths]: one-word keys: the packed labels at depth d
    child_key: np.ndarray  # uint64[depths, width]: one-word keys of the children
    isles: Islands | None  # Island Merge: the island each depth works on (None: not Island Merge)
    plan: MemoPlan  # how the search keys and stores its states
    at: np.ndarray  # int64[8]: ``_search``'s place (DEPTH ... FROZEN) and what it learned (DEEPEST ... HITS)
    keys: np.ndarray  # float64[depths, 53]: ``ORDER_LATER``: each target card's score at depth d, and the highest
    later: np.ndarray  # int64[depths]: 1 while the children at depth d are not all in their place (``_place_next``)
    since: np.ndarray  # int64[depths, 7]: ``GATHER_NODES``: the columns ENTERED ... ON_LEFT (``gather``)


@njit(cache=True, nogil=True)
def children_width(ncells, rows, cols):
    """The most children a node of a ``rows`` x ``cols`` grid may have (``ncells`` cells), plus one."""
    return ncells * min(ncells - 1, rows + cols - 2) + 1


@njit(cache=True, nogil=True)
def new_stack(depths, width, ncells, plan, words, isles):
    """An empty ``Stack`` ``depths`` deep, ``width`` children a node, keys of ``words`` words (or ``plan.narrow``),
    with ``isles`` (``new_islands``)."""
    narrow = plan.narrow
    return Stack(
        np.empty((depths, width), dtype=np.int8),
        np.empty((depths, width), dtype=np.int8),
        np.zeros(depths, dtype=np.int64),
        np.zeros(depths, dtype=np.int64),
        np.empty((depths, 2), dtype=np.int8),
        np.zeros((depths, ncells), dtype=np.uint64),
        np.zeros((depths, ncells), dtype=np.uint64),
        np.zeros(0 if narrow else words, dtype=np.uint64),
        np.zeros(words, dtype=np.uint64),
        np.zeros(depths + 1, dtype=np.uint64),
        np.empty((depths, width) if narrow else (1, 1), dtype=np.uint64),
        isles,
        plan,
        np.array([0, 1, 0, 1, 0, 0, 0, 0], dtype=np.int64),
        np.empty((1 if narrow else depths, BEST_SCORE + 1), dtype=np.float64),
        np.zeros(depths, dtype=np.int64),
        np.zeros((depths, ON_LEFT + 1), dtype=np.int64),
    )


@njit(cache=True, nogil=True, inline="always")
def dfs(root, tables, config, budget, memo, stamp, path, share):
    """Constrained, Compatible or Ordered DFS from ``root`` (``int8[ncells]``); ``(status, nodes, length, memo,
    learned)``, ``learned`` a row of ``LEARNED_COLUMNS`` (``_learn``).

    Inlined into the one compiled entry, ``boaf.search.kernel.batch.search_states``
    (called from Python it would compile a copy of the whole search of its own).

    ``tables``, ``config``, ``budget`` and ``share`` are ``boaf.search.kernel.bundles``'
    named tuples. On ``SOLVABLE`` the moves are ``path[:length]`` as ``(source,
    target)`` cells. The memo may be grown or replaced (a table of the wrong
    width) and is returned for reuse: a wide table with a fresh ``stamp``, a
    one-word table once cleared. ``budget.cancel[0] != 0`` stops the search as
    ``UNKNOWN`` at its next node; a state that no longer fits ``max_bytes``
    stops it as ``OUT_OF_MEMORY`` (the memo is the only structure that grows).
    When the memo must grow and the deadline leaves no time for it
    (``grown_in_time``), the memo is frozen: still looked up, no longer stored
    to, so the search goes on to its deadline rather than pass it growing. Its
    answers stay exact: the memo holds only states proved unsolvable, and a state
    not stored is searched again when met again.

    On grids of at most ``NARROW_CELLS`` cells (Island Merge aside) the memo has
    one-word keys (``_narrow_key``, ``_ranked_key``) from the card labels
    (``share.labels``, ``root_labels``; empty: the root's own). A non-empty
    ``share.fill`` shares a one-word memo between threads: it never grows,
    ``fill[stamp]`` counts this search's entries (``stamp`` names the search),
    and once the table would pass three quarters full the search stops as
    ``TABLE_FULL`` (the caller grows it and searches again: every entry is a
    state proved unsolvable, so a restart keeps what was learned). Two threads
    writing one free slot at once lose one entry, which only costs a later search.
    With a wide memo a non-empty ``share.fill`` carries ``fill[stamp]``, the
    entries stored under ``stamp``, from one call to the next, so a search run
    again on its own memo (``boaf.search.restarts``) grows it when the entries of
    all its calls pass half its rows, as one search would.
    """
    ncells = root.shape[0]
    islands = config.islands is not None  # (the ``ISLANDS`` option's flag: its own copy of the search)
    narrow = ncells <= NARROW_CELLS and not islands
    words = key_words(ncells) + (1 if islands else 0)  # Island Merge keys carry the island under way
    memo = _fit_memo(memo, 1 if narrow else words + 1, budget.max_bytes)
    board = board_of(root)
    learned = np.zeros(len(LEARNED_COLUMNS), dtype=np.int64)  # (all 0 for a search that ends before its first node)
    if board.n_stacks <= 1:
        return SOLVABLE, 0, 0, memo, learned
    if root_prunable(root, tables, config.options):
        return UNSOLVABLE, 0, 0, memo, learned
    labels = share.labels
    if narrow and labels.shape[0] == 0:
        labels = np.empty(52, dtype=np.int64)
        root_labels(root, labels)
    # A search that gathers at nodes leaves 1/NODE_MEMORY_SHARE of its memory cap to those gatherings' blocks.
    gathers = not narrow and not islands and config.options & PRUNE_GATHER != 0 and not _small_budget(budget.max_nodes)
    memo_bytes = budget.max_bytes - (budget.max_bytes // NODE_MEMORY_SHARE if gathers else 0)
    max_rows = memo_bytes // memo.strides[0] if budget.max_bytes > 0 else 0
    plan = MemoPlan(narrow, islands, narrow_max_stacks(ncells), labels, share.fill, max_rows, stamp)
    cells = root.copy()
    width = children_width(ncells, tables.rows, tables.cols)
    stack = new_stack(board.n_stacks, width, ncells, plan, words, new_islands(config.islands, board.n_stacks + 1))
    if narrow:
        stack.packed[0] = _packed_labels(cells, labels)
    else:
        _plain_key(cells, stack.cur)  # (an Island Merge key's last word, the island, stays 0 here)
    resumed = not narrow and share.fill.shape[0] > 0  # a wide memo's entries so far are in ``share.fill[stamp]``
    if resumed:
        stack.at[MEMO_COUNT] = share.fill[stamp]
    scratch = new_scratch(np.int64(CUT_CACHE), width)
    if not narrow and not islands:
        options = config.options | ORDER_LATER
        if gathers:
            options |= GATHER_NODES
            resume_gathered(stack.since, share.gathered)
        config = Config(options, config.coefs, config.cutoff, config.memo_min, config.cohort, config.islands)
    at = stack.at
    per_row = 0.0  # seconds per row of the memo's last growth (``grown_in_time``)
    exhausted = False  # the search proved the root unsolvable with every child closed
    while True:
        code, length = _search(cells, tables, config, budget, stack, scratch, memo, path)
        if code == GROW:
            memo, per_row = grown_in_time(memo, stamp, budget.deadline, per_row)
            at[FROZEN] = 1 if per_row < 0 else 0  # no time to grow: search on, the memo as it is (``grown_in_time``)
        elif code == BIG:
            scratch = grown_scratch(scratch)
        elif code == OPEN and at[FRESH] == 0:  # (``GATHER_NODES``)
            won = _gather_node(cells, tables, budget, at, stack.since, stack.nxt, stack.children, path)
            if won > 0:  # the node's win is in ``path[depth:]``: the moves down to it go before
                if at[DEPTH] > 0:
                    _write_path(stack, at[DEPTH] - 1, path)
                code, length = SOLVABLE, at[DEPTH] + won
                break
        elif code == OPEN:
            opens = at[NODES] == OPEN_AFTER and config.options & PRUNE_OPEN != 0 and not _small_budget(budget.max_nodes)
            if (opens and open_block_stuck(root, tables.compat, tables.line)) or (
                config.options & PRUNE_GATHER != 0
                and gather_refutes(
                    root, tables.compat, tables.line, budget, at[NODES], config.options & GATHER_DEEP != 0
                )
            ):
                code = UNSOLVABLE  # refuted at the root, its children not all closed
                break
        else:
            if resumed:
                share.fill[stamp] = at[MEMO_COUNT]
            exhausted = code == UNSOLVABLE
            break
    if code == UNKNOWN and config.options & GATHER_NODES != 0 and share.gathered.shape[0] > 0:
        leave_gathered(stack.since, stack.nxt, stack.src, stack.dst, at[DEPTH], at[NODES], share.gathered)
    _learn(learned, stack, exhausted)
    return code, at[NODES], length, memo, learned


LEARNED_COLUMNS = ("deepest", "memo", "memo_hits", "dead_ends", "root_moves", "root_closed")
"""What a search learned by the time it ended, one row a search (``_learn``): the most moves it made down
one line of play (its fewest stacks are the root's less this), the dead states it stored in the memo,
the children it found there (known dead), the expanded states that had no child, the root's children,
and how many of them it closed (each proved dead, by search or by the memo). A search that ended before
its first node (one stack, a pruned root) learned nothing: all 0. They describe the search, never
answer it: Classify's model reads them for the states the exact path leaves open (``boaf.models.inputs``)."""


@njit(cache=True, nogil=True, inline="always")
def _learn(out, stack, exhausted):
    """Write into ``out`` the ``LEARNED_COLUMNS`` row of a search that ended with ``stack`` as it stands.

    ``exhausted``: the search ended at its root with every child tried (it proved the root
    unsolvable), so it closed them all. Otherwise the root's child under way is ``nxt[0] - 1``
    (the search is below it, or has just played it), and every child before it was closed: the
    search moves on from a child only once it is dead.
    """
    at = stack.at
    out[0], out[1], out[2], out[3] = at[DEEPEST], at[MEMO_COUNT], at[HITS], at[DEAD_ENDS]
    out[4] = stack.children[0]
    out[5] = stack.children[0] if exhausted else max(stack.nxt[0] - 1, 0)


DEPTH, NODES, MEMO_COUNT, FRESH, FROZEN = 0, 1, 2, 3, 4  # ``_search``'s place, in ``at``; FROZEN: the memo is
# looked up but no longer stored to (``dfs``: its growth would pass the deadline)
DEEPEST, DEAD_ENDS, HITS = 5, 6, 7  # and what it learned on its way (``LEARNED_COLUMNS``)
# ``PRUNE_BLOCKS`` checks the nodes of depth 0-3 (deeper it costs more than it saves), each block's search
# seeing at most this many positions, at nodes of BLOCKS_STACKS stacks or more (near a deal's root, not all
# over a small state's search).
BLOCKS_BUDGET = (1024, 1024, 64, 64)
BLOCKS_STACKS = 13
PICKS = 2  # ``ORDER_LATER``: a node's first children are placed by selection, the rest sorted at once (``_place_next``)
BIG = -3  # ``_search`` asks ``dfs`` for big caches, then to call it again
OPEN = -4  # ``_search`` asks ``dfs`` to check its root (``PRUNE_OPEN``, ``PRUNE_GATHER``), then to call it again


@lean_njit()
def _search(cells, tables, config, budget, stack, scratch, memo, path):
    """The search loop, from the place ``at``; returns ``(status, path length)`` once the search ends, or
    ``(GROW | BIG | OPEN, 0)`` when it needs what only ``dfs`` may do (allocate), with its place
    saved in ``stack.at`` so that a second call goes on from there."""
    at = stack.at
    depth, nodes, memo_count, fresh = at[DEPTH], at[NODES], at[MEMO_COUNT], at[FRESH] != 0
    board = board_of(cells)
    while True:
        if fresh:
            fresh = False
            _expand(cells, board, tables, config, stack, depth, scratch, memo)
            if stack.children[depth] == 0:
                at[DEAD_ENDS] += 1
        if stack.nxt[depth] < stack.children[depth]:
            board, verdict = _next_child(cells, board, config, stack, depth, memo, scratch)
            if verdict == SOLVED:
                at[NODES], at[MEMO_COUNT] = nodes, memo_count
                return SOLVABLE, _write_path(stack, depth, path)
            if verdict == KNOWN:
                at[HITS] += 1
                continue
            if spent(nodes, budget.max_nodes, budget.deadline, budget.cancel[0]):
                at[DEPTH], at[NODES], at[MEMO_COUNT] = depth, nodes, memo_count  # (depth: ``leave_gathered``)
                return UNKNOWN, 0
            _enter_child(stack, depth, config.options, board)
            depth += 1
            nodes += 1
            fresh = True
            if config.options & GATHER_NODES != 0 and depth <= NODE_GATHER_DEPTH:
                enter_gathered(stack.since, stack.nxt, stack.src, stack.dst, depth, nodes)
            if depth > at[DEEPEST]:
                at[DEEPEST] = depth
            if nodes == BIG_SEARCH or _opens(nodes, config.options, budget.max_nodes):
                at[DEPTH], at[NODES], at[MEMO_COUNT], at[FRESH] = depth, nodes, memo_count, 1
                return (BIG if nodes == BIG_SEARCH else OPEN), 0
        else:
            if depth == 0:
                at[NODES], at[MEMO_COUNT] = nodes, memo_count
                return UNSOLVABLE, 0
            if board.n_stacks >= config.memo_min and at[FROZEN] == 0:
                memo_count, stored = _store_dead(memo, memo_count, stack, depth, cells, board)
                if stored == GROW:
                    at[DEPTH], at[NODES], at[MEMO_COUNT], at[FRESH] = depth, nodes, memo_count, 0
                    return GROW, 0
                if stored != STORED:
                    at[NODES], at[MEMO_COUNT] = nodes, memo_count
                    return stored, 0
            depth -= 1
            board = _back(cells, board, stack, depth)
            if _gathers(config.options, stack, depth, nodes):
                at[DEPTH], at[NODES], at[MEMO_COUNT], at[FRESH] = depth, nodes, memo_count, 0
                return OPEN, 0


@lean_njit(inline="always")
def _opens(nodes, options, max_nodes):
    """True when the search checks its root once it has expanded ``nodes``: its open blocks at ``OPEN_AFTER``
    (``PRUNE_OPEN``), its gathering at ``OPEN_AFTER`` and ``GATHER_AGAIN`` (``PRUNE_GATHER``). A search whose node
    budget is under ``OPEN_MIN_BUDGET`` wants an answer fast or none (Classify's exact path, at 1,500 nodes): it
    skips open blocks, which would cost it more than the states they settle (up to ``OPEN_TOTAL`` positions, ~1
    ms on mid-game states, close to Classify's whole single-call p99, which ``boaf tune-budget`` prints), and
    gathers once, at ``OPEN_AFTER``, with the joins of half its budget (``gather_refutes``)."""
    if _small_budget(max_nodes):
        return nodes == OPEN_AFTER and options & PRUNE_GATHER != 0
    if nodes == OPEN_AFTER:
        return options & (PRUNE_OPEN | PRUNE_GATHER) != 0
    return nodes == GATHER_AGAIN and options & PRUNE_GATHER != 0


@lean_njit(inline="always")
def _gathers(options, stack, depth, nodes):
    """True when the node at ``depth``, just returned to with children left, is to be gathered (``GATHER_NODES``):
    its subtree has reached the size ``stack.since`` holds for it (``_gather_node``)."""
    return (
        options & GATHER_NODES != 0
        and depth <= NODE_GATHER_DEPTH
        and nodes - stack.since[depth, ENTERED] >= stack.since[depth, WAIT]
        and stack.nxt[depth] < stack.children[depth]
    )


@njit(cache=True, nogil=True)
def _gather_node(cells, tables, budget, at, since, nxt, children, path):
    """Gather the node at ``at[DEPTH]``, the state ``cells``, whose subtree has grown big
    (``gather.gather_node``): close it when no block holds all its cards; when one does, write the moves of its
    win into ``path`` from row ``at[DEPTH]`` on and return how many (else 0). ``at``, ``since``, ``nxt`` and
    ``children`` are the ``Stack``'s (passed apart, not the ``Stack``: Island Merge's has another type, and
    would compile a copy).

    *Exact*: a state that no block holds has no win (``gather``'s proof holds
    for any state), so closing the node, which then is stored in the memo as
    dead, changes no answer; a block of all its cards is a win from it, whose
    moves follow the moves down to it (``dfs`` writes those, and ``solve``
    replays the whole line before it answers). A node whose gathering gives up
    is searched on as before. Its next gathering waits until its subtree is
    ``NODE_GATHER_GROWTH`` (2) times as big, so the work a node's gatherings
    take is at most twice its last one's, which is ``NODE_WORK_PER_NODE``
    units for each node of its subtree.
    """
    depth = at[DEPTH]
    subtree = at[NODES] - since[depth, ENTERED]
    since[depth, WAIT] = subtree * NODE_GATHER_GROWTH
    found = gather_node(cells, tables.compat, tables.line, budget, subtree, path[depth:])
    if found == REFUTED:
        nxt[depth] = children[depth]
    return max(found, 0)


KNOWN, NEW, SOLVED = 0, 1, 2  # what ``_next_child`` found


@lean_njit(inline="always")
def _expand(cells, board, tables, config, stack, depth, scratch, memo):
    """Generate the children of the node at ``depth`` (Island Merge keeps those inside its island), with their
    one-word keys fetched ahead."""
    src, dst = stack.src[depth], stack.dst[depth]
    count = np.int64(0)
    budget = BLOCKS_BUDGET[depth] if depth < len(BLOCKS_BUDGET) and board.n_stacks >= BLOCKS_STACKS else 0
    if budget == 0 or config.options & PRUNE_BLOCKS == 0 or not _stuck_block(cells, board, tables, scratch, budget):
        count = generate(cells, board, tables, config, src, dst, stack.sleep[depth], scratch)
    stack.later[depth] = 0
    if config.options & ORDER_LATER != 0 and ordered(config, board.n_stacks, count):
        stack.later[depth] = 1
        keys = stack.keys[depth]
        for y in range(BEST_SCORE + 1):
            keys[y] = scratch.scores[y]
    if stack.plan.islands:
        count = _enter_island(
            cells, board.present, tables.compat, stack.isles, depth, src[:count], dst[:count], scratch.graph
        )
    stack.children[depth] = count
    stack.nxt[depth] = 0
    plan = stack.plan
    if plan.narrow and config.memo_min <= board.n_stacks - 1 <= plan.packed_max:
        _key_children(
            stack.packed[depth],
            board.occupied,
            cells,
            plan.labels,
            src[:count],
            dst[:count],
            memo,
            stack.child_key[depth],
        )


@lean_njit(inline="always")
def _next_child(cells, board, config, stack, depth, memo, scratch):
    """Play the next child of the node at ``depth``; returns its ``Board`` and ``SOLVED``, ``NEW``, or ``KNOWN``
    (in the memo: then it is taken back, and the parent's ``Board`` returned)."""
    if stack.later[depth] != 0:
        _place_next(cells, stack, depth, scratch.sort_work)
    i = stack.nxt[depth]
    stack.nxt[depth] += 1
    s, t = stack.src[depth, i], stack.dst[depth, i]
    if config.options & SLEEP != 0 and i > 0:
        stack.done[depth, stack.src[depth, i - 1]] |= bit(stack.dst[depth, i - 1])
    board, a, b = play(cells, stack.cur, s, t, board)
    stack.moved[depth, 0] = a
    stack.moved[depth, 1] = b
    if board.n_stacks == 1:
        return board, SOLVED
    if stack.plan.islands:
        _tag_child(stack.isles, depth, board.present, b)
    if board.n_stacks >= config.memo_min and _child_known(memo, stack, depth, i, cells, board):
        return unplay(cells, stack.cur, s, t, a, b, board), KNOWN
    return board, NEW


@lean_njit()
def _place_next(cells, stack, depth, work):
    """Put the node's next child in its place (``ORDER_LATER``): the first ``PICKS`` by selection, then the rest
    by one sort.

    The children are in generation order, and each child placed so far is the
    first of the rest under the stable sort by descending score of its target
    card (``stack.keys[depth]``). Selection takes the first child of the
    highest score among the rest and moves the children before it one place
    on, so the rest stay in generation order; the stable sort's first child is
    exactly that one. After ``PICKS`` children, ``_sort_children`` sorts the
    rest, stably. By induction the children are searched in the order
    ``generate`` would have sorted them in: the same nodes, in the same order.
    The first pick knows the highest score already (``keys[BEST_SCORE]``, the
    highest over the children's target cards, which are the cards of the
    children's targets): the first child whose target has it is the first child
    of the highest score, and the scan stops there (at the last child at the
    latest, so it never leaves the node's children).
    """
    i, count = stack.nxt[depth], stack.children[depth]
    src, dst, keys = stack.src[depth], stack.dst[depth], stack.keys[depth]
    if i >= PICKS:
        targets = U0
        for j in range(i, count):
            targets |= bit(cells[dst[j]])
        _sort_children(cells, keys, src[i:count], dst[i:count], count - i, targets, work)
        stack.later[depth] = 0
        return
    at = i
    if i == 0:
        best = keys[BEST_SCORE]
        while at + 1 < count and keys[cells[dst[at]]] != best:
            at += 1
    else:
        best = keys[cells[dst[i]]]
        for j in range(i + 1, count):
            key = keys[cells[dst[j]]]
            if key > best:
                best = key
                at = j
    s, t = src[at], dst[at]
    for j in range(at, i, -1):
        src[j] = src[j - 1]
        dst[j] = dst[j - 1]
    src[i], dst[i] = s, t


@lean_njit(inline="always")
def _back(cells, board, stack, depth):
    """Take back the move out of ``depth`` (the child it led to is done); returns the ``Board`` at ``depth``."""
    i = stack.nxt[depth] - 1
    return unplay(
        cells, stack.cur, stack.src[depth, i], stack.dst[depth, i], stack.moved[depth, 0], stack.moved[depth, 1], board
    )


@lean_njit(inline="always")
def _write_path(stack, depth, path):
    """The moves from the root down to the move just played at ``depth`` into ``path``; returns how many."""
    for d in range(depth + 1):
        path[d, 0] = stack.src[d, stack.nxt[d] - 1]
        path[d, 1] = stack.dst[d, stack.nxt[d] - 1]
    return depth + 1


@lean_njit(inline="always")
def _enter_child(stack, depth, options, board):
    """Set up depth ``depth + 1`` for the child just played from ``depth`` (``board``): its packed labels, its
    sleep set."""
    i = stack.nxt[depth] - 1
    s, t = stack.src[depth, i], stack.dst[depth, i]
    plan = stack.plan
    if plan.narrow:
        label = plan.labels[stack.moved[depth, 0]]
        stack.packed[depth + 1] = _packed_child(stack.packed[depth], board.occupied | bit(s), s, t, label)
    if options & SLEEP != 0:
        _fall_asleep(stack.sleep[depth], stack.done[depth], s, t, stack.sleep[depth + 1])
        stack.done[depth + 1, :] = U0


@lean_njit(inline="always")
def _child_known(memo, stack, depth, i, cells, board):
    """True when the memo holds the child just played (child ``i`` of depth ``depth``): it is unsolvable.

    An Island Merge child whose island is under way is looked up under its
    tagged key and its plain key (a state known unsolvable has every ``R``
    false, see ``_island_split``).
    """
    plan = stack.plan
    if plan.narrow:
        if board.n_stacks <= plan.packed_max:
            return _narrow_find(memo, stack.child_key[depth, i]) >= 0
        return _narrow_find(memo, _ranked_key(cells, plan.labels, board.occupied, cells.shape[0])) >= 0
    key = stack.key
    _copy_words(stack.cur, key)
    tag = _tag_at(stack.isles, depth + 1)
    if plan.islands and tag != U0:
        found = _memo_find(memo, plan.stamp, _island_key(key, tag)) >= 0
        key[key.shape[0] - 1] = U0
        if found:
            return True
    return _memo_find(memo, plan.stamp, key) >= 0


@lean_njit(inline="always")
def _store_dead(memo, count, stack, depth, cells, board):
    """Store the state at ``depth``, proved unsolvable; returns ``(count, STORED)``, or ``GROW`` (the memo must
    grow, then the state be stored again: ``grown_memo``), ``OUT_OF_MEMORY`` when it may not grow
    (``max_rows``), ``TABLE_FULL`` when a shared table would pass three quarters full."""
    plan = stack.plan
    if not plan.narrow:
        key = stack.key
        _copy_words(stack.cur, key)
        if plan.islands:
            _island_key(key, _tag_at(stack.isles, depth))
        return _wide_store(memo, count, plan.stamp, key, plan.max_rows)
    if board.n_stacks <= plan.packed_max:
        k = _narrow_key(stack.packed[depth], board.occupied, cells.shape[0])
    else:
        k = _ranked_key(cells, plan.labels, board.occupied, cells.shape[0])
    if plan.fill.shape[0] == 0:
        return _narrow_store(memo, count, k, plan.max_rows)
    at = _narrow_find(memo, k)
    if at < 0:
        if _narrow_full(plan.fill.sum(), memo.shape[0]):
            return count, TABLE_FULL
        memo[-1 - at, 0] = k
        plan.fill[plan.stamp] += 1
    return count, STORED
