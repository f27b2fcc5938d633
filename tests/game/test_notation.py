"""Grid text, JSON and move text: every kind of bad input, and round trips."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from strategies import states

from boaf.game import (
    IllegalMove,
    InvalidState,
    State,
    deal,
    format_grid,
    parse_grid,
    parse_move,
    parse_state,
    play,
    state_from_json,
    state_to_json,
)

SEED_360528 = "5S 7D QS 2C/4C AD 8D 5C/QH 7C TC 3C/8C 2D 9C 3D"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("5S ZZ/4C AD", r"row 1, column 2: unknown card 'ZZ'"),
        ("5S 7D/4C 1H", r"row 2, column 2: unknown card '1H'"),
        ("5S 7D/4C 5S", r"duplicate card 5S at row 2, column 2 \(first at row 1, column 1\)"),
        ("5S 7D QS/4C AD", r"row 2 has 2 cells, expected 3"),
        ("5S 7D/4C AD 8D", r"row 2 has 3 cells, expected 2"),
        ("-- --/. --", r"no stacks: every cell is empty"),
        ("", r"grid text is empty"),
        ("5S 7D//4C AD", r"row 2 is empty"),
        ("/".join([" ".join(["--"] * 53)]), r"grid 1x53 has 53 cells; at most 52 are allowed"),
    ],
)
def test_bad_grid_text_names_what_and_where(text: str, match: str) -> None:
    with pytest.raises(InvalidState, match=match):
        parse_grid(text)


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({"rows": 2, "cols": 2, "cells": ["5S", "7D", "4C"]}, r"grid 2x2 needs 4 cells, got 3"),
        ({"rows": 1, "cols": 2, "cells": ["5S", "XX"]}, r"cells\[1\] \(row 1, column 2\): unknown card 'XX'"),
        ({"rows": 1, "cols": 2, "cells": ["5S", "5s"]}, r"duplicate card 5S at row 1, column 2"),
        ({"rows": 1, "cols": 2, "cells": [None, None]}, r"no stacks"),
        ({"rows": 8, "cols": 7, "cells": []}, r"grid 8x7 has 56 cells; at most 52"),
        ({"rows": 0, "cols": 2, "cells": []}, r"rows and cols must be positive integers"),
        ({"rows": 1, "cols": 2, "cells": ["5S", 7]}, r"cells\[1\] \(row 1, column 2\): expected card text or null"),
        ({"rows": 1, "cols": 2}, r"state JSON lacks 'cells'"),
        ({"rows": 1, "cols": 2, "cells": ["5S", "6S"], "sizes": [1]}, r"needs 2 stack sizes, got 1"),
        (
            {"rows": 1, "cols": 2, "cells": ["5S", None], "sizes": [1, 2]},
            r"empty cell at row 1, column 2 has stack size 2",
        ),
        ({"rows": 1, "cols": 2, "cells": ["5S", "6S"], "sizes": [30, 30]}, r"stack sizes add up to 60 cards"),
        ([1, 2], r"state JSON must be an object"),
    ],
)
def test_bad_json_names_what_and_where(data: object, match: str) -> None:
    with pytest.raises(InvalidState, match=match):
        state_from_json(data)


def test_unparseable_json_text_is_invalid_state() -> None:
    with pytest.raises(InvalidState, match="state JSON does not parse"):
        parse_state('{"rows": 4,')


@pytest.mark.parametrize(
    ("moves", "match"),
    [
        ("5S-7D", r"move 1 of 1: move '5S-7D' is not legal: the cards share no suit and their ranks are not adjacent"),
        (
            "5S-5C",
            r"move 1 of 1: move '5S-5C' is not legal: row 1, column 1 and row 2, column 4 share no row or column",
        ),
        ("5S-5S", r"move 1 of 1: move '5S-5S' puts a stack onto itself"),
        ("5S-QS 5S-KH", r"move 2 of 2: move '5S-KH': KH is not on top of any stack"),
        ("5S-QS QS-2C", r"move 2 of 2: move 'QS-2C': QS is not on top of any stack"),
        ("5S QS", r"move 1 of 2: move '5S' is not two cards joined by '-'"),
        ("5S-QS-2C", r"move 1 of 1: move '5S-QS-2C' is not two cards joined by '-'"),
        ("5S-ZZ", r"move 1 of 1: move '5S-ZZ': unknown card 'ZZ'"),
    ],
)
def test_illegal_or_malformed_moves_name_the_move_and_position(moves: str, match: str) -> None:
    with pytest.raises(IllegalMove, match=match):
        play(parse_grid(SEED_360528), moves)


def test_play_puts_the_moving_card_on_top() -> None:
    final = play(parse_grid(SEED_360528), "5S-QS 7D-AD")
    assert format_grid(final) == "-- -- 5S 2C/4C 7D 8D 5C/QH 7C TC 3C/8C 2D 9C 3D"
    assert final.sizes[2] == final.sizes[5] == 2 and final.n_stacks == 14


def test_grid_text_accepts_newlines_dots_lower_case_and_tens() -> None:
    state = parse_grid("5s . \n 10h --")
    assert format_grid(state) == "5S --/TH --"
    assert format_grid(state, "\n") == "5S --\nTH --"


@given(states())
def test_text_state_text_is_identity(state: State) -> None:
    flat = State.from_cells(state.rows, state.cols, state.cells)
    text = format_grid(flat)
    assert parse_grid(text) == flat
    assert format_grid(parse_grid(text)) == text


@given(states(tall_stacks=True))
def test_json_state_json_is_identity(state: State) -> None:
    data = state_to_json(state)
    assert state_from_json(json.loads(json.dumps(data))) == state
    assert state_to_json(state_from_json(data)) == data


@given(states(max_cells=20))
def test_every_legal_move_removes_one_stack_and_covers_one_card(state: State) -> None:
    tops = set(state.top_cards())
    for move in state.legal_moves():
        covered = state.cells[move.target]
        after = state.apply(move)
        assert after.n_stacks == state.n_stacks - 1
        assert set(after.top_cards()) == tops - {covered}
        assert sum(after.sizes) == sum(state.sizes)
        assert parse_move(state, state.move_text(move)) == move


def test_move_generation_order_is_sources_then_targets_row_major() -> None:
    state = deal(557593)
    texts = [state.move_text(m) for m in state.legal_moves()]
    assert texts[:5] == ["QH-9H", "9H-QH", "9H-8C", "9H-TH", "9H-TD"]
    assert len(texts) == len(set(texts))
