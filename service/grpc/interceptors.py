"""What every gRPC call goes through before a servicer sees it: admission, its arrival time, its payload, its count.

``CallGate`` is the server's one interceptor, the gRPC side of ``boaf.service.core.admission``
(read its notes for the concurrency model). For every call it

- notes the arrival time (``arrival_time()`` in the handler), so time limits
  count from arrival, including any wait for the request or a work slot;
- checks the bearer token (``authorization`` metadata; health is exempt);
- admits the call: a unary call against ``BOAF_MAX_CONCURRENT_RPCS`` (both edges
  together), a stream (health Watch, reflection) against ``BOAF_MAX_STREAMS``,
  each released when the call terminates, not when its handler returns; health
  Check and List, which probes send, have ``PROBE_CALLS`` places of their own so
  that a busy server still answers them. Past a cap: RESOURCE_EXHAUSTED (a unary
  call first waits up to ``PLACE_WAIT_S`` for a place, ``Admission.try_call``);
- reads the request itself (every handler it returns takes a request stream), so
  that the admission comes first and a client that never sends its message, or a
  stream that sends nothing more, is cancelled after ``BOAF_IDLE_TIMEOUT_S``; an
  answer the client does not take within that time is cancelled too;
- gives a unary call's place (a health check's probe place too) back as it hands the answer to gRPC
  (``Admission.hand_over``):
  the answer then waits for its client among a bounded set, so clients that never
  read (a zero flow-control window) shut nobody out. Past the bound the oldest waiting
  answer is cancelled (counted in ``boaf_answers_evicted_total``); its call stays counted
  with the code it answered. Streams keep their place until they end;
- holds one of the shared work slots while it parses the request, runs the
  servicer and serializes the answer (health and reflection need none);
- checks and parses the request bytes itself, each step before any work that
  grows with the request. gRPC core takes messages of up to ``HARD_MESSAGE_FACTOR``
  (1) times ``BOAF_MAX_MESSAGE_BYTES`` (``grpc.max_receive_message_length``) and
  refuses a larger one itself, from its length prefix, before any boaf code runs:
  RESOURCE_EXHAUSTED "Received message larger than max (N vs. M)", a code grpcio
  cannot change (``boaf.client`` makes it OUT_OF_RANGE). A compressed message is
  handed over as it came (``boaf.service.grpc.compression``), inflated up to the
  limit, then OUT_OF_RANGE; the gate's own size check covers any other path; the wire
  format is scanned (``boaf.service.rpc.wire_scan``: a batch past
  ``BOAF_MAX_BATCH_SIZE`` is OUT_OF_RANGE before any state is parsed, a known field
  with a wrong wire type INVALID_ARGUMENT naming it); then bytes that are not the
  method's message (random bytes, invalid UTF-8 in a string field) are
  INVALID_ARGUMENT with a short message, logged once at WARNING without a traceback;
- counts, in ``boaf_requests_total``, every call once, with the code its client
  gets: those it refuses, those gRPC turns away before any handler runs (an
  unknown method: UNIMPLEMENTED; past the thread pool: RESOURCE_EXHAUSTED), and
  every call that runs (the servicers count nothing themselves; the HTTP edge
  counts its own calls the same way); a message core refuses for its size is
  CANCELLED here (grpcio says only that the call ended), RESOURCE_EXHAUSTED to its client;
  a call whose answer is cancelled while it waits to be taken is counted with the code it answered;
- at shutdown (``drain``, then ``stop_calls`` once the grace is over), ends
  streams and then calls still in flight with UNAVAILABLE and
  ``errors.SHUTTING_DOWN_MESSAGE``.
"""

from __future__ import annotations

import functools
import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NoReturn

import grpc
from google.protobuf.message import DecodeError

from boaf.game.errors import InvalidInput
from boaf.service.core.admission import PLACE_WAIT_S, Admission, mark_arrival
from boaf.service.core.errors import (
    SHUTTING_DOWN_MESSAGE,
    Busy,
    Cancelled,
    Code,
    DeadlineExceeded,
    LimitExceeded,
    NotReady,
    ServiceError,
    fields_of,
    status_of,
)
from boaf.service.core.memory import LARGE_REQUEST_BYTES, give_memory_back_soon
from boaf.service.core.metrics import Metrics
from boaf.service.core.settings import HARD_MESSAGE_FACTOR as HARD_MESSAGE_FACTOR
from boaf.service.core.settings import PROBE_CALLS as PROBE_CALLS
from boaf.service.core.warmup import RETRY_AFTER_S
from boaf.service.grpc.compression import inflated
from boaf.service.grpc.status import abort, ended_by_core
from boaf.service.rpc.handlers import UNKNOWN_METHOD
from boaf.service.rpc.wire_scan import WireScan, wire_scan

