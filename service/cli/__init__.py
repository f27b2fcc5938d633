"""The ``boaf`` command line.

Each group of commands lives in its own module and registers itself on ``app``
(``service.cli.app``).
Any ``game.BoafError`` ends the command with a one-line message on stderr, never
a traceback, and the exit status of its branch in ``EXIT_CODES``.
"""

from __future__ import annotations

import sys

from game.errors import BoafError, Failure, InvalidInput, Stopped

# Each command module adds its commands to ``service.cli.app.app`` when imported.
from service.cli import (  # noqa: F401
    feature_commands,
    game_commands,
    model_commands,
    puzzle_commands,
    search_commands,
    serve_commands,
)
from service.cli.app import app

EXIT_CODES: tuple[tuple[type[BoafError], int], ...] = (
    (InvalidInput, 2),  # the same status the option parser gives a bad option
    (Stopped, 3),
    (Failure, 1),
)
"""The exit status of each branch of ``game.errors``; the first row that matches wins, and 1 for any other."""


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
    args = [shield_grid_argument(a) for a in (sys.argv[1:] if argv is None else argv)]
    try:
        app(args=args, standalone_mode=True)
    except BoafError as exc:
        print(f"boaf: {exc}", file=sys.stderr)
        sys.exit(exit_code(exc))


def exit_code(exc: BoafError) -> int:
    """The exit status of ``exc``'s branch (``EXIT_CODES``)."""
    return next((code for kind, code in EXIT_CODES if isinstance(exc, kind)), 1)
