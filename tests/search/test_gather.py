"""``PRUNE_GATHER`` (``kernel.gather_refutes``): a state is solvable exactly when some set of all its cards can be
played into one stack; no such set, no win.

The kernel's gathering against the plain reference search on random states of
every size it decides within its joins (it must refute exactly the unsolvable
ones), its budget (the joins follow the nodes spent; a raised cancel flag or
a passed deadline stop it claiming nothing), and the FFUD deals of 0-100,000:
``ordered`` decides all eleven within 20,000 nodes, where it took 30,000-124,000
nodes without the rule, and a search of 1,500 nodes (Classify's exact path,
which gathers once, with the joins of half its budget) decides eight.
"""

from __future__ import annotations

import numpy as np

from boaf import search
from boaf.game import deal, random_states
from boaf.game.arrays import state_to_array
from boaf.search import kernel
from boaf.search.reference import is_connected, reference_solve

ORDERED = search.algorithm_named("ordered")
WITHOUT = ORDERED.without(kernel.PRUNE_GATHER, "ordered-no-gather")
FFUD = (1163, 6727, 12226, 24555, 25482, 38711, 45088, 59481, 63135, 68943, 93196)
SLOW_FFUD = (1163, 12226, 24555, 25482, 45088, 93196)  # 30,373-124,271 nodes without the rule
#: FFUDs (of deals 2,100,000,000-2,100,999,999) that gathering at GATHER_AGAIN refutes only with GATHER_DEEP's work.
DEEP_FFUD = (2100044625, 2100053066, 2100520115, 2100587191, 2100613717, 2100986386)
PLENTY = np.int64(1_000_000)  # nodes "spent": 10^8 joins, more than any state here needs


def refutes(state, after=PLENTY, cancel=0, deadline=0.0, deep=False):  # type: ignore[no-untyped-def]
    budget = kernel.Budget(0, deadline, np.array([cancel], dtype=np.int64), 0)
    tables = (kernel.compat_table(), kernel.line_table(state.rows, state.cols))
    return kernel.gather_refutes(state_to_array(state), *tables, budget, np.int64(after), deep)


def test_gathering_refutes_exactly_the_unsolvable_states() -> None:
    refuted = solvable = 0
    for rows, cols in ((3, 3), (3, 4), (4, 4)):
        for state in random_states(5, 400, rows=rows, cols=cols):
            if state.n_stacks > 11 or not is_connected(state.top_cards()):
                continue  # (a disconnected G: the search's own test; larger states: the deals below)
            answer = reference_solve(state).solvable
            assert refutes(state) is (not answer), state.cells
            refuted += not answer
            solvable += answer
    print(f"{refuted} refuted, {solvable} solvable")
    assert refuted >= 100 and solvable >= 200


def test_no_solvable_deal_is_refuted_and_the_slow_ffud_deals_are() -> None:
    for seed in range(1, 301):
        assert not refutes(deal(seed)) or search.solve(deal(seed)).status is search.UNSOLVABLE, seed
    for seed in SLOW_FFUD:
        assert refutes(deal(seed), after=kernel.GATHER_AGAIN), seed


def test_the_joins_follow_the_nodes_spent_and_a_stopped_search_claims_nothing() -> None:
    state = deal(24555)  # 48,710 joins
    assert not refutes(state, after=100)  # 10,000 joins: out of work, it claims nothing
    assert refutes(state, after=kernel.OPEN_AFTER)
    assert not refutes(deal(12226), after=kernel.OPEN_AFTER)  # 758,547 joins: only at GATHER_AGAIN
    assert not refutes(deal(12226), after=kernel.GATHER_AGAIN, cancel=1)
    assert not refutes(deal(12226), after=kernel.GATHER_AGAIN, deadline=1e-9)  # a deadline long past


def test_ordered_decides_every_ffud_deal_within_20000_nodes() -> None:
    for seed in FFUD:
        with_rule = search.solve(deal(seed), ORDERED, max_nodes=20_000)
        assert with_rule.status is search.UNSOLVABLE and with_rule.nodes <= kernel.GATHER_AGAIN, seed
        if seed in SLOW_FFUD:
            assert search.solve(deal(seed), WITHOUT, max_nodes=20_000).status is search.UNKNOWN, seed


def test_classifys_exact_path_gathers_once_with_half_its_budget_and_decides_8_ffud_deals() -> None:
    seeds = list(FFUD)
    small = search.solve_deals(seeds, ORDERED, max_nodes=1_500)
    without = search.solve_deals(seeds, WITHOUT, max_nodes=1_500)
    decided = [s for s, status in zip(seeds, small.status, strict=True) if status is search.UNSOLVABLE]
    assert decided == [1163, 6727, 24555, 25482, 59481, 63135, 68943, 93196]
    assert sum(status is search.UNSOLVABLE for status in without.status) == 4
    # 12226 needs more joins than half of any small budget gives, and a small budget gathers only once
    assert search.solve(deal(12226), ORDERED, max_nodes=kernel.OPEN_MIN_BUDGET - 1).status is search.UNKNOWN


def test_deep_gathering_refutes_ffud_deals_the_plain_one_gives_up_on() -> None:
    deep = ORDERED.deep_gathering()
    for seed in DEEP_FFUD:
        assert search.solve(deal(seed), ORDERED, max_nodes=kernel.GATHER_AGAIN).status is search.UNKNOWN, seed
        assert search.solve(deal(seed), deep, max_nodes=kernel.GATHER_AGAIN).status is search.UNSOLVABLE, seed
        assert search.solve(deal(seed)).status is search.UNSOLVABLE, seed  # without a limit, without its help
        assert refutes(deal(seed), after=kernel.GATHER_AGAIN, deep=True)
        assert not refutes(deal(seed), after=kernel.GATHER_AGAIN)


def test_deep_gathering_is_as_sound_and_works_longer_only_at_gather_again() -> None:
    for rows, cols in ((3, 4), (4, 4)):
        for state in random_states(6, 200, rows=rows, cols=cols):
            if state.n_stacks > 11 or not is_connected(state.top_cards()):
                continue
            assert refutes(state, after=kernel.GATHER_AGAIN, deep=True) is not reference_solve(state).solvable
    for seed in range(1, 301):
        if refutes(deal(seed), after=kernel.GATHER_AGAIN, deep=True):
            assert search.solve(deal(seed)).status is search.UNSOLVABLE, seed
    assert not refutes(deal(12226), after=kernel.OPEN_AFTER, deep=True)  # the first gathering: plain work
    assert not refutes(deal(DEEP_FFUD[0]), after=kernel.GATHER_AGAIN, deep=True, cancel=1)


def test_deep_gathering_is_an_option_of_the_algorithms_that_gather() -> None:
    deep = ORDERED.deep_gathering()
    assert deep.options == ORDERED.options | kernel.GATHER_DEEP and deep.memo_min == ORDERED.memo_min
    assert WITHOUT.deep_gathering() is WITHOUT
