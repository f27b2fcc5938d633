"""Every console example in the README and docs/ runs as written and prints what the page shows.

A ``console`` block is a list of ``$ command`` lines, each followed by its output
(stdout, then stderr). Only wall-clock figures may differ: every ``N ms`` /
``N s`` is compared as a placeholder. ``$ boaf`` examples run here; ``$ curl``
examples run against a live server in ``tests/http/test_readme_curl.py``.

A ``python`` block is followed by a ``text`` block of what it prints; it runs here,
in a process of its own, against ``boaf serve`` on a free port (its address
replaces ``boaf.client.DEFAULT_ADDRESS``).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_runner import boaf
from servers import serve_process

from boaf.client import DEFAULT_ADDRESS
from boaf.service.cli import COMPILING_NOTICE

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
TIMING = re.compile(r"\d[\d,]*(\.\d+)? (ms|s)\b")


@dataclass(frozen=True)
class Example:
    command: str
    output: str
    line: int
    page: str = "README.md"

    def __str__(self) -> str:
        return f"{self.page}:{self.line} {self.command[:40]}"


def console_examples(text: str, page: str = "README.md") -> list[Example]:
    """The ``$ command`` / output pairs of every ```` ```console ```` block, in order."""
    examples: list[Example] = []
    lines = text.splitlines()
    inside = False
    for number, line in enumerate(lines, start=1):
        if line.startswith("```"):
            inside = line.strip() == "```console"
        elif inside and line.startswith("$ "):
            examples.append(Example(line[2:], "", number, page))
        elif inside and examples:
            last = examples[-1]
            examples[-1] = Example(last.command, last.output + line + "\n", last.line, page)
    return examples


def page_examples(path: Path) -> list[Example]:
    return console_examples(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())


EXAMPLES = [example for page in PAGES for example in page_examples(page)]


def normalized(text: str) -> str:
    # A first run on an empty numba cache says once that it compiles (boaf.service.cli.COMPILING_NOTICE): not output.
    kept = [line for line in text.splitlines() if line != COMPILING_NOTICE]
    return TIMING.sub("<time>", "\n".join(kept)).strip()


def test_the_readme_has_console_examples() -> None:
    commands = [example.command.split()[0] for example in page_examples(README)]
    assert commands.count("boaf") >= 4


def test_the_docs_pages_are_read() -> None:
    assert len(PAGES) > 1
    assert any(example.page.startswith("docs/") for example in EXAMPLES)


@pytest.mark.parametrize("example", EXAMPLES, ids=str)
def test_every_console_example_is_one_a_test_runs(example: Example) -> None:
    """A ``$`` line is either a ``boaf`` command (run below) or a ``curl`` one (run by tests/http)."""
    assert example.command.startswith(("boaf ", "curl ")), f"{example}: no test runs this command"


def test_console_examples_parse() -> None:
    text = "```console\n$ boaf deal 1\nJD 2D\n$ boaf x\n```\n$ not this\n"
    assert console_examples(text) == [Example("boaf deal 1", "JD 2D\n", 2), Example("boaf x", "", 4)]
    assert str(console_examples(text, "docs/x.md")[1]) == "docs/x.md:4 boaf x"


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.command.startswith("boaf ")], ids=str)
def test_boaf_example_prints_what_the_page_shows(example: Example) -> None:
    result = boaf(*shlex.split(example.command)[1:])
    assert normalized(result.stdout + result.stderr) == normalized(example.output)


# ---------------------------------------------------------------- Python examples


@dataclass(frozen=True)
class PythonExample:
    code: str
    output: str | None  # the text block after it; None when there is none
    line: int
    page: str = "README.md"

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def python_examples(text: str, page: str = "README.md") -> list[PythonExample]:
    """Each ```` ```python ```` block with the ```` ```text ```` block that comes next, before any other block."""
    examples: list[PythonExample] = []
    blocks = re.finditer(r"^```(\w*)\n(.*?)^```$", text, re.DOTALL | re.MULTILINE)
    pending: PythonExample | None = None
    for block in blocks:
        kind, body, line = block[1], block[2], text.count("\n", 0, block.start()) + 1
        if pending is not None:
            examples.append(PythonExample(pending.code, body if kind == "text" else None, pending.line, page))
            pending = None
            if kind == "text":
                continue
        if kind == "python":
            pending = PythonExample(body, None, line, page)
    if pending is not None:
        examples.append(pending)
    return examples


PYTHON_EXAMPLES = [
    example for page in PAGES for example in python_examples(page.read_text("utf-8"), page.relative_to(ROOT).as_posix())
]


def test_python_examples_parse() -> None:
    text = "```python\nprint(1)\n```\nprints\n```text\n1\n```\n```python\nx = 2\n```\n```bash\nls\n```\n"
    assert python_examples(text) == [PythonExample("print(1)\n", "1\n", 1), PythonExample("x = 2\n", None, 8)]


def test_the_readme_has_a_python_example_of_the_client() -> None:
    readme = [example for example in PYTHON_EXAMPLES if example.page == "README.md"]
    assert readme and all("from boaf.client import" in example.code for example in readme)


@pytest.fixture(scope="module")
def serving() -> Iterator[str]:
    """``boaf serve`` with its default settings on a free port, until the module's tests end: its gRPC address."""
    process, address = serve_process({})
    yield address
    process.terminate()
    process.wait(30)


@pytest.mark.parametrize("example", PYTHON_EXAMPLES, ids=str)
def test_python_example_prints_what_the_page_shows(example: PythonExample, serving: str) -> None:
    assert example.output is not None, f"{example}: no text block of what it prints follows"
    assert DEFAULT_ADDRESS in example.code, f"{example}: it does not call {DEFAULT_ADDRESS}"
    code = example.code.replace(DEFAULT_ADDRESS, serving)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert normalized(result.stdout) == normalized(example.output)
