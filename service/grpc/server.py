"""The gRPC server: Boaf, health and reflection on one port, metrics on another.

Lifecycle of a ``BoafServer``:

1. ``start()`` binds the ports and serves at once, with health NOT_SERVING and
   every Boaf RPC UNAVAILABLE, then, in a background thread, compiles the
   kernels Classify, Solve and Features need if numba's cache lacks them
   (``boaf.service.core.warmup``; ``stage`` says "compiling kernels (first start
   only)"), loads the classifier and warms up (a classify, a features batch and
   a solve, checked, on the warm-up's own time limit).
2. When the warm-up has passed, the servicer gets its ``DataPlane`` and health
   turns SERVING (for ``""`` and ``boaf.v1.Boaf``). If loading or warm-up fails,
   health stays NOT_SERVING and ``load_error`` says why. The puzzle kernels
   then compile in the background; until they are loaded, the puzzle RPCs
   answer UNAVAILABLE with a retry hint.
3. When ``BOAF_MODEL_DIR`` is a model root, a ``boaf.service.core.reload.ModelWatcher``
   watches its ``CURRENT``: a new version is loaded and warmed up beside the
   served one and swapped in (``_reload``), with no call failing; ``reload_now()``
   (SIGHUP) looks at once.
4. ``stop(grace)`` turns health NOT_SERVING (so load balancers and Watch
   streams learn first), stops accepting calls, ends the streams (UNAVAILABLE),
   and gives the calls in flight ``grace`` seconds; those still running then end
   UNAVAILABLE with ``errors.SHUTTING_DOWN_MESSAGE``, and their searches stop.

Threads (``boaf.service.core.admission`` has the whole model): the gRPC pool has a thread
for every call and stream the caps admit, plus ``PROBE_CALLS`` for health checks,
and gRPC's own ``maximum_concurrent_rpcs`` is the same number, a backstop only.
Connections: one idle for ``BOAF_IDLE_TIMEOUT_S`` is closed; every connection is
closed after ``CONNECTION_AGE_S`` (clients reconnect at once), giving the calls on
it the longest time a call may take; keepalive pings find dead peers.
"""

from __future__ import annotations

import logging
import ssl
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from boaf.models import registry
from boaf.service.core import reload, tracing
from boaf.service.core.admission import Admission
from boaf.service.core.compile_log import COMPILING
from boaf.service.core.dataplane import DataPlane, ServedModel, warm_up_puzzles
from boaf.service.core.memory import ReloadRefused, check_reload_fits, settle_heap
from boaf.service.core.metrics import Metrics
from boaf.service.core.settings import InvalidSettings, Settings, env_name, unbindable
from boaf.service.core.warmup import UNITS, Kernels
from boaf.service.grpc import reflection as reflection_v1
from boaf.service.grpc.game_servicer import GameServicer
from boaf.service.grpc.interceptors import HARD_MESSAGE_FACTOR, PROBE_CALLS, CallGate
from boaf.service.grpc.servicer import BoafServicer
from boaf.v1 import boaf_pb2, boaf_pb2_grpc, game_pb2, game_pb2_grpc

log = logging.getLogger(__name__)

SERVICE_NAME = boaf_pb2.DESCRIPTOR.services_by_name["Boaf"].full_name  # "boaf.v1.Boaf"
GAME_SERVICE_NAME = game_pb2.DESCRIPTOR.services_by_name["Game"].full_name  # "boaf.v1.Game"
HEALTH_SERVICES = ("", SERVICE_NAME)

ClassifierLoader = Callable[[Path | None], ServedModel]

CONNECTION_AGE_S = 1800  # a connection lives at most this long (gRPC adds up to 10 % jitter), then clients reconnect
KEEPALIVE_S = 60  # the server pings a connection quiet for this long, to find dead peers ...
KEEPALIVE_TIMEOUT_S = 20  # ... and closes it when the ping gets no answer within this
LOADER_JOIN_S = 3.0  # how long a stop waits for the loader to reach its next stage (warm: ~1 s; a compile, longer)
STOP_MARGIN_S = 1.0  # after the grace, calls get this long to end UNAVAILABLE themselves before gRPC cancels them


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
    DataPlane(settings, load_classifier(settings.model_dir), kernels).warm_up()
    return time.perf_counter() - started


