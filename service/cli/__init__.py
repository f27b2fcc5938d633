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
    from service.cli import feature_commands, game_commands, model_commands, search_commands, serve_commands  # noqa: F401


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``boaf`` console script."""
    _register_commands()
    try:
        app(args=argv, standalone_mode=True)
    except BoafError as exc:
        print(f"boaf: {exc}", file=sys.stderr)
        sys.exit(2)
