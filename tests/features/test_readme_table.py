"""The README's feature table says what ``features.schema.FEATURES`` declares, row by row."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from features.schema import FEATURES, SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[2]
TABLE_HEADER = "| # | name | meaning | source |"


def readme_rows() -> list[tuple[int, str, str, str]]:
    """(column number from 1, name, meaning, source) for every feature the README's table lists."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    start = lines.index(TABLE_HEADER) + 2  # past the header and the |---| line
    rows: list[tuple[int, str, str, str]] = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        numbers, names, meaning, source = (cell.strip() for cell in line.strip("|").split(" | "))
        first, _, last = numbers.partition("–")
        listed = re.findall(r"`([^`]+)`", names)
        assert int(last or first) - int(first) + 1 == len(listed), f"row {numbers!r} numbers {len(listed)} names"
        rows += [(int(first) + i, name, meaning, source) for i, name in enumerate(listed)]
    return rows


def test_readme_table_lists_every_feature_in_schema_order() -> None:
    declared = [(i + 1, f.name, f.meaning, f.source) for i, f in enumerate(FEATURES)]
    assert readme_rows() == declared


@pytest.mark.parametrize("readme", ["README.md", "features/README.md"])
def test_readme_names_the_schema_version_and_size(readme: str) -> None:
    text = (ROOT / readme).read_text(encoding="utf-8")
    assert f"Schema `{SCHEMA_VERSION}`: {len(FEATURES)} features" in text
