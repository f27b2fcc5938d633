"""The ``boaf.v1.Boaf`` servicer: each RPC converts, calls one ``DataPlane`` method, converts back.

``rpc`` is the one decorator every method wears. It maps any exception to a
status code through ``boaf.service.core.errors.status_of`` (anything unexpected becomes
INTERNAL and is logged with its traceback), and it records the metrics.
"""

from __future__ import annotations

import functools
import logging
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

import grpc

from boaf import search
from boaf.puzzles import AnalysisStopped
from boaf.service.core import tracing
from boaf.service.core.admission import cut_quotes
from boaf.service.core.dataplane import CancelFlag, DataPlane
from boaf.service.core.errors import Cancelled, DeadlineExceeded, NotReady, abort, status_of
from boaf.service.core.metrics import Metrics
from boaf.service.core.warmup import RETRY_AFTER_S
from boaf.service.rpc import converters
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc

log = logging.getLogger(__name__)

Request = TypeVar("Request")
Response = TypeVar("Response")
Method = Callable[["BoafServicer", Request, grpc.ServicerContext], Response]


def rpc(method: Method[Request, Response]) -> Method[Request, Response]:
    """Map errors to status codes, and keep the in-flight gauge of one RPC method.

    The edges count each call (``boaf_requests_total``) once, with the code its client gets: the gRPC
    gate (``boaf.service.grpc.interceptors``) and the HTTP edge (``boaf.service.http.app``), which may still turn an
    answer into UNAVAILABLE (the server stopped) or DEADLINE_EXCEEDED after this returns.
    """
    name = method.__name__

    @functools.wraps(method)
    def handler(self: BoafServicer, request: Request, context: grpc.ServicerContext) -> Response:
        metrics = self.metrics
        in_flight = metrics.in_flight_of(name)
        in_flight.inc()
        try:
            response = method(self, request, context)
            if context.time_remaining() <= 0:  # an answer past the client's deadline has no reader: never OK
                raise DeadlineExceeded("the client's deadline passed before the answer")
            return response
        except Exception as exc:
            code, message = status_of(exc)
            message = cut_quotes(message)
            if code is grpc.StatusCode.INTERNAL:
                log.exception("%s failed", name, extra={"method": name, "peer": context.peer()})
            else:
                log.debug("%s: %s %s", name, code.name, message, extra={"method": name, "code": code.name})
            abort(context, code, message, RETRY_AFTER_S)  # with its details; UNAVAILABLE with a retry hint
        finally:
            in_flight.dec()

    return tracing.traced(name, handler)  # the edge span, gRPC and HTTP alike


