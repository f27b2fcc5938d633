"""Reload inputs are inputs: ``CURRENT`` names a version directly inside the model root, read in at most 256
bytes; anything else is refused, counted and logged briefly, and a model whose answers would not fit the
message limit is never swapped in.

The live tests run a real server on a temporary model root with tiny fixed-seed models (as test_reload does).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import os
import shutil
import tracemalloc
from pathlib import Path

import pytest
from servers import READY_TIMEOUT_S, channel_to, loopback_settings, ready_server, start_server, wait_for

from boaf.features import SCHEMA_VERSION
from boaf.models import registry
from boaf.models.classifier import CARD_FILE, CLASSIFIER_FILE
from boaf.models.onnx_export import export_onnx
from boaf.models.retrain_steps import labelled_random_states
from boaf.models.training import PAPER_PARAMS, fit
from boaf.service.app import BoafService
from boaf.service.core import reload
from boaf.service.core.errors import ModelUnavailable
from boaf.service.core.settings import MIB
from boaf.service.rpc.handlers import check_answers_fit
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc

RELOAD_TIMEOUT_S = 120  # generous: a reload takes well under a second on a quiet machine


def model_in(directory: Path, version: str, seed: int, card: dict[str, object] | None = None) -> Path:
    """A tiny model trained with ``seed`` written into ``directory`` (made), with ``card`` as its model card."""
    directory.mkdir(parents=True)
    model = fit({**PAPER_PARAMS, "n_estimators": 20}, labelled_random_states(300, seed), seed=seed)
    meta = {"model_version": version, "feature_schema": SCHEMA_VERSION, "probe_nodes": "0", "threshold": "0.5"}
    export_onnx(model, directory / CLASSIFIER_FILE, meta)
    (directory / CARD_FILE).write_text(json.dumps(card or {"model_version": version}), encoding="utf-8")
    return directory


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two tiny models, trained once for the module: ``v1`` and ``v2``."""
    models = tmp_path_factory.mktemp("trained")
    model_in(models / "v1", "v1", 1)
    model_in(models / "v2", "v2", 2)
    return models


@pytest.fixture
def root(tmp_path: Path, trained: Path) -> Path:
    """A model root serving v1, and a valid model outside it at ``../outside/v``."""
    root = tmp_path / "root"
    root.mkdir()
    shutil.copytree(trained / "v1", root / "v1")
    (root / registry.CURRENT_FILE).write_text("v1\n", encoding="utf-8")
    shutil.copytree(trained / "v2", tmp_path / "outside" / "v")
    return root


def set_current(root: Path, content: str | bytes) -> None:
    data = content.encode("utf-8") if isinstance(content, str) else content
    staged = root.parent / "CURRENT.new"
    staged.write_bytes(data)
    os.replace(staged, root / registry.CURRENT_FILE)  # a watcher never reads half of it


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("../outside/v", reload.NOT_A_NAME),
        ("v1/../../outside/v", reload.NOT_A_NAME),
        ("..", reload.NOT_A_NAME),
        (".", reload.NOT_A_NAME),
        ("", reload.NOT_A_NAME),
        ("\n", reload.NOT_A_NAME),
        (".v1.staging", reload.NOT_A_NAME),
        ("/etc", reload.NOT_A_NAME),
        ("v1\x00", reload.NOT_A_NAME),
        ("v\\1", reload.NOT_A_NAME),
        ("v1\nv2", reload.NOT_A_NAME),
        ("v" * 256, reload.TOO_LONG),  # a name past 255 bytes
        ("\u00e9" * 128, reload.TOO_LONG),  # 128 characters, 256 bytes of UTF-8
        ("v" * 300, reload.TOO_LONG),  # a file past 256 bytes
        (b"\xff\xfe v1", reload.NOT_TEXT),
        ("v9", reload.NOT_A_VERSION),
        ("link", reload.OUTSIDE_ROOT),
    ],
)
def test_current_names_a_version_directly_inside_the_root(root: Path, content: str | bytes, reason: str) -> None:
    (root / "link").symlink_to(root.parent / "outside" / "v")
    set_current(root, content)
    with pytest.raises(reload.CurrentRefused) as refused:
        reload.read_current(root)
    assert refused.value.reason == reason
    assert len(str(refused.value)) <= 2 * reload.QUOTE_CHARS + 80  # it quotes a few dozen characters at most


