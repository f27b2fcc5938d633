"""Labelled datasets (SPEC §5): ``random``, ``decisions`` and ``deals``.

A dataset is deterministic from (generator, seed, count, grid, chunk size): the
same command writes the same bytes. This module says what each chunk holds
(``generate_chunk``, a plain function) and what the manifest records; the job
``boaf.jobs.dataset`` runs the chunks on Dask (so it resumes after interruption) and
writes them as one Parquet file, ``data.parquet``, beside a ``manifest.json``
recording the generator, its parameters, the row count, the file's SHA-256 and
the solver and feature schema versions. Labels come from the exact solver, with
no budget.

Columns: ``grid`` (grid text), ``rows``, ``cols``, ``stacks`` (number of stacks),
``solvable`` (bool), ``deal`` (the deal seed the state comes from, or -1), and
``depth`` (moves played from the deal, or -1).

- ``random`` (Araki): k uniform in 1 … cells, k distinct random cards in k
  distinct random cells. ``count`` is the number of states.
- ``deals``: the seeded deals ``seed, seed+1, …``. ``count`` is the number of deals.
- ``decisions`` (Neller 2019): for deal seeds ``seed, seed+1, …`` (the paper
  starts at 1100), the deal itself; then, for a solvable deal, play random
  solvable moves to the end, and wherever a state has both solvable and
  unsolvable children keep all its children. ``count`` is the number of deals.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from boaf import search
from boaf.features import SCHEMA_VERSION
from boaf.game import State, deal, format_grid, random_state
from boaf.game.validation import check_positive_int
from boaf.models.errors import DatasetError
from boaf.models.files import file_sha256, write_text_atomically
from boaf.search import SOLVABLE, UNKNOWN, solve_many

GENERATORS = ("random", "decisions", "deals")
DATA_FILE = "data.parquet"
MANIFEST_FILE = "manifest.json"
DECISIONS_FIRST_SEED = 1100
#: Items per chunk: states for ``random``, deals otherwise (a decisions deal yields ~100 states).
DEFAULT_CHUNK_SIZES = {"random": 5000, "deals": 2000, "decisions": 25}

SCHEMA = pa.schema(
    [
        ("grid", pa.string()),
        ("rows", pa.int8()),
        ("cols", pa.int8()),
        ("stacks", pa.int8()),
        ("solvable", pa.bool_()),
        ("deal", pa.int64()),
        ("depth", pa.int16()),
    ]
)


@dataclass(frozen=True)
class DatasetSpec:
    """Everything that determines a dataset's bytes."""

    generator: str
    seed: int
    count: int
    rows: int = 4
    cols: int = 4
    chunk_size: int = 0  # 0: the generator's default (DEFAULT_CHUNK_SIZES)

    def __post_init__(self) -> None:
        if self.chunk_size == 0:
            object.__setattr__(self, "chunk_size", DEFAULT_CHUNK_SIZES.get(self.generator, 1))
        if self.generator not in GENERATORS:
            raise DatasetError(f"unknown generator {self.generator!r}; choose one of {', '.join(GENERATORS)}")
        check_positive_int(self.count, "count", error=DatasetError)
        check_positive_int(self.chunk_size, "chunk size", error=DatasetError)

    def chunks(self) -> list[tuple[DatasetSpec, int, int]]:
        """``(spec, first, stop)`` item ranges, one per chunk, in order."""
        size = self.chunk_size
        return [(self, start, min(start + size, self.count)) for start in range(0, self.count, size)]


def generate_chunk(chunk: tuple[DatasetSpec, int, int]) -> pa.Table:
    """The rows of one chunk: a plain function the batch runner sends to Dask workers."""
    spec, first, stop = chunk
    records = list(_records(spec, first, stop))
    columns = {name: [r[name] for r in records] for name in SCHEMA.names}
    return pa.table(columns, schema=SCHEMA)


