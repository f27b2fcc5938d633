"""``/readyz`` says what the server is doing before SERVING, and while kernels compile how far they are."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from http_client import Client
from servers import GatedLoader, loopback_settings, start_server

from boaf.service.app import BoafService
from boaf.service.core.compile_log import COMPILING, CompileProgress
from boaf.service.core.lifecycle import Stage
from boaf.service.http import HttpServer


@pytest.fixture
def loading() -> Iterator[tuple[BoafService, Client, GatedLoader]]:
    """A server held before SERVING (its model loader waits), its HTTP client, and the loader to release."""
    loader = GatedLoader()
    server = start_server(loopback_settings(http_port=0, grpc_enabled=False), loader)
    web = HttpServer(server)
    web.start()
    try:
        assert loader.called.wait(120)
        yield server, Client(f"http://127.0.0.1:{web.port}"), loader
    finally:
        loader.release()
        web.stop()
        server.stop(0)


def test_readyz_counts_the_kernels_compiled_until_serving(loading: tuple[BoafService, Client, GatedLoader]) -> None:
    server, client, loader = loading
    assert client.get("/readyz").body == {"status": "NOT_SERVING", "stage": "loading the model"}
    server.lifecycle.enter(Stage.COMPILING)  # as a first start is while its child processes compile
    assert client.get("/readyz").body == {"status": "NOT_SERVING", "stage": COMPILING}  # none started yet
    server.kernels.progress = CompileProgress(done=1, total=4)
    answer = client.get("/readyz")
    assert (answer.status, answer.headers["retry-after"]) == (503, "5")
    assert answer.body == {"status": "NOT_SERVING", "stage": COMPILING, "kernels_compiled": 1, "kernels_total": 4}
    server.lifecycle.enter(Stage.LOADING_MODEL)  # a count belongs to the compiling stage only
    assert client.get("/readyz").body == {"status": "NOT_SERVING", "stage": "loading the model"}
    server.kernels.progress = None
    loader.release()
    assert server.wait_until_ready(120)
    assert client.get("/readyz").body == {"status": "SERVING"}
