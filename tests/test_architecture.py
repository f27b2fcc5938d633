"""The import graph: arrows point one way, no module cycle, local imports only for start-up time.

The README's rule is ``service, jobs → models, search, features, puzzles → game``, and the
light client stands beside them: ``client → game`` (it ships with game in boaf-client, and
nothing of the server imports it). ``ALLOWED`` spells it out per package; every import counts, including the ones
inside functions, which is where cycles used to hide.

Policy for function-local imports: they exist only to keep start-up fast (a heavy
library such as lightgbm, matplotlib or dask that most commands never need), and
each carries a comment on its line or the line above that says ``start-up``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kernel_layers import SEARCH_KERNEL

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("game", "features", "search", "models", "puzzles", "jobs", "service", "client")
# Where each package's folder is: the top-level folders, and the client's inside its distribution.
CLIENT_FOLDER = ROOT / "clients" / "python" / "boaf" / "client"
FOLDERS = {**{package: ROOT / package for package in PACKAGES}, "client": CLIENT_FOLDER}
ALLOWED: dict[str, frozenset[str]] = {
    "game": frozenset(),
    "client": frozenset({"game"}),
    "features": frozenset({"game"}),
    "search": frozenset({"game"}),
    "puzzles": frozenset({"game", "features", "search"}),
    "models": frozenset({"game", "features", "search"}),
    "jobs": frozenset({"game", "features", "search", "models", "puzzles"}),
    "service": frozenset({"game", "features", "search", "models", "puzzles", "jobs"}),
}


@dataclass(frozen=True)
class Import:
    source: str  # importing module, dotted
    target: str  # imported module, dotted (resolved to a module file of ours)
    line: int
    local: bool  # inside a function


def module_name(package: str, path: Path) -> str:
    parts = ("boaf", package, *path.relative_to(FOLDERS[package]).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_files() -> dict[str, Path]:
    return {module_name(package, path): path for package in PACKAGES for path in FOLDERS[package].rglob("*.py")}


MODULES = module_files()


def resolve(name: str) -> str | None:
    """The module of ours that ``name`` names (``pkg.mod.attr`` resolves to ``pkg.mod``), or None."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def imports_of(module: str, path: Path) -> Iterator[Import]:
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    for node, local in _walk(tree, local=False):
        for target in _targets(node, module, is_package):
            resolved = resolve(target)
            if resolved is not None and resolved != module:
                yield Import(module, resolved, node.lineno, local)


