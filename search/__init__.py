"""Exact answers for Birds of a Feather: is a state solvable, and how.

``solve(state, algorithm="ordered", max_nodes=None, time_limit=None,
max_memory_mb=None, threads=1)`` answers one state; ``solve_many`` and
``solve_deals`` answer many in one compiled call; every answer's status is a
``Status``. ``search_progress`` runs a small budgeted search on a batch and
returns what it learned (``PROGRESS_COLUMNS``: model inputs, never answers). The
compiled kernel lives in ``boaf.search.kernel`` (its tables and clock, which other
compiled code shares, are public as ``compat_table``, ``line_table`` and
``now_s``); ``boaf.search.reference`` is the plain-Python oracle it is tested against.
"""

from boaf.search.algorithms import ALGORITHM_NAMES, ALGORITHMS, DEFAULT_ALGORITHM, Algorithm, algorithm_named
from boaf.search.errors import InvalidBudget, InvalidOrderingModel, SearchError, SolutionCheckFailed, UnknownAlgorithm
from boaf.search.ordering import SUBSET_H, OrderingModel, default_ordering, read_ordering
from boaf.search.progress import PROGRESS_COLUMNS, ProgressStopped, search_progress
from boaf.search.solver import (
    EXHAUSTED,
    MEMORY,
    ODD_BIRD,
    SEPARATED_FLOCK,
    SOLVABLE,
    UNKNOWN,
    UNSOLVABLE,
    BatchResult,
    SolveResult,
    Status,
    checked_solution,
    solution_moves,
    solve,
    solve_deals,
    solve_many,
    unsolvable_reason,
)
from boaf.search.tables import compat_table, line_table, now_s

SOLVER_VERSION = "2026.11.4"
"""The version of the exact answers, bumped with every change to the answers' path
(kernel, pruning, reductions, ordering). Dataset manifests and resume fingerprints
carry it, so cached answers from another solver are not reused."""

__all__ = [
    "ALGORITHMS",
    "ALGORITHM_NAMES",
    "DEFAULT_ALGORITHM",
    "EXHAUSTED",
    "MEMORY",
    "ODD_BIRD",
    "PROGRESS_COLUMNS",
    "SEPARATED_FLOCK",
    "SOLVABLE",
    "SOLVER_VERSION",
    "SUBSET_H",
    "UNKNOWN",
    "UNSOLVABLE",
    "Algorithm",
    "BatchResult",
    "InvalidBudget",
    "InvalidOrderingModel",
    "OrderingModel",
    "ProgressStopped",
    "SearchError",
    "SolutionCheckFailed",
    "SolveResult",
    "Status",
    "UnknownAlgorithm",
    "algorithm_named",
    "checked_solution",
    "compat_table",
    "default_ordering",
    "line_table",
    "now_s",
    "read_ordering",
    "search_progress",
    "solution_moves",
    "solve",
    "solve_deals",
    "solve_many",
    "unsolvable_reason",
]
