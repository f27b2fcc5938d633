"""The estimate (budget exceeded) against the exact analysis on states small enough for both."""

from __future__ import annotations

import pytest

from boaf.game import State, random_states
from boaf.puzzles import analyze
from boaf.puzzles.enumeration import enumerate_states
from boaf.puzzles.estimate import WIDEN, walk_for_analysis, wilson_interval


@pytest.fixture(scope="module")
def ten_card_puzzles() -> list[State]:
    found = [s for s in random_states(11, 300, stacks=10) if analyze(s).solvable]
    return found[:6]


def test_sampled_intervals_cover_the_exact_ratios(ten_card_puzzles: list[State]) -> None:
    covered, checked, halfway_covered, halfway_checked = 0, 0, 0, 0
    for state in ten_card_puzzles:
        exact = analyze(state)
        for seed in range(3):
            estimate = analyze(state, budget=int(exact.states_enumerated * 0.6), samples=60, seed=seed)
            assert not estimate.exact
            for guess, truth in zip(estimate.by_depth, exact.by_depth, strict=True):
                if guess.method != "sample":
                    continue
                hit = guess.ratio_low <= truth.ratio <= guess.ratio_high
                covered, checked = covered + hit, checked + 1
                if guess.depth == exact.halfway_depth:
                    halfway_covered, halfway_checked = halfway_covered + hit, halfway_checked + 1
    # 95% intervals: most cover, a few may not.
    assert checked >= 50 and covered / checked >= 0.9
    assert halfway_checked >= 6 and halfway_covered / halfway_checked >= 0.9


def test_estimate_keeps_exact_counts_where_it_enumerated(ten_card_puzzles: list[State]) -> None:
    state = ten_card_puzzles[0]
    exact = analyze(state)
    estimate = analyze(state, budget=int(exact.states_enumerated * 0.3), samples=40, seed=1)
    assert estimate.solvable and estimate.solution and estimate.notes
    for guess, truth in zip(estimate.by_depth, exact.by_depth, strict=True):
        if guess.method == "walk":
            assert guess.states is None and 0 < guess.ratio <= 1  # floored: the root is solvable
        else:
            assert guess.states == truth.states
        if guess.method == "exact":
            assert guess.solvable == truth.solvable
    assert any(d.method == "walk" for d in estimate.by_depth)
    again = analyze(state, budget=int(exact.states_enumerated * 0.3), samples=40, seed=1)
    assert again.by_depth == estimate.by_depth


def test_estimate_to_json_is_labelled(ten_card_puzzles: list[State]) -> None:
    data = analyze(ten_card_puzzles[1], budget=500, samples=30).to_json()
    assert data["exact"] is False
    assert {"stacks", "solvable", "by_depth", "halfway_ratio", "tension", "exact"} <= set(data)
    low, high = data["halfway_interval"]
    assert low <= data["halfway_ratio"] <= high


@pytest.mark.parametrize(
    ("successes", "n", "population", "expected"),
    [
        (5, 10, 10, (0.5, 0.5)),  # the whole population: no uncertainty
        (0, 0, None, (0.0, 1.0)),
    ],
)
def test_wilson_interval_edges(successes: int, n: int, population: int | None, expected: tuple[float, float]) -> None:
    assert wilson_interval(successes, n, population) == expected


def test_wilson_interval_narrows_with_the_finite_population() -> None:
    low, high = wilson_interval(20, 100)
    low_fpc, high_fpc = wilson_interval(20, 100, 120)
    assert low < low_fpc < 0.2 < high_fpc < high


def test_a_second_walk_without_moves_reaches_the_halfway_depth(ten_card_puzzles: list[State]) -> None:
    # Generation's walk: three times the states in the same memory, when the first walk stops short.
    for state in ten_card_puzzles[:3]:
        exact = analyze(state)
        through_halfway = sum(d.states or 0 for d in exact.by_depth[: exact.halfway_depth + 1])
        budget = through_halfway // WIDEN + 1  # the first walk stops short; three times more reach it
        assert not enumerate_states(state, budget).complete
        walk = walk_for_analysis(state, budget)
        assert walk.complete_depths > exact.halfway_depth
        assert walk.level_size(exact.halfway_depth) == exact.halfway.states


def test_an_estimate_never_keeps_more_states_than_its_budget(ten_card_puzzles: list[State]) -> None:
    # The count a server reports (states_enumerated) respects the cap it was given (issue 21).
    for state in ten_card_puzzles[:3]:
        exact = analyze(state)
        for budget in (exact.states_enumerated // WIDEN + 1, exact.states_enumerated - 1):
            estimate = analyze(state, budget=budget, samples=30, seed=2)
            assert not estimate.exact
            assert 0 < estimate.states_enumerated <= budget
