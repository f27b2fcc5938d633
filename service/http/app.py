"""The ASGI app: one route per RPC of the proto's services, health, readiness and the playground page.

Every call goes the same way whatever the method (``Edge.serve``):

1. Before the body, cheap checks (``Edge._admit``): the server is not stopping,
   the bearer token (``Admission.authenticate``), the ``Connect-Timeout-Ms``
   header, the content type (JSON or binary protobuf: ``wire.codec_for``) and
   encoding (identity or gzip, inflated in step 3 within the size limit), the
   declared ``Content-Length`` (``check_size``: OUT_OF_RANGE, and the connection
   closes unread), and a place among the calls in flight of both edges
   (``Admission.try_call``). A GET (Connect's GET, for the methods the proto marks
   ``NO_SIDE_EFFECTS``) carries its request in its query instead of a body: its
   URL is at most ``wire.GET_MAX_URL_BYTES`` long (else OUT_OF_RANGE, 414), and
   the request is decoded here (``wire.get_request``), within the size limit.
2. The body, read into one buffer, within ``BOAF_HTTP_BODY_TIMEOUT_S`` (408 and close) and the size
   limit (OUT_OF_RANGE and close as soon as it is passed). A client gone
   mid-body is CANCELLED (499), logged once at INFO.
3. In a thread of its own: one of the work slots both edges share
   (``Admission.work_slot``), then the body parsed by the call's codec
   (``wire.parse_request`` for JSON: a batch counted before it is converted), the method's handler
   (``boaf.service.rpc.handlers``) run with the call's ``Call``, and the answer
   encoded by the same codec (``wire.encode_answer`` for JSON stops when the call ends).
4. The answer handed over in pieces (``HandedOver``): the call keeps its place
   among the calls in flight until its client has taken the answer, or until its
   connection is cut for not taking it within ``BOAF_IDLE_TIMEOUT_S``
   (``protocol``), as a gRPC call keeps its place until its answer is taken or
   cancelled. Without it a client that never reads would hold its answer in the
   server's memory outside every cap.

The handlers are those the gRPC edge runs (``boaf.service.rpc.handlers``); their
errors go through the one table (``boaf.service.rpc.handlers.failure``) as there.
The edge counts every call once, with the code its client gets. ``statuses`` turns
a code into an HTTP status. Every error is JSON
(Connect's, with its ``details``), whatever the codec.
Stopping (``Edge.begin_shutdown``): calls in flight get the grace period, then
answer UNAVAILABLE with ``SHUTTING_DOWN_MESSAGE``, as over gRPC.
"""

from __future__ import annotations

import asyncio
import functools
import io
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import anyio
from google.protobuf import descriptor_pb2, message_factory
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor
from google.protobuf.message import Message
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import Message as AsgiMessage
from starlette.types import Receive, Scope, Send

from boaf.service.core.admission import Admission, mark_arrival, quoted
from boaf.service.core.compile_log import CompileProgress
from boaf.service.core.errors import (
    INTERNAL_MESSAGE,
    SHUTTING_DOWN_MESSAGE,
    Busy,
    Code,
    LimitExceeded,
    NotReady,
    fields_of,
    status_of,
)
from boaf.service.core.memory import LARGE_REQUEST_BYTES, give_memory_back_soon
from boaf.service.core.metrics import Metrics
from boaf.service.core.settings import Settings, env_name
from boaf.service.core.warmup import RETRY_AFTER_S
from boaf.service.http.api_page import api_page
from boaf.service.http.guards import EdgeGuard
from boaf.service.http.openapi import openapi_document
from boaf.service.http.pages import api_page_route, page_files
from boaf.service.http.statuses import CallAborted, error_response
from boaf.service.http.wire import (
    GET_MAX_URL_BYTES,
    GZIP_MIN_BYTES,
    Codec,
    accepts_gzip,
    codec_for,
    get_request,
    gunzipped,
    gzipped,
    request_compression,
)
from boaf.service.rpc.call import Call
from boaf.service.rpc.handlers import UNKNOWN_METHOD, Handlers, failure

log = logging.getLogger(__name__)

