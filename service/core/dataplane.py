"""What the service does, as plain functions over domain values (no protobuf, no gRPC).

The servicer converts a request, calls one method here, and converts the result
back. The ``DataPlane`` holds the loaded classifier and the limits from the
settings; it is built once the model has loaded and been warmed up.
"""

from __future__ import annotations

import copy
import dataclasses
import heapq
import math
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from boaf import features, puzzles, search
from boaf.game.arrays import states_to_array
from boaf.game.deals import deal
from boaf.game.errors import Stopped
from boaf.game.state import MAX_CELLS, State
from boaf.models.errors import ModelError
from boaf.models.exact_path import ExactBudget, Predictions
from boaf.models.provenance import package_version
from boaf.puzzles.generation import GeneratedPuzzle, generate
from boaf.service.core import limits
from boaf.service.core.admission import arrival_time
from boaf.service.core.compile_log import COMPILING
from boaf.service.core.errors import (
    Busy,
    Cancelled,
    Compiling,
    DeadlineExceeded,
    LimitExceeded,
    ModelUnavailable,
    ServiceError,
)
from boaf.service.core.memory import give_memory_back_soon
from boaf.service.core.settings import Settings
from boaf.service.core.warmup import LATER_ALGORITHMS, RETRY_AFTER_S, Kernels

# Deals the warm-up classifies and featurizes; the first (solvable in 48 nodes) is also solved.
WARM_UP_SEEDS = (367297990, 360528)
LARGE_BATCH_STATES = 1000  # a Classify or Features call this large gives its memory back when it ends
WARM_UP_TIME_LIMIT_S = 60.0
"""The warm-up's own time limit for its correctness checks, whatever BOAF_SOLVE_TIME_LIMIT_MS says.

The kernels are compiled (``boaf.service.core.warmup``) before it starts, so the checks
take well under a second; the limit only stops a broken build from hanging."""


class ServedModel(Protocol):
    """The model a DataPlane serves: the part of ``boaf.models.classifier.Classifier`` the service uses."""

    version: str
    schema_version: str
    threshold: float
    card: dict[str, Any]

    probe_nodes: int
    exact: ExactBudget

    @property
    def ordering_path(self) -> Path | None: ...

    def classify(self, states: Sequence[State], cancel: np.ndarray | None = None) -> Predictions: ...

    def classify_cells(
        self,
        cells: np.ndarray,
        rows: int,
        cols: int,
        *,
        cancel: np.ndarray | None = None,
        exact: ExactBudget | None = None,
    ) -> Predictions: ...


@dataclass(frozen=True)
class StateArray:
    """A validated batch of states on one grid, as ``boaf.game.arrays`` cells (int8, -1 empty), row-major.

    The fast form of a batch: the kernels take it as is, with no ``State`` objects.
    """

    cells: np.ndarray  # (n_states, rows * cols) int8
    rows: int
    cols: int

    def __len__(self) -> int:
        return int(self.cells.shape[0])


Batch = Sequence[State] | StateArray


@dataclass(frozen=True)
class Classification:
    """P(solvable) of each state, which of them are exact and the nodes their search spent, and the model."""

    p_solvable: np.ndarray
    threshold: float
    model_version: str
    exact: np.ndarray  # bool: settled by the exact path (p is 1 or 0)
    nodes: np.ndarray  # uint64: nodes the exact path's search expanded


WINNABLE, LOSES, ESTIMATE = "winnable", "loses", "estimate"
"""A Hint's verdicts: exact (the state can still be won, or cannot), or the classifier's estimate."""


@dataclass(frozen=True)
class MoveHint:
    """One legal move of a Hint: its text, the state it leads to, the verdict on that state."""

    move: str
    result: State
    verdict: str  # WINNABLE or LOSES (exact), or ESTIMATE
    p_winnable: float  # 1 or 0 when exact, else the classifier's P(solvable)
    nodes: int  # search nodes spent on the result state


