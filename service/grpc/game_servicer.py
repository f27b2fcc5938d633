"""The ``boaf.v1.Game`` servicer (``proto/boaf/v1/game.proto``): seeded deals, legal moves, replay and hints.

Deal and Play need no model, so they answer while the model is still loading;
Hint classifies the legal moves' results, so it runs as a batch call of the
``boaf.v1.Boaf`` servicer (its data plane, time limit and cancel flag, as
Classify). They wear the same ``rpc`` decorator as ``boaf.v1.Boaf``: one status
table, the same metrics.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import grpc
import numpy as np

from boaf.game import deal, play
from boaf.game.state import State
from boaf.service.core.dataplane import ESTIMATE
from boaf.service.core.metrics import Metrics
from boaf.service.grpc.servicer import BoafServicer, rpc
from boaf.service.rpc import converters
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import game_pb2, game_pb2_grpc

# ``rpc`` only reads ``self.metrics``; it is typed for BoafServicer, so give it this class's method type.
game_rpc = cast(Callable[[Callable[..., Any]], Callable[..., Any]], rpc)


class GameServicer(game_pb2_grpc.GameServicer):
    """Deals and moves, validated by ``game``; every bad input is INVALID_ARGUMENT naming it."""

    def __init__(self, metrics: Metrics, boaf: BoafServicer) -> None:
        self.metrics = metrics
        self.boaf = boaf

    @game_rpc
    def Deal(self, request: game_pb2.DealRequest, context: grpc.ServicerContext) -> pb.State:
        return converters.state_to_proto(deal(request.seed, request.rows or 4, request.cols or 4))

    @game_rpc
    def Play(self, request: game_pb2.PlayRequest, context: grpc.ServicerContext) -> game_pb2.PlayResponse:
        state = play(converters.state_from_proto(request.state, "state"), list(request.moves))
        return play_response(state)

    @game_rpc
    def Hint(self, request: game_pb2.HintRequest, context: grpc.ServicerContext) -> game_pb2.HintResponse:
        with self.boaf.batch_call([request.state], "Hint", context) as (plane, cancel):
            state = converters.state_from_proto(request.state, "state")
            budget = plane.hint_budget(request.max_nodes_per_move)
            hints = plane.hint(state, budget, cancel)
            self.metrics.count_answers("Hint", np.array([move.verdict != ESTIMATE for move in hints.moves], bool))
            return converters.hint_response(hints)


def play_response(state: State) -> game_pb2.PlayResponse:
    """The message of a state reached by play: the state, each legal move with its result, and whether it is won."""
    moves = [
        game_pb2.LegalMove(move=state.move_text(move), result=converters.state_to_proto(state.apply(move)))
        for move in state.legal_moves()
    ]
    return game_pb2.PlayResponse(state=converters.state_to_proto(state), legal_moves=moves, won=state.is_solved)
