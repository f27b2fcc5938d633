"""The README's ``curl`` examples run as written against an HTTP server and print what the README shows.

Only the host and port change (the README's 127.0.0.1:8080 becomes the test server's),
and a Solve's ``elapsedMs``, a wall-clock time, is not compared.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from http_client import Client

README = Path(__file__).resolve().parents[2] / "README.md"
README_BASE = "http://127.0.0.1:8080"


def curl_examples(text: str) -> list[tuple[str, str]]:
    """(command, output) for every ``$ curl`` line of a console block; the output is the line after it."""
    lines = text.splitlines()
    return [(line[2:], lines[i + 1]) for i, line in enumerate(lines) if line.startswith("$ curl ")]


EXAMPLES = curl_examples(README.read_text(encoding="utf-8"))


def comparable(output: str) -> Any:
    answer = json.loads(output)
    answer.pop("elapsedMs", None)
    return answer


def test_the_readme_shows_curl_examples_for_classify_and_solve() -> None:
    commands = " ".join(command for command, _ in EXAMPLES)
    assert "/boaf.v1.Boaf/Classify" in commands
    assert "/boaf.v1.Boaf/Solve" in commands


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
@pytest.mark.parametrize(("command", "output"), EXAMPLES, ids=[c.split()[2].rsplit("/", 1)[-1] for c, _ in EXAMPLES])
def test_curl_example_prints_what_the_readme_shows(client: Client, command: str, output: str) -> None:
    argv = [word.replace(README_BASE, client.base) for word in shlex.split(command)]
    printed = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=60).stdout
    assert comparable(printed) == comparable(output)