log = logging.getLogger(__name__)

# What an armed timeout guards: a unary call's request, a stream's next request, an answer being taken.
CALL_READ, STREAM_READ, ANSWER = "call read", "stream read", "answer"
MEMO_BYTES = 64 * 1024  # a method's last answer up to this size is kept with its bytes (_serialized_answer)
TICK_S = 0.05  # how often armed timeouts are looked at: each runs at most this late

Deserializer = Callable[[bytes], Any]
Serializer = Callable[[Any], bytes]
Behavior = Callable[..., Any]


def method_name(full_method: str, known: frozenset[str]) -> str:
    """The metric label of ``/package.Service/Method``: ``Method`` for a served service, else ``UNKNOWN_METHOD``.

    Method names come from clients, so an unserved one is never a label of its own.
    """
    service, _, method = full_method.lstrip("/").rpartition("/")
    return method if service in known else UNKNOWN_METHOD


class Timeouts:
    """Runs each armed action once its time is up (at most ``TICK_S`` late), unless it was disarmed first.

    Every unary call arms two (its request, its answer), so arming and disarming
    must cost next to nothing: each is one dict operation, atomic under the GIL,
    with no lock, heap or wake-up. One daemon thread looks at the armed actions
    every ``TICK_S`` while any is armed, and sleeps otherwise. An action runs for
    whoever takes its entry out of the dict first (the thread, ``fire``, or a
    ``disarm`` that came first), so it runs at most once, and never once its
    ``disarm`` has returned.
    """

    def __init__(self) -> None:
        self._armed: dict[int, tuple[float, str, Callable[[], None]]] = {}
        self._keys = itertools.count()
        self._wake = threading.Event()  # set whenever something may be armed
        self._start = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = False

    def arm(self, seconds: float, kind: str, action: Callable[[], None]) -> int:
        """Run ``action`` in ``seconds`` unless ``disarm`` is called first with the returned key."""
        key = next(self._keys)
        self._armed[key] = (time.monotonic() + seconds, kind, action)
        if not self._wake.is_set():  # after the insert: the thread clears it before it looks (see _run)
            self._wake.set()
        if self._thread is None:
            self._start_thread()
        return key

    def disarm(self, key: int) -> None:
        """The action armed under ``key`` will not run (if it has not started already)."""
        self._armed.pop(key, None)

    def fire(self, kinds: Iterable[str]) -> int:
        """Run every armed action of ``kinds`` now; returns how many ran."""
        wanted = set(kinds)
        taken = [self._take(key) for key, entry in list(self._armed.items()) if entry[1] in wanted]
        actions = [action for action in taken if action is not None]
        for action in actions:
            _run_action(action)
        return len(actions)

    def close(self) -> None:
        """Stop the thread; armed actions never run."""
        self._closed = True
        self._armed.clear()
        self._wake.set()

    def _take(self, key: int) -> Callable[[], None] | None:
        entry = self._armed.pop(key, None)
        return None if entry is None else entry[2]

    def _start_thread(self) -> None:
        with self._start:
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(target=self._run, name="boaf-timeouts", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while not self._closed:
            if not self._armed:
                self._wake.clear()
                if not self._armed:  # an arm after the clear sets it again
                    self._wake.wait()
                continue
            time.sleep(TICK_S)
            now = time.monotonic()
            for key, (due, _, _) in list(self._armed.items()):  # list(): one step under the GIL
                if due <= now and (action := self._take(key)) is not None and not self._closed:
                    _run_action(action)


def _run_action(action: Callable[[], None]) -> None:
    try:
        action()
    except Exception:  # a timeout's action (cancelling a call) must not end the thread that runs them all
        log.exception("a call timeout's action failed")


class CallGate(grpc.ServerInterceptor):  # type: ignore[misc]  # grpc's base class is untyped
    """The interceptor described in the module notes.

    ``services`` are the served service names; ``probes`` those exempt from bearer tokens,
    work slots and the call cap (health), with ``PROBE_CALLS`` places of their
    own. ``busy()`` says whether gRPC will turn the call away because its thread
    pool is full (see ``BoafServer``).
    """

    def __init__(
        self,
        metrics: Metrics,
        admission: Admission,
        *,
        services: Iterable[str],
        probes: Iterable[str] = (),
        busy: Callable[[], bool] = lambda: False,
    ) -> None:
        self.metrics = metrics
        self.admission = admission
        self.services = frozenset(services)
        self.probes = frozenset(probes)
        self.busy = busy
        self.timeouts = Timeouts()
        self.draining = threading.Event()  # streams end (UNAVAILABLE) and no stream waits for a request
        self.stopping = threading.Event()  # calls still in flight end UNAVAILABLE
        self._probe_calls = threading.BoundedSemaphore(PROBE_CALLS)
        self.answers: dict[str, tuple[Any, bytes]] = {}  # per method, its last answer and its bytes

    @property
    def idle_timeout_s(self) -> float:
        """How long a call may wait for its client: to send a request, or to take an answer."""
        return self.admission.settings.idle_timeout_s

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
        service = full_method.lstrip("/").rpartition("/")[0]
        return _Call(self, name, full_method, arrived, service).wrap(handler)

    def drain(self) -> int:
        """Shutdown begins: new calls (not probes) and streams that end from now on end UNAVAILABLE, and streams
        waiting for a request end now.

        Returns how many streams were waiting (cancelled: their clients see CANCELLED).
        """
        self.draining.set()
        return self.timeouts.fire([STREAM_READ])

    def stop_calls(self) -> None:
        """The grace is over: calls still in flight end UNAVAILABLE, and those still waiting for a request end now."""
        self.draining.set()
        self.stopping.set()
        self.timeouts.fire([STREAM_READ, CALL_READ])

    def close(self) -> None:
        """The server has stopped: no timeout runs any more."""
        self.timeouts.close()


class _Call:
    """One call: its admission, its request, its handler and its count."""

    def __init__(self, gate: CallGate, name: str, full_method: str, arrived: float, service: str) -> None:
        self.gate, self.name, self.full_method, self.arrived = gate, name, full_method, arrived
        self.probe = service in gate.probes
        self._release: Callable[[], None] = lambda: None
        self._answer_timeout: int | None = None  # the key of the armed answer timeout
        self._read_timed_out = False
        self._ended = False
        self.large = False  # it read a request of at least LARGE_REQUEST_BYTES
        self._recorded = False
        self._lock = threading.Lock()
        self.party = ""  # its connection, read once when needed (_party): grpcio's peer() lets go of the GIL

    def _party(self, context: grpc.ServicerContext) -> str:
        self.party = self.party or context.peer()
        return self.party

    def wrap(self, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        # Every handler takes a request stream, so that it runs (admits, then reads) as soon as the call arrives.
        parse, serialize = handler.request_deserializer, handler.response_serializer
        if handler.unary_unary is not None:
            return grpc.stream_unary_rpc_method_handler(self._unary(handler.unary_unary, parse, serialize))
        if handler.unary_stream is not None:
            return grpc.stream_stream_rpc_method_handler(self._unary_stream(handler.unary_stream, parse, serialize))
        if handler.stream_unary is not None:
            return grpc.stream_unary_rpc_method_handler(self._stream_unary(handler.stream_unary, parse, serialize))
        return grpc.stream_stream_rpc_method_handler(self._stream_stream(handler.stream_stream, parse, serialize))

    # ------------------------------------------------------------ the four shapes

    def _unary(self, behavior: Behavior, parse: Deserializer | None, serialize: Serializer | None) -> Behavior:
        def handle(raws: Iterator[bytes], context: grpc.ServicerContext) -> Any:
            mark_arrival(self.arrived)
            self._admit(context, stream=False)
            raw = self._one_request(raws, context)
            with self._work(context):
                request = self._parse(raw, parse, context)
                answer = self._run(lambda: self._serialized_answer(behavior(request, context), serialize), context)
            self._hand_over(answer, context)
            return answer

        return handle

    def _unary_stream(self, behavior: Behavior, parse: Deserializer | None, serialize: Serializer | None) -> Behavior:
        def handle(raws: Iterator[bytes], context: grpc.ServicerContext) -> Iterator[Any]:
            mark_arrival(self.arrived)
            self._admit(context, stream=True)
            request = self._parse(self._one_request(raws, context), parse, context)
            return self._streaming(lambda: behavior(request, context), serialize, context)

        return handle

    def _stream_unary(self, behavior: Behavior, parse: Deserializer | None, serialize: Serializer | None) -> Behavior:
        def handle(raws: Iterator[bytes], context: grpc.ServicerContext) -> Any:
            mark_arrival(self.arrived)
            self._admit(context, stream=True)
            requests = self._requests(raws, parse, context)
            return self._run(lambda: _serialized(behavior(requests, context), serialize), context)

        return handle

    def _stream_stream(self, behavior: Behavior, parse: Deserializer | None, serialize: Serializer | None) -> Behavior:
        def handle(raws: Iterator[bytes], context: grpc.ServicerContext) -> Iterator[Any]:
            mark_arrival(self.arrived)
            self._admit(context, stream=True)
            requests = self._requests(raws, parse, context)
            return self._streaming(lambda: behavior(requests, context), serialize, context)

        return handle

    # ------------------------------------------------------------ admission

    def _admit(self, context: grpc.ServicerContext, *, stream: bool) -> None:
        admission = self.gate.admission
        try:
            if self.gate.draining.is_set() and not self.probe:  # the server is stopping: go elsewhere
                raise NotReady(SHUTTING_DOWN_MESSAGE)
            if not self.probe and admission.tokens_required:
                admission.authenticate(_metadata(context, "authorization"))
            if stream:
                admission.try_stream()
                self._release = admission.end_stream
            elif self.probe:
                if not self.gate._probe_calls.acquire(blocking=False):
                    raise Busy(f"{PROBE_CALLS} health checks already in flight; retry later")
                self._release = self.gate._probe_calls.release
            else:
                deadline = time.perf_counter() + context.time_remaining()
                active = functools.partial(self._active, context)
                admission.try_call(party=self._party(context), wait_s=PLACE_WAIT_S, deadline=deadline, is_active=active)
                self._release = functools.partial(admission.end_call, party=self.party)
        except ServiceError as exc:
            self._refuse(context, exc)
        if not context.add_callback(self._end):  # released when the call terminates, answer taken or not
            self._end()

    def _end(self) -> None:
        with self._lock:
            ended, self._ended = self._ended, True
        if not ended:
            self._release()
            if self._answer_timeout is not None:
                self.gate.timeouts.disarm(self._answer_timeout)
            if self.large:
                give_memory_back_soon()

    def _work(self, context: grpc.ServicerContext) -> Any:
        admission = self.gate.admission
        if self.probe:
            return _NoSlot()
        deadline = min(time.perf_counter() + context.time_remaining(), self.arrived + admission.wait_limit_s())
        slot = admission.work_slot(deadline, functools.partial(self._active, context), party=self._party(context))
        return _Slot(self, context, slot)

    def _active(self, context: grpc.ServicerContext) -> bool:
        return bool(context.is_active()) and not self.gate.stopping.is_set()

    # ------------------------------------------------------------ requests

    def _one_request(self, raws: Iterator[bytes], context: grpc.ServicerContext) -> bytes:
        raw = self._next(raws, context, CALL_READ)
        if raw is None and ended_by_core(context):
            # gRPC core ended the call while its message came in (a message past the limit, refused from its
            # length prefix): its client already has core's status, and grpcio may end the request stream
            # rather than raise, so this is not a missing message.
            self._record(grpc.StatusCode.CANCELLED.name)
            context.abort(grpc.StatusCode.CANCELLED, "the call ended while its request came in")
        if raw is None:
            self._refuse(context, InvalidInput(f"request: no request message ({self.full_method} takes one)"))
        return raw

    def _requests(self, raws: Iterator[bytes], parse: Deserializer | None, context: grpc.ServicerContext) -> Any:
        while (raw := self._next(raws, context, STREAM_READ)) is not None:
            yield self._parse(raw, parse, context)

    def _next(self, raws: Iterator[bytes], context: grpc.ServicerContext, kind: str) -> bytes | None:
        # A client that sends nothing for the idle timeout is cancelled, which ends the wait.
        if kind == STREAM_READ and self.gate.draining.is_set():
            context.cancel()
        timeouts = self.gate.timeouts
        key = timeouts.arm(self.gate.idle_timeout_s, kind, functools.partial(self._read_timeout, context))
        try:
            raw = next(raws, None)
        except grpc.RpcError:  # the client went away, or the wait was cancelled: nobody reads an answer
            self._record(grpc.StatusCode.CANCELLED.name)
            raise
        finally:
            timeouts.disarm(key)
        if raw is None and self._read_timed_out:
            # Cancelled by its idle timeout while it waited: the request stream may just end rather than raise.
            self._record(grpc.StatusCode.CANCELLED.name)
            context.abort(grpc.StatusCode.CANCELLED, "the call was cancelled while it waited for its request")
        return raw

    def _read_timeout(self, context: grpc.ServicerContext) -> None:
        self._read_timed_out = True
        context.cancel()

    def _parse(self, raw: bytes, parse: Deserializer | None, context: grpc.ServicerContext) -> Any:
        try:
            raw = self._checked(raw, parse)
        except (ServiceError, InvalidInput) as exc:
            if not isinstance(exc, ServiceError):  # bytes that are not the message: logged as the parse's are
                self._undecodable(len(raw), type(exc).__name__, context)
            self._refuse(context, exc)
        if parse is None:
            return raw
        try:
            return parse(raw)
        except (DecodeError, ValueError, TypeError) as exc:  # upb: DecodeError; older runtimes: others
            self._undecodable(len(raw), type(exc).__name__, context)
            self._refuse(
                context,
                InvalidInput(
                    f"request: {len(raw):,} bytes that do not parse as the request message of {self.full_method} "
                    "(wrong message, a wire type that does not match a field, or invalid UTF-8 in a string)"
                ),
            )

    def _checked(self, raw: bytes, parse: Deserializer | None) -> bytes:
        # What the gate checks before the parse, each step before any work that grows with the request:
        # the size on the wire, then the size inflated (compression), then the batch and the wire types.
        settings = self.gate.admission.settings
        self.large = self.large or len(raw) >= LARGE_REQUEST_BYTES  # its call's end asks for a trim, refused too
        self.gate.admission.check_size(len(raw))
        try:
            raw = inflated(raw, settings.max_message_bytes)
        except LimitExceeded:
            self.large = True  # it inflated up to the limit
            raise
        self.large = self.large or len(raw) >= LARGE_REQUEST_BYTES
        scan = wire_scan_of(parse)
        if scan is not None:
            scan.check(raw, max_batch_size=settings.max_batch_size)
        return raw

    def _undecodable(self, size: int, error: str, context: grpc.ServicerContext) -> None:
        log.warning(
            "undecodable request",
            extra={"method": self.full_method, "bytes": size, "error": error, "peer": self._party(context)},
        )

    # ------------------------------------------------------------ answers

    def _run(self, call: Callable[[], Any], context: grpc.ServicerContext) -> Any:
        try:
            answer = call()
        except Exception:
            self._failed(context)
            raise
        self._finished(context)
        return answer

    def _streaming(
        self, start: Callable[[], Iterator[Any] | None], serialize: Serializer | None, context: grpc.ServicerContext
    ) -> Iterator[Any]:
        try:
            for response in start() or ():
                yield _serialized(response, serialize)
        except Exception:
            self._failed(context)
            raise
        if self.gate.draining.is_set():  # a Watch ended by the shutdown (health said NOT_SERVING first)
            self._record(grpc.StatusCode.UNAVAILABLE.name)
            abort(context, Code.UNAVAILABLE, SHUTTING_DOWN_MESSAGE, RETRY_AFTER_S)
        self._finished(context)

    def _serialized_answer(self, response: Any, serialize: Serializer | None) -> Any:
        # A servicer that answers from a cache (GetServerInfo: 14 KB, ~30 us to serialize) returns the same
        # message object each time: its bytes are kept beside it, per method, and reused while it is the
        # answer. Identity is safe: the kept object stays alive, so no other object can have its id, and
        # cached answers are never changed in place. Only small answers are kept (at most MEMO_BYTES).
        if serialize is None:
            return response
        memo = self.gate.answers.get(self.name)
        if memo is not None and memo[0] is response:
            return memo[1]
        data = serialize(response)
        if len(data) <= MEMO_BYTES:
            self.gate.answers[self.name] = (response, data)
        return data

    def _hand_over(self, answer: Any, context: grpc.ServicerContext) -> None:
        # The answer is ready and the work slot given back: the call's place goes back too, and the answer
        # waits for its client (Admission.hand_over); one not taken within the idle timeout is cancelled.
        # Under the call's lock, so that _end, which reads _release after it, releases the right thing once.
        admission = self.gate.admission
        size = len(answer) if isinstance(answer, bytes | bytearray) else admission.settings.max_message_bytes
        with self._lock:
            if self._ended:
                return
            if self.probe:  # a health check gives back its probe place the same way
                self._release()
            evict, party = functools.partial(self._evict, context), self._party(context)
            key = admission.hand_over(size, evict, holds_place=not self.probe, party=party)
            self._release = functools.partial(admission.taken, key)
            self._answer_timeout = self.gate.timeouts.arm(self.gate.idle_timeout_s, ANSWER, context.cancel)

    def _evict(self, context: grpc.ServicerContext) -> None:
        self.gate.metrics.answers_evicted.inc()
        context.cancel()

    def _failed(self, context: grpc.ServicerContext) -> None:
        self._cut_by_the_stop(context)
        self._record(_code_name(context, failed=True))

    def _finished(self, context: grpc.ServicerContext) -> None:
        self._cut_by_the_stop(context)
        gone = context.code() is None and not context.is_active()
        self._record(grpc.StatusCode.CANCELLED.name if gone else _code_name(context, failed=False))

    def _cut_by_the_stop(self, context: grpc.ServicerContext) -> None:
        # Past the grace, a call ends as the server stops, whatever its servicer made of being stopped.
        if self.gate.stopping.is_set():
            self._record(grpc.StatusCode.UNAVAILABLE.name)
            abort(context, Code.UNAVAILABLE, SHUTTING_DOWN_MESSAGE, RETRY_AFTER_S)

    def _refuse(self, context: grpc.ServicerContext, exc: BaseException) -> NoReturn:
        code, message = status_of(exc)
        if self.gate.stopping.is_set():
            code, message = Code.UNAVAILABLE, SHUTTING_DOWN_MESSAGE
        self._record(code.name)
        abort(context, code, message, RETRY_AFTER_S, fields=fields_of(exc))  # with its details (RetryInfo when busy)

    def _record(self, code: str) -> None:
        if not self._recorded:  # once per call, whoever ends it first
            self._recorded = True
            self.gate.metrics.record(self.name, code, time.perf_counter() - self.arrived)


class _Slot:
    """A work slot held around parsing, the servicer and serializing; a refusal to get one ends the call."""

    def __init__(self, call: _Call, context: grpc.ServicerContext, slot: Any) -> None:
        self.call, self.context, self.slot = call, context, slot

    def __enter__(self) -> None:
        try:
            self.slot.__enter__()
        except Cancelled as exc:  # gRPC ends a call at its deadline: that is the deadline, not a cancel
            late = self.context.time_remaining() <= 0
            self.call._refuse(self.context, DeadlineExceeded(f"the client's deadline passed ({exc})") if late else exc)
        except ServiceError as exc:
            self.call._refuse(self.context, exc)

    def __exit__(self, *exc_info: Any) -> None:
        self.slot.__exit__(*exc_info)


class _NoSlot:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc_info: Any) -> None:
        return None


def wire_scan_of(parse: Deserializer | None) -> WireScan | None:
    """The ``WireScan`` of the message ``parse`` reads (a generated class's ``FromString``), None for another."""
    descriptor = getattr(getattr(parse, "__self__", None), "DESCRIPTOR", None)
    return None if descriptor is None else wire_scan(descriptor)


def _serialized(response: Any, serialize: Serializer | None) -> Any:
    return response if serialize is None else serialize(response)


def _metadata(context: grpc.ServicerContext, key: str) -> str | None:
    for name, value in context.invocation_metadata() or ():
        if name == key:
            return value if isinstance(value, str) else value.decode("utf-8", "surrogateescape")
    return None


def _code_name(context: grpc.ServicerContext, *, failed: bool) -> str:
    code = context.code()
    if code is None:
        code = grpc.StatusCode.UNKNOWN if failed else grpc.StatusCode.OK
    return code.name if isinstance(code, grpc.StatusCode) else str(code)
