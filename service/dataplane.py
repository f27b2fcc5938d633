"""What the service does, as plain functions over domain values (no protobuf, no gRPC).

The servicer converts a request, calls one method here, and converts the result
back. The ``DataPlane`` holds the loaded classifier and the limits from the
settings; it is built once the model has loaded and been warmed up.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

import numpy as np

import features
import puzzles
import search
from game.deals import deal
from game.state import State
from models.errors import ModelError
from models.inputs import as_model_input
from puzzles.generation import GeneratedPuzzle, generate
from search.probe import probe
from service.errors import DeadlineExceeded, LimitExceeded, ModelUnavailable
from service.settings import Settings

# Deals the warm-up classifies and featurizes; the first (solvable in 48 nodes) is also solved.
WARM_UP_SEEDS = (367297990, 360528)


class Classifier(Protocol):
    """The part of ``models.classifier.Classifier`` the service uses."""

    version: str
    schema_version: str
    threshold: float
    card: dict[str, Any]

    probe_nodes: int

    @property
    def ordering_path(self) -> Path | None: ...

    def predict(self, states: Sequence[State]) -> np.ndarray: ...

    def predict_matrix(self, matrix: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class StateArray:
    """A validated batch of states on one grid, as ``game.arrays`` cells (int8, -1 empty), row-major.

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
    """P(solvable) of each state, and the model that said so."""

    p_solvable: np.ndarray
    threshold: float
    model_version: str


@dataclass(frozen=True)
class FeatureRows:
    """Feature vectors of a batch: ``matrix[i, j]`` is feature ``names[j]`` of state ``i``."""

    matrix: np.ndarray  # (n_states, len(names)) float64
    names: tuple[str, ...]
    schema_version: str


@dataclass(frozen=True)
class SolveBudget:
    """Limits of one search: nodes, and seconds of search time."""

    max_nodes: int
    time_limit_s: float


class CancelFlag:
    """Stops a running search from another thread: ``set()`` and the kernel returns within ~1,000 nodes."""

    def __init__(self) -> None:
        self.array = np.zeros(1, dtype=np.int64)  # the kernel polls element 0 without the GIL

    def set(self) -> None:
        """Ask the search to stop (safe from any thread, any number of times)."""
        self.array[0] = 1

    def is_set(self) -> bool:
        """True once ``set()`` has been called."""
        return bool(self.array[0])