TIMEOUT_HEADER = "connect-timeout-ms"
INVALID = Code.INVALID_ARGUMENT
ANY_METHOD = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
CLOSE = {"Connection": "close"}  # after a refusal whose body was not read to its end
# An answer goes out in pieces this large: uvicorn waits before each while its buffer is past 64 KiB.
PIECE_BYTES = 64 * 1024


class HasHandlers(Protocol):
    """A service's servicer, as the HTTP edge serves it: through its handlers (``boaf.service.rpc.handlers``)."""

    @property
    def handlers(self) -> Handlers: ...


@dataclass(frozen=True)
class Endpoint:
    """One RPC: its HTTP path, name, request message class and handler."""

    path: str  # "/boaf.v1.Boaf/Classify"
    method: str  # "Classify"
    request_type: type[Message]
    handler: Callable[[Message, Call], Message]
    get_allowed: bool = False  # marked NO_SIDE_EFFECTS in the proto: Connect clients may call it with GET

    @property
    def http_methods(self) -> str:
        """The HTTP methods it answers, as an ``Allow`` header says them."""
        return "GET, POST" if self.get_allowed else "POST"


def endpoints(services: Sequence[tuple[ServiceDescriptor, Handlers]]) -> list[Endpoint]:
    """An ``Endpoint`` for every method of every (service descriptor, its handlers) pair."""
    return [
        Endpoint(
            f"/{service.full_name}/{method.name}",
            method.name,
            message_factory.GetMessageClass(method.input_type),
            getattr(handlers, method.name),
            has_no_side_effects(method),
        )
        for service, handlers in services
        for method in service.methods
    ]


def has_no_side_effects(method: MethodDescriptor) -> bool:
    """True when the proto marks ``method`` with ``option idempotency_level = NO_SIDE_EFFECTS``."""
    options = method.GetOptions()
    return bool(options.idempotency_level == descriptor_pb2.MethodOptions.NO_SIDE_EFFECTS)


@dataclass(frozen=True)
class Admitted:
    """What the cheap checks found: the call's timeout (s; None: none), codec, and a GET's request (else None)."""

    timeout_s: float | None
    codec: Codec
    query_body: bytes | None = None
    gzipped: bool = False  # a POST body sent with Content-Encoding: gzip (Connect's request compression)


class Refused(Exception):
    """A call answered by the edge itself, before or without its handler: the answer, already counted."""

    def __init__(self, response: Response) -> None:
        super().__init__(response.status_code)
        self.response = response


@dataclass(eq=False)
class LiveCall:
    """A call between its headers and its answer: what stopping the server ends."""

    call: Call
    shutting_down: bool = False  # ended by the server's stop, not by its client
    body_timer: anyio.CancelScope | None = None  # while its body is read


class HandedOver:
    """``response`` sent with its body in ``PIECE_BYTES`` pieces; ``release()`` once it is all sent, or failed to be.

    uvicorn waits before each piece while its client is behind, so ``release`` comes when the
    client has taken all but the last piece or two, or its connection has been cut (``protocol``).
    """

    def __init__(self, response: Response, release: Callable[[], None]) -> None:
        self.response = response
        self.release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.response(scope, receive, functools.partial(_send_in_pieces, send))
        finally:
            self.release()


async def _send_in_pieces(send: Send, message: AsgiMessage) -> None:
    body = message.get("body", b"")
    if message["type"] != "http.response.body" or len(body) <= PIECE_BYTES:
        await send(message)
        return
    view, more = memoryview(body), message.get("more_body", False)
    for start in range(0, len(body), PIECE_BYTES):
        last = start + PIECE_BYTES >= len(body)
        piece = bytes(view[start : start + PIECE_BYTES])
        await send({"type": "http.response.body", "body": piece, "more_body": more if last else True})


