"""The gRPC edge: Boaf, Game, health and reflection on one port.

A ``BoafServer`` is one of the peers that ``boaf.service.app.BoafService`` composes and
owns the lifecycle of (``boaf.service.core.lifecycle``). Its part of that life:

1. Built, health is NOT_SERVING (for ``""`` and ``boaf.v1.Boaf``), and every Boaf RPC
   answers UNAVAILABLE, saying what the service is doing (``Lifecycle.not_ready_reason``),
   until its servicer has a ``DataPlane``. ``start()`` binds the port and serves at once.
2. ``serve()``: the servicer has its plane, and health turns SERVING.
3. ``stop(grace, on_grace_over)`` turns health NOT_SERVING (so load balancers and Watch
   streams learn first), answers new calls UNAVAILABLE, ends the streams (UNAVAILABLE), and
   gives the calls in flight ``grace`` seconds; those still running then end UNAVAILABLE
   with ``errors.SHUTTING_DOWN_MESSAGE``, and ``on_grace_over`` stops their searches. gRPC
   itself stops (GOAWAY) once no call is in flight.

Threads (``boaf.service.core.admission`` has the whole model): the gRPC pool has a thread
for every call and stream the caps admit and every call waiting for a place
(``Admission.max_place_waiters``), plus ``PROBE_CALLS`` for health checks, and gRPC's
own ``maximum_concurrent_rpcs`` is the same number, a backstop only.
Connections: at most ``max_connections`` on the listener (the gRPC edge's share of the
descriptor limit, ``boaf.service.core.descriptors``; core closes one past it as it
accepts it); one that has not sent the HTTP/2 preface and its SETTINGS (after TLS)
within ``HANDSHAKE_TIMEOUT_S`` is closed; one idle for ``BOAF_IDLE_TIMEOUT_S`` is closed;
every connection is closed after ``CONNECTION_AGE_S`` (clients reconnect at once), giving
the calls on it the longest time a call may take; keepalive pings find dead peers.
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

from boaf.service.core.admission import Admission
from boaf.service.core.lifecycle import Lifecycle
from boaf.service.core.metrics import Metrics
from boaf.service.core.settings import InvalidSettings, Settings, env_name
from boaf.service.grpc import reflection as reflection_v1
from boaf.service.grpc.game_servicer import GameServicer
from boaf.service.grpc.interceptors import HARD_MESSAGE_FACTOR, PROBE_CALLS, CallGate
from boaf.service.grpc.servicer import BoafServicer
from boaf.v1 import boaf_pb2, boaf_pb2_grpc, game_pb2, game_pb2_grpc

log = logging.getLogger(__name__)

SERVICE_NAME = boaf_pb2.DESCRIPTOR.services_by_name["Boaf"].full_name  # "boaf.v1.Boaf"
GAME_SERVICE_NAME = game_pb2.DESCRIPTOR.services_by_name["Game"].full_name  # "boaf.v1.Game"
HEALTH_SERVICES = ("", SERVICE_NAME)

CONNECTION_AGE_S = 1800  # a connection lives at most this long (gRPC adds up to 10 % jitter), then clients reconnect
KEEPALIVE_S = 60  # the server pings a connection quiet for this long, to find dead peers ...
KEEPALIVE_TIMEOUT_S = 20  # ... and closes it when the ping gets no answer within this
HANDSHAKE_TIMEOUT_S = 5  # a connection that has not sent the HTTP/2 preface and SETTINGS (after TLS) by then is closed
MAX_CONNECTIONS = 4096  # connections on the listener, unless the service's descriptor plan gives another cap
DRAIN_POLL_S = 0.01  # how often a stop looks whether the calls in flight have ended
STOP_MARGIN_S = 1.0  # after the grace, calls get this long to end UNAVAILABLE themselves before gRPC cancels them


class BoafServer:
    """The gRPC edge of one service: its servicers, health, the admission gate and the server on ``settings.port``.

    ``metrics`` and ``admission`` are the service's, shared with the HTTP edge; ``lifecycle`` says
    what an early call is told.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        metrics: Metrics,
        admission: Admission,
        lifecycle: Lifecycle,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        self.settings = settings
        self.max_connections = max_connections
        self.metrics = metrics
        self.admission = admission
        self.servicer = BoafServicer(self.metrics)
        self.game = GameServicer(self.metrics, self.servicer)  # Hint uses the Boaf servicer's data plane
        self.servicer.stage = lifecycle.not_ready_reason
        # Each Watch stream holds a thread of its own (counted against BOAF_MAX_STREAMS): grpc's
        # "non-blocking" Watch would send from whichever thread sets a status, and wait there for slow readers.
        self.health = BoafHealth(experimental_non_blocking=False)
        self.port = 0
        self.gate = self._gate()
        self._server = self._build_server()

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
        places = settings.max_concurrent_rpcs + self.admission.max_place_waiters  # calls in flight and waiting
        threads = places + settings.max_streams + PROBE_CALLS
        server = grpc.server(
            ThreadPoolExecutor(max_workers=threads, thread_name_prefix="boaf-rpc"),
            interceptors=(self.gate,),
            options=_options(settings, self.admission.wait_limit_s(), self.max_connections, streams=2 * threads),
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
        """Bind ``settings.address`` and serve (``port`` is the bound port).

        Raises ``InvalidSettings`` naming the setting when the port cannot be bound or a TLS file is
        missing, unreadable or does not match its pair.
        """
        settings = self.settings
        cert, key = settings.tls_cert, settings.tls_key
        try:
            if cert is None or key is None:
                self.port = int(self._server.add_insecure_port(settings.address))
            else:
                self.port = int(self._server.add_secure_port(settings.address, _tls_credentials(cert, key)))
        except RuntimeError as exc:  # grpc says only "Failed to bind to address"
            raise InvalidSettings(
                f"{env_name('port')}={settings.port}: cannot listen on {settings.address} (the port is taken, "
                f"or {env_name('host')} is no address of this machine)"
            ) from exc
        self._server.start()

    def serve(self) -> None:
        """Health SERVING: the servicer has its data plane."""
        self._set_health(health_pb2.HealthCheckResponse.SERVING)

    def _set_health(self, status: int) -> None:
        for name in HEALTH_SERVICES:
            self.health.set(name, status)

    def stop(self, grace: float, on_grace_over: Callable[[], None]) -> None:
        """Health NOT_SERVING, new calls UNAVAILABLE, streams ended; calls in flight get ``grace`` s; then stop.

        Calls still running after the grace end UNAVAILABLE with ``SHUTTING_DOWN_MESSAGE``, and
        ``on_grace_over()`` runs then (it stops their searches). Returns once the server has stopped.

        gRPC core stops only once the calls in flight have ended: from its stop on, a call that has
        arrived but is not yet handed to grpcio is cancelled (CANCELLED), so until then the gate answers
        every new call itself, UNAVAILABLE, and no call in flight at the stop can be cut that way.
        """
        self.health.enter_graceful_shutdown()
        self.gate.drain()  # new calls end UNAVAILABLE, streams waiting for a request end now, and Watch streams end:
        self.health.end_watches()
        if not self._calls_end(grace):
            self.gate.stop_calls()  # the calls still in flight end UNAVAILABLE, with SHUTTING_DOWN_MESSAGE
            on_grace_over()
            if not self._calls_end(STOP_MARGIN_S):
                log.warning("calls still running after the grace and its margin: gRPC cancels them")
        self._server.stop(STOP_MARGIN_S).wait()  # GOAWAY; core cancels what is left after the margin
        self.gate.close()

    def _calls_end(self, timeout: float) -> bool:
        """Wait until no call or stream is admitted (on either edge), at most ``timeout`` s; True when none is."""
        give_up = time.monotonic() + timeout
        while self.admission.calls or self.admission.streams:
            if time.monotonic() >= give_up:
                return False
            time.sleep(DRAIN_POLL_S)
        return True

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


def _options(settings: Settings, longest_call_s: float, max_connections: int, *, streams: int) -> list[tuple[str, int]]:
    idle_ms = round(settings.idle_timeout_s * 1000)
    return [
        # A connection may hold every thread of the pool and as many calls again (the gate, then gRPC's backstop,
        # turn calls past the caps away before this binds). With a limit, core refuses a stream past it
        # (RST_STREAM REFUSED_STREAM), counting streams a client has reset until their calls have ended: rapid
        # resets then cost one connection at most this many calls in flight, and other clients' calls go on
        # (docs/service.md, "HTTP/2 frames").
        ("grpc.max_concurrent_streams", streams),
        # Past the cap core closes a new connection as it accepts it, silently; one that has not finished its
        # handshake (TLS, then the HTTP/2 preface and SETTINGS) within the timeout is closed too.
        ("grpc.max_allowed_incoming_connections", max_connections),
        ("grpc.server_handshake_timeout_ms", HANDSHAKE_TIMEOUT_S * 1000),
        # The gate refuses messages past the limit itself (OUT_OF_RANGE, counted); core only past a hard cap.
        ("grpc.max_receive_message_length", HARD_MESSAGE_FACTOR * settings.max_message_bytes),
        ("grpc.max_send_message_length", settings.max_message_bytes),
        ("grpc.per_message_decompression", 0),  # the gate inflates compressed messages, up to the limit (compression)
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
