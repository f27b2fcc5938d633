"""The served solvability classifier: an ONNX model run by onnxruntime.

A model directory holds ``classifier.onnx``, ``model_card.json`` and, when the
model has an exact path (``boaf.models.exact_path``), ``exact_path.json``; a model trained
on the hard remainder also has ``calibration.json`` (``boaf.models.calibration``). The ONNX
file carries the feature schema it was trained on in its metadata, and loading
refuses a model whose schema differs from ``features.SCHEMA_VERSION``: feeding a
model columns it was not trained on gives confident nonsense.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from boaf.features import SCHEMA_VERSION, feature_names
from boaf.game.arrays import states_to_array
from boaf.game.errors import Stopped
from boaf.game.state import State
from boaf.models import registry
from boaf.models.calibration import Calibration, read_calibration
from boaf.models.errors import ClassifyStopped, ModelError
from boaf.models.exact_path import (
    NO_EXACT_PATH,
    ExactBudget,
    Predictions,
    exact_search,
    ffud_like_deals,
    grid_key,
    read_exact_budget,
    search_again,
    whole_deals,
)
from boaf.models.inputs import cell_inputs, input_names, model_inputs, states_by_shape
from boaf.models.onnx_session import OnnxSession

CLASSIFIER_FILE = "classifier.onnx"
CARD_FILE = "model_card.json"
ESTIMATE_FLOOR = 1e-3  # a calibrated estimate stays within [0.001, 0.999] (``bounded``) ...
DEAL_CEILING = 1 - 1e-4  # ... but a whole 4x4 deal's may reach 0.9999
FEATURE_COLUMNS = len(feature_names())  # a model input's first columns: the features, in schema order
CHUNK_STATES = 256  # states per pass of every stage: a chunk's inference and probe take well under 250 ms
Trace = Callable[..., AbstractContextManager[Any]]  # (stage name, **attributes) -> a block around the stage


def untraced(stage: str, **attributes: Any) -> AbstractContextManager[Any]:
    """The default ``Classifier.trace``: nothing around each stage."""
    return contextlib.nullcontext()


def bounded(estimate: np.ndarray, deals: np.ndarray) -> np.ndarray:
    """Calibrated estimates kept off certainty, which is for exact answers: within [``ESTIMATE_FLOOR``,
    1 - ``ESTIMATE_FLOOR``], except that a whole 4x4 deal's (``deals``) may reach ``DEAL_CEILING``.

    The deals' ceiling is higher because the open whole deals are 99.97% solvable: at 0.999 every one of
    them would cost at least -log(0.999) = 0.0010 of log loss, three times the base-rate constant's
    0.0003 per deal, whatever the model knew.
    """
    high = np.where(deals, DEAL_CEILING, 1 - ESTIMATE_FLOOR)
    out: np.ndarray = np.clip(estimate, ESTIMATE_FLOOR, high)
    return out


@dataclass
class Classifier:
    """A loaded model: ``predict`` turns states into P(solvable)."""

    version: str
    schema_version: str
    probe_nodes: int
    threshold: float
    card: dict[str, Any]
    session: OnnxSession = field(repr=False)
    directory: Path | None = None  # the model version directory it was loaded from
    exact: ExactBudget = NO_EXACT_PATH  # the exact path's node budget, from the model directory
    calibration: Calibration | None = None  # per-stack recalibration of the learned slice, when the model has one
    progress_nodes: int = 0  # the budget of the search whose progress the model reads (boaf.search.progress); 0: none
    child_features: bool = False  # whether the model reads the states one move down (boaf.features.children)
    exact_columns: bool = False  # whether it reads what the exact path's search learned (inputs.EXACT_COLUMNS)
    # Runs around each stage of a chunk ("exact path", "features", "second search" when a deal looks like an FFUD,
    # "inference"): the service's tracing spans.
    trace: Trace = field(default=untraced, repr=False, compare=False)

    @property
    def ordering_path(self) -> Path | None:
        """The version's ``ordering.json`` (Ordered DFS coefficients and cutoff), when it has one."""
        path = self.directory / "ordering.json" if self.directory else None
        return path if path is not None and path.is_file() else None

    def classify(self, states: Sequence[State], cancel: np.ndarray | None = None) -> Predictions:
        """Classify's answer for each state: exact where the budgeted search settles it, learned elsewhere.

        States of several grid shapes are answered shape by shape. ``cancel`` (an int64[1]
        flag another thread may set, ``search.solve``'s) stops every stage: see ``classify_cells``.
        """
        answers = Predictions.empty(len(states))
        for (rows, cols), index in states_by_shape(states).items():
            answers.put(
                index, self.classify_cells(states_to_array([states[i] for i in index]), rows, cols, cancel=cancel)
            )
        return answers

    def classify_cells(
        self,
        cells: np.ndarray,
        rows: int,
        cols: int,
        *,
        cancel: np.ndarray | None = None,
        exact: ExactBudget | None = None,
    ) -> Predictions:
        """``classify`` for a batch on one grid given as ``boaf.game.arrays`` cells (``int8``, ``(n, rows*cols)``).

        The batch goes through in chunks of ``CHUNK_STATES``, so that the working arrays stay
        small whatever its size. Every stage reads ``cancel``: the exact search at each node,
        the features and the progress search before each state, inference between chunks. Once
        it is set the call raises ``ClassifyStopped``, within one state's work (~50 ms on 52 cards).
        ``exact`` replaces the model's exact-path budget for this call (None: the model's); the
        search of each state gets the grid's budget (``ExactBudget.nodes_for(rows, cols)``).
        """
        cells = np.ascontiguousarray(cells, dtype=np.int8).reshape(-1, rows * cols)
        flag = np.zeros(1, dtype=np.int64) if cancel is None else cancel
        budget = self.exact if exact is None else exact
        n = cells.shape[0]
        if n <= CHUNK_STATES:  # one chunk: its answers are the answers (most calls; no copy)
            answers = self._classify_chunk(cells, rows, cols, flag, budget)
            _raise_if_set(flag, f"after {n} of {n} states")
            return answers
        answers = Predictions.empty(n)
        for start in range(0, n, CHUNK_STATES):
            stop = min(start + CHUNK_STATES, n)
            answers.put(np.arange(start, stop), self._classify_chunk(cells[start:stop], rows, cols, flag, budget))
            _raise_if_set(flag, f"after {stop} of {n} states")
        return answers

    def _classify_chunk(
        self, cells: np.ndarray, rows: int, cols: int, cancel: np.ndarray, exact: ExactBudget
    ) -> Predictions:
        with self.trace("exact path", states=len(cells), max_nodes=exact.nodes_for(rows, cols)):
            answers = exact_search(cells, rows, cols, exact, cancel=cancel, second=False)
        still_open = np.flatnonzero(~answers.exact)
        if still_open.size:
            _raise_if_set(cancel, "in the exact path")  # it stopped short: nothing more is wanted
            try:
                with self.trace("features", states=int(still_open.size)):
                    inputs = cell_inputs(
                        cells[still_open],
                        rows,
                        cols,
                        self.probe_nodes,
                        progress_nodes=self.progress_nodes,
                        children=self.child_features,
                        learned=answers.learned[still_open] if self.exact_columns else None,
                        cancel=cancel,
                    )
            except Stopped as exc:
                raise ClassifyStopped(f"classify cancelled while computing its inputs ({exc})") from exc
            features = inputs[:, :FEATURE_COLUMNS]
            if (
                exact.deal_nodes_for(rows, cols)
                and (looks := ffud_like_deals(cells[still_open], rows, cols, features)).size
            ):
                # The exact path's second search, on the features just computed.
                with self.trace("second search", states=int(looks.size), max_nodes=exact.deal_nodes):
                    again = search_again(cells[still_open], rows, cols, features=features, budget=exact, cancel=cancel)
                answers.add(still_open, again)
                still_open, inputs = still_open[~again.exact], inputs[~again.exact]
                _raise_if_set(cancel, "in the exact path's second search")
        if still_open.size:
            with self.trace("inference", states=int(still_open.size)):
                p = self.predict_matrix(inputs)
            if self.calibration is not None:
                # An estimate never reads as certain: p of exactly 1 or 0 is for exact answers.
                stacks = np.count_nonzero(cells[still_open] >= 0, axis=1)
                deals = whole_deals(cells[still_open], rows, cols)
                p = bounded(self.calibration.apply(p, stacks, deals, grid_key(rows, cols)), deals)
            answers.p_solvable[still_open] = p
        return answers

    def predict(self, states: Sequence[State]) -> np.ndarray:
        """The learned model's P(solvable) for each state (float64, in input order), without the exact path."""
        if not states:
            return np.empty(0, dtype=np.float64)
        return self.predict_matrix(self.inputs(states))

    def inputs(self, states: Sequence[State]) -> np.ndarray:
        """The model input matrix of ``states``, every column as Classify computes it (its exact search included)."""
        exact = self.exact if self.exact_columns else None
        return model_inputs(states, self.probe_nodes, self.progress_nodes, children=self.child_features, exact=exact)

    def predict_matrix(self, matrix: np.ndarray) -> np.ndarray:
        """P(solvable) for rows of a model input matrix (``boaf.models.inputs``)."""
        if matrix.ndim != 2 or matrix.shape[1] != self.session.n_features:
            raise ModelError(
                f"feature matrix has shape {matrix.shape}; the model takes {self.session.n_features} columns"
            )
        return self.session.p_solvable(matrix)

    def labels(self, p_solvable: np.ndarray) -> np.ndarray:
        """Solvable (True) where P(solvable) reaches the model's threshold."""
        return np.asarray(p_solvable >= self.threshold)