def _walk(node: ast.AST, local: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child, local
        inner = local or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        yield from _walk(child, inner)


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        anchor = module.split(".") if is_package else module.split(".")[:-1]
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join([*anchor, base] if base else anchor)
    # ``from pkg import name``: the module ``pkg.name`` when it is one, else ``pkg`` itself.
    return [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]


ALL_IMPORTS = [imp for module, path in MODULES.items() for imp in imports_of(module, path)]


def package_of(module: str) -> str:
    return module.split(".")[1]


def test_the_walk_sees_local_imports() -> None:
    tree = ast.parse("from boaf import game\ndef f():\n    from boaf.search import solver\n")
    found = [(type(node).__name__, local) for node, local in _walk(tree, local=False)]
    assert found == [("ImportFrom", False), ("ImportFrom", True)]


def test_arrows_point_one_way() -> None:
    wrong = [
        f"{imp.source}:{imp.line} imports {imp.target}"
        for imp in ALL_IMPORTS
        if package_of(imp.target) != package_of(imp.source)
        and package_of(imp.target) not in ALLOWED[package_of(imp.source)]
    ]
    assert not wrong, "\n".join(wrong)


# Inside ``search/``: the compiled kernel's modules in layers, lowest first; each imports only lower ones. The
# package's ``__init__`` re-exports them, and search's other modules (solver, threads, ...) sit above the kernel.
SEARCH_KERNEL_LAYERS = {f"boaf.search.kernel.{name}": i for i, name in enumerate((*SEARCH_KERNEL, "batch"))}
SEARCH_KERNEL_LAYERS["boaf.search.kernel"] = len(SEARCH_KERNEL_LAYERS)


def test_every_search_kernel_module_has_a_layer() -> None:
    assert {module for module in MODULES if module.startswith("boaf.search.kernel")} == set(SEARCH_KERNEL_LAYERS)


def test_search_reads_as_layers() -> None:
    """A kernel module imports only kernel modules below it; search's other modules may import any of them."""
    wrong = [
        f"{imp.source}:{imp.line} imports {imp.target}"
        for imp in ALL_IMPORTS
        if imp.source in SEARCH_KERNEL_LAYERS
        and package_of(imp.target) == "search"
        and SEARCH_KERNEL_LAYERS.get(imp.target, len(SEARCH_KERNEL_LAYERS)) >= SEARCH_KERNEL_LAYERS[imp.source]
    ]
    assert not wrong, "\n".join(wrong)


def test_no_module_of_search_features_or_puzzles_is_over_600_lines() -> None:
    long = [
        f"{module}: {n} lines"
        for module, path in MODULES.items()
        if package_of(module) in ("search", "features", "puzzles")
        for n in [len(path.read_text().splitlines())]
        if n > 600
    ]
    assert not long, "\n".join(long)


# Every compiled function (``@njit`` / ``@numba.njit``) in these modules: what travels together travels as a
# named tuple (``boaf.search.kernel.bundles``), so none takes more than 8 parameters; and none is over 80 lines
# outside its docstring.
KERNEL_PACKAGES = ("game", "search", "features", "puzzles")
KERNEL_MODULES: tuple[str, ...] = ()


def _compiled_functions() -> Iterator[tuple[str, ast.FunctionDef]]:
    for module, path in MODULES.items():
        if package_of(module) not in KERNEL_PACKAGES and module not in KERNEL_MODULES:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any("njit" in ast.unparse(d) for d in node.decorator_list):
                yield module, node


def _body_lines(function: ast.FunctionDef) -> int:
    """Lines of ``function`` from its ``def`` to its end, less its docstring."""
    lines = (function.end_lineno or function.lineno) - function.lineno + 1
    first = function.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        lines -= (first.end_lineno or first.lineno) - first.lineno + 1
    return lines


def test_no_kernel_function_takes_more_than_8_parameters_or_runs_over_80_lines() -> None:
    functions = list(_compiled_functions())
    assert len(functions) > 100  # the walk saw the kernels
    wide = [f"{module}.{f.name}: {len(f.args.args)} parameters" for module, f in functions if len(f.args.args) > 8]
    long = [f"{module}.{f.name}: {_body_lines(f)} lines" for module, f in functions if _body_lines(f) > 80]
    assert not wide + long, "\n".join(wide + long)


def test_the_allowed_table_has_no_cycle() -> None:
    order = sorted(ALLOWED, key=lambda package: len(_reachable(package)))
    for package in order:
        assert package not in _reachable(package), f"{package} reaches itself"


def _reachable(package: str) -> set[str]:
    seen: set[str] = set()
    todo = list(ALLOWED[package])
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            todo.extend(ALLOWED[current])
    return seen


def test_no_module_import_cycle() -> None:
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for imp in ALL_IMPORTS:
        graph[imp.source].add(imp.target)
    cycle = _find_cycle(graph)
    assert cycle is None, " -> ".join(cycle or [])


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle as a list of modules (first == last), or None; iterative depth-first search."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    for start in sorted(graph):
        if state.get(start):
            continue
        stack: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        state[start] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
            elif state.get(child) == 1:
                path = [name for name, _ in stack]
                return [*path[path.index(child) :], child]
            elif not state.get(child):
                state[child] = 1
                stack.append((child, iter(sorted(graph[child]))))
    return None


def test_find_cycle_finds_one() -> None:
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b"}, "b": set()}) is None


def local_imports() -> list[tuple[str, int, int]]:
    """Every function-local import in our packages: (module, line of the import, line of its function)."""
    found = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text())
        for function in ast.walk(tree):
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                for node in ast.walk(function):
                    if isinstance(node, ast.Import | ast.ImportFrom):
                        found.append((module, node.lineno, function.lineno))
    return sorted(set(found))


def test_local_imports_say_they_are_for_start_up() -> None:
    """A comment between the function's ``def`` and the import (or on its line) says ``start-up``."""
    unexplained = []
    for module, line, def_line in local_imports():
        lines = MODULES[module].read_text().splitlines()[def_line - 1 : line]
        comments = [text.partition("#")[2].lower() for text in lines if "#" in text]
        if not any("start-up" in comment for comment in comments):
            unexplained.append(f"{module}:{line} {lines[-1].strip()}")
    assert not unexplained, "\n".join(unexplained)


# The serving image carries only the lean install (pyproject.toml's dependencies); these come with extras.
EXTRA_ONLY = ("sklearn", "lightgbm", "onnx", "onnxmltools", "skl2onnx", "pyarrow", "pandas", "dask", "distributed")
SERVING_PATH = """
import sys
from boaf.service.http import HttpServer
from boaf.service.app import BoafService, check_model
from boaf.service.core.settings import Settings
from boaf.service.cli import main
check_model(Settings())
print(" ".join(sorted({name.split(".")[0] for name in sys.modules})))
"""


def test_serving_imports_nothing_that_only_an_extra_brings() -> None:
    """The service's whole start (kernels, model, warm-up) and the CLI import no batch or training library.

    (matplotlib is left out: igraph imports it when it is installed, and the lean install does not have it.)
    """
    done = subprocess.run([sys.executable, "-c", SERVING_PATH], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    imported = set(done.stdout.split())
    assert "onnxruntime" in imported and "numba" in imported
    assert imported.isdisjoint(EXTRA_ONLY), sorted(imported & set(EXTRA_ONLY))
