"""Solve uses the ordering model installed with the classifier it serves."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from boaf.models.classifier import load_classifier
from boaf.models.registry import default_root
from boaf.service.core.dataplane import DataPlane
from boaf.service.core.settings import Settings


def test_the_served_model_directory_supplies_the_ordering(tmp_path: Path) -> None:
    version = tmp_path / "v1"
    shutil.copytree(default_root(), version)
    ordering = json.loads((version / "ordering.json").read_text())
    (version / "ordering.json").write_text(json.dumps({**ordering, "cutoff": 7}))
    (tmp_path / "CURRENT").write_text("v1\n")

    plane = DataPlane(Settings(), load_classifier(tmp_path))
    assert plane.ordering is not None and plane.ordering.cutoff == 7
    assert DataPlane(Settings(), load_classifier()).ordering.cutoff == ordering["cutoff"]  # type: ignore[union-attr]
