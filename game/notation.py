"""Text and JSON forms of states and moves (SPEC §1).

Grid text: rows separated by ``/`` or newlines, cells by spaces, an empty cell
written ``--`` or ``.``. JSON: ``{"rows": R, "cols": C, "cells": [...], "sizes": [...]}``
row-major with ``null`` for an empty cell. Move text: ``XS-YD``, the top card of the
moving stack, then the top card of the stack it goes onto.

A line of input (a file of states, one a line) is grid text, the JSON form, or a
JSON object whose ``grid`` field is either. A seed range is ``A:B``, the deals
``A <= seed < B``.

Every reader returns the converted value or raises an error from ``boaf.game.errors``
that names the bad part of the input and where it is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from boaf.game.cards import Card, card_text, compatible, parse_card
from boaf.game.errors import IllegalMove, InvalidCard, InvalidSeed, InvalidState, quote
from boaf.game.state import MAX_CELLS, Move, State, cell_name
from boaf.game.validation import INT32_MAX, INT32_MIN

EMPTY_CELL_TEXT = "--"
_EMPTY_MARKS = frozenset({"--", "."})
_ROW_SPLIT = re.compile(r"\s*(?:/|\r?\n)\s*")


def parse_grid(text: str) -> State:
    """Read grid text such as ``5S 7D QS 2C/4C AD 8D 5C/…``; every stack has height 1."""
    stripped = text.strip()
    if not stripped:
        raise InvalidState("grid text is empty")
    rows = _ROW_SPLIT.split(stripped)
    width = len(rows[0].split())
    cells: list[Card | None] = []
    for r, row in enumerate(rows, start=1):
        tokens = row.split()
        if not tokens:
            raise InvalidState(f"row {r} is empty")
        if len(tokens) != width:
            raise InvalidState(f"row {r} has {len(tokens)} cells, expected {width}")
        for c, token in enumerate(tokens, start=1):
            cells.append(_read_cell(token, f"row {r}, column {c}"))
    if len(rows) * width > MAX_CELLS:
        raise InvalidState(f"grid {len(rows)}x{width} has {len(rows) * width} cells; at most {MAX_CELLS} are allowed")
    return State.from_cells(len(rows), width, cells)


def format_grid(state: State, row_separator: str = "/") -> str:
    """Grid text of ``state`` with upper-case cards, ``T`` for ten and ``--`` for empty."""
    texts = [EMPTY_CELL_TEXT if c is None else card_text(c) for c in state.cells]
    rows = (" ".join(texts[r * state.cols : (r + 1) * state.cols]) for r in range(state.rows))
    return row_separator.join(rows)


def state_from_json(data: Any) -> State:
    """Read the JSON form (already decoded, or as a string)."""
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            raise InvalidState(f"state JSON does not parse: {exc.msg} at character {exc.pos}") from exc
    if not isinstance(data, dict):
        raise InvalidState("state JSON must be an object with rows, cols and cells")
    for key in ("rows", "cols", "cells"):
        if key not in data:
            raise InvalidState(f"state JSON lacks {key!r}")
    rows, cols, raw_cells = data["rows"], data["cols"], data["cells"]
    check_rows_and_cols(rows, cols)
    if rows * cols > MAX_CELLS:
        raise InvalidState(f"grid {rows}x{cols} has {rows * cols} cells; at most {MAX_CELLS} are allowed")
    if not isinstance(raw_cells, list) or len(raw_cells) != rows * cols:
        got = len(raw_cells) if isinstance(raw_cells, list) else type(raw_cells).__name__
        raise InvalidState(f"grid {rows}x{cols} needs {rows * cols} cells, got {got}")
    cells = [_read_json_cell(value, i, cols) for i, value in enumerate(raw_cells)]
    sizes = data.get("sizes")
    if sizes is not None:
        if not isinstance(sizes, list) or not all(_is_count(s) or s == 0 for s in sizes):
            raise InvalidState("sizes must be a list of non-negative integers")
        if len(sizes) != rows * cols:
            raise InvalidState(f"grid {rows}x{cols} needs {rows * cols} stack sizes, got {len(sizes)}")
    return State.from_cells(rows, cols, cells, sizes)


def state_to_json(state: State) -> dict[str, Any]:
    """The JSON form of ``state``; ``sizes`` is included only when a stack is taller than 1."""
    data: dict[str, Any] = {
        "rows": state.rows,
        "cols": state.cols,
        "cells": [None if c is None else card_text(c) for c in state.cells],
    }
    if any(s > 1 for s in state.sizes):
        data["sizes"] = list(state.sizes)
    return data


def parse_state(text: str) -> State:
    """Read either form: JSON when the text starts with ``{``, grid text otherwise."""
    return state_from_json(text) if text.lstrip().startswith("{") else parse_grid(text)


def parse_state_line(line: str) -> State:
    """Read one line of input: grid text, the JSON form, or a JSON object whose ``grid`` field is either.

    Raises ``InvalidState`` for a blank line, JSON that does not parse, or a
    ``grid`` field that is neither text nor an object.
    """
    stripped = line.strip()
    if not stripped:
        raise InvalidState("the line is blank")
    if not stripped.startswith("{"):
        return parse_grid(stripped)
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError as exc:
        raise InvalidState(f"the line's JSON does not parse: {exc}") from exc
    if not (isinstance(data, dict) and "grid" in data):
        return state_from_json(data)
    grid = data["grid"]
    if isinstance(grid, dict):
        return state_from_json(grid)
    if not isinstance(grid, str):
        raise InvalidState(f"the grid field must be grid text or a state object, got {grid!r}")
    return parse_state(grid)


def parse_seed_range(text: str) -> range:
    """Read ``A:B`` as ``range(A, B)`` (A included, B excluded, both 32-bit signed); raises ``InvalidSeed``."""
    try:
        first, stop = (int(part) for part in text.split(":"))
    except ValueError:
        raise InvalidSeed(f"seed range {quote(text)} is not A:B with integers A < B, e.g. 0:100001") from None
    if first >= stop:
        raise InvalidSeed(f"seed range {quote(text)} is empty: A must be below B (B is excluded)")
    if first < INT32_MIN or stop - 1 > INT32_MAX:
        raise InvalidSeed(f"seed range {quote(text)} leaves the 32-bit signed range {INT32_MIN}..{INT32_MAX}")
    return range(first, stop)


def parse_move(state: State, text: str) -> Move:
    """Read move text ``XS-YD`` against ``state``; raises ``IllegalMove`` saying why it fails."""
    parts = text.strip().split("-")
    if len(parts) != 2 or not all(parts):
        raise IllegalMove(f"move {quote(text)} is not two cards joined by '-', e.g. 'JS-5S'")
    try:
        moving, onto = (parse_card(p) for p in parts)
    except InvalidCard as exc:
        raise IllegalMove(f"move {quote(text)}: {exc}") from exc
    source, target = _cell_of(state, moving, text), _cell_of(state, onto, text)
    move = Move(source, target)
    if source == target:
        raise IllegalMove(f"move {quote(text)} puts a stack onto itself")
    if not state.shares_line(source, target):
        raise IllegalMove(
            f"move {quote(text)} is not legal: {cell_name(source, state.cols)} and "
            f"{cell_name(target, state.cols)} share no row or column"
        )
    if not compatible(moving, onto):
        raise IllegalMove(f"move {quote(text)} is not legal: the cards share no suit and their ranks are not adjacent")
    return move


def format_moves(state: State, moves: Iterable[Move]) -> str:
    """Space-separated move text of ``moves`` played in order from ``state``."""
    texts = []
    for move in moves:
        texts.append(state.move_text(move))
        state = state.apply(move)
    return " ".join(texts)


def split_moves(text: str | Sequence[str]) -> list[str]:
    """Move texts from one space-separated string or an already-split sequence."""
    return text.split() if isinstance(text, str) else [t for item in text for t in item.split()]


def play(state: State, moves: str | Sequence[str]) -> State:
    """Replay ``moves`` from ``state`` and return the final state.

    An illegal or malformed move raises ``IllegalMove`` naming the move and its
    position (counted from 1) in the sequence.
    """
    texts = split_moves(moves)
    for position, text in enumerate(texts, start=1):
        try:
            state = state.apply(parse_move(state, text))
        except IllegalMove as exc:
            raise IllegalMove(f"move {position} of {len(texts)}: {exc}") from exc
    return state


def _cell_of(state: State, card: Card, move_text: str) -> int:
    try:
        return state.cells.index(card)
    except ValueError:
        raise IllegalMove(f"move {quote(move_text)}: {card_text(card)} is not on top of any stack") from None


def _read_cell(token: str, where: str) -> Card | None:
    if token in _EMPTY_MARKS:
        return None
    try:
        return parse_card(token)
    except InvalidCard as exc:
        raise InvalidState(f"{where}: {exc}") from exc


def _read_json_cell(value: Any, index: int, cols: int) -> Card | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InvalidState(f"cells[{index}] ({cell_name(index, cols)}): expected card text or null, got {value!r}")
    return _read_cell(value, f"cells[{index}] ({cell_name(index, cols)})")


def check_rows_and_cols(rows: Any, cols: Any) -> None:
    """Raise ``InvalidState`` unless ``rows`` and ``cols`` are both positive integers (as read from a request)."""
    if not (_is_count(rows) and _is_count(cols)):
        raise InvalidState(f"rows and cols must be positive integers, got {rows!r} and {cols!r}")


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1
