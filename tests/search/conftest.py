"""Shared fixtures of the search tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from boaf.game import State, random_states

GOLDEN = Path(__file__).resolve().parent.parent / "data" / "search" / "reference_random_4x4.txt"
GOLDEN_SEED, GOLDEN_COUNT = 2026, 5_000  # golden.py writes the answers for these states


@pytest.fixture(scope="session")
def golden() -> list[tuple[bool, int]]:
    """The reference search's ``(solvable, nodes)`` on ``golden_states`` (see ``golden.py``)."""
    lines = [line.split() for line in GOLDEN.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    return [(label == "1", int(nodes)) for label, nodes in lines]


@pytest.fixture(scope="session")
def golden_states() -> list[State]:
    """The states ``golden`` answers, in order: ``random_states(GOLDEN_SEED, GOLDEN_COUNT)``, 4x4."""
    return random_states(GOLDEN_SEED, GOLDEN_COUNT)
