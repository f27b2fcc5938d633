"""Errors the service raises itself, and the one table from errors to status codes.

Every package raises errors in the three branches of ``boaf.game.errors``: the
caller's input is wrong (``InvalidInput``), a budget ran out or the call was
stopped (``Stopped``), or boaf failed (``Failure``). ``status_of`` is the only
place that decides which ``Code`` a failure becomes: the first row of
``STATUS_CODES`` whose exception type matches wins. The last three rows map
the branches; the rows above them give some errors a more precise code.
INTERNAL, and anything not in the table, tells the client nothing more than
``INTERNAL_MESSAGE`` (the edge logs it with its traceback).

``Code`` is gRPC's list of status codes, names and numbers, with no transport
behind it: the gRPC edge turns it into ``grpc.StatusCode`` (``boaf.service.grpc.status``)
and the HTTP edge into an HTTP status and Connect's code name
(``boaf.service.http.statuses``).

``error_details`` adds the machine-readable part of an error, the same on both
edges (gRPC's ``grpc-status-details-bin`` trailer; Connect's
``details``): ``google.rpc.RetryInfo`` when retrying later may help, and
``google.rpc.BadRequest`` naming the fields at fault when the error names some
(``BoafError.fields``, ``fields_of``): one violation per field, described by the
message after the fields and their colon (``"rows, cols: a 9x9 grid has ..."``).
"""

from __future__ import annotations

import enum

from google.protobuf import duration_pb2
from google.protobuf.message import Message
from google.rpc import error_details_pb2

from boaf.game.errors import BoafError, Failure, InvalidInput, Stopped
from boaf.puzzles import GenerationFailed


class Code(enum.Enum):
    """A call's status code: gRPC's names and numbers (``google.rpc.Code``), for both edges."""

    OK = 0
    CANCELLED = 1
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    ABORTED = 10
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    UNAVAILABLE = 14
    DATA_LOSS = 15
    UNAUTHENTICATED = 16


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


STATUS_CODES: tuple[tuple[type[BaseException], Code], ...] = (
    (LimitExceeded, Code.OUT_OF_RANGE),
    (Busy, Code.RESOURCE_EXHAUSTED),  # the one "retry later" code
    (Cancelled, Code.CANCELLED),
    (GenerationFailed, Code.NOT_FOUND),  # the iterations ran out before a solvable puzzle turned up
    (NotReady, Code.UNAVAILABLE),
    (ModelUnavailable, Code.UNAVAILABLE),
    (Unauthenticated, Code.UNAUTHENTICATED),
    # The three branches. Any other stop (DeadlineExceeded, AnalysisStopped) is a time limit that ran out:
    # the handlers raise Cancelled instead when the client cancelled the call.
    (InvalidInput, Code.INVALID_ARGUMENT),
    (Stopped, Code.DEADLINE_EXCEEDED),
    (Failure, Code.INTERNAL),
)

INTERNAL_MESSAGE = "internal error; the server logged the details"
# What a call in flight gets, on both edges, when the server stops before its answer (UNAVAILABLE).
SHUTTING_DOWN_MESSAGE = "the server is shutting down; retry (another replica, or this one once restarted)"


def status_of(exc: BaseException) -> tuple[Code, str]:
    """The status code and message for ``exc``: the first matching row of ``STATUS_CODES``, else INTERNAL.

    An INTERNAL error's own message stays in the server's log: the client gets ``INTERNAL_MESSAGE``.
    """
    code = next((code for kind, code in STATUS_CODES if isinstance(exc, kind)), Code.INTERNAL)
    return code, INTERNAL_MESSAGE if code is Code.INTERNAL else str(exc)


RETRY_CODES = (Code.RESOURCE_EXHAUSTED, Code.UNAVAILABLE)
FIELD_CODES = (Code.INVALID_ARGUMENT, Code.OUT_OF_RANGE)


def fields_of(exc: BaseException) -> tuple[str, ...]:
    """The request fields ``exc`` names (``BoafError.fields``); none for any other exception."""
    return exc.fields if isinstance(exc, BoafError) else ()


def error_details(code: Code, message: str, retry_after_s: int, *, fields: tuple[str, ...] = ()) -> list[Message]:
    """The ``google.rpc`` details of an error with ``code`` and ``message`` (often none).

    RESOURCE_EXHAUSTED and UNAVAILABLE: ``RetryInfo`` with ``retry_after_s`` seconds. INVALID_ARGUMENT
    and OUT_OF_RANGE naming ``fields``: ``BadRequest``, one violation per field, each described by
    ``message`` without its leading ``"<fields>: "``.
    """
    if code in RETRY_CODES:
        return [error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(seconds=retry_after_s))]
    if code not in FIELD_CODES or not fields:
        return []
    description = message.removeprefix(f"{', '.join(fields)}: ")
    violations = [error_details_pb2.BadRequest.FieldViolation(field=field, description=description) for field in fields]
    return [error_details_pb2.BadRequest(field_violations=violations)]
