"""Hypothesis strategies shared by the test packages."""

from __future__ import annotations

from hypothesis import strategies as st

from boaf.game import State
from boaf.game.cards import DECK_SIZE

MAX_CELLS = 52


@st.composite
def grid_shapes(draw: st.DrawFn, max_cells: int = MAX_CELLS) -> tuple[int, int]:
    """Any ``(rows, cols)`` with ``rows * cols <= max_cells``."""
    rows = draw(st.integers(1, max_cells))
    cols = draw(st.integers(1, max_cells // rows))
    return rows, cols


@st.composite
def states(draw: st.DrawFn, max_cells: int = MAX_CELLS, tall_stacks: bool = False) -> State:
    """A valid state on any grid: distinct cards in distinct cells, at least one stack."""
    rows, cols = draw(grid_shapes(max_cells))
    n = rows * cols
    k = draw(st.integers(1, n))
    cells_used = draw(st.permutations(range(n)))[:k]
    cards = draw(st.permutations(range(DECK_SIZE)))[:k]
    cells: list[int | None] = [None] * n
    for cell, card in zip(cells_used, cards, strict=True):
        cells[cell] = card
    sizes = [0 if c is None else 1 for c in cells]
    if tall_stacks:
        spare = DECK_SIZE - k
        for cell in cells_used:
            extra = draw(st.integers(0, spare))
            sizes[cell] += extra
            spare -= extra
    return State.from_cells(rows, cols, cells, sizes)
