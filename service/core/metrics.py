"""Prometheus metrics of one server, in a registry of its own, served over HTTP on a separate port.

Each ``Metrics`` owns its ``CollectorRegistry`` (no process-wide default), so
several servers in one process (the tests) never share counters.

The metrics port binds ``BOAF_METRICS_HOST`` (loopback unless set), and its
small HTTP server cannot be held by slow clients: one request per connection
(HTTP/1.0, no idle keep-alive), a connection cut ``request_timeout_s`` after it
opened whatever it has sent (slowloris), and at most ``METRICS_CONNECTIONS`` at
once (more are closed at once; Prometheus retries at its next scrape).

A burst of connections faster than the accept loop waits in the listen backlog
(``METRICS_BACKLOG``, capped by the kernel's ``net.core.somaxconn``), then is accepted
and served or closed as above. Past the backlog the kernel completes a connection
without the process (a SYN cookie): the client sees it open, the process holds no
descriptor or thread for it, and it ends when the client sends or gives up.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import numpy as np
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import choose_encoder

from boaf.service.core.limits import env_name

log = logging.getLogger(__name__)

LATENCY_BUCKETS_S = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
NODE_BUCKETS = (1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000)
BATCH_BUCKETS = (1, 10, 100, 1_000, 10_000, 100_000)
METRICS_CONNECTIONS = 64  # open connections the metrics port serves at once
METRICS_BACKLOG = 1024  # connections the kernel queues for the accept loop (socketserver's default: 5)
METRICS_PATHS = frozenset({"/", "/metrics"})


class Children:
    """A labelled metric's children, each looked up once (``labels()`` checks and locks on every call).

    Only for label values from a fixed set (methods, codes, flags): the cache keeps every child it made.
    """

    def __init__(self, metric: Any) -> None:
        self.metric = metric
        self._made: dict[tuple[str, ...], Any] = {}

    def __call__(self, *values: str) -> Any:
        child = self._made.get(values)
        if child is None:
            child = self._made[values] = self.metric.labels(*values)
        return child


class Metrics:
    """Request counts by method and code, latencies, batch sizes, solve nodes and readiness."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "boaf_requests",
            "RPCs finished, by method and gRPC status code, including those turned away before a handler ran "
            "(unknown method, concurrency limit, oversized or undecodable message).",
            ["method", "code"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "boaf_request_duration_seconds",
            "Time from an RPC's arrival to its answer, in seconds, by method and gRPC status code.",
            ["method", "code"],
            buckets=LATENCY_BUCKETS_S,
            registry=self.registry,
        )
        self.in_flight = Gauge("boaf_requests_in_flight", "RPCs being served now.", ["method"], registry=self.registry)
        self.batch_states = Histogram(
            "boaf_batch_states",
            "States per Classify or Features request.",
            ["method"],
            buckets=BATCH_BUCKETS,
            registry=self.registry,
        )
        self.solve_nodes = Histogram(
            "boaf_solve_nodes",
            "Nodes expanded per finished Solve, by status.",
            ["status"],
            buckets=NODE_BUCKETS,
            registry=self.registry,
        )
        self.ready = Gauge("boaf_ready", "1 when the health service reports SERVING.", registry=self.registry)
        self.model_info = Gauge(
            "boaf_model_info", "1 for the model version being served.", ["version"], registry=self.registry
        )
        self.model_reloads = Counter(
            "boaf_model_reloads",
            "Model reloads by outcome: reloaded, failed (load or warm-up), refused (two models would not fit "
            f"{env_name('memory_limit_mb')}), abandoned (the server stopped).",
            ["outcome"],
            registry=self.registry,
        )
        self.model_reload_refused = Counter(
            "boaf_model_reload_refused",
            "Contents of the model root's CURRENT refused before any load, by reason: too_long, not_text, "
            "not_a_name (a path, '..', a hidden or empty name), outside_root (a link out of the root), "
            "not_a_version (no such directory). Counted once per content (again on SIGHUP).",
            ["reason"],
            registry=self.registry,
        )
        self.answers = Counter(
            "boaf_classify_answers",
            "States answered by Classify, and move results by Game Hint, by method and whether the answer is "
            "exact (the search settled it) or the model's estimate.",
            ["method", "exact"],
            registry=self.registry,
        )
        self.answers_evicted = Counter(
            "boaf_answers_evicted",
            "gRPC answers cancelled while they waited for their clients to take them, to make room: the oldest "
            "waiting answers, past BOAF_MAX_CONCURRENT_RPCS of them or their share of its messages' bytes.",
            registry=self.registry,
        )
        # The children every call touches, looked up once (method and code names are a fixed set).
        self.in_flight_of = Children(self.in_flight)
        self.batch_states_of = Children(self.batch_states)
        self._requests_of = Children(self.requests)
        self._latency_of = Children(self.latency)
        self._answers_of = Children(self.answers)
        self._http: MetricsServer | None = None
        self._thread: threading.Thread | None = None

    def record(self, method: str, code: str, seconds: float) -> None:
        """Count one finished RPC and its latency in seconds."""
        self._requests_of(method, code).inc()
        self._latency_of(method, code).observe(seconds)

    def count_answers(self, method: str, exact: np.ndarray) -> None:
        """Count a call's answers: ``exact`` holds one bool per state (True: settled by the exact path)."""
        settled = int(np.count_nonzero(exact))
        self._answers_of(method, "true").inc(settled)
        self._answers_of(method, "false").inc(len(exact) - settled)

    def serve_model(self, version: str, replaced: str | None = None) -> None:
        """``boaf_model_info``: ``version`` is served now (in place of ``replaced``)."""
        self.model_info.labels(version).set(1)
        if replaced is not None and replaced != version:
            self.model_info.remove(replaced)

    def serve(self, host: str, port: int, request_timeout_s: float = 10.0) -> int:
        """Serve ``/metrics`` over HTTP on ``host:port`` (0 = a free port) in a daemon thread; returns the port.

        Raises ``OSError`` when the address cannot be bound.
        """
        self._http = MetricsServer((host, port), self.registry, request_timeout_s)
        self._thread = threading.Thread(target=self._http.serve_forever, name="boaf-metrics", daemon=True)
        self._thread.start()
        return int(self._http.server_address[1])

    def stop(self) -> None:
        """Stop the HTTP server, if running."""
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            self._http = None


