"""How every ``boaf`` command reads its command line, shows its help and words a usage error.

- A negative number is a value wherever one is expected: ``boaf deal -1`` is deal
  -1, not an unknown option ``-1`` (no boaf option is a dash and a digit).
- Help is plain text: an option that takes a value shows it by name
  (``--max-nodes MAX_NODES``, unless it names the value itself), an argument by its upper-case name (``SEED``),
  with no type placeholders.
- A usage error (``usage_error_message``) is one line that names the option or
  argument and what is wrong with it, quoting at most ``QUOTE_CHARS`` characters of
  its value; ``boaf.service.cli.main`` prints it and exits with status 2, the status
  of bad input.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from typing import Any

import typer
from typer.core import TyperCommand

from boaf.game.errors import QUOTE_CHARS

UsageError: type[Exception] = typer.BadParameter.__mro__[1]
"""The option parser's error for a bad command line: typer exports its subclass ``BadParameter``, not it."""

NEGATIVE_NUMBER = re.compile(r"-\d[\d_]*(\.\d+)?([eE][-+]?\d+)?")


def negative_numbers_as_arguments(params: list[Any], args: list[str]) -> list[str]:
    """``args`` with every negative number that is not an option's value moved, with the other arguments, past ``--``.

    ``params`` are the command's parameters (click's): the options that take a
    value keep theirs, even a negative one (``--seed -1``), as the parser would.
    """
    if not any(NEGATIVE_NUMBER.fullmatch(arg) for arg in args):
        return args
    takes_value = {opt for p in params if p.param_type_name == "option" and not p.is_flag for opt in p.opts}
    options: list[str] = []
    arguments: list[str] = []
    rest = iter(args)
    for arg in rest:
        if arg == "--":
            arguments.extend(rest)
        elif arg in takes_value:
            options.extend([arg, *[value for value in [next(rest, None)] if value is not None]])
        elif arg.startswith("-") and arg != "-" and not NEGATIVE_NUMBER.fullmatch(arg):
            options.append(arg)
        else:
            arguments.append(arg)
    return [*options, "--", *arguments]


def value_name(param: Any) -> str:
    """How help and errors name a parameter: an option by its first flag, an argument by its upper-case name."""
    if param.param_type_name == "option":
        return str(param.opts[0])
    return str(param.metavar or param.name).upper()


def _option_label(param: Any) -> str:
    flags = " / ".join(", ".join(opts) for opts in (param.opts, param.secondary_opts) if opts)
    if param.is_flag or param.count:
        return flags
    return f"{flags} {param.metavar or param.opts[0].lstrip('-').replace('-', '_').upper()}"


class BoafCommand(TyperCommand):
    """A command that takes negative numbers as values and shows plain help without type placeholders."""

    # ctx is typer's vendored click Context, which has no public name to annotate with.
    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, negative_numbers_as_arguments(self.params, args))

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                pieces.append(value_name(param) if param.required else f"[{value_name(param)}]")
        return pieces

    def format_options(self, ctx: Any, formatter: Any) -> None:
        for title, kind, label in (("Arguments", "argument", value_name), ("Options", "option", _option_label)):
            records = [
                (label(param), record[1])
                for param in self.get_params(ctx)
                if param.param_type_name == kind and (record := param.get_help_record(ctx)) is not None
            ]
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)


class BoafTyper(typer.Typer):
    """A ``typer.Typer`` whose commands are ``BoafCommand``s and whose help is plain text."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(rich_markup_mode=None, **kwargs)

    def command(self, name: str | None = None, **kwargs: Any) -> Callable[[Any], Any]:
        return super().command(name, cls=BoafCommand, **kwargs)


def usage_error_message(exc: Exception) -> str:
    """The one line that says what is wrong with the command line, naming the option or argument."""
    param = getattr(exc, "param", None)
    kind = type(exc).__name__
    if kind == "NoSuchOption":
        return f"boaf: no such option: {getattr(exc, 'option_name', '')}"
    if isinstance(exc, typer.BadParameter) and param is not None and kind != "MissingParameter":
        value = _bad_value(exc)
        shown = value_name(param) if value is None else f"{value_name(param)}={shlex.quote(_cut(str(value)))}"
        return f"boaf: {shown}: {_sentence(exc.message)}"
    if kind == "MissingParameter" and param is not None:
        return f"boaf: {value_name(param)} is missing"
    message = getattr(exc, "format_message", lambda: str(exc))()
    return f"boaf: {_sentence(message)}"


def _bad_value(exc: Exception) -> object | None:
    """The value as given, when the error came from a pydantic validation (typer's coercion)."""
    errors = getattr(exc.__cause__, "errors", None)
    if callable(errors):
        found = errors()
        if found and isinstance(found[0], dict):
            return found[0].get("input")
    return None


def _cut(text: str) -> str:
    """``text`` cut to ``QUOTE_CHARS`` characters and ``…``, before it is quoted: a usage error stays one short line."""
    return text if len(text) <= QUOTE_CHARS else text[:QUOTE_CHARS] + "…"


def _sentence(message: str) -> str:
    """``message`` as the tail of a ``boaf: …`` line: lower-case start, no full stop, one line."""
    text = " ".join(message.split()).rstrip(".")
    return text[:1].lower() + text[1:]
