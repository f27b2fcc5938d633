"""The feature table of the docs (docs/features.md) says what ``boaf.features.schema.FEATURES`` declares, row by row.

The table is looked for in README.md and every docs/*.md page; each page that holds
it is checked.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from boaf.features.schema import FEATURES, SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TABLE_HEADER = "| # | name | meaning | source |"


def pages_with_the_table() -> list[str]:
    return [page.relative_to(ROOT).as_posix() for page in PAGES if TABLE_HEADER in page.read_text(encoding="utf-8")]


def table_rows(page: str) -> list[tuple[int, str, str, str]]:
    """(column number from 1, name, meaning, source) for every feature the page's table lists."""
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    start = lines.index(TABLE_HEADER) + 2  # past the header and the |---| line
    rows: list[tuple[int, str, str, str]] = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        numbers, names, meaning, source = (cell.strip() for cell in line.strip("|").split(" | "))
        first, _, last = numbers.partition("–")
        listed = re.findall(r"`([^`]+)`", names)
        assert int(last or first) - int(first) + 1 == len(listed), f"{page}: {numbers!r} numbers {len(listed)} names"
        rows += [(int(first) + i, name, meaning, source) for i, name in enumerate(listed)]
    return rows


def test_the_feature_table_is_in_docs_features() -> None:
    assert "docs/features.md" in pages_with_the_table()


@pytest.mark.parametrize("page", pages_with_the_table())
def test_the_table_lists_every_feature_in_schema_order(page: str) -> None:
    declared = [(i + 1, f.name, f.meaning, f.source) for i, f in enumerate(FEATURES)]
    assert table_rows(page) == declared


@pytest.mark.parametrize("page", ["docs/features.md", "features/README.md"])
def test_the_page_names_the_schema_version_and_size(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    assert f"Schema `{SCHEMA_VERSION}`: {len(FEATURES)} features" in text
