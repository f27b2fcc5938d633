"""The solver on every grid shape: time, nodes and the share left unknown, per grid, on two sets of states.

    python benchmarks/solver.py --grids                       # every grid: 3,000 random states, 1,000 positions
    python benchmarks/grids.py --grid 5x5 --grid 4x13 --count 300 --json out/grids.json
    python benchmarks/grids.py --vs main --grid 4x13          # this tree against main's solver, one run

The grids (``GRIDS``): 3x3, 4x4, 5x5, 6x6, 4x13, 13x4, 2x26, 1x52 and 7x7. Each gets two sets:

- **random**: ``random_grid_states``, Araki's random states with k distinct cards in k
  distinct cells, k uniform in ceil(n/3) … n for a grid of n cells (``--count``, default 3,000);
- **plausible**: ``plausible_positions``, positions a plausible player reaches from the
  grid's seeded deals (``plausible_game``), ``POSITIONS_PER_GAME`` a game at spread-out
  depths (``--plausible-count``, default 1,000).

Seeds: a grid's states come from ``grid_seed(seed, grid)``, the run's seed plus the grid's
place in ``GRIDS`` times ``GRID_SEED_STRIDE``. The benchmark's seed is ``BENCH_SEED``
(``--seed`` changes it); tuning uses ``TUNING_SEED``, whose range the benchmark never
touches, so that the benchmark's states are never the ones a rule or order was tuned on.
The same arguments give the same states. Tuning code takes its states from the same
functions: ``state_set("random", TUNING_SEED, count, (4, 13))``.

Timing: every state is solved by ``boaf.search.solve`` (the default algorithm, the public
API), one at a time in this process, after ``warm_up`` on other states of its grid, with
a time limit of ``--limit`` seconds (default 1); only the states unknown at that limit are
solved again with ``--second-limit`` (default 10). A state's time and nodes are those of
its last run, so the figures are those of one run at the second limit. Per grid and set
the table gives: states, median, p99, mean and worst ms (the worst with its status and
nodes), nodes (median / p99 / max), the states unknown at each limit (count and share),
the states over 100 ms, and the worst overrun (elapsed − limit, ms) among the runs that
stopped at a limit, beside the tolerance max(5 % of the limit, 20 ms). ``--json PATH``
writes every figure atomically, with the ``SLOWEST_KEPT`` slowest states of each set as
grid text (``boaf solve`` reads it; the stack heights, on which no answer depends, are
left out).

``--vs REF`` runs the same states, in the same run, by this tree's solver and REF's:
REF (a commit, branch or tag, taken as its commit) is unpacked by ``benchmarks.trees.unpacked``
into ``out/bench/baseline-<commit>/``
and each tree answers in a worker process of its own (``benchmarks/grid_worker.py``,
which imports that tree's ``boaf``; ``TreeWorker`` speaks ``benchmarks.versus.Worker``'s
line protocol to it), fed the same states in turn, the order
swapped every state. It prints, per grid and set, both trees' mean, p99 and unknown
counts and the ratio of the means (this tree's / REF's: below 1 is faster).
Under each row, ``grid_checks.cross_check`` checks the answers: every state both trees
decided has one answer, and every "unsolvable" of this tree that took REF over 100,000
nodes (or that REF left unknown) is confirmed by REF's solver without a time limit; the
run exits non-zero when a check fails.
"""

from __future__ import annotations

import argparse
import itertools
import math
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: its own folder is sys.path[0]; the repository's root imports it as benchmarks
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from benchmarks import grid_checks, grid_worker, versus
from benchmarks.trees import unpacked
from boaf import search
from boaf.game import State, deal, format_grid, state_to_json
from boaf.game.cards import COMPATIBLE_MASKS
from boaf.game.deals import random_state, seeded_rng
from boaf.models.files import write_json_atomically

