"""A budgeted exact search over a batch, for use as features: how far does a small search get?

Unlike ``solve_many`` it returns no paths or reasons, so its cost is the search
alone. The outcome is 1.0 (solvable), 0.0 (unsolvable) or 0.5 (the node budget
ran out before an answer), and an exact answer here is as exact as any other.
"""

from __future__ import annotations

import numpy as np

from boaf.game.validation import check_positive_int
from boaf.search import kernel
from boaf.search.algorithms import algorithm_named
from boaf.search.errors import InvalidBudget
from boaf.search.ordering import default_ordering
from boaf.search.tables import grid_tables, kernel_config

_OUTCOME = {kernel.SOLVABLE: 1.0, kernel.UNSOLVABLE: 0.0, kernel.UNKNOWN: 0.5, kernel.OUT_OF_MEMORY: 0.5}


def probe(
    cells: np.ndarray, rows: int, cols: int, max_nodes: int, *, algorithm: str = "compatible"
) -> tuple[np.ndarray, np.ndarray]:
    """``(outcome, nodes)`` of ``algorithm`` capped at ``max_nodes`` for each row of ``cells``.

    ``cells`` is an ``int8`` array ``(n, rows*cols)`` as made by ``boaf.game.arrays.states_to_array``.
    Compatible DFS is the default: per node it is several times cheaper than
    Ordered DFS, which pays for a vertex-connectivity estimate of every child.
    """
    check_positive_int(max_nodes, "max_nodes", error=InvalidBudget)
    array = np.ascontiguousarray(cells, dtype=np.int8).reshape(-1, rows * cols)
    algo, model = algorithm_named(algorithm), default_ordering()
    # Plain ints and floats: the argument types of search.solve_many's calls, so one compiled copy.
    budget = kernel.Budget(int(max_nodes), 0.0, np.zeros(1, dtype=np.int64), 0)
    status, nodes, *_ = kernel.BATCHES[algo.kernel](
        array, grid_tables(rows, cols), kernel_config(algo, model), budget, time_limit=0.0
    )
    outcome = np.array([_OUTCOME[int(s)] for s in status.tolist()], dtype=np.float64)
    return outcome, nodes.astype(np.float64)
