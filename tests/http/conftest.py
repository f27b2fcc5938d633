"""The session's HTTP server beside a gRPC server on loopback ports, a strict one, and a small JSON client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from http_client import Client
from servers import loopback_settings, ready_server

from boaf.service.grpc.server import BoafServer
from boaf.service.http import HttpServer

TOKEN = "s3cret-token"
ORIGIN = "https://play.example"
# Every edge rule on, with timeouts short enough to wait for in a test.
STRICT = {
    "grpc_enabled": False,
    "http_header_timeout_s": 0.5,
    "http_body_timeout_s": 0.5,
    "idle_timeout_s": 0.5,
    "shutdown_grace_s": 0.5,
    "api_tokens": f"{TOKEN},another-token",
    "allowed_hosts": "boaf.test,127.0.0.1",
    "cors_origins": f"{ORIGIN}, https://other.example/",
    "page_enabled": False,
}


@pytest.fixture(scope="session")
def grpc_server() -> Iterator[BoafServer]:
    """A SERVING gRPC server (test limits) whose servicers the HTTP server shares."""
    running = ready_server(loopback_settings(http_port=0))
    yield running
    running.stop(0)


@pytest.fixture(scope="session")
def http_server(grpc_server: BoafServer) -> Iterator[HttpServer]:
    server = HttpServer(grpc_server)
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def client(http_server: HttpServer) -> Client:
    return Client(f"http://127.0.0.1:{http_server.port}")


@pytest.fixture(scope="session")
def strict_boaf() -> Iterator[BoafServer]:
    """A SERVING server (no gRPC port) with ``STRICT``'s settings, for HTTP servers of its own."""
    running = ready_server(loopback_settings(http_port=0, **STRICT))
    yield running
    running.stop(0)


@pytest.fixture(scope="session")
def strict_server(strict_boaf: BoafServer) -> Iterator[HttpServer]:
    server = HttpServer(strict_boaf)
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def strict(strict_server: HttpServer) -> Client:
    """A client of the strict server (it sends no token by itself)."""
    return Client(f"http://127.0.0.1:{strict_server.port}")
