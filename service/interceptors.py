"""What every gRPC call goes through before a servicer sees it: its arrival time, its payload, its count.

``CallGate`` is the server's one interceptor. For every call it

- notes the arrival time (``arrival_time()`` in the handler), so time limits
  count from arrival, including any wait for a thread or a search slot;
- takes the request as raw bytes and parses it itself, so bytes that are not
  the method's message (random bytes, invalid UTF-8 in a string field, a wrong
  wire type) are INVALID_ARGUMENT with a short message, logged once at WARNING
  without a traceback, and a message past ``BOAF_MAX_MESSAGE_BYTES`` is
  OUT_OF_RANGE (gRPC core itself refuses only messages past
  ``HARD_MESSAGE_FACTOR`` times that, before any boaf code runs);
- counts, in ``boaf_requests_total``, the calls gRPC turns away before a
  handler runs (an unknown method: UNIMPLEMENTED; past
  ``BOAF_MAX_CONCURRENT_RPCS``: RESOURCE_EXHAUSTED), the calls it refuses
  itself, and every call of the services that do not count their own calls
  (health, reflection). ``boaf.v1`` servicers count theirs in ``servicer.rpc``,
  which also serves the HTTP edge.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import Any, NoReturn

import grpc
from google.protobuf.message import DecodeError

from service.metrics import Metrics

log = logging.getLogger(__name__)

UNKNOWN_METHOD = "unknown"  # the metric label of every method the server does not serve
HARD_MESSAGE_FACTOR = 4  # gRPC core refuses messages past this many times the configured limit
_ARRIVAL: ContextVar[float | None] = ContextVar("boaf_call_arrival", default=None)

Deserializer = Callable[[bytes], Any]
Behavior = Callable[..., Any]


def arrival_time() -> float:
    """When the current call arrived (``time.perf_counter`` seconds); now, outside a gRPC call."""
    arrived = _ARRIVAL.get()
    return time.perf_counter() if arrived is None else arrived


def mark_arrival(arrived: float) -> None:
    """Record when the current call arrived (``time.perf_counter`` seconds): the HTTP edge's calls."""
    _ARRIVAL.set(arrived)


def method_name(full_method: str, known: frozenset[str]) -> str:
    """The metric label of ``/package.Service/Method``: ``Method`` for a served service, else ``UNKNOWN_METHOD``.

    Method names come from clients, so an unserved one is never a label of its own.
    """
    service, _, method = full_method.lstrip("/").rpartition("/")
    return method if service in known else UNKNOWN_METHOD


class CallGate(grpc.ServerInterceptor):  # type: ignore[misc]  # grpc's base class is untyped
    """The interceptor described in the module notes.

    ``services`` are the served service names; ``self_counting`` those whose
    servicer records its own calls. ``busy()`` says whether gRPC will turn the
    call away for the concurrency limit (see ``BoafServer``).
    """

    def __init__(
        self,
        metrics: Metrics,
        max_message_bytes: int,
        services: Iterable[str],
        self_counting: Iterable[str],
        busy: Callable[[], bool] = lambda: False,
    ) -> None:
        self.metrics = metrics
        self.max_message_bytes = max_message_bytes
        self.services = frozenset(services)
        self.self_counting = frozenset(self_counting)
        self.busy = busy

    def intercept_service(
        self, continuation: Callable[[grpc.HandlerCallDetails], grpc.RpcMethodHandler | None], details: Any
    ) -> grpc.RpcMethodHandler | None:
        arrived = time.perf_counter()
        full_method = str(details.method)
        name = method_name(full_method, self.services)
        handler = continuation(details)
        if handler is None:  # no such method: its name came from the client, so it is no label of its own
            self.metrics.record(UNKNOWN_METHOD, grpc.StatusCode.UNIMPLEMENTED.name, 0.0)
            return None
        if self.busy():
            self.metrics.record(name, grpc.StatusCode.RESOURCE_EXHAUSTED.name, 0.0)
            return handler  # gRPC rejects it without calling it
        counted = full_method.lstrip("/").rpartition("/")[0] not in self.self_counting
        return _Call(self, name, full_method, arrived, counted).wrap(handler)


