"""Energies (puzzle "badness", lower is better) from the iterations of Neller & Ziegler.

An energy is a function of a ``PuzzleProbe``, which measures a candidate lazily
and at most once per measurement, so an energy only pays for what it reads.
Unsolvable puzzles get ``UNSOLVABLE_ENERGY`` (1000), above every solvable
energy, except in iteration 4 whose solvable energies go higher (see there;
``iteration4-strict`` keeps unsolvable puzzles worst).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import Any

import numpy as np

from boaf.game import State
from boaf.game.deals import seeded_rng
from boaf.game.errors import quote
from boaf.puzzles.analysis import exact_analysis
from boaf.puzzles.enumeration import Enumeration
from boaf.puzzles.errors import InvalidPuzzleRequest
from boaf.puzzles.estimate import estimate_depth, walk_for_analysis
from boaf.puzzles.limits import SearchLimits
from boaf.puzzles.results import PuzzleAnalysis
from boaf.search import SOLVABLE, UNKNOWN, SolveResult, solve

UNSOLVABLE_ENERGY = 1000.0


class PuzzleProbe:
    """Measurements of one candidate puzzle, each computed on first use.

    ``budget`` caps the enumerated states (beyond it depth ratios are sampled,
    ``samples`` states per depth, reproducibly from ``seed``). Setting
    ``cancel[0]`` stops an enumeration under way (``AnalysisStopped``);
    ``limits`` (a deadline, that flag and a node budget per search) stop every
    walk and search. A candidate its search cannot decide within the node
    budget counts as unsolvable. ``ranking_depth`` is the depth whose ratio ranks candidates (default: the
    halfway depth; see ``boaf.puzzles.generation.ranking_depth``).
    """

    def __init__(
        self,
        state: State,
        budget: int,
        samples: int,
        seed: int,
        *,
        cancel: np.ndarray | None = None,
        ranking_depth: int | None = None,
        limits: SearchLimits | None = None,
    ) -> None:
        self.state = state
        self.cancel = cancel
        self.limits = limits or SearchLimits(cancel=cancel)
        self.budget = budget
        self.samples = samples
        self.seed = seed
        self.ranking_depth = state.n_stacks // 2 if ranking_depth is None else ranking_depth

    @cached_property
    def search(self) -> SolveResult:
        """The exact search of the puzzle, within ``limits`` (``unknown`` past the node budget)."""
        limits = self.limits
        result = solve(self.state, max_nodes=limits.max_nodes, time_limit=limits.seconds_left(), cancel=limits.cancel)
        if result.status == UNKNOWN:
            limits.check()  # the deadline or the flag stopped it: stop the whole generation
        return result

    @cached_property
    def solution(self) -> list[str]:
        """One solution as move text (empty when unsolvable or already one stack)."""
        return self.search.moves

    @cached_property
    def solvable(self) -> bool:
        """True when the puzzle can be finished."""
        return self.state.n_stacks == 1 or self.search.status == SOLVABLE

    @cached_property
    def features(self) -> dict[str, Any]:
        """The cheap feature vector (``features.state_features``)."""
        from boaf.features import state_features  # the igraph reference loads on first use, for start-up time

        return state_features(self.state)

    @cached_property
    def enumeration(self) -> Enumeration:
        """The reachable states, as far as the budget allows."""
        limits = self.limits
        return walk_for_analysis(
            self.state, self.budget, depth=self.ranking_depth, time_limit=limits.seconds_left(), cancel=limits.cancel
        )

    @cached_property
    def exact(self) -> PuzzleAnalysis | None:
        """The exact analysis, or ``None`` when the states exceed the budget."""
        if not self.enumeration.complete:
            return None
        return exact_analysis(
            self.state, self.enumeration, time_limit=self.limits.seconds_left(), cancel=self.limits.cancel
        )

    def forget_states(self) -> None:
        """Drop the enumeration, the bulk of a probe's memory (up to ``budget`` states); it is walked again if read."""
        self.__dict__.pop("enumeration", None)

    def ratio(self, depth: int) -> float:
        """The solvability ratio at ``depth`` (exact within the budget, else sampled)."""
        if self.exact is not None:
            return self.exact.by_depth[depth].ratio
        rng = seeded_rng(self.seed)
        count = estimate_depth(
            self.enumeration, depth, self.samples, rng, solvable_root=self.solvable, limits=self.limits
        )
        return count.ratio

    @property
    def halfway_ratio(self) -> float:
        """The ratio at depth ⌊k/2⌋."""
        return self.ratio(self.state.n_stacks // 2)

    @property
    def ranking_ratio(self) -> float:
        """The ratio at ``ranking_depth``, or at the deepest depth enumerated when that is shallower.

        So a candidate is always measured over distinct states (exactly or by a
        uniform sample), never by random play, whose ratios run lower; one too
        large to reach the ranking depth is measured shallower, where ratios run
        higher, and so ranks worse.
        """
        return self.ratio(min(self.ranking_depth, self.enumeration.complete_depths - 1))


Energy = Callable[[PuzzleProbe], float]


def solvable_energy(probe: PuzzleProbe) -> float:
    """Iteration 0: 1000 when unsolvable, 0 otherwise."""
    return 0.0 if probe.solvable else UNSOLVABLE_ENERGY


def diversity_energy(probe: PuzzleProbe) -> float:
    """Iteration 1: −10 when 1 < suits < cards, −10 when ranks > 1."""
    if not probe.solvable:
        return UNSOLVABLE_ENERGY
    f, cards = probe.features, probe.state.n_stacks
    return -10.0 * float(1 < f["suit_diversity"] < cards) - 10.0 * float(f["rank_diversity"] > 1)


def suit_cluster_energy(probe: PuzzleProbe) -> float:
    """Iteration 2: −10 when the dominant suit ratio < 0.5, −10 when rank clusters > 1."""
    if not probe.solvable:
        return UNSOLVABLE_ENERGY
    f = probe.features
    return -10.0 * float(f["dominant_suit_ratio"] < 0.5) - 10.0 * float(f["rank_clusters"] > 1)


def depth1_energy(probe: PuzzleProbe) -> float:
    """Iteration 3: depth-1 ratio × k, −5 for varied ranks and suits, −5 for average flockability in [2, 4]."""
    if not probe.solvable:
        return UNSOLVABLE_ENERGY
    cards = probe.state.n_stacks
    base = probe.ratio(1) * cards if cards > 1 else 0.0
    return base - 5.0 * _varied(probe) - 5.0 * _flockable(probe)


def halfway_energy(probe: PuzzleProbe) -> float:
    """Iteration 4 as printed (the default): 1000 × halfway ratio × k; unsolvable puzzles get 1000.

    Less 10 for varied ranks and suits, less 10 for average flockability in [2, 4].
    The ratio is taken at the probe's ranking depth (the halfway depth but for
    the largest puzzles, see ``PuzzleProbe``).
    A solvable puzzle's base reaches 1000 × k, so the descent may wander through
    unsolvable puzzles whose energy is lower than a poor solvable one's; the
    answer is still the best solvable puzzle seen (see ``boaf.puzzles.generation``).
    """
    return _halfway_base(probe) if probe.solvable else UNSOLVABLE_ENERGY


def halfway_energy_strict(probe: PuzzleProbe) -> float:
    """Iteration 4 with unsolvable puzzles scored 1000 × (k + 1), above every solvable one."""
    if not probe.solvable:
        return UNSOLVABLE_ENERGY * (probe.state.n_stacks + 1)
    return _halfway_base(probe)


def _halfway_base(probe: PuzzleProbe) -> float:
    base = 1000.0 * probe.ranking_ratio * probe.state.n_stacks
    return base - 10.0 * _varied(probe) - 10.0 * _flockable(probe)


def _varied(probe: PuzzleProbe) -> bool:
    f = probe.features
    return bool(f["rank_clusters"] > 1 and f["dominant_suit_ratio"] < 0.5)


def _flockable(probe: PuzzleProbe) -> bool:
    return bool(2.0 <= probe.features["avg_flockability"] <= 4.0)


ENERGIES: dict[str, Energy] = {
    "solvable": solvable_energy,
    "iteration1": diversity_energy,
    "iteration2": suit_cluster_energy,
    "iteration3": depth1_energy,
    "iteration4": halfway_energy,
    "iteration4-strict": halfway_energy_strict,
}
DEFAULT_ENERGY = "iteration4"


def energy_named(name: str) -> Energy:
    """The energy called ``name`` (one of ``ENERGIES``)."""
    try:
        return ENERGIES[name]
    except KeyError:
        raise InvalidPuzzleRequest(f"unknown energy {quote(name)}: expected one of {', '.join(ENERGIES)}") from None
