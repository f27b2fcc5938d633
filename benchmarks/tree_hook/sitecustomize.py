"""Imports an earlier tree's ``boaf`` in every process of a baseline server (``benchmarks.trees.cli_command``).

``PYTHONPATH`` names this folder only for a server started by ``cli_command``, with
``BOAF_BENCH_TREE`` set to the tree: Python imports this module at start-up, in the
server and in each compile child it spawns (they inherit the environment), and it puts
``benchmarks.grid_worker.TreeImporter`` for that tree ahead of the editable install,
which maps ``boaf.*`` to this repository's folders.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

_tree = os.environ.get("BOAF_BENCH_TREE")
if _tree:
    sys.path.append(str(Path(__file__).resolve().parents[2]))  # the repository, for benchmarks.grid_worker
    from benchmarks.grid_worker import TreeImporter

    sys.meta_path.insert(0, TreeImporter(Path(_tree)))
