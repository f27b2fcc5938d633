"""Files written whole or not at all, and their digests.

Artifacts, dataset manifests and job parts are all written the same way: to a
hidden temporary file beside the target, then renamed over it in one step, so
that a reader (or a resumed job) sees the old file or the whole new one, never
part of one. ``jobs`` writes its parts through the same helpers.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

#: Glob of the temporary files a killed writer leaves behind in a folder.
PARTIAL_WRITES = ".*.tmp"


@contextmanager
def atomic_write(path: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` to write; when the block ends, it replaces ``path``.

    If the block raises, the temporary file is removed and ``path`` is left as it was.
    """
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        yield tmp
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)


def write_text_atomically(path: Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` through ``atomic_write``; returns ``path``."""
    with atomic_write(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path


def write_json_atomically(path: Path, data: Any) -> Path:
    """Write ``data`` as indented JSON to ``path`` through ``atomic_write``; returns ``path``.

    numpy scalars are written as the numbers they hold and paths as strings (model
    cards hold both); any other value JSON has no form for raises ``TypeError``
    naming its type and the file, and ``path`` is left as it was.
    """

    def plain(value: Any) -> Any:
        if isinstance(value, Path):
            return str(value)
        if isinstance(value, np.generic):
            return value.item()
        raise TypeError(f"cannot write a {type(value).__name__} to {path.name}")

    return write_text_atomically(path, json.dumps(data, indent=2, default=plain) + "\n")


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes, in hex (read in 1 MiB blocks)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def strict_json(value: Any) -> Any:
    """``value`` with every NaN float replaced by None, at any depth: a card is strict JSON.

    (GetServerInfo sends the card as a Struct, and an undefined figure is null there.)
    """
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {k: strict_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [strict_json(v) for v in value]
    return value
