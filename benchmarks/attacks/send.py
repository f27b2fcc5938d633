"""Requests of the attacks on either edge, counted: gRPC on raw HTTP/2, HTTP/1.1 JSON on raw sockets.

``grpc_calls`` sends messages (inflated bytes, compressed here when an encoding is named) as
concurrent streams on raw connections (``wire.RawH2``) and counts each answer's ``grpc-status`` and
latency under its label; ``http_calls`` POSTs bodies, each on a connection of its own, and counts
the status (``hostile.answer_code``). Both note the longest error message an answer carried.
"""

from __future__ import annotations

import asyncio
import json
import time

from benchmarks import hostile
from benchmarks.attacks import wire
from benchmarks.attacks.harness import ClassRun

CALL_TIMEOUT_S = 30.0
STREAMS_PER_CONNECTION = 32
Request = tuple[str, str, bytes, str]  # label, path, bytes (a message, or a body), encoding ("" for none)


async def open_raw(ctx: ClassRun, settings: dict[int, int] | None = None) -> wire.RawH2:
    """A raw HTTP/2 connection to the class's gRPC port, past the SETTINGS exchange."""
    host, port = ctx.target.grpc.rsplit(":", 1)
    connection = wire.RawH2(ctx.target.host, int(port), f"{host}:{port}")
    await connection.open(settings)
    await asyncio.sleep(0.2)  # the server's SETTINGS, read and acknowledged
    return connection


async def grpc_calls(ctx: ClassRun, requests: list[Request], compressed: bool = False) -> None:
    """Every request at once, ``STREAMS_PER_CONNECTION`` streams a connection.

    Each request's bytes are a message, compressed here as its encoding says; with ``compressed``
    they are already compressed.
    """
    groups = [requests[i : i + STREAMS_PER_CONNECTION] for i in range(0, len(requests), STREAMS_PER_CONNECTION)]
    await asyncio.gather(*(_on_one_connection(ctx, group, compressed) for group in groups))


async def _on_one_connection(ctx: ClassRun, group: list[Request], compressed: bool) -> None:
    connection = await open_raw(ctx)

    async def one(label: str, path: str, data: bytes, encoding: str) -> None:
        headers = [("grpc-accept-encoding", "identity,deflate,gzip")]
        if encoding:
            headers.append(("grpc-encoding", encoding))
            data = data if compressed else wire.compress(data, encoding)
        started = time.perf_counter()
        answer = await connection.unary(path, wire.grpc_message(data, bool(encoding)), headers, CALL_TIMEOUT_S)
        ctx.count(label, answer.code or "none", time.perf_counter() - started)
        ctx.quoted(answer.message_chars)

    try:
        await asyncio.gather(*(one(*request) for request in group))
    finally:
        await connection.close()


async def http_calls(ctx: ClassRun, requests: list[Request], compressed: bool = False) -> None:
    """Every request at once, each a POST on a connection of its own (``Content-Encoding`` as named)."""
    await asyncio.gather(*(_http_call(ctx, *request, compressed=compressed) for request in requests))


async def _http_call(ctx: ClassRun, label: str, path: str, body: bytes, encoding: str, *, compressed: bool) -> None:
    connection = hostile.HttpConnection(ctx.target.host, ctx.target.http_port)
    headers = {}
    if encoding:
        headers["Content-Encoding"] = encoding
        body = body if compressed else wire.compress(body, encoding)
    started = time.perf_counter()
    try:
        answer = await connection.post(path, body, headers, CALL_TIMEOUT_S)
        code = hostile.answer_code(answer)
        ctx.quoted(message_chars(answer.body))
    except ConnectionError:  # reset, or closed while the body was still being sent
        code = "closed without an answer"
    except (TimeoutError, EOFError, OSError, ValueError) as exc:
        code = type(exc).__name__
    finally:
        await connection.close()
    ctx.count(label, code, time.perf_counter() - started)


def message_chars(body: bytes) -> int:
    """Characters of the ``message`` of a Connect JSON error body; 0 for any other body."""
    try:
        value = json.loads(body)
    except ValueError:
        return 0
    message = value.get("message", "") if isinstance(value, dict) else ""
    return len(message) if isinstance(message, str) else 0
