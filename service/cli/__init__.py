"""The ``boaf`` command line.

Each group of commands lives in its own module and registers itself on ``app``.
Bad input (any ``game.BoafError``) ends the command with exit status 2 and a
one-line message on stderr, never a traceback.
"""

from __future__ import annotations

import sys

import typer

from game.errors import BoafError

app = typer.Typer(
    name="boaf",
    help="Birds of a Feather solitaire: deals, moves, exact solving and solvability.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register_commands() -> None:
    # Imported for their side effect of adding commands to ``app``.
    from service.cli import (  # noqa: F401
        feature_commands,
        game_commands,
        model_commands,
        puzzle_commands,
        search_commands,
        serve_commands,
    )


def shield_grid_argument(arg: str) -> str:
    """Grid text may start with an empty cell, ``--``, which the option parser would take for an option.

    Options never hold spaces or ``/``, so such an argument is grid text: its
    leading ``--`` is rewritten as the other empty-cell mark, ``.``.
    """
    if arg.startswith("--") and any(mark in arg for mark in (" ", "/", "\n")):
        return "." + arg[2:]
    return arg


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``boaf`` console script."""
    _register_commands()
    args = [shield_grid_argument(a) for a in (sys.argv[1:] if argv is None else argv)]
    try:
        app(args=args, standalone_mode=True)
    except BoafError as exc:
        print(f"boaf: {exc}", file=sys.stderr)
        sys.exit(2)
