"""Security you can turn on at the HTTP edge: the Host allowlist, CORS, bearer tokens, no page."""

from __future__ import annotations

import pytest
from http_client import Client
from servers import wait_for

from boaf.service.grpc.server import BoafServer

from .conftest import ORIGIN, TOKEN

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def count(server: BoafServer, method: str, code: str) -> float:
    value = server.metrics.registry.get_sample_value("boaf_requests_total", {"method": method, "code": code})
    return value or 0.0


# ---------------------------------------------------------------- Host allowlist (DNS rebinding)


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/", "/playground.js"])
def test_a_loopback_server_answers_loopback_host_names_only(client: Client, path: str) -> None:
    answer = client.get(path, {"Host": "rebound.example:8080"})
    assert (answer.status, answer.body) == (
        400,
        {
            "code": "invalid_argument",
            "message": "Host 'rebound.example' is not one this server answers to (BOAF_ALLOWED_HOSTS)",
        },
    )
    assert "x-request-id" in answer.headers
    for name in ("localhost", "127.0.0.1:1234", "[::1]:80"):
        assert client.get("/healthz", {"Host": name}).status == 200


def test_an_rpc_to_a_disallowed_host_is_refused_and_counted(strict: Client, strict_boaf: BoafServer) -> None:
    before = count(strict_boaf, "Deal", "INVALID_ARGUMENT")
    answer = strict.call("Game/Deal", {"seed": 1}, headers={**AUTH, "Host": "localhost"})  # not in the list
    assert (answer.status, answer.body["code"]) == (400, "invalid_argument")
    assert "BOAF_ALLOWED_HOSTS" in answer.body["message"]
    assert count(strict_boaf, "Deal", "INVALID_ARGUMENT") == before + 1
    assert strict.call("Game/Deal", {"seed": 1}, headers={**AUTH, "Host": "BOAF.test:443"}).status == 200


# ---------------------------------------------------------------- bearer tokens


def test_rpcs_need_a_bearer_token(strict: Client, strict_boaf: BoafServer) -> None:
    before = count(strict_boaf, "Deal", "UNAUTHENTICATED")
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}):
        answer = strict.call("Game/Deal", {"seed": 1}, headers=headers)
        assert (answer.status, answer.body["code"]) == (401, "unauthenticated"), headers
        assert answer.headers["www-authenticate"] == "Bearer"
    assert count(strict_boaf, "Deal", "UNAUTHENTICATED") == before + 3
    assert strict.call("Game/Deal", {"seed": 1}, headers=AUTH).status == 200
    assert strict.call("Game/Deal", {"seed": 1}, headers={"Authorization": "bearer another-token"}).status == 200


def test_a_token_is_checked_before_the_body_is_read(strict: Client) -> None:
    answer = strict.call("Game/Deal", raw=b"{not json", headers={"Content-Type": "text/plain"})
    assert (answer.status, answer.body["code"]) == (401, "unauthenticated")


def test_health_and_readiness_need_no_token(strict: Client) -> None:
    assert strict.get("/healthz").status == 200
    assert wait_for(lambda: strict.get("/readyz").status == 200)


# ---------------------------------------------------------------- the page switched off


@pytest.mark.parametrize("path", ["/", "/index.html", "/playground.js", "/favicon.svg"])
def test_no_page_when_it_is_off(strict: Client, path: str) -> None:
    answer = strict.get(path)
    assert (answer.status, answer.body["code"]) == (404, "not_found")


# ---------------------------------------------------------------- CORS


def test_no_origin_is_allowed_by_default(client: Client) -> None:
    preflight = client.request("OPTIONS", "/boaf.v1.Game/Deal", _preflight(ORIGIN))
    assert preflight.status == 403 and "access-control-allow-origin" not in preflight.headers
    assert preflight.body["code"] == "permission_denied"
    answer = client.call("Game/Deal", {"seed": 1}, headers={"Origin": ORIGIN})
    assert answer.status == 200 and "access-control-allow-origin" not in answer.headers


def _preflight(origin: str) -> dict[str, str]:
    return {
        "Origin": origin,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type",
    }


def test_an_allowed_origins_preflight_is_answered(strict: Client) -> None:
    for origin in (ORIGIN, "https://other.example"):
        answer = strict.request("OPTIONS", "/boaf.v1.Boaf/Solve", _preflight(origin))
        assert answer.status == 204
        assert answer.headers["access-control-allow-origin"] == origin
        assert answer.headers["access-control-allow-methods"] == "POST, GET"
        allowed = {h.strip() for h in answer.headers["access-control-allow-headers"].split(",")}
        assert allowed == {
            "authorization",
            "content-type",
            "connect-timeout-ms",
            "connect-protocol-version",
            "x-request-id",
        }
        assert "origin" in answer.headers["vary"].lower()
    refused = strict.request("OPTIONS", "/boaf.v1.Boaf/Solve", _preflight("https://evil.example"))
    assert refused.status == 403 and "access-control-allow-origin" not in refused.headers


def test_an_allowed_origin_may_read_answers_and_their_headers(strict: Client) -> None:
    for answer in (
        strict.call("Game/Deal", {"seed": 1}, headers={**AUTH, "Origin": ORIGIN}),
        strict.call("Game/Deal", {"seed": 1}, headers={"Origin": ORIGIN}),  # a 401 is readable too
    ):
        assert answer.headers["access-control-allow-origin"] == ORIGIN
        exposed = {h.strip().lower() for h in answer.headers["access-control-expose-headers"].split(",")}
        assert exposed == {"x-request-id", "retry-after", "www-authenticate"}
