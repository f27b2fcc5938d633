"""The HTTP side of the one status table: ``Code`` as an HTTP status and Connect's code name.

The one table (``boaf.service.core.errors.status_of``) decides a failure's ``Code``; the
HTTP edge only translates it here, so a call fails the same way on both sides, with the
same message. The statuses are Connect's (connectrpc.com/docs/protocol).
``error_response`` writes every error the edge answers, whoever decided it, with
the same details the gRPC side sends (``boaf.service.core.errors.error_details``), in
Connect's form: ``{"type": "google.rpc.RetryInfo", "value": <base64 of the
message>, "debug": <the message as JSON>}``.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message
from starlette.responses import JSONResponse

from boaf.service.core.admission import cut_quotes
from boaf.service.core.errors import Code, error_details
from boaf.service.core.warmup import RETRY_AFTER_S

HTTP_STATUS: dict[Code, int] = {
    Code.OK: 200,
    Code.CANCELLED: 499,
    Code.UNKNOWN: 500,
    Code.INVALID_ARGUMENT: 400,
    Code.DEADLINE_EXCEEDED: 504,
    Code.NOT_FOUND: 404,
    Code.ALREADY_EXISTS: 409,
    Code.PERMISSION_DENIED: 403,
    Code.RESOURCE_EXHAUSTED: 429,
    Code.FAILED_PRECONDITION: 400,
    Code.ABORTED: 409,
    Code.OUT_OF_RANGE: 400,
    Code.UNIMPLEMENTED: 501,
    Code.INTERNAL: 500,
    Code.UNAVAILABLE: 503,
    Code.DATA_LOSS: 500,
    Code.UNAUTHENTICATED: 401,
}


class CallAborted(Exception):
    """A call the HTTP edge ends with ``code`` and ``message``, naming ``fields`` (written by ``error_response``)."""

    def __init__(self, code: Code, message: str, *, fields: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.fields = fields


def connect_code(code: Code) -> str:
    """Connect's name of a code: ``invalid_argument``; CANCELLED is spelled ``canceled``."""
    return "canceled" if code is Code.CANCELLED else code.name.lower()


def error_response(
    code: Code,
    message: str,
    *,
    status: int | None = None,
    headers: Mapping[str, str] | None = None,
    fields: tuple[str, ...] = (),
) -> JSONResponse:
    """Connect's error body, ``{"code": "invalid_argument", "message": ...}``, with the code's HTTP status.

    ``status`` overrides the status for the few answers HTTP has its own for (405, 408, 414). UNAVAILABLE
    (loading, compiling kernels, stopping) carries a ``Retry-After`` hint. The message always encodes
    (``cut_quotes`` escapes a lone surrogate quoted from the input). ``fields`` are the request fields
    the error names (``boaf.service.core.errors.fields_of``).
    """
    extra = {"Retry-After": str(RETRY_AFTER_S)} if code is Code.UNAVAILABLE else {}
    body: dict[str, Any] = {"code": connect_code(code), "message": cut_quotes(message)}
    details = error_details(code, body["message"], RETRY_AFTER_S, fields=fields)
    if details:
        body["details"] = [connect_detail(detail) for detail in details]
    return JSONResponse(
        body,
        status_code=HTTP_STATUS[code] if status is None else status,
        headers={**extra, **(headers or {})},
    )


def connect_detail(detail: Message) -> dict[str, Any]:
    """One of Connect's error details: the message's full name, its bytes in base64 (unpadded), and as JSON."""
    value = base64.b64encode(detail.SerializeToString()).decode("ascii").rstrip("=")
    debug = json_format.MessageToDict(detail)
    return {"type": detail.DESCRIPTOR.full_name, "value": value, "debug": debug}
