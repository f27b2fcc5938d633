"""What the classifier sees: the feature vector, plus the outcome of a small exact probe.

The probe is the exact solver (Compatible DFS) run with a node budget
(``probe_nodes``, 256 by default). Its two columns are ``probe_outcome`` (1 solvable, 0 unsolvable, 0.5
budget spent) and ``probe_nodes`` (states it expanded). Most states small enough
to be decided within the budget are decided exactly, and the learned model
spends its capacity on the rest. The budget is recorded in the model, so the
service probes exactly as training did. A budget of 0 turns the probe off, which
gives the papers' pure-feature classifier.

A model trained on the hard remainder may also take the columns of a budgeted
search's progress (``boaf.search.progress``, ``progress_nodes`` states per search, 0: none),
what the exact path's own search learned before its budget ran out (``EXACT_COLUMNS``),
and the summed-up features of the states one move down (``boaf.features.children``).

Every column is rounded to float32, the precision the ONNX model compares in.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from boaf.features import feature_matrix, feature_names
from boaf.features.children import child_feature_names, child_matrix
from boaf.game.arrays import states_to_array
from boaf.game.state import State
from boaf.models.errors import ModelError
from boaf.models.exact_path import ExactBudget, exact_search
from boaf.search import LEARNED_COLUMNS, PROGRESS_COLUMNS, search_progress

PROBE_COLUMNS = ("probe_outcome", "probe_nodes")
DEFAULT_PROBE_NODES = 256
#: What the exact path's search learned on a state it left open (``boaf.search.LEARNED_COLUMNS``, one search of
#: the grid's budget): the fewest stacks it reached over the state's stacks, the dead states it stored in the
#: memo and the children it found there, the expanded states without a child, the root's children and how many
#: of them it closed, and that as a share. The search is the one Classify has run already, so they cost nothing.
EXACT_COLUMNS = (
    "exact_fewest_stacks",
    "exact_memo",
    "exact_memo_hits",
    "exact_dead_ends",
    "exact_root_moves",
    "exact_root_closed",
    "exact_root_closed_share",
)


def input_names(probe_nodes: int, progress_nodes: int = 0, *, children: bool = False, exact: bool = False) -> list[str]:
    """Column names of the model input for a probe budget, a progress budget (0: none), the exact path's
    columns and the child features."""
    return (
        feature_names()
        + (list(PROBE_COLUMNS) if probe_nodes else [])
        + (list(PROGRESS_COLUMNS) if progress_nodes else [])
        + (list(EXACT_COLUMNS) if exact else [])
        + (child_feature_names() if children else [])
    )


def model_inputs(
    states: Sequence[State],
    probe_nodes: int,
    progress_nodes: int = 0,
    *,
    children: bool = False,
    exact: ExactBudget | None = None,
) -> np.ndarray:
    """The model input matrix of ``states`` (float64 holding float32-rounded values), in input order.

    ``exact`` (None: no such columns) is the exact path whose search's ``EXACT_COLUMNS`` the model reads: each
    state is searched with it here (``exact_search``, its first search), as Classify searches it.
    """
    width = len(input_names(probe_nodes, progress_nodes, children=children, exact=exact is not None))
    out = np.empty((len(states), width), dtype=np.float64)
    for (rows, cols), index in states_by_shape(states).items():
        cells = states_to_array([states[i] for i in index])
        learned = None if exact is None else exact_search(cells, rows, cols, exact, second=False).learned
        out[index] = cell_inputs(
            cells, rows, cols, probe_nodes, progress_nodes=progress_nodes, children=children, learned=learned
        )
    return out


def exact_columns(cells: np.ndarray, learned: np.ndarray) -> np.ndarray:
    """``EXACT_COLUMNS`` (float64) of states ``cells`` from their searches' ``learned`` rows (``LEARNED_COLUMNS``)."""
    column = {name: learned[:, i].astype(np.float64) for i, name in enumerate(LEARNED_COLUMNS)}
    stacks = np.maximum(np.count_nonzero(cells >= 0, axis=1), 1).astype(np.float64)
    return np.column_stack(
        [
            (stacks - column["deepest"]) / stacks,
            column["memo"],
            column["memo_hits"],
            column["dead_ends"],
            column["root_moves"],
            column["root_closed"],
            column["root_closed"] / np.maximum(column["root_moves"], 1.0),
        ]
    )


