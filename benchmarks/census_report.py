"""The tables of a census for ``docs/census.md``, and its list of unsolvable deals.

    boaf census --seeds=-5000000:5000000 --workers 2 --chunk-size 20000 --output out/census10m --json \
        > out/census10m.json
    python benchmarks/census_report.py out/census10m --summary out/census10m.json \
        --list docs/data/unsolvable_-5000000_5000000.txt

Reads the census's partitioned Parquet output (or one Parquet file) a column set
at a time and prints, as Markdown: the deals and the wall time (from the
census's JSON summary, when given), the unsolvable deals by class, the FFUD
deals, the hardest deals with their nodes and ms, and the nodes histogram
(powers of ten). ``--list`` writes every unsolvable deal with its class, one a
line in seed order, atomically: the data file ``tests/jobs/test_unsolvable_list.py``
checks against a fresh census.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import pyarrow.dataset as ds

# Run as a script, this folder comes first on sys.path, and its features.py and models.py would
# shadow the packages of the same names.
if __name__ == "__main__":
    sys.path = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from boaf.models.files import write_text_atomically

CLASSES = ("OBUD", "SFUD", "FFUD")
HARDEST = 20
BINS = (1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000)


def unsolvable_rows(source: ds.Dataset) -> list[tuple[int, str, int]]:
    """``(seed, class, nodes)`` of every unsolvable deal, in seed order."""
    table = source.to_table(columns=["seed", "class", "nodes"], filter=pc.field("status") == "unsolvable")
    table = table.sort_by("seed")
    return list(zip(table["seed"].to_pylist(), table["class"].to_pylist(), table["nodes"].to_pylist(), strict=True))


def hardest_rows(source: ds.Dataset, count: int) -> list[dict[str, object]]:
    """The ``count`` deals of the most nodes (ties by seed), with status and ms."""
    best: list[dict[str, object]] = []
    for batch in source.to_batches(columns=["seed", "status", "nodes", "elapsed_ms"]):
        nodes = batch.column("nodes").to_numpy()
        keep = np.argsort(-nodes, kind="stable")[:count]
        best.extend(batch.take(keep).to_pylist())
        best = sorted(best, key=lambda r: (-int(r["nodes"]), int(r["seed"])))[:count]  # type: ignore[call-overload]
    return best


def histogram(source: ds.Dataset) -> tuple[np.ndarray, int, float, float]:
    """Deals per nodes bin ``[BINS[i], BINS[i+1])``, the deal count, and the mean nodes and ms."""
    counts = np.zeros(len(BINS) - 1, dtype=np.int64)
    deals, nodes_sum, ms_sum = 0, 0, 0.0
    for batch in source.to_batches(columns=["nodes", "elapsed_ms"]):
        nodes = batch.column("nodes").to_numpy()
        counts += np.histogram(np.maximum(nodes, 1), bins=BINS)[0]
        deals += len(nodes)
        nodes_sum += int(nodes.sum())
        ms_sum += float(batch.column("elapsed_ms").to_numpy().sum())
    return counts, deals, nodes_sum / max(deals, 1), ms_sum / max(deals, 1)


def report(source: ds.Dataset, summary: dict[str, object] | None) -> list[str]:
    rows = unsolvable_rows(source)
    counts, deals, mean_nodes, mean_ms = histogram(source)
    by_class = {c: sum(1 for _, k, _ in rows if k == c) for c in CLASSES}
    lines = [f"deals: {deals:,}; mean {mean_nodes:,.0f} nodes, {mean_ms:.4f} ms a deal (solve time, one core)"]
    if summary is not None:
        wall = float(summary["elapsed_s"])  # type: ignore[arg-type]
        lines.append(f"wall: {wall:,.0f} s ({wall / 60:.1f} min); summary mean_ms {summary['mean_ms']}")
    lines += [
        "",
        "| class | deals |",
        "|---|---|",
        *(f"| {c} | {by_class[c]:,} |" for c in CLASSES),
        f"| all unsolvable | {len(rows):,} ({len(rows) / max(deals, 1):.4%}) |",
        "",
        f"FFUD ({by_class['FFUD']}): " + ", ".join(f"{seed}" for seed, k, _ in rows if k == "FFUD"),
        "",
        "| deal | status | nodes | ms |",
        "|---|---|---|---|",
        *(
            f"| {r['seed']} | {r['status']} | {int(r['nodes']):,} | {float(r['elapsed_ms']):.1f} |"  # type: ignore[call-overload, arg-type]
            for r in hardest_rows(source, HARDEST)
        ),
        "",
        "| nodes | deals |",
        "|---|---|",
        *(f"| {BINS[i]:,}–{BINS[i + 1] - 1:,} | {int(n):,} |" for i, n in enumerate(counts)),
    ]
    return lines


def unsolvable_list(rows: list[tuple[int, str, int]], first: int, last: int) -> str:
    """The data file: a header, then ``seed class`` a line."""
    counts = ", ".join(f"{sum(1 for _, k, _ in rows if k == c):,} {c}" for c in CLASSES)
    header = (
        f"# the unsolvable 4x4 deals of {first}..{last} (boaf census), with their class: {len(rows):,} ({counts})\n"
        "# OBUD: a card with no compatible card; SFUD: the compatibility graph falls apart; FFUD: connected, and\n"
        "# found unsolvable by exhaustive search. Seed k and seed k - 2**31 deal the same cards.\n"
    )
    return header + "".join(f"{seed} {klass}\n" for seed, klass, _ in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("census", type=Path, help="the census's output: a partitioned dataset folder or a .parquet")
    parser.add_argument("--summary", type=Path, help="the census's --json summary, for the wall time")
    parser.add_argument("--list", type=Path, help="write the unsolvable deals, with their classes, to this file")
    args = parser.parse_args()
    source = ds.dataset(args.census, format="parquet")
    summary = json.loads(args.summary.read_text(encoding="utf-8")) if args.summary else None
    print("\n".join(report(source, summary)))
    if args.list:
        seeds = source.to_table(columns=["seed"])["seed"]
        first, last = pc.min(seeds).as_py(), pc.max(seeds).as_py()
        write_text_atomically(args.list, unsolvable_list(unsolvable_rows(source), first, last))
        print(f"\nwrote {args.list}")


if __name__ == "__main__":
    main()
