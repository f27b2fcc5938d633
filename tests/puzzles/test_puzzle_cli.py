"""``boaf puzzle``, run as a real process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import boaf

# Importing the command module registers it, whether or not boaf.service.cli lists it yet.
ENTRY = "from boaf.service.cli import main; main()"


def test_analyze_json_has_the_documented_fields(tmp_path: Path) -> None:
    plot = tmp_path / "depths.png"
    result = boaf("puzzle", "analyze", "AC 2C 3C", "--json", "--plot", str(plot))
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["stacks"] == 3 and data["solvable"] is True and data["exact"] is True
    assert [(d["depth"], d["states"], d["solvable"]) for d in data["by_depth"]] == [(0, 1, 1), (1, 6, 6), (2, 6, 6)]
    assert data["halfway_ratio"] == 1.0 and data["tension"] == 0.0
    assert plot.read_bytes().startswith(b"\x89PNG")


def test_analyze_text_and_estimate() -> None:
    result = boaf("puzzle", "analyze", "5C 5D 5H 5S/6C 6D 6H 6S", "--budget", "300", "--samples", "20")
    assert result.returncode == 0, result.stderr
    assert "8 stacks, solvable (estimate)" in result.stdout and "halfway ratio (depth 4)" in result.stdout


def test_generate_json_is_reproducible() -> None:
    args = ("puzzle", "generate", "--cards", "6", "--seed", "4", "--iterations", "50", "--json")
    first, second = boaf(*args), boaf(*args)
    assert first.returncode == 0, first.stderr
    data = json.loads(first.stdout)
    assert data["cards"] == 6 and len(data["solution"]) == 5 and 0 < data["halfway_ratio"] <= 1
    assert {k: v for k, v in data.items() if k != "elapsed_ms"} == {
        k: v for k, v in json.loads(second.stdout).items() if k != "elapsed_ms"
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("puzzle", "analyze", "AC XX"), "unknown card 'XX'"),
        (("puzzle", "analyze", "AC 2C", "--budget", "0"), "budget must be a positive number of states"),
        (("puzzle", "analyze", "AC 2C/AC --"), "duplicate card AC"),
        (("puzzle", "analyze", "AC 2C 3C 4C/5C 6C 7C 8C", "--budget", "5", "--plot", "x.png"), "needs an exact"),
        (("puzzle", "generate", "--cards", "17"), "cards must be 2..16"),
        (("puzzle", "generate", "--cards", "5", "--energy", "nope"), "unknown energy 'nope'"),
    ],
)
def test_bad_input_exits_2_with_one_line(args: tuple[str, ...], message: str) -> None:
    result = boaf(*args)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr
