"""Exact answers for Birds of a Feather: is a state solvable, and how.

``solve(state, algorithm="ordered", max_nodes=None, time_limit=None,
max_memory_mb=None, threads=1)`` answers one state; ``solve_many`` and
``solve_deals`` answer many in one compiled call; every answer's status is a
``Status``, and a batch's ``BatchResult.learned`` holds what each search learned on
its way (``LEARNED_COLUMNS``). ``search_progress`` runs a small budgeted search on a batch and
returns what it learned (``PROGRESS_COLUMNS``: model inputs, never answers). The
compiled kernel lives in ``boaf.search.kernel`` (its tables and clock, which other
compiled code shares, are public as ``compat_table``, ``line_table`` and
``now_s``); ``boaf.search.reference`` is the plain-Python oracle it is tested against.

Terms (docs/glossary.md holds them all):

- *G*, the compatibility graph: the stacks' top cards, an edge between compatible ones.
  No move joins two of its components.
- *Odd bird*: a card with no compatible card (``ODD_BIRD``); *separated flock*: G
  disconnected (``SEPARATED_FLOCK``). Either makes a state unsolvable, and
  ``unsolvable_reason`` names it. A deal unsolvable for these reasons is an OBUD or an
  SFUD; one whose G is connected and that is still unsolvable is an FFUD (full-flock
  unsolvable deal), which only the search can tell.
- *Node*: an expanded state (more than one stack, not known unsolvable, its children
  generated); node budgets count nodes.
- *Block*: in the pruning rules, a small side of G (a component of G minus one or two
  cards) with the cards it hangs from; in *gathering* (``PRUNE_GATHER``), a set of
  cards that can be played into one stack with a given top and cell. *Open blocks*
  (``PRUNE_OPEN``) plays each small block with the other cards left open: a block
  that cannot come down even so makes the root unsolvable. The rules and their
  proofs: ``boaf.search.kernel.prune``, ``open_blocks`` and ``gather``.
"""

from boaf.search.algorithms import ALGORITHM_NAMES, ALGORITHMS, DEFAULT_ALGORITHM, Algorithm, algorithm_named
from boaf.search.errors import InvalidBudget, InvalidOrderingModel, SearchError, SolutionCheckFailed, UnknownAlgorithm
from boaf.search.kernel import LEARNED_COLUMNS
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
    "LEARNED_COLUMNS",
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
