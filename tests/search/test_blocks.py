"""``PRUNE_BLOCKS`` (``kernel.prune._stuck_block``): a block hanging from G by one edge must be able to play out.

The kernel's rule against the rule as its proof states it, written here plainly
(sets and dictionaries, no budget); every state the kernel calls stuck against
the reference search; the FFUD deals it decides; and ``ordered`` without it
against ``ordered`` on deals. ``test_pruning`` holds the rule alone, on
Compatible DFS, to the 5,000 golden states.
"""

from __future__ import annotations

import numpy as np

from boaf import search
from boaf.game import State, deal, random_states
from boaf.game.arrays import state_to_array
from boaf.game.cards import compatible
from boaf.search import kernel
from boaf.search.reference import compatibility_components, is_connected, reference_solve

ORDERED = search.algorithm_named("ordered")
WITHOUT = ORDERED.without(
    kernel.PRUNE_BLOCKS | kernel.PRUNE_OPEN | kernel.PRUNE_GATHER, "ordered-no-blocks"
)  # open blocks and gathering decide later
WIDE_MAX = 5


def test_the_kernel_states_the_rule_of_its_proof_and_every_stuck_state_is_unsolvable() -> None:
    hits = 0
    for rows, cols in ((3, 4), (4, 4)):
        for state in random_states(5, 1_500, rows=rows, cols=cols):
            if not 4 <= state.n_stacks <= 12 or not is_connected(state.top_cards()):
                continue
            stuck = kernel_stuck(state)
            assert stuck == plainly_stuck(state), state.cells
            if stuck:
                hits += 1
                assert not reference_solve(state).solvable, state.cells
    assert hits >= 150  # 293 of 1,363 such states


def test_the_rule_decides_two_ffud_deals_at_the_roots_children() -> None:
    for seed in (6727, 59481):
        with_rule = search.solve(deal(seed), ORDERED)
        without = search.solve(deal(seed), WITHOUT)
        assert with_rule.status is without.status is search.UNSOLVABLE
        assert with_rule.nodes <= 1 < 5_000 < without.nodes


def test_the_rule_changes_no_answer_on_deals() -> None:
    seeds = np.arange(-2_000, 3_000)
    with_rule = search.solve_deals(seeds, ORDERED)
    without = search.solve_deals(seeds, WITHOUT)
    assert with_rule.status_names() == without.status_names()
    assert int(np.sum(with_rule.nodes)) < int(np.sum(without.nodes))


def components(cards: set[int]) -> list[set[int]]:
    """The components of the compatibility graph on ``cards``, as sets (``boaf.search.reference``'s)."""
    return [set(part) for part in compatibility_components(list(cards))]


def kernel_stuck(state: State) -> bool:
    """``kernel.prune._stuck_block`` on one state."""
    cells = state_to_array(state)
    compat, line = kernel.compat_table(), kernel.line_table(state.rows, state.cols)
    present = sum(1 << int(c) for c in cells.tolist() if c >= 0)
    occupied = sum(1 << i for i, c in enumerate(cells.tolist()) if c >= 0)
    tables = kernel.Tables(state.rows, state.cols, compat, line, np.zeros(0, dtype=np.uint16))
    board = kernel.Board(np.uint64(occupied), np.uint64(present), np.int64(state.n_stacks))
    return bool(kernel.prune._stuck_block(cells, board, tables, kernel.new_scratch(256, 2653), np.int64(1024)))


def plainly_stuck(state: State) -> bool:
    """The rule of ``_stuck_block``'s proof: some cut vertex v, with a side S of at most ``WIDE_MAX`` cards and one
    neighbour beyond it, whose block S + v, played alone without covering v, reaches neither v alone nor, after
    one jump of v to an occupied cell outside the block in line with it, one stack."""
    cols = state.cols
    where = {card: i for i, card in enumerate(state.cells) if card is not None}

    def in_line(p: int, q: int) -> bool:
        return p // cols == q // cols or p % cols == q % cols

    for v in where:
        rest = set(where) - {v}
        neighbours = {c for c in rest if compatible(v, c)}
        for side in components(rest):
            if len(side) > WIDE_MAX or len(neighbours - side) != 1:
                continue
            block = side | {v}
            jumps = [where[c] for c in where if c not in block]
            if not plays_out({c: where[c] for c in block}, v, jumps, in_line):
                return True
    return False


def plays_out(start: dict[int, int], v: int, jumps: list[int], in_line) -> bool:  # type: ignore[no-untyped-def]
    seen: set[tuple[frozenset[tuple[int, int]], bool]] = set()

    def go(position: dict[int, int], jumped: bool) -> bool:
        key = (frozenset(position.items()), jumped)
        if key in seen:
            return False
        seen.add(key)
        if len(position) == 1 and (jumped or v in position):
            return True
        for x in position:
            for y in position:
                if x != y and (y != v or jumped) and compatible(x, y) and in_line(position[x], position[y]):
                    after = {c: p for c, p in position.items() if c != y} | {x: position[y]}
                    if go(after, jumped):
                        return True
        if not jumped and v in position:
            return any(go(position | {v: q}, True) for q in jumps if in_line(position[v], q))
        return False

    return go(start, False)
