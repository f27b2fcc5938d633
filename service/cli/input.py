"""Reading states for commands: a grid argument, a seed, or a file of many."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from game import BoafError, InvalidState, State, deal, parse_state, state_from_json


def state_argument(grid: str | None, seed: int | None, rows: int, cols: int) -> State:
    """The state named on the command line: grid text / JSON, or a seeded deal."""
    if (grid is None) == (seed is None):
        raise InvalidState("give exactly one of GRID or --seed")
    if seed is not None:
        return deal(seed, rows, cols)
    assert grid is not None
    return parse_state(grid)


def read_state_line(line: str) -> State:
    """A state from one line of an input file: grid text, or a JSON object with a ``grid`` field."""
    stripped = line.strip()
    if stripped.startswith("{"):
        data = json.loads(stripped)
        if isinstance(data, dict) and "grid" in data:
            grid = data["grid"]
            return state_from_json(grid) if isinstance(grid, dict) else parse_state(str(grid))
        return state_from_json(data)
    return parse_state(stripped)


def read_state_file(path: Path) -> Iterator[tuple[int, State]]:
    """``(line number, state)`` for every non-blank line; a bad line raises naming its number."""
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield number, read_state_line(line)
            except (BoafError, json.JSONDecodeError) as exc:
                raise InvalidState(f"{path}:{number}: {exc}") from exc
