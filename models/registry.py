"""Where models live: a root folder of versioned model directories and a CURRENT pointer.

::

    ROOT/
      CURRENT                  # text: the installed version's directory name
      2026-11-21-1a2b3c4d/     # one complete model version
        classifier.onnx  ordering.json  model_card.json  plots/*.png

A version is built in a hidden staging directory and renamed into place only
when complete; CURRENT is then replaced atomically. An interrupted retrain
therefore never changes what is installed. ``publish`` copies a version into
another root the same way (the volume serving pods read: deploy/k8s), and a
server watching that root reloads it (``boaf.service.core.reload``).
"""

from __future__ import annotations

import os
import shutil
import uuid
from importlib import resources
from pathlib import Path

from boaf.models.errors import ModelError
from boaf.models.files import write_text_atomically

CURRENT_FILE = "CURRENT"


def default_root() -> Path:
    """The committed model root inside the package."""
    return Path(str(resources.files("boaf.models") / "artifacts"))


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


def publish(version_dir: Path, root: Path, version: str | None = None) -> Path:
    """Copy the model version in ``version_dir`` into the model root ``root`` and point its CURRENT at it.

    ``version`` names it there (default: ``version_dir``'s name). The copy is renamed into place
    only when complete, so a server reading ``root`` never sees half a version; writers racing to
    publish the same version are safe (the first rename wins, the others drop their copies).
    Returns the version's directory in ``root``.
    """
    version = version or version_dir.name
    final = root / version
    if not final.is_dir():
        root.mkdir(parents=True, exist_ok=True)
        stage = root / f".{version}.{uuid.uuid4().hex[:8]}.staging"  # one per writer
        shutil.copytree(version_dir, stage, ignore=shutil.ignore_patterns("__pycache__", ".*"))
        try:
            os.replace(stage, final)
        except OSError:
            shutil.rmtree(stage)
            if not final.is_dir():
                raise
    write_text_atomically(root / CURRENT_FILE, version + "\n")
    return final