class BoafServicer(boaf_pb2_grpc.BoafServicer):
    """The RPCs of ``proto/boaf/v1/boaf.proto``. Until ``plane`` is set, every call is UNAVAILABLE."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self.plane: DataPlane | None = None
        self.stage: Callable[[], str] = lambda: "the model is still loading"  # the server says what it is doing
        # The served plane's info; a weak reference, so a reload's old model is not held by it.
        self._server_info: tuple[weakref.ref[DataPlane], pb.ServerInfo] | None = None

    def _ready_plane(self) -> DataPlane:
        if self.plane is None:
            raise NotReady(f"{self.stage()}; retry when health reports SERVING")
        return self.plane

    @contextmanager
    def batch_call(
        self, states: Sequence[pb.State], method: str, context: grpc.ServicerContext
    ) -> Iterator[tuple[DataPlane, CancelFlag]]:
        """The ready data plane and the call's cancel flag, for a call that runs as a batch (Classify, Hint).

        A batch's size is checked and counted before any of its states is read; then reading,
        computing and answering run within the call's time (``DataPlane.batch_call``).
        """
        plane = self._ready_plane()
        plane.check_batch_size(len(states))
        self.metrics.batch_states_of(method).observe(len(states))
        budget = plane.batch_budget(context.time_remaining())
        with (
            _stopped_for_a_gone_client(context, method),
            plane.batch_call(budget, _cancel_flag(context), len(states)) as cancel,
        ):
            yield plane, cancel

    @rpc
    def Classify(self, request: pb.ClassifyRequest, context: grpc.ServicerContext) -> pb.ClassifyResponse:
        with self.batch_call(request.states, "Classify", context) as (plane, cancel):
            states = converters.states_from_proto(request.states, cancel)
            classification = plane.classify(states, cancel)
            self.metrics.count_answers("Classify", classification.exact)
            return converters.classify_response(classification, cancel)

    @rpc
    def Features(self, request: pb.FeaturesRequest, context: grpc.ServicerContext) -> pb.FeaturesResponse:
        with self.batch_call(request.states, "Features", context) as (plane, cancel):
            states = converters.states_from_proto(request.states, cancel)
            return converters.features_response(plane.features(states, cancel), cancel)

    @rpc
    def Solve(self, request: pb.SolveRequest, context: grpc.ServicerContext) -> pb.SolveResponse:
        plane = self._ready_plane()
        state = converters.state_from_proto(request.state, "state")
        algorithm = converters.algorithm_from_proto(request.algorithm)
        budget = plane.solve_budget(request.max_nodes, request.time_limit_ms, context.time_remaining())
        result = plane.solve(state, algorithm, budget, _cancel_flag(context))
        if result.status == search.UNKNOWN:
            _raise_if_client_gone(context, f"after {result.nodes} nodes")
        self.metrics.solve_nodes.labels(result.status).observe(result.nodes)
        return converters.solve_response(result)

    @rpc
    def AnalyzePuzzle(
        self, request: pb.AnalyzePuzzleRequest, context: grpc.ServicerContext
    ) -> pb.AnalyzePuzzleResponse:
        plane = self._ready_plane()
        state = converters.state_from_proto(request.state, "state")
        options = converters.analysis_options(request)
        budget = plane.puzzle_budget(request.max_states, request.time_limit_ms, context.time_remaining())
        with _stopped_for_a_gone_client(context, "analysis"):
            analysis = plane.analyze_puzzle(state, budget, cancel=_cancel_flag(context), **options)
        return converters.analyze_puzzle_response(analysis)

    @rpc
    def GeneratePuzzle(
        self, request: pb.GeneratePuzzleRequest, context: grpc.ServicerContext
    ) -> pb.GeneratePuzzleResponse:
        options = converters.generation_options(request)
        plane = self._ready_plane()
        budget = plane.puzzle_budget(0, request.time_limit_ms, context.time_remaining())
        with _stopped_for_a_gone_client(context, "generation"):
            puzzle = plane.generate_puzzle(request.cards, budget, cancel=_cancel_flag(context), **options)
        return converters.generate_puzzle_response(puzzle)

    @rpc
    def GetServerInfo(self, request: pb.GetServerInfoRequest, context: grpc.ServicerContext) -> pb.ServerInfo:
        # Built once per DataPlane: a new model (a new plane) gets a new one.
        plane = self._ready_plane()
        cached = self._server_info
        if cached is None or cached[0]() is not plane:
            cached = self._server_info = (weakref.ref(plane), converters.server_info(plane.info()))
        return cached[1]


def _cancel_flag(context: grpc.ServicerContext) -> CancelFlag:
    """A flag set when the RPC ends (cancelled, deadline passed, server stopping) while the search still runs."""
    cancel = CancelFlag()
    if not context.add_callback(cancel.set):
        cancel.set()  # the RPC has already terminated
    return cancel


@contextmanager
def _stopped_for_a_gone_client(context: grpc.ServicerContext, what: str) -> Iterator[None]:
    # A call that stopped early because its client is gone says so, rather than why the work stopped.
    try:
        yield
    except (AnalysisStopped, Cancelled) as exc:
        _raise_if_client_gone(context, f"the {what} stopped ({exc})")
        raise


def _raise_if_client_gone(context: grpc.ServicerContext, when: str) -> None:
    # The search stopped early; if the client is gone the result has no reader, so say why it stopped.
    if context.time_remaining() <= 0:
        raise DeadlineExceeded(f"the client's deadline passed {when}")
    if not context.is_active():
        raise Cancelled(f"the call was cancelled {when}")