class BoafServer:
    """One running service, built from ``settings``; ``load_classifier`` is replaceable for tests."""

    def __init__(self, settings: Settings, load_classifier: ClassifierLoader = load_default_classifier) -> None:
        self.settings = settings
        self.metrics = Metrics()
        self.admission = _admission(settings)  # shared with the HTTP edge (boaf.service.http.server)
        self.servicer = BoafServicer(self.metrics)
        self.game = GameServicer(self.metrics, self.servicer)  # Hint uses the Boaf servicer's data plane
        # Each Watch stream holds a thread of its own (counted against BOAF_MAX_STREAMS): grpc's
        # "non-blocking" Watch would send from whichever thread sets a status, and wait there for slow readers.
        self.health = BoafHealth(experimental_non_blocking=False)
        self.port = 0
        self.metrics_port = 0
        self.load_error: BaseException | None = None
        self.failed_stage = ""  # the stage loading failed in ("loading the model": BOAF_MODEL_DIR's model)
        self.kernels = Kernels()
        self.stage = "starting"  # what the server is doing before SERVING (``/readyz`` says it)
        self.servicer.stage = lambda: COMPILING if self.stage == COMPILING else "the model is still loading"
        self._load_classifier = load_classifier
        self._ready = threading.Event()
        self._settled = threading.Event()  # ready, or loading failed
        self._all_kernels = threading.Event()  # the background kernels (puzzles) are loaded, or failed to
        self._loader: threading.Thread | None = None  # loads the kernels and the model (``start``)
        self.gate = self._gate()
        self._server = self._build_server()
        self.watcher: reload.ModelWatcher | None = None  # set once serving from a model root
        self._stopping = threading.Event()
        self._swap_lock = threading.Lock()  # a swap never runs after stop() began

    def _gate(self) -> CallGate:
        served = [SERVICE_NAME, GAME_SERVICE_NAME, health.SERVICE_NAME]
        if self.settings.reflection_enabled:
            served += reflection_v1.SERVICE_NAMES
        return CallGate(
            self.metrics,
            self.admission,
            services=served,
            probes=(health.SERVICE_NAME,),
        )

    def _build_server(self) -> grpc.Server:
        settings = self.settings
        threads = settings.max_concurrent_rpcs + settings.max_streams + PROBE_CALLS
        server = grpc.server(
            ThreadPoolExecutor(max_workers=threads, thread_name_prefix="boaf-rpc"),
            interceptors=(self.gate,),
            options=_options(settings, self.admission.wait_limit_s()),
            maximum_concurrent_rpcs=threads,  # the caps refuse first; this is only a backstop
        )
        self.gate.busy = _concurrency_exceeded(server)
        boaf_pb2_grpc.add_BoafServicer_to_server(self.servicer, server)
        game_pb2_grpc.add_GameServicer_to_server(self.game, server)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        if settings.reflection_enabled:
            reflection_v1.enable_server_reflection((SERVICE_NAME, GAME_SERVICE_NAME, health.SERVICE_NAME), server)
        self._set_health(health_pb2.HealthCheckResponse.NOT_SERVING)
        return server

    def start(self) -> None:
        """Bind, serve (NOT_SERVING), and load + warm up in the background (no gRPC port when grpc_enabled is off).

        Raises ``InvalidSettings`` naming the setting when a port cannot be bound or a TLS file is
        missing, unreadable or does not match its pair.
        """
        settings = self.settings
        if settings.otel:
            tracing.enable()
        if settings.grpc_enabled:
            self.port = self._bind()
            self._server.start()
        if settings.metrics_enabled:
            self.metrics_port = self._serve_metrics()
        log.info(
            "listening",
            extra={
                "address": f"{settings.host}:{self.port}",
                "metrics_address": f"{settings.metrics_host}:{self.metrics_port}",
                "tls": settings.tls_enabled,
            },
        )
        self._loader = threading.Thread(target=self._load_and_warm_up, name="boaf-load", daemon=True)
        self._loader.start()

    def _serve_metrics(self) -> int:
        settings = self.settings
        try:
            return self.metrics.serve(
                settings.metrics_host, settings.metrics_port, request_timeout_s=settings.http_header_timeout_s
            )
        except OSError as exc:
            hint = f"{env_name('metrics_host')} sets the host"
            raise unbindable("metrics_port", settings.metrics_host, settings.metrics_port, exc, hint) from exc

    def _bind(self) -> int:
        settings = self.settings
        cert, key = settings.tls_cert, settings.tls_key
        try:
            if cert is None or key is None:
                return int(self._server.add_insecure_port(settings.address))
            return int(self._server.add_secure_port(settings.address, _tls_credentials(cert, key)))
        except RuntimeError as exc:  # grpc says only "Failed to bind to address"
            raise InvalidSettings(
                f"{env_name('port')}={settings.port}: cannot listen on {settings.address} (the port is taken, "
                f"or {env_name('host')} is no address of this machine)"
            ) from exc

    def _load_and_warm_up(self) -> None:
        started = time.perf_counter()
        try:
            self.stage = "loading kernels"
            compile_s = self.kernels.prepare([u for u in UNITS if u.at_start], on_stage=self._say_stage)
            if self._stopping.is_set():  # stopped while the kernels loaded: nothing more to load
                self._settled.set()
                self._all_kernels.set()
                return
            self.stage = "loading the model"
            root = reload.model_root(self.settings.model_dir)
            # From a model root, load the version CURRENT names now: the watcher starts from it.
            directory = registry.resolve(root) if root is not None else self.settings.model_dir
            classifier = self._load_classifier(directory)
            self.stage = "warming up"
            plane = DataPlane(self.settings, classifier, self.kernels)
            seconds = plane.warm_up()
        except Exception as exc:  # the server must say why it never became ready, whatever went wrong
            self.load_error = exc
            self.failed_stage = self.stage
            self.stage = "failed to start"
            log.exception("model load or warm-up failed; health stays NOT_SERVING")
            self._settled.set()
            self._all_kernels.set()
            return
        self.servicer.plane = plane
        self.metrics.serve_model(classifier.version)
        settle_heap()  # a later full collection (after large calls) scans only what calls made
        self.stage = "serving"
        self._set_health(health_pb2.HealthCheckResponse.SERVING)
        self.metrics.ready.set(1)
        self._ready.set()
        self._settled.set()
        log.info(
            "serving",
            extra={
                "model_version": classifier.version,
                "kernels_s": round(compile_s, 3),
                "warm_up_s": round(seconds, 3),
                "start_s": round(time.perf_counter() - started, 3),
            },
        )
        if root is not None and directory is not None:
            self._watch(root, directory.name)
        if not self._stopping.is_set():
            self._prepare_later_kernels()

    def _watch(self, root: Path, served: str) -> None:
        with self._swap_lock:
            if self._stopping.is_set():
                return
            self.watcher = reload.ModelWatcher(root, served, self.settings.model_poll_s, self._reload)
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
        return plane

    def _swap(self, plane: DataPlane) -> str:
        # Calls in flight hold the old plane and finish on it; it is freed when the last one ends.
        with self._swap_lock:
            if self._stopping.is_set():
                log.info("model reload abandoned: the server is stopping")
                return reload.ABANDONED
            old = self.servicer.plane
            self.servicer.plane = plane  # the Game servicer reads the Boaf servicer's plane
            self.metrics.serve_model(plane.classifier.version, old.classifier.version if old else None)
        return reload.RELOADED

    def _say_stage(self, stage: str) -> None:
        self.stage = stage
        log.info(stage)

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
            self._all_kernels.set()

    def wait_for_all_kernels(self, timeout: float | None = None) -> bool:
        """Block until the background kernels (puzzles) are loaded too (or failed to); True when they are."""
        self._all_kernels.wait(timeout)
        return all(self.kernels.is_ready(unit.name) for unit in UNITS)

    def _set_health(self, status: int) -> None:
        for name in HEALTH_SERVICES:
            self.health.set(name, status)

    def wait_until_ready(self, timeout: float | None = None) -> bool:
        """Block until SERVING or a load failure (or ``timeout`` seconds); True when SERVING."""
        self._settled.wait(timeout)
        return self._ready.is_set()

    def stop(self, grace: float | None = None) -> None:
        """Health NOT_SERVING, streams ended, then stop; calls in flight get ``grace`` s (default: the settings').

        Calls still running after the grace end UNAVAILABLE with ``SHUTTING_DOWN_MESSAGE``.
        """
        grace = self.settings.shutdown_grace_s if grace is None else grace
        log.info("shutting down", extra={"grace_s": grace})
        with self._swap_lock:
            self._stopping.set()
        if self.watcher is not None:
            self.watcher.stop()  # a reload under way ends before its swap
        self.kernels.stop()  # a first start stopped while its kernels compile ends their processes too
        self.health.enter_graceful_shutdown()
        self.metrics.ready.set(0)
        # gRPC itself cancels ("Cancelling all calls") only after our own grace and a margin.
        stopped = self._server.stop(grace + STOP_MARGIN_S)
        self.gate.drain()  # streams waiting for a request end now, and Watch streams end UNAVAILABLE:
        self.health.end_watches()
        if not stopped.wait(grace):
            self.gate.stop_calls()  # the calls still in flight end UNAVAILABLE, with SHUTTING_DOWN_MESSAGE
            if self.servicer.plane is not None:
                self.servicer.plane.cancel_all()  # and their searches stop
            if not stopped.wait(STOP_MARGIN_S):
                log.warning("calls still running after the grace and its margin: gRPC cancels them")
        stopped.wait()
        # The loader may be inside numba or LLVM (loading a cached kernel): a process that exits under it aborts
        # ("terminate called without an active exception"). It stops at its next stage; wait for that.
        if self._loader is not None and self._loader is not threading.current_thread():
            self._loader.join(LOADER_JOIN_S)
        self.gate.close()
        self.metrics.stop()
        if self.settings.otel:
            tracing.disable()  # sends the spans not yet sent
        log.info("stopped")

    def wait_for_termination(self, timeout: float | None = None) -> bool:
        """Block until the server stops (or ``timeout`` seconds); True when it has stopped."""
        return bool(self._server.wait_for_termination(timeout))


