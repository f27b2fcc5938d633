"""The ``boaf.v1.Game`` servicer (``proto/boaf/v1/game.proto``): the Game handlers over gRPC.

Each method runs its handler of ``boaf.service.rpc.handlers.GameHandlers`` through
``boaf.service.grpc.servicer.serve``, as the ``boaf.v1.Boaf`` servicer does: one status
table, the same metrics. Hint runs over the Boaf servicer's data plane.
"""

from __future__ import annotations

import grpc

from boaf.service.core.metrics import Metrics
from boaf.service.grpc.servicer import BoafServicer, serve
from boaf.service.rpc.handlers import GameHandlers
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import game_pb2, game_pb2_grpc


class GameServicer(game_pb2_grpc.GameServicer):
    """Deals, moves and hints over gRPC; every bad input is INVALID_ARGUMENT naming it."""

    def __init__(self, metrics: Metrics, boaf: BoafServicer) -> None:
        self.handlers = GameHandlers(metrics, boaf.handlers)

    def Deal(self, request: game_pb2.DealRequest, context: grpc.ServicerContext) -> pb.State:
        return serve(self.handlers.Deal, request, context)

    def Play(self, request: game_pb2.PlayRequest, context: grpc.ServicerContext) -> game_pb2.PlayResponse:
        return serve(self.handlers.Play, request, context)

    def Hint(self, request: game_pb2.HintRequest, context: grpc.ServicerContext) -> game_pb2.HintResponse:
        return serve(self.handlers.Hint, request, context)
