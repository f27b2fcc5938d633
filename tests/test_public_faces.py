"""A package's public face: no ``__all__`` lists a private name, and no private name crosses a package boundary.

A name is private when it starts with one underscore (``_plain_key``; dunders such
as ``__version__`` are not). It is private to the package that defines it: the
folder of its module (``boaf.search.kernel`` for ``boaf.search.kernel.keys._plain_key``),
and that folder's subpackages. A module outside that package may not import it,
neither by name (``from boaf.search.kernel.keys import _plain_key``) nor through a
module it imported (``keys._plain_key``, ``kernel.keys._plain_key``). What another
package needs gets a public name in the package that owns it, or moves there.

The scan reads the product code (every package that ships, and the client
distribution's), never tests or benchmarks, which may test a private rule on
its own. Each rule has a test that breaks it on purpose in a copy of the tree.
"""

from __future__ import annotations

import ast
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCT_FOLDERS = {
    "game": Path("game"),
    "features": Path("features"),
    "search": Path("search"),
    "models": Path("models"),
    "puzzles": Path("puzzles"),
    "jobs": Path("jobs"),
    "service": Path("service"),
    "client": Path("clients/python/boaf/client"),
    "v1": Path("clients/python/boaf/v1"),
}
"""Each ``boaf.<package>`` of the product and its folder, from the repository's root."""


@dataclass(frozen=True)
class Module:
    name: str  # dotted: boaf.search.kernel.keys
    path: Path
    package: str  # the package it belongs to: itself for an ``__init__``, else its parent

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"


def product_modules(root: Path) -> dict[str, Module]:
    """Every module of the product under ``root`` (a checkout), by dotted name."""
    modules = {}
    for package, folder in PRODUCT_FOLDERS.items():
        for path in sorted((root / folder).rglob("*.py")):
            parts = ("boaf", package, *path.relative_to(root / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                name = ".".join(parts[:-1])
                modules[name] = Module(name, path, name)
            else:
                name = ".".join(parts)
                modules[name] = Module(name, path, ".".join(parts[:-1]))
    return modules


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def inside(package: str, owner: str) -> bool:
    """True when ``package`` is ``owner`` or one of its subpackages."""
    return package == owner or package.startswith(owner + ".")


def private_names_in_all(root: Path) -> list[str]:
    """``module: name`` for every private name an ``__all__`` of the product lists."""
    found = []
    for module in product_modules(root).values():
        for node in ast.walk(ast.parse(module.path.read_text(), filename=str(module.path))):
            if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign) and _assigns_all(node):
                value = node.value
                if isinstance(value, ast.List | ast.Tuple):
                    names = [item.value for item in value.elts if isinstance(item, ast.Constant)]
                    found += [f"{module.name}: {name}" for name in names if isinstance(name, str) and is_private(name)]
    return found


def _assigns_all(node: ast.Assign | ast.AugAssign | ast.AnnAssign) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return any(isinstance(target, ast.Name) and target.id == "__all__" for target in targets)


def private_crossings(root: Path) -> list[str]:
    """``module:line uses owner.name`` for every private name of ours used outside the package that defines it."""
    modules = product_modules(root)
    found = []
    for module in modules.values():
        tree = ast.parse(module.path.read_text(), filename=str(module.path))
        for line, owner, name in _private_uses(tree, module, modules):
            if not inside(module.package, modules[owner].package):
                found.append(f"{module.name}:{line} uses {owner}.{name}")
    return found


def _private_uses(tree: ast.Module, module: Module, modules: dict[str, Module]) -> Iterator[tuple[int, str, str]]:
    """``(line, owning module, name)`` for each private name taken from a module of ours."""
    bound: dict[str, str] = {}  # a local name -> the module of ours it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in modules:
                    bound[alias.asname] = alias.name
                elif alias.name.split(".")[0] == "boaf":
                    bound["boaf"] = "boaf"
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, module)
            for alias in node.names:
                if f"{base}.{alias.name}" in modules:
                    bound[alias.asname or alias.name] = f"{base}.{alias.name}"
                elif base in modules and is_private(alias.name):
                    yield node.lineno, base, alias.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and is_private(node.attr):
            owner = _module_of(node.value, bound, modules)
            if owner is not None:
                yield node.lineno, owner, node.attr


def _absolute(node: ast.ImportFrom, module: Module) -> str:
    """The module ``from ... import`` reads, with a relative import made absolute."""
    if not node.level:
        return node.module or ""
    anchor = module.package.split(".")[: len(module.package.split(".")) - (node.level - 1)]
    return ".".join([*anchor, node.module] if node.module else anchor)


def _module_of(node: ast.expr, bound: dict[str, str], modules: dict[str, Module]) -> str | None:
    """The module of ours an expression such as ``kernel.keys`` names, or None."""
    if isinstance(node, ast.Name):
        return bound.get(node.id)
    if isinstance(node, ast.Attribute):
        parent = _module_of(node.value, bound, modules)
        if parent is not None and f"{parent}.{node.attr}" in modules:
            return f"{parent}.{node.attr}"
    return None


def test_no_all_lists_a_private_name() -> None:
    found = private_names_in_all(ROOT)
    assert not found, "\n".join(found)


def test_no_private_name_crosses_a_package_boundary() -> None:
    assert len(product_modules(ROOT)) > 100  # the scan saw the product
    found = private_crossings(ROOT)
    assert not found, "\n".join(found)


def _copy_of_the_product(tmp_path: Path) -> Path:
    for folder in PRODUCT_FOLDERS.values():
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__", "artifacts"))
    return tmp_path


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


def test_the_scan_catches_a_private_name_in_all(tmp_path: Path) -> None:
    copy = _copy_of_the_product(tmp_path)
    assert private_names_in_all(copy) == []
    _append(copy / "search" / "kernel" / "__init__.py", '\n__all__ += ["_plain_key"]\n')
    _append(copy / "features" / "__init__.py", '\n__all__ = ["_hidden"]\n')
    assert private_names_in_all(copy) == ["boaf.features: _hidden", "boaf.search.kernel: _plain_key"]


def test_the_scan_catches_a_private_name_across_packages(tmp_path: Path) -> None:
    copy = _copy_of_the_product(tmp_path)
    assert private_crossings(copy) == []
    # Inside the package that defines it, a private name is at home: the kernel's own modules share them.
    _append(copy / "search" / "kernel" / "progress.py", "\nfrom boaf.search.kernel.keys import _copy_words\n")
    assert private_crossings(copy) == []
    # Outside it, each spelling is caught: by name, by a relative import, and through a module it holds.
    _append(copy / "models" / "inputs.py", "\nfrom boaf.search.kernel.keys import _plain_key\n")
    _append(copy / "search" / "solver.py", "\nfrom .kernel.memo import _memo_add\n")
    _append(copy / "service" / "core" / "warmup.py", "\nkernel.keys._plain_key\n")
    _append(copy / "jobs" / "runner.py", "\nimport boaf.search.kernel.order as order\norder._sort_by_target\n")
    found = sorted(entry.split(":")[0] + " uses " + entry.split(" uses ")[1] for entry in private_crossings(copy))
    assert found == [
        "boaf.jobs.runner uses boaf.search.kernel.order._sort_by_target",
        "boaf.models.inputs uses boaf.search.kernel.keys._plain_key",
        "boaf.search.solver uses boaf.search.kernel.memo._memo_add",
        "boaf.service.core.warmup uses boaf.search.kernel.keys._plain_key",
    ]
