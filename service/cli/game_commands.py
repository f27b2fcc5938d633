"""Commands on the game itself: deals, legal moves, replay, random states."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from boaf.game import deal, format_grid, parse_state, play, random_states, state_to_json
from boaf.service.cli.app import app
from boaf.service.cli.options import Cols, Rows


@app.command("deal")
def deal_command(
    seed: Annotated[int, typer.Argument(help="Microsoft FreeCell deal number (32-bit signed).")],
    rows: Rows = 4,
    cols: Cols = 4,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON form.")] = False,
) -> None:
    """Print the seeded deal as one line of grid text (or JSON)."""
    state = deal(seed, rows, cols)
    typer.echo(json.dumps(state_to_json(state)) if as_json else format_grid(state))


@app.command("moves")
def moves_command(grid: Annotated[str, typer.Argument(help="Grid text or JSON.")]) -> None:
    """List the legal moves of a state, one move text per line."""
    state = parse_state(grid)
    for move in state.legal_moves():
        typer.echo(state.move_text(move))


@app.command("play")
def play_command(
    grid: Annotated[str, typer.Argument(help="Grid text or JSON.")],
    moves: Annotated[str, typer.Argument(help="Space-separated move text, e.g. 'JS-JC TS-9H'.")],
) -> None:
    """Replay moves from a state and print the final grid."""
    typer.echo(format_grid(play(parse_state(grid), moves)))


@app.command("random")
def random_command(
    *,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random generator.")],
    count: Annotated[int, typer.Option("--count", min=0, help="How many states.")] = 1,
    stacks: Annotated[int | None, typer.Option("--stacks", min=1, help="Stacks per state (default uniform).")] = None,
    rows: Rows = 4,
    cols: Cols = 4,
) -> None:
    """Print random states (k distinct cards in k distinct cells), one grid text per line."""
    for state in random_states(seed, count, rows=rows, cols=cols, stacks=stacks):
        typer.echo(format_grid(state))
