"""Errors the service raises itself, and the one table from errors to gRPC status codes.

The domain (``game``, ``search``, ``features``, ``models``) raises subclasses of
``game.errors.BoafError``; the service adds the few below. ``status_of`` is the
only place that decides which gRPC code a failure becomes: the first row of
``STATUS_CODES`` whose exception type matches wins, and anything not in the table
is INTERNAL (the servicer logs it with its traceback and tells the client
nothing more).
"""

from __future__ import annotations

import grpc

from game.errors import BoafError
from puzzles.errors import AnalysisStopped, GenerationFailed, InvalidPuzzleRequest


class ServiceError(BoafError):
    """Base of the errors raised by the service layer itself."""


class LimitExceeded(ServiceError):
    """A request goes past a server limit (batch size, node or time budget)."""


class NotReady(ServiceError):
    """The model is still loading or warming up, or the server is shutting down."""


class DeadlineExceeded(ServiceError):
    """The client's deadline passed before the answer."""


class Cancelled(ServiceError):
    """The client cancelled the call."""


class ModelUnavailable(ServiceError):
    """The served model failed; a server-side problem, not the caller's input."""


STATUS_CODES: tuple[tuple[type[BaseException], grpc.StatusCode], ...] = (
    (LimitExceeded, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (NotReady, grpc.StatusCode.UNAVAILABLE),
    (DeadlineExceeded, grpc.StatusCode.DEADLINE_EXCEEDED),
    (Cancelled, grpc.StatusCode.CANCELLED),
    (ModelUnavailable, grpc.StatusCode.FAILED_PRECONDITION),
    # Puzzle RPCs. The servicer turns AnalysisStopped into Cancelled when the client cancelled;
    # otherwise a time limit (the request's, the server's or the client's deadline) stopped it.
    (AnalysisStopped, grpc.StatusCode.DEADLINE_EXCEEDED),
    (GenerationFailed, grpc.StatusCode.NOT_FOUND),
    (InvalidPuzzleRequest, grpc.StatusCode.INVALID_ARGUMENT),
    # Every other domain error is bad input: an unknown card, a duplicate, a bad grid.
    (BoafError, grpc.StatusCode.INVALID_ARGUMENT),
)

INTERNAL_MESSAGE = "internal error; the server logged the details"


def status_of(exc: BaseException) -> tuple[grpc.StatusCode, str]:
    """The gRPC status code and message for ``exc``; INTERNAL for anything not in ``STATUS_CODES``."""
    for kind, code in STATUS_CODES:
        if isinstance(exc, kind):
            return code, str(exc)
    return grpc.StatusCode.INTERNAL, INTERNAL_MESSAGE
