"""Exact analysis by depth against hand counts and a brute-force enumeration written out here."""

from __future__ import annotations

import numpy as np
import pytest

from boaf.game import State, parse_grid, play, random_states
from boaf.puzzles import AnalysisStopped, InvalidPuzzleRequest, analyze, browne_tension
from boaf.puzzles.reference import reference_levels


def brute_force_by_depth(state: State) -> list[tuple[int, int]]:
    """(distinct states, solvable states) at each depth, by trying every move sequence."""
    by_depth: list[dict[tuple[int | None, ...], State]] = [{} for _ in range(state.n_stacks)]

    def visit(node: State, depth: int) -> None:
        by_depth[depth][node.cells] = node
        for move in node.legal_moves():
            visit(node.apply(move), depth + 1)

    def solvable(node: State) -> bool:
        return node.n_stacks == 1 or any(solvable(node.apply(m)) for m in node.legal_moves())

    visit(state, 0)
    return [(len(level), sum(solvable(s) for s in level.values())) for level in by_depth]


def counts(state: State) -> list[tuple[int | None, int | None]]:
    return [(d.states, d.solvable) for d in analyze(state).by_depth]


@pytest.mark.parametrize(
    ("grid", "expected"),
    [
        # Two compatible cards: either may go onto the other.
        ("AC 2C", [(1, 1), (2, 2)]),
        # Incompatible: no move at all.
        ("AC KD", [(1, 0), (0, 0)]),
        # Three clubs in a row: 6 ordered pairs, then the last mover on top in 6 (card, cell) ways
        # (a card never ends on top of its own cell).
        ("AC 2C 3C", [(1, 1), (6, 6), (6, 6)]),
        # KD is an odd bird: two moves between the clubs, then nothing.
        ("AC 2C KD", [(1, 0), (2, 0), (0, 0)]),
        # AC-2C share a column, 2C-3D a row: 4 first moves, each leaving AC and 3D apart or
        # incompatible, or two cards on a diagonal.
        ("AC --/2C 3D", [(1, 0), (4, 0), (0, 0)]),
    ],
)
def test_depth_counts_on_hand_checked_states(grid: str, expected: list[tuple[int, int]]) -> None:
    state = parse_grid(grid)
    assert counts(state) == expected
    assert brute_force_by_depth(state) == expected


@pytest.mark.parametrize("stacks", [2, 3, 4, 5])
def test_depth_counts_match_brute_force(stacks: int) -> None:
    for state in random_states(7 + stacks, 12, rows=3, cols=3, stacks=stacks):
        assert counts(state) == brute_force_by_depth(state)


@pytest.mark.parametrize("seed", range(6))
def test_kernel_matches_reference_enumeration(seed: int) -> None:
    for state in random_states(seed, 4, stacks=6 + seed % 3):
        levels = reference_levels(state)
        assert counts(state) == [(len(level), sum(level.values())) for level in levels]


def solvable_states(seed: int, count: int, stacks: int) -> list[State]:
    found = [s for s in random_states(seed, 40 * count, stacks=stacks) if analyze(s).solvable]
    assert len(found) >= count
    return found[:count]


@pytest.mark.parametrize("stacks", [3, 5, 7, 9])
def test_solvable_states_have_ratio_one_at_depth_zero_and_last_depth_solved(stacks: int) -> None:
    for state in solvable_states(stacks, 3, stacks):
        analysis = analyze(state)
        first, last = analysis.by_depth[0], analysis.by_depth[-1]
        assert (first.states, first.solvable, first.ratio) == (1, 1, 1.0)
        assert last.states is not None and last.states > 0 and last.solvable == last.states
        # A solution passes through a solvable state at every depth.
        assert all(d.solvable for d in analysis.by_depth)
        assert 0 < analysis.halfway_ratio <= 1


def test_unsolvable_states_have_no_solvable_state_anywhere() -> None:
    analysis = analyze(parse_grid("AC 2C 3C/-- 5C 7D/9D -- --"))
    assert not analysis.solvable and analysis.solution == ()
    assert all(d.solvable == 0 for d in analysis.by_depth) and analysis.by_depth[-1].states == 0


def test_solution_replays_and_tension_is_browne_along_it() -> None:
    state = solvable_states(3, 1, 8)[0]
    analysis = analyze(state)
    assert play(state, list(analysis.solution)).n_stacks == 1
    assert len(analysis.solution_tension) == len(analysis.solution) == state.n_stacks - 1
    assert all(0.0 <= t < 1.0 for t in analysis.solution_tension)
    # Two stacks that can join: both moves win, so no tension.
    assert analysis.solution_tension[-1] == 0.0
    node = state
    for tension, text in zip(analysis.solution_tension, analysis.solution, strict=True):
        children = [node.apply(m) for m in node.legal_moves()]
        winning = sum(brute_force_by_depth(c)[0][1] for c in children)
        assert tension == pytest.approx(1 - winning / len(children))
        node = play(node, [text])


def test_depth_tension_is_the_mean_over_solvable_states() -> None:
    analysis = analyze(parse_grid("AC 2C 3C"))
    # Every state is solvable and every move wins: no tension anywhere.
    assert [d.tension for d in analysis.by_depth] == [0.0, 0.0, None]
    assert browne_tension(1, 4) == 0.75 and browne_tension(0, 0) == 0.0


def test_one_stack_is_solved_at_depth_zero() -> None:
    analysis = analyze(parse_grid("AC --"))
    assert analysis.solvable and analysis.halfway_ratio == 1.0 and analysis.tension is None


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"budget": 0}, "budget must be a positive"),
        ({"budget": 1.5}, "budget must be a positive"),
        ({"samples": 0}, "samples must be a positive"),
    ],
)
def test_bad_requests_are_named(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(InvalidPuzzleRequest, match=match):
        analyze(parse_grid("AC 2C"), **kwargs)  # type: ignore[arg-type]


def test_cancel_flag_stops_the_enumeration() -> None:
    flag = np.ones(1, dtype=np.int64)
    with pytest.raises(AnalysisStopped, match="cancelled"):
        analyze(parse_grid("5C 5D 5H 5S/6C 6D 6H 6S/7C 7D 7H 7S"), cancel=flag)
