"""The census job on a real Dask local cluster: results, output rows and resume."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from boaf import search
from boaf.game import deal
from boaf.jobs.census import CensusChunk, census, census_chunk
from boaf.jobs.runner import Cluster, InvalidJob, part_path, run_job


def expected_unsolvable(seeds: range) -> dict[int, str]:
    classes = {search.ODD_BIRD: "OBUD", search.SEPARATED_FLOCK: "SFUD", search.EXHAUSTED: "FFUD"}
    found = {}
    for seed in seeds:
        result = search.solve(deal(seed), "compatible")
        if result.status == search.UNSOLVABLE:
            found[seed] = classes[result.reason or ""]
    return found


def test_census_on_two_workers_matches_single_solves(tmp_path: Path) -> None:
    seeds = range(1100, 1400)
    output = tmp_path / "census.parquet"
    summary = census(seeds, output=output, cluster=Cluster(workers=2), chunk_size=60)
    assert (summary["first"], summary["last"], summary["deals"]) == (1100, 1399, 300)
    assert {u["seed"]: u["class"] for u in summary["unsolvable"]} == expected_unsolvable(seeds)
    rows = pq.read_table(output)
    assert rows.column("seed").to_pylist() == list(seeds)
    assert set(rows.column("status").to_pylist()) <= {"solvable", "unsolvable"}
    assert not (tmp_path / ".census.parquet.parts").exists()


def test_a_census_into_a_folder_is_a_partitioned_dataset_that_a_rerun_reads_back(tmp_path: Path) -> None:
    seeds = range(-300, -100)
    output = tmp_path / "census"
    summary = census(seeds, output=output, cluster=Cluster(workers=2), chunk_size=30)
    assert sorted(p.name for p in output.glob("part-*.parquet")) == [f"part-{i:05d}.parquet" for i in range(7)]
    rows = pq.read_table(output)  # the job file starts with "_": readers skip it
    assert rows.column("seed").to_pylist() == list(seeds)
    assert {u["seed"]: u["class"] for u in summary["unsolvable"]} == expected_unsolvable(seeds)
    # Every part is there: the same command solves nothing and gives the same summary.
    again = census(seeds, output=output, cluster=Cluster(workers=2), chunk_size=30)
    del again["elapsed_s"], summary["elapsed_s"]
    assert again == summary


@pytest.mark.parametrize(
    ("seeds", "chunk_size", "message"),
    [
        (range(0, 10), 0, "chunk_size must be a positive"),
        (range(0, 10), 1_000_001, "chunk_size must be at most 1,000,000"),
        (range(0, 1_000_000), 10, "make more than 99,999 chunks of 10"),
    ],
)
def test_a_census_refuses_chunk_sizes_it_cannot_run(seeds: range, chunk_size: int, message: str) -> None:
    with pytest.raises(InvalidJob, match=message):
        census(seeds, chunk_size=chunk_size)


def test_an_interrupted_census_resumes_from_its_finished_chunks(tmp_path: Path) -> None:
    seeds = range(0, 200)
    parts_dir = tmp_path / "parts"
    # The first run died after two of its four chunks: same job, same parts directory.
    chunks = [CensusChunk(a, a + 50) for a in range(0, 200, 50)]
    fingerprint = {"job": "census", "seeds": [0, 200], "grid": [4, 4], "algorithm": "ordered", "chunk_size": 50}
    run_job(census_chunk, chunks[:2], parts_dir, cluster=Cluster(workers=1), fingerprint={**fingerprint, "chunks": 4})
    # Mark the finished part so that reuse shows: deal 10 (an odd bird) now reads as solvable.
    first = pq.read_table(part_path(parts_dir, 0)).to_pylist()
    first[10] |= {"status": "solvable", "reason": None, "class": None}
    pq.write_table(pa.Table.from_pylist(first, schema=pq.read_schema(part_path(parts_dir, 0))), part_path(parts_dir, 0))

    summary = census(seeds, parts_dir=parts_dir, cluster=Cluster(workers=2), chunk_size=50)
    expected = expected_unsolvable(seeds)
    assert expected[10] == "OBUD"
    assert summary["deals"] == 200
    assert {u["seed"] for u in summary["unsolvable"]} == set(expected) - {10}
