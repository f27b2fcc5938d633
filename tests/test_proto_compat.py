"""The API's compatibility gate: ``buf breaking`` (WIRE_JSON) of ``proto/`` against the last release.

buf comes from npm (``@bufbuild/buf`` in ``tests/connect-node``). Without it the tests are skipped,
except in CI (``CI`` set), where they fail. Each breaking edit is made to a copy of ``proto/``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROTO = ROOT / "proto"
BASELINE = PROTO / "baseline" / "v0.1.0.binpb"
BUF = ROOT / "tests" / "connect-node" / "node_modules" / ".bin" / "buf"


def breaking(module: Path) -> subprocess.CompletedProcess[str]:
    """``buf breaking`` of the protos in ``module`` against the baseline image."""
    if not BUF.exists():
        missing = f"{BUF} is missing: run `npm ci` in tests/connect-node (.ci/run does)"
        if os.environ.get("CI"):
            pytest.fail(missing)
        pytest.skip(missing)
    command = [str(BUF), "breaking", str(module), "--against", str(BASELINE)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def edited_copy(tmp_path: Path, old: str, new: str) -> Path:
    """A copy of ``proto/`` (its buf.yaml included) whose boaf.proto has ``old`` replaced by ``new`` once."""
    copy = tmp_path / "proto"
    shutil.copytree(PROTO, copy, ignore=shutil.ignore_patterns("baseline"))
    boaf = copy / "boaf" / "v1" / "boaf.proto"
    text = boaf.read_text()
    assert text.count(old) == 1, old
    boaf.write_text(text.replace(old, new))
    return copy


def test_the_protos_are_wire_and_json_compatible_with_the_last_release() -> None:
    result = breaking(PROTO)
    assert result.returncode == 0, result.stdout + result.stderr


# (name, old, new, what buf says)
BREAKS = [
    ("a field's number", "  uint32 cols = 2;", "  uint32 cols = 9;", 'field "2" with name "cols" on message "State"'),
    ("a field's name (its JSON name)", "  uint32 cols = 2;", "  uint32 columns = 2;", 'Field "2" on message "State"'),
    ("a field's type", "  uint32 cols = 2;", "  string cols = 2;", 'Field "2" with name "cols" on message "State"'),
]


@pytest.mark.parametrize(("old", "new", "said"), [b[1:] for b in BREAKS], ids=[b[0] for b in BREAKS])
def test_a_breaking_change_fails_the_gate(tmp_path: Path, old: str, new: str, said: str) -> None:
    result = breaking(edited_copy(tmp_path, old, new))
    assert result.returncode != 0, result.stdout
    assert said in result.stdout, result.stdout


def test_an_added_field_passes_the_gate(tmp_path: Path) -> None:
    result = breaking(edited_copy(tmp_path, "  uint32 cols = 2;", "  uint32 cols = 2;\n  uint32 layers = 99;"))
    assert result.returncode == 0, result.stdout + result.stderr