class Edge:
    """Admits, reads, runs and answers calls with the gRPC server's limits and its ``Admission``."""

    def __init__(self, settings: Settings, metrics: Metrics, admission: Admission) -> None:
        self.settings = settings
        self.metrics = metrics
        self.admission = admission
        self.stopping = False
        self._grace_ends_at = float("inf")
        self._calls: set[LiveCall] = set()
        self._threads: anyio.CapacityLimiter | None = None  # made on the event loop, at the first call

    @property
    def calls_in_flight(self) -> int:
        """Calls between their headers and their answer now."""
        return len(self._calls)

    def route(self, endpoint: Endpoint) -> Callable[[Request], Awaitable[Response | HandedOver]]:
        """The request handler of one endpoint."""
        return functools.partial(self.serve, endpoint)

    async def serve(self, endpoint: Endpoint, request: Request) -> Response | HandedOver:
        """Answer one call: the response message in the call's codec (JSON or binary), or a JSON error.

        An admitted call's answer is ``HandedOver``: the call leaves the calls in flight once it is sent.
        """
        started = time.perf_counter()
        try:
            admitted = self._admit(endpoint, request, started)
        except Refused as refused:
            return refused.response
        live = LiveCall(Call(_peer(request), admitted.timeout_s, started))
        try:
            response = await self._answered(endpoint, request, live, admitted, started)
        except BaseException:  # cancelled (the server stopping) or a bug: nothing will be sent
            self.admission.end_call()
            raise
        return HandedOver(response, self.admission.end_call)

    async def _answered(
        self, endpoint: Endpoint, request: Request, live: LiveCall, admitted: Admitted, started: float
    ) -> Response:
        body = b""
        try:
            self._calls.add(live)
            if admitted.query_body is None:
                body = await self._body(endpoint, request, live, started)
            else:
                body = admitted.query_body
            return await self._run(endpoint, body, admitted, live, request, started)
        except Refused as refused:
            return refused.response
        finally:
            self._calls.discard(live)
            if len(body) >= LARGE_REQUEST_BYTES or admitted.gzipped:
                give_memory_back_soon()  # its JSON (inflated: up to the limit) held many times its size while parsed

    def _admit(self, endpoint: Endpoint, request: Request, started: float) -> Admitted:
        # Cheap checks, before the body is read (a GET's request is decoded here: it is in the URL).
        is_get = request.method == "GET" and endpoint.get_allowed
        if request.method != "POST" and not is_get:
            methods = endpoint.http_methods
            message = f"{request.method}: {endpoint.path} answers {methods.replace(', ', ' and ')} only"
            raise self._refused(endpoint, started, Code.UNIMPLEMENTED, message, 405, {"Allow": methods})
        if is_get:
            self._check_url_length(endpoint, request, started)
        try:
            if self.stopping:
                raise NotReady(SHUTTING_DOWN_MESSAGE)
            self.admission.authenticate(request.headers.get("authorization"))
            timeout_s = _timeout_s(request.headers.get(TIMEOUT_HEADER))
            admitted = self._get_request(request, timeout_s) if is_get else self._post_request(request, timeout_s)
            self.admission.try_call()
        except Exception as exc:
            code, message = _status(exc)
            headers = _refusal_headers(exc)
            raise self._refused(endpoint, started, code, message, headers=headers, fields=fields_of(exc)) from None
        return admitted

    def _post_request(self, request: Request, timeout_s: float | None) -> Admitted:
        codec = codec_for(request.headers.get("content-type", ""))
        compression = request_compression(request.headers.get("content-encoding", ""))
        declared = request.headers.get("content-length", "")
        if declared.isdigit():
            self.admission.check_size(int(declared))
        return Admitted(timeout_s, codec, gzipped=compression == "gzip")

    def _get_request(self, request: Request, timeout_s: float | None) -> Admitted:
        codec, body = get_request(request.scope.get("query_string", b"").decode("latin-1"), self._max_bytes)
        self.admission.check_size(len(body))
        return Admitted(timeout_s, codec, body)

    @property
    def _max_bytes(self) -> int:
        return self.settings.max_message_bytes

    @property
    def _max_states(self) -> int:
        return self.settings.max_batch_size

    def _check_url_length(self, endpoint: Endpoint, request: Request, started: float) -> None:
        length = len(request.scope.get("raw_path", b"")) + 1 + len(request.scope.get("query_string", b""))
        if length > GET_MAX_URL_BYTES:
            message = (
                f"GET: a URL of {length:,} bytes exceeds the limit of {GET_MAX_URL_BYTES:,} bytes; "
                "send this request with POST"
            )
            raise self._refused(endpoint, started, Code.OUT_OF_RANGE, message, 414)

    def _refused(
        self,
        endpoint: Endpoint,
        started: float,
        code: Code,
        message: str,
        status: int | None = None,
        headers: dict[str, str] | None = None,
        *,
        fields: tuple[str, ...] = (),
    ) -> Refused:
        # Turned away by the edge, which counts it (as it counts every call it answers).
        self.metrics.record(endpoint.method, code.name, time.perf_counter() - started)
        return Refused(error_response(code, message, status=status, headers=headers, fields=fields))

    async def _body(self, endpoint: Endpoint, request: Request, live: LiveCall, started: float) -> bytes:
        # The body within the body timeout and the size limit; past either, the connection closes unread.
        # The client's deadline ends the wait for the body too (504, as when it passes later).
        # One growing buffer, handed on as bytes without a copy (BytesIO.getvalue shares it): a body
        # holds ~1 x its size, never its pieces and their join at once; the buffer's spare room past
        # what was written is not touched, so not resident (glibc grows a large block in place: mremap).
        limit, body, size = self.settings.max_message_bytes, io.BytesIO(), 0
        wait_s = min(self.settings.http_body_timeout_s, live.call.time_remaining())
        try:
            with anyio.move_on_after(wait_s) as live.body_timer:
                async for chunk in request.stream():
                    size += len(chunk)
                    if size > limit:
                        self.admission.check_size(size)
                    body.write(chunk)
                return body.getvalue()
        except ClientDisconnect:
            log.info("client gone before its request body ended", extra={"method": endpoint.method, "bytes": size})
            raise self._refused(endpoint, started, Code.CANCELLED, "the client went away") from None
        except LimitExceeded as exc:
            give_memory_back_soon()  # it held up to the limit before it was refused
            raise self._refused(endpoint, started, Code.OUT_OF_RANGE, str(exc), headers=CLOSE) from None
        if live.shutting_down:
            raise self._refused(endpoint, started, Code.UNAVAILABLE, SHUTTING_DOWN_MESSAGE, headers=CLOSE)
        late = Code.DEADLINE_EXCEEDED
        if live.call.time_remaining() <= 0:
            message = "the client's deadline passed before its request body arrived"
            raise self._refused(endpoint, started, late, message, headers=CLOSE)
        seconds = self.settings.http_body_timeout_s
        message = f"the request body did not arrive within {seconds:g} s ({env_name('http_body_timeout_s')})"
        raise self._refused(endpoint, started, late, message, 408, CLOSE)

    async def _run(
        self,
        endpoint: Endpoint,
        body: bytes,
        admitted: Admitted,
        live: LiveCall,
        request: Request,
        started: float,
    ) -> Response:
        if self._threads is None:  # every admitted call gets a thread at once; work slots bound the work
            self._threads = anyio.CapacityLimiter(self.settings.max_concurrent_rpcs)
        gzip = accepts_gzip(request.headers.get("accept-encoding", ""))
        answer = functools.partial(self._answer, endpoint, body, admitted, live.call, started, gzip)
        async with anyio.create_task_group() as watchers:
            watchers.start_soon(_finish_on_disconnect, request, live.call)
            try:
                data, encoding = await anyio.to_thread.run_sync(answer, limiter=self._threads)
                code, response = Code.OK, Response(data, media_type=admitted.codec.media_type)
                response.headers["vary"] = "Accept-Encoding"
                if encoding:
                    response.headers["content-encoding"] = encoding
            except CallAborted as exc:
                code, response = exc.code, error_response(exc.code, exc.message, fields=exc.fields)
            finally:
                live.call.finish()  # a search still running for a gone client stops
                watchers.cancel_scope.cancel()
        code, response = self._final(live, code, response)
        # Counted here, once, with the code the client gets (the handlers count nothing themselves).
        self.metrics.record(endpoint.method, code.name, time.perf_counter() - started)
        return response

    def _final(self, live: LiveCall, code: Code, response: Response) -> tuple[Code, Response]:
        # A call the server's stop ended answers UNAVAILABLE, whatever its work said; one past its deadline, 504.
        if live.shutting_down or time.perf_counter() >= self._grace_ends_at:
            unavailable = Code.UNAVAILABLE
            return unavailable, error_response(unavailable, SHUTTING_DOWN_MESSAGE)
        if live.call.time_remaining() <= 0 and code is Code.OK:
            late = Code.DEADLINE_EXCEEDED
            return late, error_response(late, "the client's deadline passed before the answer")
        return code, response

    def _answer(
        self, endpoint: Endpoint, body: bytes, admitted: Admitted, call: Call, started: float, gzip: bool
    ) -> tuple[bytes, str]:
        # In a worker thread, so that a large batch's JSON (and its gzip) never holds up the event loop.
        # Returns the answer and its content encoding ("" or "gzip": Connect's Accept-Encoding for unary calls).
        mark_arrival(started)  # time limits count from the call's arrival, as over gRPC
        # A work slot is waited for until the client's deadline, or the longest server time limit from arrival.
        deadline = min(started + self.admission.wait_limit_s(), time.perf_counter() + call.time_remaining())
        try:
            # Past the deadline: DEADLINE_EXCEEDED. The party is the connection, so slots are shared fairly.
            with self.admission.work_slot(deadline, lambda: not call.finished, party=call.peer):
                if admitted.gzipped:
                    body = gunzipped(body, self.settings.max_message_bytes)
                message = admitted.codec.parse(body, endpoint.request_type(), call, max_states=self._max_states)
                answer = endpoint.handler(message, call)
                data = admitted.codec.encode(answer, call)
                if gzip and len(data) >= GZIP_MIN_BYTES:
                    return gzipped(data, call), "gzip"
                return data, ""
        except CallAborted:
            raise
        except Exception as exc:
            raise CallAborted(*failure(endpoint.method, exc, call.peer), fields=fields_of(exc)) from None

    def begin_shutdown(self, grace_ends_at: float) -> None:
        """Refuse new calls now; at ``grace_ends_at`` (``time.perf_counter``), end the calls still in flight.

        Runs on the event loop. Any answer ready after ``grace_ends_at`` is UNAVAILABLE too, so a call whose
        work the gRPC side's stop cancelled (``DataPlane.cancel_all``) never answers as if it had finished.
        """
        self.stopping = True
        self._grace_ends_at = grace_ends_at
        asyncio.get_running_loop().call_later(max(0.0, grace_ends_at - time.perf_counter()), self._end_calls)

    def _end_calls(self) -> None:
        for live in list(self._calls):
            live.shutting_down = True  # its work stops, and it answers UNAVAILABLE
            live.call.finish()
            if live.body_timer is not None:
                live.body_timer.cancel()


