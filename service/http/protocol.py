"""uvicorn's h11 protocol with the two timeouts it lacks: for a request's headers, and for taking an answer.

uvicorn closes a keep-alive connection idle between requests (``timeout_keep_alive``,
``BOAF_IDLE_TIMEOUT_S``), and the HTTP edge bounds the time a body takes
(``BOAF_HTTP_BODY_TIMEOUT_S``), but nothing bounds the headers: a client that
connects and sends them a byte at a time (slowloris) holds its connection, and a
server stopping waits for it. ``HeaderTimedProtocol`` starts a timer when a
connection opens and when the first byte of each later request arrives, stops it
when the request's headers are complete, and closes the connection when it fires.

Nor does anything bound the time a client takes to read an answer: uvicorn
writes it into the transport's buffer, and a client that never reads holds its
connection, and the answer's bytes in the server's memory, for ever (closing
waits for the buffer to empty). The edge hands an answer over in pieces and holds
the call's admission until the last one is in the buffer (``app.HandedOver``).
``HeaderTimedProtocol`` starts a timer when the client falls behind (the buffer
passes its high-water mark, and uvicorn waits before writing more) and when a
connection closes with bytes still to send; unless the answer has been taken by
then (its last piece written and the buffer back under its low-water mark), the
connection is cut (aborted: its buffer dropped) after ``answer_timeout_s``
(``BOAF_IDLE_TIMEOUT_S``), as gRPC cancels an answer not taken within that time.

A connection closed while its client is still sending a body (the edge refused
it unread: too large, too slow) first lingers: the answer goes out, the server's
side is shut for writing, and what the client still sends is dropped, for at
most ``LINGER_S`` seconds and ``LINGER_BYTES`` bytes. Closing at once would reset
the connection, and the client would see the reset instead of the answer.

A connection that opens while the edge has ``max_connections`` open (its share of
the descriptor limit) is aborted at once, unread; ``ConnectionRefusals`` counts them
and says so in one WARNING a second at most.

It also answers a request that is not HTTP/1.1 at all as the edge answers every
error, in JSON with a request id, logged at DEBUG: uvicorn's own answer is plain
text, with a WARNING line for each that a client could flood the log with
(``drop_uvicorn_bad_request_warnings`` drops that line).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from typing import Any, cast

import h11
from uvicorn.protocols.http.h11_impl import STATUS_PHRASES, H11Protocol, RequestResponseCycle

from boaf.service.core.descriptors import HTTP_CONNECTIONS

log = logging.getLogger(__name__)

MAX_CONNECTIONS = HTTP_CONNECTIONS  # an edge's open connections, unless the service's descriptor plan gives a cap
LINGER_S = 2.0
LINGER_BYTES = 4 * 1024 * 1024
UVICORN_BAD_REQUEST = "Invalid HTTP request received."  # what uvicorn logs at WARNING before send_400_response


class ConnectionRefusals:
    """Connections closed because the edge has ``max_connections`` open: one WARNING a ``SAY_EVERY_S`` at most."""

    SAY_EVERY_S = 1.0

    def __init__(self) -> None:
        self.refused = 0  # since the edge started
        self._unsaid = 0
        self._said_at = -self.SAY_EVERY_S

    def refuse(self, open_connections: int, now: float) -> None:
        """Count one refusal, and say so unless said within ``SAY_EVERY_S``."""
        self.refused += 1
        self._unsaid += 1
        if now - self._said_at >= self.SAY_EVERY_S:
            log.warning(
                "HTTP connections at the cap: new ones are closed as they open",
                extra={"open_connections": open_connections, "refused": self._unsaid, "refused_in_all": self.refused},
            )
            self._said_at, self._unsaid = now, 0


class HeaderTimedProtocol(H11Protocol):
    """``H11Protocol`` that closes a connection whose request headers take more than ``header_timeout_s``,
    and cuts one whose client does not take an answer within ``answer_timeout_s`` (see the module notes).
    A connection that opens while ``max_connections`` others are open is closed at once (``refusals``)."""

    def __init__(
        self,
        *args: Any,
        header_timeout_s: float,
        answer_timeout_s: float,
        max_connections: int = MAX_CONNECTIONS,
        refusals: ConnectionRefusals | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.header_timeout_s = header_timeout_s
        self.answer_timeout_s = answer_timeout_s
        self.max_connections = max_connections
        self.refusals = ConnectionRefusals() if refusals is None else refusals  # an edge shares one
        self._header_timer: asyncio.TimerHandle | None = None
        self._answer_timer: asyncio.TimerHandle | None = None
        self._timed_cycle: RequestResponseCycle | None = None  # whose answer is timed (None: a closing connection's)
        self._raw: asyncio.Transport | None = None
        self._linger_timer: asyncio.TimerHandle | None = None
        self._dropped = -1  # bytes dropped while lingering; -1: not lingering

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._raw = transport
        if len(self.connections) > self.max_connections:  # this one counted: past the cap
            self.refusals.refuse(len(self.connections) - 1, self.loop.time())
            transport.abort()  # nothing read, nothing to answer: its descriptor is freed now
            return
        self.transport = cast(asyncio.Transport, _LingeringClose(transport, self))  # what the request cycles close
        self._start_header_timer()

    def data_received(self, data: bytes) -> None:
        if self._dropped >= 0:
            self._drop(len(data))
            return
        if self._header_timer is None and self._awaiting_headers():
            self._start_header_timer()  # the first bytes of the next request on a kept-alive connection
        super().data_received(data)
        self._stop_header_timer_once_headers_are_in()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._stop_header_timer_once_headers_are_in()  # a pipelined request may be under way already

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        self._cancel_answer_timer()
        if self._linger_timer is not None:
            self._linger_timer.cancel()
        super().connection_lost(exc)

    @property
    def lingering(self) -> bool:
        """True while the connection drops what its client still sends before it closes."""
        return self._dropped >= 0

    def close(self) -> None:
        """Close the connection, after lingering if the client is still sending a body."""
        raw = self._raw
        assert raw is not None
        if self.lingering or raw.is_closing():
            return
        if self.conn.their_state is not h11.SEND_BODY or not raw.can_write_eof():
            self._close_raw()
            return
        self._dropped = 0
        raw.write_eof()  # the answer is out: the client reads it, then sees the end
        raw.resume_reading()
        self._linger_timer = self.loop.call_later(LINGER_S, self._close_raw)

    def _close_raw(self) -> None:
        # Closing waits for the buffer to empty: an answer still in it gets the answer timeout to be taken.
        assert self._raw is not None
        self._raw.close()
        if self._raw.get_write_buffer_size() > 0 and self._answer_timer is None:
            self._time_the_answer(None)

    def pause_writing(self) -> None:
        """The buffer is past its high-water mark: the client is behind; it has ``answer_timeout_s`` to catch up."""
        super().pause_writing()
        if self._answer_timer is None:
            self._time_the_answer(self.cycle)

    def resume_writing(self) -> None:
        """The buffer is back under its low-water mark: once the timed answer is all written, it has been taken."""
        super().resume_writing()
        if self._answer_taken():
            self._cancel_answer_timer()

    def _time_the_answer(self, cycle: RequestResponseCycle | None) -> None:
        self._timed_cycle = cycle
        self._answer_timer = self.loop.call_later(self.answer_timeout_s, self._answer_too_slow)

    def _answer_taken(self) -> bool:
        raw, cycle = self._raw, self._timed_cycle
        if raw is not None and raw.is_closing() and raw.get_write_buffer_size() > 0:
            return False  # closing waits for these bytes: they must be taken too
        return cycle is None or (cycle.response_complete and not self.flow.write_paused)

    def _cancel_answer_timer(self) -> None:
        if self._answer_timer is not None:
            self._answer_timer.cancel()
            self._answer_timer = None

    def _answer_too_slow(self) -> None:
        self._answer_timer = None
        if self._answer_taken() or self._raw is None:
            return
        log.debug(
            "cut a connection whose client did not take its answer in time",
            extra={
                "peer": _peer(self.client),
                "answer_timeout_s": self.answer_timeout_s,
                "unsent_bytes": self._raw.get_write_buffer_size(),
            },
        )
        self._raw.abort()  # close() would wait for the client to read what is buffered

    def _drop(self, size: int) -> None:
        self._dropped += size
        if self._dropped > LINGER_BYTES and self._raw is not None:
            self._raw.close()

    def send_400_response(self, msg: str) -> None:
        """Answer a request h11 cannot parse with a JSON 400, then close (uvicorn calls this)."""
        request_id = uuid.uuid4().hex
        log.debug("not an HTTP/1.1 request", extra={"peer": _peer(self.client), "request_id": request_id})
        body = json.dumps({"code": "invalid_argument", "message": "not an HTTP/1.1 request"}).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"x-request-id", request_id.encode()),
            (b"connection", b"close"),
        ]
        with contextlib.suppress(h11.LocalProtocolError):  # h11 may not be in a state to answer: then just close
            response = h11.Response(status_code=400, headers=headers, reason=STATUS_PHRASES[400])
            for event in (response, h11.Data(data=body), h11.EndOfMessage()):
                self.transport.write(self.conn.send(event) or b"")
        self.transport.close()

    def _awaiting_headers(self) -> bool:
        # No request yet on this connection, or the last one is answered and the next one's headers are not in.
        return self.cycle is None or self.cycle.response_complete

    def _start_header_timer(self) -> None:
        self._header_timer = self.loop.call_later(self.header_timeout_s, self._headers_too_slow)

    def _stop_header_timer_once_headers_are_in(self) -> None:
        if not self._awaiting_headers():
            self._cancel_header_timer()

    def _cancel_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self.transport.is_closing() or not self._awaiting_headers():
            return
        log.debug(
            "closed a connection whose request headers took too long",
            extra={"peer": _peer(self.client), "header_timeout_s": self.header_timeout_s},
        )
        with contextlib.suppress(h11.LocalProtocolError):  # mid-request on the client's side: close all the same
            self.conn.send(h11.ConnectionClosed())
        self.transport.close()


class _LingeringClose:
    """A transport whose ``close()`` is the protocol's (``HeaderTimedProtocol.close``); the rest is the transport's."""

    def __init__(self, transport: asyncio.Transport, protocol: HeaderTimedProtocol) -> None:
        self._transport = transport
        self._protocol = protocol

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)

    def close(self) -> None:
        self._protocol.close()

    def is_closing(self) -> bool:
        return self._protocol.lingering or self._transport.is_closing()


class _BadRequestWarnings(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != UVICORN_BAD_REQUEST


def drop_uvicorn_bad_request_warnings() -> None:
    """Drop uvicorn's WARNING for each unparsable request (``send_400_response`` logs it at DEBUG); once."""
    uvicorn_log = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, _BadRequestWarnings) for f in uvicorn_log.filters):
        uvicorn_log.addFilter(_BadRequestWarnings())


def _peer(client: tuple[str, int] | None) -> str:
    return "unknown" if client is None else f"{client[0]}:{client[1]}"