@dataclass(frozen=True)
class Hints:
    """Every legal move of a state with its verdict, and the verdict on the state itself.

    The state's verdict follows from its moves': WINNABLE when it is won or a move is WINNABLE,
    LOSES when every move LOSES (none: LOSES unless won), else ESTIMATE with the best move's p.
    """

    moves: tuple[MoveHint, ...]
    won: bool
    verdict: str
    p_winnable: float
    model_version: str

    @classmethod
    def of(cls, moves: Sequence[MoveHint], won: bool, model_version: str) -> Hints:
        """The hints of a state whose moves are ``moves``; the state's verdict is derived from theirs."""
        if won or any(m.verdict == WINNABLE for m in moves):
            return cls(tuple(moves), won, WINNABLE, 1.0, model_version)
        if all(m.verdict == LOSES for m in moves):
            return cls(tuple(moves), won, LOSES, 0.0, model_version)
        return cls(tuple(moves), won, ESTIMATE, max(m.p_winnable for m in moves), model_version)


@dataclass(frozen=True)
class FeatureRows:
    """Feature vectors of a batch: ``matrix[i, j]`` is feature ``names[j]`` of state ``i``."""

    matrix: np.ndarray  # (n_states, len(names)) float64
    names: tuple[str, ...]
    schema_version: str


@dataclass(frozen=True)
class SolveBudget:
    """Limits of one call: nodes (or states), and seconds counted from the call's arrival (``arrived``).

    ``arrived`` is on ``time.perf_counter``'s clock; a call that waited for a
    thread or a slot has that much less time left to search.
    """

    max_nodes: int
    time_limit_s: float
    arrived: float = field(default_factory=time.perf_counter)

    @property
    def deadline(self) -> float:
        """When the time limit runs out (``time.perf_counter`` seconds)."""
        return self.arrived + self.time_limit_s

    def seconds_left(self) -> float:
        """Seconds until ``deadline``; 0 once past."""
        return max(self.deadline - time.perf_counter(), 0.0)

    def search_seconds(self) -> float:
        """The time limit to hand a search or walk now: ``seconds_left``, at least 1 ms (a limit of 0 means none)."""
        return max(self.seconds_left(), 1e-3)


class CancelFlag:
    """Stops a running search from another thread: ``set()`` and the kernel returns at its next node.

    ``expire()`` sets it because the time limit ran out (``expired`` then says so).
    """

    def __init__(self) -> None:
        self.array = np.zeros(1, dtype=np.int64)  # the kernel polls element 0 without the GIL
        self.expired = False

    def set(self) -> None:
        """Ask the search to stop (safe from any thread, any number of times)."""
        self.array[0] = 1

    def expire(self) -> None:
        """Stop the search because its time limit ran out."""
        self.expired = True
        self.set()

    def is_set(self) -> bool:
        """True once ``set()`` has been called."""
        return bool(self.array[0])


class Alarm:
    """One thread that expires ``CancelFlag``s at their deadlines.

    Every search and loop polls its flag, so the flag is the one signal that
    stops a request at its time limit, whichever kernel or loop it is in (the
    kernels read the clock only every thousand nodes, which can be seconds on
    52-card grids).
    """

    def __init__(self) -> None:
        self._due: list[tuple[float, int, CancelFlag]] = []
        self._count = 0
        self._changed = threading.Condition()
        self._wakes_at = math.inf  # when the thread next looks by itself: a later deadline needs no wake-up
        threading.Thread(target=self._run, name="boaf-alarm", daemon=True).start()

    @contextmanager
    def armed(self, flag: CancelFlag, deadline: float) -> Iterator[CancelFlag]:
        """Expire ``flag`` at ``deadline`` (``time.perf_counter`` seconds) unless the block has ended."""
        with self._changed:
            self._count += 1
            entry = (deadline, self._count, flag)
            heapq.heappush(self._due, entry)
            if deadline < self._wakes_at:
                self._changed.notify()
        try:
            yield flag
        finally:
            with self._changed:
                if entry in self._due:
                    self._due.remove(entry)
                    heapq.heapify(self._due)

    def cancel_all(self) -> None:
        """Set every armed flag now (as a cancel, not a time limit): the server is stopping."""
        with self._changed:
            for _, _, flag in self._due:
                flag.set()

    def _run(self) -> None:
        with self._changed:
            while True:
                now = time.perf_counter()
                while self._due and self._due[0][0] <= now:
                    heapq.heappop(self._due)[2].expire()
                self._wakes_at = self._due[0][0] if self._due else math.inf
                self._changed.wait(None if not self._due else self._due[0][0] - now)


