"""Grids, states and moves.

A ``State`` is immutable: a grid of ``rows × cols`` cells in row-major order, each
cell empty (``None``) or holding a stack of which only the top card and the height
matter. A ``Move`` names two cells: the stack in ``source`` goes onto the stack in
``target``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from boaf.game.cards import CARD_TEXTS, COMPATIBLE_MASKS, DECK_SIZE, Card, card_text, compatible
from boaf.game.errors import IllegalMove, InvalidState

MAX_CELLS = DECK_SIZE


def cell_name(index: int, cols: int) -> str:
    """Human text for a cell: ``row 2, column 3`` (both counted from 1)."""
    return f"row {index // cols + 1}, column {index % cols + 1}"


@dataclass(frozen=True, slots=True)
class Move:
    """Put the stack in cell ``source`` onto the stack in cell ``target``."""

    source: int
    target: int


@dataclass(frozen=True, slots=True)
class State:
    """A position: ``cells[i]`` is the top card in cell ``i`` or ``None``.

    ``sizes[i]`` is the height of that stack (0 exactly when the cell is empty).
    Construction validates everything and raises ``InvalidState`` naming the
    cell at fault.
    """

    rows: int
    cols: int
    cells: tuple[Card | None, ...]
    sizes: tuple[int, ...]

    def __post_init__(self) -> None:
        _check_state(self)

    @classmethod
    def from_cells(
        cls,
        rows: int,
        cols: int,
        cells: Sequence[Card | None],
        sizes: Sequence[int] | None = None,
    ) -> State:
        """A state with stack heights defaulting to 1 on every occupied cell."""
        if sizes is None:
            sizes = [0 if c is None else 1 for c in cells]
        return cls(rows, cols, tuple(cells), tuple(sizes))

    @property
    def n_stacks(self) -> int:
        """Number of stacks (occupied cells)."""
        return sum(c is not None for c in self.cells)

    @property
    def is_solved(self) -> bool:
        """True when exactly one stack is left."""
        return self.n_stacks == 1

    def stack_cells(self) -> list[int]:
        """Indices of the occupied cells, in row-major order."""
        return [i for i, c in enumerate(self.cells) if c is not None]

    def top_cards(self) -> list[Card]:
        """Top cards of the stacks, in row-major order."""
        return [c for c in self.cells if c is not None]

    def shares_line(self, a: int, b: int) -> bool:
        """True when cells ``a`` and ``b`` are distinct and in one row or column."""
        if a == b:
            return False
        return a // self.cols == b // self.cols or a % self.cols == b % self.cols

    def is_legal(self, move: Move) -> bool:
        """True when ``move`` may be played in this state."""
        return self._legal_on(self.cells, move)

    def _legal_on(self, cells: Sequence[Card | None], move: Move) -> bool:
        # the rules of a move, on this grid, with ``cells`` as the top cards
        # (the card table, not ``compatible``: replay runs this for every move of a solution)
        n = len(cells)
        if not (0 <= move.source < n and 0 <= move.target < n):
            return False
        a, b = cells[move.source], cells[move.target]
        if a is None or b is None:
            return False
        return self.shares_line(move.source, move.target) and COMPATIBLE_MASKS[a] >> b & 1 == 1

    def replay(self, moves: Iterable[Move]) -> tuple[list[str], int]:
        """The move texts of ``moves`` played in order from this state, and the stacks left.

        Each move is checked legal where it is played (``IllegalMove`` names the first
        that is not); see ``replay_cells``.
        """
        return self.replay_cells((move.source, move.target) for move in moves)

    def replay_cells(self, moves: Iterable[Sequence[int]]) -> tuple[list[str], int]:
        """``replay`` of moves given as ``(source, target)`` cells (a search's path, without ``Move`` objects).

        The top cards are kept in one list rather than a new state a move, and the
        rules are read inline (cells in range and distinct, both occupied, in one row
        or column, cards that may join: ``_legal_on``'s), so a long solution (a
        52-card grid's) replays in microseconds.
        """
        cells = list(self.cells)
        n, cols = len(cells), self.cols
        texts = []
        for number, (source, target) in enumerate(moves, start=1):
            a = cells[source] if 0 <= source < n else None
            b = cells[target] if 0 <= target < n and target != source else None
            if (
                a is None
                or b is None
                or (source // cols != target // cols and source % cols != target % cols)
                or not COMPATIBLE_MASKS[a] >> b & 1
            ):
                raise IllegalMove(f"move {number} (cell {source} to cell {target}) is not legal here")
            texts.append(CARD_TEXTS[a] + "-" + CARD_TEXTS[b])
            cells[target] = a
            cells[source] = None
        return texts, n - cells.count(None)

    def legal_moves(self) -> Iterator[Move]:
        """Every legal move: sources in row-major order, then targets in row-major order."""
        for source, a in enumerate(self.cells):
            if a is None:
                continue
            for target, b in enumerate(self.cells):
                if b is not None and self.shares_line(source, target) and compatible(a, b):
                    yield Move(source, target)

    def apply(self, move: Move) -> State:
        """The state after ``move``; raises ``IllegalMove`` when it is not legal."""
        if not self.is_legal(move):
            raise IllegalMove(f"move from cell {move.source} to cell {move.target} is not legal here")
        cells = list(self.cells)
        sizes = list(self.sizes)
        cells[move.target] = cells[move.source]
        cells[move.source] = None
        sizes[move.target] += sizes[move.source]
        sizes[move.source] = 0
        return _trusted_state(self.rows, self.cols, tuple(cells), tuple(sizes))

    def move_text(self, move: Move) -> str:
        """Move text ``XS-YD`` for a move in this state (top card of source, then target)."""
        a, b = self.cells[move.source], self.cells[move.target]
        if a is None or b is None:
            raise IllegalMove(f"move from cell {move.source} to cell {move.target} touches an empty cell")
        return f"{card_text(a)}-{card_text(b)}"


def _trusted_state(rows: int, cols: int, cells: tuple[Card | None, ...], sizes: tuple[int, ...]) -> State:
    # Moves of a valid state give a valid state, so the search path skips the checks.
    state = object.__new__(State)
    object.__setattr__(state, "rows", rows)
    object.__setattr__(state, "cols", cols)
    object.__setattr__(state, "cells", cells)
    object.__setattr__(state, "sizes", sizes)
    return state


def check_grid(rows: int, cols: int) -> None:
    """Raise ``InvalidState`` unless ``rows`` x ``cols`` is a grid boaf can hold (1 … ``MAX_CELLS`` cells)."""
    if not (isinstance(rows, int) and isinstance(cols, int)) or rows < 1 or cols < 1:
        raise InvalidState(f"grid {rows}x{cols}: rows and columns must be at least 1")
    if rows * cols > MAX_CELLS:
        raise InvalidState(f"grid {rows}x{cols} has {rows * cols} cells; at most {MAX_CELLS} are allowed")


def _check_state(state: State) -> None:
    rows, cols = state.rows, state.cols
    check_grid(rows, cols)
    if len(state.cells) != rows * cols:
        raise InvalidState(f"grid {rows}x{cols} needs {rows * cols} cells, got {len(state.cells)}")
    if len(state.sizes) != rows * cols:
        raise InvalidState(f"grid {rows}x{cols} needs {rows * cols} stack sizes, got {len(state.sizes)}")
    seen: dict[Card, int] = {}
    for i, (card, size) in enumerate(zip(state.cells, state.sizes, strict=True)):
        if card is None:
            if size != 0:
                raise InvalidState(f"empty cell at {cell_name(i, cols)} has stack size {size}, expected 0")
            continue
        if not isinstance(card, int) or not 0 <= card < DECK_SIZE:
            raise InvalidState(f"cell at {cell_name(i, cols)} holds {card!r}, not a card")
        if card in seen:
            where, first = cell_name(i, cols), cell_name(seen[card], cols)
            raise InvalidState(f"duplicate card {card_text(card)} at {where} (first at {first})")
        seen[card] = i
        if not isinstance(size, int) or size < 1:
            raise InvalidState(f"stack at {cell_name(i, cols)} has size {size}, expected at least 1")
    if not seen:
        raise InvalidState("no stacks: every cell is empty")
    total = sum(state.sizes)
    if total > DECK_SIZE:
        raise InvalidState(f"stack sizes add up to {total} cards; a deck has {DECK_SIZE}")