def _status(exc: BaseException) -> tuple[Code, str]:
    # The edge's own refusals carry their code; the rest go through the one table.
    return (exc.code, exc.message) if isinstance(exc, CallAborted) else status_of(exc)


def _refusal_headers(exc: BaseException) -> dict[str, str] | None:
    if isinstance(exc, LimitExceeded):
        return CLOSE  # the declared body is never read: the connection closes after the answer
    if _status(exc)[0] is Code.UNAUTHENTICATED:
        return {"WWW-Authenticate": "Bearer"}
    if isinstance(exc, Busy):
        return {"Retry-After": str(RETRY_AFTER_S)}
    return None


async def _finish_on_disconnect(request: Request, call: Call) -> None:
    # After the body, the next ASGI message is http.disconnect: the client went away (or the answer was sent).
    while (await request.receive())["type"] != "http.disconnect":
        pass
    call.finish()


def _timeout_s(header: str | None) -> float | None:
    # Connect-Timeout-Ms: a positive integer of at most 10 digits.
    if header is None:
        return None
    if not (header.isascii() and header.isdigit() and len(header) <= 10 and int(header) > 0):
        message = f"Connect-Timeout-Ms must be a positive integer of milliseconds, got {quoted(header)}"
        raise CallAborted(INVALID, message)
    return int(header) / 1000


