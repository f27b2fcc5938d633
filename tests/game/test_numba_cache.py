"""numba's cache goes stale across files: an edit of a callee recompiles its callers (``boaf.game.numba_cache``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import boaf.game.bits
from boaf.game import numba_cache
from boaf.search.kernel.dfs import dfs

ROOT = Path(__file__).resolve().parents[2]

CALLEE = """
from numba import njit


@njit(cache=True)
def answer():
    return {value}
"""

CALLER = """
from numba import njit

from {package}.callee import answer


@njit(cache=True)
def ask():
    return answer()
"""

# The toy package registers its own folder, as ``boaf.game.numba_cache.install`` registers boaf's kernel sources.
REGISTERED = """
from pathlib import Path

from boaf.game import numba_cache

numba_cache.install()
numba_cache.register([Path(__file__).parent])
"""

RUN = """
from {package}.caller import ask
print(ask(), sum(ask.stats.cache_hits.values()), type(ask._cache._impl.locator).__name__)
"""


def make_toy(top: Path, package: str, init: str) -> None:
    (top / package).mkdir()
    (top / package / "__init__.py").write_text(init)
    (top / package / "callee.py").write_text(CALLEE.format(value=1))
    (top / package / "caller.py").write_text(CALLER.format(package=package))


def ask_fresh_process(top: Path, package: str) -> tuple[int, int, str]:
    """``caller.ask()`` in a new process on the toy's cache: (its answer, kernels loaded from the cache, locator)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(top / "cache"), "PYTHONPATH": f"{top}{os.pathsep}{ROOT}"}
    done = subprocess.run(
        [sys.executable, "-c", RUN.format(package=package)],
        capture_output=True,
        text=True,
        env=env,
        cwd=top,
        timeout=300,
        check=True,
    )
    answer, hits, locator = done.stdout.split()
    return int(answer), int(hits), locator


def edit_callee(top: Path, package: str, value: int, *, keep_time: bool) -> None:
    callee = top / package / "callee.py"
    stamp = callee.stat()
    callee.write_text(CALLEE.format(value=value))
    if keep_time:  # the same time and size: only the bytes tell
        os.utime(callee, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))


def test_an_edited_callee_in_another_module_recompiles_its_caller(tmp_path: Path) -> None:
    make_toy(tmp_path, "toy", REGISTERED)
    assert ask_fresh_process(tmp_path, "toy") == (1, 0, "KernelSourcesLocator")  # compiled
    assert ask_fresh_process(tmp_path, "toy") == (1, 1, "KernelSourcesLocator")  # loaded from the cache
    edit_callee(tmp_path, "toy", 2, keep_time=True)
    assert ask_fresh_process(tmp_path, "toy") == (2, 0, "KernelSourcesLocator")  # stale: compiled again


def test_without_the_locator_numba_runs_the_old_callee(tmp_path: Path) -> None:
    """The hole the locator closes: numba stamps the caller's cache with the caller's file, which did not change."""
    make_toy(tmp_path, "plain", "")
    assert ask_fresh_process(tmp_path, "plain") == (1, 0, "UserProvidedCacheLocator")
    edit_callee(tmp_path, "plain", 2, keep_time=False)
    assert ask_fresh_process(tmp_path, "plain") == (1, 1, "UserProvidedCacheLocator")


def copy_kernel_sources(target: Path) -> None:
    for source in numba_cache.KERNEL_SOURCES:
        origin, copy = ROOT / source, target / source
        if origin.is_dir():
            shutil.copytree(origin, copy, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(origin, copy)


def test_boaf_kernels_share_one_stamp_that_any_kernel_source_changes(tmp_path: Path) -> None:
    assert boaf.game.bits.__name__ == "boaf.game.bits"  # imported: it installs the locator before its kernels
    locator = dfs._cache._impl.locator
    assert isinstance(locator, numba_cache.KernelSourcesLocator)
    copy_kernel_sources(tmp_path)
    group = numba_cache.register(ROOT / source for source in numba_cache.KERNEL_SOURCES)
    assert numba_cache.sources_stamp([tmp_path / source for source in numba_cache.KERNEL_SOURCES]) == group.stamp()
    # The same files elsewhere (a container image built from this tree) have the same stamp.
    copy_group = numba_cache.register(tmp_path / source for source in numba_cache.KERNEL_SOURCES)
    copied = numba_cache.KernelSourcesLocator.from_function(dfs.py_func, str(tmp_path / "search/kernel/dfs.py"))
    assert copied is not None and copied.group is copy_group
    before = copied.get_source_stamp()
    assert before == locator.get_source_stamp()
    with (tmp_path / "features" / "compiled.py").open("a") as feature_kernel:
        feature_kernel.write("# an edit far from dfs\n")
    after = numba_cache.register(tmp_path / source for source in numba_cache.KERNEL_SOURCES)
    assert after.stamp() != group.stamp()
    assert numba_cache.group_of(tmp_path / "search/kernel/dfs.py") is after
    assert numba_cache.group_of(tmp_path / "jobs/census.py") is None  # not a kernel source: numba's own stamp
