"""Puzzle analysis (Neller & Ziegler): solvability ratio by depth, halfway ratio, Browne tension.

A *state at depth d* is a distinct position reachable from the puzzle in exactly
d moves; positions are the same when every cell shows the same top card. The
depth-d solvability ratio is solvable ÷ all such states, the halfway ratio is
the one at d = ⌊k/2⌋ for k stacks, and Browne's tension of a state is
T = 1 − winning moves ÷ legal moves.

``analyze`` is exact (one full enumeration, labelled bottom-up) when the states
fit the budget, and otherwise an estimate (``exact`` false) from sampled states
with 95% intervals, see ``boaf.puzzles.estimate``. It never keeps more states than the
budget: its ``states_enumerated`` is at most the budget, which is what a server
reports against its cap (generation's wider walk, ``walk_for_analysis``, reports no count).
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from boaf.game import State
from boaf.puzzles.enumeration import Enumeration, Labels, enumerate_states, label_states
from boaf.puzzles.estimate import check_samples, estimate_from
from boaf.puzzles.limits import deadline_after, seconds_left
from boaf.puzzles.results import DepthCount, PuzzleAnalysis, browne_tension

DEFAULT_BUDGET = 10_000_000  # states an exact analysis may keep (~60 bytes each at peak); every 12-card state fits


def analyze(
    state: State,
    budget: int | None = DEFAULT_BUDGET,
    *,
    samples: int = 400,
    seed: int = 0,
    time_limit: float | None = None,
    cancel: np.ndarray | None = None,
    max_nodes: int | None = None,
) -> PuzzleAnalysis:
    """Analyse ``state``: exact when at most ``budget`` states are reachable, else an estimate.

    ``budget`` counts distinct states (``None`` for no cap); ``samples`` is the
    states an estimate solves per depth and ``seed`` makes it reproducible.
    ``time_limit`` (seconds) and ``cancel`` (an ``int64[1]`` flag another thread
    may set) raise ``AnalysisStopped`` when they stop the work, and so does
    ``max_nodes``, the node budget of each exact search of an estimate (a
    search's memory grows with its nodes; ``None`` for no cap).
    """
    check_samples(samples)
    start = time.perf_counter()
    deadline = deadline_after(time_limit)
    enumeration = enumerate_states(state, budget, time_limit=time_limit, cancel=cancel)
    left = seconds_left(deadline)
    if enumeration.complete:
        result = exact_analysis(state, enumeration, time_limit=left, cancel=cancel)
    else:
        result = estimate_from(
            state, enumeration, samples=samples, seed=seed, time_limit=left, cancel=cancel, max_nodes=max_nodes
        )
    return _with_elapsed(result, start)


def exact_analysis(
    state: State, enumeration: Enumeration, *, time_limit: float | None = None, cancel: np.ndarray | None = None
) -> PuzzleAnalysis:
    """The exact analysis from a complete enumeration of ``state``."""
    labels = label_states(enumeration, time_limit=time_limit, cancel=cancel)
    by_depth = tuple(_exact_depth(d, enumeration, labels) for d in range(enumeration.depths))
    moves, tensions = _solution_and_tension(state, enumeration, labels)
    return PuzzleAnalysis(
        stacks=state.n_stacks,
        solvable=bool(labels.level_solvable[0]),
        by_depth=by_depth,
        exact=True,
        solution=tuple(moves),
        solution_tension=tuple(tensions),
        states_enumerated=enumeration.states,
    )


def _exact_depth(depth: int, enumeration: Enumeration, labels: Labels) -> DepthCount:
    states = enumeration.level_size(depth)
    good = int(labels.level_solvable[depth])
    ratio = good / states if states else 0.0
    # The last depth's states are solved (no moves), so they carry no tension.
    count = int(labels.tension_count[depth])
    tension = float(labels.tension_sum[depth]) / count if count else None
    return DepthCount(depth, states, good, ratio, ratio, ratio, tension)


def _solution_and_tension(state: State, enumeration: Enumeration, labels: Labels) -> tuple[list[str], list[float]]:
    # Follow the first winning move (in legal_moves order) from each state.
    if not labels.level_solvable[0]:
        return [], []
    moves: list[str] = []
    tensions: list[float] = []
    node = state
    while node.n_stacks > 1:
        legal = list(node.legal_moves())
        children = [node.apply(move) for move in legal]
        wins = [_solvable(enumeration, labels, child) for child in children]
        tensions.append(browne_tension(sum(wins), len(legal)))
        choice = wins.index(True)
        moves.append(node.move_text(legal[choice]))
        node = children[choice]
    return moves, tensions


def _solvable(enumeration: Enumeration, labels: Labels, state: State) -> bool:
    index = enumeration.locate(state)
    if index < 0:
        raise RuntimeError(f"a reachable state is missing from the enumeration: {state.cells}")
    return bool(labels.solvable[index])


def _with_elapsed(result: PuzzleAnalysis, start: float) -> PuzzleAnalysis:
    return replace(result, elapsed_ms=(time.perf_counter() - start) * 1e3)
