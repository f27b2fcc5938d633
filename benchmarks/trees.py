"""An earlier commit's tree, for benchmarks that run it beside this one (``percall.py``, ``versus.py``)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOOK = Path(__file__).resolve().parent / "tree_hook"  # its sitecustomize imports BOAF_BENCH_TREE's boaf


def unpacked(ref: str) -> Path:
    """``ref``'s tree, unpacked once by ``git archive`` into ``out/bench/baseline-<ref>/`` (kept: its numba cache)."""
    target = ROOT / "out" / "bench" / f"baseline-{ref}"
    if not (target / "pyproject.toml").is_file():
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def cli_command(tree: Path) -> tuple[list[str], dict[str, str]]:
    """The command that runs ``tree``'s own ``boaf`` CLI with this interpreter, and the environment it needs.

    This repository's editable install maps ``boaf.*`` to its own folders, ahead of
    ``sys.path``. A tree since the one package (its ``[tool.setuptools.package-dir]``
    maps ``boaf.service``) is imported by ``tree_hook``'s ``TreeImporter``, in the server
    and in every process it starts; an earlier tree's top-level packages (``service``,
    ``search``, ...) come from ``PYTHONPATH``.
    """
    setup = tomllib.loads((tree / "pyproject.toml").read_text(encoding="utf-8")).get("tool", {}).get("setuptools", {})
    if "boaf.service" in setup.get("package-dir", {}):
        module, env = "boaf.service.cli", {"PYTHONPATH": str(HOOK), "BOAF_BENCH_TREE": str(tree.resolve())}
    else:
        module, env = "service.cli", {"PYTHONPATH": str(tree.resolve())}
    code = f"import sys; from {module} import main; sys.argv[0] = 'boaf'; sys.exit(main())"
    return [sys.executable, "-c", code], env
