"""Kahn's unsolvability classes and his 3-heuristic sieve for FFUDs.

- OBUD: G has an odd bird (a stack compatible with no other), so unsolvable.
- SFUD: no odd bird, but G is disconnected (a separated flock), so unsolvable.
- connected: G is connected; only search can tell whether it is an FFUD
  (full-flock unsolvable deal).

The 3-heuristic flags a connected 16-card deal as a possible FFUD when
``adjacency_det <= 100 and flockability < 46 and a2_zeros > 70``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from boaf.features.batch import compute_features
from boaf.features.schema import FEATURE_INDEX
from boaf.game.bits import shuffled_cells
from boaf.game.deals import check_seeds
from boaf.game.state import State

#: Kahn's thresholds: |det A| at most, pair count below, zeros of A·A above.
MAX_DETERMINANT, PAIR_COUNT_BELOW, A2_ZEROS_ABOVE = 100, 46, 70
#: ``looks_like_ffud``'s looser thresholds: pair count below, zeros of A·A above, and no bound on |det A|.
LOOSE_PAIR_COUNT_BELOW, LOOSE_A2_ZEROS_ABOVE = 50, 60
DEAL_STACKS = 16


class DealClass(StrEnum):
    """Kahn's class of a state, from its compatibility graph alone."""

    OBUD = "OBUD"
    SFUD = "SFUD"
    CONNECTED = "connected"


def kahn_class(features: Mapping[str, float]) -> DealClass:
    """The class of a state from its features (``odd_birds``, ``is_connected``)."""
    if features["odd_birds"] > 0:
        return DealClass.OBUD
    if not features["is_connected"]:
        return DealClass.SFUD
    return DealClass.CONNECTED


def three_heuristic(features: Mapping[str, float]) -> bool:
    """Kahn's flag: a connected 16-stack state with few pairs, small |det A| and many A·A zeros."""
    return bool(
        features["n_stacks"] == DEAL_STACKS
        and features["is_connected"]
        and features["adjacency_det"] <= MAX_DETERMINANT
        and features["flockability"] < PAIR_COUNT_BELOW
        and features["a2_zeros"] > A2_ZEROS_ABOVE
    )


def looks_like_ffud(matrix: np.ndarray) -> np.ndarray:
    """Which rows of a feature matrix look like an FFUD: a looser 3-heuristic, for choosing whom to search longer.

    A row is flagged when it is a connected 16-stack state with flockability below
    ``LOOSE_PAIR_COUNT_BELOW`` and more than ``LOOSE_A2_ZEROS_ABOVE`` zeros in A·A (no bound on
    |det A|). Classify's exact path gives the 4x4 deals its first search leaves open and this
    flags a second, larger search (``boaf.models.exact_path``). The thresholds were read off
    the deals 2,100,000,000-2,100,999,999 (a training range, no held-out set's): of the 23,360
    its 1,500-node search leaves open, it flags 1,974 (0.2% of the deals), holding 38 of their 40
    FFUDs; Kahn's own thresholds flag 506 holding 18. Flockability is below 49 and A·A has more
    than 53 zeros on every one of the 40; the determinant ranges up to 320.
    """
    column = {name: matrix[:, FEATURE_INDEX[name]] for name in _KAHN_COLUMNS}
    return np.asarray(
        (column["n_stacks"] == DEAL_STACKS)
        & (column["is_connected"] > 0)
        & (column["odd_birds"] == 0)
        & (column["flockability"] < LOOSE_PAIR_COUNT_BELOW)
        & (column["a2_zeros"] > LOOSE_A2_ZEROS_ABOVE)
    )


@dataclass(frozen=True)
class SieveResult:
    """What the sieve found among ``seeds``: deal numbers per class, all ascending."""

    seeds: range
    obud: list[int] = field(default_factory=list)
    sfud: list[int] = field(default_factory=list)
    flagged: list[int] = field(default_factory=list)
    connected: list[int] = field(default_factory=list)


def deal_array(seeds: Iterable[int], rows: int = 4, cols: int = 4) -> np.ndarray:
    """Seeded deals as a ``boaf.game.arrays`` int8 batch, without building ``State`` objects (one compiled shuffle)."""
    array = np.array(list(seeds), dtype=np.int64)
    check_seeds(array.tolist())
    return shuffled_cells(array, rows * cols)


def sieve(seeds: range, batch_size: int = 20_000) -> SieveResult:
    """Classify the 4x4 deals of ``seeds`` and flag possible FFUDs with the 3-heuristic."""
    result = SieveResult(seeds)
    for start in range(0, len(seeds), batch_size):
        part = seeds[start : start + batch_size]
        _sieve_batch(part, compute_features(deal_array(part)).matrix, result)
    return result


def classify_states(states: list[State]) -> list[DealClass]:
    """Kahn's class of each state."""
    matrix = compute_features(states).matrix
    return [kahn_class(_row(matrix, i)) for i in range(len(states))]


def _sieve_batch(seeds: range, matrix: np.ndarray, result: SieveResult) -> None:
    for i, seed in enumerate(seeds):
        row = _row(matrix, i)
        cls = kahn_class(row)
        if cls is DealClass.OBUD:
            result.obud.append(seed)
        elif cls is DealClass.SFUD:
            result.sfud.append(seed)
        else:
            result.connected.append(seed)
            if three_heuristic(row):
                result.flagged.append(seed)


_KAHN_COLUMNS = ("n_stacks", "odd_birds", "is_connected", "adjacency_det", "flockability", "a2_zeros")


def _row(matrix: np.ndarray, i: int) -> dict[str, float]:
    return {name: float(matrix[i, FEATURE_INDEX[name]]) for name in _KAHN_COLUMNS}
