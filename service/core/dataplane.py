"""What the service does, as plain functions over domain values (no protobuf, no gRPC).

An edge's handler converts a request, makes one call here, and converts the result
back: one entry per request kind (``classify_call``, ``features_call``,
``hint_call``, ``solve``, ``analyze_puzzle``, ``generate_puzzle``, ``info``), each of
which checks the request against the limits, picks its budget and runs it. The
``DataPlane`` holds the loaded classifier and the limits from the settings; it is
built once the model has loaded and been warmed up. Its values are in
``boaf.service.core.answers``, a call's time and stop in ``boaf.service.core.deadlines``.
"""

from __future__ import annotations

import copy
import dataclasses
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

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
from boaf.service.core.answers import (
    Batch,
    Classification,
    FeatureRows,
    Hints,
    MoveHint,
    ServedModel,
    StateArray,
    verdict_of,
)
from boaf.service.core.compile_log import COMPILING
from boaf.service.core.deadlines import Alarm, CancelFlag, SolveBudget
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
Answer = TypeVar("Answer")
Value = TypeVar("Value")
Result = TypeVar("Result")
Read = Callable[[CancelFlag], Value]
"""How an edge reads a request's states (polling the call's cancel flag), within the call's time."""
Write = Callable[[Result, CancelFlag], Answer]
"""How an edge writes a result as its answer (polling the call's cancel flag), within the call's time."""
LARGE_BATCH_STATES = 1000  # a Classify or Features call this large gives its memory back when it ends
WARM_UP_TIME_LIMIT_S = 60.0
"""The warm-up's own time limit for its correctness checks, whatever BOAF_SOLVE_TIME_LIMIT_MS says.

The kernels are compiled (``boaf.service.core.warmup``) before it starts, so the checks
take well under a second; the limit only stops a broken build from hanging."""


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

    def _check_batch_size(self, n_states: int) -> None:
        """Raise ``LimitExceeded`` when a batch has more than ``max_batch_size`` states."""
        limits.MAX_BATCH_SIZE.check(self.settings, n_states)

    def _batch_budget(self, deadline_s: float | None) -> SolveBudget:
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

    def classify_call(
        self,
        read: Read[Batch],
        write: Write[Classification, Answer],
        *,
        size: int,
        cancel: CancelFlag,
        deadline_s: float | None,
    ) -> Answer:
        """One Classify call: its ``size`` states, ``read``, classified (``classify``) and answered by ``write``.

        Runs as a batch (``_batch``): the size is checked before ``read`` runs, and reading,
        classifying and writing all run within the call's time, polling ``cancel``.
        ``deadline_s`` is the time the client has left, in seconds (None: no deadline).
        """
        with self._batch(size, cancel, deadline_s):
            return write(self.classify(read(cancel), cancel), cancel)

    def features_call(
        self,
        read: Read[Batch],
        write: Write[FeatureRows, Answer],
        *,
        size: int,
        cancel: CancelFlag,
        deadline_s: float | None,
    ) -> Answer:
        """One Features call: its ``size`` states, ``read``, featurized (``features``) and answered by ``write``.

        Runs as a batch, as ``classify_call`` does.
        """
        with self._batch(size, cancel, deadline_s):
            return write(self.features(read(cancel), cancel), cancel)

    def hint_call(
        self,
        read: Read[State],
        write: Write[Hints, Answer],
        *,
        max_nodes_per_move: int,
        cancel: CancelFlag,
        deadline_s: float | None,
    ) -> Answer:
        """One Hint call: the state ``read`` gives, each legal move's verdict, answered by ``write``.

        Runs as a batch of one state, as ``classify_call`` does. Each move's search budget is
        ``max_nodes_per_move`` on any grid, or 0 for the model's budgets capped by
        ``BOAF_HINT_MAX_NODES``; more than that is ``LimitExceeded``, checked after the state is read.
        """
        with self._batch(1, cancel, deadline_s):
            state = read(cancel)
            return write(self._hints(state, self._hint_budget(max_nodes_per_move), cancel), cancel)

    @contextmanager
    def _batch(self, n_states: int, cancel: CancelFlag, deadline_s: float | None) -> Iterator[None]:
        """Run a batch call (reading, computing, answering) of ``n_states`` states within its time.

        The size is checked first (``_check_batch_size``), then the time picked (``_batch_budget``).
        ``cancel`` expires at the budget's deadline, and every stage reads it; a stage it
        stopped ends the call with ``DeadlineExceeded`` (naming ``BOAF_BATCH_TIME_LIMIT_MS``
        when the server's limit ran out), or ``Cancelled`` when something else set it (the
        client went away, the server is stopping). A call of at least ``LARGE_BATCH_STATES``
        states asks for its memory to be given back once it ends (``boaf.service.core.memory``).
        """
        self._check_batch_size(n_states)
        budget = self._batch_budget(deadline_s)
        try:
            with self._alarm.armed(cancel, budget.deadline):
                yield
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
        (``classify_call`` runs it as a batch, which sets it at the call's deadline).
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

    def _hint_budget(self, max_nodes_per_move: int) -> ExactBudget:
        """The search budget of each move of a Hint: the request's nodes on any grid, or 0 for the model's budgets.

        The model's budgets (each grid's own included) are capped by ``BOAF_HINT_MAX_NODES``; a
        request asking for more than that is ``LimitExceeded``.
        """
        limits.HINT_MAX_NODES.check(self.settings, max_nodes_per_move)
        limit = self.settings.hint_max_nodes
        exact = self.classifier.exact
        if max_nodes_per_move:
            return dataclasses.replace(exact, max_nodes=max_nodes_per_move, by_grid={}, deal_nodes=0)
        by_grid = {grid: min(nodes, limit) for grid, nodes in exact.by_grid.items()}
        return dataclasses.replace(
            exact, max_nodes=min(exact.max_nodes, limit), by_grid=by_grid, deal_nodes=min(exact.deal_nodes, limit)
        )

    def _hints(self, state: State, budget: ExactBudget, cancel: CancelFlag) -> Hints:
        """Each legal move of ``state`` (``State.legal_moves``' order) with its result and a verdict.

        The result states go through Classify's pipeline as one batch, with ``budget`` as its
        exact path: one compiled search call for all of them, then the model for those it leaves
        open. Stops as ``classify`` does (``hint_call`` runs it as a batch).
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
                verdict_of(bool(answers.exact[i]), float(answers.p_solvable[i])),
                float(answers.p_solvable[i]),
                int(answers.nodes[i]),
            )
            for i, (move, result) in enumerate(zip(moves, results, strict=True))
        ]
        return Hints.of(hints, state.is_solved, model.version)

    def _solve_budget(self, max_nodes: int, time_limit_ms: int, deadline_s: float | None) -> SolveBudget:
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

    def _puzzle_budget(self, max_states: int, time_limit_ms: int, deadline_s: float | None) -> SolveBudget:
        """The budget of a puzzle RPC: ``max_nodes`` is the states an analysis may keep.

        0 asks for the default, ``BOAF_PUZZLE_MAX_STATES``; more is ``LimitExceeded``.
        The time limit is Solve's (``BOAF_SOLVE_TIME_LIMIT_MS``), as in ``_solve_budget``.
        """
        settings = self.settings
        limits.PUZZLE_MAX_STATES.check(settings, max_states)
        states = max_states or settings.puzzle_max_states
        arrived = arrival_time()
        return SolveBudget(states, self._time_limit_s(time_limit_ms, deadline_s, arrived), arrived)

    def _check_samples(self, samples: int | None) -> None:
        """Raise ``LimitExceeded`` when an analysis asks for more than ``BOAF_PUZZLE_MAX_SAMPLES`` samples."""
        if samples is not None:
            limits.PUZZLE_MAX_SAMPLES.check(self.settings, samples)

    def _check_generation(self, cards: int, rows: int, cols: int, iterations: int | None) -> None:
        """Raise ``LimitExceeded`` for a grid past 52 cells or iterations past ``BOAF_PUZZLE_MAX_ITERATIONS``.

        And ``InvalidPuzzleRequest`` for a card count the grid cannot hold, as ``boaf.puzzles.generation`` would,
        but before the call waits for a slot.
        """
        if rows * cols > MAX_CELLS:
            raise LimitExceeded(
                f"rows, cols: a {rows}x{cols} grid has more than {MAX_CELLS} cells", fields=("rows", "cols")
            )
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

    def solve(
        self,
        state: State,
        algorithm: str,
        *,
        max_nodes: int,
        time_limit_ms: int,
        cancel: CancelFlag,
        deadline_s: float | None,
    ) -> search.SolveResult:
        """One Solve call: ``state`` searched by ``algorithm`` within the request's budget.

        ``max_nodes`` and ``time_limit_ms`` 0 ask for the server's limits, and more than them is
        ``LimitExceeded``. The time counts from the call's arrival and never runs past the client's
        deadline (``deadline_s``: the seconds it has left, None for none). An ``unknown`` result
        says which limit ended it: ``max_nodes``, ``memory``, ``time_limit`` or ``cancelled``.
        """
        return self._solve(state, algorithm, self._solve_budget(max_nodes, time_limit_ms, deadline_s), cancel)

    def _solve(self, state: State, algorithm: str, budget: SolveBudget, cancel: CancelFlag) -> search.SolveResult:
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
        self,
        state: State,
        *,
        max_states: int,
        time_limit_ms: int,
        samples: int | None,
        seed: int,
        cancel: CancelFlag,
        deadline_s: float | None,
    ) -> puzzles.PuzzleAnalysis:
        """``puzzles.analyze`` within the request's budget: ``max_states`` states (0: the server's) and Solve's time.

        ``AnalysisStopped`` when stopped early. ``samples`` None is ``analyze``'s default;
        ``deadline_s`` is the time the client has left, in seconds (None: no deadline).
        """
        budget = self._puzzle_budget(max_states, time_limit_ms, deadline_s)
        self._check_samples(samples)
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
        *,
        time_limit_ms: int,
        rows: int,
        cols: int,
        seed: int,
        iterations: int | None,
        energy: str | None,
        cancel: CancelFlag,
        deadline_s: float | None,
    ) -> GeneratedPuzzle:
        """``boaf.puzzles.generation.generate`` within the request's seconds (0: the server's, as Solve's).

        ``None`` energy is the default; ``deadline_s`` is the time the client has left, in seconds (None: none).
        """
        budget = self._puzzle_budget(0, time_limit_ms, deadline_s)
        self._check_generation(cards, rows, cols, iterations)
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
                "classify_exact_deal_nodes": model.exact.deal_nodes,
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
        result = self._solve(states[0], search.DEFAULT_ALGORITHM, budget, CancelFlag())
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
