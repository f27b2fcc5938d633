"""The exact path's second search: 4x4 deals left open that look like an FFUD get ``deal_nodes`` more.

It gathers with eight times the work at 8,192 nodes (``Algorithm.deep_gathering``).

The second search only decides who searches longer; what it settles is the solver's answer,
checked here against the unbudgeted solver, and it touches nothing but whole 4x4 deals.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from boaf.features import compute_features, looks_like_ffud, three_heuristic
from boaf.features.kahn import deal_array
from boaf.features.schema import FEATURE_INDEX
from boaf.game import random_states
from boaf.game.arrays import states_to_array
from boaf.models.classifier import load_classifier
from boaf.models.errors import ModelError
from boaf.models.exact_path import (
    ExactBudget,
    exact_search,
    ffud_like_deals,
    read_exact_budget,
    search_again,
    write_exact_budget,
)
from boaf.models.registry import default_root
from boaf.search import SOLVABLE, UNKNOWN, UNSOLVABLE, solve_deals

#: The FFUDs among deals 0-100,000 (Kahn 2018; a census of that range finds these eleven).
FFUD = (1163, 6727, 12226, 24555, 25482, 38711, 45088, 59481, 63135, 68943, 93196)
OPEN_AT_1500 = (12226, 38711, 45088)  # the three a 1,500-node search leaves open
#: FFUDs a plain search of 8,192 nodes leaves open and a deep-gathering one refutes (tests/search/test_gather.py).
DEEP_FFUD = (2100044625, 2100053066, 2100520115, 2100587191, 2100613717, 2100986386)
FIRST, SECOND = 1500, 8192
WITH_SECOND = ExactBudget(FIRST, deal_nodes=SECOND)


def test_the_sieve_flags_every_ffud_of_the_first_hundred_thousand_and_few_deals() -> None:
    assert looks_like_ffud(compute_features(deal_array(FFUD)).matrix).all()
    matrix = compute_features(deal_array(range(20_000))).matrix
    flagged = looks_like_ffud(matrix)
    assert 0 < flagged.sum() < 0.03 * len(flagged)
    # Looser than Kahn's 3-heuristic: every deal that flags, this flags too.
    kahn = np.array([three_heuristic({n: matrix[i, FEATURE_INDEX[n]] for n in FEATURE_INDEX}) for i in range(20_000)])
    assert kahn.any() and not np.any(kahn & ~flagged)


def test_the_second_search_settles_the_ffuds_the_first_leaves_open() -> None:
    cells = deal_array(FFUD)
    first = exact_search(cells, 4, 4, ExactBudget(FIRST))
    assert [FFUD[i] for i in np.flatnonzero(~first.exact)] == list(OPEN_AT_1500)
    both = exact_search(cells, 4, 4, WITH_SECOND)
    assert both.exact.all() and (both.p_solvable == 0).all()
    again = np.isin(FFUD, OPEN_AT_1500)
    assert (both.nodes[~again] == first.nodes[~again]).all()  # settled at first: not searched again
    assert (both.nodes[again] > FIRST).all() and (both.nodes[again] <= FIRST + SECOND).all()


def test_the_second_search_gathers_deep() -> None:
    cells = deal_array(DEEP_FFUD)
    looks = looks_like_ffud(compute_features(cells).matrix)
    assert looks.sum() >= 5
    plain = solve_deals(list(DEEP_FFUD), max_nodes=SECOND).status
    assert all(status is UNKNOWN for status in plain)
    answers = exact_search(cells, 4, 4, WITH_SECOND)
    assert answers.exact[looks].all() and (answers.p_solvable[looks] == 0).all()


def test_what_the_second_search_settles_is_the_solvers_answer() -> None:
    seeds = np.arange(0, 30_000, dtype=np.int64)
    cells = deal_array(seeds)
    first = exact_search(cells, 4, 4, ExactBudget(FIRST))
    both = exact_search(cells, 4, 4, WITH_SECOND)
    assert (both.exact >= first.exact).all()
    assert (both.p_solvable[first.exact] == first.p_solvable[first.exact]).all()
    newly = np.flatnonzero(both.exact & ~first.exact)
    assert newly.size >= 10  # the second search does settle deals here, solvable and not
    truth = solve_deals(seeds[newly]).status
    assert [s is SOLVABLE for s in truth] == (both.p_solvable[newly] == 1).tolist()
    assert {SOLVABLE, UNSOLVABLE} == set(truth)
    # Only the FFUD-like ones were searched again: the others the first left open are as they were.
    left_open = np.flatnonzero(~first.exact)
    plain = left_open[~looks_like_ffud(compute_features(cells[left_open]).matrix)]
    assert plain.size and not both.exact[plain].any()
    assert np.array_equal(both.nodes[plain], first.nodes[plain])


def test_classify_settles_what_the_exact_path_settles_computing_the_features_once() -> None:
    classifier = replace(load_classifier(), exact=WITH_SECOND)
    cells = deal_array(range(0, 30_000))
    alone = exact_search(cells, 4, 4, WITH_SECOND)
    served = classifier.classify_cells(cells, 4, 4)
    assert np.array_equal(served.exact, alone.exact) and np.array_equal(served.nodes, alone.nodes)
    assert np.array_equal(served.p_solvable[alone.exact], alone.p_solvable[alone.exact])
    assert (served.nodes > FIRST).sum() >= 10  # the second search ran, inside classify


@pytest.mark.parametrize(("rows", "cols", "fewest", "most"), [(4, 4, 2, 15), (4, 13, 16, 52), (5, 5, 9, 25)])
def test_no_other_state_is_searched_twice(rows: int, cols: int, fewest: int, most: int) -> None:
    states = [s for k in range(fewest, most + 1) for s in random_states(k, 20, rows=rows, cols=cols)]
    cells = states_to_array(states)
    first = exact_search(cells, rows, cols, ExactBudget(200))
    both = exact_search(cells, rows, cols, ExactBudget(200, deal_nodes=SECOND))
    assert np.array_equal(first.nodes, both.nodes) and np.array_equal(first.p_solvable, both.p_solvable)


def test_a_raised_cancel_flag_stops_the_second_search_claiming_nothing() -> None:
    cells = deal_array(OPEN_AT_1500)
    cancel = np.ones(1, dtype=np.int64)
    answers = exact_search(cells, 4, 4, WITH_SECOND, cancel=cancel)
    assert not answers.exact.any() and (answers.p_solvable == 0.5).all()
    assert (answers.nodes <= FIRST).all()


def test_deal_nodes_round_trips_and_is_checked(tmp_path: Path) -> None:
    write_exact_budget(tmp_path, WITH_SECOND)
    assert read_exact_budget(tmp_path).deal_nodes == SECOND
    data = json.loads((tmp_path / "exact_path.json").read_text(encoding="utf-8"))
    del data["deal_nodes"]  # a file from before the second search: none
    (tmp_path / "exact_path.json").write_text(json.dumps(data), encoding="utf-8")
    assert read_exact_budget(tmp_path).deal_nodes == 0
    data["deal_nodes"] = -1
    (tmp_path / "exact_path.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ModelError, match="deal_nodes must be 0 or more, got -1"):
        read_exact_budget(tmp_path)


def test_the_committed_model_searches_ffud_like_deals_again() -> None:
    budget = read_exact_budget(default_root())
    assert budget.deal_nodes_for(4, 4) == budget.deal_nodes > budget.max_nodes
    assert budget.deal_nodes_for(4, 13) == budget.deal_nodes_for(5, 5) == 0
    assert replace(budget, deal_nodes=0).deal_nodes_for(4, 4) == 0
    assert UNKNOWN not in solve_deals(list(OPEN_AT_1500), max_nodes=budget.max_nodes + budget.deal_nodes).status


def test_a_grid_of_sixteen_cells_that_is_not_4x4_is_never_searched_again() -> None:
    cells = deal_array(OPEN_AT_1500, rows=2, cols=8)
    features = compute_features(cells, 2, 8).matrix
    assert ffud_like_deals(cells, 2, 8, features).size == 0
    again = search_again(cells, 2, 8, features=features, budget=WITH_SECOND)
    assert not again.exact.any() and not again.nodes.any()
