"""Birds of a Feather: cards, grids, moves, notation and seeded deals.

This package imports nothing else from boaf; everything else imports it.

The seeded deals (``deal``, ``deal_cards``, ``random_state``, ``random_states``)
load on first use (PEP 562): they need numpy and the compiled shuffle
(``boaf.game.bits``, numba), and ``import game`` (cards, states, notation, errors)
must stay light for clients such as ``boaf.service.client``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from boaf.game.cards import RANKS, SUITS, Card, card_rank, card_suit, card_text, compatible, make_card, parse_card
from boaf.game.errors import (
    BoafError,
    Failure,
    IllegalMove,
    InvalidCard,
    InvalidInput,
    InvalidSeed,
    InvalidState,
    Stopped,
)
from boaf.game.notation import (
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
from boaf.game.state import Move, State, cell_name

if TYPE_CHECKING:
    from boaf.game.deals import deal, deal_cards, random_state, random_states

_DEALS = frozenset({"deal", "deal_cards", "random_state", "random_states"})

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


def __getattr__(name: str) -> Any:
    # start-up: the deals pull in numba (boaf.game.bits); load them only when asked for
    if name in _DEALS:
        value = getattr(import_module("boaf.game.deals"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'boaf.game' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _DEALS)
