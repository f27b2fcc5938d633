"""Seeded deals (SPEC §2) and random states (SPEC §5, Araki's distribution)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from boaf.game.bits import shuffled_cells
from boaf.game.cards import DECK_SIZE, Card
from boaf.game.errors import InvalidSeed, InvalidState
from boaf.game.state import State, check_grid
from boaf.game.validation import INT32_MAX, INT32_MIN


def deal_cards(seed: int) -> list[Card]:
    """The Microsoft FreeCell shuffle of the deck for ``seed``, in dealing order (``boaf.game.bits.shuffled_cells``).

    The grid takes these cards row-major from the front of the list.
    """
    check_seeds([seed])
    return [int(card) for card in shuffled_cells(np.array([seed], dtype=np.int64), DECK_SIZE)[0]]


def check_seeds(seeds: Iterable[int]) -> None:
    """Raise ``InvalidSeed`` for the first seed outside the 32-bit signed range."""
    for seed in seeds:
        if not INT32_MIN <= seed <= INT32_MAX:
            raise InvalidSeed(f"seed {seed} is outside the 32-bit signed range {INT32_MIN}..{INT32_MAX}")


def deal(seed: int, rows: int = 4, cols: int = 4) -> State:
    """The seeded deal on a ``rows × cols`` grid: one card in every cell."""
    check_grid(rows, cols)
    return State.from_cells(rows, cols, deal_cards(seed)[: rows * cols])


def random_state(rng: np.random.Generator, rows: int = 4, cols: int = 4, stacks: int | None = None) -> State:
    """A random state of Araki's kind: k distinct cards in k distinct cells.

    k is uniform in ``1 … rows·cols`` unless ``stacks`` fixes it.
    """
    check_grid(rows, cols)
    n = rows * cols
    if stacks is None:
        stacks = int(rng.integers(1, n + 1))
    if not 1 <= stacks <= n:
        raise InvalidState(f"cannot place {stacks} stacks on a {rows}x{cols} grid of {n} cells")
    cards = rng.choice(DECK_SIZE, size=stacks, replace=False)
    where = rng.choice(n, size=stacks, replace=False)
    cells: list[Card | None] = [None] * n
    for cell, card in zip(where.tolist(), cards.tolist(), strict=True):
        cells[cell] = card
    return State.from_cells(rows, cols, cells)


def seeded_rng(seed: int) -> np.random.Generator:
    """numpy's generator for ``seed``, any integer: a negative seed is a stream of its own.

    numpy takes non-negative seeds only; ``-s`` seeds with the entropy ``[s, 1]``,
    which no non-negative seed gives, and a non-negative seed keeps its stream.
    """
    return np.random.default_rng(seed if seed >= 0 else [-seed, 1])


def random_states(seed: int, count: int, *, rows: int = 4, cols: int = 4, stacks: int | None = None) -> list[State]:
    """``count`` random states from one seeded generator (``seeded_rng``); the same arguments give the same states."""
    rng = seeded_rng(seed)
    return [random_state(rng, rows, cols, stacks) for _ in range(count)]
