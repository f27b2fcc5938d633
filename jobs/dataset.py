"""Dataset generation on the batch runner (SPEC §5).

``boaf.models.datasets`` says what a dataset is: its spec, the rows of one chunk
(``generate_chunk``) and its manifest. This job runs the chunks on Dask, keeps
finished chunks under ``out_dir/parts`` until the dataset is complete (so an
interrupted run resumes where it stopped), and writes ``data.parquet`` and
``manifest.json``.
"""

from __future__ import annotations

import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

from boaf import search
from boaf.features import SCHEMA_VERSION
from boaf.jobs.runner import Cluster, combine_parts, run_job
from boaf.models.datasets import DATA_FILE, DatasetSpec, generate_chunk, write_manifest


def generate_dataset(spec: DatasetSpec, out_dir: Path, cluster: Cluster | None = None) -> dict[str, Any]:
    """Generate ``spec`` into ``out_dir`` (``data.parquet`` + ``manifest.json``) and return the manifest."""
    parts_dir = out_dir / "parts"
    parts = run_job(
        generate_chunk,
        spec.chunks(),
        parts_dir,
        cluster=cluster or Cluster(),
        description=f"{spec.generator} dataset",
        fingerprint=fingerprint(spec),
    )
    combine_parts(parts, out_dir / DATA_FILE)
    manifest = write_manifest(spec, out_dir)
    shutil.rmtree(parts_dir)
    return manifest


def fingerprint(spec: DatasetSpec) -> dict[str, Any]:
    """What a dataset's parts depend on: its spec, the solver that labels it and the feature schema.

    A resumed run refuses parts written under another fingerprint, so a new
    ``search.SOLVER_VERSION`` never reuses labels of the old solver.
    """
    return {"dataset": asdict(spec), "solver": search.SOLVER_VERSION, "schema": SCHEMA_VERSION}
