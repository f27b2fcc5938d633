"""One search split over threads, sharing one transposition table.

The root is expanded in Python, breadth first, into tasks: the states a
few moves down (two, or one when the root has enough children), in
generation order. ``threads`` Python threads take the tasks in that order and
search each with the kernel, which releases the GIL (``nogil=True``).

Why the answer does not depend on ``threads``: with three stacks or more
every solution makes at least as many moves as the split, so the root is
solvable exactly when one task is, and unsolvable exactly when every task
is. Which solution is returned, and the node count, may depend on it.

The table. On grids of at most 16 cells (``dfs`` with one-word keys: every
algorithm but best-n and Island Merge) the tasks share one table, keyed by
the root's card labels (``kernel.root_labels``), so what one thread proves
unsolvable the other reads. The table does not grow while threads use it: a
search that would fill it past three quarters stops as ``TABLE_FULL``, the
others are halted, the table is doubled (within the memory budget, else the
answer is ``unknown`` with reason ``memory``), and the unfinished tasks are
searched again. Every entry is a state proved unsolvable, so a restart keeps
all that was learned. Other searches get a table each (a share of the budget).

A node budget applies to each task's search; the deadline and the caller's
cancel flag to all of them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from boaf.game import State
from boaf.game.arrays import state_to_array
from boaf.game.state import Move
from boaf.search import kernel
from boaf.search.algorithms import Algorithm

RUNNING, FOUND, REGROW, CANCELLED = 0, 2, 3, 1  # values of the halt flag every task's kernel reads
TASKS_PER_THREAD = 8  # the root is expanded one more move while it has fewer tasks than this per thread
SPLIT_DEPTH = 2  # ... but never deeper than this
SHARED_ROWS = 1 << 16  # first capacity of a shared table (512 KiB)
POLL_S = 0.005  # how often the caller's cancel flag is copied to the tasks' halt flag


@dataclass
class _Task:
    moves: list[Move]  # from the root
    root: np.ndarray
    status: int = kernel.UNKNOWN
    nodes: int = 0
    path: np.ndarray | None = None


def solve_split(
    state: State, algo: Algorithm, tables: kernel.Tables, config: kernel.Config, *, budget: kernel.Budget, threads: int
) -> tuple[int, int, np.ndarray]:
    """``(status code, nodes, path)`` of ``state`` (three stacks or more) searched over ``threads`` threads.

    ``budget.max_nodes`` applies to each task, ``budget.max_bytes`` to them all,
    and ``budget.cancel`` is the caller's ``int64[1]`` cancel flag (read, never
    written). ``path`` holds the solution's ``(source, target)`` cells (empty unless solvable).
    """
    root = state_to_array(state)
    empty = np.zeros((0, 2), dtype=np.int8)
    if kernel.root_prunable(root, tables, config.options):
        return kernel.UNSOLVABLE, 0, empty  # as one thread answers it: no node expanded
    tasks, expanded = _split(state, threads)
    shared = algo.kernel == kernel.DFS_KERNEL and root.shape[0] <= kernel.NARROW_CELLS
    shared = shared and algo.options & kernel.ISLANDS == 0
    run = _Run(state, algo, tables, config, budget, threads, shared)
    status = run.search(tasks)
    nodes = expanded + sum(task.nodes for task in tasks)
    for task in tasks:
        if task.status == kernel.SOLVABLE and task.path is not None:
            first = np.array([[m.source, m.target] for m in task.moves], dtype=np.int8).reshape(-1, 2)
            return kernel.SOLVABLE, nodes, np.concatenate([first, task.path])
    return status, nodes, empty


def _split(state: State, threads: int) -> tuple[list[_Task], int]:
    """The tasks below ``state`` (in generation order) and the number of states expanded to reach them."""
    frontier: list[tuple[list[Move], State]] = [([], state)]
    expanded = 0
    for _ in range(SPLIT_DEPTH):
        if len(frontier) >= TASKS_PER_THREAD * threads:
            break
        nxt = []
        for moves, here in frontier:
            if here.n_stacks <= 1:
                nxt.append((moves, here))  # solved: a task of no moves
                continue
            expanded += 1
            nxt.extend(([*moves, move], here.apply(move)) for move in here.legal_moves())
        frontier = nxt
    return [_Task(moves, state_to_array(here)) for moves, here in frontier], expanded


@dataclass
class _Run:
    """The threads of one split search (``solve_split``'s arguments), and the table they share."""

    state: State
    algo: Algorithm
    tables: kernel.Tables
    config: kernel.Config
    budget: kernel.Budget  # its cancel flag is the caller's
    threads: int
    shared: bool

    def __post_init__(self) -> None:
        self.halt = np.zeros(1, dtype=np.int64)
        self.labels = np.empty(52, dtype=np.int64)
        kernel.root_labels(state_to_array(self.state), self.labels)
        ncells = self.state.rows * self.state.cols
        self.table = kernel.new_memo(ncells, SHARED_ROWS, max_bytes=self.budget.max_bytes)
        self.fill = np.zeros(self.threads + 1, dtype=np.int64)  # fill[w]: entries added by worker w (1-based)
        self.lock = threading.Lock()
        self.queue: list[_Task] = []

    def search(self, tasks: list[_Task]) -> int:
        """Search every task until one is solvable, all are unsolvable, or a budget stops them; returns the status."""
        pending = tasks
        while True:
            self.halt[0] = RUNNING
            self.queue = list(pending)
            workers = [threading.Thread(target=self._work, args=(w + 1,)) for w in range(self.threads)]
            for worker in workers:
                worker.start()
            self._wait(workers)
            if any(task.status == kernel.SOLVABLE for task in tasks):
                return kernel.SOLVABLE
            pending = [task for task in tasks if task.status != kernel.UNSOLVABLE]
            if not pending:
                return kernel.UNSOLVABLE
            if self.halt[0] != REGROW:
                memory = any(task.status == kernel.OUT_OF_MEMORY for task in pending)
                return kernel.OUT_OF_MEMORY if memory else kernel.UNKNOWN
            if not self._grow():
                return kernel.OUT_OF_MEMORY

    def _wait(self, workers: list[threading.Thread]) -> None:
        for worker in workers:
            while worker.is_alive():
                worker.join(POLL_S)
                if self.budget.cancel[0] != 0 and self.halt[0] == RUNNING:
                    self.halt[0] = CANCELLED

    def _grow(self) -> bool:
        """Double the shared table within the memory budget; False when it may not grow."""
        rows = self.table.shape[0]
        if self.budget.max_bytes > 0 and 3 * rows * self.table.strides[0] > self.budget.max_bytes:
            return False
        self.table = kernel.narrow_grow(self.table)
        self.fill[:] = 0
        self.fill[1] = int(np.count_nonzero(self.table))
        return True

    def _work(self, worker: int) -> None:
        each = self.budget.max_bytes // self.threads if self.budget.max_bytes > 0 else 0
        while self.halt[0] == RUNNING:
            with self.lock:
                if not self.queue:
                    return
                task = self.queue.pop(0)
            path = np.zeros((task.root.shape[0], 2), dtype=np.int8)
            if self.shared:
                memo, max_bytes = self.table, 0
                share = kernel.Share(self.labels, self.fill, kernel.NO_SHARE.gathered)
            else:
                memo, max_bytes, share = kernel.new_memo(task.root.shape[0], max_bytes=each), each, kernel.NO_SHARE
            budget = kernel.Budget(self.budget.max_nodes, self.budget.deadline, self.halt, max_bytes)
            status, nodes, length, _ = kernel.SEARCHES[self.algo.kernel](
                task.root, self.tables, self.config, budget, memo=memo, stamp=worker, path=path, share=share
            )
            task.nodes += int(nodes)
            if status == kernel.TABLE_FULL:
                self.halt[0] = REGROW
                return
            if status == kernel.UNKNOWN and self.halt[0] in (FOUND, REGROW):
                continue  # halted for another task's sake: searched again (or not needed)
            task.status = int(status)
            if status == kernel.SOLVABLE:
                task.path = path[:length]
                self.halt[0] = FOUND
