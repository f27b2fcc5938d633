"""Kahn's sieve, checked by the exact solver on Dask.

``features.sieve`` classifies deals from their graphs alone. ``verify`` solves
every connected deal of the range with ``search.solve`` (through the batch
runner, so a long range shows progress and resumes) and measures the sieve's
3-heuristic against the true FFUDs (connected but unsolvable deals).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from boaf.features.kahn import SieveResult
from boaf.jobs.runner import Cluster, run_job
from boaf.search import Status, solve_deals

DEFAULT_CHUNK_SIZE = 500


@dataclass(frozen=True)
class SolveChunk:
    """Deals to solve, with the solver's budgets (nodes; seconds per deal)."""

    seeds: tuple[int, ...]
    max_nodes: int | None = None
    time_limit: float | None = None


@dataclass(frozen=True)
class Verification:
    """The sieve against the solver.

    ``ffud``: connected deals the solver proved unsolvable. ``unknown``: deals
    whose budget ran out (counted in neither class). ``recall`` = flagged FFUDs ÷
    FFUDs and ``precision`` = flagged FFUDs ÷ flagged deals; None when the
    denominator is 0.
    """

    ffud: list[int]
    unknown: list[int]
    solved: int
    recall: float | None
    precision: float | None


def solve_chunk(chunk: SolveChunk) -> pa.Table:
    """Exact answers for the deals of one chunk, in one compiled batch call."""
    batch = solve_deals(list(chunk.seeds), "ordered", max_nodes=chunk.max_nodes, time_limit=chunk.time_limit)
    return pa.table(
        {
            "seed": pa.array(list(chunk.seeds), pa.int64()),
            "status": pa.array(batch.status_names()),
            "reason": pa.array(batch.reasons, pa.string()),
        }
    )


def verify(
    sieved: SieveResult,
    parts_dir: Path,
    *,
    cluster: Cluster | None = None,
    max_nodes: int | None = None,
    time_limit: float | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> Verification:
    """Solve every connected deal of ``sieved`` on Dask and score the 3-heuristic."""
    chunks = [
        SolveChunk(tuple(sieved.connected[i : i + chunk_size]), max_nodes, time_limit)
        for i in range(0, len(sieved.connected), chunk_size)
    ]
    fingerprint = {
        "job": "sieve-verify",
        "seeds": [sieved.seeds.start, sieved.seeds.stop],
        "chunk_size": chunk_size,
        "max_nodes": max_nodes,
        "time_limit": time_limit,
    }
    parts = run_job(solve_chunk, chunks, parts_dir, cluster=cluster, description="solving", fingerprint=fingerprint)
    verification = score(sieved.flagged, _read_statuses(parts))
    shutil.rmtree(parts_dir)
    return verification


def score(flagged: Sequence[int], statuses: dict[int, str]) -> Verification:
    """Recall and precision of ``flagged`` against the solver's ``statuses`` of connected deals."""
    ffud = sorted(seed for seed, status in statuses.items() if status == Status.UNSOLVABLE)
    unknown = sorted(seed for seed, status in statuses.items() if status == Status.UNKNOWN)
    hits = len(set(flagged) & set(ffud))
    return Verification(
        ffud=ffud,
        unknown=unknown,
        solved=len(statuses) - len(unknown),
        recall=hits / len(ffud) if ffud else None,
        precision=hits / len(flagged) if flagged else None,
    )


def _read_statuses(parts: Sequence[Path]) -> dict[int, str]:
    statuses: dict[int, str] = {}
    for part in parts:
        table = pq.read_table(part, columns=["seed", "status"])
        statuses.update(zip(table.column("seed").to_pylist(), table.column("status").to_pylist(), strict=True))
    return statuses
