"""The gRPC side of the one status table: ``Code`` as ``grpc.StatusCode``, and ending a call with one.

``boaf.service.core.errors.status_of`` decides a failure's ``Code``; this module only
spells it the way grpcio does (same name, same number) and writes the details both
edges send (``error_details``) into gRPC's ``grpc-status-details-bin`` trailer. Every
call the gRPC edge ends with an error ends here, so every message it sends has its
quoted input cut (``boaf.service.core.admission.cut_quotes``).
"""

from __future__ import annotations

import threading
from typing import NamedTuple, NoReturn

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import Message
from google.rpc import status_pb2

from boaf.service.core.admission import cut_quotes
from boaf.service.core.errors import Code, error_details
from boaf.service.core.errors import status_of as code_of

DETAILS_KEY = "grpc-status-details-bin"  # gRPC's trailer holding a google.rpc.Status with the details
GRPC_CODES: dict[Code, grpc.StatusCode] = {code: grpc.StatusCode[code.name] for code in Code}


def status_of(exc: BaseException) -> tuple[grpc.StatusCode, str]:
    """The gRPC status code and message for ``exc``: ``boaf.service.core.errors.status_of``, as grpcio spells it."""
    code, message = code_of(exc)
    return GRPC_CODES[code], message


class _Status(NamedTuple):
    # What grpc.ServicerContext.abort_with_status takes (grpc.Status's attributes).
    code: grpc.StatusCode
    details: str
    trailing_metadata: tuple[tuple[str, str | bytes], ...]


def abort(
    context: grpc.ServicerContext, code: Code, message: str, retry_after_s: int, *, fields: tuple[str, ...] = ()
) -> NoReturn:
    """End a gRPC call with ``code`` and ``message`` (quotes cut), its ``error_details`` in ``grpc-status-details-bin``.

    ``fields`` are the request fields the error names (``boaf.service.core.errors.fields_of``).

    UNAVAILABLE also carries a ``retry-after`` trailer (seconds), as the HTTP edge's header.
    """
    message = cut_quotes(message)
    details = error_details(code, message, retry_after_s, fields=fields)
    metadata: list[tuple[str, str | bytes]] = []
    if details:
        status = status_pb2.Status(code=code.value, message=message, details=[_packed(d) for d in details])
        metadata.append((DETAILS_KEY, status.SerializeToString()))
    if code is Code.UNAVAILABLE:
        metadata.append(("retry-after", str(retry_after_s)))
    context.abort_with_status(_Status(GRPC_CODES[code], message, tuple(metadata)))
    raise AssertionError("unreachable: abort_with_status raises")


def _packed(detail: Message) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(detail)
    return packed


CORE_END_WAIT_S = 0.1  # how long a call left without its request waits to learn whether gRPC core ended it


def ended_by_core(context: grpc.ServicerContext) -> bool:
    """Whether the call ended without its request because gRPC core ended it.

    grpcio ends the request stream as soon as core fails the message's receipt, and
    learns a moment later that core cancelled the call; a client that really sent no
    message is still waiting for its status. So this waits, at most
    ``CORE_END_WAIT_S``, for the call to end.
    """
    ended = threading.Event()
    if not context.add_callback(ended.set):
        return True
    ended.wait(CORE_END_WAIT_S)
    return not context.is_active()
