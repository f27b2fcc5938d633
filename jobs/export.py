"""Feature export: a file of states in, a Parquet file of features out, on Dask.

Input, chosen by the file name:

- ``*.parquet``: a ``grid`` column of grid text (or state JSON text);
- anything else: one state per line, grid text or a JSON object with a ``grid``
  field (``boaf.game.notation.parse_state_line``, as the CLI reads); blank lines are ignored.

Output: ``grid`` (the canonical grid text) and one column per feature in schema
order, then the ``*_text`` columns of ``features.feature_table`` (exact decimal
text of integers beyond int64, normally null). The file metadata records the
feature schema version (``boaf.features.schema``) and the number of skipped
input lines (``boaf.export.skipped``).

Chunks are line (or row) ranges, so every row's input line is known and a resumed
job redoes exactly the chunks that had not been written. The parts live in
``<output>.parts/`` until the job finishes. A malformed line fails the job
(``on_error="fail"``) or is skipped (``"skip"``) and reported with its line
number: never silently dropped.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pyarrow as pa
import pyarrow.parquet as pq

from boaf.features.batch import arrow_schema, feature_table, schema_metadata
from boaf.game.errors import BoafError, InvalidState
from boaf.game.notation import format_grid, parse_state_line
from boaf.game.state import State
from boaf.game.validation import check_positive_int
from boaf.jobs.runner import Cluster, InvalidJob, combine_parts, run_job
from boaf.models.files import atomic_write, file_sha256

OnError = Literal["skip", "fail"]
SKIPPED_KEY = "boaf.export.skipped"
DEFAULT_CHUNK_SIZE = 10_000


@dataclass(frozen=True)
class ExportChunk:
    """One chunk: ``texts[i]`` is input line (or Parquet row) ``first + i`` of ``source``."""

    source: str
    first: int
    texts: tuple[str | None, ...]
    on_error: OnError
    unit: str = "line"


@dataclass(frozen=True)
class Skipped:
    """An input line that was not exported, and why."""

    line: int
    message: str


@dataclass
class ExportReport:
    """What an export wrote: its path, the rows written and the lines skipped."""

    output: Path
    rows: int = 0
    skipped: list[Skipped] = field(default_factory=list)


def export(
    input_path: Path,
    output: Path,
    *,
    cluster: Cluster | None = None,
    on_error: OnError = "fail",
    chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> ExportReport:
    """Compute the features of every state in ``input_path`` and write them to ``output``.

    Running the same export again after an interruption resumes from the
    finished chunks. Raises ``InvalidJob`` (a ``JobError``) when the input is
    unreadable or, with ``on_error="fail"``, has a malformed line.
    """
    if on_error not in ("skip", "fail"):
        raise InvalidJob(f"on_error must be 'skip' or 'fail', got {on_error!r}")
    check_positive_int(chunk_size, "chunk size", error=InvalidJob)
    chunks = list(read_chunks(input_path, chunk_size, on_error))
    parts_dir = output.with_name(output.name + ".parts")
    # on_error is left out on purpose: a chunk finished under "fail" had no bad
    # line, so it is exactly what "skip" would write, and a failed job can be
    # resumed with --on-error skip.
    fingerprint = {
        "job": "features-export",
        "input": str(input_path.resolve()),
        "input_sha256": file_sha256(input_path),
        "chunk_size": chunk_size,
        **schema_metadata(),
    }
    parts = run_job(
        export_chunk,
        chunks,
        parts_dir,
        cluster=cluster,
        description=f"features {input_path.name}",
        fingerprint=fingerprint,
        metadata=schema_metadata(),
    )
    report = ExportReport(output)
    for part in parts:
        metadata = pq.read_schema(part).metadata or {}
        report.skipped += [Skipped(line, msg) for line, msg in json.loads(metadata.get(SKIPPED_KEY.encode(), b"[]"))]
        report.rows += pq.read_metadata(part).num_rows
    if not parts:
        with atomic_write(output) as tmp:
            pq.write_table(_empty_table(), tmp)
    else:
        combine_parts(parts, output, metadata={**schema_metadata(), SKIPPED_KEY: str(len(report.skipped))})
    shutil.rmtree(parts_dir)
    return report


def export_chunk(chunk: ExportChunk) -> pa.Table:
    """Features of one chunk as a table; skipped lines go in the ``boaf.export.skipped`` metadata."""
    states: list[State] = []
    skipped: list[tuple[int, str]] = []
    for number, text in enumerate(chunk.texts, start=chunk.first):
        if chunk.unit == "line" and text is not None and not text.strip():
            continue  # a blank line holds no state
        try:
            states.append(_read_state(text, chunk.unit))
        except (BoafError, ValueError) as exc:
            where = f"{chunk.source}:{number}" if chunk.unit == "line" else f"{chunk.source} row {number}"
            if chunk.on_error == "fail":
                raise InvalidState(f"{where}: {exc}") from exc
            skipped.append((number, str(exc)))
    if not states:
        table = _empty_table()
    else:
        features = feature_table(states)
        table = features.add_column(0, "grid", pa.array([format_grid(s) for s in states], type=pa.string()))
    metadata = dict(table.schema.metadata or {})
    metadata[SKIPPED_KEY.encode()] = json.dumps(skipped).encode()
    return table.replace_schema_metadata(metadata)


def read_chunks(path: Path, chunk_size: int, on_error: OnError) -> Iterator[ExportChunk]:
    """The input split into chunks of ``chunk_size`` lines (or Parquet rows)."""
    if not path.is_file():
        raise InvalidJob(f"input {path} does not exist or is not a file")
    if path.suffix.lower() == ".parquet":
        yield from _parquet_chunks(path, chunk_size, on_error)
    else:
        yield from _text_chunks(path, chunk_size, on_error)


def _text_chunks(path: Path, chunk_size: int, on_error: OnError) -> Iterator[ExportChunk]:
    try:
        with path.open(encoding="utf-8") as handle:
            texts: list[str | None] = []
            first = 1
            for number, line in enumerate(handle, start=1):
                if not texts:
                    first = number
                texts.append(line)
                if len(texts) == chunk_size:
                    yield ExportChunk(path.name, first, tuple(texts), on_error)
                    texts = []
            if texts:
                yield ExportChunk(path.name, first, tuple(texts), on_error)
    except UnicodeDecodeError as exc:
        raise InvalidJob(f"{path} is not UTF-8 text: {exc.reason} at byte {exc.start}") from exc


def _parquet_chunks(path: Path, chunk_size: int, on_error: OnError) -> Iterator[ExportChunk]:
    try:
        source = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise InvalidJob(f"{path} is not a readable Parquet file: {exc}") from exc
    if "grid" not in source.schema_arrow.names:
        raise InvalidJob(f"{path} has no 'grid' column (columns: {', '.join(source.schema_arrow.names)})")
    first = 1
    for batch in source.iter_batches(batch_size=chunk_size, columns=["grid"]):
        grids = tuple(None if g is None else str(g) for g in batch.column(0).to_pylist())
        yield ExportChunk(path.name, first, grids, on_error, unit="row")
        first += len(grids)


def _read_state(text: str | None, unit: str) -> State:
    """One input line or Parquet ``grid`` value (see ``boaf.game.notation.parse_state_line``)."""
    if text is None:
        raise InvalidState("grid is null")
    if not text.strip():
        raise InvalidState(f"blank {unit}")
    return parse_state_line(text)


def _empty_table() -> pa.Table:
    schema = pa.schema([pa.field("grid", pa.string()), *arrow_schema()], metadata=schema_metadata())
    return schema.empty_table()
