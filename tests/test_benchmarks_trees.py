"""An earlier tree's server, for the benchmarks that run one beside this tree (``benchmarks/trees.py``).

The editable install maps ``boaf.*`` to this repository's folders ahead of ``sys.path``,
so ``PYTHONPATH=tree`` alone ran this tree's own server as the "baseline" of a tree since
the one package. These run toy trees of both layouts through ``cli_command`` and check
that the CLI, and a child process it starts as ``boaf serve`` starts its compile children,
import the tree's modules.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from benchmarks.trees import cli_command

# The toy CLI names the file it was imported from, then starts a child that imports it again by name.
CLI = """
import subprocess, sys


def main():
    print(__file__)
    child = subprocess.run([sys.executable, "-c", "import {module} as m; print(m.__file__)"], capture_output=True,
                           text=True, check=True)
    print(child.stdout.strip())
    return 0
"""

ONE_PACKAGE = """
[project]
name = "toy"

[tool.setuptools.package-dir]
"boaf.service" = "service"
"""


def toy_tree(root: Path, *, one_package: bool) -> Path:
    (root / "service" / "cli").mkdir(parents=True)
    (root / "service" / "__init__.py").write_text("")
    module = "boaf.service.cli" if one_package else "service.cli"
    (root / "service" / "cli" / "__init__.py").write_text(CLI.format(module=module))
    (root / "pyproject.toml").write_text(ONE_PACKAGE if one_package else '[project]\nname = "toy"\n')
    return root


@pytest.mark.parametrize("one_package", [True, False], ids=["boaf.service", "top-level service"])
def test_the_cli_and_its_children_import_the_trees_own_modules(tmp_path: Path, one_package: bool) -> None:
    tree = toy_tree(tmp_path / "tree", one_package=one_package)
    command, env = cli_command(tree)
    done = subprocess.run(
        [*command, "serve"], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", **env}, cwd=tree, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [str(tree.resolve() / "service" / "cli" / "__init__.py")] * 2