def read_manifest(out_dir: Path) -> dict[str, Any]:
    """The manifest of a generated dataset; raises ``DatasetError`` if it is missing or does not match its data."""
    path = out_dir / MANIFEST_FILE
    if not path.is_file():
        raise DatasetError(f"{out_dir} holds no dataset manifest ({MANIFEST_FILE})")
    manifest: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    digest = file_sha256(out_dir / DATA_FILE)
    if digest != manifest["sha256"]:
        raise DatasetError(f"{out_dir / DATA_FILE} does not match its manifest (sha256 {digest[:12]}…)")
    return manifest


def exact_labels(states: Sequence[State]) -> list[bool]:
    """Exact solvability of each state, in one compiled call per grid shape (no budget)."""
    if not states:
        return []
    statuses = solve_many(list(states)).status_names()
    if UNKNOWN in statuses:
        raise DatasetError(f"the solver gave no answer for {format_grid(states[statuses.index(UNKNOWN)])}")
    return [status == SOLVABLE for status in statuses]


def _records(spec: DatasetSpec, first: int, stop: int) -> Iterator[dict[str, Any]]:
    if spec.generator == "random":
        # One generator per chunk, seeded by (seed, chunk start): chunks are independent and reproducible.
        # numpy takes non-negative entropy only: a negative seed -s is (s, chunk start, 1), which no other seed gives.
        rng = np.random.default_rng([spec.seed, first] if spec.seed >= 0 else [-spec.seed, first, 1])
        states = [random_state(rng, spec.rows, spec.cols) for _ in range(first, stop)]
        yield from (_record(s, label, -1, -1) for s, label in zip(states, exact_labels(states), strict=True))
    elif spec.generator == "deals":
        seeds = range(spec.seed + first, spec.seed + stop)
        states = [deal(seed, spec.rows, spec.cols) for seed in seeds]
        labels = exact_labels(states)
        yield from (_record(s, label, seed, 0) for s, label, seed in zip(states, labels, seeds, strict=True))
    else:
        for index in range(first, stop):
            yield from _decision_records(spec, spec.seed + index)


def _decision_records(spec: DatasetSpec, seed: int) -> Iterator[dict[str, Any]]:
    state = deal(seed, spec.rows, spec.cols)
    (solvable,) = exact_labels([state])
    yield _record(state, solvable, seed, 0)
    if not solvable:
        return
    rng = np.random.default_rng([spec.seed, seed])
    depth = 0
    while state.n_stacks > 1:
        children = [state.apply(m) for m in state.legal_moves()]
        labels = exact_labels(children)
        depth += 1
        if not all(labels):
            yield from (_record(c, s, seed, depth) for c, s in zip(children, labels, strict=True))
        winners = [c for c, s in zip(children, labels, strict=True) if s]
        state = winners[int(rng.integers(len(winners)))]


def _record(state: State, solvable: bool, deal_seed: int, depth: int) -> dict[str, Any]:
    return {
        "grid": format_grid(state),
        "rows": state.rows,
        "cols": state.cols,
        "stacks": state.n_stacks,
        "solvable": solvable,
        "deal": deal_seed,
        "depth": depth,
    }


def write_manifest(spec: DatasetSpec, out_dir: Path) -> dict[str, Any]:
    """Describe the finished ``out_dir/data.parquet`` of ``spec`` in ``out_dir/manifest.json``; returns the manifest."""
    manifest = _manifest(spec, out_dir / DATA_FILE)
    write_text_atomically(out_dir / MANIFEST_FILE, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest


def _manifest(spec: DatasetSpec, data_path: Path) -> dict[str, Any]:
    meta = pq.read_metadata(data_path)
    return {
        "generator": spec.generator,
        "parameters": asdict(spec),
        "seed": spec.seed,
        "rows": meta.num_rows,
        "sha256": file_sha256(data_path),
        "solver_version": search.SOLVER_VERSION,
        "feature_schema": SCHEMA_VERSION,
        "file": DATA_FILE,
    }
