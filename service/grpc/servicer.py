"""The gRPC face of the RPC handlers: ``grpc.ServicerContext`` in, ``Call`` to the handler, errors to statuses.

Each method of ``BoafServicer`` and ``GameServicer`` (``boaf.service.grpc.game_servicer``)
runs its handler of ``boaf.service.rpc.handlers`` through ``serve``: the call's ``Call``
is made from the context (``call_of``), and a handler's error ends the call with the
code the one table gives it (``boaf.service.rpc.handlers.failure``), in gRPC's spelling
and with its details (``boaf.service.grpc.status.abort``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import grpc

from boaf.service.core.dataplane import DataPlane
from boaf.service.core.errors import fields_of
from boaf.service.core.metrics import Metrics
from boaf.service.core.warmup import RETRY_AFTER_S
from boaf.service.grpc.status import abort
from boaf.service.rpc.call import Call
from boaf.service.rpc.handlers import BoafHandlers, failure
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc

Request = TypeVar("Request")
Response = TypeVar("Response")


def call_of(context: grpc.ServicerContext) -> Call:
    """The ``Call`` of a gRPC call: its peer (read only if asked for) and deadline, ended (its cancel flag set)
    when the RPC ends."""
    call = Call(context.peer, context.time_remaining())
    if not context.add_callback(call.finish):
        call.finish()  # the RPC has already terminated
    return call


def serve(handler: Callable[[Request, Call], Response], request: Request, context: grpc.ServicerContext) -> Response:
    """``handler``'s answer to ``request``; its error aborts the call with its status code and details."""
    call = call_of(context)
    try:
        return handler(request, call)
    except Exception as exc:
        code, message = failure(getattr(handler, "__name__", "rpc"), exc, call.peer)
        abort(context, code, message, RETRY_AFTER_S, fields=fields_of(exc))  # with its details; UNAVAILABLE: retry hint


class BoafServicer(boaf_pb2_grpc.BoafServicer):
    """The RPCs of ``proto/boaf/v1/boaf.proto`` over gRPC. Until ``plane`` is set, every call is UNAVAILABLE."""

    def __init__(self, metrics: Metrics) -> None:
        self.handlers = BoafHandlers(metrics)

    @property
    def plane(self) -> DataPlane | None:
        """The data plane the handlers serve (None until the model is loaded and warmed up)."""
        return self.handlers.plane

    @plane.setter
    def plane(self, plane: DataPlane | None) -> None:
        self.handlers.plane = plane

    @property
    def stage(self) -> Callable[[], str]:
        """What the server is doing while there is no plane (the message of UNAVAILABLE)."""
        return self.handlers.stage

    @stage.setter
    def stage(self, stage: Callable[[], str]) -> None:
        self.handlers.stage = stage

    def Classify(self, request: pb.ClassifyRequest, context: grpc.ServicerContext) -> pb.ClassifyResponse:
        return serve(self.handlers.Classify, request, context)

    def Features(self, request: pb.FeaturesRequest, context: grpc.ServicerContext) -> pb.FeaturesResponse:
        return serve(self.handlers.Features, request, context)

    def Solve(self, request: pb.SolveRequest, context: grpc.ServicerContext) -> pb.SolveResponse:
        return serve(self.handlers.Solve, request, context)

    def AnalyzePuzzle(
        self, request: pb.AnalyzePuzzleRequest, context: grpc.ServicerContext
    ) -> pb.AnalyzePuzzleResponse:
        return serve(self.handlers.AnalyzePuzzle, request, context)

    def GeneratePuzzle(
        self, request: pb.GeneratePuzzleRequest, context: grpc.ServicerContext
    ) -> pb.GeneratePuzzleResponse:
        return serve(self.handlers.GeneratePuzzle, request, context)

    def GetServerInfo(self, request: pb.GetServerInfoRequest, context: grpc.ServicerContext) -> pb.ServerInfo:
        return serve(self.handlers.GetServerInfo, request, context)