class BoafHealth(health.HealthServicer):  # type: ignore[misc]  # grpcio-health-checking is untyped
    """grpcio's health servicer, plus ``List``: the status of every service it reports on.

    Each Watch stream is handed to grpcio's ``Watch`` as its ``send_response_callback`` and remembered
    here until its call ends, so ``end_watches`` reaches every open stream through grpcio's public API.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._statuses: dict[str, int] = {}
        self._statuses_lock = threading.Lock()
        self._sends: set[Callable[[Any], None]] = set()  # every open Watch's send_response_callback
        self._sends_lock = threading.Lock()

    def set(self, service: str, status: int) -> None:
        """Set ``service``'s status (as grpcio's servicer does) and remember it for ``List``."""
        super().set(service, status)
        with self._statuses_lock:
            self._statuses[service] = status

    def List(self, request: health_pb2.HealthListRequest, context: grpc.ServicerContext) -> Any:
        """Every service's status, including ``""`` (the server as a whole)."""
        with self._statuses_lock:
            statuses = dict(self._statuses)
        return health_pb2.HealthListResponse(
            statuses={name: health_pb2.HealthCheckResponse(status=status) for name, status in statuses.items()}
        )

    def Watch(
        self,
        request: health_pb2.HealthCheckRequest,
        context: grpc.ServicerContext,
        send_response_callback: Callable[[Any], None] | None = None,
    ) -> WatchStream | None:
        """grpcio's ``Watch``; the blocking form (no ``send_response_callback``) answers with a ``WatchStream``."""
        stream = WatchStream() if send_response_callback is None else None
        send = stream.send if stream is not None else send_response_callback
        assert send is not None
        with self._sends_lock:
            self._sends.add(send)
        if not context.add_callback(lambda: self._forget(send)):
            self._forget(send)  # the call has ended already
        super().Watch(request, context, send)
        return stream

    def end_watches(self) -> None:
        """End every open Watch stream (the server is stopping; each has been told NOT_SERVING)."""
        with self._sends_lock:
            sends = list(self._sends)
        for send in sends:
            send(None)  # a blocking Watch's iterator ends

    def _forget(self, send: Callable[[Any], None]) -> None:
        with self._sends_lock:
            self._sends.discard(send)


