"""Reading states for commands: a grid argument, a seed, or a file of many."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from boaf.game import BoafError, InvalidState, State, deal, parse_state
from boaf.game.notation import parse_state_line


def state_argument(grid: str | None, seed: int | None, rows: int, cols: int) -> State:
    """The state named on the command line: grid text / JSON, or a seeded deal."""
    if (grid is None) == (seed is None):
        raise InvalidState("give exactly one of GRID or --seed")
    if seed is not None:
        return deal(seed, rows, cols)
    assert grid is not None
    return parse_state(grid)


def read_state_file(path: Path) -> Iterator[tuple[int, State]]:
    """``(line number, state)`` for every non-blank line; a bad line raises naming its number."""
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield number, parse_state_line(line)
            except BoafError as exc:
                raise InvalidState(f"{path}:{number}: {exc}") from exc
