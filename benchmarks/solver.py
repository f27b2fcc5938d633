"""Solver figures: ``python benchmarks/solver.py`` (about five minutes on one core).

For each algorithm: mean / median / p99 ms and mean nodes per deal over seeds
1–10,000; nodes and seconds for the hard deals; mean nodes and ms on 10,000
random states (SPEC §5); the mean nodes by stack count of Compatible DFS,
Ordered DFS and Island Merge on the same random states (Araki's Figure 5),
once as boaf runs them and once as Araki did, without a transposition table
(``--by-stacks`` prints only those tables); and the plain-Python reference search
on a sample, as a ratio to the kernel in the same run. ``constrained`` (plain DFS) gets a
time limit per state, since without pruning some deals take minutes; states
that hit it are counted as unknown and timed at the limit.

First (``--ablation`` prints only these): ``ordered`` on the hard deals with
its stranded-leaf rules and sleep sets taken out, as ratios to the run
without any of them (v1) in the same process; the hard deals on 1 and 2
threads; the transposition table of one hard search (bytes per stored state);
deals on other grids (5×5, and 4×13, the whole deck), seeds 1–200 with a
time budget per deal: how many are settled, and the mean ms; and small
searches (20–60 nodes) on 5×5 and 6×6 deals against 4×4 ones.
Everything runs in this one process, on one core (threads aside).
``--rows-only`` prints only the per-algorithm rows (``--algorithms`` chooses them).
``--vs REV`` prints instead the ablation and deal rows of this tree against REV's
solver, node counts checked equal, as ratios from one run (``benchmarks/versus.py``).
``--grids`` runs instead the per-grid benchmark, with its own flags (``benchmarks/grids.py``).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from boaf import search
from boaf.game import State, deal, random_states
from boaf.game.bits import shuffled_cells
from boaf.search import kernel
from boaf.search.algorithms import ORDERED_SUBSET_H
from boaf.search.reference import reference_solve

HARD_DEALS = (360528, 731678, 557593, 174024, -4965, -115618, 351410, -271101, 368466, 27363)  # issues', census's
ORDERED = search.algorithm_named("ordered")
ABLATION = {  # the rows of the ablation table, each ordered without some option bits
    "ordered (leaf + anchor + frozen + blocks + open + gather + sleep)": ORDERED,
    "subset H order (v2)": ORDERED_SUBSET_H,
    "without gathering": ORDERED.without(kernel.PRUNE_GATHER, "ordered-no-gather"),
    "without open blocks": ORDERED.without(kernel.PRUNE_OPEN, "ordered-no-open"),
    "without blocks": ORDERED.without(kernel.PRUNE_BLOCKS, "ordered-no-blocks"),
    "without frozen": ORDERED.without(kernel.PRUNE_FROZEN, "ordered-no-frozen"),
    "without sleep": ORDERED.without(kernel.SLEEP, "ordered-no-sleep"),
    "without anchor": ORDERED.without(kernel.PRUNE_ANCHOR, "ordered-no-anchor"),
    "children in generation order": ORDERED.without(kernel.ORDER | kernel.ORDER_SQUARES, "ordered-unsorted"),
    "generation order, without sleep": ORDERED.without(
        kernel.ORDER | kernel.ORDER_SQUARES | kernel.SLEEP, "ordered-unsorted-no-sleep"
    ),
    "without leaf, anchor, frozen, sleep (v1)": ORDERED_SUBSET_H.without(
        kernel.PRUNE_LEAF
        | kernel.PRUNE_ANCHOR
        | kernel.PRUNE_FROZEN
        | kernel.PRUNE_BLOCKS
        | kernel.PRUNE_OPEN
        | kernel.PRUNE_GATHER
        | kernel.SLEEP,
        "ordered-v1",
    ),
}
OTHER_GRIDS = ((5, 5), (4, 13))
GRID_LIMIT_S = 1.0  # per deal on the other grids
CONSTRAINED_LIMIT_S = 0.01  # per state: plain DFS needs minutes on some deals
HARD_LIMIT_S = {"constrained": 20.0, "island-merge": 20.0}  # per hard deal: neither has the stranded-leaf rules
BY_STACKS = ("compatible", "ordered", "island-merge")
NO_MEMO = 99  # a memo_min no state reaches: no transposition table
NO_MEMO_STATES = 3_000  # random states for the table without memo (a minute or two per algorithm)
NO_MEMO_LIMIT_S = 2.0  # per state, without memo


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
    limit = HARD_LIMIT_S.get(algorithm)
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


def ablation_table(repeats: int) -> list[str]:
    """Nodes and seconds (best of ``repeats``) per hard deal and rule set, with ratios to v1 in this run."""
    lines = ["| deal | " + " | ".join(ABLATION) + " |", "|---" * (len(ABLATION) + 1) + "|"]
    totals = dict.fromkeys(ABLATION, 0.0)
    for seed in HARD_DEALS:
        cells = []
        figures = {}
        for name, algo in ABLATION.items():
            runs = [search.solve(deal(seed), algo) for _ in range(repeats)]
            best = min(r.elapsed_ms for r in runs) / 1e3
            figures[name] = (runs[0].status, runs[0].nodes, best)
            totals[name] += best
        base_nodes, base_s = figures["without leaf, anchor, frozen, sleep (v1)"][1:]
        for status, nodes, seconds in figures.values():
            ratio = f"x{base_s / seconds:,.1f}" if seconds >= 1e-3 else "under 1 ms"
            cells.append(
                f"{status[:5]} {nodes:,} nodes, {seconds:.3f} s (x{base_nodes / max(nodes, 1):,.1f} nodes, {ratio})"
            )
        lines.append(f"| {seed} | " + " | ".join(cells) + " |")
    lines.append(f"| all {len(HARD_DEALS)}, seconds | " + " | ".join(f"{t:.3f}" for t in totals.values()) + " |")
    return lines


def gather_table(repeats: int) -> list[str]:
    """The FFUD deals of 0-100,000 by ordered with and without gathering: nodes and ms (best of ``repeats``)."""
    without = ABLATION["without gathering"]
    lines = ["| deal | ordered | without gathering | time ratio |", "|---|---|---|---|"]
    for seed in FFUD_0_100000:
        runs = {
            a.name: min((search.solve(deal(seed), a) for _ in range(repeats)), key=lambda r: r.elapsed_ms)
            for a in (ORDERED, without)
        }
        ours, theirs = runs[ORDERED.name], runs[without.name]
        lines.append(
            f"| {seed} | {ours.status[:5]} {ours.nodes:,} nodes, {ours.elapsed_ms:.2f} ms "
            f"| {theirs.status[:5]} {theirs.nodes:,} nodes, {theirs.elapsed_ms:.2f} ms "
            f"| x{theirs.elapsed_ms / max(ours.elapsed_ms, 1e-3):,.1f} |"
        )
    return lines


def memory_figures(seed: int) -> str:
    """The transposition table of one ordered search: MiB, stored states and bytes per stored state."""
    from boaf.search.ordering import default_ordering
    from boaf.search.tables import grid_tables, kernel_config

    root = shuffled_cells(np.array([seed], dtype=np.int64), 16)[0]
    budget = kernel.Budget(0, 0.0, np.zeros(1, dtype=np.int64), 0)
    path = np.zeros((16, 2), dtype=np.int8)
    config = kernel_config(ORDERED, default_ordering())
    _, nodes, _, memo = kernel.solve_one(
        root, grid_tables(4, 4), config, budget, memo=kernel.new_memo(16), stamp=1, path=path, share=kernel.NO_SHARE
    )
    stored = int((memo[:, -1] != 0).sum()) if memo.shape[1] == 1 else int((memo[:, -1] == 1).sum())
    return (
        f"deal {seed}: {nodes:,} nodes, table {memo.nbytes / 2**20:,.1f} MiB for {stored:,} stored states "
        f"({memo.nbytes / max(stored, 1):.0f} bytes per stored state, {memo.nbytes / max(nodes, 1):.0f} per node)"
    )


def thread_table(repeats: int) -> list[str]:
    """Seconds (best of ``repeats``) of ordered on the hard deals with 1 and 2 threads, in this process."""
    lines = ["| deal | 1 thread | 2 threads | speed-up |", "|---|---|---|---|"]
    for seed in HARD_DEALS:
        figures = []
        for threads in (1, 2):
            runs = [search.solve(deal(seed), threads=threads) for _ in range(repeats)]
            assert len({r.status for r in runs}) == 1
            figures.append((runs[0].status, runs[0].nodes, min(r.elapsed_ms for r in runs) / 1e3))
        one, two = figures
        lines.append(
            f"| {seed} | {one[0][:5]} {one[1]:,} nodes, {one[2]:.3f} s | {two[0][:5]} {two[1]:,} nodes, "
            f"{two[2]:.3f} s | x{one[2] / max(two[2], 1e-6):.2f} |"
        )
    return lines


def by_stacks_table(count: int, memo: bool = True) -> list[str]:
    """Mean nodes per random state by stack count, one column per algorithm of ``BY_STACKS`` (same states).

    With ``memo=False`` the algorithms run as Araki ran them: no transposition
    table (and so no sleep sets), each state limited to ``NO_MEMO_LIMIT_S``.
    """
    states = random_states(5, count)
    stacks = np.array([s.n_stacks for s in states])
    algorithms = {name: search.algorithm_named(name) for name in BY_STACKS}
    if not memo:
        algorithms = {
            name: search.Algorithm(name, a.kernel, a.options & ~kernel.SLEEP, memo_min=NO_MEMO)
            for name, a in algorithms.items()
        }
    limit = None if memo else NO_MEMO_LIMIT_S
    batches = {name: search.solve_many(states, a, time_limit=limit) for name, a in algorithms.items()}
    lines = ["| stacks | states | " + " | ".join(BY_STACKS) + " |", "|---" * (len(BY_STACKS) + 2) + "|"]
    for k in range(2, int(stacks.max()) + 1):
        chosen = stacks == k
        if chosen.any():
            means = " | ".join(f"{batches[name].nodes[chosen].mean():,.1f}" for name in BY_STACKS)
            lines.append(f"| {k} | {int(chosen.sum()):,} | {means} |")
    totals = " | ".join(f"{batches[name].nodes.mean():,.1f}" for name in BY_STACKS)
    lines.append(f"| all | {count:,} | {totals} |")
    if not memo:
        unknown = " | ".join(str(batches[name].status.count(search.UNKNOWN)) for name in BY_STACKS)
        lines.append(f"| unknown (at {NO_MEMO_LIMIT_S} s) | | {unknown} |")
    return lines


TINY_REPEATS = 9  # a search of tens of microseconds: its least time over this many rounds


def tiny_grid_table(repeats: int) -> list[str]:
    """In-process ms of ``search.solve`` on small searches (20-60 nodes), 5x5 and 6x6 deals against 4x4 ones.

    A deal's time is its least over ``TINY_REPEATS`` rounds, and each round times
    every deal of every grid once, grid after grid: a burst of load on the shared
    machine then falls on all three grids alike. (Timing one grid's deals, each
    several times back to back, before the next grid's read from x1.8 to x2.3
    for the same code within one hour.)
    """
    grids = ((4, 4), (5, 5), (6, 6))
    chosen: dict[tuple[int, int], list[State]] = {}
    for rows, cols in grids:
        seeds = [seed for seed in range(1, 400) if 20 <= search.solve(deal(seed, rows=rows, cols=cols)).nodes <= 60]
        chosen[rows, cols] = [deal(seed, rows=rows, cols=cols) for seed in seeds[:40]]
    best = {grid: [float("inf")] * len(chosen[grid]) for grid in grids}
    for _ in range(max(repeats, TINY_REPEATS)):
        for grid in grids:
            for i, state in enumerate(chosen[grid]):
                best[grid][i] = min(best[grid][i], _timed_solve(state))
    lines = ["| grid | deals | mean nodes | mean ms | vs 4x4 |", "|---|---|---|---|---|"]
    base = float(np.mean(best[4, 4])) * 1e3
    for rows, cols in grids:
        nodes = [search.solve(state).nodes for state in chosen[rows, cols]]
        mean_ms = float(np.mean(best[rows, cols])) * 1e3
        lines.append(f"| {rows}x{cols} | {len(nodes)} | {np.mean(nodes):.1f} | {mean_ms:.3f} | x{mean_ms / base:.2f} |")
    return lines


def _timed_solve(state: State) -> float:
    start = time.perf_counter()
    search.solve(state)
    return time.perf_counter() - start


V3_HARDEST = (-115618, -271101, 368466, 27363)  # the three hardest deals of -500,000..499,999, its hardest solvable
V3_TARGET_S = {-115618: 0.15, -271101: 0.15, 368466: 0.15, 27363: 0.1}
FFUD_0_100000 = (1163, 6727, 12226, 24555, 25482, 38711, 45088, 59481, 63135, 68943, 93196)
FFUD_BUDGETS = (1_500, 20_000)  # Classify's exact path; and every FFUD
CENSUS_SAMPLE = range(-5_000_000, -4_900_000)  # a slice of the ten-million census, for its estimate


def v3_table() -> list[str]:
    """Every row of the solver-v3 table (issue 25), measured in this process, with its target."""
    lines = ["| measured | now | target |", "|---|---|---|"]
    batch = search.solve_deals(range(1, 10_001))
    ms = batch.elapsed_ms
    lines.append(
        f"| mean per deal, seeds 1-10,000, one core | {ms.mean():.4f} ms (median {np.median(ms):.3f}, "
        f"p99 {np.percentile(ms, 99):.2f}, {batch.nodes.mean():.0f} nodes mean) | <= 0.12 ms |"
    )
    v2 = search.solve_deals(range(1, 10_001), ABLATION["subset H order (v2)"])
    lines.append(
        f"| the same with subset H above the cutoff (v2) | {v2.elapsed_ms.mean():.4f} ms ({v2.nodes.mean():.0f} nodes "
        f"mean): the squares take x{ms.sum() / v2.elapsed_ms.sum():.3f} of its time | |"
    )
    for seed in V3_HARDEST:
        best = min((search.solve(deal(seed)) for _ in range(3)), key=lambda r: r.elapsed_ms)
        lines.append(
            f"| deal {seed} | {best.status}, {best.nodes:,} nodes, {best.elapsed_ms / 1e3:.3f} s "
            f"| <= {V3_TARGET_S[seed]} s |"
        )
    grid = search.solve_deals(range(1, 201), rows=4, cols=13, time_limit=GRID_LIMIT_S)
    settled = sum(status is not search.UNKNOWN for status in grid.status)
    lines.append(
        f"| 4x13 deals 1-200, {GRID_LIMIT_S} s each | {settled} of 200 settled, mean {grid.elapsed_ms.mean():.1f} ms "
        "| 200 of 200, mean <= 5 ms |"
    )
    full = search.solve_deals(list(FFUD_0_100000))
    within = [sum(int(n) <= budget for n in full.nodes) for budget in FFUD_BUDGETS]
    nodes = ", ".join(f"{seed}: {int(n):,}" for seed, n in zip(FFUD_0_100000, full.nodes, strict=True))
    budgeted = [search.solve_deals(list(FFUD_0_100000), max_nodes=budget) for budget in FFUD_BUDGETS]
    decided = [sum(status is search.UNSOLVABLE for status in batch.status) for batch in budgeted]
    lines.append(
        f"| the 11 FFUD deals of 0-100,000 decided within 1,500 / 20,000 nodes | {within[0]} / {within[1]} of 11 "
        f"by the search without a budget ({nodes}); searches of 1,500 / 20,000 nodes (Classify's exact path is the "
        f"first: it skips open blocks, which need a budget of {kernel.OPEN_MIN_BUDGET:,} or none, and gathers once) "
        f"decide {decided[0]} / {decided[1]} "
        "| >= 8 / 11 of 11 |"
    )
    sample = search.solve_deals(CENSUS_SAMPLE)
    minutes = float(sample.elapsed_ms.mean()) * 10_000_000 / 2 / 60e3
    lines.append(
        f"| census -5,000,000..4,999,999 on 2 workers, estimated from {len(CENSUS_SAMPLE):,} of its deals "
        f"({sample.elapsed_ms.mean():.4f} ms mean) | about {minutes:.1f} min (measured: docs/census.md) | <= 15 min |"
    )
    return lines


def print_v2_tables(repeats: int) -> None:
    print("== solver v3: the issue's table (one process, one core)", flush=True)
    for line in v3_table():
        print(line, flush=True)
    print("== ablation: ordered on the hard deals (ratios to v1, same process)", flush=True)
    for line in ablation_table(repeats):
        print(line, flush=True)
    print("== gathering: ordered on the FFUD deals of 0-100,000, with and without it (same process)", flush=True)
    for line in gather_table(repeats):
        print(line, flush=True)
    print("== threads: ordered, root children split over threads (same process)", flush=True)
    for line in thread_table(repeats):
        print(line, flush=True)
    print("== memory (ordered)", flush=True)
    print("  " + memory_figures(618979), flush=True)  # the most nodes of the FFUD deals of ten million
    print("== other grids", flush=True)
    for rows, cols in OTHER_GRIDS:
        print("  " + other_grid_figures(rows, cols, range(1, 201)), flush=True)
    print("== tiny searches on larger grids (search.solve, in process, best of repeats)", flush=True)
    for line in tiny_grid_table(repeats):
        print(line, flush=True)


def print_by_stacks(count: int) -> None:
    print(f"== mean nodes by stack count, {count:,} random states (Araki's Figure 5), with our memo", flush=True)
    for line in by_stacks_table(count):
        print(line, flush=True)
    few = min(count, NO_MEMO_STATES)
    print(f"== the same, {few:,} of those states, without memo or sleep sets (as Araki searched)", flush=True)
    for line in by_stacks_table(few, memo=False):
        print(line, flush=True)


def other_grid_figures(rows: int, cols: int, seeds: range) -> str:
    batch = search.solve_deals(seeds, rows=rows, cols=cols, time_limit=GRID_LIMIT_S)
    settled = sum(status is not search.UNKNOWN for status in batch.status)
    return (
        f"{rows}x{cols} deals {seeds.start}-{seeds.stop - 1} ({GRID_LIMIT_S} s each): settled {settled}/{len(seeds)}, "
        f"mean {batch.elapsed_ms.mean():.3f} ms, median {np.median(batch.elapsed_ms):.3f} ms, "
        f"mean nodes {batch.nodes.mean():,.0f}"
    )


def main() -> None:
    if "--grids" in sys.argv[1:]:  # the per-grid benchmark parses its own flags
        import grids  # start-up: loaded only for --grids

        grids.main([arg for arg in sys.argv[1:] if arg != "--grids"])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grids", action="store_true", help="the per-grid benchmark instead (benchmarks/grids.py)")
    parser.add_argument("--deals", type=int, default=10_000, help="seeds 1..N")
    parser.add_argument("--random", type=int, default=10_000, help="random states")
    parser.add_argument("--reference", type=int, default=400, help="random states for the reference (plus N/4 deals)")
    parser.add_argument("--algorithms", nargs="*", default=list(search.ALGORITHM_NAMES))
    parser.add_argument("--ablation", action="store_true", help="print only the ablation, thread, memory and grid rows")
    parser.add_argument(
        "--rows-only", action="store_true", help="print only the per-algorithm rows (with --algorithms)"
    )
    parser.add_argument("--by-stacks", action="store_true", help="print only the nodes by stack count (Figure 5)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per ablation cell (the best is kept)")
    parser.add_argument("--vs", help="only the ablation and deals against this commit's solver, one run (versus.py)")
    args = parser.parse_args()

    if args.vs:
        import versus  # start-up: its workers import each tree's own search

        for line in versus.run(args.vs, args.repeats, min(args.deals, 2000)):
            print(line, flush=True)
        return

    search.solve(deal(1))  # load the compiled kernel outside the timings
    if args.by_stacks:
        print_by_stacks(args.random)
        return
    if not args.rows_only:
        print_v2_tables(args.repeats)
    if args.ablation:
        return
    for algorithm in args.algorithms:
        print(f"== {algorithm}", flush=True)
        print("  " + deal_figures(algorithm, range(1, args.deals + 1)), flush=True)
        for line in hard_figures(algorithm):
            print("  " + line, flush=True)
        print("  " + random_figures(algorithm, args.random), flush=True)
    if args.rows_only:
        return
    print_by_stacks(args.random)
    print("== reference", flush=True)
    print("  " + reference_ratio(args.reference), flush=True)


if __name__ == "__main__":
    main()
