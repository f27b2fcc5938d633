"""The compiled enumeration against the plain reference, on every code path it has.

Paths: one kernel call or depths split between threads; 16-bit places or the
32-bit retry; a budget that stops mid-way; more stacks than a key holds.
"""

from __future__ import annotations

import numpy as np
import pytest

from boaf.game import State, parse_grid, random_states
from boaf.puzzles import analyze, enumeration
from boaf.puzzles.enumeration import enumerate_states, label_states
from boaf.puzzles.reference import reference_levels


def exact_counts(state: State) -> list[tuple[int, int]]:
    walk = enumerate_states(state)
    labels = label_states(walk)
    return [(walk.level_size(d), int(labels.level_solvable[d])) for d in range(walk.depths)]


def reference_counts(state: State) -> list[tuple[int, int]]:
    return [(len(level), sum(level.values())) for level in reference_levels(state)]


def sample(seed: int, count: int, rows: int, cols: int, stacks: int) -> list[State]:
    return list(random_states(seed, count, rows=rows, cols=cols, stacks=stacks))


@pytest.mark.parametrize(
    ("rows", "cols", "stacks"),
    [(4, 4, 7), (4, 4, 9), (3, 5, 8), (5, 3, 8), (2, 7, 9), (1, 6, 6), (6, 6, 8), (4, 13, 8)],
)
def test_counts_match_the_reference_on_many_grids(rows: int, cols: int, stacks: int) -> None:
    for state in sample(rows * 100 + cols, 6, rows, cols, stacks):
        assert exact_counts(state) == reference_counts(state)


def test_levels_hold_exactly_the_reference_states() -> None:
    for state in sample(3, 5, 4, 4, 8):
        walk = enumerate_states(state)
        levels = reference_levels(state)
        for d, level in enumerate(levels):
            got = {tuple(None if c < 0 else int(c) for c in row) for row in walk.level(d)}
            assert got == set(level)
            for cells, solvable in list(level.items())[:20]:
                index = walk.locate(State.from_cells(state.rows, state.cols, list(cells)))
                assert index >= 0 and bool(label_states(walk).solvable[index]) == solvable


def test_threads_give_the_same_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    states = sample(21, 8, 4, 4, 10)
    monkeypatch.setattr(enumeration, "THREADS", 1)
    alone = [analyze(s) for s in states]
    monkeypatch.setattr(enumeration, "THREADS", 2)
    monkeypatch.setattr(enumeration, "SPLIT_AT", 8)  # split nearly every depth
    shared = [analyze(s) for s in states]
    for a, b in zip(alone, shared, strict=True):
        assert [(d.states, d.solvable) for d in a.by_depth] == [(d.states, d.solvable) for d in b.by_depth]
        # Tension sums add up in another order across threads.
        assert [d.tension for d in a.by_depth] == pytest.approx([d.tension for d in b.by_depth])
        assert a.solution == b.solution and a.solution_tension == b.solution_tension


def test_a_group_too_wide_for_16_bits_retries_wider(monkeypatch: pytest.MonkeyPatch) -> None:
    state = parse_grid("AC 2C 3C 4C/5C 6C 7C 8C/9C -- -- --")  # 9 clubs: a group of 299 states
    expected = exact_counts(state)
    monkeypatch.setattr(enumeration, "PLACE_TYPES", (np.uint8, np.uint32))
    walk = enumerate_states(state)
    assert walk.edges.dtype == np.uint32 and walk.group_size.max() > 256
    assert exact_counts(state) == expected


@pytest.mark.parametrize("threads", [1, 2])
def test_a_budget_keeps_whole_depths_only(monkeypatch: pytest.MonkeyPatch, threads: int) -> None:
    monkeypatch.setattr(enumeration, "THREADS", threads)
    monkeypatch.setattr(enumeration, "SPLIT_AT", 8)
    state = sample(5, 1, 4, 4, 10)[0]
    full = enumerate_states(state)
    budget = int(full.sizes[:4].sum()) + 1  # depth 4 does not fit
    walk = enumerate_states(state, budget)
    assert not walk.complete and walk.complete_depths == 4
    assert walk.states == budget - 1 and list(walk.sizes[:4]) == list(full.sizes[:4])
    assert (walk.level(3) == full.level(3)).all()
    with pytest.raises(ValueError, match="not enumerated"):
        walk.level(4)
    with pytest.raises(ValueError, match="complete enumeration with its moves"):
        label_states(walk)


def test_more_stacks_than_a_key_holds_are_estimated_from_the_root() -> None:
    state = sample(1, 1, 4, 5, 17)[0]
    walk = enumerate_states(state)
    assert not walk.complete and walk.complete_depths == 1 and walk.level(0).shape == (1, 20)
    analysis = analyze(state, samples=4, seed=0)
    assert not analysis.exact and analysis.by_depth[0].states == 1


def test_the_densest_twelve_card_layout_is_counted_exactly() -> None:
    # 12 clubs over three full rows: every pair may join, the most states any 12 cards reach.
    # Its depths are symmetric enough to check two by hand: 12 x 5 first moves, and at the
    # end each of the 12 cards may lie on top in any of the 11 cells it could reach last.
    walk = enumerate_states(parse_grid("AC 2C 3C 4C/5C 6C 7C 8C/9C TC JC QC/-- -- -- --"))
    assert walk.complete and walk.states == 8_322_265
    assert walk.level_size(1) == 60 and walk.level_size(11) == 132


def test_a_walk_without_moves_finds_the_same_states_and_cannot_be_labelled() -> None:
    state = sample(8, 1, 4, 4, 9)[0]
    full, bare = enumerate_states(state), enumerate_states(state, moves=False)
    assert bare.complete and bare.edges.size == 0 and list(bare.sizes) == list(full.sizes)
    assert all((bare.level(d) == full.level(d)).all() for d in range(state.n_stacks))
    with pytest.raises(ValueError, match="with its moves"):
        label_states(bare)
