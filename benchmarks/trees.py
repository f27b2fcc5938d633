"""An earlier commit's tree, for benchmarks that run it beside this one (``percall.py``, ``versus.py``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def unpacked(ref: str) -> Path:
    """``ref``'s tree, unpacked once by ``git archive`` into ``out/bench/baseline-<ref>/`` (kept: its numba cache)."""
    target = ROOT / "out" / "bench" / f"baseline-{ref}"
    if not (target / "pyproject.toml").is_file():
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target
