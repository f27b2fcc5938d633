"""The reference search on hand-made states, where the answer is plain to see."""

from __future__ import annotations

import pytest

from boaf.game import format_moves, parse_grid, play
from boaf.search.reference import compatibility_components, is_connected, reference_solve


@pytest.mark.parametrize(
    ("grid", "solvable"),
    [
        ("AS", True),
        ("AS 2S", True),
        ("AS --/-- 2S", False),  # compatible but never in one line
        ("AC 7H", False),  # an odd bird
        ("AC 2C/7H 8H", False),  # two flocks
        ("AS 2S 3S/-- -- --/KS -- --", True),
    ],
)
def test_small_states(grid: str, solvable: bool) -> None:
    state = parse_grid(grid)
    result = reference_solve(state)
    assert result.solvable == solvable
    assert reference_solve(state, prune_disconnected=False).solvable == solvable
    if solvable:
        assert play(state, format_moves(state, result.moves)).n_stacks == 1


def test_components_of_a_separated_flock() -> None:
    cards = parse_grid("AC 2C/7H 8H").top_cards()
    assert sorted(sorted(c) for c in compatibility_components(cards)) == [[0, 4], [26, 30]]
    assert not is_connected(cards)
    assert is_connected(cards[:2])


def test_pruning_skips_the_search_of_a_disconnected_root() -> None:
    assert reference_solve(parse_grid("AC 2C/7H 8H")).nodes == 0
    assert reference_solve(parse_grid("AC 2C/7H 8H"), prune_disconnected=False).nodes > 0
