"""The ``curl`` examples of the README and docs/ run as written against an HTTP server and print what they show.

Only the host and port change (the pages' 127.0.0.1:8080 becomes the test server's),
and a Solve's ``elapsedMs``, a wall-clock time, is not compared. With ``BOAF_LIVE_URL``
set, the examples run against that server instead (``scripts/first-start`` points it
at the README's own ``boaf serve`` on a fresh clone).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
README_BASE = "http://127.0.0.1:8080"


@dataclass(frozen=True)
class CurlExample:
    command: str
    output: str
    page: str
    line: int

    def __str__(self) -> str:
        return f"{self.page}:{self.line} {self.command.split()[2].rsplit('/', 1)[-1]}"


def curl_examples(text: str, page: str = "README.md") -> list[CurlExample]:
    """Every ``$ curl`` line of a page; its output is the line after it."""
    lines = text.splitlines()
    return [
        CurlExample(line[2:], lines[i + 1], page, i + 1) for i, line in enumerate(lines) if line.startswith("$ curl ")
    ]


def page_examples(path: Path) -> list[CurlExample]:
    return curl_examples(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())


EXAMPLES = [example for page in PAGES for example in page_examples(page)]


def comparable(output: str) -> Any:
    answer = json.loads(output)
    answer.pop("elapsedMs", None)
    return answer


def test_the_readme_shows_curl_examples_for_classify_and_solve() -> None:
    commands = " ".join(example.command for example in page_examples(README))
    assert "/boaf.v1.Boaf/Classify" in commands
    assert "/boaf.v1.Boaf/Solve" in commands


def test_curl_examples_parse() -> None:
    text = "intro\n$ curl -s http://127.0.0.1:8080/boaf.v1.Boaf/Solve -d '{}'\n{}\n"
    (example,) = curl_examples(text, "docs/x.md")
    assert (example.output, str(example)) == ("{}", "docs/x.md:2 Solve")


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
@pytest.mark.parametrize("example", EXAMPLES, ids=str)
def test_curl_example_prints_what_the_page_shows(request: pytest.FixtureRequest, example: CurlExample) -> None:
    live = os.environ.get("BOAF_LIVE_URL")
    base = live if live else request.getfixturevalue("client").base
    argv = [word.replace(README_BASE, base) for word in shlex.split(example.command)]
    printed = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=60).stdout
    assert comparable(printed) == comparable(example.output)