ROOT = Path(__file__).resolve().parents[1]
GRIDS = ((3, 3), (4, 4), (5, 5), (6, 6), (4, 13), (13, 4), (2, 26), (1, 52), (7, 7))
BENCH_SEED = 44_000_000
"""The benchmark's seed: grid i's states come from ``BENCH_SEED + i * GRID_SEED_STRIDE``."""
TUNING_SEED = 45_000_000
"""The seed for tuning (orders, caps, rules): its grids' seeds never meet the benchmark's."""
GRID_SEED_STRIDE = 100_000
WARM_SEED = 0
"""The warm-up states' seed (``warm_up``): its grids' seeds meet neither the benchmark's nor tuning's."""
WARM_STATES = 20
WARM_LIMIT_S = 0.1
"""Seeds between two grids of one run: the plausible set plays deals ``grid_seed + game`` for fewer games."""
RANDOM_COUNT = 3_000
PLAUSIBLE_COUNT = 1_000
POSITIONS_PER_GAME = 4
PLAYER_NOISE = 0.15  # the plausible player's share of random moves (models.residue.NOISE's)
FIRST_LIMIT_S = 1.0
SECOND_LIMIT_S = 10.0
SLOW_MS = 100.0  # a state over this is counted "over 100 ms"
OVERRUN_SHARE, OVERRUN_FLOOR_MS = 0.05, 20.0  # a search may stop this late: the larger of 5 % and 20 ms
SLOWEST_KEPT = 5  # the slowest states of a set written to --json, with their grid text
SETS = ("random", "plausible")


# ---------------------------------------------------------------- the states


def grid_name(grid: tuple[int, int]) -> str:
    """``"4x13"`` for ``(4, 13)``."""
    return f"{grid[0]}x{grid[1]}"


def parse_grid_name(text: str) -> tuple[int, int]:
    """``(4, 13)`` for ``"4x13"``; only the grids of ``GRIDS``."""
    for grid in GRIDS:
        if grid_name(grid) == text.strip().lower():
            return grid
    raise argparse.ArgumentTypeError(f"grid {text!r}: expected one of {', '.join(map(grid_name, GRIDS))}")


def grid_seed(seed: int, grid: tuple[int, int]) -> int:
    """The seed of ``grid``'s states in a run with ``seed`` (``BENCH_SEED`` or ``TUNING_SEED``)."""
    return seed + GRIDS.index(grid) * GRID_SEED_STRIDE


def random_grid_states(
    seed: int, count: int, rows: int, cols: int, cards: tuple[int, int] | None = None
) -> list[State]:
    """``count`` random states of a ``rows`` x ``cols`` grid from one generator (``seeded_rng(seed)``).

    Each has k distinct cards in k distinct random cells, k uniform in ``cards`` (both
    ends included; by default ceil(n/3) … n for n = rows·cols). The same arguments give
    the same states.
    """
    rng = seeded_rng(seed)
    n = rows * cols
    fewest, most = cards or (math.ceil(n / 3), n)
    return [random_state(rng, rows, cols, stacks=int(rng.integers(fewest, most + 1))) for _ in range(count)]


def is_connected(cards: int) -> bool:
    """True when the cards of the mask ``cards`` (bit c for card c) form one component of G (none: True)."""
    seen = frontier = cards & -cards
    while frontier:
        grown = 0
        while frontier:
            low = frontier & -frontier
            grown |= COMPATIBLE_MASKS[low.bit_length() - 1]
            frontier ^= low
        frontier = grown & cards & ~seen
        seen |= frontier
    return seen == cards


