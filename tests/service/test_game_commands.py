"""The game commands of the ``boaf`` CLI, run as a real process."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from cli_runner import boaf


def test_deal_prints_one_line_of_grid_text() -> None:
    result = boaf("deal", "557593")
    assert result.returncode == 0
    assert result.stdout == "QH 4S 9H 8C/TC JD QS 9C/7C 9D TH 7D/8D 2C TD 7H\n"


def test_a_negative_deal_number_needs_no_double_dash() -> None:
    result = boaf("deal", "-1", "--rows", "2", "--cols", "3")
    assert (result.returncode, result.stdout, result.stderr) == (0, "9S 2H 7C/5H 4C 6D\n", "")
    assert boaf("deal", "--", "-1").stdout == boaf("deal", "-1").stdout


def test_a_usage_error_is_one_plain_line() -> None:
    result = boaf("deal", "--bogus", "1")
    assert (result.returncode, result.stdout, result.stderr) == (2, "", "boaf: no such option: --bogus\n")


def test_deal_json_and_other_grid_sizes() -> None:
    data = json.loads(boaf("deal", "360528", "--rows", "2", "--cols", "3", "--json").stdout)
    assert data == {"rows": 2, "cols": 3, "cells": ["5S", "7D", "QS", "2C", "4C", "AD"]}


def test_moves_lists_legal_moves() -> None:
    assert boaf("moves", "2S 3S/-- 4S").stdout.split() == ["2S-3S", "3S-2S", "3S-4S", "4S-3S"]


def test_play_prints_the_final_grid() -> None:
    assert boaf("play", "2S 3S/-- 4S", "2S-3S 2S-4S").stdout == "-- --/-- 2S\n"


def test_random_prints_reproducible_states() -> None:
    first = boaf("random", "--seed", "5", "--count", "3", "--stacks", "4")
    assert first.stdout == boaf("random", "--seed", "5", "--count", "3", "--stacks", "4").stdout
    lines = first.stdout.splitlines()
    assert len(lines) == 3 and all(len([c for c in line.replace("/", " ").split() if c != "--"]) == 4 for line in lines)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("deal", "1", "--rows", "9", "--cols", "9"), "boaf: grid 9x9 has 81 cells; at most 52 are allowed\n"),
        (("deal", "4294967296"), "boaf: seed 4294967296 is outside the 32-bit signed range -2147483648..2147483647\n"),
        (("moves", "2S 2S"), "boaf: duplicate card 2S at row 1, column 2 (first at row 1, column 1)\n"),
        (("play", "2S 3S/-- 4S", "2S-3S 3S-4S"), "boaf: move 2 of 2: move '3S-4S': 3S is not on top of any stack\n"),
    ],
)
def test_bad_input_exits_2_with_one_line_and_no_traceback(args: tuple[str, ...], message: str) -> None:
    result = boaf(*args)
    assert result.returncode == 2
    assert result.stderr == message
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        (("deal", "4294967296"), 2, "boaf: seed 4294967296 is outside the 32-bit signed range"),
        (
            ("puzzle", "generate", "--cards", "2", "--rows", "1", "--cols", "16", "--iterations", "0", "--seed", "3"),
            3,
            "boaf: no solvable 2-card puzzle found in 0 steps (seed 3)",
        ),
        (
            ("classify", "AS 2S", "--model", "/nonexistent"),
            1,
            "boaf: model file /nonexistent/classifier.onnx is missing",
        ),
    ],
    ids=["bad input", "budget ran out", "boaf failed"],
)
def test_each_branch_of_errors_has_its_exit_status(args: tuple[str, ...], status: int, message: str) -> None:
    result = boaf(*args)
    assert result.returncode == status
    assert result.stderr.startswith(message) and result.stderr.count("\n") == 1


def test_the_exit_statuses_are_in_the_help() -> None:
    assert "Exit status: 0 done; 1 boaf failed" in " ".join(boaf("--help").stdout.split())


def test_every_command_has_help() -> None:
    for command in ("deal", "moves", "play", "random"):
        result = boaf(command, "--help")
        assert result.returncode == 0 and "Usage" in result.stdout


def test_a_grid_may_start_with_an_empty_cell() -> None:
    result = boaf("moves", "-- AC/2C 3C")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["AC-3C", "2C-3C", "3C-AC", "3C-2C"]
    assert boaf("play", "-- AC/2C 3C", "AC-3C").stdout == "-- --/2C AC\n"


def test_a_one_shot_command_hands_over_all_its_output_before_its_quick_exit() -> None:
    """``deal``, ``random``, ``solve`` … end with ``os._exit`` (``boaf.service.cli.QUICK_EXIT``): what they print
    through a pipe is whole, and a reader that closes the pipe early ends the command with status 1, no traceback."""
    from boaf.service.cli import QUICK_EXIT

    assert "random" in QUICK_EXIT
    many = boaf("random", "--seed", "7", "--count", "5000")
    assert many.returncode == 0
    assert len(many.stdout.splitlines()) == 5000 and many.stdout.endswith("\n")
    closed = subprocess.run(
        f'set -o pipefail; "{sys.executable}" -c "from boaf.service.cli import main; main()" '
        "random --seed 7 --count 5000 | head -c 10",
        shell=True,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        executable="/bin/bash",
    )
    assert len(closed.stdout) == 10
    assert closed.returncode == 1  # (pipefail: the command's own status)
    assert "Traceback" not in closed.stderr
