"""GETs from pages on other sites: refused before any work; the server's own pages and other clients served.

A page on any site can make a browser send a simple GET (``<img src>``, ``<script src>``, a
``no-cors`` fetch), and CORS only hides the answer from it. The HTTP edge refuses an RPC's GET
that comes from another site (``boaf.service.http.guards.cross_site``) with PERMISSION_DENIED
(403), before its query is decoded or the call admitted.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from http_client import Client

import boaf.service.http.app as http_app
from boaf.service.grpc.server import BoafServer

from .conftest import ORIGIN, TOKEN

DEAL = "/boaf.v1.Game/Deal?" + urllib.parse.urlencode({"connect": "v1", "encoding": "json", "message": '{"seed": 1}'})
EVIL = "https://evil.example"


def count(server: BoafServer, method: str, code: str) -> float:
    value = server.metrics.registry.get_sample_value("boaf_requests_total", {"method": method, "code": code})
    return value or 0.0


@pytest.fixture
def decoded(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The queries the edge decoded (``wire.get_request``): the first work a GET's call does."""
    seen: list[str] = []
    real: Callable[..., Any] = http_app.get_request

    def counting(query: str, max_bytes: int) -> Any:
        seen.append(query)
        return real(query, max_bytes)

    monkeypatch.setattr(http_app, "get_request", counting)
    yield seen


def own_origin(client: Client) -> str:
    host, port = client.address
    return f"http://{host}:{port}"


SERVED: list[tuple[str, dict[str, str]]] = [
    ("a client outside a browser", {}),
    ("the server's own page", {"Sec-Fetch-Site": "same-origin"}),
    ("a page on the same site", {"Sec-Fetch-Site": "same-site"}),
    ("a URL typed or bookmarked", {"Sec-Fetch-Site": "none"}),
    ("the own page sending its Origin", {"Sec-Fetch-Site": "same-origin", "Origin": "{own}"}),
    ("its Origin in capitals", {"Origin": "{own_upper}"}),
]
REFUSED: list[tuple[str, dict[str, str], str]] = [
    ("an image on another site", {"Sec-Fetch-Site": "cross-site"}, "Sec-Fetch-Site: cross-site"),
    ("a CORS fetch from another origin", {"Origin": EVIL, "Sec-Fetch-Site": "cross-site"}, f"Origin '{EVIL}'"),
    ("another origin on the same site", {"Origin": "http://localhost:3000", "Sec-Fetch-Site": "same-site"}, "Origin"),
    ("an old browser sending only Origin", {"Origin": EVIL}, f"Origin '{EVIL}'"),
    ("a sandboxed page", {"Origin": "null"}, "Origin 'null'"),
    ("another origin whatever Sec-Fetch-Site says", {"Origin": EVIL, "Sec-Fetch-Site": "same-origin"}, "Origin"),
]


def filled(headers: dict[str, str], client: Client) -> dict[str, str]:
    own = own_origin(client)
    return {name: value.format(own=own, own_upper=own.upper()) for name, value in headers.items()}


@pytest.mark.parametrize("headers", [h for _, h in SERVED], ids=[n for n, _ in SERVED])
def test_a_get_from_this_site_or_outside_a_browser_is_served(
    client: Client, headers: dict[str, str], decoded: list[str]
) -> None:
    answer = client.get(DEAL, filled(headers, client))
    assert answer.status == 200, answer.body
    assert answer.body["rows"] == 4 and len(decoded) == 1


@pytest.mark.parametrize(("headers", "shown"), [(h, s) for _, h, s in REFUSED], ids=[n for n, _, _ in REFUSED])
def test_a_get_from_another_site_is_refused_before_any_work(
    client: Client, grpc_server: BoafServer, headers: dict[str, str], shown: str, decoded: list[str]
) -> None:
    before = count(grpc_server, "Deal", "PERMISSION_DENIED")
    answer = client.get(DEAL, headers)
    assert (answer.status, answer.body["code"]) == (403, "permission_denied")
    message = answer.body["message"]
    assert message.startswith(f"GET from a page on another site ({shown}") and "BOAF_CORS_ORIGINS" in message
    assert len(message) < 200 and "access-control-allow-origin" not in answer.headers
    assert decoded == []  # its query never decoded: no call admitted, nothing run
    assert count(grpc_server, "Deal", "PERMISSION_DENIED") == before + 1


def test_a_long_origin_is_quoted_short(client: Client) -> None:
    answer = client.get(DEAL, {"Origin": "https://" + "e" * 4000 + ".example"})
    assert answer.status == 403
    assert f"Origin 'https://{'e' * 32}…'" in answer.body["message"]


def test_an_allowed_origin_may_get_from_another_site(strict: Client) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}", "Host": "boaf.test", "Sec-Fetch-Site": "cross-site"}
    answer = strict.get(DEAL, {**headers, "Origin": ORIGIN})
    assert answer.status == 200 and answer.headers["access-control-allow-origin"] == ORIGIN
    refused = strict.get(DEAL, {**headers, "Origin": EVIL})
    assert (refused.status, refused.body["code"]) == (403, "permission_denied")


def test_the_rule_is_for_rpc_gets_only(client: Client) -> None:
    # POST from a browser on another site needs a preflight (JSON and protobuf are not simple types),
    # which CORS answers; health and the page's files compute nothing from their request.
    cross = {"Sec-Fetch-Site": "cross-site", "Origin": EVIL}
    assert client.call("Game/Deal", {"seed": 1}, headers=cross).status == 200
    assert client.get("/healthz", cross).status == 200
    assert client.get("/openapi.json", cross).status == 200
