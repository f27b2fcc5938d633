"""The ``boaf`` command line.

Each group of commands lives in its own module and registers itself on ``app``
(``boaf.service.cli.app``).
Any ``game.BoafError`` ends the command with a one-line message on stderr, never
a traceback, and the exit status of its branch in ``EXIT_CODES``; so does a
command line the option parser refuses (``boaf.service.cli.usage``, status 2). A command that
needs an optional extra that is not installed says which one (exit status 1).
The first time a command compiles a numba kernel (a fresh clone or an empty
``NUMBA_CACHE_DIR``), it says so once on stderr (``COMPILING_NOTICE``).

A one-shot command (``QUICK_EXIT``: its work is done in this process, its output
written and its files closed when it returns) ends the process at once, after
flushing stdout and stderr: the interpreter's teardown of numba's, llvmlite's and
onnxruntime's objects took 0.1-0.2 s of a warm ``boaf classify`` of ~0.9 s.
Commands that start servers, Dask clusters or worker processes exit as usual.
"""

from __future__ import annotations

import os
import sys

from boaf.game.errors import BoafError, Failure, InvalidInput, Stopped

# Each command module adds its commands to ``boaf.service.cli.app.app`` when imported.
from boaf.service.cli import (  # noqa: F401
    feature_commands,
    game_commands,
    model_commands,
    puzzle_commands,
    search_commands,
    serve_commands,
)
from boaf.service.cli.app import app
from boaf.service.cli.compiling import COMPILING_NOTICE, say_compiling
from boaf.service.cli.usage import UsageError, usage_error_message
from boaf.service.core.compile_log import CompileRecorder

__all__ = ["COMPILING_NOTICE", "EXIT_CODES", "QUICK_EXIT", "USAGE_ERROR", "app", "exit_code", "main", "missing_extra"]

USAGE_ERROR = 2
"""The exit status of a command line the option parser refuses (``boaf.service.cli.usage``)."""

EXIT_CODES: tuple[tuple[type[BoafError], int], ...] = (
    (InvalidInput, USAGE_ERROR),  # bad input, on the command line or in it
    (Stopped, 3),
    (Failure, 1),
)
"""The exit status of each branch of ``boaf.game.errors``; the first row that matches wins, and 1 for any other."""


def shield_grid_argument(arg: str) -> str:
    """Grid text may start with an empty cell, ``--``, which the option parser would take for an option.

    Options never hold spaces or ``/``, so such an argument is grid text: its
    leading ``--`` is rewritten as the other empty-cell mark, ``.``.
    """
    if arg.startswith("--") and any(mark in arg for mark in (" ", "/", "\n")):
        return "." + arg[2:]
    return arg


EXTRAS: dict[str, str] = {
    "dask": "batch",
    "distributed": "batch",
    "pyarrow": "batch",
    "pandas": "batch",
    "matplotlib": "batch",
    "lightgbm": "train",
    "sklearn": "train",
    "onnx": "train",
    "onnxmltools": "train",
    "skl2onnx": "train",
}
"""The optional extra (``pyproject.toml``) that brings each module a plain install lacks."""


QUICK_EXIT = frozenset({"deal", "moves", "play", "random", "solve", "classify"})
"""The one-shot commands that end the process without the interpreter's teardown (see above)."""


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``boaf`` console script (``argv``: in-process callers, which always return or raise)."""
    args = [shield_grid_argument(a) for a in (sys.argv[1:] if argv is None else argv)]
    status = _run(args)
    if argv is None and args[:1] and args[0] in QUICK_EXIT:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except OSError:  # a reader that closed the pipe: what Python's own exit would report as a failure
            status = status or 1
        os._exit(status)
    sys.exit(status)


def _run(args: list[str]) -> int:
    """Run one command; returns its exit status."""
    notice = _CompileNotice()
    try:
        if args[:1] == ["serve"]:  # the server logs its own compiling, kernel by kernel
            status = app(args=args, prog_name="boaf", standalone_mode=False)
        else:
            with notice.recording():
                status = app(args=args, prog_name="boaf", standalone_mode=False)
    except UsageError as exc:
        print(usage_error_message(exc), file=sys.stderr)
        return USAGE_ERROR
    except SystemExit as exc:
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BoafError as exc:
        print(f"boaf: {exc}", file=sys.stderr)
        return exit_code(exc)
    except ModuleNotFoundError as exc:
        message = missing_extra(exc, args[0] if args else "")
        if message is None:
            raise
        print(message, file=sys.stderr)
        return 1
    return status if isinstance(status, int) else 0  # typer returns an ``Exit``'s status, else the command's value


def missing_extra(exc: ModuleNotFoundError, command: str) -> str | None:
    """The one-line message for a module an optional extra brings, or None when no extra brings it."""
    module = (exc.name or "").split(".")[0]
    extra = EXTRAS.get(module)
    if extra is None:
        return None
    return (
        f"boaf: `boaf {command}` needs the {extra} extra (module {module!r} is not installed): "
        f"in a clone, pip install -e clients/python -e '.[{extra}]' (or install the boaf wheel with [{extra}])"
    )


class _CompileNotice(CompileRecorder):
    """Says ``COMPILING_NOTICE`` on stderr at the first kernel numba compiles (not loads) in this command."""

    def __init__(self) -> None:
        super().__init__()
        self.said = False

    def start(self, name: str) -> None:
        if not self.said:
            self.said = True
            say_compiling()
        super().start(name)


def exit_code(exc: BoafError) -> int:
    """The exit status of ``exc``'s branch (``EXIT_CODES``)."""
    return next((code for kind, code in EXIT_CODES if isinstance(exc, kind)), 1)