class _Call:
    """One call's wrapping of its method handler."""

    def __init__(self, gate: CallGate, name: str, full_method: str, arrived: float, counted: bool) -> None:
        self.gate, self.name, self.full_method, self.arrived, self.counted = gate, name, full_method, arrived, counted

    def wrap(self, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        parse, serialize = handler.request_deserializer, handler.response_serializer
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(self._unary(handler.unary_unary, parse), None, serialize)
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                self._unary_stream(handler.unary_stream, parse), None, serialize
            )
        if handler.stream_unary is not None:
            return grpc.stream_unary_rpc_method_handler(self._stream(handler.stream_unary, parse), None, serialize)
        return grpc.stream_stream_rpc_method_handler(self._stream_stream(handler.stream_stream, parse), None, serialize)

    def _unary(self, behavior: Behavior, parse: Deserializer | None) -> Behavior:
        def handle(raw: bytes, context: grpc.ServicerContext) -> Any:
            _ARRIVAL.set(self.arrived)
            request = self._parse(raw, parse, context)
            return self._counting(lambda: behavior(request, context), context)

        return handle

    def _unary_stream(self, behavior: Behavior, parse: Deserializer | None) -> Behavior:
        def handle(raw: bytes, context: grpc.ServicerContext) -> Iterator[Any]:
            _ARRIVAL.set(self.arrived)
            request = self._parse(raw, parse, context)
            return self._counting_stream(behavior(request, context), context)

        return handle

    def _stream(self, behavior: Behavior, parse: Deserializer | None) -> Behavior:
        def handle(raws: Iterator[bytes], context: grpc.ServicerContext) -> Any:
            _ARRIVAL.set(self.arrived)
            return self._counting(lambda: behavior(self._parse_each(raws, parse, context), context), context)

        return handle

    def _stream_stream(self, behavior: Behavior, parse: Deserializer | None) -> Behavior:
        def handle(raws: Iterator[bytes], context: grpc.ServicerContext) -> Iterator[Any]:
            _ARRIVAL.set(self.arrived)
            return self._counting_stream(behavior(self._parse_each(raws, parse, context), context), context)

        return handle

    def _parse_each(self, raws: Iterator[bytes], parse: Deserializer | None, context: grpc.ServicerContext) -> Any:
        for raw in raws:
            yield self._parse(raw, parse, context)

    def _parse(self, raw: bytes, parse: Deserializer | None, context: grpc.ServicerContext) -> Any:
        limit = self.gate.max_message_bytes
        if len(raw) > limit:
            self._refuse(
                context,
                grpc.StatusCode.OUT_OF_RANGE,
                f"request: a message of {len(raw):,} bytes exceeds the limit of {limit:,} bytes "
                "(BOAF_MAX_MESSAGE_BYTES)",
            )
        if parse is None:
            return raw
        try:
            return parse(raw)
        except (DecodeError, ValueError, TypeError) as exc:  # upb: DecodeError; older runtimes: others
            log.warning(
                "undecodable request",
                extra={
                    "method": self.full_method,
                    "bytes": len(raw),
                    "error": type(exc).__name__,
                    "peer": context.peer(),
                },
            )
            self._refuse(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                f"request: {len(raw):,} bytes that do not parse as the request message of {self.full_method} "
                "(wrong message, a wire type that does not match a field, or invalid UTF-8 in a string)",
            )

    def _refuse(self, context: grpc.ServicerContext, code: grpc.StatusCode, message: str) -> NoReturn:
        self.gate.metrics.record(self.name, code.name, time.perf_counter() - self.arrived)
        context.abort(code, message)
        raise AssertionError("unreachable: abort raises")

    def _counting(self, call: Callable[[], Any], context: grpc.ServicerContext) -> Any:
        if not self.counted:
            return call()
        try:
            response = call()
        except BaseException:
            self._record(context, failed=True)
            raise
        self._record(context, failed=False)
        return response

    def _counting_stream(self, responses: Iterator[Any], context: grpc.ServicerContext) -> Iterator[Any]:
        if not self.counted:
            yield from responses
            return
        try:
            yield from responses
        except BaseException:
            self._record(context, failed=True)
            raise
        self._record(context, failed=False)

    def _record(self, context: grpc.ServicerContext, *, failed: bool) -> None:
        code = context.code()
        if code is None:
            code = grpc.StatusCode.UNKNOWN if failed else grpc.StatusCode.OK
        name = code.name if isinstance(code, grpc.StatusCode) else str(code)
        self.gate.metrics.record(self.name, name, time.perf_counter() - self.arrived)
