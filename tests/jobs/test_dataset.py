"""The dataset job: deterministic bytes, a manifest that checks its data, and resume only onto the same solver."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from boaf import search
from boaf.jobs.dataset import generate_dataset
from boaf.jobs.runner import Cluster, JobError
from boaf.models.datasets import DatasetSpec, read_manifest
from boaf.models.errors import DatasetError


def test_same_spec_gives_the_same_bytes_and_another_seed_does_not(tmp_path: Path) -> None:
    spec = DatasetSpec("random", seed=5, count=600, chunk_size=200)
    first = generate_dataset(spec, tmp_path / "a", Cluster(workers=2))
    again = generate_dataset(spec, tmp_path / "b", Cluster(workers=2))
    other = generate_dataset(
        DatasetSpec("random", seed=6, count=600, chunk_size=200), tmp_path / "c", Cluster(workers=2)
    )
    assert first["sha256"] == again["sha256"] != other["sha256"]
    assert (tmp_path / "a" / "data.parquet").read_bytes() == (tmp_path / "b" / "data.parquet").read_bytes()
    assert first["rows"] == 600 and first["generator"] == "random"
    assert read_manifest(tmp_path / "a")["sha256"] == first["sha256"]
    assert not (tmp_path / "a" / "parts").exists()


def test_a_tampered_dataset_does_not_match_its_manifest(tmp_path: Path) -> None:
    generate_dataset(DatasetSpec("deals", seed=1, count=5), tmp_path, Cluster(workers=1))
    table = pq.read_table(tmp_path / "data.parquet")
    pq.write_table(table.slice(0, 4), tmp_path / "data.parquet")
    with pytest.raises(DatasetError, match="does not match its manifest"):
        read_manifest(tmp_path)


def test_a_new_solver_version_refuses_to_resume_onto_old_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = DatasetSpec("deals", seed=1, count=4, chunk_size=2)
    parts = tmp_path / "parts"
    monkeypatch.setattr(search, "SOLVER_VERSION", "old-solver")
    with monkeypatch.context() as interrupted:
        interrupted.setattr("boaf.jobs.dataset.combine_parts", _interrupt)
        with pytest.raises(KeyboardInterrupt):
            generate_dataset(spec, tmp_path, Cluster(workers=1))
    assert sorted(p.name for p in parts.glob("part-*.parquet")) == ["part-00000.parquet", "part-00001.parquet"]

    monkeypatch.setattr(search, "SOLVER_VERSION", "new-solver")
    with pytest.raises(JobError, match="holds parts of a different job"):
        generate_dataset(spec, tmp_path, Cluster(workers=1))

    monkeypatch.setattr(search, "SOLVER_VERSION", "old-solver")
    assert generate_dataset(spec, tmp_path, Cluster(workers=1))["solver_version"] == "old-solver"


def _interrupt(*args: object, **kwargs: object) -> None:
    raise KeyboardInterrupt
