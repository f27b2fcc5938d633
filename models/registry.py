"""Where models live: a root folder of versioned model directories and a CURRENT pointer.

::

    ROOT/
      CURRENT                  # text: the installed version's directory name
      2026-11-21-1a2b3c4d/     # one complete model version
        classifier.onnx  ordering.json  model_card.json  plots/*.png

A version is built in a hidden staging directory and renamed into place only
when complete; CURRENT is then replaced atomically. An interrupted retrain
therefore never changes what is installed.
"""

from __future__ import annotations

import os
import shutil
from importlib import resources
from pathlib import Path

from models.errors import ModelError
from models.files import write_text_atomically

CURRENT_FILE = "CURRENT"


def default_root() -> Path:
    """The committed model root inside the package."""
    return Path(str(resources.files("models") / "artifacts"))


def resolve(path: Path | None = None) -> Path:
    """The model version directory for ``path``: a version directory, or a root whose CURRENT names one."""
    path = path or default_root()
    pointer = path / CURRENT_FILE
    if not pointer.is_file():
        return path
    version = pointer.read_text(encoding="utf-8").strip()
    target = path / version
    if not version or not target.is_dir():
        raise ModelError(f"{pointer} names version {version!r}, which is not a directory in {path}")
    return target


def staging_dir(root: Path, version: str) -> Path:
    """A fresh hidden directory to build ``version`` in."""
    stage = root / f".{version}.staging"
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir(parents=True)
    return stage


def install(root: Path, stage: Path, version: str) -> Path:
    """Move a finished staging directory into place as ``version`` and point CURRENT at it."""
    final = root / version
    if final.exists():
        raise ModelError(f"model version {version} already exists in {root}")
    os.replace(stage, final)
    write_text_atomically(root / CURRENT_FILE, version + "\n")
    return final


def installed_version(root: Path) -> str | None:
    """The version CURRENT names, or None when nothing is installed."""
    pointer = root / CURRENT_FILE
    return pointer.read_text(encoding="utf-8").strip() if pointer.is_file() else None
