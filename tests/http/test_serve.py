"""``boaf serve`` starts gRPC and HTTP by default, and either side can be switched off."""

from __future__ import annotations

import re
import signal
import socket
import threading
import time
import urllib.request
from contextlib import ExitStack

from google.protobuf import json_format
from http_client import Answer, Client, boaf_process, boaf_serve
from servers import grid_state, wait_for

from boaf.service.core.errors import SHUTTING_DOWN_MESSAGE

HARD = {
    "state": json_format.MessageToDict(grid_state("2D JS AS 5C/9D JD 4H 6S/4C TS QS 8S/7D KD 9S TD")),
    "algorithm": "CONSTRAINED",
}  # deal -4965 by plain DFS: 20.8M nodes, seconds on any machine (still in flight when the metrics are read)


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


def solves_in_flight(metrics_port: int) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as page:
        for line in page.read().decode().splitlines():
            if line.startswith('boaf_requests_in_flight{method="Solve"}'):
                return float(line.split()[-1])
    return 0.0


def test_sigterm_is_held_by_no_idle_or_slow_client_and_a_call_in_flight_gets_unavailable() -> None:
    env = {"BOAF_SHUTDOWN_GRACE_S": "0", "BOAF_SOLVE_TIME_LIMIT_MS": "120000"}
    with boaf_process("--no-grpc", env=env) as (process, line), ExitStack() as connections:
        found = re.search(r"HTTP on http://([\d.]+):(\d+)/ \(metrics on (\d+)\)", line)
        assert found, line
        address, metrics_port = (found.group(1), int(found.group(2))), int(found.group(3))
        client = Client(f"http://{address[0]}:{address[1]}")
        idle, slow = (connections.enter_context(socket.create_connection(address)) for _ in range(2))
        idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        slow.sendall(b"POST /boaf.v1.Boaf/Solve HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # the rest never comes
        answers: list[Answer] = []
        solve = threading.Thread(target=lambda: answers.append(client.call("Boaf/Solve", HARD)))
        solve.start()
        assert wait_for(lambda: solves_in_flight(metrics_port) == 1, timeout=60)
        started = time.perf_counter()
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
        stopped_s = time.perf_counter() - started
        solve.join(30)
    assert stopped_s < 5, stopped_s
    assert (answers[0].status, answers[0].body["code"]) == (503, "unavailable")
    assert answers[0].body["message"] == SHUTTING_DOWN_MESSAGE
