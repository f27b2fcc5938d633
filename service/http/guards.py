"""What every HTTP request meets before a route: its request id, the Host allowlist and CORS.

``EdgeGuard`` is an ASGI middleware around the whole app, the page included:

- **Request id.** A client's ``x-request-id`` (1-64 characters of ``A-Z a-z 0-9 . _ : -``)
  is kept, anything else is replaced by a fresh one (32 hex digits); every answer
  carries it, and every log line written while the request is served has it as
  ``request_id`` (``REQUEST_ID``, see ``install_request_id_logging``).
- **Host allowlist** (``Settings.allowed_host_set``). A Host not in it is refused
  with 400 before anything else, so a page on another site cannot reach a
  loopback server by DNS rebinding. The check guards every path, health and the
  page included (the page's origin is what rebinding targets).
- **CORS** (``Settings.cors_origin_set``; none by default). A preflight from an
  allowed origin is answered 204 with the methods and headers a client may
  send; from any other origin 403. Answers to an allowed origin say it may read
  them and the headers ``EXPOSED``.
- **GETs from other sites** (``cross_site``). A page on any site can make a browser
  send a simple GET (an image, a script, a form), and CORS does not stop it: it
  only keeps the answer from the page. So an RPC's GET whose ``Origin`` is neither
  an allowed origin nor this server's own, or that carries no ``Origin`` but
  ``Sec-Fetch-Site: cross-site``, is PERMISSION_DENIED (403) here, before any
  work. Same-origin, same-site and typed-URL GETs (``Sec-Fetch-Site``
  ``same-origin``, ``same-site``, ``none``) and clients outside a browser (neither
  header) are served.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from boaf.service.core.admission import quoted
from boaf.service.core.errors import Code
from boaf.service.core.metrics import Metrics
from boaf.service.core.settings import Settings, env_name
from boaf.service.http.statuses import error_response

REQUEST_ID_HEADER = "x-request-id"
REQUEST_ID: ContextVar[str | None] = ContextVar("boaf_request_id", default=None)
_SANE_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
ALLOWED_METHODS = "POST, GET"
ALLOWED_HEADERS = "authorization, content-type, connect-timeout-ms, connect-protocol-version, x-request-id"
EXPOSED = "x-request-id, retry-after, www-authenticate"
PREFLIGHT_MAX_AGE_S = 600


def request_id(headers: Headers) -> str:
    """The client's ``x-request-id`` when it is sane, else a new one."""
    given = headers.get(REQUEST_ID_HEADER, "")
    return given if _SANE_ID.fullmatch(given) else uuid.uuid4().hex


def host_name(host: str) -> str:
    """A Host header's name, lower case, without its port (``[::1]:8080`` -> ``[::1]``)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host.partition("]")[0] + "]"
    return host.rpartition(":")[0] if host.count(":") == 1 else host


def own_origin(scope: Scope, headers: Headers) -> str:
    """This server's origin as a browser writes it for a page it served: ``http://localhost:8080``."""
    return f"{scope.get('scheme', 'http')}://{headers.get('host', '').strip().lower()}"


def cross_site(headers: Headers, origins: frozenset[str], own: str) -> str | None:
    """Which header shows a request comes from a page on another site (``Origin 'https://evil.example'``,
    ``Sec-Fetch-Site: cross-site``), or None when it does not.

    An ``Origin`` sent is decisive: an allowed origin (``origins``) or ``own`` is not another site,
    whatever ``Sec-Fetch-Site`` says. Without one, only ``Sec-Fetch-Site: cross-site`` is.
    """
    origin = headers.get("origin")
    if origin is not None:
        return None if origin in origins or origin.strip().lower() == own else f"Origin {quoted(origin)}"
    if headers.get("sec-fetch-site", "").strip().lower() == "cross-site":
        return "Sec-Fetch-Site: cross-site"
    return None


