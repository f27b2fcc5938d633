"""The census: solve every seeded deal of a range and count the unsolvable ones.

Chunks of consecutive seeds go through the batch runner (Dask, atomic parts,
resume). The output is one Parquet file (``--output census.parquet``) or, for
censuses too large for one file, a partitioned Parquet dataset: a folder of
the parts themselves (``--output census/``, any name without ``.parquet``),
which ``pyarrow.dataset`` or ``pq.read_table`` reads as one table. The summary
is read part by part, so the client's memory does not grow with the census.
Each chunk is solved by one call of ``search.solve_deals``, which deals and
solves inside the compiled kernel. Unsolvable deals are classed as Kahn
does (SPEC §3): ``OBUD`` (an odd bird), ``SFUD`` (a separated flock) or ``FFUD``
(connected graph, unsolvable all the same).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from boaf import search
from boaf.game.validation import check_positive_int
from boaf.jobs.runner import Cluster, InvalidJob, combine_parts, run_job

DEFAULT_CHUNK_SIZE = 2_500  # 41 chunks for the 100,001-deal census
MAX_CHUNK_SIZE = 1_000_000  # a chunk is one task: its table is built in a worker's memory (~50 bytes a deal)
MAX_CHUNKS = 99_999  # part-NNNNN.parquet: a dataset's parts sort by name in seed order
SUMMARY_COLUMNS = ["seed", "status", "class", "nodes", "elapsed_ms"]
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
    mean solve time per deal). ``output`` gets one row per deal: one file
    when it ends in ``.parquet``, else a partitioned dataset (a folder of
    parts, kept). Finished chunks are kept in ``parts_dir`` (by default the
    dataset folder, or a directory named after the job next to ``output``
    or in the temporary directory) until the census completes, so an
    interrupted census resumes where it stopped.
    """
    search.algorithm_named(algorithm)  # fail before starting a cluster
    check_positive_int(chunk_size, "chunk_size", error=InvalidJob)
    if chunk_size > MAX_CHUNK_SIZE:
        raise InvalidJob(f"chunk_size must be at most {MAX_CHUNK_SIZE:,}, got {chunk_size:,}")
    if -(-len(seeds) // chunk_size) > MAX_CHUNKS:
        raise InvalidJob(
            f"{len(seeds):,} deals make more than {MAX_CHUNKS:,} chunks of {chunk_size:,}: give a larger chunk size"
        )
    dataset = output is not None and output.suffix != ".parquet"
    if dataset and parts_dir is not None and parts_dir != output:
        raise InvalidJob("a partitioned output is its own parts folder: give no parts_dir with it")
    started = time.perf_counter()
    chunks = [
        CensusChunk(a, min(a + chunk_size, seeds.stop), rows, cols, algorithm)
        for a in range(seeds.start, seeds.stop, chunk_size)
    ]
    job = {"job": "census", "seeds": [seeds.start, seeds.stop], "grid": [rows, cols], "algorithm": algorithm}
    if parts_dir is None:
        parts_dir = (
            output if output is not None and dataset else _default_parts_dir(seeds, rows, cols, algorithm, output)
        )
    parts = run_job(
        census_chunk,
        chunks,
        parts_dir,
        cluster=cluster,
        description="census",
        fingerprint={**job, "chunk_size": chunk_size},
        metadata={"boaf.job": "census", "boaf.algorithm": algorithm},
    )
    if output is not None and not dataset:
        combine_parts(parts, output, metadata={"boaf.job": "census"})
    summary = summarise(pq.read_table(p, columns=SUMMARY_COLUMNS) for p in parts)
    if not dataset:
        shutil.rmtree(parts_dir)
    elapsed_s = round(time.perf_counter() - started, 3)
    return {"first": seeds.start, "last": seeds.stop - 1, **summary, "elapsed_s": elapsed_s}


def summarise(tables: Iterable[pa.Table]) -> dict[str, Any]:
    """``{"deals", "unsolvable", "mean_ms"}`` of tables of ``census_chunk`` rows, read one at a time."""
    deals = 0
    total_ms = 0.0
    unsolvable: list[dict[str, Any]] = []
    for table in tables:
        deals += table.num_rows
        total_ms += float(pc.sum(table["elapsed_ms"]).as_py() or 0.0)
        found = table.filter(pc.equal(table["status"], search.UNSOLVABLE))
        unsolvable.extend(
            {"seed": seed, "class": klass, "nodes": nodes}
            for seed, klass, nodes in zip(
                found["seed"].to_pylist(), found["class"].to_pylist(), found["nodes"].to_pylist(), strict=True
            )
        )
    return {"deals": deals, "unsolvable": unsolvable, "mean_ms": round(total_ms / deals, 4) if deals else 0.0}


def _default_parts_dir(seeds: range, rows: int, cols: int, algorithm: str, output: Path | None) -> Path:
    name = f"boaf-census-{seeds.start}-{seeds.stop}-{rows}x{cols}-{algorithm}.parts"
    return (output.parent / f".{output.name}.parts") if output is not None else Path(tempfile.gettempdir()) / name
