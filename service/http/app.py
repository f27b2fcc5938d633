"""The ASGI app: one route per RPC of the proto's services, health, readiness and the playground page.

Every call goes the same way whatever the method (``Edge.serve``): admit it
(concurrency, timeout header, content type, body size), then in a worker thread
parse the body with ``json_format`` into the method's request message, run the
servicer method with a ``CallContext``, and write the answer back as JSON. The
servicer maps domain errors to gRPC codes as it does for gRPC; ``statuses``
turns the code into an HTTP status.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import grpc
from google.protobuf import json_format, message_factory
from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message import Message
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from service.http.context import CallAborted, CallContext
from service.http.statuses import HTTP_STATUS, connect_code
from service.interceptors import mark_arrival
from service.kernels import RETRY_AFTER_S
from service.metrics import Metrics
from service.settings import Settings

STATIC_DIR = Path(__file__).resolve().parent / "static"
TIMEOUT_HEADER = "connect-timeout-ms"
DRAIN_FACTOR = 4  # an oversize body is read (and dropped) up to this many times the limit
MAX_QUOTED_CHARS = 120  # messages may quote the input; never more than this many characters of it
INVALID = grpc.StatusCode.INVALID_ARGUMENT
# The page talks only to this server; nothing else may load.
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'",
    "X-Content-Type-Options": "nosniff",
}


@dataclass(frozen=True)
class Endpoint:
    """One RPC: its HTTP path, name, request message class and servicer method."""

    path: str  # "/boaf.v1.Boaf/Classify"
    method: str  # "Classify"
    request_type: type[Message]
    handler: Callable[[Message, Any], Message]


def endpoints(services: Sequence[tuple[ServiceDescriptor, object]]) -> list[Endpoint]:
    """An ``Endpoint`` for every method of every (service descriptor, servicer) pair."""
    return [
        Endpoint(
            f"/{service.full_name}/{method.name}",
            method.name,
            message_factory.GetMessageClass(method.input_type),
            getattr(servicer, method.name),
        )
        for service, servicer in services
        for method in service.methods
    ]


def error_response(code: grpc.StatusCode, message: str) -> JSONResponse:
    """Connect's error body, ``{"code": "invalid_argument", "message": ...}``, with the code's HTTP status.

    UNAVAILABLE (loading, compiling kernels, stopping) carries a ``Retry-After`` hint.
    """
    headers = {"Retry-After": str(RETRY_AFTER_S)} if code is grpc.StatusCode.UNAVAILABLE else None
    return JSONResponse(
        {"code": connect_code(code), "message": message}, status_code=HTTP_STATUS[code], headers=headers
    )


class Edge:
    """Admits, parses, runs and answers calls; its limits are the gRPC server's, from the same settings."""

    def __init__(self, settings: Settings, metrics: Metrics) -> None:
        self.settings = settings
        self.metrics = metrics
        self.in_flight = 0
        self._workers: anyio.CapacityLimiter | None = None  # made on the event loop, at the first call

    def route(self, endpoint: Endpoint) -> Callable[[Request], Awaitable[Response]]:
        """The request handler of one endpoint."""
        return functools.partial(self.serve, endpoint)

    async def serve(self, endpoint: Endpoint, request: Request) -> Response:
        """Answer one call: the response message as JSON, or an error through ``statuses``."""
        started = time.perf_counter()
        try:
            timeout_s = self._admit(request)
            body = await _body(request, self.settings.max_message_bytes)
        except CallAborted as exc:
            return self._rejected(endpoint, exc, started)
        self.in_flight += 1
        try:
            return await self._run(endpoint, body, CallContext(_peer(request), timeout_s), request, started)
        finally:
            self.in_flight -= 1

    def _admit(self, request: Request) -> float | None:
        # Cheap checks first, before the body is read; returns the call's timeout in seconds.
        settings = self.settings
        if self.in_flight >= settings.max_concurrent_rpcs:
            raise CallAborted(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{settings.max_concurrent_rpcs} calls already in flight (BOAF_MAX_CONCURRENT_RPCS); retry later",
            )
        timeout_s = _timeout_s(request.headers.get(TIMEOUT_HEADER))
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != "application/json":
            raise CallAborted(INVALID, f"content-type must be application/json, got {_quoted(content_type)}")
        return timeout_s

    def _rejected(self, endpoint: Endpoint, exc: CallAborted, started: float) -> Response:
        # Turned away before the servicer, which counts the calls it sees: count this one here.
        self.metrics.record(endpoint.method, exc.code.name, time.perf_counter() - started)
        return error_response(exc.code, exc.message)

    async def _run(
        self, endpoint: Endpoint, body: bytes, context: CallContext, request: Request, started: float
    ) -> Response:
        if self._workers is None:
            self._workers = anyio.CapacityLimiter(self.settings.max_workers)
        call = functools.partial(self._answer, endpoint, body, context, started)
        async with anyio.create_task_group() as watchers:
            watchers.start_soon(_finish_on_disconnect, request, context)
            try:
                text = await anyio.to_thread.run_sync(call, limiter=self._workers)
            except CallAborted as exc:  # counted where it was raised
                return error_response(exc.code, exc.message)
            finally:
                context.finish()  # a search still running for a gone client stops
                watchers.cancel_scope.cancel()
        if context.time_remaining() <= 0:
            return error_response(grpc.StatusCode.DEADLINE_EXCEEDED, "the client's deadline passed before the answer")
        return Response(text, media_type="application/json")

    def _answer(self, endpoint: Endpoint, body: bytes, context: CallContext, started: float) -> str:
        # In a worker thread, so that a large batch's JSON never holds up the event loop.
        mark_arrival(started)  # time limits count from the call's arrival, as over gRPC
        try:
            message = _parse(body, endpoint.request_type())
        except CallAborted as exc:
            self.metrics.record(endpoint.method, exc.code.name, time.perf_counter() - started)
            raise
        answer = endpoint.handler(message, context)
        return str(json_format.MessageToJson(answer, indent=None, always_print_fields_with_no_presence=True))


