"""What the data plane answers, as plain values: the served model's face, batches, classifications and hints.

Nothing here knows a protocol; ``boaf.service.rpc.converters`` turns these into
messages and back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from boaf.game.state import State
from boaf.models.exact_path import ExactBudget, Predictions


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


def verdict_of(exact: bool, p_solvable: float) -> str:
    """The verdict on a state the exact path settled (``exact``: WINNABLE or LOSES by ``p_solvable``), else ESTIMATE."""
    if not exact:
        return ESTIMATE
    return WINNABLE if p_solvable == 1.0 else LOSES
