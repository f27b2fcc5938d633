"""The RPCs of ``boaf.v1.Boaf`` and ``boaf.v1.Game``, whichever edge a call came in by.

Each handler takes the request message and the call's ``Call``, converts the request
(``converters``), makes one call into the data plane, and converts the result back.
A failure is raised as boaf's own exception (the three branches of
``boaf.game.errors``, ``boaf.service.core.errors``); each edge turns it into its
status through the one table (``failure``, then ``boaf.service.grpc.status`` or
``boaf.service.http.statuses``).

``rpc`` is the one decorator every handler wears: it keeps the in-flight gauge, turns
an answer past the client's deadline into ``DeadlineExceeded`` and opens the call's
span. The edges count each call (``boaf_requests_total``) once, with the code its
client gets.

Deal and Play need no model, so they answer while the model is still loading; Hint
classifies the legal moves' results, so it runs as a batch over the Boaf handlers'
data plane, as Classify does.
"""

from __future__ import annotations

import functools
import logging
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

import numpy as np

from boaf import search
from boaf.game import deal, play
from boaf.game.state import State
from boaf.puzzles import AnalysisStopped
from boaf.service.core import tracing
from boaf.service.core.admission import cut_quotes
from boaf.service.core.answers import ESTIMATE, Batch, Classification, Hints
from boaf.service.core.dataplane import DataPlane, Read
from boaf.service.core.deadlines import CancelFlag
from boaf.service.core.errors import Cancelled, Code, DeadlineExceeded, ModelUnavailable, NotReady, status_of
from boaf.service.core.limits import MAX_MESSAGE_BYTES
from boaf.service.core.metrics import Metrics
from boaf.service.rpc import converters
from boaf.service.rpc.call import Call
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import game_pb2

log = logging.getLogger(__name__)

UNKNOWN_METHOD = "unknown"  # the metric label of every method the server does not serve, on either edge

Request = TypeVar("Request")
Response = TypeVar("Response")
Owner = TypeVar("Owner", bound="Handlers")
Method = Callable[[Owner, Request, Call], Response]


class Handlers:
    """What every service's handlers share: the metrics they keep."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics


def rpc(method: Method[Owner, Request, Response]) -> Method[Owner, Request, Response]:
    """Keep the in-flight gauge of one RPC, refuse an answer past the client's deadline, and trace the call."""
    name = method.__name__

    @functools.wraps(method)
    def handler(self: Owner, request: Request, call: Call) -> Response:
        in_flight = self.metrics.in_flight_of(name)
        in_flight.inc()
        try:
            response = method(self, request, call)
            if call.time_remaining() <= 0:  # an answer past the client's deadline has no reader: never OK
                raise DeadlineExceeded("the client's deadline passed before the answer")
            return response
        finally:
            in_flight.dec()

    return tracing.traced(name, handler)  # the edge span, gRPC and HTTP alike


def failure(method: str, exc: BaseException, peer: str) -> tuple[Code, str]:
    """The status code and message a call of ``method`` that raised ``exc`` ends with, on either edge.

    ``status_of`` decides the code; quoted input in the message is cut (``cut_quotes``). An INTERNAL
    failure is logged with its traceback (the client learns nothing more), any other at DEBUG.
    """
    code, message = status_of(exc)
    message = cut_quotes(message)
    if code is Code.INTERNAL:
        log.error("%s failed", method, exc_info=exc, extra={"method": method, "peer": peer})
    else:
        log.debug("%s: %s %s", method, code.name, message, extra={"method": method, "code": code.name})
    return code, message


