"""Errors the service raises itself, and the one table from errors to gRPC status codes.

Every package raises errors in the three branches of ``boaf.game.errors``: the
caller's input is wrong (``InvalidInput``), a budget ran out or the call was
stopped (``Stopped``), or boaf failed (``Failure``). ``status_of`` is the only
place that decides which gRPC code a failure becomes: the first row of
``STATUS_CODES`` whose exception type matches wins. The last three rows map
the branches; the rows above them give some errors a more precise code.
INTERNAL, and anything not in the table, tells the client nothing more than
``INTERNAL_MESSAGE`` (the servicer logs it with its traceback).

``error_details`` adds the machine-readable part of an error, the same on both
edges (gRPC's ``grpc-status-details-bin`` trailer, ``abort``; Connect's
``details``): ``google.rpc.RetryInfo`` when retrying later may help, and
``google.rpc.BadRequest`` naming the fields at fault when a message names them
before its colon (``"state: ..."``, ``"rows, cols: ..."``), as boaf's messages do.
"""

from __future__ import annotations

import re
from typing import NamedTuple, NoReturn

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2

from boaf.game.errors import BoafError, Failure, InvalidInput, Stopped
from boaf.puzzles import GenerationFailed


class ServiceError(BoafError):
    """Base of the errors raised by the service layer itself; each is also in one branch of ``boaf.game.errors``."""


class LimitExceeded(ServiceError, InvalidInput):
    """A request asks for more than a server limit allows (batch size, node, state or time budget, samples).

    Retrying the same request cannot help, so it is OUT_OF_RANGE, never RESOURCE_EXHAUSTED.
    """


class Busy(ServiceError, Stopped):
    """The server is at a concurrency limit (searches, puzzle slots) for the whole of the call's time: retry later."""


class DeadlineExceeded(ServiceError, Stopped):
    """The client's deadline passed before the answer."""


class Cancelled(ServiceError, Stopped):
    """The client cancelled the call."""


class NotReady(ServiceError, Failure):
    """The model is still loading or warming up, or the server is shutting down."""


class Compiling(NotReady):
    """The kernels this call needs are still compiling (first start only): retry in a few seconds."""


class ModelUnavailable(ServiceError, Failure):
    """The served model failed; a server-side problem, not the caller's input: UNAVAILABLE, retry later."""


class Unauthenticated(ServiceError, InvalidInput):
    """Bearer tokens are on (``BOAF_API_TOKENS``) and the call has no valid ``authorization: Bearer`` header."""


STATUS_CODES: tuple[tuple[type[BaseException], grpc.StatusCode], ...] = (
    (LimitExceeded, grpc.StatusCode.OUT_OF_RANGE),
    (Busy, grpc.StatusCode.RESOURCE_EXHAUSTED),  # the one "retry later" code
    (Cancelled, grpc.StatusCode.CANCELLED),
    (GenerationFailed, grpc.StatusCode.NOT_FOUND),  # the iterations ran out before a solvable puzzle turned up
    (NotReady, grpc.StatusCode.UNAVAILABLE),
    (ModelUnavailable, grpc.StatusCode.UNAVAILABLE),
    (Unauthenticated, grpc.StatusCode.UNAUTHENTICATED),
    # The three branches. Any other stop (DeadlineExceeded, AnalysisStopped) is a time limit that ran out:
    # the servicer raises Cancelled instead when the client cancelled the call.
    (InvalidInput, grpc.StatusCode.INVALID_ARGUMENT),
    (Stopped, grpc.StatusCode.DEADLINE_EXCEEDED),
    (Failure, grpc.StatusCode.INTERNAL),
)

INTERNAL_MESSAGE = "internal error; the server logged the details"
# What a call in flight gets, on both edges, when the server stops before its answer (UNAVAILABLE).
SHUTTING_DOWN_MESSAGE = "the server is shutting down; retry (another replica, or this one once restarted)"


def status_of(exc: BaseException) -> tuple[grpc.StatusCode, str]:
    """The gRPC status code and message for ``exc``: the first matching row of ``STATUS_CODES``, else INTERNAL.

    An INTERNAL error's own message stays in the server's log: the client gets ``INTERNAL_MESSAGE``.
    """
    code = next((code for kind, code in STATUS_CODES if isinstance(exc, kind)), grpc.StatusCode.INTERNAL)
    return code, INTERNAL_MESSAGE if code is grpc.StatusCode.INTERNAL else str(exc)


DETAILS_KEY = "grpc-status-details-bin"  # gRPC's trailer holding a google.rpc.Status with the details
RETRY_CODES = (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAVAILABLE)
FIELD_CODES = (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.OUT_OF_RANGE)
# A message naming the fields at fault: "states[2]: ...", "rows, cols: ...", "max_nodes_per_move: ...".
_FIELD = r"[a-z][a-z0-9_]*(?:\[\d+\])?(?:\.[a-z][a-z0-9_]*(?:\[\d+\])?)*"
_FIELDS = re.compile(rf"({_FIELD}(?:, {_FIELD})*): (.+)", re.DOTALL)
WHOLE_REQUEST = "request"  # "request: a message of ... bytes": the whole message, not one field


def error_details(code: grpc.StatusCode, message: str, retry_after_s: int) -> list[Message]:
    """The ``google.rpc`` details of an error with ``code`` and ``message`` (often none).

    RESOURCE_EXHAUSTED and UNAVAILABLE: ``RetryInfo`` with ``retry_after_s`` seconds. INVALID_ARGUMENT
    and OUT_OF_RANGE whose message starts with field names and a colon: ``BadRequest``, one violation
    per field, each described by the rest of the message.
    """
    if code in RETRY_CODES:
        return [error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(seconds=retry_after_s))]
    named = _FIELDS.fullmatch(message) if code in FIELD_CODES else None
    if named is None or named.group(1) == WHOLE_REQUEST:
        return []
    violations = [
        error_details_pb2.BadRequest.FieldViolation(field=field, description=named.group(2))
        for field in named.group(1).split(", ")
    ]
    return [error_details_pb2.BadRequest(field_violations=violations)]


class _Status(NamedTuple):
    # What grpc.ServicerContext.abort_with_status takes (grpc.Status's attributes).
    code: grpc.StatusCode
    details: str
    trailing_metadata: tuple[tuple[str, str | bytes], ...]


def abort(context: grpc.ServicerContext, code: grpc.StatusCode, message: str, retry_after_s: int) -> NoReturn:
    """End a gRPC call with ``code`` and ``message``, its ``error_details`` in ``grpc-status-details-bin``.

    UNAVAILABLE also carries a ``retry-after`` trailer (seconds), as the HTTP edge's header.
    """
    details = error_details(code, message, retry_after_s)
    metadata: list[tuple[str, str | bytes]] = []
    if details:
        status = status_pb2.Status(code=code.value[0], message=message, details=[_packed(d) for d in details])
        metadata.append((DETAILS_KEY, status.SerializeToString()))
    if code is grpc.StatusCode.UNAVAILABLE:
        metadata.append(("retry-after", str(retry_after_s)))
    context.abort_with_status(_Status(code, message, tuple(metadata)))
    raise AssertionError("unreachable: abort_with_status raises")


def _packed(detail: Message) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(detail)
    return packed
