"""Prometheus metrics of one server, in a registry of its own, served over HTTP on a separate port.

Each ``Metrics`` owns its ``CollectorRegistry`` (no process-wide default), so
several servers in one process (the tests) never share counters.
"""

from __future__ import annotations

import threading
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

LATENCY_BUCKETS_S = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
NODE_BUCKETS = (1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000)
BATCH_BUCKETS = (1, 10, 100, 1_000, 10_000, 100_000)


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
        self._http: WSGIServer | None = None
        self._thread: threading.Thread | None = None

    def record(self, method: str, code: str, seconds: float) -> None:
        """Count one finished RPC and its latency in seconds."""
        self.requests.labels(method, code).inc()
        self.latency.labels(method, code).observe(seconds)

    def serve(self, host: str, port: int) -> int:
        """Serve ``/metrics`` over HTTP on ``host:port`` (0 = a free port) in a daemon thread; returns the port."""
        self._http, self._thread = start_http_server(port, addr=host, registry=self.registry)
        return int(self._http.server_port)

    def stop(self) -> None:
        """Stop the HTTP server, if running."""
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            self._http = None
