"""The HTTP edge in the field (issue 21): JSON errors only, every answer counted and carrying a request id,
sizes refused before reading, header, body and idle timeouts, shutdown, shared admission and work slots.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from contextlib import ExitStack
from typing import Any

import pytest
from google.protobuf import json_format
from http_client import Answer, Client, parse_answer, raw_exchange, read_until_closed
from servers import TEST_LIMITS, grid_state, wait_for

from boaf.service.core.errors import SHUTTING_DOWN_MESSAGE, ModelUnavailable
from boaf.service.grpc.server import BoafServer
from boaf.service.http import HttpServer
from boaf.service.http.wire import encode_answer
from boaf.service.rpc.call import Call
from boaf.v1 import boaf_pb2 as pb

from .conftest import TOKEN

# Connect's form of google.rpc.RetryInfo{retry_delay: 5 s}, the details of every "retry later" error.
RETRY_DETAILS = [{"type": "google.rpc.RetryInfo", "value": "CgIIBQ", "debug": {"retryDelay": "5s"}}]

# deal -4965 by plain DFS: 20.8M nodes, seconds on any machine, so a call of it is still in flight when a stop's
# grace (0.5 s) ends (Compatible DFS, 2.6M nodes, took 0.94 s once the kernel got faster: it sometimes finished first)
HARD = {"state": json_format.MessageToDict(grid_state("2D JS AS 5C/9D JD 4H 6S/4C TS QS 8S/7D KD 9S TD")),
        "algorithm": "CONSTRAINED"}  # fmt: skip
LIMIT = TEST_LIMITS["max_message_bytes"]
SOLVE = "/boaf.v1.Boaf/Solve"


def count(server: BoafServer, method: str, code: str) -> float:
    value = server.metrics.registry.get_sample_value("boaf_requests_total", {"method": method, "code": code})
    return value or 0.0


def head(path: str, length: int | None, extra: str = "", host: str = "127.0.0.1") -> bytes:
    """A POST's request line and headers, with ``Content-Length: length`` unless None."""
    sized = "" if length is None else f"Content-Length: {length}\r\n"
    return f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n{sized}{extra}\r\n".encode()


# ---------------------------------------------------------------- JSON errors only

ODD_BODIES: list[tuple[str, str, str]] = [
    ("infinity", "Boaf/Solve", '{"algorithm": Infinity}'),
    ("minus infinity", "Boaf/Solve", '{"maxNodes": -Infinity}'),
    ("nan", "Boaf/Solve", '{"timeLimitMs": NaN}'),
    ("1e400", "Boaf/Solve", '{"algorithm": 1e400}'),
    ("1e400 nested", "Boaf/Classify", '{"states": [{"rows": 1e400}]}'),
    ("huge int", "Boaf/Solve", '{"algorithm": 1' + "0" * 400 + "}"),
    ("surrogate moves", "Game/Play", '{"moves": "\\ud800"}'),
    ("surrogate move", "Game/Play", '{"moves": ["\\ud800"]}'),
    ("surrogate cell", "Boaf/Classify", '{"states": [{"rows": 1, "cols": 1, "cells": ["\\udfff"]}]}'),
    ("surrogate cells", "Boaf/Features", '{"states": [{"cells": "\\ud800"}]}'),
    ("surrogate state", "Boaf/Solve", '{"state": "\\ud800"}'),
    ("surrogate field name", "Boaf/AnalyzePuzzle", '{"\\ud800": 1}'),
    ("surrogate enum", "Boaf/Solve", '{"algorithm": "\\ud800"}'),
    ("deep nesting", "Boaf/Solve", '{"state": ' + "[" * 100_000 + "]" * 100_000 + "}"),
]


@pytest.mark.parametrize(("method", "body"), [c[1:] for c in ODD_BODIES], ids=[c[0] for c in ODD_BODIES])
def test_odd_json_gets_a_json_400(client: Client, grpc_server: BoafServer, method: str, body: str) -> None:
    name = method.split("/")[1]
    before = count(grpc_server, name, "INVALID_ARGUMENT")
    answer = client.call(method, raw=body.encode("utf-8", "surrogatepass"))
    assert answer.status == 400, answer.body
    assert answer.body["code"] == "invalid_argument"
    answer.body["message"].encode("utf-8")  # a lone surrogate comes back escaped, never as a broken character
    assert answer.headers["content-type"] == "application/json"
    assert count(grpc_server, name, "INVALID_ARGUMENT") == before + 1


