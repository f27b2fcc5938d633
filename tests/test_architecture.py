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
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kernel_layers import SEARCH_KERNEL
from test_public_faces import private_crossings, private_names_in_all

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


def _body_lines(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
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


# ---------------------------------------------------------------- the service's rooms, sizes and signatures
#
# Each rule below is a scan over files that returns what breaks it, run on the repository; a second test copies
# the files it reads into a temporary folder, breaks the rule there on purpose and shows the scan reports it.

SERVICE = FOLDERS["service"]
CORE = SERVICE / "core"
# What the protocol-free core never imports: the edges, the RPC layer over them, the CLI, the object that
# composes them, and the transports' own libraries (gRPC; Starlette and uvicorn for HTTP/JSON).
EDGES = tuple(f"boaf.service.{room}" for room in ("grpc", "http", "rpc", "cli", "app"))
TRANSPORTS = ("grpc", "starlette", "uvicorn", "h11", "h2")
MAX_SERVICE_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
MAX_POSITIONAL = 4  # besides self and cls
# Compiled kernels call one another positionally inside numba's hot loops; their width is held by the kernel rule
# above (at most 8 parameters; what travels together travels as a named tuple).
COMPILED = ("njit", "jit", "intrinsic", "overload", "vectorize", "guvectorize", "cfunc")


def named_imports(module: str, path: Path) -> Iterator[tuple[int, str]]:
    """Every module name ``path`` imports (ours or not, relative ones resolved against ``module``), with its line."""
    is_package = path.name == "__init__.py"
    for node, _ in _walk(ast.parse(path.read_text(), filename=str(path)), local=False):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            anchor = module.split(".") if is_package else module.split(".")[:-1]
            anchor = anchor[: len(anchor) - (node.level - 1)]
            base = ".".join([*anchor, base] if base else anchor)
        yield from ((node.lineno, f"{base}.{alias.name}") for alias in node.names)


def _is_under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def edges_imported_by_core(core: Path) -> list[str]:
    """Imports of an edge, the CLI, the app or a transport library by any module under ``core``."""
    return [
        f"{module}:{line} imports {name}"
        for path in sorted(core.rglob("*.py"))
        for module in [module_name("service", CORE / path.relative_to(core))]
        for line, name in named_imports(module, path)
        if _is_under(name, EDGES + TRANSPORTS)
    ]


def test_no_core_module_imports_an_edge() -> None:
    assert CORE.is_dir()
    wrong = edges_imported_by_core(CORE)
    assert not wrong, "\n".join(wrong)


def test_the_core_rule_reports_an_edge_import(tmp_path: Path) -> None:
    core = _copy(CORE, tmp_path / "core")
    assert edges_imported_by_core(core) == edges_imported_by_core(CORE)
    settings = core / "settings.py"
    settings.write_text(settings.read_text() + "\nimport grpc\nfrom ..http import app\nfrom . import dataplane\n")
    found = edges_imported_by_core(core)
    assert any(hit.endswith("imports grpc") for hit in found)
    assert any(hit.endswith("imports boaf.service.http.app") for hit in found)
    assert not any("dataplane" in hit for hit in found)


def jobs_imported_outside_the_cli(modules: dict[str, Path]) -> list[str]:
    """Imports of ``boaf.jobs`` by a module of ``service`` outside ``boaf.service.cli``."""
    return [
        f"{imp.source}:{imp.line} imports {imp.target}"
        for module, path in modules.items()
        if package_of(module) == "service" and not _is_under(module, ("boaf.service.cli",))
        for imp in imports_of(module, path)
        if package_of(imp.target) == "jobs"
    ]


def test_only_the_cli_of_the_service_imports_jobs() -> None:
    wrong = jobs_imported_outside_the_cli(MODULES)
    assert not wrong, "\n".join(wrong)


def test_the_jobs_rule_reports_a_service_module_importing_jobs(tmp_path: Path) -> None:
    copy = tmp_path / "settings.py"
    copy.write_text((CORE / "settings.py").read_text() + "\nfrom boaf.jobs import runner\n")
    assert jobs_imported_outside_the_cli({"boaf.service.core.settings": copy}) == [
        f"boaf.service.core.settings:{len(copy.read_text().splitlines())} imports boaf.jobs.runner"
    ]
    cli = tmp_path / "cli.py"
    cli.write_text("from boaf.jobs import runner\n")
    assert jobs_imported_outside_the_cli({"boaf.service.cli.batch_commands": cli}) == []


def long_modules(folder: Path, limit: int = MAX_SERVICE_MODULE_LINES) -> list[str]:
    """Modules under ``folder`` of more than ``limit`` lines."""
    return [
        f"{path.relative_to(folder)}: {n} lines"
        for path in sorted(folder.rglob("*.py"))
        for n in [len(path.read_text().splitlines())]
        if n > limit
    ]


def test_no_module_of_the_service_is_over_600_lines() -> None:
    long = long_modules(SERVICE)
    assert not long, "\n".join(long)


def test_the_module_length_rule_reports_a_long_module(tmp_path: Path) -> None:
    service = _copy(SERVICE, tmp_path / "service")
    errors = service / "core" / "errors.py"
    errors.write_text(errors.read_text() + "\n" * (MAX_SERVICE_MODULE_LINES + 1))
    assert f"{Path('core', 'errors.py')}: " in "\n".join(long_modules(service))


SCOPES = ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef


def _functions(tree: ast.AST) -> Iterator[tuple[tuple[str, ...], ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function of ``tree`` with the names it is nested in (classes and functions), outermost first."""
    todo: list[tuple[tuple[str, ...], ast.AST]] = [((), tree)]
    while todo:
        scope, node = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                yield scope, child
            inner = (
                (*scope, child.name)
                if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                else scope
            )
            todo.append((inner, child))


def long_functions(modules: dict[str, Path], limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """Functions of ``modules`` over ``limit`` lines from ``def`` to end, less the docstring."""
    return [
        f"{module}.{'.'.join((*scope, function.name))}: {_body_lines(function)} lines"
        for module, path in modules.items()
        for scope, function in _functions(ast.parse(path.read_text()))
        if _body_lines(function) > limit
    ]


def test_no_function_of_the_product_code_is_over_80_lines() -> None:
    """The packages (the client's included; its generated stubs, tests and benchmarks are not among them)."""
    long = long_functions(MODULES)
    assert not long, "\n".join(long)


def test_the_function_length_rule_reports_a_long_function(tmp_path: Path) -> None:
    copy = tmp_path / "errors.py"
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    copy.write_text((CORE / "errors.py").read_text() + f'\n\ndef long():\n    """Doc."""\n{body}')
    assert long_functions({"boaf.service.core.errors": copy}) == [
        f"boaf.service.core.errors.long: {MAX_FUNCTION_LINES + 1} lines"
    ]


def _is_public(scope: tuple[str, ...], name: str) -> bool:
    return all(not part.startswith("_") or (part.startswith("__") and part.endswith("__")) for part in (*scope, name))


def wide_positional_signatures(modules: dict[str, Path], limit: int = MAX_POSITIONAL) -> list[str]:
    """Public functions and methods of ``modules`` taking more than ``limit`` positional parameters (less self, cls).

    A function nested in a function is not public; a compiled kernel (``COMPILED``) is held by the kernel rule
    instead.
    """
    wide = []
    for module, path in modules.items():
        tree = ast.parse(path.read_text())
        classes = {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
        for scope, function in _functions(tree):
            if not _is_public(scope, function.name) or any(part not in classes for part in scope):
                continue
            if any(any(name in ast.unparse(d) for name in COMPILED) for d in function.decorator_list):
                continue
            positional = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
            if scope and positional[:1] in (["self"], ["cls"]):
                positional = positional[1:]
            if len(positional) > limit:
                wide.append(f"{module}.{'.'.join((*scope, function.name))}: {len(positional)} positional parameters")
    return wide


def test_public_signatures_of_more_than_four_parameters_are_keyword_only() -> None:
    wide = wide_positional_signatures(MODULES)
    assert not wide, "\n".join(wide)


def test_the_signature_rule_reports_a_wide_positional_signature(tmp_path: Path) -> None:
    copy = tmp_path / "errors.py"
    copy.write_text(
        (CORE / "errors.py").read_text()
        + "\n\ndef wide(a, b, c, d, e):\n    pass\n\n\ndef narrow(a, b, c, d, *, e):\n    pass\n\n\n"
        + "def _private(a, b, c, d, e):\n    pass\n\n\n"
        + "class Wide:\n    def method(self, a, b, c, d, e):\n        pass\n"
    )
    found = wide_positional_signatures({"boaf.service.core.errors": copy})
    assert set(found) - set(wide_positional_signatures({"boaf.service.core.errors": CORE / "errors.py"})) == {
        "boaf.service.core.errors.wide: 5 positional parameters",
        "boaf.service.core.errors.Wide.method: 5 positional parameters",
    }


def test_no_private_name_crosses_a_package_boundary_and_no_all_lists_one() -> None:
    """The scans, and their tests that break the rule in a temporary copy, are ``tests/test_public_faces.py``'s."""
    wrong = private_crossings(ROOT) + private_names_in_all(ROOT)
    assert not wrong, "\n".join(wrong)


def _copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


# ---------------------------------------------------------------- tests/game stands on game alone

NO_SERVICE_PLUGIN = '''
"""A pytest plugin that makes boaf.service unimportable, as if the service were not installed."""
import sys


class NoService:
    def find_spec(self, name, path=None, target=None):
        if name == "boaf.service" or name.startswith("boaf.service."):
            raise ModuleNotFoundError(f"No module named {name!r} (hidden by the test)", name=name)
        return None


sys.meta_path.insert(0, NoService())
'''


@pytest.mark.slow
def test_the_game_tests_pass_without_the_service(tmp_path: Path) -> None:
    """``python -m pytest tests/game`` with ``boaf.service`` unimportable: the conftest and the tests never need it."""
    (tmp_path / "no_service.py").write_text(NO_SERVICE_PLUGIN)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no_service", "-p", "no:cacheprovider", "tests/game"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout
