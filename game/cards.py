"""Cards as small integers.

A card is ``4 * (rank - 1) + suit`` with ranks A=1 … K=13 and suits C=0, D=1, H=2,
S=3, so the integers run in the order of the Microsoft deck (AC AD AH AS 2C …).
Integers keep the search and feature kernels cheap; these functions give them
their names and text.
"""

from __future__ import annotations

from boaf.game.errors import InvalidCard, quote

RANKS = "A23456789TJQK"
SUITS = "CDHS"
DECK_SIZE = 52

Card = int


def make_card(rank: int, suit: int) -> Card:
    """The card of ``rank`` (1 … 13) and ``suit`` (0 … 3, in ``CDHS`` order)."""
    return 4 * (rank - 1) + suit


def card_rank(card: Card) -> int:
    """Rank of ``card``: A=1 … K=13."""
    return card // 4 + 1


def card_suit(card: Card) -> int:
    """Suit index of ``card``: C=0, D=1, H=2, S=3."""
    return card % 4


def compatible(a: Card, b: Card) -> bool:
    """True when ``a`` and ``b`` share a suit or have equal or adjacent ranks.

    A and K are not adjacent.
    """
    return card_suit(a) == card_suit(b) or abs(card_rank(a) - card_rank(b)) <= 1


#: Each card's text and the mask of the cards it is compatible with, for loops that
#: read them once a move (``State.replay``).
CARD_TEXTS = tuple(RANKS[c // 4] + SUITS[c % 4] for c in range(DECK_SIZE))
COMPATIBLE_MASKS = tuple(
    sum(1 << b for b in range(DECK_SIZE) if b != a and (a % 4 == b % 4 or abs(a // 4 - b // 4) <= 1))
    for a in range(DECK_SIZE)
)


def parse_card(text: str) -> Card:
    """Read card text such as ``TS``, ``ts`` or ``10s``.

    Raises ``InvalidCard`` naming the text when it is not a card.
    """
    cleaned = text.strip().upper()
    if cleaned.startswith("10"):
        cleaned = "T" + cleaned[2:]
    if len(cleaned) != 2 or cleaned[0] not in RANKS or cleaned[1] not in SUITS:
        raise InvalidCard(f"unknown card {quote(text)}: expected a rank of {RANKS} then a suit of {SUITS}")
    return make_card(RANKS.index(cleaned[0]) + 1, SUITS.index(cleaned[1]))


def card_text(card: Card) -> str:
    """Upper-case text of ``card``, with ``T`` for ten."""
    if not 0 <= card < DECK_SIZE:
        raise InvalidCard(f"card number {card} is outside 0..51")
    return RANKS[card // 4] + SUITS[card % 4]
