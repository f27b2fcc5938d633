"""Every console example in the README runs as written and prints what the README shows.

A ``console`` block is a list of ``$ command`` lines, each followed by its output
(stdout, then stderr). Only wall-clock figures may differ: every ``N ms`` /
``N s`` is compared as a placeholder.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_runner import boaf

README = Path(__file__).resolve().parents[1] / "README.md"
TIMING = re.compile(r"\d[\d,]*(\.\d+)? (ms|s)\b")


@dataclass(frozen=True)
class Example:
    command: str
    output: str
    line: int

    def __str__(self) -> str:
        return f"README:{self.line} {self.command[:40]}"


def console_examples(text: str) -> list[Example]:
    """The ``$ command`` / output pairs of every ```` ```console ```` block, in order."""
    examples: list[Example] = []
    lines = text.splitlines()
    inside = False
    for number, line in enumerate(lines, start=1):
        if line.startswith("```"):
            inside = line.strip() == "```console"
        elif inside and line.startswith("$ "):
            examples.append(Example(line[2:], "", number))
        elif inside and examples:
            last = examples[-1]
            examples[-1] = Example(last.command, last.output + line + "\n", last.line)
    return examples


EXAMPLES = console_examples(README.read_text())


def normalized(text: str) -> str:
    return TIMING.sub("<time>", text).strip()


def test_the_readme_has_console_examples() -> None:
    commands = [example.command.split()[0] for example in EXAMPLES]
    assert commands.count("boaf") >= 4


def test_console_examples_parse() -> None:
    text = "```console\n$ boaf deal 1\nJD 2D\n$ boaf x\n```\n$ not this\n"
    assert console_examples(text) == [Example("boaf deal 1", "JD 2D\n", 2), Example("boaf x", "", 4)]


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.command.startswith("boaf ")], ids=str)
def test_boaf_example_prints_what_the_readme_shows(example: Example) -> None:
    result = boaf(*shlex.split(example.command)[1:])
    assert normalized(result.stdout + result.stderr) == normalized(example.output)
