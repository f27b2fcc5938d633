"""The session's HTTP server beside a gRPC server on loopback ports, and a small JSON client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from http_client import Client
from servers import loopback_settings, ready_server

from service.http import HttpServer
from service.server import BoafServer


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
