"""The one batch runner: census, feature export and datasets all run through it.

A job is a list of chunk descriptors and a plain function that turns one chunk
into a ``pyarrow.Table``. The runner sends the chunks to Dask (a local cluster by
default, or an existing scheduler by address), writes each finished chunk as
``part-NNNNN.parquet`` atomically (temporary file, then rename), skips parts that
already exist when a job is run again, and shows one progress bar. An interrupted
job therefore resumes from its finished chunks and never duplicates rows.

Workers return tables to the client, which writes them, so a remote cluster does
not need to share a filesystem with the client.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from boaf.game.errors import BoafError, Failure, InvalidInput
from boaf.game.validation import check_positive_int
from boaf.models.files import PARTIAL_WRITES, atomic_write, write_text_atomically

JOB_FILE = "_job.json"  # "_": a partitioned Parquet reader skips it


class JobError(BoafError):
    """Base of the batch runner's errors: ``InvalidJob`` or ``JobFailed``."""


class InvalidJob(JobError, InvalidInput):
    """A batch job cannot run as asked: its options, its input, or a parts folder of another job."""


class JobFailed(JobError, Failure):
    """A chunk crashed on its worker, or the cluster cannot be reached."""


@dataclass(frozen=True)
class Cluster:
    """Where a job runs: a local cluster of ``workers`` processes, or ``scheduler`` (an address)."""

    workers: int | None = None
    scheduler: str | None = None

    def __post_init__(self) -> None:
        if self.workers is not None and self.scheduler is not None:
            raise InvalidJob("give either a number of local workers or a scheduler address, not both")
        if self.workers is not None:
            check_positive_int(self.workers, "workers", error=InvalidJob)


def part_path(parts_dir: Path, index: int) -> Path:
    """Where chunk ``index`` of a job is written."""
    return parts_dir / f"part-{index:05d}.parquet"


def run_job(
    work: Callable[[Any], pa.Table],
    chunks: Sequence[Any],
    parts_dir: Path,
    *,
    cluster: Cluster | None = None,
    description: str = "",
    fingerprint: Mapping[str, Any] | None = None,
    metadata: Mapping[str, str] | None = None,
) -> list[Path]:
    """Run ``work`` on every chunk and return the part files in chunk order.

    ``work`` must be a top-level function (Dask pickles it). ``fingerprint``
    describes the job; resuming into a ``parts_dir`` written by a job with a
    different fingerprint is refused rather than mixing rows of two jobs.
    ``metadata`` is stored in every part's schema.
    """
    parts_dir.mkdir(parents=True, exist_ok=True)
    _claim_parts_dir(parts_dir, {"chunks": len(chunks), **(fingerprint or {})})
    _remove_partial_writes(parts_dir)
    pending = [i for i in range(len(chunks)) if not part_path(parts_dir, i).exists()]
    if pending:
        with _dask_client(cluster or Cluster()) as client, _progress(description, len(chunks)) as advance:
            advance(len(chunks) - len(pending))
            _run_pending(client, work, chunks, pending, parts_dir, metadata or {}, advance)
    return [part_path(parts_dir, i) for i in range(len(chunks))]


def combine_parts(parts: Sequence[Path], output: Path, metadata: Mapping[str, str] | None = None) -> Path:
    """Concatenate part files, in order, into one Parquet file written atomically.

    ``metadata`` is added to the output's schema metadata (keys and values are text).
    """
    output.parent.mkdir(parents=True, exist_ok=True)
    writer: pq.ParquetWriter | None = None
    with atomic_write(output) as tmp:
        try:
            for path in parts:
                table = pq.read_table(path)
                if writer is None:
                    schema = _with_metadata(table.schema, metadata or {})
                    writer = pq.ParquetWriter(tmp, schema)
                writer.write_table(table.replace_schema_metadata(writer.schema.metadata))
            if writer is None:
                raise JobFailed("no parts to combine")
        finally:
            if writer is not None:
                writer.close()
    return output


def write_table_atomically(table: pa.Table, path: Path) -> None:
    """Write ``table`` to ``path`` so that a reader sees the whole file or none."""
    with atomic_write(path) as tmp:
        pq.write_table(table, tmp)


def _run_pending(
    client: Any,
    work: Callable[[Any], pa.Table],
    chunks: Sequence[Any],
    pending: list[int],
    parts_dir: Path,
    metadata: Mapping[str, str],
    advance: Callable[[int], None],
) -> None:
    from distributed import as_completed  # local for start-up time, like _dask_client

    futures = {client.submit(work, chunks[i], pure=False): i for i in pending}
    for future in as_completed(list(futures)):
        index = futures[future]
        try:
            table = future.result()
        except Exception as exc:
            _cancel(client, futures)
            raise _chunk_error(index, exc) from exc
        labelled = table.replace_schema_metadata(_merged(table.schema, metadata))
        write_table_atomically(labelled, part_path(parts_dir, index))
        advance(1)


def _chunk_error(index: int, exc: Exception) -> JobError:
    # Bad input a worker found (a bad line of a file) stays bad input; anything else is a crash.
    if isinstance(exc, InvalidInput):
        return InvalidJob(f"chunk {index} failed: {exc}")
    detail = str(exc) if isinstance(exc, BoafError) else f"{type(exc).__name__}: {exc}"
    return JobFailed(f"chunk {index} failed: {detail}")


def _cancel(client: Any, futures: Mapping[Any, int]) -> None:
    client.cancel(list(futures))


def _claim_parts_dir(parts_dir: Path, fingerprint: Mapping[str, Any]) -> None:
    job_file = parts_dir / JOB_FILE
    wanted = json.loads(json.dumps(fingerprint, sort_keys=True, default=str))
    if job_file.exists():
        found = json.loads(job_file.read_text(encoding="utf-8"))
        if found != wanted:
            raise InvalidJob(
                f"{parts_dir} holds parts of a different job ({found}); remove it or rerun with the same parameters"
            )
        return
    write_text_atomically(job_file, json.dumps(wanted, sort_keys=True, indent=2))


def _remove_partial_writes(parts_dir: Path) -> None:
    for stale in parts_dir.glob(PARTIAL_WRITES):
        stale.unlink()


def _merged(schema: pa.Schema, metadata: Mapping[str, str]) -> dict[bytes, bytes]:
    merged = dict(schema.metadata or {})
    merged.update({k.encode(): v.encode() for k, v in metadata.items()})
    return merged


def _with_metadata(schema: pa.Schema, metadata: Mapping[str, str]) -> pa.Schema:
    return schema.with_metadata(_merged(schema, metadata))


@contextmanager
def _dask_client(cluster: Cluster) -> Iterator[Any]:
    # Local for start-up time: distributed takes about a second to import; jobs that resume
    # with every part written never start a cluster.
    from distributed import Client, LocalCluster

    if cluster.scheduler is not None:
        try:
            client = Client(cluster.scheduler, timeout="10s")
        except OSError as exc:
            raise JobFailed(f"cannot reach the Dask scheduler at {cluster.scheduler}: {exc}") from exc
        with client:
            yield client
        return
    workers = cluster.workers or os.cpu_count() or 1
    local = LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.ERROR,
    )
    with local, Client(local) as client:
        yield client


@contextmanager
def _progress(description: str, total: int) -> Iterator[Callable[[int], None]]:
    # Local for start-up time, like _dask_client.
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    # On stderr, so that a command's stdout stays clean for --json and pipes.
    with Progress(*columns, console=Console(stderr=True), transient=False) as progress:
        task = progress.add_task(description or "chunks", total=total)
        yield lambda n: progress.advance(task, n)