class DataPlane:
    """Classify, solve, features, puzzle analysis and generation, and server info over a loaded classifier."""

    def __init__(self, settings: Settings, classifier: Classifier) -> None:
        self.settings = settings
        self.classifier = classifier
        # Solve uses the ordering model installed with the classifier (a retrained one under BOAF_MODEL_DIR).
        path = classifier.ordering_path
        self.ordering = search.read_ordering(path) if path is not None else None
        self._puzzle_slots = threading.BoundedSemaphore(settings.max_concurrent_puzzles)

    def check_batch_size(self, n_states: int) -> None:
        """Raise ``LimitExceeded`` when a batch has more than ``max_batch_size`` states."""
        limit = self.settings.max_batch_size
        if n_states > limit:
            raise LimitExceeded(
                f"states: a batch of {n_states} states exceeds the limit of {limit} (BOAF_MAX_BATCH_SIZE)"
            )

    def classify(self, states: Batch) -> Classification:
        """P(solvable) of each state (float64, in input order)."""
        try:
            if isinstance(states, StateArray):
                p_solvable = self.classifier.predict_matrix(_model_inputs(states, self.classifier.probe_nodes))
            else:
                p_solvable = self.classifier.predict(states)
        except ModelError as exc:
            raise ModelUnavailable(f"the served model failed: {exc}") from exc
        return Classification(p_solvable, self.classifier.threshold, self.classifier.version)

    def features(self, states: Batch) -> FeatureRows:
        """The feature vector of each state, in the schema's order."""
        return FeatureRows(_feature_matrix(states), tuple(features.feature_names()), features.SCHEMA_VERSION)

    def solve_budget(self, max_nodes: int, time_limit_ms: int, deadline_s: float | None) -> SolveBudget:
        """The budget of a Solve: the request's (0 = the server's limit), and never past the client's deadline.

        ``deadline_s`` is the time the client has left, in seconds (None: no deadline).
        A request asking for more than the server allows is ``LimitExceeded``.
        """
        settings = self.settings
        if max_nodes > settings.solve_max_nodes:
            raise LimitExceeded(
                f"max_nodes: {max_nodes} exceeds the server's limit of {settings.solve_max_nodes} "
                "(BOAF_SOLVE_MAX_NODES)"
            )
        return SolveBudget(max_nodes or settings.solve_max_nodes, self._time_limit_s(time_limit_ms, deadline_s))

    def puzzle_budget(self, max_states: int, time_limit_ms: int, deadline_s: float | None) -> SolveBudget:
        """The budget of a puzzle RPC: ``max_nodes`` is the states an analysis may keep.

        0 asks for the default, ``BOAF_PUZZLE_MAX_STATES``; more is ``LimitExceeded``.
        The time limit is Solve's (``BOAF_SOLVE_TIME_LIMIT_MS``), as in ``solve_budget``.
        """
        settings = self.settings
        if max_states > settings.puzzle_max_states:
            raise LimitExceeded(
                f"max_states: {max_states} exceeds the server's limit of {settings.puzzle_max_states} "
                "(BOAF_PUZZLE_MAX_STATES)"
            )
        states = max_states or settings.puzzle_max_states
        return SolveBudget(states, self._time_limit_s(time_limit_ms, deadline_s))

    @contextmanager
    def puzzle_slot(self, budget: SolveBudget) -> Iterator[float]:
        """Hold one of the ``BOAF_MAX_CONCURRENT_PUZZLES`` slots; yields the seconds left of ``budget``.

        A puzzle may hold hundreds of MB while it runs, so they are few at a
        time. A call waits for a slot (a cancelled one frees its slot within
        moments) as long as its time limit allows, then gets ``LimitExceeded``.
        """
        started = time.perf_counter()
        if not self._puzzle_slots.acquire(timeout=budget.time_limit_s):
            raise LimitExceeded(
                f"puzzles: {self.settings.max_concurrent_puzzles} already running (BOAF_MAX_CONCURRENT_PUZZLES) "
                f"and none finished within the call's {budget.time_limit_s:.3g} s; retry later"
            )
        try:
            yield max(budget.time_limit_s - (time.perf_counter() - started), 1e-3)
        finally:
            self._puzzle_slots.release()

    def _time_limit_s(self, time_limit_ms: int, deadline_s: float | None) -> float:
        # The request's time limit (0 = the server's), never past the client's deadline.
        settings = self.settings
        if time_limit_ms > settings.solve_time_limit_ms:
            raise LimitExceeded(
                f"time_limit_ms: {time_limit_ms} exceeds the server's limit of {settings.solve_time_limit_ms} "
                "(BOAF_SOLVE_TIME_LIMIT_MS)"
            )
        seconds = (time_limit_ms or settings.solve_time_limit_ms) / 1000
        if deadline_s is not None:
            if deadline_s <= 0:
                raise DeadlineExceeded("the client's deadline passed before the search started")
            seconds = min(seconds, deadline_s)
        return seconds

    def solve(self, state: State, algorithm: str, budget: SolveBudget, cancel: CancelFlag) -> search.SolveResult:
        """The search result for ``state`` (see ``search.solve``); stops early when ``cancel`` is set.

        An ``unknown`` result says which limit ended it: ``max_nodes``, ``time_limit`` or ``cancelled``.
        """
        result = search.solve(
            state,
            algorithm,
            max_nodes=budget.max_nodes,
            time_limit=budget.time_limit_s,
            cancel=cancel.array,
            ordering=self.ordering,
        )
        if result.status != search.UNKNOWN:
            return result
        return dataclasses.replace(result, reason=_unknown_reason(result, budget, cancel))

    def analyze_puzzle(
        self, state: State, budget: SolveBudget, *, samples: int | None, seed: int, cancel: CancelFlag
    ) -> puzzles.PuzzleAnalysis:
        """``puzzles.analyze`` within ``budget`` (states and seconds); ``AnalysisStopped`` when stopped early.

        ``samples`` None is ``analyze``'s default.
        """
        options: dict[str, Any] = {} if samples is None else {"samples": samples}
        with self.puzzle_slot(budget) as seconds:
            return puzzles.analyze(
                state, budget.max_nodes, seed=seed, time_limit=seconds, cancel=cancel.array, **options
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
        """``puzzles.generation.generate`` within ``budget``'s seconds (``None`` energy: the default)."""
        options: dict[str, Any] = {} if energy is None else {"energy": energy}
        with self.puzzle_slot(budget) as seconds:
            return generate(
                cards,
                seed=seed,
                iterations=iterations,
                rows=rows,
                cols=cols,
                time_limit=seconds,
                cancel=cancel.array,
                **options,
            )

    def info(self) -> dict[str, Any]:
        """Versions, schema, model card summary and limits, as plain values."""
        settings, model = self.settings, self.classifier
        return {
            "version": _package_version(),
            "feature_schema_version": features.SCHEMA_VERSION,
            "feature_names": list(features.feature_names()),
            "model_version": model.version,
            "model_schema_version": model.schema_version,
            "model_card": model.card,
            "classify_threshold": model.threshold,
            "limits": {
                "max_batch_size": settings.max_batch_size,
                "max_message_bytes": settings.max_message_bytes,
                "max_concurrent_rpcs": settings.max_concurrent_rpcs,
                "solve_max_nodes": settings.solve_max_nodes,
                "solve_time_limit_ms": settings.solve_time_limit_ms,
            },
        }

    def warm_up(self) -> float:
        """Classify, featurize and solve a few deals so every kernel is compiled; returns the seconds taken.

        Raises when any answer is wrong, so a broken build never reports SERVING.
        """
        started = time.perf_counter()
        states = [deal(seed) for seed in WARM_UP_SEEDS]
        p_solvable = self.classify(states).p_solvable
        if p_solvable.shape != (len(states),) or not np.all((p_solvable >= 0) & (p_solvable <= 1)):
            raise ModelUnavailable(f"warm-up: the model returned {p_solvable!r} for {len(states)} states")
        self.features(states)
        budget = SolveBudget(self.settings.solve_max_nodes, self.settings.solve_time_limit_ms / 1000)
        result = self.solve(states[0], search.DEFAULT_ALGORITHM, budget, CancelFlag())
        if result.status != search.SOLVABLE:
            raise RuntimeError(f"warm-up: deal {WARM_UP_SEEDS[0]} came back {result.status}, expected solvable")
        _warm_up_puzzles()
        return time.perf_counter() - started


def _warm_up_puzzles() -> None:
    # An exact analysis and an estimate, so that the puzzle kernels are compiled (and cached) too.
    three = State.from_cells(1, 3, [0, 4, 8])  # AC 2C 3C in a row: 6 ordered pairs, then 6 last movers
    counts = [(d.states, d.solvable) for d in puzzles.analyze(three).by_depth]
    if counts != [(1, 1), (6, 6), (6, 6)]:
        raise RuntimeError(f"warm-up: AC 2C 3C analysed as {counts}, expected [(1, 1), (6, 6), (6, 6)]")
    estimate = puzzles.analyze(deal(WARM_UP_SEEDS[0], rows=2, cols=3), budget=2, samples=2)
    if estimate.exact or estimate.by_depth[0].states != 1:
        raise RuntimeError("warm-up: a puzzle over its budget was not estimated")


def _unknown_reason(result: search.SolveResult, budget: SolveBudget, cancel: CancelFlag) -> str:
    if cancel.is_set():
        return "cancelled"
    if result.nodes >= budget.max_nodes:
        return "max_nodes"
    return "time_limit"


def _model_inputs(states: StateArray, probe_nodes: int) -> np.ndarray:
    # models.inputs.model_inputs for an array batch, without rebuilding State objects
    # (a fifth of a 1,000-state Classify). tests/service/test_rpcs.py holds the two equal;
    # use the models API instead once it takes arrays.
    matrix = _feature_matrix(states)
    if probe_nodes:
        outcome, nodes = probe(states.cells, states.rows, states.cols, max_nodes=probe_nodes)
        matrix = np.column_stack([matrix, outcome, nodes])
    return as_model_input(matrix)


def _feature_matrix(states: Batch) -> np.ndarray:
    if isinstance(states, StateArray):
        return features.feature_matrix(states.cells, states.rows, states.cols)
    return features.feature_matrix(states)


def _package_version() -> str:
    try:
        return metadata.version("boaf")
    except metadata.PackageNotFoundError:
        return "unknown"
