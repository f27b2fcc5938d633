"""How every ``boaf`` command reads its command line (``boaf.service.cli.usage``): negative numbers, usage errors
in one line, and help without type placeholders."""

from __future__ import annotations

import re

import pytest
import typer

from boaf.search import ALGORITHM_NAMES
from boaf.service.cli import app, main
from boaf.service.cli.usage import negative_numbers_as_arguments


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``boaf ARGS…`` in this process: its exit status, stdout and stderr."""
    with pytest.raises(SystemExit) as ended:
        main(list(args))
    out, err = capsys.readouterr()
    return int(ended.value.code or 0), out, err


SOLVE_PARAMS = typer.main.get_command(app).commands["solve"].params  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("args", "parsed"),
    [
        (["1", "--rows", "2"], ["1", "--rows", "2"]),  # no negative number: as given
        (["-1"], ["--", "-1"]),
        (["-1", "--rows", "2", "--json"], ["--rows", "2", "--json", "--", "-1"]),
        (["--seed", "-1", "--algorithm", "best-n"], ["--seed", "-1", "--algorithm", "best-n", "--"]),
        (["--seed=-1", "-2.5"], ["--seed=-1", "--", "-2.5"]),
        (["--json", "-3", "--", "-4"], ["--json", "--", "-3", "-4"]),
        (["--bogus", "-1"], ["--bogus", "--", "-1"]),
    ],
)
def test_negative_numbers_are_values_and_options_keep_theirs(args: list[str], parsed: list[str]) -> None:
    assert negative_numbers_as_arguments(SOLVE_PARAMS, args) == parsed


def test_a_negative_seed_is_a_seed_everywhere(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "deal", "-1")[1] == "9S 2H 7C 5H/4C 6D 3D 4S/JH TC TD QS/3S KH 8D JC\n"
    assert run(capsys, "deal", "-1", "--rows", "2", "--cols", "3") == (0, "9S 2H 7C/5H 4C 6D\n", "")
    status, out, _ = run(capsys, "random", "--seed", "-3", "--count", "2")
    assert status == 0 and len(out.splitlines()) == 2
    assert out != run(capsys, "random", "--seed", "3", "--count", "2")[1]  # a stream of its own
    assert run(capsys, "solve", "--seed", "-1", "--max-nodes", "5", "--json")[0] == 0


# (what, command line, the one line on stderr)
USAGE_ERRORS = [
    ("out of range", ["deal", "--rows", "0", "5"], "boaf: --rows=0: input should be greater than or equal to 1"),
    ("not a number", ["random", "--seed", "abc"], "boaf: --seed=abc: input should be a valid integer"),
    ("not a number, argument", ["deal", "x1"], "boaf: SEED=x1: input should be a valid integer"),
    ("unknown option", ["deal", "--bogus", "3"], "boaf: no such option: --bogus"),
    ("unknown option of a group", ["puzzle", "generate", "--bogus"], "boaf: no such option: --bogus"),
    ("missing argument", ["deal"], "boaf: SEED is missing"),
    ("missing value", ["deal", "1", "--rows"], "boaf: option '--rows' requires an argument"),
    ("unknown command", ["dael", "1"], "boaf: no such command 'dael'"),
    ("flag of serve out of range", ["serve", "--port", "x"], "boaf: --port=x: input should be a valid integer"),
    ("a 100,000-character value", ["random", "--seed", "x" * 100_000],
     "boaf: --seed='" + "x" * 40 + "…': input should be a valid integer"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "line"), [e[1:] for e in USAGE_ERRORS], ids=[e[0] for e in USAGE_ERRORS])
def test_a_usage_error_is_one_line_naming_the_option_and_exit_status_2(
    capsys: pytest.CaptureFixture[str], args: list[str], line: str
) -> None:
    status, out, err = run(capsys, *args)
    assert (status, out) == (2, "")
    assert err.startswith(line) and err.count("\n") == 1, err


def commands(group: object = None, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The path of every command and group of the ``boaf`` CLI, the top one first."""
    group = typer.main.get_command(app) if group is None else group
    found = [path]
    for name, command in getattr(group, "commands", {}).items():
        found += commands(command, (*path, name))
    return found


PLACEHOLDER = re.compile(r"<(bool|int|float|str|path|text)[a-z ]*>|\{[a-z_]+\}", re.IGNORECASE)


@pytest.mark.parametrize("path", commands(), ids=lambda path: " ".join(path) or "boaf")
def test_help_has_no_placeholders(capsys: pytest.CaptureFixture[str], path: tuple[str, ...]) -> None:
    status, out, _ = run(capsys, *path, "--help")
    assert status == 0 and out.startswith("Usage: boaf")
    assert not PLACEHOLDER.search(out), PLACEHOLDER.search(out)
    assert "╭" not in out  # plain text, no boxes


def test_help_names_every_value_an_option_takes(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("solve", "census"):
        help_text = " ".join(run(capsys, command, "--help")[1].split())
        assert all(name in help_text for name in ALGORITHM_NAMES), command
    assert "Usage: boaf deal [OPTIONS] SEED" in run(capsys, "deal", "--help")[1]
    assert "--rows ROWS" in run(capsys, "deal", "--help")[1]


def test_serve_help_gives_the_defaults_of_settings(capsys: pytest.CaptureFixture[str]) -> None:
    help_text = " ".join(run(capsys, "serve", "--help")[1].split())
    assert "[BOAF_METRICS_PORT, default 8082]" in help_text
    assert "[BOAF_PORT, default 50051]" in help_text and "[BOAF_GRPC_ENABLED, default on]" in help_text