class DataPlane:
    """Classify, solve, features, puzzle analysis and generation, and server info over a loaded classifier."""

    def __init__(self, settings: Settings, classifier: ServedModel, kernels: Kernels | None = None) -> None:
        self.settings = settings
        self.classifier = classifier
        # Which kernel units are loaded; None: all of them (the caller compiled what it uses).
        self.kernels = kernels
        # Solve uses the ordering model installed with the classifier (a retrained one under BOAF_MODEL_DIR).
        path = classifier.ordering_path
        self.ordering = search.read_ordering(path) if path is not None else None
        self._puzzle_slots = threading.BoundedSemaphore(settings.max_concurrent_puzzles)
        self._search_slots = threading.BoundedSemaphore(settings.max_concurrent_searches)
        self._alarm = Alarm()
        self._info: dict[str, Any] | None = None

    def with_classifier(self, classifier: ServedModel) -> DataPlane:
        """A plane over another classifier (a model reload) that shares this one's slots and alarm.

        The limits on searches and puzzles hold across both planes while calls on the old one finish,
        and ``cancel_all`` on either stops the calls of both.
        """
        plane = copy.copy(self)
        plane.classifier = classifier
        path = classifier.ordering_path
        plane.ordering = search.read_ordering(path) if path is not None else None
        plane._info = None
        return plane

    def cancel_all(self) -> None:
        """Stop every search and puzzle call under way (at its next node or loop step)."""
        self._alarm.cancel_all()

    def check_batch_size(self, n_states: int) -> None:
        """Raise ``LimitExceeded`` when a batch has more than ``max_batch_size`` states."""
        limits.MAX_BATCH_SIZE.check(self.settings, n_states)

    def batch_budget(self, deadline_s: float | None) -> SolveBudget:
        """The time of a Classify or Features call: ``BOAF_BATCH_TIME_LIMIT_MS`` from arrival, or the client's
        deadline when sooner (``deadline_s``: the seconds it has left, None for none).

        ``DeadlineExceeded`` when the client's deadline has already passed.
        """
        arrived = arrival_time()
        seconds = self.settings.batch_time_limit_ms / 1000
        if deadline_s is not None:
            if deadline_s <= 0:
                raise DeadlineExceeded("the client's deadline passed before the call started")
            seconds = min(seconds, time.perf_counter() - arrived + deadline_s)
        return SolveBudget(0, seconds, arrived)

    @contextmanager
    def batch_call(self, budget: SolveBudget, cancel: CancelFlag, n_states: int) -> Iterator[CancelFlag]:
        """Run a Classify or Features call (reading, computing, answering) within ``budget``'s time.

        ``cancel`` expires at the budget's deadline, and every stage reads it; a stage it
        stopped ends the call with ``DeadlineExceeded`` (naming ``BOAF_BATCH_TIME_LIMIT_MS``
        when the server's limit ran out), or ``Cancelled`` when something else set it (the
        client went away, the server is stopping). A call of at least ``LARGE_BATCH_STATES``
        states asks for its memory to be given back once it ends (``boaf.service.core.memory``).
        """
        try:
            with self._alarm.armed(cancel, budget.deadline):
                yield cancel
        except Stopped as exc:
            raise self._batch_stopped(budget, cancel, exc) from exc
        finally:
            if n_states >= LARGE_BATCH_STATES:
                give_memory_back_soon()

    def _batch_stopped(self, budget: SolveBudget, cancel: CancelFlag, exc: Stopped) -> Stopped:
        limit_ms = self.settings.batch_time_limit_ms
        if cancel.expired or budget.seconds_left() <= 0:
            if budget.time_limit_s >= limit_ms / 1000:
                return DeadlineExceeded(limits.BATCH_TIME_LIMIT_MS.message(limit_ms, seconds=limit_ms / 1000))
            return DeadlineExceeded("the client's deadline passed before the answer")
        if isinstance(exc, ServiceError):
            return exc
        return Cancelled(f"the call was cancelled ({exc})")

    def classify(self, states: Batch, cancel: CancelFlag) -> Classification:
        """P(solvable) of each state (float64, in input order): exact where the budgeted search settles it.

        Every stage reads ``cancel`` and stops with ``boaf.game.errors.Stopped`` once it is set
        (run it inside ``batch_call``, which sets it at the call's deadline).
        """
        model = self.classifier
        try:
            if isinstance(states, StateArray):
                answers = model.classify_cells(states.cells, states.rows, states.cols, cancel=cancel.array)
            else:
                answers = model.classify(states, cancel.array)
        except ModelError as exc:
            raise ModelUnavailable(f"the served model failed: {exc}") from exc
        return Classification(answers.p_solvable, model.threshold, model.version, answers.exact, answers.nodes)

    def features(self, states: Batch, cancel: CancelFlag) -> FeatureRows:
        """The feature vector of each state, in the schema's order; stops as ``classify`` does."""
        matrix = _feature_matrix(states, cancel.array)
        return FeatureRows(matrix, tuple(features.feature_names()), features.SCHEMA_VERSION)

    def hint_budget(self, max_nodes_per_move: int) -> ExactBudget:
        """The search budget of each move of a Hint: the request's nodes on any grid, or 0 for the model's budgets.

        The model's budgets (each grid's own included) are capped by ``BOAF_HINT_MAX_NODES``; a
        request asking for more than that is ``LimitExceeded``.
        """
        limits.HINT_MAX_NODES.check(self.settings, max_nodes_per_move)
        limit = self.settings.hint_max_nodes
        exact = self.classifier.exact
        if max_nodes_per_move:
            return dataclasses.replace(exact, max_nodes=max_nodes_per_move, by_grid={})
        by_grid = {grid: min(nodes, limit) for grid, nodes in exact.by_grid.items()}
        return dataclasses.replace(exact, max_nodes=min(exact.max_nodes, limit), by_grid=by_grid)

    def hint(self, state: State, budget: ExactBudget, cancel: CancelFlag) -> Hints:
        """Each legal move of ``state`` (``State.legal_moves``' order) with its result and a verdict.

        The result states go through Classify's pipeline as one batch, with ``budget`` as its
        exact path: one compiled search call for all of them, then the model for those it leaves
        open. Stops as ``classify`` does (run it inside ``batch_call``).
        """
        moves = list(state.legal_moves())
        results = [state.apply(move) for move in moves]
        model = self.classifier
        answers = Predictions.empty(0)
        if results:
            try:
                answers = model.classify_cells(
                    states_to_array(results), state.rows, state.cols, cancel=cancel.array, exact=budget
                )
            except ModelError as exc:
                raise ModelUnavailable(f"the served model failed: {exc}") from exc
        hints = [
            MoveHint(
                state.move_text(move),
                result,
                _verdict(bool(answers.exact[i]), float(answers.p_solvable[i])),
                float(answers.p_solvable[i]),
                int(answers.nodes[i]),
            )
            for i, (move, result) in enumerate(zip(moves, results, strict=True))
        ]
        return Hints.of(hints, state.is_solved, model.version)

    def solve_budget(self, max_nodes: int, time_limit_ms: int, deadline_s: float | None) -> SolveBudget:
        """The budget of a Solve: the request's (0 = the server's limit), and never past the client's deadline.

        ``deadline_s`` is the time the client has left, in seconds (None: no deadline).
        A request asking for more than the server allows is ``LimitExceeded``.
        """
        settings = self.settings
        limits.SOLVE_MAX_NODES.check(settings, max_nodes)
        arrived = arrival_time()
        return SolveBudget(
            max_nodes or settings.solve_max_nodes, self._time_limit_s(time_limit_ms, deadline_s, arrived), arrived
        )

    def puzzle_budget(self, max_states: int, time_limit_ms: int, deadline_s: float | None) -> SolveBudget:
        """The budget of a puzzle RPC: ``max_nodes`` is the states an analysis may keep.

        0 asks for the default, ``BOAF_PUZZLE_MAX_STATES``; more is ``LimitExceeded``.
        The time limit is Solve's (``BOAF_SOLVE_TIME_LIMIT_MS``), as in ``solve_budget``.
        """
        settings = self.settings
        limits.PUZZLE_MAX_STATES.check(settings, max_states)
        states = max_states or settings.puzzle_max_states
        arrived = arrival_time()
        return SolveBudget(states, self._time_limit_s(time_limit_ms, deadline_s, arrived), arrived)

    def check_samples(self, samples: int | None) -> None:
        """Raise ``LimitExceeded`` when an analysis asks for more than ``BOAF_PUZZLE_MAX_SAMPLES`` samples."""
        if samples is not None:
            limits.PUZZLE_MAX_SAMPLES.check(self.settings, samples)

    def check_generation(self, cards: int, rows: int, cols: int, iterations: int | None) -> None:
        """Raise ``LimitExceeded`` for a grid past 52 cells or iterations past ``BOAF_PUZZLE_MAX_ITERATIONS``.

        And ``InvalidPuzzleRequest`` for a card count the grid cannot hold, as ``boaf.puzzles.generation`` would,
        but before the call waits for a slot.
        """
        if rows * cols > MAX_CELLS:
            raise LimitExceeded(f"rows, cols: a {rows}x{cols} grid has more than {MAX_CELLS} cells")
        if not 2 <= cards <= rows * cols:
            raise puzzles.InvalidPuzzleRequest(f"cards must be 2..{rows * cols} for a {rows}x{cols} grid, got {cards}")
        if iterations is not None:
            limits.PUZZLE_MAX_ITERATIONS.check(self.settings, iterations)

    @contextmanager
    def puzzle_slot(self, budget: SolveBudget) -> Iterator[float]:
        """Hold one of the ``BOAF_MAX_CONCURRENT_PUZZLES`` slots; yields the seconds left of ``budget``.

        A puzzle may hold hundreds of MB while it runs, so they are few at a
        time. A call waits for a slot (a cancelled one frees its slot within
        moments) as long as its time limit allows, then gets ``Busy``.
        """
        with self._slot(self._puzzle_slots, budget, limits.MAX_CONCURRENT_PUZZLES):
            yield budget.search_seconds()

    @contextmanager
    def _slot(self, slots: threading.BoundedSemaphore, budget: SolveBudget, limit: limits.Limit) -> Iterator[None]:
        if not slots.acquire(timeout=budget.seconds_left()):
            raise Busy(limit.message(limit.of(self.settings), seconds=budget.time_limit_s))
        try:
            yield
        finally:
            slots.release()

    def _time_limit_s(self, time_limit_ms: int, deadline_s: float | None, arrived: float) -> float:
        # The request's time limit (0 = the server's), from arrival, never past the client's deadline.
        settings = self.settings
        limits.SOLVE_TIME_LIMIT_MS.check(settings, time_limit_ms)
        seconds = (time_limit_ms or settings.solve_time_limit_ms) / 1000
        if deadline_s is not None:
            if deadline_s <= 0:
                raise DeadlineExceeded("the client's deadline passed before the search started")
            seconds = min(seconds, time.perf_counter() - arrived + deadline_s)
        return seconds

    def solve(self, state: State, algorithm: str, budget: SolveBudget, cancel: CancelFlag) -> search.SolveResult:
        """The search result for ``state`` (see ``search.solve``); stops early when ``cancel`` is set.

        An ``unknown`` result says which limit ended it: ``max_nodes``, ``memory`` (the search's
        transposition table reached ``BOAF_SEARCH_MEMORY_MB``), ``time_limit`` or ``cancelled``. Waits
        for one of the ``BOAF_MAX_CONCURRENT_SEARCHES`` slots within the time limit, then is ``Busy``.
        """
        max_nodes = budget.max_nodes
        name = search.algorithm_named(algorithm).name
        if name in LATER_ALGORITHMS:
            self._require_kernels(LATER_ALGORITHMS[name])
        with (
            self._slot(self._search_slots, budget, limits.MAX_CONCURRENT_SEARCHES),
            self._alarm.armed(cancel, budget.deadline),
        ):
            result = search.solve(
                state,
                algorithm,
                max_nodes=max_nodes,
                time_limit=budget.search_seconds(),
                max_memory_mb=self.settings.search_memory_mb,
                cancel=cancel.array,
                ordering=self.ordering,
            )
        if result.status != search.UNKNOWN:
            return result
        return dataclasses.replace(result, reason=_stopped_by(result, max_nodes, cancel))

    def _require_kernels(self, unit: str) -> None:
        # No compile ever runs inside a request: a call that needs kernels still compiling is turned away.
        if self.kernels is not None and not self.kernels.is_ready(unit):
            raise Compiling(f"{COMPILING}: the {unit} kernels are not ready yet; retry in {RETRY_AFTER_S} s")

    def analyze_puzzle(
        self, state: State, budget: SolveBudget, *, samples: int | None, seed: int, cancel: CancelFlag
    ) -> puzzles.PuzzleAnalysis:
        """``puzzles.analyze`` within ``budget`` (states and seconds); ``AnalysisStopped`` when stopped early.

        ``samples`` None is ``analyze``'s default.
        """
        self.check_samples(samples)
        self._require_kernels("puzzles")
        options: dict[str, Any] = {} if samples is None else {"samples": samples}
        nodes = self.settings.search_node_cap(state.rows * state.cols)
        with self.puzzle_slot(budget) as seconds, self._stopping_at_the_limit(cancel, budget):
            return puzzles.analyze(
                state, budget.max_nodes, seed=seed, time_limit=seconds, cancel=cancel.array, max_nodes=nodes, **options
            )

    def generate_puzzle(
        self,
        cards: int,
        budget: SolveBudget,
        *,
        rows: int,
        cols: int,
        seed: int,
        iterations: int | None,
        energy: str | None,
        cancel: CancelFlag,
    ) -> GeneratedPuzzle:
        """``boaf.puzzles.generation.generate`` within ``budget``'s seconds (``None`` energy: the default)."""
        self.check_generation(cards, rows, cols, iterations)
        self._require_kernels("puzzles")
        options: dict[str, Any] = {} if energy is None else {"energy": energy}
        with self.puzzle_slot(budget) as seconds, self._stopping_at_the_limit(cancel, budget):
            return generate(
                cards,
                seed=seed,
                iterations=iterations,
                rows=rows,
                cols=cols,
                time_limit=seconds,
                cancel=cancel.array,
                max_nodes=self.settings.search_node_cap(rows * cols),
                **options,
            )

    @contextmanager
    def _stopping_at_the_limit(self, cancel: CancelFlag, budget: SolveBudget) -> Iterator[None]:
        # The alarm stops every search and loop of the call at its deadline; the message says so, rounded.
        with self._alarm.armed(cancel, budget.deadline):
            try:
                yield
            except puzzles.AnalysisStopped as exc:
                if cancel.expired or budget.seconds_left() <= 0:
                    raise puzzles.AnalysisStopped(
                        f"the time limit of {budget.time_limit_s:.3g} s (counted from the call's arrival) ran out"
                    ) from exc
                raise
            finally:
                give_memory_back_soon()  # a puzzle call may have held hundreds of MB

    def info(self) -> dict[str, Any]:
        """Versions, schema, model card summary and every limit (``boaf.service.core.limits``), as plain values.

        Built once per DataPlane (a new model is a new DataPlane), so answering it costs nothing.
        """
        if self._info is None:
            settings, model = self.settings, self.classifier
            self._info = {
                "version": package_version("boaf", missing="unknown"),
                "feature_schema_version": features.SCHEMA_VERSION,
                "feature_names": list(features.feature_names()),
                "model_version": model.version,
                "model_schema_version": model.schema_version,
                "model_card": model.card,
                "classify_threshold": model.threshold,
                "classify_exact_max_nodes": model.exact.max_nodes,
                "classify_exact_grid_budgets": [
                    {"rows": rows, "cols": cols, "max_nodes": nodes} for rows, cols, nodes in model.exact.grid_budgets()
                ],
                "limits": limits.reported(settings),
            }
        return self._info

    def warm_up(self) -> float:
        """Classify, featurize and solve a few deals, and check the answers; returns the seconds taken.

        Raises when any answer is wrong, so a broken build never reports SERVING.
        The kernels are compiled before (``boaf.service.core.warmup``); the checks have their
        own time limit (``WARM_UP_TIME_LIMIT_S``), started here, not a request's.
        The puzzle checks run only once the puzzle kernels are loaded.
        """
        started = time.perf_counter()
        states = [deal(seed) for seed in WARM_UP_SEEDS]
        budget = SolveBudget(self.settings.solve_max_nodes, WARM_UP_TIME_LIMIT_S)
        p_solvable = self.classify(states, CancelFlag()).p_solvable
        if p_solvable.shape != (len(states),) or not np.all((p_solvable >= 0) & (p_solvable <= 1)):
            raise ModelUnavailable(f"warm-up: the model returned {p_solvable!r} for {len(states)} states")
        self.features(states, CancelFlag())
        result = self.solve(states[0], search.DEFAULT_ALGORITHM, budget, CancelFlag())
        if result.status != search.SOLVABLE:
            raise RuntimeError(f"warm-up: deal {WARM_UP_SEEDS[0]} came back {result.status}, expected solvable")
        if self.kernels is None or self.kernels.is_ready("puzzles"):
            warm_up_puzzles()
        return time.perf_counter() - started


