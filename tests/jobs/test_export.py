"""The feature export on a real Dask local cluster: round trips, bad lines, resume after a crash."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from boaf.features import SCHEMA_VERSION, feature_names, feature_table
from boaf.game import format_grid, random_states, state_to_json
from boaf.jobs.export import export
from boaf.jobs.runner import Cluster, JobError


@pytest.fixture(scope="module")
def two_workers() -> Iterator[Cluster]:
    """One real local Dask cluster of 2 worker processes, shared by this module's exports."""
    import logging

    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR
    ) as local:
        yield Cluster(scheduler=local.scheduler_address)


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def assert_features_of(table: pa.Table, grids: list[str]) -> None:
    assert table.column("grid").to_pylist() == grids
    from boaf.game import parse_grid

    expected = feature_table([parse_grid(g) for g in grids])
    for name in feature_names():
        np.testing.assert_array_equal(table.column(name).to_numpy(), expected.column(name).to_numpy(), err_msg=name)


def test_text_and_json_lines_round_trip(tmp_path: Path, two_workers: Cluster) -> None:
    states = random_states(1, 250) + random_states(2, 10, rows=3, cols=3)
    lines = [format_grid(s) for s in states[:200]]
    lines += ["", json.dumps({"grid": format_grid(states[200])})]
    lines += [json.dumps({"grid": state_to_json(s)}) for s in states[201:]]
    source = write_lines(tmp_path / "in.txt", lines)
    report = export(source, tmp_path / "out.parquet", cluster=two_workers, chunk_size=64)
    table = pq.read_table(report.output)
    assert report.rows == table.num_rows == len(states)
    assert table.column_names[: 1 + len(feature_names())] == ["grid", *feature_names()]
    assert table.schema.metadata[b"boaf.features.schema"] == SCHEMA_VERSION.encode()
    assert table.schema.metadata[b"boaf.export.skipped"] == b"0"
    assert_features_of(table, [format_grid(s) for s in states])
    assert not (tmp_path / "out.parquet.parts").exists()


def test_parquet_input_round_trips(tmp_path: Path, two_workers: Cluster) -> None:
    grids = [format_grid(s) for s in random_states(3, 120)]
    pq.write_table(pa.table({"id": list(range(120)), "grid": grids}), tmp_path / "in.parquet")
    report = export(tmp_path / "in.parquet", tmp_path / "out.parquet", cluster=two_workers, chunk_size=50)
    assert_features_of(pq.read_table(report.output), grids)


def test_malformed_line_fails_the_job_naming_its_line(tmp_path: Path, two_workers: Cluster) -> None:
    lines = [format_grid(s) for s in random_states(4, 30)]
    lines[6] = "AC 2C/3C ZZ"
    source = write_lines(tmp_path / "in.txt", lines)
    with pytest.raises(JobError, match=r"in\.txt:7: row 2, column 2: unknown card 'ZZ'"):
        export(source, tmp_path / "out.parquet", cluster=two_workers, chunk_size=10)
    assert not (tmp_path / "out.parquet").exists()


def test_malformed_lines_are_skipped_and_reported(tmp_path: Path, two_workers: Cluster) -> None:
    lines = [format_grid(s) for s in random_states(5, 30)]
    lines[3], lines[20] = "AC AC", "{not json"
    source = write_lines(tmp_path / "in.txt", lines)
    report = export(source, tmp_path / "out.parquet", cluster=two_workers, on_error="skip", chunk_size=10)
    assert [s.line for s in report.skipped] == [4, 21]
    assert "duplicate card AC" in report.skipped[0].message
    table = pq.read_table(report.output)
    assert table.num_rows == report.rows == 28
    assert table.schema.metadata[b"boaf.export.skipped"] == b"2"
    assert_features_of(table, [g for i, g in enumerate(lines) if i not in (3, 20)])


def test_empty_input_writes_an_empty_file_with_the_schema(tmp_path: Path) -> None:
    report = export(write_lines(tmp_path / "in.txt", []), tmp_path / "out.parquet", cluster=Cluster(workers=1))
    table = pq.read_table(report.output)
    assert table.num_rows == 0
    assert table.column_names[: 1 + len(feature_names())] == ["grid", *feature_names()]


def test_missing_input_and_missing_grid_column(tmp_path: Path) -> None:
    with pytest.raises(JobError, match="does not exist"):
        export(tmp_path / "nope.txt", tmp_path / "out.parquet")
    pq.write_table(pa.table({"cells": ["AC"]}), tmp_path / "in.parquet")
    with pytest.raises(JobError, match="no 'grid' column"):
        export(tmp_path / "in.parquet", tmp_path / "out.parquet")


def run_export_cli(source: Path, output: Path) -> subprocess.Popen[bytes]:
    command = "from boaf.service.cli import main; main()"
    args = ["features", "export", "--input", str(source), "--output", str(output), "--workers", "2"]
    return subprocess.Popen(
        [sys.executable, "-c", command, *args, "--chunk-size", "300"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # so the kill below takes its Dask workers with it
    )


def test_resumes_after_a_crash_without_lost_or_duplicated_rows(tmp_path: Path) -> None:
    grids = [format_grid(s) for s in random_states(6, 12_000)]
    source = write_lines(tmp_path / "in.txt", grids)
    output = tmp_path / "out.parquet"
    parts = tmp_path / "out.parquet.parts"
    crashed = run_export_cli(source, output)
    deadline = time.monotonic() + 120
    while not list(parts.glob("part-*.parquet")) and time.monotonic() < deadline and crashed.poll() is None:
        time.sleep(0.02)
    os.killpg(crashed.pid, signal.SIGKILL)
    crashed.wait()
    finished = len(list(parts.glob("part-*.parquet")))
    assert not output.exists(), "the crash came too late to test a resume"
    assert 1 <= finished < 40
    resumed = run_export_cli(source, output)
    assert resumed.wait(timeout=300) == 0
    table = pq.read_table(output)
    assert table.column("grid").to_pylist() == grids
