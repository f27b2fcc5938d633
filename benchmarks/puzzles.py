"""Puzzle figures: ``python benchmarks/puzzles.py`` (about twenty minutes on two cores).

1. Exact analysis time by k = 4…16 on random solvable k-card states on the 4×4
   grid (``--states`` per k): median / max seconds and states enumerated, with
   the share that stayed exact within the default budget. Then 12 clubs on
   every layout of the grid (up to symmetry): any two clubs may join, so these
   are the slowest 12-card states there are; the slowest against the 2 s
   target, and the densest with one thread and with all of them.
2. Generation time by k = 4…16 with the paper's iterations (one seed per k).
3. The 16-card target: the halfway ratio of a generated 16-card puzzle against
   the 10th percentile over ``--deals`` random solvable 16-card deals, every
   ratio from ``analyze`` with the default budget (exact, or sampled uniformly
   over the distinct depth-8 states, ``--ratio-samples`` of them); a puzzle
   meets the target when its 95% upper bound is below the percentile and it
   was generated within 60 s.
"""

from __future__ import annotations

import argparse
import sys
import time
from itertools import combinations, permutations
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path and its name
# would shadow the ``puzzles`` package.
sys.path = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import numpy as np  # noqa: E402

from boaf.game import State, format_grid, parse_card, parse_grid, random_states  # noqa: E402
from boaf.puzzles import DEFAULT_BUDGET, DepthCount, analyze, enumeration  # noqa: E402
from boaf.puzzles.enumeration import THREADS  # noqa: E402
from boaf.puzzles.generation import default_iterations, generate  # noqa: E402
from boaf.search import SOLVABLE, solve  # noqa: E402


def solvable_states(k: int, count: int, seed: int) -> list[State]:
    found: list[State] = []
    for state in random_states(seed, 200 * count, stacks=k):
        if len(found) == count:
            break
        if solve(state).status == SOLVABLE:
            found.append(state)
    return found


def analysis_figures(k: int, count: int) -> str:
    times, sizes, exact = [], [], 0
    for state in solvable_states(k, count, 100 + k):
        result = analyze(state)
        times.append(result.elapsed_ms / 1e3)
        sizes.append(result.states_enumerated)
        exact += result.exact
    return (
        f"k={k:2d}: analysis median {np.median(times):.3f} s, max {max(times):.3f} s; "
        f"states median {int(np.median(sizes)):,}, max {max(sizes):,}; exact {exact}/{len(times)}"
    )


def densest_layouts() -> list[State]:
    """12 clubs on every layout of 4 empty cells, one per symmetry class of the 4x4 grid.

    Any two clubs may join, so from a given layout these reach a superset of the
    states (and moves) any 12 cards reach: the slowest of them bounds every
    12-card analysis.
    """
    symmetries = [(r, c, t) for r in permutations(range(4)) for c in permutations(range(4)) for t in (False, True)]

    def canonical(empty: tuple[int, ...]) -> tuple[int, ...]:
        images = []
        for rows, cols, transpose in symmetries:
            moved = [(cols[i % 4], rows[i // 4]) if transpose else (rows[i // 4], cols[i % 4]) for i in empty]
            images.append(tuple(sorted(4 * r + c for r, c in moved)))
        return min(images)

    layouts = sorted({canonical(empty) for empty in combinations(range(16), 4)})
    clubs = [parse_card(f"{rank}C") for rank in "A23456789TJQ"]
    states = []
    for empty in layouts:
        cards = iter(clubs)
        states.append(State.from_cells(4, 4, [None if i in empty else next(cards) for i in range(16)]))
    return states


def dense_figures() -> list[str]:
    lines = []
    worst = 0.0
    for state in densest_layouts():
        result = analyze(state, budget=None)
        seconds = result.elapsed_ms / 1e3
        worst = max(worst, seconds)
        lines.append(f"12 clubs [{format_grid(state)}]: {result.states_enumerated:,} states, {seconds:.2f} s")
    lines.append(f"slowest 12-card analysis {worst:.2f} s = {worst / 2:.2f}x of the 2 s target ({THREADS} threads)")
    state = max(densest_layouts(), key=lambda s: analyze(s, budget=None).states_enumerated)
    timings = {}
    for threads in (1, THREADS):
        enumeration.THREADS = threads
        start = time.perf_counter()
        analyze(state, budget=None)
        timings[threads] = time.perf_counter() - start
    enumeration.THREADS = THREADS
    lines.append(
        f"densest, same run: 1 thread {timings[1]:.2f} s, {THREADS} threads {timings[THREADS]:.2f} s "
        f"({timings[1] / timings[THREADS]:.2f}x)"
    )
    return lines


def generation_figures(k: int, seed: int) -> str:
    puzzle = generate(k, seed=seed)
    kind = "exact" if puzzle.halfway_exact else "sampled"
    return (
        f"k={k:2d}: generate {puzzle.elapsed_ms / 1e3:6.1f} s ({default_iterations(k)} iterations), "
        f"halfway {puzzle.halfway_ratio:.4f} ({kind}), energy {puzzle.energy:.1f}: {format_grid(puzzle.state)}"
    )


def halfway(state: State, samples: int) -> DepthCount:
    """The halfway depth as ``analyze`` reports it: exact, or sampled uniformly over its distinct states."""
    return analyze(state, samples=samples, seed=0).halfway


def target_figures(deals: int, seeds: list[int], samples: int) -> list[str]:
    found = [halfway(s, samples) for s in solvable_states(16, deals, 16)]
    ratios = [h.ratio for h in found]
    p10 = float(np.percentile(ratios, 10))
    uniform = sum(h.method in ("exact", "sample") for h in found)
    lines = [
        f"random solvable 16-card deals: {deals} ({uniform} halfway depths exact or sampled uniformly), "
        f"halfway ratio p10 {p10:.4f}, median {np.median(ratios):.4f}"
    ]
    for seed in seeds:
        puzzle = generate(16, seed=seed)
        h = halfway(puzzle.state, samples)
        seconds = puzzle.elapsed_ms / 1e3
        verdict = "meets" if h.ratio > 0 and h.ratio_high <= p10 and seconds <= 60 else "misses"
        lines.append(
            f"generated 16 (seed {seed}): {seconds:.1f} s = {seconds / 60:.2f}x of 60 s, halfway {h.ratio:.4f} "
            f"(95% up to {h.ratio_high:.4f}, {h.method}; p10 {p10:.4f}) -> {verdict}: {format_grid(puzzle.state)}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--states", type=int, default=20, help="random solvable states per k for analysis")
    parser.add_argument("--deals", type=int, default=60, help="random 16-card deals for the percentile")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3], help="generation seeds for the target")
    parser.add_argument("--ratio-samples", type=int, default=1000, help="states solved per sampled halfway ratio")
    parser.add_argument("--skip", nargs="*", default=[], choices=["analysis", "dense", "generation", "target"])
    args = parser.parse_args()
    start = time.perf_counter()
    analyze(parse_grid("AC 2C 3C/4C -- --"), budget=3, samples=2)  # load the compiled kernels outside the timings
    print(f"default budget {DEFAULT_BUDGET:,} states")
    sections = {
        "analysis": lambda: (analysis_figures(k, args.states) for k in range(4, 17)),
        "dense": dense_figures,
        "generation": lambda: (generation_figures(k, seed=k) for k in range(4, 17)),
        "target": lambda: target_figures(args.deals, args.seeds, args.ratio_samples),
    }
    for name, section in sections.items():
        if name in args.skip:
            continue
        print(f"== {name}", flush=True)
        for line in section():
            print(line, flush=True)
    print(f"total {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
