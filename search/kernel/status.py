# mypy: disable-error-code="no-untyped-def"
"""How a search ends: its statuses, and the clock its time budget is read from.

Statuses: ``SOLVABLE``, ``UNSOLVABLE``, ``UNKNOWN`` (a node or time budget ran
out, or the cancel flag was raised); ``OUT_OF_MEMORY`` and ``TABLE_FULL`` are
kinds of unknown that the caller reports or acts on.
"""

from __future__ import annotations

import time
import warnings

import numba
from numba import njit
from numba.core.errors import NumbaWarning

# The clock is read in a short object-mode block every CHECK_EVERY nodes; numba
# warns that such a block holds the GIL, which is the point of keeping it rare.
warnings.filterwarnings("ignore", category=NumbaWarning, module=__name__)
warnings.filterwarnings("ignore", message=".*object mode.*", category=NumbaWarning)

SOLVABLE, UNSOLVABLE, UNKNOWN = 1, 0, 2
OUT_OF_MEMORY = 3  # the status of a search stopped by its memory budget (reported as unknown)
TABLE_FULL = 4  # a search sharing a fixed table stopped to let it grow (``dfs``, ``boaf.search.threads``)
CHECK_EVERY = 1024  # nodes between clock checks (the cancel flag, a plain load, is read at every node)


@njit(cache=True, nogil=True)
def now_s() -> float:
    """Monotonic clock in seconds (holds the GIL for about a microsecond)."""
    with numba.objmode(t="float64"):
        t = time.perf_counter()
    return t


@njit(cache=True, nogil=True, inline="always")
def spent(nodes, max_nodes, deadline, flag):
    """True when a search with ``nodes`` expanded must stop: ``max_nodes`` spent, its cancel ``flag`` (the value of
    ``Budget.cancel[0]``) raised, or (read every ``CHECK_EVERY`` nodes) its ``deadline`` passed."""
    if max_nodes > 0 and nodes >= max_nodes:
        return True
    return flag != 0 or (nodes % CHECK_EVERY == 0 and deadline > 0 and now_s() >= deadline)
