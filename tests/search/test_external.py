"""The solver against every label of the external Neller states (evaluation only)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from boaf import search
from boaf.game.cards import parse_card

CSV = Path(__file__).resolve().parents[3] / "shared" / "data" / "external" / "neller-states-deals-0-99.csv"


def read_states(path: Path) -> tuple[np.ndarray, list[bool]]:
    """Cells (``int8[n, 16]``) and labels of the 32-character row-major grids."""
    cells, labels = [], []
    with path.open(encoding="utf-8") as handle:
        for text, label in csv.reader(handle):
            pairs = [text[i : i + 2] for i in range(0, 32, 2)]
            cells.append([-1 if p == "--" else parse_card(p) for p in pairs])
            labels.append(label.strip() == "1")
    return np.array(cells, dtype=np.int8), labels


def test_solver_agrees_with_every_external_label() -> None:
    # CI always has the data set; without it this test fails rather than passing by skipping.
    assert CSV.is_file(), f"the external data set {CSV} is missing"
    cells, labels = read_states(CSV)
    assert len(labels) == 11_862
    batch = search.solve_many(cells, rows=4, cols=4)
    disagreements = [
        i for i, (s, label) in enumerate(zip(batch.status_names(), labels, strict=True)) if (s == "solvable") != label
    ]
    assert disagreements == []
