"""The feature commands of the ``boaf`` CLI, run as a real process."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from cli_runner import boaf

from boaf.features import SCHEMA_VERSION, feature_names, state_features
from boaf.game import deal, format_grid

DEAL_1163 = format_grid(deal(1163))


@pytest.mark.parametrize("args", [("features", DEAL_1163, "--json"), ("features", "--json", DEAL_1163)])
def test_features_json(args: tuple[str, ...]) -> None:
    result = boaf(*args)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["schema"] == SCHEMA_VERSION
    assert list(data["features"]) == feature_names()
    assert data["features"] == state_features(deal(1163))


@pytest.mark.parametrize("args", [("-- AC/2C 3C", "--json"), ("--json", "-- AC/2C 3C")])
def test_a_grid_may_start_with_an_empty_cell(args: tuple[str, ...]) -> None:
    result = boaf("features", *args)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["features"]["n_stacks"] == 3


def test_features_show_is_the_same_command() -> None:
    assert boaf("features", "show", DEAL_1163, "--json").stdout == boaf("features", DEAL_1163, "--json").stdout


def test_features_table() -> None:
    result = boaf("features", DEAL_1163)
    assert result.returncode == 0
    assert "a2_zeros" in result.stdout and "88" in result.stdout


@pytest.mark.parametrize("args", [("features", "--help"), ("features", "export", "--help"), ("sieve", "--help")])
def test_help(args: tuple[str, ...]) -> None:
    result = boaf(*args)
    assert result.returncode == 0
    assert "Usage" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("features", "AC 2C/3C"), "row 2 has 1 cells, expected 2"),
        (("features", "AC XX"), "unknown card 'XX'"),
        (("sieve", "--seeds", "10"), "is not A:B"),
        (("sieve", "--seeds", "9:3"), "A must be below B"),
        (("features", "export", "--input", "/nonexistent/in.txt", "--output", "o.parquet"), "does not exist"),
        (("features", "export", "--input", "x", "--output", "o.parquet", "--on-error", "maybe"), "--on-error"),
    ],
)
def test_bad_input_exits_2_with_one_line(args: tuple[str, ...], message: str) -> None:
    result = boaf(*args)
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_export_command(tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    source.write_text(f"{DEAL_1163}\nAC AC\n{format_grid(deal(7))}\n", encoding="utf-8")
    output = tmp_path / "out.parquet"
    failed = boaf("features", "export", "--input", str(source), "--output", str(output), "--workers", "1")
    assert failed.returncode == 2
    assert "in.txt:2: duplicate card AC" in failed.stderr
    args = ("--input", str(source), "--output", str(output), "--workers", "1", "--on-error", "skip")
    result = boaf("features", "export", *args)
    assert result.returncode == 0, result.stderr
    assert "in.txt:2: skipped: duplicate card AC" in result.stderr
    assert "wrote 2 rows" in result.stdout
    assert pq.read_table(output).column("a2_zeros").to_pylist()[0] == 88


def test_sieve_json() -> None:
    result = boaf("sieve", "--seeds", "1160:1270", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["seeds"] == [1160, 1270] and data["deals"] == 110
    assert 1163 in data["flagged"]
    assert 1264 in data["sfud"]


def test_sieve_verify_finds_deal_1163(tmp_path: Path) -> None:
    parts = tmp_path / "parts"
    result = boaf("sieve", "--seeds", "1160:1180", "--verify", "--json", "--workers", "1", "--parts-dir", str(parts))
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["ffud"] == [1163]
    assert data["recall"] == 1.0
    assert data["precision"] == pytest.approx(1 / len(data["flagged"]))
    assert not parts.exists()
