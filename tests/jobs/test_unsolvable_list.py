"""The committed list of the unsolvable deals of −5,000,000…4,999,999 (``docs/data``), against a fresh census.

The list comes from the ten-million-deal census (``docs/census.md``, written by
``benchmarks/census_report.py``). A fresh census of a 50,000-seed slice, on a
real local Dask cluster, must find exactly the list's deals there, with the
same classes; the million-deal range must hold the published counts; and Sang
& Yoon's list of −500,000…499,999 must be the list's deals there but one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from boaf.jobs.census import census
from boaf.jobs.runner import Cluster

LIST = Path(__file__).resolve().parents[2] / "docs" / "data" / "unsolvable_-5000000_5000000.txt"
SANG_YOON = Path(__file__).resolve().parents[3] / "shared" / "data" / "external" / "sang-yoon-unsolvable-seeds.txt"
SLICE = range(-150_000, -100_000)  # holds FFUD -115618, the hardest deal of the million-deal census


def committed() -> dict[int, str]:
    rows = [line.split() for line in LIST.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    return {int(seed): klass for seed, klass in rows}


def test_the_list_is_in_seed_order_with_known_classes_and_its_header_counts() -> None:
    lines = [line for line in LIST.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    seeds = [int(line.split()[0]) for line in lines]
    assert seeds == sorted(set(seeds)) and seeds[0] >= -5_000_000 and seeds[-1] < 5_000_000
    found = committed()
    assert set(found.values()) == {"OBUD", "SFUD", "FFUD"}
    header = LIST.read_text(encoding="utf-8").splitlines()[0]
    assert f": {len(found):,} (" in header
    for klass in ("OBUD", "SFUD", "FFUD"):
        assert f"{sum(k == klass for k in found.values()):,} {klass}" in header


def test_the_million_deal_range_holds_the_published_counts() -> None:
    million = {seed: k for seed, k in committed().items() if -500_000 <= seed < 500_000}
    counts = {klass: sum(k == klass for k in million.values()) for klass in ("OBUD", "SFUD", "FFUD")}
    assert (len(million), counts) == (1_864, {"OBUD": 1_487, "SFUD": 269, "FFUD": 108})


def test_sang_and_yoon_list_every_deal_there_but_one_separated_flock() -> None:
    assert SANG_YOON.is_file(), f"the external list {SANG_YOON} is missing"
    theirs = {int(line) for line in SANG_YOON.read_text(encoding="utf-8").split()}
    ours = {seed: k for seed, k in committed().items() if -500_000 <= seed < 500_000}
    assert len(theirs) == 1_863 and theirs <= set(ours)
    assert {seed: ours[seed] for seed in set(ours) - theirs} == {-287924: "SFUD"}


@pytest.mark.slow
def test_a_fresh_census_of_a_50000_seed_slice_finds_exactly_the_list_s_deals(tmp_path: Path) -> None:
    summary = census(SLICE, output=tmp_path / "slice", cluster=Cluster(workers=2), chunk_size=5_000)
    fresh = {u["seed"]: u["class"] for u in summary["unsolvable"]}
    listed = {seed: k for seed, k in committed().items() if seed in SLICE}
    assert summary["deals"] == len(SLICE)
    assert fresh == listed
    assert fresh[-115618] == "FFUD"
