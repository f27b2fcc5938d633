"""One tree's solver in a process of its own, for ``benchmarks/grids.py --vs``: states in, runs out, a JSON line each.

    python benchmarks/grid_worker.py TREE     # TREE: this repository, or out/bench/baseline-<ref>/

Two trees' ``boaf`` cannot share one process, and the installed (editable) mapping
always names this repository's folders; so this module imports nothing of boaf
before ``TreeImporter`` stands first on ``sys.meta_path``, and then only TREE's.
Once its kernel is loaded, it prints ``{"ready": <the
search package's file>}``; then for each task line ``{"state": <state JSON>,
"limit_s": s}`` it prints ``{"status", "nodes", "elapsed_ms", "limit_s", "reason"}``
from TREE's ``boaf.search.solve`` (default algorithm, that time limit). A grid's tables
are made by its first search: ``grids.warm_up`` sends untimed states first.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType


class TreeImporter(importlib.abc.MetaPathFinder):
    """Imports ``boaf.<package>`` from a tree's folders, ahead of the installed (editable) mapping.

    The folders are the tree's own ``[tool.setuptools.package-dir]`` and the packages
    under its ``clients/python/boaf/`` (as ``scripts/typecheck`` lays them out), each
    resolved; a module below a package is found in that package's ``__path__``.
    """

    def __init__(self, tree: Path) -> None:
        setup = tomllib.loads((tree / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
        self.folders = {package: (tree / folder).resolve() for package, folder in setup["package-dir"].items()}
        client = tree / "clients" / "python" / "boaf"
        if client.is_dir():
            self.folders.update({f"boaf.{p.name}": p.resolve() for p in client.iterdir() if p.is_dir()})

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        """The spec of ``fullname`` in the tree, or None for a module outside the tree's packages."""
        if fullname in self.folders:
            folder = self.folders[fullname]
            return importlib.util.spec_from_file_location(
                fullname, folder / "__init__.py", submodule_search_locations=[str(folder)]
            )
        parent = sys.modules.get(fullname.rpartition(".")[0])
        if parent is not None and parent.__name__.startswith("boaf.") and hasattr(parent, "__path__"):
            return importlib.machinery.PathFinder.find_spec(fullname, parent.__path__)
        return None


def serve(tree: Path) -> None:
    """Import ``tree``'s boaf, load its kernel, then answer task lines from stdin until it closes."""
    if any(name.startswith("boaf.") for name in sys.modules):
        raise RuntimeError("boaf was imported before the tree's importer: its modules would mix with the tree's")
    sys.meta_path.insert(0, TreeImporter(tree))
    search = importlib.import_module("boaf.search")
    game = importlib.import_module("boaf.game")
    search.solve(game.deal(1))  # load (or compile) the kernel before any timing
    print(json.dumps({"ready": search.__file__}), flush=True)
    for line in sys.stdin:
        task = json.loads(line)
        result = search.solve(game.state_from_json(task["state"]), time_limit=task["limit_s"])
        run = {
            "status": str(result.status),
            "nodes": int(result.nodes),
            "elapsed_ms": float(result.elapsed_ms),
            "limit_s": task["limit_s"],
            "reason": result.reason,
        }
        print(json.dumps(run), flush=True)


if __name__ == "__main__":
    serve(Path(sys.argv[1]).resolve())
