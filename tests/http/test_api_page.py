"""``/api``'s ``curl`` example calls the address the page was asked at, and only a sane one."""

from __future__ import annotations

import pytest
from http_client import Client

from boaf.service.http.api_page import base_url_of

SERVER = ("127.0.0.1", 18080)


@pytest.mark.parametrize(
    ("scheme", "host", "server", "base_url"),
    [
        ("http", "127.0.0.1:52080", SERVER, "http://127.0.0.1:52080"),
        ("https", "boaf.example.org", SERVER, "https://boaf.example.org"),
        ("http", "localhost:8080", SERVER, "http://localhost:8080"),
        ("http", "[::1]:8080", SERVER, "http://[::1]:8080"),
        ("http", "play-1.boaf.test:443", SERVER, "http://play-1.boaf.test:443"),
        ("http", None, SERVER, "http://127.0.0.1:18080"),
        ("http", "", ("0.0.0.0", 8080), "http://localhost:8080"),
        ("http", None, ("::1", 8080), "http://[::1]:8080"),
        ("ws", "boaf.test", SERVER, "http://boaf.test"),
    ],
)
def test_the_base_url_is_the_requests_host(
    scheme: str, host: str | None, server: tuple[str, int], base_url: str
) -> None:
    assert base_url_of(scheme, host, server) == base_url


@pytest.mark.parametrize(
    "host",
    [
        "<script>alert(1)</script>",
        "evil.test'; rm -rf ~; '",
        'a"b',
        "boaf.test/path",
        "boaf.test:8080:9",
        "boaf.test:123456",
        "user@boaf.test",
        "boaf .test",
        "-boaf.test",
        "a" * 64 + ".test",
        ".".join(["a"] * 200),
        "[::1",
        "[<b>]:80",
        "boaf.test\r\nX-Injected: 1",
    ],
)
def test_a_host_that_is_no_host_and_port_is_not_shown(host: str) -> None:
    assert base_url_of("http", host, SERVER) == "http://127.0.0.1:18080"


def test_the_served_page_shows_the_host_it_was_asked_at_escaped_or_not_at_all(client: Client) -> None:
    asked = client.get("/api", headers={"Host": "127.0.0.1:8080"}).body  # as a proxy in front might send it
    assert "curl -s http://127.0.0.1:8080/boaf.v1.Boaf/Classify" in asked
    own = client.get("/api").body
    assert f"curl -s {client.base}/boaf.v1.Boaf/Classify" in own
    _, port = client.address
    # Each passes the edge's Host allowlist (its name is 127.0.0.1 or [::1]), and none is a host and port.
    for hostile in ['127.0.0.1:"><img src=x onerror=alert(1)>', "[::1]<script>alert(1)</script>", "127.0.0.1:1'"]:
        answer = client.get("/api", headers={"Host": hostile})
        assert answer.status == 200 and "<img" not in answer.body and "<script" not in answer.body, hostile
        assert f"curl -s http://127.0.0.1:{port}/boaf.v1.Boaf/Classify" in answer.body, hostile
