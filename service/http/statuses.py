"""The one table from gRPC status codes to HTTP statuses and Connect's code names.

The servicers decide the gRPC code (``boaf.service.core.errors.status_of``); the HTTP edge
only translates it here, so a call fails the same way on both sides, with the
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

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message
from starlette.responses import JSONResponse

from boaf.service.core.admission import cut_quotes
from boaf.service.core.errors import error_details
from boaf.service.core.warmup import RETRY_AFTER_S

HTTP_STATUS: dict[grpc.StatusCode, int] = {
    grpc.StatusCode.OK: 200,
    grpc.StatusCode.CANCELLED: 499,
    grpc.StatusCode.UNKNOWN: 500,
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.FAILED_PRECONDITION: 400,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.OUT_OF_RANGE: 400,
    grpc.StatusCode.UNIMPLEMENTED: 501,
    grpc.StatusCode.INTERNAL: 500,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DATA_LOSS: 500,
    grpc.StatusCode.UNAUTHENTICATED: 401,
}


def connect_code(code: grpc.StatusCode) -> str:
    """Connect's name of a gRPC code: ``invalid_argument``; CANCELLED is spelled ``canceled``."""
    return "canceled" if code is grpc.StatusCode.CANCELLED else code.name.lower()


def error_response(
    code: grpc.StatusCode, message: str, *, status: int | None = None, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    """Connect's error body, ``{"code": "invalid_argument", "message": ...}``, with the code's HTTP status.

    ``status`` overrides the status for the few answers HTTP has its own for (405, 408, 414). UNAVAILABLE
    (loading, compiling kernels, stopping) carries a ``Retry-After`` hint. The message always encodes
    (``cut_quotes`` escapes a lone surrogate quoted from the input).
    """
    extra = {"Retry-After": str(RETRY_AFTER_S)} if code is grpc.StatusCode.UNAVAILABLE else {}
    body: dict[str, Any] = {"code": connect_code(code), "message": cut_quotes(message)}
    details = error_details(code, body["message"], RETRY_AFTER_S)
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