def test_another_method_on_an_rpc_route_is_a_json_405(client: Client, grpc_server: BoafServer) -> None:
    before = count(grpc_server, "Solve", "UNIMPLEMENTED")
    answer = client.request("DELETE", SOLVE)
    assert (answer.status, answer.body["code"]) == (405, "unimplemented")
    assert answer.body["message"] == "DELETE: /boaf.v1.Boaf/Solve answers GET and POST only"
    assert answer.headers["allow"] == "GET, POST"  # Solve is marked NO_SIDE_EFFECTS: Connect's GET
    assert count(grpc_server, "Solve", "UNIMPLEMENTED") == before + 1


def test_unknown_paths_are_json_404s(client: Client) -> None:
    for answer in (client.get("/boaf.v1.Boaf/Guess"), client.get("/no/such/page"), client.get("/../etc/passwd")):
        assert answer.status == 404
        assert answer.body["code"] == "not_found", answer.body


def test_a_request_that_is_not_http_gets_a_json_400_and_no_warning(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO):
        raw, closed = raw_exchange(client.address, b"\x16\x03\x01 not HTTP at all\r\n\r\n", timeout=10)
    answer = parse_answer(raw)
    assert closed and (answer.status, answer.body["code"]) == (400, "invalid_argument")
    assert len(answer.headers["x-request-id"]) == 32
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


# ---------------------------------------------------------------- request ids


def test_every_answer_carries_a_request_id_echoed_when_sane(client: Client) -> None:
    fresh = {client.get("/healthz").headers["x-request-id"] for _ in range(3)}
    assert len(fresh) == 3 and all(len(i) == 32 for i in fresh)
    assert client.get("/healthz", {"X-Request-Id": "abc-123.X_y"}).headers["x-request-id"] == "abc-123.X_y"
    assert client.call("Game/Deal", raw=b"{", headers={"X-Request-Id": "e1"}).headers["x-request-id"] == "e1"
    for insane in ("a b", "x" * 200, "ü"):
        given = client.get("/healthz", {"X-Request-Id": insane.encode().decode("latin-1")}).headers["x-request-id"]
        assert given != insane and len(given) == 32


# ---------------------------------------------------------------- sizes: checked first, refused at once


def test_a_declared_oversize_body_is_refused_before_reading_and_the_connection_closed(
    client: Client, grpc_server: BoafServer
) -> None:
    before = count(grpc_server, "Solve", "OUT_OF_RANGE")
    started = time.perf_counter()
    raw, closed = raw_exchange(client.address, head(SOLVE, 2_000_000_000) + b'{"state": ', timeout=10)
    answer = parse_answer(raw)
    assert time.perf_counter() - started < 5 and closed
    assert (answer.status, answer.body) == (
        400,
        {
            "code": "out_of_range",
            "message": f"request: a message of 2,000,000,000 bytes exceeds the limit of {LIMIT:,} bytes "
            "(BOAF_MAX_MESSAGE_BYTES)",
        },
    )
    assert answer.headers["connection"] == "close"
    assert count(grpc_server, "Solve", "OUT_OF_RANGE") == before + 1


