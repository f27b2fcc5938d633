"""Feature throughput: the reference against the compiled batch path, and a large export.

Prints states/s for ``features.state_features`` (one state at a time) and for
``features.feature_matrix`` (the batch path, from ``State`` objects and from an
int8 array) on the same random states, their ratio; the child features
(``boaf.features.children``, what the residue model reads of the states one move down)
against their plain definition, on 4x4 and 4x13; and the wall time of
``boaf features export`` on a file of random states on a local Dask cluster.

    python benchmarks/features.py                      # 20,000 states, 1,000,000 exported on 2 workers
    python benchmarks/features.py --export-states 0    # skip the export
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path and its name
# would hide the ``features`` package.
sys.path = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import numpy as np  # noqa: E402

from boaf.features import feature_matrix, state_features  # noqa: E402
from boaf.features.children import child_matrix, plain_child_features  # noqa: E402
from boaf.game import random_states  # noqa: E402
from boaf.game.arrays import states_to_array  # noqa: E402
from boaf.game.cards import DECK_SIZE, card_text  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--states", type=int, default=20_000, help="random 4x4 states to time both paths on")
    parser.add_argument("--export-states", type=int, default=1_000_000, help="states to export (0: skip)")
    parser.add_argument("--workers", type=int, default=2, help="local Dask workers for the export")
    parser.add_argument("--child-states", type=int, default=2_000, help="random states of each grid for the children")
    args = parser.parse_args()
    time_paths(args.states)
    if args.child_states:
        time_children(args.child_states)
    if args.export_states:
        time_export(args.export_states, args.workers)


def time_paths(count: int) -> None:
    """Reference vs batch path on the same ``count`` random 4x4 states (Araki's distribution)."""
    states = random_states(20_251_121, count)
    cells = states_to_array(states)
    feature_matrix(states[:10])  # load the cached kernel before timing
    reference = _rate(lambda: [state_features(s) for s in states], count)
    from_states = _rate(lambda: feature_matrix(states), count)
    from_array = _rate(lambda: feature_matrix(cells), count)
    print(f"{count:,} random 4x4 states, one core")
    print(f"  reference (igraph, one state at a time): {reference:12,.0f} states/s")
    print(f"  batch path from State objects:           {from_states:12,.0f} states/s  ({from_states / reference:.1f}x)")
    print(f"  batch path from an int8 array:           {from_array:12,.0f} states/s  ({from_array / reference:.1f}x)")


def time_children(count: int) -> None:
    """The child features' kernel against their plain definition (each child made by ``State.apply``, then one
    ``feature_matrix`` call a state), on the same random states of 4x4 and of 4x13 (k uniform in 1..n)."""

    def plain(batch: list) -> None:
        for state in batch:
            plain_child_features(state)

    for rows, cols in ((4, 4), (4, 13)):
        states = random_states(rows * 100 + cols, count, rows=rows, cols=cols)
        cells = states_to_array(states)
        children = sum(len(list(s.legal_moves())) for s in states)
        child_matrix(cells[:2], rows, cols)  # load the cached kernel before timing
        kernel = _rate(lambda: child_matrix(cells, rows, cols), count)  # noqa: B023
        sample = states[: max(count // 10, 1)]
        reference = _rate(lambda: plain(sample), len(sample))  # noqa: B023
        print(
            f"child features, {count:,} random {rows}x{cols} states ({children / count:.1f} children a state), one core"
        )
        print(f"  plain (State.apply, feature_matrix):     {reference:12,.0f} states/s")
        print(
            f"  kernel:                                  {kernel:12,.0f} states/s  ({kernel / reference:.1f}x; "
            f"{1e3 / kernel:.3f} ms a state)"
        )


def time_export(count: int, workers: int) -> None:
    """Wall time of exporting ``count`` random states through the runner on ``workers`` local workers."""
    from boaf.jobs.export import export
    from boaf.jobs.runner import Cluster

    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "states.txt"
        write_random_grids(source, count, seed=7)
        start = time.perf_counter()
        report = export(source, Path(tmp) / "features.parquet", cluster=Cluster(workers=workers))
        elapsed = time.perf_counter() - start
    print(f"export of {report.rows:,} states on {workers} local workers: {elapsed:.1f} s wall")
    print(f"  ({report.rows / elapsed:,.0f} states/s including cluster start, parsing and Parquet)")


def write_random_grids(path: Path, count: int, seed: int, batch: int = 100_000) -> None:
    """``count`` random 4x4 states as grid text lines (k uniform in 1..16, vectorised)."""
    rng = np.random.default_rng(seed)
    names = np.array([card_text(c) for c in range(DECK_SIZE)] + ["--"])
    with path.open("w", encoding="utf-8") as handle:
        for start in range(0, count, batch):
            n = min(batch, count - start)
            cards = np.argsort(rng.random((n, DECK_SIZE)), axis=1)[:, :16]
            cells = np.argsort(rng.random((n, 16)), axis=1)
            stacks = rng.integers(1, 17, size=n)
            grid = np.full((n, 16), DECK_SIZE)
            rows = np.repeat(np.arange(n), 16)
            placed = np.tile(np.arange(16), n) < np.repeat(stacks, 16)
            grid[rows[placed], cells.ravel()[placed]] = cards.ravel()[placed]
            text = names[grid]
            lines = ["/".join(" ".join(r[i : i + 4]) for i in range(0, 16, 4)) for r in text.tolist()]
            handle.write("\n".join(lines) + "\n")


def _rate(run: object, count: int) -> float:
    start = time.perf_counter()
    run()  # type: ignore[operator]
    return count / (time.perf_counter() - start)


if __name__ == "__main__":
    main()
