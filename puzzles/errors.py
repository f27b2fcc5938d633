"""Errors of the puzzles package, each in its branch of ``boaf.game.errors``.

A request out of range is bad input; an analysis or a generation that runs out
of time, iterations or is cancelled has stopped (``Stopped``).
"""

from __future__ import annotations

from boaf.game.errors import BoafError, InvalidInput, Stopped


class PuzzleError(BoafError):
    """Base of the puzzles package's errors; each subclass is also in one branch of ``boaf.game.errors``."""


class InvalidPuzzleRequest(PuzzleError, InvalidInput):
    """A budget, sample size, card count, iteration count or energy name is out of range."""


class AnalysisStopped(PuzzleError, Stopped):
    """The time limit ran out or the caller cancelled before an answer was ready."""


class GenerationFailed(PuzzleError, Stopped):
    """No solvable puzzle was found within the iterations and time allowed: more of either may find one."""
