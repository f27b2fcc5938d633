"""Model versions are installed atomically and only when complete."""

from __future__ import annotations

from pathlib import Path

import pytest

from boaf.models import registry
from boaf.models.errors import ModelError


def test_install_moves_the_stage_into_place_and_points_current_at_it(tmp_path: Path) -> None:
    stage = registry.staging_dir(tmp_path, "v1")
    (stage / "classifier.onnx").write_bytes(b"x")
    installed = registry.install(tmp_path, stage, "v1")
    assert installed == tmp_path / "v1" and (installed / "classifier.onnx").exists()
    assert registry.installed_version(tmp_path) == "v1"
    assert registry.resolve(tmp_path) == installed
    assert not stage.exists()


def test_an_unfinished_stage_changes_nothing(tmp_path: Path) -> None:
    registry.install(tmp_path, registry.staging_dir(tmp_path, "v1"), "v1")
    registry.staging_dir(tmp_path, "v2")  # a run that died before install
    assert registry.installed_version(tmp_path) == "v1"
    assert registry.resolve(tmp_path) == tmp_path / "v1"


def test_current_naming_a_missing_version_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "CURRENT").write_text("gone\n", encoding="utf-8")
    with pytest.raises(ModelError, match="names version 'gone', which is not a directory"):
        registry.resolve(tmp_path)


def test_a_version_directory_resolves_to_itself(tmp_path: Path) -> None:
    assert registry.resolve(tmp_path) == tmp_path
