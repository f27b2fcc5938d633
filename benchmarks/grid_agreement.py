"""Every grid shape of ``benchmarks/grids.py`` against a plain exhaustive search, on small random states.

    python benchmarks/grid_agreement.py                 # 2,000 states of 6-14 cards a shape (about 2 minutes)
    python benchmarks/grid_agreement.py --states 200

The plain search is ``compatible``: depth-first over every legal move in
generation order, with a memo keyed on the exact state and no pruning but the
compatibility graph's connectivity (no move joins two of its components). It is
the plain-Python reference's search, node for node (``tests/search/test_agreement.py``;
``tests/search/test_grid_agreement.py`` checks it again on every shape here).
Against it, each shape's states (``small_states``: k cards in k random cells, k
uniform in 6 … 14, seeded by ``SEED`` and the shape) must get the same answer from:

- ``solve``, the default algorithm: every pruning rule and, past 16 cells, the
  restarts and the probes; a solution is replayed before it is
  returned, and must have one move fewer than the state has stacks;
- ``solve_many``, Classify's exact path;
- ``solve`` in slices of ``SMALL_SLICE`` nodes growing by 2 (the first
  ``--sliced`` states), so that every state past a few nodes is resumed
  and probed many times.

It prints a row a shape and exits non-zero when any answer differs.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

if not __package__:  # run as a script: its own folder is sys.path[0]; the repository's root imports it as benchmarks
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from benchmarks.grids import GRIDS, grid_name, random_grid_states
from boaf import search
from boaf.game import State, format_grid
from boaf.search import restarts

STATES = 2_000  # a shape
FEWEST, MOST = 6, 14  # cards
SLICED = 300  # states of a shape solved again in small slices
SMALL_SLICE = 8  # nodes of the first slice then
SEED = 44_500  # shape i's states: seeded_rng(SEED + i); the grid benchmark's and tuning's seeds are 44e6 and 45e6


def small_states(grid: tuple[int, int], count: int, most: int = MOST) -> list[State]:
    """``count`` states of ``grid`` with k cards in k random cells, k uniform in ``FEWEST`` … ``most``."""
    rows, cols = grid
    return random_grid_states(SEED + GRIDS.index(grid), count, rows, cols, (FEWEST, min(most, rows * cols)))


@dataclass
class Agreement:
    """One shape's comparison: its states, how many the plain search calls unsolvable, and every difference."""

    grid: str
    states: int = 0
    unsolvable: int = 0
    sliced: int = 0
    differences: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def row(self) -> str:
        """The shape's row of the table."""
        verdict = "agree" if not self.differences else f"{len(self.differences):,} DIFFER"
        cells = (
            self.grid,
            f"{self.states:,}",
            f"{self.unsolvable:,}",
            f"{self.sliced:,}",
            verdict,
            f"{self.seconds:.1f}",
        )
        return "| " + " | ".join(cells) + " |"


HEAD = ("| grid | states | unsolvable | also in small slices | answers | seconds |", "|---" * 6 + "|")


def _sliced_solve(state: State) -> search.SolveResult:
    first, growth = restarts.FIRST_SLICE, restarts.SLICE_GROWTH
    restarts.FIRST_SLICE, restarts.SLICE_GROWTH = SMALL_SLICE, 2
    try:
        return search.solve(state)
    finally:
        restarts.FIRST_SLICE, restarts.SLICE_GROWTH = first, growth


def agreement(grid: tuple[int, int], count: int = STATES, sliced: int = SLICED) -> Agreement:
    """``grid``'s states (``small_states``) by the plain search and by every path of the product (module doc)."""
    started = time.perf_counter()
    states = small_states(grid, count)
    out = Agreement(grid_name(grid), len(states), sliced=min(sliced, len(states)))
    plain = [str(s) for s in search.solve_many(states, "compatible").status_names()]
    out.unsolvable = plain.count(str(search.UNSOLVABLE))
    batch = [str(s) for s in search.solve_many(states).status_names()]
    for i, (state, answer) in enumerate(zip(states, plain, strict=True)):
        result = search.solve(state)  # a solution is replayed to one stack before it is returned
        got = {"solve_many": batch[i], "solve": str(result.status)}
        if i < out.sliced:
            got["solve in small slices"] = str(_sliced_solve(state).status)
        wrong = {path: status for path, status in got.items() if status != answer}
        if answer == search.SOLVABLE and len(result.moves) != state.n_stacks - 1:
            wrong["solve's moves"] = f"{len(result.moves)} moves"
        if wrong:
            out.differences.append(f"state {i} ({format_grid(state)}): plain {answer}, {wrong}")
    out.seconds = time.perf_counter() - started
    return out


def main(argv: Sequence[str] | None = None) -> None:
    """``python benchmarks/grid_agreement.py [--states N] [--sliced N] [--grid G ...]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=int, default=STATES, help="states a shape")
    parser.add_argument("--sliced", type=int, default=SLICED, help="of those, solved again in small slices")
    parser.add_argument("--grid", action="append", help="a shape such as 4x13 (repeat; default all)")
    options = parser.parse_args(argv)
    shapes = [g for g in GRIDS if not options.grid or grid_name(g) in options.grid]
    print(f"== every shape against the plain search: {options.states:,} states of {FEWEST}-{MOST} cards, seed {SEED}")
    for line in HEAD:
        print(line)
    failed = []
    for grid in shapes:
        result = agreement(grid, options.states, options.sliced)
        print(result.row(), flush=True)
        failed += result.differences
    for line in failed:
        print(f"  {line}")
    if failed:
        raise SystemExit(f"{len(failed)} states answered otherwise than by the plain search")


if __name__ == "__main__":
    main()
