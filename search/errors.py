"""Errors of the search package.

Bad requests (an unknown algorithm, a budget that is not positive) are
``game.errors.BoafError`` subclasses, so the CLI and the service report them
like any other bad input. ``SolutionCheckFailed`` is not: it means a bug in
boaf, never bad input.
"""

from __future__ import annotations

from game.errors import BoafError


class SearchError(BoafError):
    """A search request that cannot be carried out as asked."""


class UnknownAlgorithm(SearchError):
    """The algorithm name is not one of ``search.ALGORITHM_NAMES``."""


class InvalidBudget(SearchError):
    """A node budget, time limit or cohort size is not a positive number."""


class InvalidOrderingModel(SearchError):
    """The ordering artifact is missing, does not parse, or lacks a field."""


class SolutionCheckFailed(RuntimeError):
    """A solution from the kernel did not replay to one stack: a bug, never bad input."""