def plausible_game(seed: int, rows: int, cols: int, rng: np.random.Generator) -> list[State]:
    """The positions (after each move, while two or more stacks are left) of a game from ``deal(seed, rows, cols)``.

    The player keeps G connected when it can: it plays, uniformly at random (``rng``), one
    of the moves whose covered card is not a cut vertex of G (G loses exactly that card),
    or any legal move when there is none such or, with probability ``PLAYER_NOISE``,
    anyway. The game ends at one stack or when no move is left.
    """
    state = deal(seed, rows, cols)
    reached: list[State] = []
    while True:
        moves = list(state.legal_moves())
        if not moves:
            return reached
        if rng.random() >= PLAYER_NOISE:
            bits = [0 if card is None else 1 << card for card in state.cells]
            cards = sum(bits)
            keeps = {target: is_connected(cards & ~bits[target]) for target in {move.target for move in moves}}
            moves = [move for move in moves if keeps[move.target]] or moves
        state = state.apply(moves[int(rng.integers(len(moves)))])
        if state.n_stacks < 2:
            return reached
        reached.append(state)


def plausible_positions(seed: int, count: int, rows: int, cols: int) -> list[State]:
    """``count`` positions of plausible games (``plausible_game``) from deals ``seed``, ``seed + 1``, …

    The game from deal s plays with ``seeded_rng(s)`` and gives ``POSITIONS_PER_GAME``
    positions, one at random (the same generator's next draws) from each equal part of
    its length, or all of them when it is no longer. The same arguments give the same positions.
    """
    positions: list[State] = []
    game = seed
    while len(positions) < count:
        rng = seeded_rng(game)
        reached = plausible_game(game, rows, cols, rng)
        if len(reached) <= POSITIONS_PER_GAME:
            positions.extend(reached)
        else:
            edges = np.linspace(0, len(reached), POSITIONS_PER_GAME + 1).astype(int)
            positions.extend(reached[int(rng.integers(a, b))] for a, b in itertools.pairwise(edges))
        game += 1
    return positions[:count]


def state_set(name: str, seed: int, count: int, grid: tuple[int, int]) -> list[State]:
    """The set ``name`` (``random`` or ``plausible``) of ``grid`` in a run with ``seed``."""
    maker = random_grid_states if name == "random" else plausible_positions
    return maker(grid_seed(seed, grid), count, *grid)


# ---------------------------------------------------------------- timing


@dataclass(frozen=True)
class Run:
    """One search of one state: its status, nodes, wall time (ms) and time limit (s)."""

    status: str
    nodes: int
    elapsed_ms: float
    limit_s: float | None
    reason: str | None = None

    @property
    def at_limit(self) -> bool:
        """True when the search stopped at its time limit (unknown, and not for memory)."""
        return self.status == search.UNKNOWN and self.reason != search.MEMORY


@dataclass(frozen=True)
class Timing:
    """A state's runs: at the first limit, and at the second when the first was unknown."""

    first: Run
    second: Run | None = None

    @property
    def last(self) -> Run:
        """The run whose figures stand for the state."""
        return self.second or self.first


Solver = Callable[[State, float | None], Run]  # (state, time limit in s, None for none) -> its run


def solve_here(state: State, limit_s: float | None) -> Run:
    """``state`` by this process's ``boaf.search.solve`` (default algorithm) within ``limit_s`` s (None: none)."""
    result = search.solve(state, time_limit=limit_s)
    return Run(str(result.status), int(result.nodes), float(result.elapsed_ms), limit_s, result.reason)


def timed(
    states: Sequence[State], solvers: Sequence[Solver], limits: tuple[float, float], step: Callable[[bool], None]
) -> list[list[Timing]]:
    """Each solver's ``Timing`` of each state: every state at ``limits[0]``, the unknown ones again at ``limits[1]``.

    With several solvers (``--vs``), each state goes to all of them before the next, the
    order reversed every state, so that the machine's noise falls on all alike.
    ``step`` is told of every search: ``False`` at the first limit, ``True`` at the second.
    """
    firsts: list[list[Run]] = [[] for _ in solvers]
    for i, state in enumerate(states):
        for s in _turns(len(solvers), i):
            firsts[s].append(solvers[s](state, limits[0]))
            step(False)
    seconds: list[dict[int, Run]] = [{} for _ in solvers]
    for i, state in enumerate(states):
        for s in _turns(len(solvers), i):
            if firsts[s][i].status == search.UNKNOWN:
                seconds[s][i] = solvers[s](state, limits[1])
                step(True)
    return [
        [Timing(run, again.get(i)) for i, run in enumerate(runs)] for runs, again in zip(firsts, seconds, strict=True)
    ]


