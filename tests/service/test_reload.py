"""Model reload without downtime: a new version in the model root is served with no failed call.

Each test trains tiny fixed-seed models (a second each: 300 random states labelled by
the exact solver, 20 trees), installs them with the registry's atomic install into a
temporary model root, and runs a real server on it (loopback, port 0) while a client
thread calls Classify in a loop.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import urllib.request
import weakref
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from prometheus_client.parser import text_string_to_metric_families
from servers import (
    READY_TIMEOUT_S,
    channel_to,
    grid_state,
    loopback_settings,
    ready_server,
    serve_process,
    wait_for,
)

from boaf.features import SCHEMA_VERSION
from boaf.models import registry
from boaf.models.classifier import CARD_FILE, CLASSIFIER_FILE
from boaf.models.onnx_export import export_onnx
from boaf.models.retrain_steps import labelled_random_states
from boaf.models.training import PAPER_PARAMS, fit
from boaf.service.app import BoafService, load_default_classifier
from boaf.service.core.memory import model_memory_mb
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc

RELOAD_TIMEOUT_S = 120  # generous: the reload's load and warm-up take well under a second on a quiet machine
STATE = grid_state("AS 2S 3S/4H 5H 6H/7D 8D 9D")


def staged_model(root: Path, seed: int) -> str:
    """A tiny model trained with ``seed``, built in the root's staging directory; returns its version."""
    version = f"tiny-s{seed}"
    stage = registry.staging_dir(root, version)
    model = fit({**PAPER_PARAMS, "n_estimators": 20}, labelled_random_states(300, seed), seed=seed)
    meta = {"model_version": version, "feature_schema": SCHEMA_VERSION, "probe_nodes": "0", "threshold": "0.5"}
    export_onnx(model, stage / CLASSIFIER_FILE, meta)
    (stage / CARD_FILE).write_text(json.dumps({"model_version": version}), encoding="utf-8")
    return version


def install(root: Path, version: str) -> None:
    registry.install(root, root / f".{version}.staging", version)


def broken_model(root: Path, version: str) -> None:
    """A version whose ONNX file is corrupt, installed."""
    stage = registry.staging_dir(root, version)
    (stage / CLASSIFIER_FILE).write_bytes(b"not an onnx model" * 1000)
    (stage / CARD_FILE).write_text("{}", encoding="utf-8")
    install(root, version)


class ClassifyLoop:
    """A thread calling Classify over gRPC until stopped; keeps each answer's model version and each failure."""

    def __init__(self, server: BoafService) -> None:
        self.versions: list[str] = []
        self.failures: list[str] = []
        self._server = server
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> ClassifyLoop:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(30)

    def _run(self) -> None:
        with channel_to(self._server) as channel:
            stub = boaf_pb2_grpc.BoafStub(channel)
            while not self._stop.is_set():
                try:
                    answer = stub.Classify(pb.ClassifyRequest(states=[STATE]), timeout=30)
                    self.versions.append(answer.model_version)
                except grpc.RpcError as error:
                    self.failures.append(f"{error.code().name}: {error.details()}")

    def calls_after(self, count: int) -> bool:
        """True once ``count`` more answers than now have come (use with ``wait_for``)."""
        target = len(self.versions) + count
        return wait_for(lambda: len(self.versions) >= target or bool(self.failures), RELOAD_TIMEOUT_S)


