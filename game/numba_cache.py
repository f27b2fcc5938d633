"""numba's on-disk cache, made fresh by a hash of every kernel source together.

numba stamps a function's cached machine code (``cache=True``) with its own
file's modification time and size. A kernel is compiled with the kernels it
calls linked in, and those live in other files (``boaf.search.kernel`` is a package
of topic modules): after an edit of a callee, numba would load the caller's
old machine code, which still runs the old callee.

``KernelSourcesLocator`` closes that hole. Files are registered in groups
(``register``); a function defined in a group's file gets the hash of every
file of the group as its stamp, so an edit of any of them makes every cached
kernel of the group stale and the next process recompiles them. The cache
stays where numba would put it (``NUMBA_CACHE_DIR``, or ``__pycache__``
beside the source): the locator wraps the one numba picks. The stamp is a hash
of the files' bytes, not of their times, so a copy of the same files (the
container image, whose cache is filled at build time) keeps its cache valid.

``install()`` puts the locator first in numba's list and registers boaf's
kernel sources (``KERNEL_SOURCES``). ``boaf.game.bits`` calls it before any kernel
is defined, and every compiled module of boaf imports ``boaf.game.bits``.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from numba.core.caching import CacheImpl, _CacheLocator

KERNEL_SOURCES = (
    "search",
    "features",
    "puzzles",
    "game/bits.py",
    "game/cards.py",
    "game/graph.py",
)
"""boaf's compiled code and what it reads at compile time, as paths from the folder above ``game``."""


def source_files(roots: Iterable[Path]) -> list[Path]:
    """The ``.py`` files of ``roots`` (files, or folders searched recursively), sorted."""
    files: set[Path] = set()
    for root in roots:
        if root.is_dir():
            files.update(path for path in root.rglob("*.py") if "__pycache__" not in path.parts)
        elif root.is_file():
            files.add(root)
    return sorted(files)


def sources_stamp(roots: Sequence[Path]) -> str:
    """A SHA-256 of the names (from each root's parent folder) and bytes of every file of ``roots``."""
    digest = hashlib.sha256()
    for root in roots:
        for path in source_files([root]):
            digest.update(path.relative_to(root.parent).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


@dataclass
class SourceGroup:
    """Files whose compiled functions share one stamp: ``roots`` are files or folders."""

    roots: tuple[Path, ...]
    _stamp: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def covers(self, path: Path) -> bool:
        """True when ``path`` is one of the roots or inside one."""
        return any(path == root or root in path.parents for root in self.roots)

    def stamp(self) -> str:
        """``sources_stamp`` of the roots, hashed once a process: the files as this process imported them."""
        with self._lock:
            if not self._stamp:
                self._stamp = sources_stamp(self.roots)
            return self._stamp


_groups: list[SourceGroup] = []


def register(roots: Iterable[Path | str]) -> SourceGroup:
    """Make ``roots`` (files or folders) one group: an edit of any of their files makes all their kernels stale.

    Call it before the group's first compiled function is defined (numba reads the stamp then).
    """
    group = SourceGroup(tuple(Path(root).resolve() for root in roots))
    _groups.insert(0, group)  # a later, narrower registration wins over boaf's own
    return group


def group_of(py_file: str | Path) -> SourceGroup | None:
    """The registered group holding ``py_file``, or None."""
    path = Path(py_file).resolve()
    return next((group for group in _groups if group.covers(path)), None)


class KernelSourcesLocator(_CacheLocator):
    """numba's own locator for a function, with the stamp of the function's source group."""

    def __init__(self, inner: _CacheLocator, group: SourceGroup) -> None:
        self.inner: Any = inner  # numba's locators are untyped
        self.group = group

    def __getattr__(self, name: str) -> Any:
        # numba also reads its locators' private attributes (``_py_file``, in a warning about an uncachable
        # function, such as one with an object-mode block): the wrapped locator has them
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def ensure_cache_path(self) -> None:
        self.inner.ensure_cache_path()

    def get_cache_path(self) -> str:
        path: str = self.inner.get_cache_path()
        return path

    def get_source_stamp(self) -> Any:
        return ("boaf-sources", self.group.stamp())

    def get_disambiguator(self) -> str:
        name: str = self.inner.get_disambiguator()
        return name

    @classmethod
    def from_function(cls, py_func: Callable[..., Any], py_file: str) -> KernelSourcesLocator | None:
        group = group_of(py_file)
        if group is None:
            return None
        locators: list[Any] = CacheImpl._locator_classes
        for other in locators:
            if other is not cls:
                inner = other.from_function(py_func, py_file)
                if inner is not None:
                    return cls(inner, group)
        return None


def install() -> None:
    """Put ``KernelSourcesLocator`` first in numba's locators (once) and register boaf's kernel sources."""
    if KernelSourcesLocator in CacheImpl._locator_classes:
        return
    top = Path(__file__).resolve().parents[1]
    _groups.append(SourceGroup(tuple(top / source for source in KERNEL_SOURCES)))
    CacheImpl._locator_classes.insert(0, KernelSourcesLocator)
