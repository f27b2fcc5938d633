"""Labelled datasets: exact labels, the decisions sampling rule, and specs that are refused.

The job that writes whole datasets is tested in ``tests/jobs/test_dataset.py``.
"""

from __future__ import annotations

import pytest

from boaf.game import parse_grid
from boaf.models.datasets import DatasetSpec, generate_chunk
from boaf.models.errors import DatasetError
from boaf.search.reference import reference_solve


def test_labels_agree_with_the_reference_search() -> None:
    table = generate_chunk((DatasetSpec("random", seed=9, count=150), 0, 150))
    for grid, solvable in zip(table.column("grid").to_pylist(), table.column("solvable").to_pylist(), strict=True):
        assert reference_solve(parse_grid(grid)).solvable == solvable, grid


def test_a_negative_seed_is_a_random_dataset_of_its_own() -> None:
    def grids(seed: int) -> list[str]:
        return generate_chunk((DatasetSpec("random", seed=seed, count=20), 0, 20)).column("grid").to_pylist()

    assert grids(-9) == grids(-9)
    assert grids(-9) != grids(9)


def test_decisions_keep_the_deal_and_only_children_of_mixed_states() -> None:
    table = generate_chunk((DatasetSpec("decisions", seed=1100, count=3), 0, 3)).to_pylist()
    deals = {row["deal"] for row in table}
    assert deals == {1100, 1101, 1102}
    for deal_seed in deals:
        rows = [r for r in table if r["deal"] == deal_seed]
        assert rows[0]["depth"] == 0
        by_depth: dict[int, list[bool]] = {}
        for row in rows[1:]:
            by_depth.setdefault(row["depth"], []).append(row["solvable"])
        # Every kept sibling group has both outcomes: that is what makes it a decision.
        assert all(any(labels) and not all(labels) for labels in by_depth.values())


def test_deals_dataset_uses_consecutive_seeds() -> None:
    table = generate_chunk((DatasetSpec("deals", seed=360528, count=2), 0, 2)).to_pylist()
    assert [(r["deal"], r["solvable"]) for r in table] == [(360528, False), (360529, table[1]["solvable"])]
    assert table[0]["grid"] == "5S 7D QS 2C/4C AD 8D 5C/QH 7C TC 3C/8C 2D 9C 3D"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"generator": "shuffled", "seed": 0, "count": 5}, "unknown generator 'shuffled'"),
        ({"generator": "random", "seed": 0, "count": 0}, "count must be a positive integer, got 0"),
    ],
)
def test_bad_specs_are_refused(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(DatasetError, match=match):
        DatasetSpec(**kwargs)  # type: ignore[arg-type]