def scrape(server: BoafService) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """The metrics page, over HTTP: each sample's name and labels, and its value."""
    with urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=10) as page:
        text = page.read().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def reloads(server: BoafService, outcome: str) -> float:
    return server.metrics.registry.get_sample_value("boaf_model_reloads_total", {"outcome": outcome}) or 0.0


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A model root with tiny-s1 installed and tiny-s2 staged."""
    install(tmp_path, staged_model(tmp_path, 1))
    staged_model(tmp_path, 2)
    return tmp_path


@pytest.fixture
def server(root: Path) -> Iterator[BoafService]:
    running = ready_server(loopback_settings(model_dir=root, model_poll_s=0.05))
    yield running
    running.stop(0)


def test_a_new_version_is_served_with_no_failed_call_and_a_broken_one_is_refused(
    root: Path, server: BoafService
) -> None:
    with channel_to(server) as channel:
        info = boaf_pb2_grpc.BoafStub(channel).GetServerInfo(pb.GetServerInfoRequest(), timeout=10)
    assert info.model_version == "tiny-s1"
    with ClassifyLoop(server) as loop:
        assert loop.calls_after(20)
        old_plane = weakref.ref(server.servicer.plane)
        install(root, "tiny-s2")
        assert wait_for(lambda: loop.versions[-1:] == ["tiny-s2"], RELOAD_TIMEOUT_S), loop.failures
        assert loop.calls_after(20)
        broken_model(root, "tiny-s3")
        assert wait_for(lambda: reloads(server, "failed") == 1, RELOAD_TIMEOUT_S)
        assert loop.calls_after(20)
    assert loop.failures == []
    switch = loop.versions.index("tiny-s2")
    assert switch > 0 and set(loop.versions[:switch]) == {"tiny-s1"} and set(loop.versions[switch:]) == {"tiny-s2"}

    # Nothing holds the old model once every call on it has ended (GetServerInfo's cache of it included).
    assert old_plane() is None, "the old model is still held after every call on it ended"
    with channel_to(server) as channel:
        info = boaf_pb2_grpc.BoafStub(channel).GetServerInfo(pb.GetServerInfoRequest(), timeout=10)
    assert info.model_version == "tiny-s2"
    samples = scrape(server)
    assert samples[("boaf_model_info", (("version", "tiny-s2"),))] == 1
    assert ("boaf_model_info", (("version", "tiny-s1"),)) not in samples
    assert samples[("boaf_model_reloads_total", (("outcome", "reloaded"),))] == 1
    assert samples[("boaf_model_reloads_total", (("outcome", "failed"),))] == 1


def test_a_reload_that_two_models_would_not_fit_is_refused(root: Path) -> None:
    settings = loopback_settings(model_dir=root, model_poll_s=0.05)
    # Room for every limit and one model, not for a second one beside it.
    tight = loopback_settings(
        model_dir=root, model_poll_s=0.05, memory_limit_mb=settings.worst_case_memory_mb()["total"]
    )
    assert model_memory_mb(root / ".tiny-s2.staging") >= 1
    server = ready_server(tight)
    try:
        with ClassifyLoop(server) as loop:
            install(root, "tiny-s2")
            assert wait_for(lambda: reloads(server, "refused") == 1, RELOAD_TIMEOUT_S)
            assert loop.calls_after(10)
        assert loop.failures == [] and set(loop.versions) == {"tiny-s1"}
        assert reloads(server, "reloaded") == 0
    finally:
        server.stop(0)


class HeldReload:
    """A classifier loader that holds the load of ``version`` until ``release()``."""

    def __init__(self, version: str) -> None:
        self.version = version
        self.loading = threading.Event()
        self._release = threading.Event()

    def __call__(self, directory: Path | None) -> object:
        if directory is not None and directory.name == self.version:
            self.loading.set()
            self._release.wait(READY_TIMEOUT_S)
        return load_default_classifier(directory)

    def release(self) -> None:
        self._release.set()


def test_stopping_the_server_during_a_reload_abandons_it(root: Path) -> None:
    held = HeldReload("tiny-s2")
    server = ready_server(loopback_settings(model_dir=root, model_poll_s=0.05), held)
    install(root, "tiny-s2")
    assert held.loading.wait(RELOAD_TIMEOUT_S)
    stopping = threading.Thread(target=server.stop, args=(0,))
    stopping.start()
    assert wait_for(lambda: server.lifecycle.stopping)  # the stop has begun: now let the load finish
    held.release()
    stopping.join(60)
    assert not stopping.is_alive()
    assert wait_for(lambda: reloads(server, "abandoned") == 1, RELOAD_TIMEOUT_S)
    assert server.servicer.plane is not None and server.servicer.plane.classifier.version == "tiny-s1"
    assert reloads(server, "reloaded") == 0


def test_sighup_makes_boaf_serve_reload(root: Path) -> None:
    # No polling: only the signal makes the server look at CURRENT.
    process, address = serve_process({"BOAF_MODEL_DIR": str(root), "BOAF_MODEL_POLL_S": "0"})
    try:
        with grpc.insecure_channel(address) as channel:
            stub = boaf_pb2_grpc.BoafStub(channel)

            def served() -> str:
                return str(stub.GetServerInfo(pb.GetServerInfoRequest(), timeout=10).model_version)

            assert served() == "tiny-s1"
            install(root, "tiny-s2")
            os.kill(process.pid, signal.SIGHUP)
            assert wait_for(lambda: served() == "tiny-s2", RELOAD_TIMEOUT_S)
            answer = stub.Classify(pb.ClassifyRequest(states=[STATE]), timeout=30)
            assert answer.model_version == "tiny-s2"
    finally:
        process.terminate()
        process.wait(60)
