"""The ``boaf.v1.Game`` servicer (``proto/boaf/v1/game.proto``): seeded deals, legal moves and replay.

The game needs no model, so these RPCs answer while the model is still loading.
They wear the same ``rpc`` decorator as ``boaf.v1.Boaf``: one status table, the
same metrics.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import grpc

from game import deal, play
from game.state import State
from service import converters
from service.generated.boaf.v1 import boaf_pb2 as pb
from service.generated.boaf.v1 import game_pb2, game_pb2_grpc
from service.metrics import Metrics
from service.servicer import rpc

# ``rpc`` only reads ``self.metrics``; it is typed for BoafServicer, so give it this class's method type.
game_rpc = cast(Callable[[Callable[..., Any]], Callable[..., Any]], rpc)


class GameServicer(game_pb2_grpc.GameServicer):
    """Deals and moves, validated by ``game``; every bad input is INVALID_ARGUMENT naming it."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    @game_rpc
    def Deal(self, request: game_pb2.DealRequest, context: grpc.ServicerContext) -> pb.State:
        return converters.state_to_proto(deal(request.seed, request.rows or 4, request.cols or 4))

    @game_rpc
    def Play(self, request: game_pb2.PlayRequest, context: grpc.ServicerContext) -> game_pb2.PlayResponse:
        state = play(converters.state_from_proto(request.state, "state"), list(request.moves))
        return play_response(state)


def play_response(state: State) -> game_pb2.PlayResponse:
    """The message of a state reached by play: the state, each legal move with its result, and whether it is won."""
    moves = [
        game_pb2.LegalMove(move=state.move_text(move), result=converters.state_to_proto(state.apply(move)))
        for move in state.legal_moves()
    ]
    return game_pb2.PlayResponse(state=converters.state_to_proto(state), legal_moves=moves, won=state.is_solved)