def _turns(solvers: int, i: int) -> range:
    return range(solvers) if i % 2 == 0 else range(solvers - 1, -1, -1)


# ---------------------------------------------------------------- figures


def figures(states: Sequence[State], timings: Sequence[Timing], limits: tuple[float, float]) -> dict[str, Any]:
    """Every figure of one set's timings (ms, nodes, counts), and its ``SLOWEST_KEPT`` slowest states."""
    ms = np.array([t.last.elapsed_ms for t in timings])
    nodes = np.array([t.last.nodes for t in timings])
    worst = int(ms.argmax())
    slowest = np.argsort(-ms, kind="stable")[:SLOWEST_KEPT]
    unknown = [sum(t.first.status == search.UNKNOWN for t in timings)]
    unknown.append(sum(t.second is not None and t.second.status == search.UNKNOWN for t in timings))
    return {
        "states": len(timings),
        "median_ms": float(np.median(ms)),
        "p99_ms": float(np.percentile(ms, 99)),
        "mean_ms": float(ms.mean()),
        "worst": _state_figures(states[worst], timings[worst]),
        "nodes_median": float(np.median(nodes)),
        "nodes_p99": float(np.percentile(nodes, 99)),
        "nodes_max": int(nodes.max()),
        "unknown": [
            {"limit_s": limit, "states": n, "share": n / len(timings)} for limit, n in zip(limits, unknown, strict=True)
        ],
        "over_100_ms": int((ms > SLOW_MS).sum()),
        "overrun": [_overrun(timings, limit, first) for limit, first in zip(limits, (True, False), strict=True)],
        "slowest": [_state_figures(states[i], timings[i]) for i in slowest],
    }


def _state_figures(state: State, timing: Timing) -> dict[str, Any]:
    return {"grid": format_grid(state), "stacks": state.n_stacks, **asdict(timing.last)}


def tolerance_ms(limit_s: float) -> float:
    """How late a search may stop past a limit of ``limit_s`` seconds: the larger of 5 % of it and 20 ms."""
    return max(OVERRUN_SHARE * limit_s * 1e3, OVERRUN_FLOOR_MS)


def _overrun(timings: Sequence[Timing], limit_s: float, first: bool) -> dict[str, Any]:
    runs = [t.first if first else t.second for t in timings]
    late = [run.elapsed_ms - limit_s * 1e3 for run in runs if run is not None and run.at_limit]
    worst = max(late) if late else None
    return {
        "limit_s": limit_s,
        "runs_at_limit": len(late),
        "worst_ms": worst,
        "tolerance_ms": tolerance_ms(limit_s),
        "within": worst is None or worst <= tolerance_ms(limit_s),
    }


COLUMNS = (
    "grid",
    "set",
    "states",
    "median ms",
    "p99 ms",
    "mean ms",
    "worst ms",
    "nodes median / p99 / max",
    "unknown at {0} s",
    "unknown at {1} s",
    "over 100 ms",
    "worst overrun at {0} s / {1} s (tolerance)",
)


def table_head(limits: tuple[float, float]) -> list[str]:
    """The table's header lines, its columns naming ``limits``."""
    names = [column.format(*(f"{limit:g}" for limit in limits)) for column in COLUMNS]
    return ["| " + " | ".join(names) + " |", "|---" * len(names) + "|"]


