"""Errors of the search package, each in its branch of ``boaf.game.errors``.

An unknown algorithm or a budget that is not positive is bad input
(``InvalidInput``). A broken ordering artifact or a solution that does not
replay is boaf's failure (``Failure``), never the caller's input.
"""

from __future__ import annotations

from boaf.game.errors import BoafError, Failure, InvalidInput


class SearchError(BoafError):
    """Base of the search package's errors; each subclass is also in one branch of ``boaf.game.errors``."""


class UnknownAlgorithm(SearchError, InvalidInput):
    """The algorithm name is not one of ``search.ALGORITHM_NAMES``."""


class InvalidBudget(SearchError, InvalidInput):
    """A node budget, time limit or cohort size is not a positive number."""


class InvalidOrderingModel(SearchError, Failure):
    """The ordering artifact is missing, does not parse, or lacks a field."""


class SolutionCheckFailed(SearchError, Failure):
    """A solution from the kernel did not replay to one stack: a bug, never bad input."""