@pytest.mark.parametrize("content", ["v1", "v1\n", "  v1  \n"])
def test_a_plain_version_name_is_read(root: Path, content: str) -> None:
    set_current(root, content)
    assert reload.read_current(root) == "v1"


def test_a_20_mib_current_is_never_read_whole(root: Path) -> None:
    set_current(root, "v" * (20 * MIB))
    tracemalloc.start()
    try:
        with pytest.raises(reload.CurrentRefused, match="over 256 bytes"):
            reload.read_current(root)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024, peak


def refused(server: BoafService, reason: str) -> float:
    sample = server.metrics.registry.get_sample_value("boaf_model_reload_refused_total", {"reason": reason})
    return sample or 0.0


def reloads(server: BoafService, outcome: str) -> float:
    return server.metrics.registry.get_sample_value("boaf_model_reloads_total", {"outcome": outcome}) or 0.0


def served_version(server: BoafService) -> str:
    with channel_to(server) as channel:
        info = boaf_pb2_grpc.BoafStub(channel).GetServerInfo(pb.GetServerInfoRequest(), timeout=10)
    return str(info.model_version)


def test_a_live_server_refuses_bad_currents_once_each_and_serves_on(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = ready_server(loopback_settings(model_dir=root, model_poll_s=0.02))
    try:
        caplog.set_level(logging.WARNING, logger="boaf.service.core.reload")
        set_current(root, "../outside/v")
        assert wait_for(lambda: refused(server, reload.NOT_A_NAME) == 1, RELOAD_TIMEOUT_S)
        set_current(root, "v" * (20 * MIB))
        assert wait_for(lambda: refused(server, reload.TOO_LONG) == 1, RELOAD_TIMEOUT_S)
        polls = server.watcher.poll_s if server.watcher else 0
        assert wait_for(lambda: False, 50 * polls) is False  # some fifty polls of the same 20 MiB CURRENT
        assert refused(server, reload.TOO_LONG) == 1  # counted and logged once per content
        assert served_version(server) == "v1"
        assert reloads(server, "reloaded") == reloads(server, "failed") == 0
        lines = [r.getMessage() for r in caplog.records if r.name == "boaf.service.core.reload"]
        assert len(lines) == 2, lines
        assert all(len(line) < 300 for line in lines), [len(line) for line in lines]
        # A good name again: reloaded as ever.
        shutil.copytree(root.parent / "outside" / "v", root / "v2")
        set_current(root, "v2\n")
        assert wait_for(lambda: reloads(server, "reloaded") == 1, RELOAD_TIMEOUT_S)
        assert served_version(server) == "v2"
    finally:
        server.stop(0)


def test_a_model_whose_server_info_would_pass_the_message_limit_is_not_swapped_in(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = ready_server(loopback_settings(model_dir=root, model_poll_s=0.02))
    try:
        caplog.set_level(logging.WARNING, logger="boaf.service.app")
        model_in(root / "huge-card", "huge-card", 3, {"model_version": "huge-card", "notes": "x" * (6 * MIB)})
        set_current(root, "huge-card")
        assert wait_for(lambda: reloads(server, "failed") == 1, RELOAD_TIMEOUT_S)
        assert served_version(server) == "v1"  # GetServerInfo answers on, from the old model
        assert any("GetServerInfo answer" in (r.exc_text or "") for r in caplog.records), caplog.records
    finally:
        server.stop(0)


def test_the_largest_classify_answer_must_fit_too(root: Path) -> None:
    server = ready_server(loopback_settings(model_dir=root, model_poll_s=0))
    try:
        plane = server.servicer.plane
        assert plane is not None
        check_answers_fit(plane)  # 10,000 predictions of at most 26 bytes: far within 4 MiB
        small = copy.copy(plane)
        small.settings = dataclasses.replace(plane.settings, max_batch_size=10_000, max_message_bytes=128 * 1024)
        with pytest.raises(ModelUnavailable, match=r"the largest Classify answer .* past BOAF_MAX_MESSAGE_BYTES"):
            check_answers_fit(small)
    finally:
        server.stop(0)


def test_a_server_starting_on_a_root_whose_current_leads_outside_it_does_not_start(root: Path) -> None:
    set_current(root, "../outside/v")
    server = start_server(loopback_settings(model_dir=root, model_poll_s=0))
    try:
        assert not server.wait_until_ready(READY_TIMEOUT_S)
        assert isinstance(server.lifecycle.load_error, reload.CurrentRefused)
        assert "'../outside/v'" in str(server.lifecycle.load_error)
    finally:
        server.stop(0)
