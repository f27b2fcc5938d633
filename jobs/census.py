"""The census: solve every seeded deal of a range and count the unsolvable ones.

Chunks of consecutive seeds go through the batch runner (Dask, atomic parts,
resume). Each chunk is solved by one call of ``search.solve_deals``, which deals
and solves inside the compiled kernel. Unsolvable deals are classed as Kahn
does (SPEC §3): ``OBUD`` (an odd bird), ``SFUD`` (a separated flock) or ``FFUD``
(connected graph, unsolvable all the same).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

import search
from jobs.runner import Cluster, combine_parts, run_job

DEFAULT_CHUNK_SIZE = 2_500  # 41 chunks for the 100,001-deal census
CLASS_OF_REASON = {search.ODD_BIRD: "OBUD", search.SEPARATED_FLOCK: "SFUD", search.EXHAUSTED: "FFUD"}


@dataclass(frozen=True)
class CensusChunk:
    """Deals ``first <= seed < stop`` on a ``rows x cols`` grid, solved with ``algorithm``."""

    first: int
    stop: int
    rows: int = 4
    cols: int = 4
    algorithm: str = search.DEFAULT_ALGORITHM


def census_chunk(chunk: CensusChunk) -> pa.Table:
    """One row per deal: seed, status, reason, class, nodes, elapsed_ms (solve time in ms)."""
    seeds = list(range(chunk.first, chunk.stop))
    batch = search.solve_deals(seeds, chunk.algorithm, rows=chunk.rows, cols=chunk.cols)
    classes = [None if r is None else CLASS_OF_REASON[r] for r in batch.reasons]
    return pa.table(
        {
            "seed": pa.array(seeds, pa.int64()),
            "status": pa.array(batch.status_names(), pa.string()),
            "reason": pa.array(batch.reasons, pa.string()),
            "class": pa.array(classes, pa.string()),
            "nodes": pa.array(batch.nodes, pa.int64()),
            "elapsed_ms": pa.array(batch.elapsed_ms, pa.float64()),
        }
    )


def census(
    seeds: range,
    *,
    rows: int = 4,
    cols: int = 4,
    algorithm: str = search.DEFAULT_ALGORITHM,
    output: Path | None = None,
    parts_dir: Path | None = None,
    cluster: Cluster | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> dict[str, Any]:
    """Solve every deal of ``seeds`` on Dask and summarise.

    Returns ``{"first", "last", "deals", "unsolvable": [{"seed", "class", "nodes"}],
    "elapsed_s", "mean_ms"}`` (``last`` is the last seed solved, ``mean_ms`` the
    mean solve time per deal). ``output`` gets one row per deal. Finished
    chunks are kept in ``parts_dir`` (by default a directory named after the
    job, next to ``output`` or in the temporary directory) until the census
    completes, so an interrupted census resumes where it stopped.
    """
    search.algorithm_named(algorithm)  # fail before starting a cluster
    started = time.perf_counter()
    chunks = [
        CensusChunk(a, min(a + chunk_size, seeds.stop), rows, cols, algorithm)
        for a in range(seeds.start, seeds.stop, chunk_size)
    ]
    job = {"job": "census", "seeds": [seeds.start, seeds.stop], "grid": [rows, cols], "algorithm": algorithm}
    parts_dir = parts_dir or _default_parts_dir(seeds, rows, cols, algorithm, output)
    parts = run_job(
        census_chunk,
        chunks,
        parts_dir,
        cluster=cluster,
        description="census",
        fingerprint={**job, "chunk_size": chunk_size},
        metadata={"boaf.job": "census", "boaf.algorithm": algorithm},
    )
    table = pa.concat_tables(pq.read_table(p) for p in parts)
    if output is not None:
        combine_parts(parts, output, metadata={"boaf.job": "census"})
    shutil.rmtree(parts_dir)
    return summarise(table, seeds, time.perf_counter() - started)


def summarise(table: pa.Table, seeds: range, elapsed_s: float) -> dict[str, Any]:
    """The census summary of a table of ``census_chunk`` rows."""
    unsolvable = table.filter(pc.equal(table["status"], search.UNSOLVABLE))
    return {
        "first": seeds.start,
        "last": seeds.stop - 1,
        "deals": table.num_rows,
        "unsolvable": [
            {"seed": seed, "class": klass, "nodes": nodes}
            for seed, klass, nodes in zip(
                unsolvable["seed"].to_pylist(),
                unsolvable["class"].to_pylist(),
                unsolvable["nodes"].to_pylist(),
                strict=True,
            )
        ],
        "elapsed_s": round(elapsed_s, 3),
        "mean_ms": round(float(pc.mean(table["elapsed_ms"]).as_py() or 0.0), 4),
    }


def _default_parts_dir(seeds: range, rows: int, cols: int, algorithm: str, output: Path | None) -> Path:
    name = f"boaf-census-{seeds.start}-{seeds.stop}-{rows}x{cols}-{algorithm}.parts"
    return (output.parent / f".{output.name}.parts") if output is not None else Path(tempfile.gettempdir()) / name
