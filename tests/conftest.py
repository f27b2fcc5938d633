"""The whole suite's set-up: every numba kernel compiled once, in parallel, before the first test.

A run of ``tests/game`` alone skips it and imports nothing of the service: ``boaf.game`` imports no
other package of boaf, and its tests pass with ``boaf.service`` unimportable (``tests/test_architecture.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
# The tests of boaf.game, the bottom layer: a run of only these compiles nothing and imports no service.
GAME_TESTS = TESTS / "game"


def pytest_sessionstart(session: pytest.Session) -> None:
    """With worker processes (pytest-xdist ``-n``), compile every kernel unit once, here, before they start.

    Each worker would otherwise compile them all itself in ``compiled_kernels``, both at once on
    a cold cache: two whole compiles on two cores, over two minutes of a CI run, against about
    half a minute for one. xdist starts its workers in a ``trylast`` ``pytest_sessionstart``, so
    this runs first, and the workers then find the cache warm. A run of ``tests/game`` alone
    compiles nothing.
    """
    config = session.config
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return  # a worker, or a run without workers: compiled_kernels compiles in the process itself
    if config.args and all(_under(arg, GAME_TESTS) for arg in config.args):
        return
    _compile_kernels()


def _under(arg: str, folder: Path) -> bool:
    # A command-line test argument (a folder, a file, or ``file::test``) is under ``folder``.
    return Path(arg.partition("::")[0]).resolve().is_relative_to(folder)


@pytest.fixture(scope="session", autouse=True)
def compiled_kernels(request: pytest.FixtureRequest) -> None:
    """On a cold numba cache (a fresh clone, as CI has), compile every kernel unit first, two at a time.

    Without it the tests compile the kernels one after another, on one core, as they first call
    them. On a warm cache this only reads the cache index and loads the kernels (about a second).
    Tests of compiling itself use caches of their own (``tests/service/test_kernels.py``).
    """
    if all(item.path.is_relative_to(GAME_TESTS) for item in request.session.items):
        return
    _compile_kernels()


def _compile_kernels() -> None:
    # Imported here, not at the top: a run of tests/game must not need the service (boaf.service.core.warmup).
    from boaf.service.core.warmup import UNITS, Kernels

    Kernels().prepare(UNITS, on_stage=lambda stage: None)


# Every name boaf's packages would have if they were installed bare at the top level, as they once were.
BARE_NAMES = frozenset({"game", "features", "search", "models", "puzzles", "jobs", "service", "client", "v1"})


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run if any module of the suite's process was imported under a bare name (``game``, …).

    Run from the repository root, ``import game`` would find the folder and load a second copy of
    ``boaf.game``: two classes for every error (an ``except`` misses the other copy's) and every
    kernel compiled twice. Everything imports as ``boaf.<package>``; this holds the whole suite to it.
    """
    bare = sorted(name for name in sys.modules if name.partition(".")[0] in BARE_NAMES)
    if bare:
        print(f"\nmodules imported under a bare top-level name (import boaf.<package> instead): {bare[:10]}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
