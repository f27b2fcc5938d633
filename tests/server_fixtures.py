"""The session's server on a loopback port, a channel to it, and a stub: fixtures for the conftests that import them."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest
from servers import channel_to, loopback_settings, ready_server

from boaf.service.app import BoafService
from boaf.v1 import boaf_pb2_grpc


@pytest.fixture(scope="session")
def server() -> Iterator[BoafService]:
    """The session's server, SERVING with the committed default model."""
    running = ready_server(loopback_settings())
    yield running
    running.stop(0)


@pytest.fixture(scope="session")
def channel(server: BoafService) -> Iterator[grpc.Channel]:
    with channel_to(server) as open_channel:
        yield open_channel


@pytest.fixture(scope="session")
def stub(channel: grpc.Channel) -> boaf_pb2_grpc.BoafStub:
    return boaf_pb2_grpc.BoafStub(channel)
