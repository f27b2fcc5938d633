"""Birds of a Feather: cards, grids, moves, notation and seeded deals.

This package imports nothing else from boaf; everything else imports it.
"""

from game.cards import RANKS, SUITS, Card, card_rank, card_suit, card_text, compatible, make_card, parse_card
from game.deals import deal, deal_cards, random_state, random_states
from game.errors import BoafError, Failure, IllegalMove, InvalidCard, InvalidInput, InvalidSeed, InvalidState, Stopped
from game.notation import (
    format_grid,
    format_moves,
    parse_grid,
    parse_move,
    parse_state,
    play,
    split_moves,
    state_from_json,
    state_to_json,
)
from game.state import Move, State, cell_name

__all__ = [
    "RANKS",
    "SUITS",
    "BoafError",
    "Card",
    "Failure",
    "IllegalMove",
    "InvalidCard",
    "InvalidInput",
    "InvalidSeed",
    "InvalidState",
    "Move",
    "State",
    "Stopped",
    "card_rank",
    "card_suit",
    "card_text",
    "cell_name",
    "compatible",
    "deal",
    "deal_cards",
    "format_grid",
    "format_moves",
    "make_card",
    "parse_card",
    "parse_grid",
    "parse_move",
    "parse_state",
    "play",
    "random_state",
    "random_states",
    "split_moves",
    "state_from_json",
    "state_to_json",
]