def table_row(grid: str, name: str, figs: dict[str, Any]) -> str:
    """One set's row of the table (``figures``)."""
    worst = figs["worst"]
    unknown = [f"{u['states']:,} ({u['share']:.2%})" for u in figs["unknown"]]
    overrun = " / ".join(
        "-" if o["worst_ms"] is None else f"{o['worst_ms']:+,.1f} ms (<= {o['tolerance_ms']:g})"
        for o in figs["overrun"]
    )
    cells = (
        grid,
        name,
        f"{figs['states']:,}",
        f"{figs['median_ms']:.3f}",
        f"{figs['p99_ms']:,.2f}",
        f"{figs['mean_ms']:,.3f}",
        f"{worst['elapsed_ms']:,.2f} ({worst['status']}, {worst['nodes']:,} nodes)",
        f"{figs['nodes_median']:,.0f} / {figs['nodes_p99']:,.0f} / {figs['nodes_max']:,}",
        *unknown,
        f"{figs['over_100_ms']:,}",
        overrun,
    )
    return "| " + " | ".join(cells) + " |"


# ---------------------------------------------------------------- another tree's solver


class TreeWorker(versus.Worker):
    """One tree's solver in a process of its own (``benchmarks/grid_worker.py``), over ``versus.Worker``'s protocol."""

    def __init__(self, tree: Path) -> None:
        super().__init__(tree, [sys.executable, str(Path(grid_worker.__file__)), str(tree)])

    def solve(self, state: State, limit_s: float | None) -> Run:
        """``state`` by the tree's solver within ``limit_s`` seconds (None: no time limit; a ``Solver``)."""
        return Run(**self.ask({"state": state_to_json(state), "limit_s": limit_s}))  # type: ignore[arg-type]


def versus_head(ref: str) -> list[str]:
    """The ``--vs`` table's header lines."""
    head = (
        f"| grid | set | states | this mean ms | {ref} mean ms | this p99 ms | {ref} p99 ms "
        f"| this unknown (1st / 2nd limit) | {ref} unknown | mean ratio |"
    )
    return [head, "|---" * 10 + "|"]


def versus_row(grid: str, name: str, this: dict[str, Any], ref: dict[str, Any]) -> str:
    """One set's row of the ``--vs`` table: both trees' figures and this tree's mean over REF's."""

    def unknown(figs: dict[str, Any]) -> str:
        return " / ".join(f"{u['states']:,}" for u in figs["unknown"])

    cells = (
        grid,
        name,
        f"{this['states']:,}",
        f"{this['mean_ms']:,.3f}",
        f"{ref['mean_ms']:,.3f}",
        f"{this['p99_ms']:,.2f}",
        f"{ref['p99_ms']:,.2f}",
        unknown(this),
        unknown(ref),
        f"{this['mean_ms'] / max(ref['mean_ms'], 1e-9):.3f}",
    )
    return "| " + " | ".join(cells) + " |"


def warm_up(solver: Solver, grid: tuple[int, int]) -> None:
    """Solve, untimed, a deal and ``WARM_STATES`` random states of ``grid`` (``WARM_SEED``), ``WARM_LIMIT_S`` each.

    The first search on a grid makes its tables, and the first to take a path of the
    search (a time limit, a restart, a probe of a symmetric image, on a grid of its
    own) loads that path: tens of ms, which would otherwise fall on one benchmark state.
    """
    for state in [deal(1, *grid), *random_grid_states(grid_seed(WARM_SEED, grid), WARM_STATES, *grid)]:
        solver(state, WARM_LIMIT_S)


def commit_of(ref: str) -> str:
    """``ref``'s commit, abbreviated: a branch's tree is unpacked (and kept) under its commit, so never stale."""
    command = ["git", "-C", str(ROOT), "rev-parse", "--short", f"{ref}^{{commit}}"]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()


# ---------------------------------------------------------------- the run


@contextmanager
def progress_bar(description: str, total: int) -> Iterator[Callable[[bool], None]]:
    """A bar on stderr (stdout stays the table's), and its step: one search done, ``True`` for one not counted yet."""
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    console = Console(stderr=True)
    with Progress(*columns, console=console, transient=True, disable=not console.is_terminal) as progress:
        task = progress.add_task(description, total=total)
        counted = [total]

        def step(again: bool) -> None:
            if again:
                counted[0] += 1
                progress.update(task, total=counted[0])
            progress.advance(task)

        yield step


