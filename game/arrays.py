"""States as numpy arrays, the interchange format of the compiled kernels.

A batch of states on one grid shape is an ``int8`` array of shape
``(n_states, rows * cols)``: the top card (0 … 51, see ``boaf.game.cards``) of each
cell in row-major order, or ``EMPTY`` (-1). Stack heights do not affect play, so
the kernels never need them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from boaf.game.errors import InvalidState
from boaf.game.state import State

EMPTY = -1


def state_to_array(state: State) -> np.ndarray:
    """One state as an ``int8`` vector of ``rows * cols`` top cards, ``EMPTY`` for empty cells."""
    return np.array([EMPTY if c is None else c for c in state.cells], dtype=np.int8)


def states_to_array(states: Sequence[State]) -> np.ndarray:
    """States of one grid shape as an ``int8`` array of shape ``(len(states), rows * cols)``."""
    if not states:
        return np.empty((0, 0), dtype=np.int8)
    shape = (states[0].rows, states[0].cols)
    for i, state in enumerate(states):
        if (state.rows, state.cols) != shape:
            raise InvalidState(f"states[{i}] is {state.rows}x{state.cols}, but the batch is {shape[0]}x{shape[1]}")
    flat = [EMPTY if c is None else c for state in states for c in state.cells]
    return np.array(flat, dtype=np.int8).reshape(len(states), shape[0] * shape[1])


def array_to_state(cells: np.ndarray, rows: int, cols: int) -> State:
    """The state (stack heights 1) of one row of a batch array."""
    return State.from_cells(rows, cols, [None if c < 0 else int(c) for c in cells.tolist()])
