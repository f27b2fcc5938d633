"""Exact answers for Birds of a Feather: is a state solvable, and how.

``solve(state, algorithm="ordered", max_nodes=None, time_limit=None,
max_memory_mb=None)`` answers one state; ``solve_many`` and ``solve_deals``
answer many in one compiled call.
The compiled kernel lives in ``search.kernel``; ``search.reference`` is the
plain-Python oracle it is tested against.
"""

from search.algorithms import ALGORITHM_NAMES, ALGORITHMS, DEFAULT_ALGORITHM, Algorithm, algorithm_named
from search.errors import InvalidBudget, InvalidOrderingModel, SearchError, SolutionCheckFailed, UnknownAlgorithm
from search.ordering import SUBSET_H, OrderingModel, default_ordering, read_ordering
from search.solver import (
    EXHAUSTED,
    MEMORY,
    ODD_BIRD,
    SEPARATED_FLOCK,
    SOLVABLE,
    UNKNOWN,
    UNSOLVABLE,
    BatchResult,
    SolveResult,
    checked_solution,
    solution_moves,
    solve,
    solve_deals,
    solve_many,
    unsolvable_reason,
)

__all__ = [
    "ALGORITHMS",
    "ALGORITHM_NAMES",
    "DEFAULT_ALGORITHM",
    "EXHAUSTED",
    "MEMORY",
    "ODD_BIRD",
    "SEPARATED_FLOCK",
    "SOLVABLE",
    "SUBSET_H",
    "UNKNOWN",
    "UNSOLVABLE",
    "Algorithm",
    "BatchResult",
    "InvalidBudget",
    "InvalidOrderingModel",
    "OrderingModel",
    "SearchError",
    "SolutionCheckFailed",
    "SolveResult",
    "UnknownAlgorithm",
    "algorithm_named",
    "checked_solution",
    "default_ordering",
    "read_ordering",
    "solution_moves",
    "solve",
    "solve_deals",
    "solve_many",
    "unsolvable_reason",
]
