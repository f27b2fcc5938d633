"""The one exception hierarchy for bad input to boaf.

Every error names what is wrong and where, so a caller can fix the input without
reading code. The service maps these to gRPC status codes in one table; the CLI
prints them as one line and exits with status 2.
"""

from __future__ import annotations


class BoafError(ValueError):
    """Base of every error boaf raises on purpose."""


class InvalidCard(BoafError):
    """A card's text is not a rank followed by a suit, e.g. ``TS`` or ``10s``."""


class InvalidState(BoafError):
    """A grid, its cells or its stack sizes do not describe a legal state."""


class IllegalMove(BoafError):
    """Move text is malformed, names a card not on top of a stack, or breaks the rules."""


class InvalidSeed(BoafError):
    """A deal seed is outside the 32-bit signed range."""
