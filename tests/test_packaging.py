"""One import name: the two wheels install boaf/ and nothing else, and nothing imports a bare name.

The repository keeps its folders (game/, search/, …) at the top; pyproject.toml maps them into
the ``boaf`` namespace and clients/python builds boaf-client (``boaf.client``, ``boaf.game``,
``boaf.v1``). These tests build both wheels as a user would get them and read their listings,
and import every module of boaf from the repository root, where a bare ``import game`` would
otherwise find the folder and load a second copy.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import BARE_NAMES

ROOT = Path(__file__).resolve().parents[1]
CLIENT = ROOT / "clients" / "python"
CLIENT_PACKAGES = {"client", "game", "v1"}
SERVER_PACKAGES = {"features", "search", "models", "puzzles", "jobs", "service"}


def build_wheel(project: Path, out: Path) -> Path:
    """The wheel of ``project``, built from its sdist (as scripts/build-dists and an installer do) into ``out``."""
    command = [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(project)]
    subprocess.run(command, check=True, capture_output=True, timeout=300)
    (wheel,) = out.glob("*.whl")
    return wheel


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """Each distribution's wheel listing, by distribution name."""
    built = {"boaf": build_wheel(ROOT, tmp_path_factory.mktemp("server"))}
    built["boaf_client"] = build_wheel(CLIENT, tmp_path_factory.mktemp("client"))
    return {name: zipfile.ZipFile(wheel).namelist() for name, wheel in built.items()}


def top_level(names: list[str]) -> set[str]:
    return {name.split("/")[0] for name in names}


def boaf_packages(names: list[str]) -> set[str]:
    return {name.split("/")[1] for name in names if name.startswith("boaf/") and name.count("/") >= 2}


def test_each_wheel_holds_boaf_and_its_dist_info_only(wheels: dict[str, list[str]]) -> None:
    for distribution, names in wheels.items():
        assert top_level(names) == {"boaf", f"{distribution}-0.1.0.dist-info"}, sorted(top_level(names))
        assert "boaf/__init__.py" not in names, "boaf is a namespace package: neither wheel owns it"


def test_the_wheels_split_the_packages_and_share_no_file(wheels: dict[str, list[str]]) -> None:
    assert boaf_packages(wheels["boaf"]) == SERVER_PACKAGES
    assert boaf_packages(wheels["boaf_client"]) == CLIENT_PACKAGES
    shared = set(wheels["boaf"]) & set(wheels["boaf_client"])
    assert not shared, sorted(shared)


def test_the_client_wheel_is_typed_and_carries_the_stubs(wheels: dict[str, list[str]]) -> None:
    names = set(wheels["boaf_client"])
    for package in sorted(CLIENT_PACKAGES):
        assert f"boaf/{package}/py.typed" in names
    assert {"boaf/v1/boaf_pb2.py", "boaf/v1/boaf_pb2_grpc.py", "boaf/v1/game_pb2.py", "boaf/v1/boaf_pb2.pyi"} <= names


def test_the_server_wheel_carries_its_model_and_page(wheels: dict[str, list[str]]) -> None:
    names = set(wheels["boaf"])
    assert "boaf/models/artifacts/classifier.onnx" in names
    assert "boaf/service/http/static/index.html" in names


EVERY_MODULE = """
import importlib, pkgutil, sys
names = []
for package in {packages!r}:
    names.append(f"boaf.{{package}}")
    for info in pkgutil.walk_packages(importlib.import_module(f"boaf.{{package}}").__path__, f"boaf.{{package}}."):
        names.append(info.name)
        importlib.import_module(info.name)
bare = sorted(name for name in sys.modules if name.partition(".")[0] in {bare!r})
files = [getattr(module, "__file__", None) for name, module in sys.modules.items() if name.startswith("boaf.")]
twice = sorted({{f for f in files if f and files.count(f) > 1}})
print(len(names), bare, twice)
"""


def test_every_module_imports_from_the_repository_root_under_boaf_only() -> None:
    """From the root, where ``import game`` would find the folder: every module once, none under a bare name."""
    code = EVERY_MODULE.format(packages=sorted(CLIENT_PACKAGES | SERVER_PACKAGES), bare=set(BARE_NAMES))
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    count, bare, twice = done.stdout.split(" ", 2)
    assert int(count) > 100
    assert (bare, twice.strip()) == ("[]", "[]"), done.stdout


def test_the_guard_sees_a_bare_import() -> None:
    """The check above is not vacuous: from the root, ``import game`` does load a second copy."""
    code = "import sys, game, boaf.game; print(sorted(n for n in sys.modules if n.partition('.')[0] == 'game'))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "'game'" in done.stdout
