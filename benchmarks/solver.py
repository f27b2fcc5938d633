"""Solver figures: ``python benchmarks/solver.py`` (about five minutes on one core).

For each algorithm: mean / median / p99 ms and mean nodes per deal over seeds
1–10,000; nodes and seconds for the three hardest published deals; mean nodes
and ms on 10,000 random states (SPEC §5); and the plain-Python reference
search on a sample, as a ratio to the kernel in the same run. ``constrained``
(plain DFS) gets a time limit per state, since without pruning some deals take
minutes; states that hit it are counted as unknown and timed at the limit.
Everything runs in this one process, on one core.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import search
from game import deal, random_states
from search.reference import reference_solve

HARD_DEALS = (360528, 731678, 557593)
CONSTRAINED_LIMIT_S = 0.01  # per state: plain DFS needs minutes on some deals


def deal_figures(algorithm: str, seeds: range) -> str:
    limit = CONSTRAINED_LIMIT_S if algorithm == "constrained" else None
    batch = search.solve_deals(seeds, algorithm, time_limit=limit)
    ms = batch.elapsed_ms
    unknown = batch.status.count(search.UNKNOWN)
    return (
        f"deals {seeds.start}-{seeds.stop - 1}: mean {ms.mean():.3f} ms, median {np.median(ms):.3f} ms, "
        f"p99 {np.percentile(ms, 99):.2f} ms, mean nodes {batch.nodes.mean():,.0f}"
        + (f", unknown {unknown} (limit {limit} s)" if unknown else "")
    )


def hard_figures(algorithm: str) -> list[str]:
    limit = 20.0 if algorithm == "constrained" else None
    lines = []
    for seed in HARD_DEALS:
        result = search.solve(deal(seed), algorithm, time_limit=limit)
        lines.append(f"deal {seed}: {result.status}, {result.nodes:,} nodes, {result.elapsed_ms / 1e3:.3f} s")
    return lines


def random_figures(algorithm: str, count: int) -> str:
    limit = CONSTRAINED_LIMIT_S if algorithm == "constrained" else None
    batch = search.solve_many(random_states(5, count), algorithm, time_limit=limit)
    unknown = batch.status.count(search.UNKNOWN)
    return f"{count:,} random states: mean {batch.elapsed_ms.mean():.3f} ms, mean nodes {batch.nodes.mean():,.0f}" + (
        f", unknown {unknown}" if unknown else ""
    )


def reference_ratio(count: int) -> str:
    """The reference against Compatible DFS (same nodes by construction) on random states and deals."""
    states = random_states(11, count) + [deal(s) for s in range(1, count // 4 + 1)]
    started = time.perf_counter()
    nodes = sum(reference_solve(s).nodes for s in states)
    reference_ms = (time.perf_counter() - started) * 1e3 / len(states)
    batch = search.solve_many(states[:count], "compatible")
    deals = search.solve_many(states[count:], "compatible")
    kernel_ms = float(np.concatenate([batch.elapsed_ms, deals.elapsed_ms]).mean())
    kernel_nodes = int(batch.nodes.sum() + deals.nodes.sum())
    return (
        f"reference (plain Python) on {len(states)} states: {reference_ms:.3f} ms mean, {nodes:,} nodes; "
        f"compatible kernel: {kernel_ms:.4f} ms mean, {kernel_nodes:,} nodes; "
        f"kernel is {reference_ms / kernel_ms:,.0f}x faster"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=10_000, help="seeds 1..N")
    parser.add_argument("--random", type=int, default=10_000, help="random states")
    parser.add_argument("--reference", type=int, default=400, help="random states for the reference (plus N/4 deals)")
    parser.add_argument("--algorithms", nargs="*", default=list(search.ALGORITHM_NAMES))
    args = parser.parse_args()

    search.solve(deal(1))  # load the compiled kernel outside the timings
    for algorithm in args.algorithms:
        print(f"== {algorithm}", flush=True)
        print("  " + deal_figures(algorithm, range(1, args.deals + 1)), flush=True)
        for line in hard_figures(algorithm):
            print("  " + line, flush=True)
        print("  " + random_figures(algorithm, args.random), flush=True)
    print("== reference", flush=True)
    print("  " + reference_ratio(args.reference), flush=True)


if __name__ == "__main__":
    main()
