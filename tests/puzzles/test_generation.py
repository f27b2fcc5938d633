"""Generation: seeded, solvable, the requested number of cards; energies by name."""

from __future__ import annotations

import numpy as np
import pytest

from boaf.game import play, random_states
from boaf.puzzles import GenerationFailed, InvalidPuzzleRequest
from boaf.puzzles.energy import (
    DEFAULT_ENERGY,
    ENERGIES,
    UNSOLVABLE_ENERGY,
    PuzzleProbe,
    halfway_energy,
    halfway_energy_strict,
)
from boaf.puzzles.generation import GENERATION_BUDGET, default_iterations, generate, local_step, ranking_depth
from boaf.search import SOLVABLE, solve


@pytest.mark.parametrize(("cards", "seed"), [(2, 0), (3, 1), (5, 2), (6, 3), (8, 4), (10, 5)])
def test_generated_puzzles_are_solvable_with_the_requested_cards(cards: int, seed: int) -> None:
    puzzle = generate(cards, seed=seed, iterations=40)
    assert puzzle.state.n_stacks == cards
    assert solve(puzzle.state).status == SOLVABLE
    assert play(puzzle.state, list(puzzle.solution)).n_stacks == 1
    assert 0 < puzzle.halfway_ratio <= 1 and puzzle.halfway_exact


def test_generation_is_reproducible_from_its_seed() -> None:
    first, second = generate(7, seed=42, iterations=60), generate(7, seed=42, iterations=60)
    assert (first.state, first.energy, first.solution) == (second.state, second.energy, second.solution)
    other = generate(7, seed=43, iterations=60)
    assert other.state != first.state


def test_sixteen_cards_use_the_sampled_halfway_ratio() -> None:
    puzzle = generate(16, seed=1, iterations=3, budget=20_000, samples=30, analysis_budget=20_000)
    assert puzzle.state.n_stacks == 16 and not puzzle.halfway_exact
    assert solve(puzzle.state).status == SOLVABLE and 0 < puzzle.halfway_ratio <= 1
    low, high = puzzle.halfway_interval
    assert low <= puzzle.halfway_ratio <= high


def test_large_puzzles_are_ranked_at_a_shallower_depth() -> None:
    assert [ranking_depth(k) for k in (4, 12, 14, 15, 16)] == [2, 6, 7, 6, 6]
    state = next(s for s in random_states(4, 50, stacks=16) if solve(s).status == SOLVABLE)
    probe = PuzzleProbe(state, GENERATION_BUDGET, 40, 0, ranking_depth=ranking_depth(16))
    assert probe.enumeration.complete_depths == 7
    assert probe.ranking_ratio == probe.ratio(6) and 0 < probe.ranking_ratio <= 1
    shallow = PuzzleProbe(state, 20_000, 40, 0, ranking_depth=6)  # too small a budget to reach depth 6
    deepest = shallow.enumeration.complete_depths - 1
    assert deepest < 6 and shallow.ranking_ratio == shallow.ratio(deepest)


@pytest.mark.parametrize("name", sorted(ENERGIES))
def test_every_energy_generates_a_solvable_puzzle(name: str) -> None:
    puzzle = generate(6, seed=9, iterations=30, energy=name)
    assert puzzle.energy_name == name
    assert solve(puzzle.state).status == SOLVABLE


def test_the_default_energy_is_the_papers_iteration_four() -> None:
    assert ENERGIES[DEFAULT_ENERGY] is halfway_energy
    for state in random_states(3, 30, stacks=6):
        probe = PuzzleProbe(state, 10_000, 50, 0)
        if not probe.solvable:
            assert halfway_energy(probe) == UNSOLVABLE_ENERGY  # as printed
            assert halfway_energy_strict(probe) == UNSOLVABLE_ENERGY * 7  # above any solvable 6-card puzzle
            continue
        f = probe.features
        expected = 1000 * probe.halfway_ratio * 6
        expected -= 10 * (f["rank_clusters"] > 1 and f["dominant_suit_ratio"] < 0.5)
        expected -= 10 * (2 <= f["avg_flockability"] <= 4)
        assert halfway_energy(probe) == halfway_energy_strict(probe) == pytest.approx(expected)


def test_local_steps_keep_the_cards_distinct_and_their_number() -> None:
    rng = np.random.default_rng(0)
    for state in random_states(5, 20, stacks=9):
        for _ in range(20):
            state = local_step(state, rng)
            assert state.n_stacks == 9 and len(set(state.top_cards())) == 9


def test_paper_iterations_by_size() -> None:
    assert [default_iterations(k) for k in (4, 9, 10, 12, 13, 16)] == [2500, 2500, 800, 800, 50, 50]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"cards": 1}, InvalidPuzzleRequest, "cards must be 2..16"),
        ({"cards": 17}, InvalidPuzzleRequest, "cards must be 2..16"),
        ({"cards": 5, "iterations": -1}, InvalidPuzzleRequest, "iterations must be"),
        ({"cards": 5, "energy": "nope"}, InvalidPuzzleRequest, "unknown energy 'nope'"),
        ({"cards": 2, "rows": 1, "cols": 16, "iterations": 0, "seed": 3}, GenerationFailed, "no solvable 2-card"),
    ],
)
def test_bad_requests(kwargs: dict[str, object], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        generate(**kwargs)  # type: ignore[arg-type]