class BoafHandlers(Handlers):
    """The RPCs of ``proto/boaf/v1/boaf.proto``. Until ``plane`` is set, every call is UNAVAILABLE."""

    def __init__(self, metrics: Metrics) -> None:
        super().__init__(metrics)
        self.plane: DataPlane | None = None
        self.stage: Callable[[], str] = lambda: "the model is still loading"  # the server says what it is doing
        # The served plane's info; a weak reference, so a reload's old model is not held by it.
        self._server_info: tuple[weakref.ref[DataPlane], pb.ServerInfo] | None = None

    def ready_plane(self) -> DataPlane:
        """The data plane serving now; ``NotReady`` (saying what the server is doing) while there is none."""
        if self.plane is None:
            raise NotReady(f"{self.stage()}; retry when health reports SERVING")
        return self.plane

    def read_states(self, method: str, states: Sequence[pb.State]) -> Read[Batch]:
        """How a batch call of ``method`` reads ``states``: counted (``boaf_batch_states``), then converted."""

        def read(cancel: CancelFlag) -> Batch:
            self.metrics.batch_states_of(method).observe(len(states))
            return converters.states_from_proto(states, cancel)

        return read

    @rpc
    def Classify(self, request: pb.ClassifyRequest, call: Call) -> pb.ClassifyResponse:
        plane, read = self.ready_plane(), self.read_states("Classify", request.states)
        with stopped_for_a_gone_client(call, "Classify"):
            return plane.classify_call(
                read,
                self._classify_response,
                size=len(request.states),
                cancel=call.cancel,
                deadline_s=call.deadline_s(),
            )

    def _classify_response(self, classification: Classification, cancel: CancelFlag) -> pb.ClassifyResponse:
        self.metrics.count_answers("Classify", classification.exact)
        return converters.classify_response(classification, cancel)

    @rpc
    def Features(self, request: pb.FeaturesRequest, call: Call) -> pb.FeaturesResponse:
        plane, read = self.ready_plane(), self.read_states("Features", request.states)
        with stopped_for_a_gone_client(call, "Features"):
            return plane.features_call(
                read,
                converters.features_response,
                size=len(request.states),
                cancel=call.cancel,
                deadline_s=call.deadline_s(),
            )

    @rpc
    def Solve(self, request: pb.SolveRequest, call: Call) -> pb.SolveResponse:
        plane = self.ready_plane()
        state = converters.state_from_proto(request.state, "state")
        algorithm = converters.algorithm_from_proto(request.algorithm)
        result = plane.solve(
            state,
            algorithm,
            max_nodes=request.max_nodes,
            time_limit_ms=request.time_limit_ms,
            cancel=call.cancel,
            deadline_s=call.deadline_s(),
        )
        if result.status == search.UNKNOWN:
            raise_if_client_gone(call, f"after {result.nodes} nodes")
        self.metrics.solve_nodes.labels(result.status).observe(result.nodes)
        return converters.solve_response(result)

    @rpc
    def AnalyzePuzzle(self, request: pb.AnalyzePuzzleRequest, call: Call) -> pb.AnalyzePuzzleResponse:
        plane = self.ready_plane()
        state = converters.state_from_proto(request.state, "state")
        options = converters.analysis_options(request)
        with stopped_for_a_gone_client(call, "analysis"):
            analysis = plane.analyze_puzzle(
                state,
                max_states=request.max_states,
                time_limit_ms=request.time_limit_ms,
                cancel=call.cancel,
                deadline_s=call.deadline_s(),
                **options,
            )
        return converters.analyze_puzzle_response(analysis)

    @rpc
    def GeneratePuzzle(self, request: pb.GeneratePuzzleRequest, call: Call) -> pb.GeneratePuzzleResponse:
        options = converters.generation_options(request)
        plane = self.ready_plane()
        with stopped_for_a_gone_client(call, "generation"):
            puzzle = plane.generate_puzzle(
                request.cards,
                time_limit_ms=request.time_limit_ms,
                cancel=call.cancel,
                deadline_s=call.deadline_s(),
                **options,
            )
        return converters.generate_puzzle_response(puzzle)

    @rpc
    def GetServerInfo(self, request: pb.GetServerInfoRequest, call: Call) -> pb.ServerInfo:
        # Built once per DataPlane: a new model (a new plane) gets a new one.
        plane = self.ready_plane()
        cached = self._server_info
        if cached is None or cached[0]() is not plane:
            cached = self._server_info = (weakref.ref(plane), converters.server_info(plane.info()))
        return cached[1]