class EdgeGuard:
    """The middleware of the module notes; ``methods`` maps each RPC path to its metric label."""

    def __init__(self, app: ASGIApp, settings: Settings, metrics: Metrics, methods: Mapping[str, str]) -> None:
        self.app = app
        self.hosts = settings.allowed_host_set()
        self.origins = settings.cors_origin_set()
        self.metrics = metrics
        self.methods = methods

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        rid = request_id(headers)
        REQUEST_ID.set(rid)
        scope.setdefault("state", {})["request_id"] = rid
        origin = headers.get("origin", "")
        send = self._stamping(send, rid, origin if origin in self.origins else None)
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope, headers: Headers) -> ASGIApp | None:
        host = host_name(headers.get("host", ""))
        if self.hosts is not None and host not in self.hosts:
            message = f"Host {quoted(host)} is not one this server answers to ({env_name('allowed_hosts')})"
            if scope["path"] in self.methods and scope["method"] == "POST":
                self.metrics.record(self.methods[scope["path"]], Code.INVALID_ARGUMENT.name, 0.0)
            return error_response(Code.INVALID_ARGUMENT, message)
        if scope["method"] == "OPTIONS" and "access-control-request-method" in headers:
            return self._preflight(headers.get("origin", ""))
        if scope["method"] == "GET" and scope["path"] in self.methods:
            return self._cross_site_get(scope, headers)
        return None

    def _cross_site_get(self, scope: Scope, headers: Headers) -> ASGIApp | None:
        sender = cross_site(headers, self.origins, own_origin(scope, headers))
        if sender is None:
            return None
        self.metrics.record(self.methods[scope["path"]], Code.PERMISSION_DENIED.name, 0.0)
        message = (
            f"GET from a page on another site ({sender}): only this server's pages, "
            f"the origins of {env_name('cors_origins')} and clients outside a browser may GET"
        )
        return error_response(Code.PERMISSION_DENIED, message)

    def _preflight(self, origin: str) -> ASGIApp:
        if origin not in self.origins:
            message = f"origin {quoted(origin)} may not call this server from a browser ({env_name('cors_origins')})"
            return error_response(Code.PERMISSION_DENIED, message)
        allowed = {
            "Access-Control-Allow-Methods": ALLOWED_METHODS,
            "Access-Control-Allow-Headers": ALLOWED_HEADERS,
            "Access-Control-Max-Age": str(PREFLIGHT_MAX_AGE_S),
        }
        return _empty(204, allowed)

    def _stamping(self, send: Send, rid: str, origin: str | None) -> Send:
        # Every answer gets the request id; one to an allowed origin says that origin may read it.
        async def stamped(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers[REQUEST_ID_HEADER] = rid
                if origin is not None:
                    headers["Access-Control-Allow-Origin"] = origin
                    headers["Access-Control-Expose-Headers"] = EXPOSED
                    headers.add_vary_header("Origin")
            await send(message)

        return stamped


def _empty(status: int, headers: Mapping[str, str]) -> ASGIApp:
    async def answer(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": status, "headers": _raw(headers)})
        await send({"type": "http.response.body", "body": b""})

    return answer


def _raw(headers: Mapping[str, str]) -> list[tuple[bytes, bytes]]:
    return [(name.lower().encode(), value.encode()) for name, value in headers.items()]


def install_request_id_logging() -> None:
    """Give every log record made while a request is served its ``request_id`` (once per process).

    A record factory, not a handler filter, so the JSON lines of ``boaf.service.core.logs`` and any
    other handler see it, whichever logger wrote the line (the servicers', uvicorn's).
    """
    current = logging.getLogRecordFactory()
    if getattr(current, "adds_request_id", False):
        return
    factory = _RequestIdRecords(current)
    logging.setLogRecordFactory(factory)


class _RequestIdRecords:
    adds_request_id = True

    def __init__(self, make: Callable[..., logging.LogRecord]) -> None:
        self.make = make

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = self.make(*args, **kwargs)
        rid = REQUEST_ID.get()
        if rid is not None and not hasattr(record, "request_id"):
            record.request_id = rid
        return record
