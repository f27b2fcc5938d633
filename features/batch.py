"""The fast batch path: many states in, a feature matrix or Arrow table out.

This is what the service, the models and the exports call. It runs the compiled
kernel (``boaf.features.compiled``) over a batch and equals ``boaf.features.reference``
exactly on integer features and to 1e-9 on the others.

Exact integers (``spanning_trees``, ``adjacency_det``):

- ``feature_matrix`` holds them as float64, i.e. the nearest double (the same
  as ``float(exact)``), which is exact up to 2^53: that covers every 4x4 state
  in practice (the densest 16-card sets have about 3e14 spanning trees).
- ``exact_integers`` and ``feature_table`` keep them exact: int64 whenever the
  value fits (always, for at most 17 stacks, hence every 4x4 state). A value
  that does not fit int64 (possible only on grids of more than 17 cells) is null
  in the int64 column, and its decimal text is in the companion string column
  ``<name>_text``, which is null otherwise. The table schema is therefore the
  same for every grid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from boaf.features import compiled as kernel
from boaf.features.schema import BIG_INTEGER_FEATURES, FEATURE_INDEX, SCHEMA_VERSION, feature_names, is_integer_feature
from boaf.game.arrays import EMPTY, states_to_array
from boaf.game.cards import DECK_SIZE
from boaf.game.errors import InvalidState, Stopped
from boaf.game.state import State

if TYPE_CHECKING:  # Arrow is boaf[batch]'s: serving never builds tables
    import pyarrow as pa

INT64_MAX = np.iinfo(np.int64).max
TEXT_SUFFIX = "_text"
CHUNK_STATES = 1024  # states per kernel call: the exact integers' work arrays stay small (~2 MB on 52 cards)

StatesOrArray = Sequence[State] | np.ndarray


class FeaturesStopped(Stopped):
    """The cancel flag was set before every state of the batch had its features."""


@dataclass(frozen=True)
class FeatureBatch:
    """Features of a batch: the float matrix and the exact big integers.

    ``matrix`` is (N, len(feature_names())) float64 in schema order.
    ``exact[name]`` for ``name`` in ``BIG_INTEGER_FEATURES`` is an int64 array,
    or an object array of Python ints when some value may exceed int64.
    """

    matrix: np.ndarray
    exact: dict[str, np.ndarray]


def compute_features(
    states: StatesOrArray, rows: int | None = None, cols: int | None = None, *, cancel: np.ndarray | None = None
) -> FeatureBatch:
    """Every feature of a batch of states.

    ``states`` is a sequence of ``State`` (any mix of grid shapes) or an int8
    array of shape (N, rows*cols) as made by ``boaf.game.arrays.states_to_array``;
    an array needs ``rows`` and ``cols`` unless it has 16 columns (4x4).
    ``cancel`` is an int64[1] flag another thread may set: the kernel reads it
    before each state, and once it is set the call raises ``FeaturesStopped``.
    """
    flag = np.zeros(1, dtype=np.int64) if cancel is None else cancel
    if isinstance(states, np.ndarray):
        r, c = _array_grid(states, rows, cols)
        return _compute_array(_checked_array(states, r * c), c, flag)
    return _compute_states(list(states), flag)


def feature_matrix(
    states: StatesOrArray, rows: int | None = None, cols: int | None = None, *, cancel: np.ndarray | None = None
) -> np.ndarray:
    """The (N, n_features) float64 feature matrix in schema order; see ``compute_features``."""
    return compute_features(states, rows, cols, cancel=cancel).matrix


def feature_table(states: StatesOrArray, rows: int | None = None, cols: int | None = None) -> pa.Table:
    """Features as an Arrow table: one column per feature in schema order, then the ``_text`` columns.

    Integer features are int64, the others float64; the schema version is in
    the table's metadata under ``boaf.features.schema``.
    """
    import pyarrow as pa  # boaf[batch]'s; for start-up time, serving (which never builds tables) skips it

    batch = compute_features(states, rows, cols)
    columns: dict[str, pa.Array] = {}
    texts: dict[str, pa.Array] = {}
    for name in feature_names():
        if name in batch.exact:
            columns[name], texts[name + TEXT_SUFFIX] = _exact_columns(batch.exact[name])
        elif is_integer_feature(name):
            columns[name] = pa.array(batch.matrix[:, FEATURE_INDEX[name]].astype(np.int64))
        else:
            columns[name] = pa.array(batch.matrix[:, FEATURE_INDEX[name]])
    return pa.table({**columns, **texts}, metadata=schema_metadata())


def schema_metadata() -> dict[str, str]:
    """Metadata that records the feature schema in tables and Parquet files."""
    return {"boaf.features.schema": SCHEMA_VERSION}


def arrow_schema() -> pa.Schema:
    """The Arrow schema of ``feature_table`` (without the metadata)."""
    import pyarrow as pa  # for start-up time, as in feature_table

    fields = [pa.field(n, pa.int64() if is_integer_feature(n) else pa.float64()) for n in feature_names()]
    fields += [pa.field(n + TEXT_SUFFIX, pa.string()) for n in BIG_INTEGER_FEATURES]
    return pa.schema(fields)


# ---------------------------------------------------------------- internals


def _compute_states(states: list[State], cancel: np.ndarray) -> FeatureBatch:
    """Group by grid shape, run each group, and put rows back in input order."""
    if not states:
        return _compute_array(np.empty((0, 16), dtype=np.int8), 4, cancel)
    shapes: dict[tuple[int, int], list[int]] = {}
    for i, state in enumerate(states):
        shapes.setdefault((state.rows, state.cols), []).append(i)
    if len(shapes) == 1:
        ((_, cols),) = shapes
        return _compute_array(states_to_array(states), cols, cancel)
    matrix = np.empty((len(states), len(FEATURE_INDEX)), dtype=np.float64)
    exact = {name: np.empty(len(states), dtype=object) for name in BIG_INTEGER_FEATURES}
    for (_, cols), where in shapes.items():
        part = _compute_array(states_to_array([states[i] for i in where]), cols, cancel)
        matrix[where] = part.matrix
        for name in BIG_INTEGER_FEATURES:
            exact[name][where] = part.exact[name]
    return FeatureBatch(matrix, exact)


def _compute_array(cells: np.ndarray, cols: int, cancel: np.ndarray) -> FeatureBatch:
    # Chunk by chunk, so the Garner digits and the exact integers of a large batch are never all held at once.
    parts = [_compute_chunk(cells[start : start + CHUNK_STATES], cols, cancel) for start in _chunk_starts(cells)]
    if len(parts) == 1:
        return parts[0]
    matrix = np.concatenate([part.matrix for part in parts])
    exact = {name: np.concatenate([part.exact[name] for part in parts]) for name in BIG_INTEGER_FEATURES}
    return FeatureBatch(matrix, exact)


def _chunk_starts(cells: np.ndarray) -> range:
    return range(0, max(cells.shape[0], 1), CHUNK_STATES)


def _compute_chunk(cells: np.ndarray, cols: int, cancel: np.ndarray) -> FeatureBatch:
    tables = kernel.tables_for(cells.shape[1] // cols, cols)
    primes = tables.primes
    matrix = np.zeros((cells.shape[0], len(FEATURE_INDEX)), dtype=np.float64)
    digits = np.zeros((cells.shape[0], 2, len(primes)), dtype=np.int64)
    scratch = kernel.scratch_for(cells.shape[1], len(primes))
    done = kernel.batch_kernel(cells, tables, scratch, matrix, digits=digits, cancel=cancel)
    if done < cells.shape[0]:
        raise FeaturesStopped(f"stopped after the features of {done} of {cells.shape[0]} states (cancelled)")
    exact = {
        "spanning_trees": from_digits(digits[:, kernel.SPANNING], primes, signed=False),
        "adjacency_det": from_digits(digits[:, kernel.DETERMINANT], primes, signed=True),
    }
    for name, values in exact.items():
        matrix[:, FEATURE_INDEX[name]] = (
            values.astype(np.float64) if values.dtype != object else [float(v) for v in values]
        )
    return FeatureBatch(matrix, exact)


def from_digits(digits: np.ndarray, primes: np.ndarray, *, signed: bool) -> np.ndarray:
    """Exact integers from Garner digits; ``signed`` reads the symmetric range and takes abs."""
    k = len(primes)
    if k <= 2:  # the modulus is below 2^62, so int64 arithmetic is exact
        value = digits[:, 0] + (digits[:, 1] * primes[0] if k == 2 else 0)
        modulus = int(np.prod(primes))
        if signed:
            value = np.where(value > modulus // 2, modulus - value, value)
        return value.astype(np.int64)
    radices = [1]
    for p in primes[:-1]:
        radices.append(radices[-1] * int(p))
    modulus = radices[-1] * int(primes[-1])
    out = np.empty(len(digits), dtype=object)
    for i, row in enumerate(digits.tolist()):
        value = sum(d * r for d, r in zip(row, radices, strict=True))
        out[i] = modulus - value if signed and value > modulus // 2 else value
    return out


def _exact_columns(values: np.ndarray) -> tuple[pa.Array, pa.Array]:
    import pyarrow as pa  # for start-up time, as in feature_table

    if values.dtype != object:
        return pa.array(values, type=pa.int64()), pa.nulls(len(values), type=pa.string())
    fits = [v <= INT64_MAX for v in values]
    ints = pa.array([int(v) if ok else None for v, ok in zip(values, fits, strict=True)], type=pa.int64())
    texts = pa.array([None if ok else str(v) for v, ok in zip(values, fits, strict=True)], type=pa.string())
    return ints, texts


def _array_grid(cells: np.ndarray, rows: int | None, cols: int | None) -> tuple[int, int]:
    if cells.ndim != 2:
        raise InvalidState(f"a batch array must be 2-dimensional (states × cells), got {cells.ndim} dimensions")
    if rows is None and cols is None:
        if cells.shape[1] != 16:
            raise InvalidState(f"a batch of {cells.shape[1]} cells per state needs rows and cols")
        return 4, 4
    if rows is None or cols is None or rows < 1 or cols < 1 or rows * cols != cells.shape[1]:
        raise InvalidState(f"grid {rows}x{cols} does not match a batch of {cells.shape[1]} cells per state")
    return rows, cols


def _checked_array(cells: np.ndarray, n_cells: int) -> np.ndarray:
    """The batch as C-contiguous int8, after checking every row is a valid state."""
    if n_cells > DECK_SIZE:
        raise InvalidState(f"grid has {n_cells} cells; at most {DECK_SIZE} are allowed")
    if cells.size and (cells.min() < EMPTY or cells.max() >= DECK_SIZE):
        bad = int(np.argmax((cells < EMPTY).any(axis=1) | (cells >= DECK_SIZE).any(axis=1)))
        raise InvalidState(f"state {bad}: cells must hold -1 (empty) or a card 0..51")
    empty_rows = ~(cells >= 0).any(axis=1)
    if empty_rows.any():
        raise InvalidState(f"state {int(np.argmax(empty_rows))}: no stacks: every cell is empty")
    ordered = np.sort(cells, axis=1)
    duplicated = ((ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] >= 0)).any(axis=1)
    if duplicated.any():
        raise InvalidState(f"state {int(np.argmax(duplicated))}: a card appears twice")
    return np.ascontiguousarray(cells, dtype=np.int8)