def check_answers_fit(plane: DataPlane) -> None:
    """``ModelUnavailable`` when GetServerInfo's answer, or a Classify answer of ``max_batch_size`` states at their
    largest (every field set, ``nodes`` at 2**64 - 1), of ``plane``'s model is past ``BOAF_MAX_MESSAGE_BYTES``:
    a model whose answers could not be sent (a huge model card) is never served."""
    limit = plane.settings.max_message_bytes
    info = converters.server_info(plane.info()).ByteSize()
    one = pb.Prediction(p_solvable=0.5, solvable=True, exact=True, nodes=2**64 - 1).ByteSize()
    empty = pb.ClassifyResponse(model_version=plane.classifier.version, threshold=0.5).ByteSize()
    classify = empty + plane.settings.max_batch_size * (2 + one)  # a tag and a one-byte length each
    for answer, size in (("GetServerInfo", info), ("the largest Classify", classify)):
        if size > limit:
            raise ModelUnavailable(
                f"{answer} answer of model {plane.classifier.version[:40]!r} would be {size:,} bytes, past "
                f"{MAX_MESSAGE_BYTES.variable}={limit:,} (a model card that large cannot be served)"
            )


class GameHandlers(Handlers):
    """The RPCs of ``proto/boaf/v1/game.proto``: deals and moves, validated by ``game``, and hints.

    Every bad input is INVALID_ARGUMENT naming it. Hint runs over ``boaf``'s data plane.
    """

    def __init__(self, metrics: Metrics, boaf: BoafHandlers) -> None:
        super().__init__(metrics)
        self.boaf = boaf

    @rpc
    def Deal(self, request: game_pb2.DealRequest, call: Call) -> pb.State:
        return converters.state_to_proto(deal(request.seed, request.rows or 4, request.cols or 4))

    @rpc
    def Play(self, request: game_pb2.PlayRequest, call: Call) -> game_pb2.PlayResponse:
        state = play(converters.state_from_proto(request.state, "state"), list(request.moves))
        return converters.play_response(state)

    @rpc
    def Hint(self, request: game_pb2.HintRequest, call: Call) -> game_pb2.HintResponse:
        plane = self.boaf.ready_plane()
        with stopped_for_a_gone_client(call, "Hint"):
            return plane.hint_call(
                self._read_state(request.state),
                self._hint_response,
                max_nodes_per_move=request.max_nodes_per_move,
                cancel=call.cancel,
                deadline_s=call.deadline_s(),
            )

    def _read_state(self, message: pb.State) -> Read[State]:
        def read(cancel: CancelFlag) -> State:
            self.metrics.batch_states_of("Hint").observe(1)
            return converters.state_from_proto(message, "state")

        return read

    def _hint_response(self, hints: Hints, cancel: CancelFlag) -> game_pb2.HintResponse:
        self.metrics.count_answers("Hint", np.array([move.verdict != ESTIMATE for move in hints.moves], bool))
        return converters.hint_response(hints)


@contextmanager
def stopped_for_a_gone_client(call: Call, what: str) -> Iterator[None]:
    """A call that stopped early because its client is gone says so (``raise_if_client_gone``), not why it stopped."""
    try:
        yield
    except (AnalysisStopped, Cancelled) as exc:
        raise_if_client_gone(call, f"the {what} stopped ({exc})")
        raise


def raise_if_client_gone(call: Call, when: str) -> None:
    """``DeadlineExceeded`` once the call's deadline has passed, ``Cancelled`` once it has ended, else nothing.

    For work that stopped early: if the client is gone the result has no reader, so the call says why.
    """
    if call.time_remaining() <= 0:
        raise DeadlineExceeded(f"the client's deadline passed {when}")
    if not call.is_active():
        raise Cancelled(f"the call was cancelled {when}")
