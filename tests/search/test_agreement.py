"""The kernel and every algorithm against the reference search.

Laws: every algorithm gives the reference's answer; ``constrained`` and
``compatible`` expand exactly the reference's nodes and find its very solution
(same search order); every solution replays to one stack.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from strategies import states

from boaf import search
from boaf.game import State, format_moves, random_states
from boaf.search.reference import reference_solve

EXACT_ORDER = {"constrained": False, "compatible": True}  # algorithm -> the reference's prune_disconnected


@pytest.mark.parametrize("algorithm", ["compatible", "ordered", "best-n", "island-merge"])
def test_every_algorithm_agrees_with_the_reference_on_5000_random_states(
    algorithm: str, golden_states: list[State], golden: list[tuple[bool, int]]
) -> None:
    assert sorted({s.n_stacks for s in golden_states}) == list(range(1, 17))
    batch = search.solve_many(golden_states, algorithm)
    assert [s == search.SOLVABLE for s in batch.status_names()] == [label for label, _ in golden]
    if algorithm == "compatible":
        assert batch.nodes.tolist() == [nodes for _, nodes in golden]
    for i, state in enumerate(golden_states):
        if batch.status[i] == search.SOLVABLE:
            assert len(search.solution_moves(state, batch, i)) == state.n_stacks - 1


def test_constrained_agrees_with_the_reference_where_plain_dfs_is_affordable(
    golden_states: list[State], golden: list[tuple[bool, int]]
) -> None:
    # Without pruning, large unsolvable states cost millions of nodes; take the states of up to 11 stacks.
    chosen = [i for i, s in enumerate(golden_states) if s.n_stacks <= 11]
    assert len(chosen) >= 3_000
    batch = search.solve_many([golden_states[i] for i in chosen], "constrained")
    assert [s == search.SOLVABLE for s in batch.status_names()] == [golden[i][0] for i in chosen]


@pytest.mark.parametrize("algorithm", search.ALGORITHM_NAMES)
@given(state=states(max_cells=9))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_algorithms_agree_with_the_live_reference_on_any_small_grid(algorithm: str, state: State) -> None:
    result = search.solve(state, algorithm)
    prune = EXACT_ORDER.get(algorithm, True)
    expected = reference_solve(state, prune_disconnected=prune)
    assert (result.status == search.SOLVABLE) == expected.solvable
    if algorithm in EXACT_ORDER:
        assert result.nodes == expected.nodes
        assert result.moves == (format_moves(state, expected.moves).split() if expected.solvable else [])


@pytest.mark.parametrize(("rows", "cols", "count"), [(3, 5, 150), (2, 2, 200), (1, 4, 200), (2, 7, 120), (5, 3, 100)])
def test_other_grids_against_the_live_reference(rows: int, cols: int, count: int) -> None:
    sample = random_states(rows * 100 + cols, count, rows=rows, cols=cols)
    expected = [reference_solve(s) for s in sample]
    for algorithm in search.ALGORITHM_NAMES:
        batch = search.solve_many(sample, algorithm)
        assert [s == search.SOLVABLE for s in batch.status_names()] == [e.solvable for e in expected], algorithm
        if algorithm == "compatible":
            assert batch.nodes.tolist() == [e.nodes for e in expected]
        for i, state in enumerate(sample):
            if batch.status[i] == search.SOLVABLE:
                assert len(search.solution_moves(state, batch, i)) == state.n_stacks - 1