class MetricsServer(ThreadingHTTPServer):
    """The metrics port's HTTP server (see the module notes): a thread per connection, few connections, short ones."""

    daemon_threads = True
    request_queue_size = METRICS_BACKLOG  # listen()'s backlog

    def __init__(self, address: tuple[str, int], registry: CollectorRegistry, request_timeout_s: float) -> None:
        self.registry = registry
        self.request_timeout_s = request_timeout_s
        self._connections = threading.BoundedSemaphore(METRICS_CONNECTIONS)
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        super().__init__(address, _MetricsHandler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._connections.acquire(blocking=False):
            self.shutdown_request(request)  # full: closed at once, no thread
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._connections.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that resets or is cut off is no error of the server's (and no traceback on stderr).
        log.debug("metrics connection ended early", extra={"peer": str(client_address)}, exc_info=True)


class _MetricsHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # one request per connection: nothing idles between scrapes
    server: MetricsServer

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.request_timeout_s)  # each read and write
        # The whole connection, however slowly its bytes trickle in.
        self._cut = threading.Timer(self.server.request_timeout_s, self._close)
        self._cut.daemon = True
        self._cut.start()

    def finish(self) -> None:
        self._cut.cancel()
        with contextlib.suppress(OSError):  # cut off, or the client went away
            super().finish()

    def _close(self) -> None:
        with contextlib.suppress(OSError):  # closed already
            self.connection.shutdown(socket.SHUT_RDWR)

    def do_GET(self) -> None:  # http.server's name
        if urlsplit(self.path).path not in METRICS_PATHS:
            self.send_error(404, "only /metrics is served here")
            return
        encoder, content_type = choose_encoder(self.headers.get("Accept", ""))
        body = encoder(self.server.registry)
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # http.server's signature
        log.debug("metrics: " + format, *args)
