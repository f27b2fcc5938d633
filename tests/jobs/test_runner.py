"""The batch runner on a real Dask local cluster: chunks, atomic parts, resume."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from boaf.jobs.runner import Cluster, JobError, combine_parts, part_path, run_job


def squares(chunk: tuple[int, int]) -> pa.Table:
    start, stop = chunk
    values = list(range(start, stop))
    return pa.table({"n": values, "square": [v * v for v in values]})


def fails_on_seven(chunk: tuple[int, int]) -> pa.Table:
    if chunk[0] <= 7 < chunk[1]:
        raise ValueError("seven is not allowed")
    return squares(chunk)


CHUNKS = [(i, i + 5) for i in range(0, 20, 5)]


def test_runs_every_chunk_and_combines_in_order(tmp_path: Path) -> None:
    parts = run_job(squares, CHUNKS, tmp_path / "parts", cluster=Cluster(workers=2), metadata={"job": "squares"})
    output = combine_parts(parts, tmp_path / "out.parquet", metadata={"kind": "test"})
    table = pq.read_table(output)
    assert table.column("n").to_pylist() == list(range(20))
    assert table.schema.metadata[b"kind"] == b"test"
    assert table.schema.metadata[b"job"] == b"squares"


def test_failed_chunk_keeps_finished_parts_and_resume_completes(tmp_path: Path) -> None:
    parts_dir = tmp_path / "parts"
    with pytest.raises(JobError, match="chunk 1 failed: ValueError: seven is not allowed"):
        run_job(fails_on_seven, CHUNKS, parts_dir, cluster=Cluster(workers=2))
    assert not part_path(parts_dir, 1).exists()
    finished = {p.name: p.stat().st_mtime_ns for p in parts_dir.glob("part-*.parquet")}
    # A crash mid-write leaves only a temporary file, which the resume discards.
    (parts_dir / ".part-00001.parquet.tmp").write_bytes(b"half a file")
    parts = run_job(squares, CHUNKS, parts_dir, cluster=Cluster(workers=2))
    for name, mtime in finished.items():
        assert (parts_dir / name).stat().st_mtime_ns == mtime, "finished chunks are not redone"
    table = pq.read_table(combine_parts(parts, tmp_path / "out.parquet"))
    assert table.column("n").to_pylist() == list(range(20))
    assert not list(parts_dir.glob(".*.tmp"))


def test_refuses_to_mix_parts_of_two_jobs(tmp_path: Path) -> None:
    parts_dir = tmp_path / "parts"
    run_job(squares, CHUNKS[:1], parts_dir, cluster=Cluster(workers=1), fingerprint={"seed": 1})
    with pytest.raises(JobError, match="holds parts of a different job"):
        run_job(squares, CHUNKS[:1], parts_dir, cluster=Cluster(workers=1), fingerprint={"seed": 2})


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"workers": 0}, "workers must be a positive integer, got 0"),
        ({"workers": 2, "scheduler": "tcp://127.0.0.1:1"}, "not both"),
    ],
)
def test_cluster_settings_are_checked(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(JobError, match=match):
        Cluster(**kwargs)  # type: ignore[arg-type]


def test_unreachable_scheduler_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(JobError, match=r"cannot reach the Dask scheduler at tcp://127\.0\.0\.1:9"):
        run_job(squares, CHUNKS, tmp_path / "parts", cluster=Cluster(scheduler="tcp://127.0.0.1:9"))