def _peer(request: Request) -> str:
    client = request.client
    return "unknown" if client is None else f"ipv4:{client.host}:{client.port}"


def build_app(
    services: Sequence[tuple[ServiceDescriptor, Handlers]],
    settings: Settings,
    metrics: Metrics,
    admission: Admission,
    *,
    is_ready: Callable[[], bool],
    stage: Callable[[], str] = lambda: "",
    compile_progress: Callable[[], CompileProgress | None] = lambda: None,
) -> Starlette:
    """The app: ``POST /<service>/<method>`` for every RPC (and ``GET`` for those marked ``NO_SIDE_EFFECTS``),
    ``/healthz``, ``/readyz``, ``/openapi.json`` (``openapi``: made here, once), and the page at ``/`` with
    the API page at ``/api`` (``api_page``).

    ``is_ready`` says whether gRPC health reports SERVING; ``/readyz`` answers 200 only then, and
    before that says what the server is doing (``stage``: "compiling kernels (first start only)", ...) and,
    while kernels compile, how many units of them are done (``compile_progress``).
    The pages are served only when ``settings.page_enabled``.
    """
    edge = Edge(settings, metrics, admission)
    rpcs = endpoints(services)
    routes: list[BaseRoute] = [Route(e.path, edge.route(e), methods=ANY_METHOD) for e in rpcs]
    routes += [
        Route("/{service}/{method}", functools.partial(_unimplemented, metrics), methods=["POST"]),
        Route("/healthz", _alive, methods=["GET"]),
        Route("/readyz", functools.partial(_readiness, is_ready, stage, compile_progress), methods=["GET"]),
    ]
    document = openapi_document([service for service, _ in services], settings)
    routes.append(Route("/openapi.json", _fixed(json.dumps(document).encode(), "application/json"), methods=["GET"]))
    if settings.page_enabled:
        routes.append(Route("/api", functools.partial(api_page_route, api_page(document)), methods=["GET"]))
        page = page_files()
        routes.append(Mount("/", page))
    guard = Middleware(EdgeGuard, settings=settings, metrics=metrics, methods={e.path: e.method for e in rpcs})
    handlers = {HTTPException: _http_error, Exception: _internal_error}
    app = Starlette(routes=routes, middleware=[guard], exception_handlers=handlers)
    app.state.edge = edge
    return app


