"""The HTTP server (uvicorn, in a thread of its own) beside a ``BoafServer``.

It shares everything with the gRPC side: the settings, the servicers (so the
data plane and its limits), the metrics and the readiness; only the port
(``BOAF_HTTP_PORT``) is its own.
"""

from __future__ import annotations

import logging
import math
import socket
import threading
import time

import uvicorn

from service.generated.boaf.v1 import boaf_pb2, game_pb2
from service.http.app import build_app
from service.server import BoafServer

log = logging.getLogger(__name__)

START_TIMEOUT_S = 30.0


class HttpServer:
    """Serves ``boaf``'s servicers over HTTP/JSON on ``settings.http_port`` (0: a free port), with the page."""

    def __init__(self, boaf: BoafServer) -> None:
        self.boaf = boaf
        self.settings = boaf.settings
        self.port = 0
        self._stopping = False
        services = [
            (boaf_pb2.DESCRIPTOR.services_by_name["Boaf"], boaf.servicer),
            (game_pb2.DESCRIPTOR.services_by_name["Game"], boaf.game),
        ]
        self.app = build_app(services, self.settings, boaf.metrics, self.is_ready, lambda: boaf.stage)
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def is_ready(self) -> bool:
        """True while the gRPC side reports SERVING and this server is not stopping."""
        return not self._stopping and self.boaf.wait_until_ready(0)

    def start(self) -> None:
        """Bind (raises ``OSError`` when the port is taken) and serve in a daemon thread."""
        settings = self.settings
        listener = _bind(settings.host, settings.http_port)
        self.port = int(listener.getsockname()[1])
        config = uvicorn.Config(
            self.app,
            log_config=None,  # keep the service's JSON logging
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=max(1, math.ceil(settings.shutdown_grace_s)),  # 0 would log an error
            ssl_certfile=settings.tls_cert,
            ssl_keyfile=settings.tls_key,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [listener]}, name="boaf-http")
        self._thread.daemon = True
        self._thread.start()
        give_up = time.monotonic() + START_TIMEOUT_S
        while not self._server.started and self._thread.is_alive() and time.monotonic() < give_up:
            time.sleep(0.01)
        if not self._server.started:
            raise RuntimeError("the HTTP server did not start")
        log.info("listening (HTTP)", extra={"address": f"{settings.host}:{self.port}", "tls": settings.tls_enabled})

    def shutdown(self) -> None:
        """Readiness off and stop accepting calls, without waiting; ``stop()`` waits."""
        self._stopping = True
        if self._server is not None:
            self._server.should_exit = True

    def stop(self) -> None:
        """``shutdown()``, then wait: calls in flight get ``shutdown_grace_s`` seconds, then are cancelled."""
        self.shutdown()
        if self._thread is not None:
            self._thread.join()


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
