"""Shared fixtures of the search tests."""

from __future__ import annotations

from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parent.parent / "data" / "search" / "reference_random_4x4.txt"
GOLDEN_SEED, GOLDEN_COUNT = 2026, 5_000


@pytest.fixture(scope="session")
def golden() -> list[tuple[bool, int]]:
    """The reference search's ``(solvable, nodes)`` on ``random_states(2026, 5000)`` (see ``golden.py``)."""
    lines = [line.split() for line in GOLDEN.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    return [(label == "1", int(nodes)) for label, nodes in lines]
