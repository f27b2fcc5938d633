"""Kahn's classes and 3-heuristic against his published values."""

from __future__ import annotations

import pytest

from boaf.features import DealClass, classify_states, kahn_class, sieve, state_features, three_heuristic
from boaf.features.kahn import deal_array
from boaf.game import InvalidSeed, deal, parse_grid
from boaf.game.arrays import states_to_array

# Kahn's Table 3 and the four later FFUDs: every FFUD below 100,000.
KAHN_FFUDS = [1163, 6727, 12226, 24555, 25482, 38711, 45088, 59481, 93196]
TABLE_3 = {1163: (38, 5, 88), 6727: (40, 28, 104), 12226: (41, 32, 76), 24555: (41, 0, 74), 25482: (40, 80, 94)}


@pytest.mark.parametrize("seed", list(TABLE_3))
def test_published_pair_count_determinant_and_zeros(seed: int) -> None:
    f = state_features(deal(seed))
    assert (f["flockability"], f["adjacency_det"], f["a2_zeros"]) == TABLE_3[seed]


def test_deal_1163_is_connected_and_flagged() -> None:
    f = state_features(deal(1163))
    assert kahn_class(f) is DealClass.CONNECTED
    assert three_heuristic(f)


@pytest.mark.parametrize(
    ("grid", "expected"),
    [
        ("AC 2C/KD 5H", DealClass.OBUD),  # 5H matches nothing
        ("AC 2C/KD QD", DealClass.SFUD),  # two flocks of two
        ("AC 2C/3C 4C", DealClass.CONNECTED),
        ("AC", DealClass.CONNECTED),  # one stack is solved, not an odd bird
    ],
)
def test_classes(grid: str, expected: DealClass) -> None:
    assert classify_states([parse_grid(grid)]) == [expected]


def test_three_heuristic_needs_sixteen_stacks() -> None:
    f = dict(state_features(deal(1163)), n_stacks=15)
    assert not three_heuristic(f)


def test_deal_array_equals_the_game_deals() -> None:
    seeds = [0, 1, 1163, 2**31 - 1, -5]
    assert (deal_array(seeds) == states_to_array([deal(s) for s in seeds])).all()


def test_sieve_on_the_first_30000_deals_flags_table_3() -> None:
    result = sieve(range(30_000))
    assert set(TABLE_3) <= set(result.flagged)
    assert 1264 in result.sfud
    assert len(result.obud) + len(result.sfud) + len(result.connected) == 30_000
    assert set(result.flagged) <= set(result.connected)


def test_deal_array_refuses_seeds_beyond_32_bits() -> None:
    with pytest.raises(InvalidSeed, match="seed 2147483648 is outside"):
        deal_array([0, 2**31])
