"""Birds of a Feather: cards, grids, moves, notation and seeded deals.

This package imports nothing else from boaf; everything else imports it.

It is the core that the client and the server share, so that a ``State``, a card or an error is
one class on both sides: it ships in the boaf-client distribution (``clients/python``), beside
``boaf.client`` and the stubs, and the server distribution depends on it. ``import boaf.game``
(cards, states, notation, errors) is pure Python and stays light. The seeded deals (``deal``,
``deal_cards``, ``random_state``, ``random_states``) and the compiled parts (``graph``, ``bits``,
``arrays``, ``numba_cache``) need numpy and numba, which only the server installs: the deals
load on first use (PEP 562), and the client never touches either.
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