def run(options: argparse.Namespace) -> dict[str, Any]:
    """Every grid and set of ``options``: print the table as rows finish, and return every figure."""
    limits = (options.limit, options.second_limit)
    counts = {"random": options.count, "plausible": options.plausible_count}
    ref = commit_of(options.vs) if options.vs else None
    workers = [TreeWorker(ROOT), TreeWorker(unpacked(ref))] if ref else []
    solvers: list[Solver] = [w.solve for w in workers] if workers else [solve_here]
    report: dict[str, Any] = {
        "command": " ".join(["python", "benchmarks/grids.py", *options.argv]),
        "seed": options.seed,
        "limits_s": list(limits),
        "counts": counts,
        "solver_version": search.SOLVER_VERSION,
        "vs": options.vs,
        "vs_commit": ref,
        "grids": {},
    }
    print(f"== solver by grid: seed {options.seed}, limits {limits[0]:g} s then {limits[1]:g} s", flush=True)
    for line in versus_head(options.vs) if options.vs else table_head(limits):
        print(line, flush=True)
    for grid in options.grid or GRIDS:
        name = grid_name(grid)
        for solver in solvers:
            warm_up(solver, grid)
        for set_name in SETS:
            states = state_set(set_name, options.seed, counts[set_name], grid)
            with progress_bar(f"{name} {set_name}", len(states) * len(solvers)) as step:
                timings = timed(states, solvers, limits, step)
            sets = [figures(states, t, limits) for t in timings]
            report["grids"].setdefault(name, {})[set_name] = (
                sets[0] if not workers else {"this": sets[0], "ref": sets[1]}
            )
            print(versus_row(name, set_name, *sets) if workers else table_row(name, set_name, sets[0]), flush=True)
            if workers:
                checked = grid_checks.cross_check(states, timings[0], timings[1], workers[1].solve)
                report["grids"][name][set_name]["answers"] = asdict(checked)
                report["answers_passed"] = report.get("answers_passed", True) and checked.passed
                print(checked.line(name, set_name, options.vs), flush=True)
    for worker in workers:
        worker.close()
    return report


def parser() -> argparse.ArgumentParser:
    """The command line (``main``)."""
    out = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    out.add_argument("--grid", action="append", type=parse_grid_name, help="a grid such as 4x13 (repeat; default all)")
    out.add_argument("--count", type=int, default=RANDOM_COUNT, help="random states per grid")
    out.add_argument("--plausible-count", type=int, default=PLAUSIBLE_COUNT, help="plausible positions per grid")
    out.add_argument("--seed", type=int, default=BENCH_SEED, help=f"the run's seed (default BENCH_SEED, {BENCH_SEED})")
    out.add_argument("--limit", type=float, default=FIRST_LIMIT_S, help="the first time limit per state, s")
    out.add_argument("--second-limit", type=float, default=SECOND_LIMIT_S, help="for states unknown at the first, s")
    out.add_argument("--json", type=Path, help="write every figure to this file")
    out.add_argument("--vs", help="also run the states by this commit's solver, as ratios (one run)")
    return out


def main(argv: Sequence[str] | None = None) -> None:
    """``python benchmarks/grids.py [flags]`` (or ``python benchmarks/solver.py --grids [flags]``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    options = parser().parse_args(args)
    if not 0 < options.limit < options.second_limit:
        raise SystemExit(f"--limit {options.limit} and --second-limit {options.second_limit}: need 0 < limit < second")
    options.argv = args
    report = run(options)
    if options.json:
        write_json_atomically(options.json, report)
        print(f"  wrote {options.json}", flush=True)
    if not report.get("answers_passed", True):
        raise SystemExit("the trees' answers differ, or an unsolvable answer was not confirmed: see the answers lines")


if __name__ == "__main__":
    main()
