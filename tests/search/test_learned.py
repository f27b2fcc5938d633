"""What a search learned on its way (``BatchResult.learned``, ``LEARNED_COLUMNS``): Classify's model reads it."""

from __future__ import annotations

import numpy as np
import pytest

from boaf.game import parse_grid, random_states
from boaf.search import LEARNED_COLUMNS, SOLVABLE, UNKNOWN, UNSOLVABLE, solve_many

COLUMN = {name: i for i, name in enumerate(LEARNED_COLUMNS)}


@pytest.mark.parametrize(("rows", "cols", "nodes"), [(4, 4, 300), (5, 5, 300), (4, 13, 200)])
def test_a_states_figures_do_not_depend_on_its_batch(rows: int, cols: int, nodes: int) -> None:
    """The memo is cleared or restamped between the states of a batch, so each row is its own search's."""
    states = random_states(7, 60, rows=rows, cols=cols)
    batch = solve_many(states, max_nodes=nodes, reasons=False)
    alone = np.vstack([solve_many([s], max_nodes=nodes, reasons=False).learned for s in states])
    np.testing.assert_array_equal(batch.learned, alone)
    assert batch.learned.shape == (60, len(LEARNED_COLUMNS)) and batch.learned.dtype == np.int64


@pytest.mark.parametrize(("rows", "cols", "nodes"), [(4, 4, 200), (6, 6, 300), (4, 13, 300)])
def test_the_figures_are_bounded_by_the_search_that_found_them(rows: int, cols: int, nodes: int) -> None:
    states = random_states(8, 300, rows=rows, cols=cols)
    batch = solve_many(states, max_nodes=nodes, reasons=False)
    learned, status = batch.learned, batch.status
    stopped = np.array([s is UNKNOWN for s in status])
    assert stopped.sum() >= 5, "the budget should leave some states open"
    for i in np.flatnonzero(stopped):
        row, state = learned[i], states[i]
        # It never reached one stack (that would have solved it), and went at least one move down.
        assert 1 <= row[COLUMN["deepest"]] <= state.n_stacks - 2
        assert row[COLUMN["memo"]] <= batch.nodes[i] and row[COLUMN["dead_ends"]] <= batch.nodes[i]
        # Its root's children are legal moves, and the one under way is not closed.
        assert row[COLUMN["root_closed"]] < row[COLUMN["root_moves"]] <= len(list(state.legal_moves()))
    assert np.all(learned >= 0)
    assert learned[stopped, COLUMN["memo_hits"]].any(), "some search met a state it had proved dead"


def test_an_exhausted_search_closed_every_root_child() -> None:
    """Small unsolvable states searched to the end: every root child was proved dead."""
    states = [s for s in random_states(9, 2000, rows=3, cols=3) if s.n_stacks > 2]
    batch = solve_many(states, reasons=False)
    exhausted = [
        i
        for i, s in enumerate(batch.status)
        if s is UNSOLVABLE and batch.nodes[i] > 0 and batch.learned[i, COLUMN["root_moves"]] > 0
    ]
    assert len(exhausted) >= 10
    for i in exhausted:
        row = batch.learned[i]
        if row[COLUMN["root_closed"]] != row[COLUMN["root_moves"]]:
            # Refuted by a rule at its root before the children ran out (open blocks, gathering): never on
            # a grid this small with a search this short.
            pytest.fail(f"{states[i]}: closed {row[COLUMN['root_closed']]} of {row[COLUMN['root_moves']]}")
    solved = [i for i, s in enumerate(batch.status) if s is SOLVABLE and batch.nodes[i] > 1]
    assert solved and all(batch.learned[i, COLUMN["deepest"]] >= 1 for i in solved)


def test_a_search_that_never_started_learned_nothing() -> None:
    for state in (parse_grid("AS"), parse_grid("AS KD")):  # one stack; two incompatible cards, refuted at the root
        batch = solve_many([state], reasons=False)
        assert batch.learned.tolist() == [[0] * len(LEARNED_COLUMNS)]


def test_best_n_dfs_reports_nothing_learned() -> None:
    states = random_states(10, 20)
    batch = solve_many(states, "best-n", max_nodes=200, reasons=False)
    assert not batch.learned.any()
