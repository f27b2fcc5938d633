"""One running service: the object that owns its lifecycle and composes its servers as peers.

A ``BoafService`` holds the service's ``Lifecycle`` (``boaf.service.core.lifecycle``: the
``Stage`` and the events everything waits on) and the core the edges share (settings,
metrics, admission, kernels), and composes four peers over them: the gRPC edge
(``boaf.service.grpc.server.BoafServer``), the HTTP edge (``boaf.service.http.HttpServer``),
the metrics server (``Metrics.serve``) and the model watcher (``boaf.service.core.reload``).

Built, it raises the soft descriptor limit and shares it out (``boaf.service.core.descriptors``):
each edge caps its connections at its share, so neither can starve the other peers of descriptors.

1. ``start()`` binds the gRPC port (``BOAF_GRPC_ENABLED``) and the metrics port
   (``BOAF_METRICS_ENABLED``) and serves at once, with health NOT_SERVING and every Boaf RPC
   UNAVAILABLE. Then, in a background thread (the loader), it compiles the kernels Classify,
   Solve and Features need if numba's cache lacks them (``boaf.service.core.warmup``; stage
   ``COMPILING``), loads the classifier and warms up (a classify, a features batch and a
   solve, checked, on the warm-up's own time limit). The HTTP edge starts last
   (``BOAF_HTTP_ENABLED``), while the loader runs.
2. When the warm-up has passed, the servicers get their ``DataPlane`` and health turns
   SERVING. If loading or warm-up fails, health stays NOT_SERVING and
   ``lifecycle.load_error`` says why. The puzzle kernels then compile in the background;
   until they are loaded, the puzzle RPCs answer UNAVAILABLE with a retry hint.
3. When ``BOAF_MODEL_DIR`` is a model root, a ``ModelWatcher`` watches its ``CURRENT``: a
   new version is loaded and warmed up beside the served one and swapped in (``_reload``),
   with no call failing; ``reload_now()`` (SIGHUP) looks at once.
4. ``stop(grace)`` stops the peers in this order: the HTTP edge stops accepting calls (its
   calls in flight get the grace from now); the watcher stops (a reload under way ends
   before its swap) and compile processes end; gRPC health turns NOT_SERVING, its streams
   end, and its calls in flight get ``grace`` seconds, after which the calls still running
   end UNAVAILABLE (``errors.SHUTTING_DOWN_MESSAGE``) and every search stops; the loader
   reaches its next stage; the HTTP edge closes its last connections; the metrics server
   stops last.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from boaf.service.core import reload, tracing
from boaf.service.core.admission import Admission
from boaf.service.core.answers import ServedModel
from boaf.service.core.dataplane import DataPlane, warm_up_puzzles
from boaf.service.core.descriptors import DescriptorPlan, DescriptorWatch, TooFewDescriptors, plan_descriptors
from boaf.service.core.lifecycle import Lifecycle, Stage
from boaf.service.core.memory import ReloadRefused, check_reload_fits, settle_heap
from boaf.service.core.metrics import Metrics
from boaf.service.core.settings import InvalidSettings, Settings, env_name, unbindable
from boaf.service.core.warmup import UNITS, Kernels
from boaf.service.grpc.game_servicer import GameServicer
from boaf.service.grpc.server import BoafServer
from boaf.service.grpc.servicer import BoafServicer
from boaf.service.http import HttpServer
from boaf.service.rpc.handlers import check_answers_fit

log = logging.getLogger(__name__)

ClassifierLoader = Callable[[Path | None], ServedModel]

LOADER_JOIN_S = 3.0  # how long a stop waits for the loader to reach its next stage (warm: ~1 s; a compile, longer)


def load_default_classifier(directory: Path | None) -> ServedModel:
    """``boaf.models.classifier.load_classifier``: the committed default model when ``directory`` is None."""
    # Imported here for start-up time: the model stack loads on the loading thread, after the port is bound.
    from boaf.models.classifier import load_classifier

    classifier = load_classifier(directory)
    classifier.trace = tracing.span  # its stages' spans, while tracing is on
    return classifier


def check_model(settings: Settings, load_classifier: ClassifierLoader = load_default_classifier) -> float:
    """Compile every kernel unit, load the configured model and run the warm-up without serving; returns seconds.

    Raises what loading or warm-up raises. Used at image build time, where it also
    fills the numba cache with every kernel (the puzzle ones included), so a
    container's start compiles nothing.
    """
    started = time.perf_counter()
    kernels = Kernels()
    kernels.prepare(UNITS, on_stage=lambda stage: log.info(stage))
    plane = DataPlane(settings, load_classifier(settings.model_dir), kernels)
    plane.warm_up()
    check_answers_fit(plane)
    return time.perf_counter() - started


class BoafService:
    """One service built from ``settings``; ``load_classifier`` is replaceable for tests."""

    def __init__(self, settings: Settings, load_classifier: ClassifierLoader = load_default_classifier) -> None:
        self.settings = settings
        self.lifecycle = Lifecycle()
        self.metrics = Metrics()
        self.admission = _admission(settings)  # shared by both edges
        self.kernels = Kernels()
        self.descriptors = _descriptor_plan()  # each edge's share of the descriptor limit
        self.grpc = BoafServer(
            settings,
            metrics=self.metrics,
            admission=self.admission,
            lifecycle=self.lifecycle,
            max_connections=self.descriptors.grpc_connections,
        )
        self._descriptor_watch = DescriptorWatch(self.descriptors)
        self.http: HttpServer | None = None  # set by ``start`` when settings.http_enabled
        self.watcher: reload.ModelWatcher | None = None  # set once serving from a model root
        self.metrics_port = 0
        self._load_classifier = load_classifier
        self._loader: threading.Thread | None = None  # loads the kernels and the model (``start``)

    @property
    def servicer(self) -> BoafServicer:
        """The ``boaf.v1.Boaf`` servicer both edges call; its ``plane`` is the served ``DataPlane``."""
        return self.grpc.servicer

    @property
    def game(self) -> GameServicer:
        """The ``boaf.v1.Game`` servicer both edges call."""
        return self.grpc.game

    @property
    def port(self) -> int:
        """The gRPC port bound (0: none, before ``start`` or when gRPC is off)."""
        return self.grpc.port

    def start(self) -> None:
        """Bind, serve (NOT_SERVING), load and warm up in the background, and start the HTTP edge.

        Raises ``InvalidSettings`` naming the setting when a port cannot be bound or a TLS file is
        missing, unreadable or does not match its pair; ``stop`` then stops what had started.
        """
        settings = self.settings
        if settings.otel:
            tracing.enable()
        self._descriptor_watch.start()
        if settings.grpc_enabled:
            self.grpc.start()
        if settings.metrics_enabled:
            self.metrics_port = self._serve_metrics()
        log.info(
            "listening",
            extra={
                "address": f"{settings.host}:{self.port}",
                "metrics_address": f"{settings.metrics_host}:{self.metrics_port}",
                "tls": settings.tls_enabled,
                "descriptor_limit": self.descriptors.soft_limit,
                "grpc_connections_cap": self.descriptors.grpc_connections,
                "http_connections_cap": self.descriptors.http_connections,
            },
        )
        self._loader = threading.Thread(target=self._load_and_warm_up, name="boaf-load", daemon=True)
        self._loader.start()
        if settings.http_enabled:
            self.http = HttpServer(self, max_connections=self.descriptors.http_connections)
            self._start_http(self.http)

    def _serve_metrics(self) -> int:
        settings = self.settings
        try:
            return self.metrics.serve(
                settings.metrics_host, settings.metrics_port, request_timeout_s=settings.http_header_timeout_s
            )
        except OSError as exc:
            hint = f"{env_name('metrics_host')} sets the host"
            raise unbindable(
                "metrics_port", exc, host=settings.metrics_host, port=settings.metrics_port, hint=hint
            ) from exc

    def _start_http(self, web: HttpServer) -> None:
        try:
            web.start()
        except OSError as exc:
            raise unbindable("http_port", exc, host=self.settings.host, port=self.settings.http_port) from exc

    def _load_and_warm_up(self) -> None:
        started = time.perf_counter()
        try:
            self.lifecycle.enter(Stage.LOADING_KERNELS)
            compile_s = self.kernels.prepare([u for u in UNITS if u.at_start], on_stage=self._compiling)
            if self.lifecycle.stopping:  # stopped while the kernels loaded: nothing more to load
                self.lifecycle.abandon_loading()
                return
            root, directory, classifier = self._load_model()
            self.lifecycle.enter(Stage.WARMING_UP)
            plane = DataPlane(self.settings, classifier, self.kernels)
            warm_up_s = plane.warm_up()
            check_answers_fit(plane)
        except Exception as exc:  # the service must say why it never became ready, whatever went wrong
            log.exception("model load or warm-up failed; health stays NOT_SERVING")
            self.lifecycle.fail(exc)
            return
        self._serve(plane)
        log.info(
            "serving",
            extra={
                "model_version": plane.classifier.version,
                "kernels_s": round(compile_s, 3),
                "warm_up_s": round(warm_up_s, 3),
                "start_s": round(time.perf_counter() - started, 3),
            },
        )
        if root is not None and directory is not None:
            self._watch(root, directory.name)
        if not self.lifecycle.stopping:
            self._prepare_later_kernels()

    def _compiling(self, said: str) -> None:
        # ``Kernels.prepare`` says this once, when it starts compiling (a first start).
        self.lifecycle.enter(Stage.COMPILING)
        log.info(said)

    def _load_model(self) -> tuple[Path | None, Path | None, ServedModel]:
        """The model root (None: a plain model directory), the directory loaded (None: the default), and its model."""
        self.lifecycle.enter(Stage.LOADING_MODEL)
        root = reload.model_root(self.settings.model_dir)
        # From a model root, load the version CURRENT names now: the watcher starts from it.
        directory = root / reload.read_current(root) if root is not None else self.settings.model_dir
        return root, directory, self._load_classifier(directory)

    def _serve(self, plane: DataPlane) -> None:
        self.servicer.plane = plane
        self.metrics.serve_model(plane.classifier.version)
        settle_heap()  # a later full collection (after large calls) scans only what calls made
        self.grpc.serve()
        self.metrics.ready.set(1)
        self.lifecycle.serve()  # after health: whoever waits for ready finds health SERVING

    def _watch(self, root: Path, served: str) -> None:
        with self.lifecycle.unless_stopping() as running:
            if not running:
                return
            refused = self.metrics.model_reload_refused
            self.watcher = reload.ModelWatcher(
                root,
                served,
                self.settings.model_poll_s,
                self._reload,
                refused=lambda reason: refused.labels(reason).inc(),
            )
            self.watcher.start()
            # A first look at once: CURRENT may have changed while the model loaded (or a SIGHUP came then).
            self.watcher.check_now()
        log.info("watching the model root", extra={"model_root": str(root), "poll_s": self.settings.model_poll_s})

    def reload_now(self) -> bool:
        """Look at the model root's CURRENT now (SIGHUP); False when there is no model root being watched."""
        if self.watcher is None:
            return False
        self.watcher.check_now()
        return True

    def _reload(self, version: str) -> str:
        """Load, warm up and swap in ``version`` of the model root; returns the outcome (see ``core.reload``)."""
        assert self.watcher is not None
        directory, started = self.watcher.root / version, time.perf_counter()
        served = self.servicer.plane.classifier.version if self.servicer.plane is not None else None
        extra: dict[str, Any] = {"model_version": version, "served_version": served}
        log.info("reloading the model", extra=extra)
        try:
            check_reload_fits(self.settings, directory)
            plane = self._warmed_up_plane(directory)
            outcome = self._swap(plane)
        except ReloadRefused as exc:
            outcome = reload.REFUSED
            log.warning("model reload refused: %s", exc, extra=extra)
        except Exception:  # whatever broke the new model, the old one serves on
            outcome = reload.FAILED
            log.exception("model reload failed; still serving the old model", extra=extra)
        self.metrics.model_reloads.labels(outcome).inc()
        if outcome == reload.RELOADED:
            log.info("model reloaded", extra={**extra, "reload_s": round(time.perf_counter() - started, 3)})
        return outcome

    def _warmed_up_plane(self, directory: Path) -> DataPlane:
        classifier = self._load_classifier(directory)
        if self.servicer.plane is None:  # never: the watcher starts once serving
            raise RuntimeError("no model is served yet")
        plane = self.servicer.plane.with_classifier(classifier)
        plane.warm_up()
        check_answers_fit(plane)
        return plane

    def _swap(self, plane: DataPlane) -> str:
        # Calls in flight hold the old plane and finish on it; it is freed when the last one ends.
        with self.lifecycle.unless_stopping() as running:
            if not running:
                log.info("model reload abandoned: the server is stopping")
                return reload.ABANDONED
            old = self.servicer.plane
            self.servicer.plane = plane  # the Game servicer reads the Boaf servicer's plane
            self.metrics.serve_model(plane.classifier.version, old.classifier.version if old else None)
        return reload.RELOADED

    def _prepare_later_kernels(self) -> None:
        # Rarely used kernels (puzzles) compile after SERVING; their RPCs say UNAVAILABLE until then.
        later = [u for u in UNITS if not u.at_start]
        try:
            seconds = self.kernels.prepare(later, on_stage=lambda stage: log.info(stage + ", in the background"))
            log.info("background kernels ready", extra={"units": [u.name for u in later], "seconds": round(seconds, 3)})
            warm_up_puzzles()
        except Exception:
            log.exception("background kernels failed to compile or check; the puzzle RPCs may stay UNAVAILABLE")
        finally:
            settle_heap()
            self.lifecycle.background_kernels_settled()

    def wait_until_ready(self, timeout: float | None = None) -> bool:
        """Block until SERVING or a load failure (or ``timeout`` seconds); True when SERVING."""
        return self.lifecycle.wait_until_ready(timeout)

    def wait_for_all_kernels(self, timeout: float | None = None) -> bool:
        """Block until the background kernels (puzzles) are loaded too (or failed to); True when they are."""
        self.lifecycle.wait_for_background_kernels(timeout)
        return all(self.kernels.is_ready(unit.name) for unit in UNITS)

    def stop(self, grace: float | None = None) -> None:
        """Stop every peer, in the order of the module notes; calls in flight get ``grace`` s (default: the settings').

        Calls still running after the grace end UNAVAILABLE with ``SHUTTING_DOWN_MESSAGE``.
        """
        grace = self.settings.shutdown_grace_s if grace is None else grace
        if self.http is not None:
            self.http.shutdown()  # both edges drain at once, within one grace period
        log.info("shutting down", extra={"grace_s": grace})
        self.lifecycle.begin_stop()
        if self.watcher is not None:
            self.watcher.stop()  # a reload under way ends before its swap
        self.kernels.stop()  # a first start stopped while its kernels compile ends their processes too
        self.metrics.ready.set(0)
        self.grpc.stop(grace, on_grace_over=self._cancel_searches)
        self._join_loader()
        if self.http is not None:
            self.http.stop()  # its calls have answered; this waits for its last connections to close
        self.metrics.stop()
        self._descriptor_watch.stop()
        if self.settings.otel:
            tracing.disable()  # sends the spans not yet sent
        log.info("stopped")

    def _cancel_searches(self) -> None:
        if self.servicer.plane is not None:
            self.servicer.plane.cancel_all()

    def _join_loader(self) -> None:
        # The loader may be inside numba or LLVM (loading a cached kernel): a process that exits under it aborts
        # ("terminate called without an active exception"). It stops at its next stage; wait for that.
        if self._loader is not None and self._loader is not threading.current_thread():
            self._loader.join(LOADER_JOIN_S)

    def wait_for_termination(self, timeout: float | None = None) -> bool:
        """Block until the gRPC server stops (or ``timeout`` seconds); True when it has stopped."""
        return self.grpc.wait_for_termination(timeout)


def _descriptor_plan() -> DescriptorPlan:
    try:
        return plan_descriptors()
    except TooFewDescriptors as exc:
        raise InvalidSettings(str(exc)) from exc


def _admission(settings: Settings) -> Admission:
    try:
        return Admission(settings)
    except (OSError, UnicodeDecodeError) as exc:  # the tokens file
        name = env_name("api_tokens_file")
        raise InvalidSettings(f"{name}={settings.api_tokens_file}: cannot read it ({exc})") from exc
