"""Cards: text, ranks, suits and compatibility."""

from __future__ import annotations

import pytest

from boaf.game import InvalidCard, card_rank, card_suit, card_text, compatible, parse_card
from boaf.game.cards import CARD_TEXTS, COMPATIBLE_MASKS


@pytest.mark.parametrize(
    ("text", "printed"),
    [("TS", "TS"), ("ts", "TS"), ("10s", "TS"), ("10H", "TH"), ("ac", "AC"), (" kd ", "KD"), ("2H", "2H")],
)
def test_card_text_is_read_leniently_and_printed_canonically(text: str, printed: str) -> None:
    assert card_text(parse_card(text)) == printed


def test_card_numbers_follow_the_microsoft_deck_order() -> None:
    assert [card_text(c) for c in range(6)] == ["AC", "AD", "AH", "AS", "2C", "2D"]
    assert card_rank(parse_card("KS")) == 13 and card_suit(parse_card("KS")) == 3


@pytest.mark.parametrize("text", ["", "1S", "ZS", "TX", "10", "AS2", "11S", "T"])
def test_unknown_card_text_is_rejected_by_name(text: str) -> None:
    with pytest.raises(InvalidCard, match=f"unknown card {text!r}"):
        parse_card(text)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("5S", "9S", True),  # same suit
        ("5S", "5H", True),  # same rank
        ("5S", "6D", True),  # adjacent ranks
        ("5S", "4D", True),
        ("5S", "7D", False),
        ("AS", "KD", False),  # A and K are not adjacent
        ("AS", "2D", True),
        ("QH", "KC", True),
    ],
)
def test_compatibility(a: str, b: str, expected: bool) -> None:
    assert compatible(parse_card(a), parse_card(b)) is expected
    assert compatible(parse_card(b), parse_card(a)) is expected


def test_the_card_tables_hold_card_text_and_compatible() -> None:
    assert tuple(card_text(c) for c in range(52)) == CARD_TEXTS
    for a in range(52):
        from_table = [b for b in range(52) if COMPATIBLE_MASKS[a] >> b & 1]
        assert from_table == [b for b in range(52) if b != a and compatible(a, b)]
