"""Atomic writes: a reader sees the old file or the whole new one; a failed write leaves nothing behind."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from models.files import atomic_write, file_sha256, write_text_atomically


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