async def _finish_on_disconnect(request: Request, context: CallContext) -> None:
    # After the body, the next ASGI message is http.disconnect: the client went away (or the answer was sent).
    while (await request.receive())["type"] != "http.disconnect":
        pass
    context.finish()


def _timeout_s(header: str | None) -> float | None:
    # Connect-Timeout-Ms: a positive integer of at most 10 digits.
    if header is None:
        return None
    if not (header.isascii() and header.isdigit() and len(header) <= 10 and int(header) > 0):
        raise CallAborted(
            INVALID, f"Connect-Timeout-Ms must be a positive integer of milliseconds, got {_quoted(header)}"
        )
    return int(header) / 1000


async def _body(request: Request, limit: int) -> bytes:
    # Past the limit, read on without keeping anything (up to DRAIN_FACTOR x the limit), so that a client
    # still sending its body reads the 429 instead of a reset connection.
    declared = request.headers.get("content-length", "")
    body, size = bytearray(), 0
    async for chunk in request.stream():
        size += len(chunk)
        if size <= limit:
            body += chunk
        elif size > DRAIN_FACTOR * limit:
            break
    if size > limit:
        raise _too_large(max(size, int(declared) if declared.isdigit() else 0), limit)
    return bytes(body)


def _too_large(size: int, limit: int) -> CallAborted:
    return CallAborted(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        f"request body larger than max ({size} vs. {limit} bytes, BOAF_MAX_MESSAGE_BYTES)",
    )


def _parse(body: bytes, message: Message) -> Message:
    # The proto3 JSON mapping, strictly: unknown fields and wrong types are errors that name the field.
    try:
        value = json.loads(body.decode("utf-8").strip() or "{}")
    except UnicodeDecodeError as exc:
        raise CallAborted(INVALID, f"request body is not UTF-8: byte {exc.start}") from None
    except (ValueError, RecursionError) as exc:
        raise CallAborted(INVALID, f"request body is not JSON: {_cut(str(exc))}") from None
    if not isinstance(value, dict):
        raise CallAborted(INVALID, f"request body must be a JSON object, got {_json_type(value)}")
    try:
        return json_format.ParseDict(value, message)
    except (json_format.ParseError, RecursionError, TypeError, ValueError, AttributeError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CallAborted(INVALID, f"request body: {_cut(reason)}") from None


def _json_type(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(type(value), "a number")


def _cut(text: str) -> str:
    return text if len(text) <= MAX_QUOTED_CHARS else text[:MAX_QUOTED_CHARS] + "…"


def _quoted(text: str) -> str:
    return repr(_cut(text))


def _peer(request: Request) -> str:
    client = request.client
    return "unknown" if client is None else f"ipv4:{client.host}:{client.port}"


def build_app(
    services: Sequence[tuple[ServiceDescriptor, object]],
    settings: Settings,
    metrics: Metrics,
    is_ready: Callable[[], bool],
    stage: Callable[[], str] = lambda: "",
) -> Starlette:
    """The app: ``POST /<service>/<method>`` for every RPC, ``/healthz``, ``/readyz``, and the page at ``/``.

    ``is_ready`` says whether gRPC health reports SERVING; ``/readyz`` answers 200 only then, and
    before that says what the server is doing (``stage``: "compiling kernels (first start only)", ...).
    """
    edge = Edge(settings, metrics)
    routes: list[BaseRoute] = [Route(e.path, edge.route(e), methods=["POST"]) for e in endpoints(services)]
    routes += [
        Route("/{service}/{method}", _unimplemented, methods=["POST"]),
        Route("/healthz", _alive, methods=["GET"]),
        Route("/readyz", functools.partial(_readiness, is_ready, stage), methods=["GET"]),
        Mount("/", PageFiles(directory=STATIC_DIR, html=True)),
    ]
    app = Starlette(routes=routes)
    app.state.edge = edge
    return app


async def _unimplemented(request: Request) -> Response:
    path = _quoted(request.url.path)
    return error_response(grpc.StatusCode.UNIMPLEMENTED, f"no such method: {path}")


async def _alive(request: Request) -> Response:
    return JSONResponse({"status": "alive"})


async def _readiness(is_ready: Callable[[], bool], stage: Callable[[], str], request: Request) -> Response:
    # The same gating as grpc.health.v1 for boaf.v1.Boaf: SERVING once the model is loaded and warmed up.
    if is_ready():
        return JSONResponse({"status": "SERVING"})
    body = {"status": "NOT_SERVING", "stage": stage()} if stage() else {"status": "NOT_SERVING"}
    return JSONResponse(body, status_code=503, headers={"Retry-After": str(RETRY_AFTER_S)})


class PageFiles(StaticFiles):
    """The page's static files, each with ``PAGE_HEADERS``."""

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers.update(PAGE_HEADERS)
        return response
