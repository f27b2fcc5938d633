"""The ``boaf`` Typer application that every command module registers on."""

from __future__ import annotations

from boaf.service.cli.usage import BoafTyper

app = BoafTyper(
    name="boaf",
    help="Birds of a Feather solitaire: deals, moves, exact solving and solvability.",
    epilog="Exit status: 0 done; 1 boaf failed (a crash, a broken model); 2 bad input; "
    "3 a budget or limit ran out, or the work was stopped.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
