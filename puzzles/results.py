"""What a puzzle analysis reports: ``DepthCount`` per depth, ``PuzzleAnalysis`` overall, and Browne's tension.

Exact analyses (``boaf.puzzles.analysis``) and estimates (``boaf.puzzles.estimate``) both
build these, so they live apart from either.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class DepthCount:
    """The states at one depth.

    ``states``/``solvable`` are exact counts, ``None`` where unknown (an estimate
    beyond the enumerated depths, or ``solvable`` of a sampled depth).
    ``ratio`` is solvable ÷ states (0 when there are no states), with its 95%
    interval ``ratio_low``…``ratio_high`` (equal to ``ratio`` when exact).
    ``sampled`` is how many states an estimate solved (0 when exact); ``method``
    is ``exact``, ``sample`` (uniform over the level's distinct states) or
    ``walk`` (random play from sampled states of the deepest enumerated level).
    ``tension`` is the mean Browne tension over the depth's solvable states
    that have moves (``None`` when there are none, or when estimated).
    """

    depth: int
    states: int | None
    solvable: int | None
    ratio: float
    ratio_low: float
    ratio_high: float
    tension: float | None = None
    sampled: int = 0
    method: str = "exact"

    def to_json(self) -> dict[str, Any]:
        """``{"depth", "states", "solvable", "ratio", "ratio_low", "ratio_high", "tension", "sampled", "method"}``."""
        return {
            "depth": self.depth,
            "states": self.states,
            "solvable": self.solvable,
            "ratio": self.ratio,
            "ratio_low": self.ratio_low,
            "ratio_high": self.ratio_high,
            "tension": self.tension,
            "sampled": self.sampled,
            "method": self.method,
        }


@dataclass(frozen=True)
class PuzzleAnalysis:
    """Everything ``analyze`` found about one puzzle.

    ``solution`` is one solution as move text (empty when unsolvable) and
    ``solution_tension`` Browne's tension of each state along it, before each
    move. ``elapsed_ms`` is wall time in milliseconds; ``states_enumerated``
    the distinct states the enumeration kept.
    """

    stacks: int
    solvable: bool
    by_depth: tuple[DepthCount, ...]
    exact: bool
    solution: tuple[str, ...] = ()
    solution_tension: tuple[float, ...] = ()
    states_enumerated: int = 0
    elapsed_ms: float = 0.0
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def halfway_depth(self) -> int:
        """⌊k/2⌋ for k stacks."""
        return self.stacks // 2

    @property
    def halfway(self) -> DepthCount:
        """The depth count at the halfway depth."""
        return self.by_depth[self.halfway_depth]

    @property
    def halfway_ratio(self) -> float:
        """The solvability ratio at the halfway depth (an estimate unless ``exact``)."""
        return self.halfway.ratio

    @property
    def tension(self) -> float | None:
        """Mean Browne tension along ``solution`` (``None`` when unsolvable or already solved)."""
        return float(np.mean(self.solution_tension)) if self.solution_tension else None

    def to_json(self) -> dict[str, Any]:
        """The CLI's JSON form (see ``boaf puzzle analyze --json``)."""
        return {
            "stacks": self.stacks,
            "solvable": self.solvable,
            "exact": self.exact,
            "by_depth": [d.to_json() for d in self.by_depth],
            "halfway_depth": self.halfway_depth,
            "halfway_ratio": self.halfway_ratio,
            "halfway_interval": [self.halfway.ratio_low, self.halfway.ratio_high],
            "tension": self.tension,
            "solution_tension": list(self.solution_tension),
            "solution": list(self.solution),
            "states_enumerated": self.states_enumerated,
            "elapsed_ms": self.elapsed_ms,
            "notes": list(self.notes),
        }


def browne_tension(winning: int, legal: int) -> float:
    """T = 1 − winning ÷ legal moves (Browne 2017); 0 for a state without moves."""
    return 1.0 - winning / legal if legal else 0.0
