"""The one exception tree of boaf, with its three branches.

Every error boaf raises on purpose is a ``BoafError`` in exactly one branch,
and the branch says who can fix it:

- ``InvalidInput`` (also a ``ValueError``): the caller's input is wrong, and
  changing it fixes the call. The message names what is wrong and where.
- ``Stopped``: the input was fine, but a budget (nodes, states, iterations,
  time, a server limit) ran out or the caller cancelled before an answer.
- ``Failure`` (also a ``RuntimeError``): boaf failed: a worker crashed, a model
  is missing or broken, a solution did not check, the service is not ready.

Each package subclasses these (``boaf.search.errors``, ``boaf.puzzles.errors``,
``boaf.models.errors``, ``boaf.jobs.runner``, ``boaf.service.core.errors``). The CLI maps each
branch to one exit status (``boaf.service.cli.EXIT_CODES``) and the service to gRPC
status codes (``boaf.service.core.errors.STATUS_CODES``); neither looks below the branch
except where the service has a more precise code.

A message quotes the caller's input with ``quote``: at most ``QUOTE_CHARS`` characters of it.
"""

from __future__ import annotations

QUOTE_CHARS = 40
"""Characters of the caller's input an error message quotes; a longer input is cut to them and ``…``."""


def quote(text: str) -> str:
    """``text`` as an error message quotes it: the ``repr`` of at most its first ``QUOTE_CHARS`` characters.

    The text is cut before it is formatted, so quoting a 4 MiB input costs what quoting 40 characters does.
    """
    return repr(text if len(text) <= QUOTE_CHARS else text[:QUOTE_CHARS] + "…")


class BoafError(Exception):
    """Base of every error boaf raises on purpose; each one is in one of the three branches below.

    ``fields`` names the request fields at fault, when the error is about some
    (``("states[3]",)``, ``("rows", "cols")``), and then the message starts with them
    and a colon: ``"states[3]: duplicate card 5S"``. Empty (the default) when the
    error is about no one field. The service sends them as ``google.rpc.BadRequest``.
    """

    fields: tuple[str, ...] = ()

    def __init__(self, *args: object, fields: tuple[str, ...] = ()) -> None:
        super().__init__(*args)
        self.fields = fields


class InvalidInput(BoafError, ValueError):
    """The caller's input is wrong: fixing the input fixes the call."""


class Stopped(BoafError):
    """A budget or limit ran out, or the caller cancelled, before an answer was ready."""


class Failure(BoafError, RuntimeError):
    """boaf failed, not the caller: a crash, a broken or missing artifact, a service not ready."""


class InvalidCard(InvalidInput):
    """A card's text is not a rank followed by a suit, e.g. ``TS`` or ``10s``."""


class InvalidState(InvalidInput):
    """A grid, its cells or its stack sizes do not describe a legal state."""


class IllegalMove(InvalidInput):
    """Move text is malformed, names a card not on top of a stack, or breaks the rules."""


class InvalidSeed(InvalidInput):
    """A deal seed is outside the 32-bit signed range."""