def warm_up_puzzles() -> None:
    """Check an exact puzzle analysis and an estimate (the puzzle kernels must be loaded)."""
    three = State.from_cells(1, 3, [0, 4, 8])  # AC 2C 3C in a row: 6 ordered pairs, then 6 last movers
    counts = [(d.states, d.solvable) for d in puzzles.analyze(three).by_depth]
    if counts != [(1, 1), (6, 6), (6, 6)]:
        raise RuntimeError(f"warm-up: AC 2C 3C analysed as {counts}, expected [(1, 1), (6, 6), (6, 6)]")
    estimate = puzzles.analyze(deal(WARM_UP_SEEDS[0], rows=2, cols=3), budget=2, samples=2)
    if estimate.exact or estimate.by_depth[0].states != 1:
        raise RuntimeError("warm-up: a puzzle over its budget was not estimated")


def _verdict(exact: bool, p_solvable: float) -> str:
    if not exact:
        return ESTIMATE
    return WINNABLE if p_solvable == 1.0 else LOSES


def _stopped_by(result: search.SolveResult, max_nodes: int, cancel: CancelFlag) -> str:
    """What stopped a search that ended UNKNOWN: the caller (cancelled), memory, the node budget or the clock."""
    if cancel.is_set() and not cancel.expired:
        return "cancelled"
    if result.reason == search.MEMORY:
        return "memory"
    if result.nodes >= max_nodes:
        return "max_nodes"
    return "time_limit"


def _feature_matrix(states: Batch, cancel: np.ndarray) -> np.ndarray:
    if isinstance(states, StateArray):
        return features.feature_matrix(states.cells, states.rows, states.cols, cancel=cancel)
    return features.feature_matrix(states, cancel=cancel)
