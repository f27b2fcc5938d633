"""Estimated analysis for puzzles whose reachable states exceed the budget.

The enumeration stops at the budget, but the depths it finished are exact
lists of distinct states; ``walk_for_analysis`` first tries to finish them
through the halfway depth with a second walk that records no moves. At
finished depths the ratio is estimated from a uniform sample of the level's
states, each solved exactly, with a Wilson 95% interval corrected for sampling
without replacement; a level no larger than the sample is solved whole and is
exact. Deeper levels are reached by random legal moves from uniformly sampled
states of the deepest finished level (``method`` ``walk``): that samples
states in proportion to how often random play reaches them, not uniformly over
distinct states (such ratios run lower), so its interval is for that quantity
and ``states`` is unknown.

A solvable puzzle has a solvable state at every depth (those on a solution),
so when the caller knows the root is solvable a sample without any solvable
state does not report 0: the ratio becomes the smallest value consistent with
that knowledge, 1/states for a sampled level and 1/(2·walks) for random play;
the last depth (one stack) is then 1.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from boaf.game import State, play
from boaf.game.arrays import array_to_state, states_to_array
from boaf.game.deals import seeded_rng
from boaf.game.validation import check_positive_int
from boaf.puzzles.enumeration import Enumeration, enumerate_states
from boaf.puzzles.errors import AnalysisStopped, InvalidPuzzleRequest
from boaf.puzzles.limits import SearchLimits, check_stop, deadline_after, seconds_left
from boaf.puzzles.results import DepthCount, PuzzleAnalysis, browne_tension
from boaf.search import UNKNOWN, solve

Z95 = 1.959963984540054
WALK_ATTEMPTS = 20  # walks tried per wanted sample before a level counts as unreachable by play
WIDEN = 3  # a walk without moves keeps about this many times the states in the same memory


def walk_for_analysis(
    state: State,
    budget: int | None,
    *,
    depth: int | None = None,
    time_limit: float | None = None,
    cancel: np.ndarray | None = None,
) -> Enumeration:
    """The enumeration an analysis works from.

    First every state, with its moves, when at most ``budget`` states are
    reachable. When they are not and ``depth`` (default: the halfway depth)
    was not reached, a second walk without moves (``WIDEN`` × ``budget``
    states, about the same memory) goes through ``depth`` if the level sizes
    so far predict that it fits, so that the ratio there is sampled uniformly
    over its distinct states rather than by random play.
    """
    deadline = deadline_after(time_limit)
    enumeration = enumerate_states(state, budget, time_limit=time_limit, cancel=cancel)
    target = state.n_stacks // 2 if depth is None else depth
    if enumeration.complete or budget is None or enumeration.complete_depths > target:
        return enumeration
    predicted = _predicted_states(enumeration.sizes[: enumeration.complete_depths], target)
    if predicted is None or predicted > WIDEN * budget:
        return enumeration
    del enumeration  # its memory goes to the second walk, which gets at least as deep
    left = seconds_left(deadline)
    return enumerate_states(state, WIDEN * budget, moves=False, depth=target, time_limit=left, cancel=cancel)


def _predicted_states(sizes: np.ndarray, depth: int) -> float | None:
    # States through ``depth``: level sizes grow by a ratio that shrinks about geometrically.
    if len(sizes) < 3 or sizes[-3] == 0 or sizes[-2] == 0:
        return None
    ratio, previous = sizes[-1] / sizes[-2], sizes[-2] / sizes[-3]
    decay = min(1.0, ratio / previous)
    total, level = float(sizes.sum()), float(sizes[-1])
    for _ in range(len(sizes), depth + 1):
        ratio *= decay
        level *= ratio
        total += level
    return total


def estimate_from(
    state: State,
    enumeration: Enumeration,
    *,
    samples: int = 400,
    seed: int = 0,
    time_limit: float | None = None,
    cancel: np.ndarray | None = None,
    max_nodes: int | None = None,
) -> PuzzleAnalysis:
    """The estimated analysis of ``state`` from a budget-limited ``enumeration`` (``exact`` false).

    ``time_limit`` (seconds), ``cancel`` and ``max_nodes`` (each exact search's node budget, which
    bounds its memory) stop every search and walk with ``AnalysisStopped``.
    """
    check_samples(samples)
    deadline = deadline_after(time_limit)
    stop = SearchLimits(deadline, cancel, max_nodes)
    rng = seeded_rng(seed)
    by_depth = []
    moves, tensions = _solution_tension(state, stop)
    solvable = bool(moves) or state.n_stacks == 1
    for depth in range(enumeration.depths):
        check_stop(deadline, cancel)
        by_depth.append(estimate_depth(enumeration, depth, samples, rng, solvable_root=solvable, limits=stop))
    note = f"depths 0-{enumeration.complete_depths - 1} enumerated; beyond the budget, ratios are sampled"
    return PuzzleAnalysis(
        stacks=state.n_stacks,
        solvable=solvable,
        by_depth=tuple(by_depth),
        exact=False,
        solution=tuple(moves),
        solution_tension=tuple(tensions),
        states_enumerated=enumeration.states,
        notes=(note,),
    )


def estimate_depth(
    enumeration: Enumeration,
    depth: int,
    samples: int,
    rng: np.random.Generator,
    *,
    solvable_root: bool = False,
    limits: SearchLimits | None = None,
) -> DepthCount:
    """The estimated ``DepthCount`` of one depth (exact when its level fits in the sample).

    ``solvable_root`` (the root is known solvable) floors a zero sample, see the module notes.
    ``limits`` stop its walks and searches (``AnalysisStopped``).
    """
    limits = limits or SearchLimits()
    if depth < enumeration.complete_depths:
        count = _sampled_level(enumeration, depth, samples, rng, limits)
        floor = 1 / count.states if count.states else 0.0
    elif solvable_root and depth == enumeration.depths - 1:
        # One stack left: every state there is solved, and a solvable root reaches one.
        return DepthCount(depth, None, None, 1.0, 1.0, 1.0, method="walk")
    else:
        count = _walked_level(enumeration, depth, samples, rng, limits)
        floor = 1 / (2 * (count.sampled or samples * WALK_ATTEMPTS))
    if solvable_root and count.ratio == 0.0 and count.method != "exact":
        return replace(count, ratio=floor, ratio_low=max(count.ratio_low, floor if count.states else 0.0))
    return count


def wilson_interval(successes: int, n: int, population: int | None = None) -> tuple[float, float]:
    """Wilson 95% interval for a proportion; ``population`` applies the finite-population correction."""
    if n == 0:
        return 0.0, 1.0
    if population is not None and n >= population:
        p = successes / n
        return p, p
    effective = n * (population - 1) / (population - n) if population is not None else float(n)
    p = successes / n
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * effective)) / (1 + z2 / effective)
    half = Z95 * math.sqrt(p * (1 - p) / effective + z2 / (4 * effective * effective)) / (1 + z2 / effective)
    return max(0.0, centre - half), min(1.0, centre + half)


def _sampled_level(
    enumeration: Enumeration, depth: int, samples: int, rng: np.random.Generator, limits: SearchLimits
) -> DepthCount:
    level = enumeration.level(depth)
    size = level.shape[0]
    if size <= samples:
        good = _count_solvable(level, enumeration, limits)
        ratio = good / size if size else 0.0
        return DepthCount(depth, size, good, ratio, ratio, ratio, sampled=size, method="exact")
    picked = level[np.sort(rng.choice(size, size=samples, replace=False))]
    good = _count_solvable(picked, enumeration, limits)
    low, high = wilson_interval(good, samples, size)
    return DepthCount(depth, size, None, good / samples, low, high, sampled=samples, method="sample")


def _walked_level(
    enumeration: Enumeration, depth: int, samples: int, rng: np.random.Generator, limits: SearchLimits
) -> DepthCount:
    start_depth = enumeration.complete_depths - 1
    starts = enumeration.level(start_depth)
    reached: list[State] = []
    for _ in range(samples * WALK_ATTEMPTS):
        if len(reached) == samples or starts.shape[0] == 0:
            break
        limits.check()
        node = array_to_state(starts[rng.integers(starts.shape[0])], enumeration.rows, enumeration.cols)
        walked = _random_walk(node, depth - start_depth, rng)
        if walked is not None:
            reached.append(walked)
    if not reached:
        return DepthCount(depth, None, None, 0.0, 0.0, 1.0, sampled=0, method="walk")
    good = _count_solvable(states_to_array(reached), enumeration, limits)
    low, high = wilson_interval(good, len(reached))
    return DepthCount(depth, None, None, good / len(reached), low, high, sampled=len(reached), method="walk")


def _random_walk(node: State, steps: int, rng: np.random.Generator) -> State | None:
    # None when play gets stuck before ``steps`` moves.
    for _ in range(steps):
        moves = list(node.legal_moves())
        if not moves:
            return None
        node = node.apply(moves[rng.integers(len(moves))])
    return node


def _count_solvable(cells: np.ndarray, enumeration: Enumeration, limits: SearchLimits) -> int:
    if cells.shape[0] == 0:
        return 0
    return limits.count_solvable(cells, enumeration.rows, enumeration.cols)


def _solution_tension(state: State, limits: SearchLimits) -> tuple[list[str], list[float]]:
    # Tension of each state on the solver's solution: its children solved in one batch.
    result = solve(state, max_nodes=limits.max_nodes, time_limit=limits.seconds_left(), cancel=limits.cancel)
    if result.status == UNKNOWN:
        limits.check()
        raise AnalysisStopped(f"solving the puzzle {limits.over_budget()}")
    moves = result.moves
    tensions = []
    node = state
    for text in moves:
        children = states_to_array([node.apply(m) for m in node.legal_moves()])
        winning = limits.count_solvable(children, node.rows, node.cols)
        tensions.append(browne_tension(winning, children.shape[0]))
        node = play(node, [text])
    return moves, tensions


def check_samples(samples: int) -> None:
    """Raise ``InvalidPuzzleRequest`` unless ``samples`` is a positive integer."""
    check_positive_int(samples, "samples", error=InvalidPuzzleRequest, kind="number of states")
