"""``boaf solve`` and ``boaf census``, run as real processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import boaf

from boaf.game import deal, play


def test_solve_a_seed_as_json() -> None:
    result = boaf("solve", "--seed", "557593", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) == {"status", "moves", "nodes", "elapsed_ms", "reason", "algorithm"}
    assert data["status"] == "solvable" and data["reason"] is None
    assert play(deal(557593), data["moves"]).n_stacks == 1


def test_solve_grid_text_with_an_algorithm_and_a_budget() -> None:
    text = boaf("solve", "AS 2S 3S/-- -- 4S", "--algorithm", "best-n").stdout.splitlines()
    assert text[0].startswith("solvable: ") and "best-n" in text[0]
    assert len(text[1].split()) == 3
    unknown = json.loads(boaf("solve", "--seed", "1163", "--max-nodes", "10", "--json").stdout)
    assert (unknown["status"], unknown["nodes"]) == ("unknown", 10)
    memory = json.loads(boaf("solve", "--seed", "618979", "--max-memory-mb", "0.5", "--json").stdout)
    assert (memory["status"], memory["reason"]) == ("unknown", "memory")
    threaded = json.loads(boaf("solve", "--seed", "1163", "--threads", "2", "--json").stdout)
    assert (threaded["status"], threaded["reason"]) == ("unsolvable", "exhausted")
    reason = json.loads(boaf("solve", "AC 2C/7H --", "--json").stdout)["reason"]
    assert reason == "odd_bird"


def test_solve_a_file_writes_one_line_per_state_in_order(tmp_path: Path) -> None:
    source = tmp_path / "states.txt"
    source.write_text('AC 2C/7H 8H\n\n{"grid": "AS 2S"}\n{"rows": 1, "cols": 2, "cells": ["KD", null]}\n')
    output = tmp_path / "answers.jsonl"
    result = boaf("solve", "--input", str(source), "--output", str(output))
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in output.read_text().splitlines()]
    assert [(x["status"], x["reason"]) for x in lines] == [
        ("unsolvable", "separated_flock"),
        ("solvable", None),
        ("solvable", None),
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["solve", "AS 2S", "--algorithm", "magic"], "boaf: unknown algorithm 'magic'"),
        (["solve", "AS ZZ"], "boaf: row 1, column 2: unknown card 'ZZ'"),
        (["solve", "--seed", "1", "--max-nodes", "0"], "boaf: max_nodes must be a positive integer, got 0"),
        (["solve", "--seed", "1", "--time-limit", "-2"], "boaf: time_limit must be a positive number of seconds"),
        (["solve"], "boaf: give exactly one of GRID or --seed"),
        (["solve", "--input", "/nonexistent/states.txt"], "boaf: input file /nonexistent/states.txt does not exist"),
        (["census", "--seeds", "9:3"], "boaf: seed range '9:3' is empty"),
        (["census", "--seeds", "abc"], "boaf: seed range 'abc' is not A:B"),
        (["census", "--seeds", "0:5", "--algorithm", "magic"], "boaf: unknown algorithm 'magic'"),
        (["census", "--seeds", "0:1000000", "--chunk-size", "5"], "boaf: 1,000,000 deals make more than 99,999 chunks"),
    ],
)
def test_bad_input_exits_2_with_one_line(args: list[str], message: str) -> None:
    result = boaf(*args)
    assert result.returncode == 2
    assert result.stderr.startswith(message)
    assert result.stderr.count("\n") == 1


def test_a_bad_line_in_an_input_file_is_named(tmp_path: Path) -> None:
    source = tmp_path / "states.txt"
    source.write_text("AS 2S\nAS AS\n")
    result = boaf("solve", "--input", str(source))
    assert result.returncode == 2
    assert f"{source}:2: duplicate card AS" in result.stderr


def test_census_json_on_a_small_range(tmp_path: Path) -> None:
    output = tmp_path / "census.parquet"
    result = boaf("census", "--seeds", "1160:1270", "--workers", "2", "--json", "--output", str(output))
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)  # the progress bar goes to stderr
    assert {k: summary[k] for k in ("first", "last", "deals")} == {"first": 1160, "last": 1269, "deals": 110}
    classes = {u["seed"]: u["class"] for u in summary["unsolvable"]}
    assert classes[1163] == "FFUD" and classes[1264] == "SFUD"
    assert output.exists()
