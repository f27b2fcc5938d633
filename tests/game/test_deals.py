"""Seeded deals (SPEC §2 test vectors) and the random-state generator."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import grid_shapes

from boaf.game import InvalidSeed, InvalidState, deal, deal_cards, format_grid, random_state, random_states

SPEC_VECTORS = {
    367297990: "5S JC QH 8H/KC 6H 3H 9H/3S JS TH TS/KS 7D AH 5C",
    360528: "5S 7D QS 2C/4C AD 8D 5C/QH 7C TC 3C/8C 2D 9C 3D",
    731678: "TS AH 5C QH/AS AD 8D QC/2S 3S 2H 3D/9S TD 8S 9D",
    557593: "QH 4S 9H 8C/TC JD QS 9C/7C 9D TH 7D/8D 2C TD 7H",
}


@pytest.mark.parametrize(("seed", "grid"), SPEC_VECTORS.items())
def test_spec_test_vectors_reproduce(seed: int, grid: str) -> None:
    assert format_grid(deal(seed)) == grid


def test_other_grid_sizes_take_the_same_dealing_order() -> None:
    assert format_grid(deal(360528, 2, 3)) == "5S 7D QS/2C 4C AD"
    assert format_grid(deal(360528, 1, 1)) == "5S"


@given(seed=st.integers(-(2**31), 2**31 - 1), shape=grid_shapes())
def test_a_deal_is_distinct_cards_for_any_seed_and_grid(seed: int, shape: tuple[int, int]) -> None:
    assert sorted(deal_cards(seed)) == list(range(52))
    state = deal(seed, *shape)
    cards = state.top_cards()
    assert len(cards) == shape[0] * shape[1] == len(set(cards))


def c_style(seed: int) -> list[int]:
    """The shuffle as C computes it, on 32-bit unsigned arithmetic (a plain reference for the compiled one)."""
    deck, state = list(range(52)), seed & 0xFFFFFFFF
    for i in range(51, 0, -1):
        state = (214013 * state + 2531011) & 0xFFFFFFFF
        j = ((state & 0x7FFFFFFF) >> 16) % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck[::-1]


def test_negative_seeds_wrap_like_a_32_bit_int() -> None:
    for seed in (-1, -2, -(2**31), -123456789, 2**31 - 1):
        assert deal_cards(seed) == c_style(seed)


@given(seeds=st.lists(st.integers(-(2**31), 2**31 - 1), min_size=1, max_size=5))
@settings(deadline=None)  # the first call may load the compiled shuffle
def test_the_compiled_shuffle_deals_every_seed_of_a_batch_as_c_does(seeds: list[int]) -> None:
    from boaf.game.bits import shuffled_cells

    dealt = shuffled_cells(np.array(seeds, dtype=np.int64), 52)
    assert [row.tolist() for row in dealt] == [c_style(s) for s in seeds]


@pytest.mark.parametrize("seed", [2**31, -(2**31) - 1])
def test_seeds_outside_int32_are_rejected(seed: int) -> None:
    with pytest.raises(InvalidSeed, match=f"seed {seed} is outside the 32-bit signed range"):
        deal(seed)


def test_deal_rejects_grids_over_52_cells() -> None:
    with pytest.raises(InvalidState, match="grid 8x7 has 56 cells; at most 52"):
        deal(1, 8, 7)


def test_random_states_are_reproducible_and_span_all_sizes() -> None:
    first = random_states(7, 2000)
    assert first == random_states(7, 2000)
    assert first != random_states(8, 2000)
    assert {s.n_stacks for s in first} == set(range(1, 17))


def test_random_state_with_fixed_stack_count_on_any_grid() -> None:
    rng = np.random.default_rng(0)
    state = random_state(rng, 3, 5, stacks=9)
    assert (state.rows, state.cols, state.n_stacks) == (3, 5, 9)
    with pytest.raises(InvalidState, match="cannot place 16 stacks on a 3x5 grid of 15 cells"):
        random_state(rng, 3, 5, stacks=16)