async def _http_error(request: Request, exc: Exception) -> Response:
    # Starlette's own answers (no route, a method a route does not take, no such file): JSON like every other.
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    headers = dict(exc.headers or {}) if isinstance(exc, HTTPException) else None
    if status == 404:
        return error_response(Code.NOT_FOUND, f"no such path: {quoted(request.url.path)}")
    if status == 405:
        message = f"{request.method}: {quoted(request.url.path)} does not answer it"
        return error_response(Code.UNIMPLEMENTED, message, status=405, headers=headers)
    return error_response(Code.INVALID_ARGUMENT, f"{status}: {quoted(request.url.path)}", status=status)


async def _internal_error(request: Request, exc: Exception) -> Response:
    # A bug outside any call (a call's own errors never get here): JSON all the same; uvicorn logs the traceback.
    return error_response(Code.INTERNAL, INTERNAL_MESSAGE)


async def _unimplemented(metrics: Metrics, request: Request) -> Response:
    metrics.record(UNKNOWN_METHOD, Code.UNIMPLEMENTED.name, 0.0)
    return error_response(Code.UNIMPLEMENTED, f"no such method: {quoted(request.url.path)}")


def _fixed(
    body: bytes, media_type: str, headers: dict[str, str] | None = None
) -> Callable[[Request], Awaitable[Response]]:
    # A route that always answers the same bytes, made once at start-up (the OpenAPI document, the API page).
    async def answer(request: Request) -> Response:
        return Response(body, media_type=media_type, headers=headers)

    return answer


async def _alive(request: Request) -> Response:
    return JSONResponse({"status": "alive"})


async def _readiness(
    is_ready: Callable[[], bool],
    stage: Callable[[], str],
    compile_progress: Callable[[], CompileProgress | None],
    request: Request,
) -> Response:
    # The same gating as grpc.health.v1 for boaf.v1.Boaf: SERVING once the model is loaded and warmed up.
    if is_ready():
        return JSONResponse({"status": "SERVING"})
    body: dict[str, object] = {"status": "NOT_SERVING"}
    if now := stage():
        body["stage"] = now
    if (progress := compile_progress()) is not None:  # only while kernels compile
        body.update(kernels_compiled=progress.done, kernels_total=progress.total)
    return JSONResponse(body, status_code=503, headers={"Retry-After": str(RETRY_AFTER_S)})