def test_an_oversize_chunked_body_is_refused_once_past_the_limit(client: Client) -> None:
    chunk = b" " * 65536
    framed = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    with socket.create_connection(client.address, timeout=10) as connection:
        connection.sendall(head(SOLVE, None, "Transfer-Encoding: chunked\r\n"))
        try:
            for _ in range(LIMIT // len(chunk) + 2):
                connection.sendall(framed)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused and closed while still sending: what the client then sees
        raw, closed = read_until_closed(connection)
    answer = parse_answer(raw)
    assert closed and (answer.status, answer.body["code"]) == (400, "out_of_range")


def test_a_body_at_the_limit_is_read(client: Client) -> None:
    body = b'{"seed": "1"}'
    answer = client.call("Game/Deal", raw=body + b" " * (LIMIT - len(body)))
    assert answer.status == 200


# ---------------------------------------------------------------- disconnects


def test_a_client_gone_mid_body_is_counted_cancelled_with_one_info_line(
    client: Client, grpc_server: BoafServer, caplog: pytest.LogCaptureFixture
) -> None:
    before = count(grpc_server, "Classify", "CANCELLED")
    with caplog.at_level(logging.INFO):
        with socket.create_connection(client.address) as connection:
            extra = "X-Request-Id: gone-1\r\n"
            connection.sendall(head("/boaf.v1.Boaf/Classify", 1000, extra) + b'{"states": [')
            time.sleep(0.2)
        assert wait_for(lambda: count(grpc_server, "Classify", "CANCELLED") == before + 1, timeout=10)
    lines = [r for r in caplog.records if getattr(r, "request_id", None) == "gone-1"]
    assert len(lines) == 1, [r.getMessage() for r in lines]
    assert lines[0].levelno == logging.INFO and lines[0].exc_info is None
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


# ---------------------------------------------------------------- timeouts


def test_a_slowloris_is_disconnected_at_the_header_timeout(strict: Client) -> None:
    with socket.create_connection(strict.address, timeout=10) as connection:
        started = time.perf_counter()
        try:
            for byte in b"POST /boaf.v1.Game/Deal HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100:
                connection.sendall(bytes([byte]))
                time.sleep(0.05)
        except (BrokenPipeError, ConnectionResetError):
            pass
        raw, closed = read_until_closed(connection)
    assert closed and raw == b""
    assert time.perf_counter() - started < 3  # 0.5 s allowed; without the timeout: 5 s of dribbling


def test_a_silent_connection_is_closed_at_the_header_timeout(strict: Client) -> None:
    started = time.perf_counter()
    raw, closed = raw_exchange(strict.address, b"", timeout=10)
    assert closed and raw == b"" and time.perf_counter() - started < 3


def test_a_slow_body_gets_408_then_the_connection_is_closed(strict: Client, strict_boaf: BoafServer) -> None:
    before = count(strict_boaf, "Deal", "DEADLINE_EXCEEDED")
    auth = f"Authorization: Bearer {TOKEN}\r\n"
    started = time.perf_counter()
    raw, closed = raw_exchange(strict.address, head("/boaf.v1.Game/Deal", 100, auth) + b"{", timeout=10)
    answer = parse_answer(raw)
    assert closed and time.perf_counter() - started < 3
    assert (answer.status, answer.body["code"]) == (408, "deadline_exceeded")
    assert answer.body["message"] == "the request body did not arrive within 0.5 s (BOAF_HTTP_BODY_TIMEOUT_S)"
    assert answer.headers["connection"] == "close"
    assert count(strict_boaf, "Deal", "DEADLINE_EXCEEDED") == before + 1


def test_a_body_still_arriving_at_the_client_deadline_gets_504_then_the_connection_is_closed(
    client: Client, grpc_server: BoafServer
) -> None:
    # The deadline, not the (much longer) body timeout, ends the wait: a busy server answered such calls seconds late.
    before = count(grpc_server, "Deal", "DEADLINE_EXCEEDED")
    started = time.perf_counter()
    request = head("/boaf.v1.Game/Deal", 100, "Connect-Timeout-Ms: 300\r\n") + b"{"
    raw, closed = raw_exchange(client.address, request, timeout=10)
    answer = parse_answer(raw)
    assert closed and time.perf_counter() - started < 3
    assert (answer.status, answer.body) == (
        504,
        {"code": "deadline_exceeded", "message": "the client's deadline passed before its request body arrived"},
    )
    assert count(grpc_server, "Deal", "DEADLINE_EXCEEDED") == before + 1


def test_an_idle_keep_alive_connection_is_closed(strict: Client) -> None:
    with socket.create_connection(strict.address, timeout=10) as connection:
        connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        started = time.perf_counter()
        raw, closed = read_until_closed(connection)
    assert parse_answer(raw).status == 200
    assert closed and time.perf_counter() - started < 3


def test_stopping_is_held_by_no_idle_or_slow_client_and_calls_in_flight_get_503(strict_boaf: BoafServer) -> None:
    web = HttpServer(strict_boaf)
    web.start()
    client = Client(f"http://127.0.0.1:{web.port}")
    answers: list[Answer] = []
    solve = threading.Thread(target=lambda: answers.append(client.call("Boaf/Solve", HARD, headers=_auth())))
    before = {code: _count(strict_boaf, "Solve", code) for code in ("OK", "UNAVAILABLE")}
    with ExitStack() as open_connections:
        idle, slow_head, slow_body = (open_connections.enter_context(socket.create_connection(client.address))
                                      for _ in range(3))  # fmt: skip
        idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        slow_head.sendall(b"POST /boaf.v1.Game/Deal HTTP/1.1\r\n")
        slow_body.sendall(head("/boaf.v1.Game/Deal", 100, f"Authorization: Bearer {TOKEN}\r\n") + b"{")
        solve.start()
        assert wait_for(lambda: web.app.state.edge.calls_in_flight == 1, timeout=30)
        started = time.perf_counter()
        web.stop()
        stopped_s = time.perf_counter() - started
    solve.join(30)
    assert stopped_s < 3, stopped_s  # grace 0.5 s
    shut = {"code": "unavailable", "message": SHUTTING_DOWN_MESSAGE, "details": RETRY_DETAILS}
    assert (answers[0].status, answers[0].body) == (503, shut)
    after = {code: _count(strict_boaf, "Solve", code) for code in ("OK", "UNAVAILABLE")}
    assert (after["OK"] - before["OK"], after["UNAVAILABLE"] - before["UNAVAILABLE"]) == (0, 1)  # as the client saw


def _count(server: BoafServer, method: str, code: str) -> float:
    return server.metrics.registry.get_sample_value("boaf_requests_total", {"method": method, "code": code}) or 0.0


def _auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


# ---------------------------------------------------------------- one admission layer


def test_calls_in_flight_are_counted_with_grpcs(client: Client, grpc_server: BoafServer) -> None:
    admission = grpc_server.admission
    limit = grpc_server.settings.max_concurrent_rpcs
    admitted = 0
    try:
        while admitted < limit:
            admission.try_call()  # as if gRPC calls held every place
            admitted += 1
        answer = client.call("Game/Deal", {"seed": 1})
    finally:
        for _ in range(admitted):
            admission.end_call()
    assert (answer.status, answer.body) == (
        429,
        {
            "code": "resource_exhausted",
            "message": f"{limit} calls already in flight (BOAF_MAX_CONCURRENT_RPCS); retry later",
            "details": RETRY_DETAILS,
        },
    )
    assert client.call("Game/Deal", {"seed": 1}).status == 200


def test_a_call_waits_for_a_shared_work_slot_within_its_deadline(client: Client, grpc_server: BoafServer) -> None:
    admission = grpc_server.admission
    with ExitStack() as slots:
        for _ in range(grpc_server.settings.max_workers):
            slots.enter_context(admission.work_slot(time.perf_counter() + 5, lambda: True))
        answer = client.call("Game/Deal", {"seed": 1}, headers={"Connect-Timeout-Ms": "300"})
    assert (answer.status, answer.body["code"]) == (504, "deadline_exceeded")
    assert "while it waited for a worker" in answer.body["message"]
    assert client.call("Game/Deal", {"seed": 1}).status == 200


def test_a_failed_model_is_unavailable_not_a_bad_request(
    client: Client, grpc_server: BoafServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ModelUnavailable("the model failed to run: onnxruntime said no")

    assert grpc_server.servicer.plane is not None
    monkeypatch.setattr(grpc_server.servicer.plane, "classify", broken)
    answer = client.call("Boaf/Classify", {"states": [HARD["state"]]})
    assert (answer.status, answer.body["code"]) == (503, "unavailable")
    assert "retry-after" in answer.headers


# ---------------------------------------------------------------- JSON encoding of large answers


def test_encoding_a_large_answer_stops_when_the_call_ends() -> None:
    answer = pb.FeaturesResponse(names=["a", "b"], vectors=[pb.FeatureVector(values=[1.5, 2.0])] * 10_000)
    context = Call("test", None)
    assert json.loads(encode_answer(answer, context)) == json_format.MessageToDict(
        answer, always_print_fields_with_no_presence=True
    )
    checks = 0

    def still_wanted() -> bool:
        nonlocal checks
        checks += 1
        return checks < 2

    context.is_active = still_wanted  # type: ignore[method-assign]
    with pytest.raises(Exception, match="cancelled while its answer was encoded"):
        encode_answer(answer, context)
    assert checks == 2
