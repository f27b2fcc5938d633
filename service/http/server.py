"""The HTTP server (uvicorn, in a thread of its own): the HTTP edge of a service.

It shares everything with the gRPC edge through the service that owns both
(``Served``: ``boaf.service.app.BoafService``): the settings, the servicers (so the
data plane and its limits), the admission (calls in flight, work slots, tokens),
the metrics and the lifecycle (readiness, and the stage ``/readyz`` says); only the
port (``BOAF_HTTP_PORT``) is its own.

Connections are bounded in time: headers within ``BOAF_HTTP_HEADER_TIMEOUT_S``
(``protocol.HeaderTimedProtocol``), a body within ``BOAF_HTTP_BODY_TIMEOUT_S``
(the edge), an answer taken within ``BOAF_IDLE_TIMEOUT_S`` (else the connection
is cut, ``protocol``), and an idle keep-alive connection closes after ``BOAF_IDLE_TIMEOUT_S``.
A connection past ``max_connections`` (the edge's share of the descriptor limit,
``boaf.service.core.descriptors``) is closed as it opens, before it is read.
Stopping closes idle and half-sent connections at once; calls in flight get
``shutdown_grace_s``, then answer UNAVAILABLE.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import math
import socket
import threading
import time
from typing import Any, Protocol

import uvicorn

from boaf.service.core.admission import Admission
from boaf.service.core.compile_log import CompileProgress
from boaf.service.core.lifecycle import Lifecycle, Stage
from boaf.service.core.metrics import Metrics
from boaf.service.core.settings import Settings
from boaf.service.core.warmup import Kernels
from boaf.service.http.app import HasHandlers, build_app
from boaf.service.http.guards import install_request_id_logging
from boaf.service.http.protocol import (
    MAX_CONNECTIONS,
    ConnectionRefusals,
    HeaderTimedProtocol,
    drop_uvicorn_bad_request_warnings,
)
from boaf.v1 import boaf_pb2, game_pb2

log = logging.getLogger(__name__)

START_TIMEOUT_S = 30.0
# uvicorn cancels what is left this long after the grace period, by when every call has answered UNAVAILABLE.
ANSWER_MARGIN_S = 5


class Served(Protocol):
    """What the HTTP edge serves and shares with the gRPC edge: the service that owns them both."""

    @property
    def settings(self) -> Settings: ...
    @property
    def metrics(self) -> Metrics: ...
    @property
    def admission(self) -> Admission: ...
    @property
    def lifecycle(self) -> Lifecycle: ...
    @property
    def kernels(self) -> Kernels: ...
    @property
    def servicer(self) -> HasHandlers: ...  # boaf.v1.Boaf's
    @property
    def game(self) -> HasHandlers: ...  # boaf.v1.Game's


class HttpServer:
    """Serves ``boaf``'s servicers over HTTP/JSON on ``settings.http_port`` (0: a free port), with the page."""

    def __init__(self, boaf: Served, *, max_connections: int = MAX_CONNECTIONS) -> None:
        self.boaf = boaf
        self.max_connections = max_connections
        self.settings = boaf.settings
        self.lifecycle = boaf.lifecycle
        self.port = 0
        self._stopping = False
        services = [
            (boaf_pb2.DESCRIPTOR.services_by_name["Boaf"], boaf.servicer.handlers),
            (game_pb2.DESCRIPTOR.services_by_name["Game"], boaf.game.handlers),
        ]
        self.app = build_app(
            services,
            self.settings,
            boaf.metrics,
            boaf.admission,
            is_ready=self.is_ready,
            stage=lambda: self.lifecycle.stage.value,
            compile_progress=functools.partial(_compile_progress, self.lifecycle, boaf.kernels),
        )
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def connections(self) -> int:
        """HTTP connections open now, those still writing an answer included."""
        return 0 if self._server is None else len(self._server.server_state.connections)

    def is_ready(self) -> bool:
        """True while the service is SERVING (as gRPC health says) and this server is not stopping."""
        return not self._stopping and self.lifecycle.is_ready

    def start(self) -> None:
        """Bind (raises ``OSError`` when the port is taken) and serve in a daemon thread."""
        settings = self.settings
        listener = _bind(settings.host, settings.http_port)
        self.port = int(listener.getsockname()[1])
        protocol: Any = functools.partial(
            HeaderTimedProtocol,
            header_timeout_s=settings.http_header_timeout_s,
            answer_timeout_s=settings.idle_timeout_s,
            max_connections=self.max_connections,
            refusals=ConnectionRefusals(),
        )
        config = uvicorn.Config(
            self.app,
            http=protocol,
            log_config=None,  # keep the service's JSON logging
            access_log=False,
            lifespan="off",
            timeout_keep_alive=settings.idle_timeout_s,  # type: ignore[arg-type]  # a float works: call_later
            timeout_graceful_shutdown=math.ceil(settings.shutdown_grace_s) + ANSWER_MARGIN_S,
            ssl_certfile=settings.tls_cert,
            ssl_keyfile=settings.tls_key,
        )
        install_request_id_logging()
        drop_uvicorn_bad_request_warnings()
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, args=(listener,), name="boaf-http")
        self._thread.daemon = True
        self._thread.start()
        give_up = time.monotonic() + START_TIMEOUT_S
        while not self._server.started and self._thread.is_alive() and time.monotonic() < give_up:
            time.sleep(0.01)
        if not self._server.started:
            raise RuntimeError("the HTTP server did not start")
        log.info("listening (HTTP)", extra={"address": f"{settings.host}:{self.port}", "tls": settings.tls_enabled})

    def _run(self, listener: socket.socket) -> None:
        assert self._server is not None
        asyncio.run(self._serve(self._server, listener))

    async def _serve(self, server: uvicorn.Server, listener: socket.socket) -> None:
        self._loop = asyncio.get_running_loop()  # where shutdown() tells the edge to stop
        await server.serve(sockets=[listener])

    def shutdown(self) -> None:
        """Readiness off and stop accepting calls, without waiting; ``stop()`` waits.

        New calls answer UNAVAILABLE; calls in flight get ``shutdown_grace_s`` seconds, then answer
        UNAVAILABLE with ``errors.SHUTTING_DOWN_MESSAGE``. Idle and half-sent connections close at once.
        """
        if self._stopping:
            return
        self._stopping = True
        grace_ends_at = time.perf_counter() + self.settings.shutdown_grace_s  # counted from now, as gRPC's stop
        if self._loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has ended already: no call is in flight
                self._loop.call_soon_threadsafe(self.app.state.edge.begin_shutdown, grace_ends_at)
        if self._server is not None:
            self._server.should_exit = True

    def stop(self) -> None:
        """``shutdown()``, then wait until every connection is closed (at most the grace period and a few seconds)."""
        self.shutdown()
        if self._thread is not None:
            self._thread.join()


def _compile_progress(lifecycle: Lifecycle, kernels: Kernels) -> CompileProgress | None:
    # ``/readyz`` counts the units compiled only while the service is in its compiling stage.
    return kernels.progress if lifecycle.stage is Stage.COMPILING else None


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit this: without it, a keep-alive call's answer (headers, then body)
    # waits ~40 ms for the client's delayed ACK.
    listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        listener.bind((host, port))
    except OSError:
        listener.close()
        raise
    listener.listen(128)
    listener.set_inheritable(True)
    return listener
