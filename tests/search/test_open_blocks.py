"""``PRUNE_OPEN`` (``kernel.open_block_stuck``): a small part of G, played with the rest of the board open, must come
down.

The kernel's rule against the rule as its proof states it, written plainly
(``boaf.search.reference.play_open_block``: sets and dictionaries, no budget); every state the kernel calls
stuck against the reference search; the hard deals and the FFUD deal it decides at the
search's ``OPEN_AFTER``-th node; ``ordered`` without it against ``ordered`` on deals.
"""

from __future__ import annotations

import numpy as np

from boaf import search
from boaf.game import State, deal, random_states
from boaf.game.arrays import state_to_array
from boaf.search import kernel
from boaf.search.reference import cut_blocks, is_connected, play_open_block, reference_solve

ORDERED = search.algorithm_named("ordered")
WITHOUT = ORDERED.without(
    kernel.PRUNE_OPEN | kernel.PRUNE_GATHER, "ordered-no-open"
)  # gathering off too: it would decide 38711
SIDE_MAX = 8


def test_the_kernel_states_the_rule_of_its_proof_and_every_stuck_state_is_unsolvable() -> None:
    hits = small = 0
    for rows, cols in ((3, 4), (4, 4)):
        for state in random_states(11, 500, rows=rows, cols=cols):
            if not 4 <= state.n_stacks <= 12 or not is_connected(state.top_cards()):
                continue
            stuck = kernel_stuck(state)
            plain = plainly_stuck(state)
            if state.n_stacks <= 9:
                small += 1
                assert stuck == plain, state.cells  # small blocks stay within the budgets: the same answer
            else:
                assert plain or not stuck, state.cells  # the kernel's budgets only ever make it claim less
            if stuck:
                hits += 1
                assert not reference_solve(state).solvable, state.cells
    print(f"{hits} stuck, {small} states of at most 9 stacks")
    assert hits >= 100 and small >= 150


def test_the_rule_decides_the_hard_deals_and_an_ffud_deal_once_the_search_is_open_after_nodes() -> None:
    for seed in (-115618, -271101, 368466, 38711):
        with_rule = search.solve(deal(seed), ORDERED)
        without = search.solve(deal(seed), WITHOUT)
        assert with_rule.status is without.status is search.UNSOLVABLE
        assert with_rule.nodes == kernel.OPEN_AFTER < 40_000 < without.nodes
        assert kernel.open_block_stuck(state_to_array(deal(seed)), kernel.compat_table(), kernel.line_table(4, 4))


def test_a_search_under_the_open_after_nodes_is_unchanged_and_a_budget_still_stops_it() -> None:
    small = search.solve(deal(-115618), ORDERED, max_nodes=kernel.OPEN_AFTER - 1)
    assert small.status is search.UNKNOWN and small.nodes == kernel.OPEN_AFTER - 1
    state = deal(27363)  # solvable, past OPEN_AFTER nodes: the rule claims nothing and the search goes on
    assert search.solve(state, ORDERED).nodes == search.solve(state, WITHOUT).nodes > kernel.OPEN_AFTER


def test_a_search_of_a_small_node_budget_skips_the_rule_and_a_larger_one_runs_it() -> None:
    state = deal(-115618)
    small = search.solve(state, ORDERED, max_nodes=kernel.OPEN_MIN_BUDGET - 1)
    assert small.status is search.UNKNOWN and small.nodes == kernel.OPEN_MIN_BUDGET - 1
    large = search.solve(state, ORDERED, max_nodes=kernel.OPEN_MIN_BUDGET)
    assert large.status is search.UNSOLVABLE and large.nodes == kernel.OPEN_AFTER


def test_the_rule_changes_no_answer_on_deals() -> None:
    seeds = np.arange(36_000, 41_000)  # with the FFUD deal 38711
    with_rule = search.solve_deals(seeds, ORDERED)
    without = search.solve_deals(seeds, WITHOUT)
    assert with_rule.status_names() == without.status_names()
    assert int(np.sum(with_rule.nodes)) < int(np.sum(without.nodes))


def test_larger_grids_are_left_to_the_search() -> None:
    state = deal(158, 4, 13)
    cells = state_to_array(state)
    assert not kernel.open_block_stuck(cells, kernel.compat_table(), kernel.line_table(4, 13))


def kernel_stuck(state: State) -> bool:
    """``kernel.open_block_stuck`` on one state."""
    cells = state_to_array(state)
    return bool(kernel.open_block_stuck(cells, kernel.compat_table(), kernel.line_table(state.rows, state.cols)))


def plainly_stuck(state: State) -> bool:
    """The rule of ``_plays_out_open``'s proof: some block, a component C of G minus one or two cards with at most
    ``SIDE_MAX`` cards together with its neighbours, leaving cards outside, cannot come down with the rest open."""
    return any(not play_open_block(state, block).comes_down for block in cut_blocks(state, side_max=SIDE_MAX))
