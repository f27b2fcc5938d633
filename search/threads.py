"""One search split over threads: the root's children are searched side by side.

The kernel releases the GIL (``nogil=True``), so ``threads`` Python threads run
``threads`` child searches at once, each with its own transposition table (a
share of the memory budget). Children are taken in generation order; the first
solution found stops the others. The answer does not depend on ``threads``: the
root is solvable exactly when one of its children is, and unsolvable exactly
when all of them are. Which solution is returned, and the node count, may
depend on it. A node budget applies to each child's search.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from game import State
from game.arrays import state_to_array
from game.state import Move
from search import kernel
from search.algorithms import Algorithm
from search.ordering import OrderingModel

FOUND = 2  # the value a solution writes into the shared stop flag (a caller's cancel writes 1)


@dataclass(frozen=True)
class Budget:
    """What one split search may spend: nodes per child (0: none), the ``kernel.now_s`` deadline (0: none), bytes."""

    max_nodes: int
    deadline: float
    max_bytes: int


def solve_split(
    state: State,
    algo: Algorithm,
    model: OrderingModel,
    cohort: int,
    budget: Budget,
    stop: np.ndarray,
    threads: int,
    tables: tuple[np.ndarray, np.ndarray],
) -> tuple[int, int, np.ndarray]:
    """``(status code, nodes, path)`` of ``state`` searched over ``threads`` threads.

    ``stop`` is the ``int64[1]`` cancel flag shared by every child search;
    ``tables`` the kernel's compatibility and line tables. ``path`` holds the
    solution's ``(source, target)`` cells (empty unless solvable).
    """
    if kernel.root_prunable(state_to_array(state), state.rows, state.cols, tables[0], tables[1], algo.options):
        return kernel.UNSOLVABLE, 0, np.zeros((0, 2), dtype=np.int8)  # as one thread answers it: no node expanded
    moves = list(state.legal_moves())
    roots = [state_to_array(state.apply(move)) for move in moves]
    share = budget.max_bytes // threads if budget.max_bytes > 0 else 0

    def search(root: np.ndarray) -> tuple[int, int, np.ndarray]:
        if stop[0] != 0:
            return kernel.UNKNOWN, 0, np.zeros((0, 2), dtype=np.int8)
        path = np.zeros((root.shape[0], 2), dtype=np.int8)
        status, nodes, length, _ = kernel.solve_one(
            root, state.rows, state.cols, tables[0], tables[1], algo.kernel, algo.options, model.kernel_coefs(),
            model.cutoff, algo.memo_min, cohort, budget.max_nodes, budget.deadline, stop,
            kernel.new_memo(root.shape[0], max_bytes=share), 1, path, share,
        )  # fmt: skip
        if status == kernel.SOLVABLE and stop[0] == 0:
            stop[0] = FOUND
        return status, nodes, path[:length]

    with ThreadPoolExecutor(max_workers=threads) as pool:
        results = list(pool.map(search, roots))
    if stop[0] == FOUND:
        stop[0] = 0
    return _combine(moves, results)


def _combine(moves: list[Move], results: list[tuple[int, int, np.ndarray]]) -> tuple[int, int, np.ndarray]:
    nodes = 1 + sum(n for _, n, _ in results)
    for move, (status, _, path) in zip(moves, results, strict=True):
        if status == kernel.SOLVABLE:
            first = np.array([[move.source, move.target]], dtype=np.int8)
            return kernel.SOLVABLE, nodes, np.concatenate([first, path])
    statuses = {status for status, _, _ in results}
    empty = np.zeros((0, 2), dtype=np.int8)
    if statuses <= {kernel.UNSOLVABLE}:
        return kernel.UNSOLVABLE, nodes, empty
    return (kernel.OUT_OF_MEMORY if kernel.OUT_OF_MEMORY in statuses else kernel.UNKNOWN), nodes, empty