def load_classifier(directory: Path | None = None) -> Classifier:
    """Load the model in ``directory`` and check its schema.

    ``directory`` is a model version directory or a model root whose CURRENT
    names one (default: the committed root, see ``boaf.models.registry``). Raises
    ``ModelError`` naming the file when a file is missing or malformed, or when
    the model was trained on a feature schema other than this build's.
    """
    directory = registry.resolve(directory)
    onnx_path, card_path = directory / CLASSIFIER_FILE, directory / CARD_FILE
    for path in (onnx_path, card_path):
        if not path.is_file():
            raise ModelError(f"model file {path} is missing")
    try:
        card = json.loads(card_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ModelError(f"{card_path}: not valid JSON: {exc.msg} at line {exc.lineno}") from exc
    session = OnnxSession(onnx_path)
    schema = session.metadata.get("feature_schema")
    if schema != SCHEMA_VERSION:
        raise ModelError(
            f"{onnx_path} was trained on feature schema {schema!r}, but this build computes {SCHEMA_VERSION!r}; "
            "retrain the model (boaf retrain) or install a matching boaf"
        )
    probe_nodes = _count(session.metadata, "probe_nodes", onnx_path)
    progress_nodes = _count(session.metadata, "progress_nodes", onnx_path)
    child_features = _count(session.metadata, "child_features", onnx_path)
    exact_columns = _count(session.metadata, "exact_columns", onnx_path)
    for name, flag in (("child_features", child_features), ("exact_columns", exact_columns)):
        if flag > 1:
            raise ModelError(f"{onnx_path}: {name} metadata {flag} is neither 0 nor 1")
    expected = len(input_names(probe_nodes, progress_nodes, children=bool(child_features), exact=bool(exact_columns)))
    if session.n_features != expected:
        raise ModelError(
            f"{onnx_path} takes {session.n_features} inputs; schema {SCHEMA_VERSION} with its metadata "
            f"(probe_nodes {probe_nodes}, progress_nodes {progress_nodes}, child_features {child_features}, "
            f"exact_columns {exact_columns}) gives {expected}"
        )
    return Classifier(
        version=session.metadata.get("model_version", "unknown"),
        probe_nodes=probe_nodes,
        schema_version=schema,
        threshold=float(session.metadata.get("threshold", "0.5")),
        card=card,
        session=session,
        directory=directory,
        exact=read_exact_budget(directory),
        calibration=read_calibration(directory),
        progress_nodes=progress_nodes,
        child_features=bool(child_features),
        exact_columns=bool(exact_columns),
    )


def _raise_if_set(cancel: np.ndarray, where: str) -> None:
    if cancel[0] != 0:
        raise ClassifyStopped(f"classify cancelled {where}")


def _count(metadata: dict[str, str], name: str, path: Path) -> int:
    text = metadata.get(name, "0")
    if not text.isdigit():
        raise ModelError(f"{path}: {name} metadata {text!r} is not a non-negative integer")
    return int(text)
