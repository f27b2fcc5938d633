"""Errors of the puzzles package; all are ``game.BoafError``, so the CLI and service report them as bad input."""

from __future__ import annotations

from game.errors import BoafError


class PuzzleError(BoafError):
    """A puzzle request that cannot be carried out as asked."""


class InvalidPuzzleRequest(PuzzleError):
    """A budget, sample size, card count, iteration count or energy name is out of range."""


class AnalysisStopped(PuzzleError):
    """The time limit ran out or the caller cancelled before an answer was ready."""


class GenerationFailed(PuzzleError):
    """No solvable puzzle was found within the iterations and time allowed."""