class WatchStream:
    """A blocking Watch's answers: the latest status not yet taken (a newer one replaces it), until ``send(None)``."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._latest: health_pb2.HealthCheckResponse | None = None
        self._open = True

    def __iter__(self) -> WatchStream:
        return self

    def __next__(self) -> health_pb2.HealthCheckResponse:
        with self._condition:
            while self._latest is None and self._open:
                self._condition.wait()
            if self._latest is None:
                raise StopIteration
            response, self._latest = self._latest, None
            return response

    def send(self, response: health_pb2.HealthCheckResponse | None) -> None:
        """Hand the stream ``response`` (grpcio's ``send_response_callback``); None ends it."""
        with self._condition:
            if response is None:
                self._open = False
            else:
                self._latest = response
            self._condition.notify()


def _admission(settings: Settings) -> Admission:
    try:
        return Admission(settings)
    except (OSError, UnicodeDecodeError) as exc:  # the tokens file
        name = env_name("api_tokens_file")
        raise InvalidSettings(f"{name}={settings.api_tokens_file}: cannot read it ({exc})") from exc


def _options(settings: Settings, longest_call_s: float) -> list[tuple[str, int]]:
    idle_ms = round(settings.idle_timeout_s * 1000)
    return [
        # The gate refuses messages past the limit itself (OUT_OF_RANGE, counted); core only past a hard cap.
        ("grpc.max_receive_message_length", HARD_MESSAGE_FACTOR * settings.max_message_bytes),
        ("grpc.max_send_message_length", settings.max_message_bytes),
        ("grpc.so_reuseport", 0),  # a second server on a taken port must fail, not share it
        ("grpc.max_connection_idle_ms", idle_ms),  # a connection with no call for this long is closed
        # Every connection ends after CONNECTION_AGE_S; its calls get the longest a call may take, and the
        # time to take the answer (the gate cancels one not taken within the idle timeout). This bounds how
        # long any client holds a stream place (a Watch never ends by itself), and spreads clients over pods.
        ("grpc.max_connection_age_ms", CONNECTION_AGE_S * 1000),
        ("grpc.max_connection_age_grace_ms", round(longest_call_s * 1000) + idle_ms),
        ("grpc.keepalive_time_ms", KEEPALIVE_S * 1000),
        ("grpc.keepalive_timeout_ms", KEEPALIVE_TIMEOUT_S * 1000),
    ]


def _tls_credentials(cert: Path, key: Path) -> grpc.ServerCredentials:
    # grpc says only "Failed to bind to address" for a bad pair; check it first, and name the setting.
    pems = {name: _read_setting_file(name, path) for name, path in (("tls_cert", cert), ("tls_key", key))}
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(cert, key)
    except ssl.SSLError as exc:
        raise InvalidSettings(
            f"{env_name('tls_key')}={key}: not a PEM private key of the certificate in "
            f"{env_name('tls_cert')}={cert} ({exc.reason or exc})"
        ) from exc
    return grpc.ssl_server_credentials([(pems["tls_key"], pems["tls_cert"])])


def _read_setting_file(name: str, path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InvalidSettings(f"{env_name(name)}={path}: cannot read it ({exc.strerror or exc})") from exc


def _concurrency_exceeded(server: grpc.Server) -> Callable[[], bool]:
    # gRPC turns a call away when its active calls are at maximum_concurrent_rpcs, before any handler runs:
    # with the caps counted by the gate, only when every thread of the pool is taken (both caps full and
    # every probe place busy). Those refusals are counted too, by this check.
    # The interceptor runs just before that check, under the same lock, so reading the same two numbers
    # tells it which calls will be turned away and lets it count them. They are grpcio internals
    # (tests/service/test_hostile.py and tests/test_dependency_internals.py fail if they change); without them
    # nothing is counted.
    state = getattr(server, "_state", None)
    if state is None or not hasattr(state, "active_rpc_count"):
        return lambda: False
    return lambda: state.maximum_concurrent_rpcs is not None and state.active_rpc_count >= state.maximum_concurrent_rpcs
