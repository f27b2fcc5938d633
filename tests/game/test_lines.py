"""One line of input and a seed range: the readers the CLI and the jobs share."""

from __future__ import annotations

import json

import pytest

from boaf.game import InvalidSeed, InvalidState, format_grid, state_to_json
from boaf.game.errors import BoafError
from boaf.game.notation import parse_grid, parse_seed_range, parse_state_line

GRID = "5S 7D QS 2C/4C AD 8D 5C/QH 7C TC 3C/8C 2D 9C 3D"


@pytest.mark.parametrize(
    "line",
    [
        GRID,
        f"  {GRID}\n",
        json.dumps(state_to_json(parse_grid(GRID))),
        json.dumps({"grid": GRID, "label": 1}),
        json.dumps({"grid": state_to_json(parse_grid(GRID))}),
        json.dumps({"grid": json.dumps(state_to_json(parse_grid(GRID)))}),
    ],
)
def test_every_form_of_a_line_reads_the_same_state(line: str) -> None:
    assert format_grid(parse_state_line(line)) == GRID


@pytest.mark.parametrize(
    ("line", "error", "match"),
    [
        ("   \n", InvalidState, "the line is blank"),
        ('{"grid": ', InvalidState, "the line's JSON does not parse"),
        ('{"grid": 5}', InvalidState, "the grid field must be grid text or a state object, got 5"),
        ('{"grid": "ZZ"}', BoafError, "unknown card 'ZZ'"),
        ('{"rows": 1}', InvalidState, "state JSON lacks 'cols'"),
    ],
)
def test_bad_lines_are_named(line: str, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        parse_state_line(line)


def test_seed_ranges() -> None:
    assert parse_seed_range("0:100001") == range(0, 100001)
    assert parse_seed_range("-5:-1") == range(-5, -1)
    for bad in ("5", "a:b", "3:3", "0:4294967296"):
        with pytest.raises(InvalidSeed):
            parse_seed_range(bad)