def cell_inputs(
    cells: np.ndarray,
    rows: int,
    cols: int,
    probe_nodes: int,
    *,
    progress_nodes: int = 0,
    children: bool = False,
    learned: np.ndarray | None = None,
    cancel: np.ndarray | None = None,
) -> np.ndarray:
    """``model_inputs`` of a batch on one grid given as ``boaf.game.arrays`` cells (``int8``, ``(n, rows*cols)``).

    ``learned`` (None: no ``EXACT_COLUMNS``) holds each state's row of what the exact path's search learned
    (``Predictions.learned``). Each extra block (probe, progress, children) is one compiled call for the whole
    batch. ``cancel``
    (an int64[1] flag) stops the features, the progress search and the child features between states:
    they raise ``FeaturesStopped`` or ``ProgressStopped`` (both ``boaf.game.errors.Stopped``).
    """
    matrix = feature_matrix(cells, rows, cols, cancel=cancel)
    if probe_nodes:
        # Local for start-up time, as in probe_columns.
        from boaf.search.probe import probe

        outcome, nodes = probe(cells, rows, cols, max_nodes=probe_nodes)
        matrix = np.column_stack([matrix, outcome, nodes])
    if progress_nodes:
        matrix = np.column_stack([matrix, search_progress(cells, rows, cols, progress_nodes, cancel=cancel)])
    if learned is not None:
        if learned.shape != (cells.shape[0], len(LEARNED_COLUMNS)):
            raise ModelError(f"learned rows have shape {learned.shape}; {cells.shape[0]} states need one row each")
        matrix = np.column_stack([matrix, exact_columns(cells, learned)])
    if children:
        matrix = np.column_stack([matrix, child_matrix(cells, rows, cols, cancel=cancel)])
    return as_model_input(matrix)


def probe_columns(states: Sequence[State], probe_nodes: int) -> np.ndarray:
    """``(probe_outcome, probe_nodes)`` for each state, from budgeted exact searches.

    States of several grid shapes are probed shape by shape, in input order.
    """
    # Local for start-up time: loading a classifier (or a model without a probe) skips the solver's kernel.
    from boaf.search.probe import probe

    out = np.empty((len(states), 2), dtype=np.float64)
    for shape, index in states_by_shape(states).items():
        outcome, nodes = probe(states_to_array([states[i] for i in index]), *shape, max_nodes=probe_nodes)
        out[index, 0], out[index, 1] = outcome, nodes
    return out


FLOAT32_MAX = float(np.finfo(np.float32).max)


def as_model_input(matrix: np.ndarray) -> np.ndarray:
    """Round a matrix to float32 values, the precision the ONNX model sees.

    Values past float32's range (a 52-card state's ``spanning_trees`` reaches
    ~1e80) become its largest finite value rather than overflowing to inf: every
    split threshold of the model is a finite float32, so each such value still
    falls on the same side of every split, and every value in range is unchanged.
    """
    clipped: np.ndarray = np.clip(matrix, -FLOAT32_MAX, FLOAT32_MAX)
    return clipped.astype(np.float32).astype(np.float64)


def states_by_shape(states: Sequence[State]) -> dict[tuple[int, int], np.ndarray]:
    """The row indices of ``states`` by grid shape ``(rows, cols)``, in input order."""
    groups: dict[tuple[int, int], list[int]] = {}
    for i, state in enumerate(states):
        groups.setdefault((state.rows, state.cols), []).append(i)
    return {shape: np.array(index) for shape, index in groups.items()}
