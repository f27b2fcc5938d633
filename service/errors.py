"""Errors the service raises itself, and the one table from errors to gRPC status codes.

Every package raises errors in the three branches of ``game.errors``: the
caller's input is wrong (``InvalidInput``), a budget ran out or the call was
stopped (``Stopped``), or boaf failed (``Failure``). ``status_of`` is the only
place that decides which gRPC code a failure becomes: the first row of
``STATUS_CODES`` whose exception type matches wins. The last three rows map
the branches; the rows above them give some errors a more precise code.
INTERNAL, and anything not in the table, tells the client nothing more than
``INTERNAL_MESSAGE`` (the servicer logs it with its traceback).
"""

from __future__ import annotations

import grpc

from game.errors import BoafError, Failure, InvalidInput, Stopped
from puzzles import GenerationFailed


class ServiceError(BoafError):
    """Base of the errors raised by the service layer itself; each is also in one branch of ``game.errors``."""


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
