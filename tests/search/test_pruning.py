"""The pruning rules (``PRUNE_LEAF``, ``PRUNE_ANCHOR``, ``PRUNE_FROZEN``, ``PRUNE_BLOCKS``) never change an answer.

Each rule alone (on Compatible DFS) and all of them (``ordered``) against the
reference search on 5,000 random states (the golden file; ``test_agreement``
holds ``ordered`` to it too); ``ordered`` against the unsolvable deals
0–20,000 as Compatible DFS (node for node the reference) finds them; every
external label (``test_external``); the live reference on small grids
(``test_agreement``); and each rule itself against the reference wherever it
calls a random state unsolvable.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from boaf import search
from boaf.game import State, format_grid, parse_grid, random_states
from boaf.game.arrays import state_to_array
from boaf.search import kernel
from boaf.search.algorithms import ORDERED_SUBSET_H
from boaf.search.reference import is_connected, reference_solve

DEALS = Path(__file__).resolve().parent.parent / "data" / "search" / "unsolvable_deals_0_20000.txt"
ORDERED = search.algorithm_named("ordered")
COMPATIBLE = search.algorithm_named("compatible")
VARIANTS = {
    "ordered": ORDERED,
    "leaf only": ORDERED.without(kernel.PRUNE_ANCHOR | kernel.PRUNE_FROZEN, "ordered-leaf"),
    "frozen only": search.Algorithm("compatible-frozen", COMPATIBLE.kernel, COMPATIBLE.options | kernel.PRUNE_FROZEN),
    "blocks only": search.Algorithm("compatible-blocks", COMPATIBLE.kernel, COMPATIBLE.options | kernel.PRUNE_BLOCKS),
    "subset H order": ORDERED_SUBSET_H,  # the search's other compiled copy (``Config.coefs`` not None)
}


def unsolvable_deals() -> dict[int, str]:
    rows = [line.split() for line in DEALS.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    return {int(seed): reason for seed, reason in rows}


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_rules_agree_with_the_reference_on_5000_random_states(variant: str, golden: list[tuple[bool, int]]) -> None:
    sample: list[State] = random_states(2026, 5_000)
    batch = search.solve_many(sample, VARIANTS[variant])
    assert [s == search.SOLVABLE for s in batch.status_names()] == [label for label, _ in golden]


def test_the_rules_agree_on_every_deal_from_0_to_20000() -> None:
    batch = search.solve_deals(np.arange(0, 20_001), ORDERED)
    found = {seed: batch.reasons[seed] for seed in range(20_001) if batch.status[seed] is search.UNSOLVABLE}
    assert found == unsolvable_deals()
    assert search.UNKNOWN not in batch.status


def test_a_stranded_leaf_is_unsolvable_by_the_reference_search() -> None:
    # Random states of 3 to 10 stacks whose graph is connected and whose cells link up:
    # whenever a rule calls one stranded, the plain reference search must find it unsolvable.
    hits = {False: 0, True: 0}
    for rows, cols in ((3, 3), (3, 4), (4, 4)):
        line = kernel.line_table(rows, cols)
        for state in random_states(7, 3_000, rows=rows, cols=cols):
            cells = state_to_array(state)
            occupied = np.uint64(sum(1 << i for i, c in enumerate(cells.tolist()) if c >= 0))
            if not 3 <= state.n_stacks <= 10 or not is_connected(state.top_cards()):
                continue
            if not kernel.prune._cells_linked(occupied, line):
                continue
            for anchor in (False, True):
                if stranded(cells, rows, cols, anchor):
                    hits[anchor] += 1
                    assert not reference_solve(state).solvable, format_grid(state)
    assert hits[False] >= 50 and hits[True] >= 150  # the rules do bite where the old ones do not


@pytest.mark.parametrize(
    ("grid", "leaf", "anchor"),
    [
        # JH's one neighbour 4H (out of JH's line) has one hop, onto 4D or 9S, and neither is in JH's line
        ("8D -- 9S/-- 4D 4H/JH -- --", True, True),
        # AC's one neighbour 2H is out of its line and has one other neighbour, JH: JH must end at the top
        # right or bottom left and make a last hop; from the bottom left its two hops pass through AC or 2H
        ("AC QD 8D/9D -- 8S/JH JD 2H", False, True),
        # deal 360528: QH-QS-5S in the same position (Neller 2019 on why the deal is hard)
        ("5S 7D QS 2C/4C AD 8D 5C/QH 7C TC 3C/8C 2D 9C 3D", False, True),
        # deal 1: no card of degree 1
        ("JD 2D 9H JC/5D 7H 7C 5H/KD KC 9S 5S/AD QC KH 3H", False, False),
    ],
)
def test_stranded_leaves_on_constructed_states(grid: str, leaf: bool, anchor: bool) -> None:
    state = parse_grid(grid)
    cells = state_to_array(state)
    assert (stranded(cells, state.rows, state.cols, False), stranded(cells, state.rows, state.cols, True)) == (
        leaf,
        anchor,
    )


def stranded(cells: np.ndarray, rows: int, cols: int, anchor: bool) -> bool:
    """``kernel.prune._leaf_stranded`` on one state."""
    compat, line = kernel.compat_table(), kernel.line_table(rows, cols)
    cards = [int(c) for c in cells.tolist() if c >= 0]
    present = sum(1 << c for c in cards)
    occupied = sum(1 << i for i, c in enumerate(cells.tolist()) if c >= 0)
    where = np.zeros(52, dtype=np.int64)
    for i, c in enumerate(cells.tolist()):
        if c >= 0:
            where[c] = i
    leaves = sum(1 << c for c in cards if bin(int(compat[c]) & present).count("1") == 1)
    args = (np.uint64(leaves), np.uint64(present), np.uint64(occupied), where, compat, line, anchor)
    return bool(kernel.prune._leaf_stranded(*args))


def test_a_frozen_block_is_unsolvable_by_the_reference_search() -> None:
    # Random states of 4 to 11 stacks with a connected graph: whenever the rule calls one unsolvable,
    # the plain reference search must agree.
    hits = 0
    for rows, cols in ((3, 3), (3, 4), (4, 4)):
        for state in random_states(11, 4_000, rows=rows, cols=cols):
            if not 4 <= state.n_stacks <= 11 or not is_connected(state.top_cards()):
                continue
            if frozen(state_to_array(state), rows, cols):
                hits += 1
                assert not reference_solve(state).solvable, format_grid(state)
    assert hits >= 300  # 338 in 4,648 such states


@pytest.mark.parametrize(
    ("grid", "blocked"),
    [
        # deal -4965: 5C hangs from G by its edge to 6S; 4H and 4C are compatible with 5C and each other only,
        # and none of the three is in line with another: after 6S is all that is left of the rest, 5C covers it,
        # and from no cell in 5C's row or column can 5C, 4H and 4C come down
        ("2D JS AS 5C/9D JD 4H 6S/4C TS QS 8S/7D KD 9S TD", True),
        # the same with 4H and 8S swapped: 4H is in 5C's column, so the block can move
        ("2D JS AS 5C/9D JD 8S 6S/4C TS QS 4H/7D KD 9S TD", False),
        # deal 1: no cut vertex
        ("JD 2D 9H JC/5D 7H 7C 5H/KD KC 9S 5S/AD QC KH 3H", False),
    ],
)
def test_frozen_blocks_on_constructed_states(grid: str, blocked: bool) -> None:
    state = parse_grid(grid)
    assert frozen(state_to_array(state), state.rows, state.cols) == blocked


def test_frozen_blocks_through_one_small_cache_answer_as_through_fresh_ones() -> None:
    # A search's scratch caches the small blocks' answers (``prune._block_comes_down``) from state to state;
    # two slots make blocks of different states evict each other.
    shared = kernel.new_scratch(2, 2653)
    hits = 0
    for rows, cols in ((3, 4), (4, 4)):
        for state in random_states(12, 3_000, rows=rows, cols=cols):
            if not 4 <= state.n_stacks <= 11:
                continue
            cells = state_to_array(state)
            fresh = frozen(cells, rows, cols)
            assert frozen(cells, rows, cols, shared) == fresh == frozen(cells, rows, cols, shared), format_grid(state)
            hits += fresh
    assert hits >= 100


def test_the_block_cache_answers_as_the_small_search_does() -> None:
    from boaf.search.kernel.prune import _block_comes_down, _tiny_solvable

    rng = np.random.default_rng(3)
    answers = set()
    for rows, cols in ((4, 4), (4, 13)):
        tables = kernel.Tables(rows, cols, kernel.compat_table(), kernel.line_table(rows, cols), np.zeros(0, np.uint16))
        plain = kernel.new_scratch(2, 2653)
        caches = [kernel.new_scratch(2, 2653), kernel.new_scratch(64, 2653)]  # evicting each other, and hits
        for _ in range(300):
            n = int(rng.integers(1, 5))
            block = np.zeros(12, dtype=np.int64)
            block[:n] = rng.choice(52, n, replace=False)
            block[4 : 4 + n] = rng.choice(rows * cols, n, replace=False)
            moved, swapped = block.copy(), block.copy()  # one card in another cell; another card in a cell
            moved[4 + rng.integers(n)] = rng.choice(np.setdiff1d(np.arange(rows * cols), block[4 : 4 + n]))
            swapped[rng.integers(n)] = rng.choice(np.setdiff1d(np.arange(52), block[:n]))
            for b in (block, moved, swapped, block, moved, swapped):
                expected = bool(_tiny_solvable(b, np.int64(n), tables, plain.tiny))
                for cache in caches:
                    assert bool(_block_comes_down(b, np.int64(n), tables, cache)) == expected, (b, n)
                answers.add(expected)
    assert answers == {True, False}


def frozen(cells: np.ndarray, rows: int, cols: int, scratch: kernel.Scratch | None = None) -> bool:
    """``kernel.prune._frozen_block`` on one state (with a fresh scratch, or ``scratch`` and the answers it caches)."""
    compat, line = kernel.compat_table(), kernel.line_table(rows, cols)
    present = sum(1 << int(c) for c in cells.tolist() if c >= 0)
    occupied = sum(1 << i for i, c in enumerate(cells.tolist()) if c >= 0)
    scratch = kernel.new_scratch(256, 2653) if scratch is None else scratch
    for i, c in enumerate(cells.tolist()):
        if c >= 0:
            scratch.where[c] = i
    cuts, _ = kernel.cut_vertices(np.uint64(present), compat, scratch.graph)
    tables = kernel.Tables(rows, cols, compat, line, np.zeros(0, dtype=np.uint16))
    board = kernel.Board(np.uint64(occupied), np.uint64(present), np.int64(np.count_nonzero(cells >= 0)))
    return bool(kernel.prune._frozen_block(np.uint64(cuts), board, tables, scratch))
