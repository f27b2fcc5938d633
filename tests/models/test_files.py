"""Atomic writes: a reader sees the old file or the whole new one; a failed write leaves nothing behind."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from boaf.models.files import atomic_write, file_sha256, write_json_atomically, write_text_atomically


def test_a_finished_write_replaces_the_file(tmp_path: Path) -> None:
    target = tmp_path / "CURRENT"
    target.write_text("old\n")
    write_text_atomically(target, "new\n")
    assert target.read_text() == "new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["CURRENT"]


def test_a_failed_write_keeps_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "data.bin"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic_write(target) as tmp:
        tmp.write_bytes(b"half")
        raise RuntimeError("killed")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["data.bin"]


def test_file_sha256_is_the_digest_of_the_bytes(tmp_path: Path) -> None:
    payload = bytes(range(256)) * 5000  # more than one read block
    (tmp_path / "f").write_bytes(payload)
    assert file_sha256(tmp_path / "f") == hashlib.sha256(payload).hexdigest()


def test_json_holds_numpy_scalars_as_numbers_and_paths_as_strings(tmp_path: Path) -> None:
    target = tmp_path / "model_card.json"
    write_json_atomically(target, {"auc": np.float32(0.75), "rows": np.int64(12), "data": [tmp_path / "d"]})
    assert json.loads(target.read_text()) == {"auc": 0.75, "rows": 12, "data": [str(tmp_path / "d")]}
    assert isinstance(json.loads(target.read_text())["rows"], int)


def test_json_refuses_a_value_it_has_no_form_for_and_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "model_card.json"
    target.write_text("{}\n")
    with pytest.raises(TypeError, match=r"cannot write a set to model_card\.json"):
        write_json_atomically(target, {"bad": {1, 2}})
    assert target.read_text() == "{}\n"
    assert [p.name for p in tmp_path.iterdir()] == ["model_card.json"]
