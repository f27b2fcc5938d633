"""Every grid shape of the benchmark against a plain exhaustive search (``benchmarks/grid_agreement.py``, small).

The benchmark's run holds 2,000 states of 6-14 cards a shape; here 150 a shape,
from the same seeds, and the plain search itself is held to the plain-Python
reference on each shape, node for node, on states small enough for Python.
"""

from __future__ import annotations

import dataclasses

import pytest

from benchmarks import grid_agreement
from benchmarks.grids import GRIDS, grid_name
from boaf import search
from boaf.search.reference import reference_solve

STATES = 150  # a shape (the benchmark: 2,000)
SLICED = 60
PYTHON_STATES, PYTHON_MOST = 60, 9  # states of a shape, of at most this many cards, also searched in Python


@pytest.mark.parametrize("grid", GRIDS, ids=grid_name)
def test_the_plain_search_is_the_python_reference_on_every_shape(grid: tuple[int, int]) -> None:
    states = grid_agreement.small_states(grid, PYTHON_STATES, PYTHON_MOST)
    batch = search.solve_many(states, "compatible")
    for i, state in enumerate(states):
        expected = reference_solve(state)
        assert (batch.status_names()[i] == search.SOLVABLE) == expected.solvable, state
        assert int(batch.nodes[i]) == expected.nodes, state


@pytest.mark.parametrize("grid", GRIDS, ids=grid_name)
def test_every_path_of_every_shape_agrees_with_the_plain_search(grid: tuple[int, int]) -> None:
    result = grid_agreement.agreement(grid, STATES, SLICED)
    assert result.differences == []
    assert 0 < result.unsolvable < STATES or grid == (1, 52)  # both answers (a full row of 1x52 is mostly won)
    assert result.sliced == SLICED


def test_a_difference_is_reported_and_fails_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    real = search.solve_many

    def wrong(states, algorithm=search.DEFAULT_ALGORITHM, *args, **kwargs):  # type: ignore[no-untyped-def]
        batch = real(states, algorithm, *args, **kwargs)
        if algorithm == "compatible":
            return batch
        flipped = search.UNSOLVABLE if batch.status[0] == search.SOLVABLE else search.SOLVABLE
        return dataclasses.replace(batch, status=(flipped, *batch.status[1:]))

    monkeypatch.setattr(search, "solve_many", wrong)
    result = grid_agreement.agreement((3, 3), 20, 0)
    assert len(result.differences) == 1 and result.differences[0].startswith("state 0 (")
    assert "DIFFER" in result.row()
    with pytest.raises(SystemExit, match="1 states answered otherwise"):
        grid_agreement.main(["--states", "20", "--sliced", "0", "--grid", "3x3"])
