"""``boaf serve`` starts gRPC and HTTP by default, and either side can be switched off."""

from __future__ import annotations

import re

from http_client import Client, boaf_serve


def test_serve_without_grpc_serves_http_alone() -> None:
    with boaf_serve("--no-grpc") as line:
        assert "gRPC" not in line
        found = re.search(r"^boaf: serving HTTP on (http://127\.0\.0\.1:\d+)/ \(metrics on \d+\)$", line.strip())
        assert found, line
        client = Client(found.group(1))
        assert client.get("/readyz").body == {"status": "SERVING"}
        answer = client.call("Boaf/Solve", {"state": client.call("Game/Deal", {"seed": 1}).body})
        assert answer.body["status"] == "SOLVABLE"


def test_serve_without_http_serves_grpc_alone() -> None:
    with boaf_serve("--no-http") as line:
        assert re.fullmatch(r"boaf: serving gRPC on 127\.0\.0\.1:\d+ \(metrics on \d+\)", line.strip()), line
