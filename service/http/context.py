"""One HTTP call seen through the part of ``grpc.ServicerContext`` the servicers use.

The servicers read the deadline (``time_remaining``), register cancel callbacks
(``add_callback``), ask whether the client is still there (``is_active``) and
``abort`` with a status code; this class answers those for an HTTP request, so
the same servicer code serves both protocols.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import NoReturn

import grpc

# What grpc.ServicerContext.time_remaining() answers without a deadline: a time that never comes.
NO_DEADLINE_S = 1e18


class CallAborted(Exception):
    """Raised by ``CallContext.abort``: the call ends with ``code`` and ``message``."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class CallContext:
    """Deadline, liveness and end-of-call callbacks of one HTTP call.

    ``timeout_s`` is the client's timeout in seconds (None: no deadline), counted from ``arrived``
    (``time.perf_counter`` seconds; default now). ``finish()`` ends the call (answered, or the client
    disconnected) and runs the callbacks once; ``shut_down()`` ends it because the server is stopping.
    """

    def __init__(self, peer: str, timeout_s: float | None, arrived: float | None = None) -> None:
        self._peer = peer
        start = time.perf_counter() if arrived is None else arrived
        self._deadline = None if timeout_s is None else start + timeout_s
        self._callbacks: list[Callable[[], None]] = []
        self._finished = False
        self.shutting_down = False  # ended by the server's stop, not by its client
        self._lock = threading.Lock()

    def time_remaining(self) -> float:
        """Seconds until the deadline (negative once past); without one, ``NO_DEADLINE_S`` as gRPC does."""
        return NO_DEADLINE_S if self._deadline is None else self._deadline - time.perf_counter()

    @property
    def finished(self) -> bool:
        """True once the call has ended (answered, client gone, server stopping), whatever its deadline."""
        return self._finished

    def is_active(self) -> bool:
        """True while the call has not finished and its deadline has not passed."""
        return not self._finished and self.time_remaining() > 0

    def add_callback(self, callback: Callable[[], None]) -> bool:
        """Run ``callback`` when the call finishes; False (and not registered) when it already has."""
        with self._lock:
            if self._finished:
                return False
            self._callbacks.append(callback)
            return True

    def finish(self) -> None:
        """End the call: run every callback once (later calls do nothing)."""
        with self._lock:
            if self._finished:
                return
            self._finished = True
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def shut_down(self) -> None:
        """End the call because the server is stopping: its work stops, and it answers UNAVAILABLE."""
        self.shutting_down = True
        self.finish()

    def set_trailing_metadata(self, metadata: object) -> None:
        """Nothing to do: the HTTP edge sends its own headers (``Retry-After`` with UNAVAILABLE)."""

    def abort(self, code: grpc.StatusCode, details: str) -> NoReturn:
        """End the call with a status code and message, as ``grpc.ServicerContext.abort`` does."""
        raise CallAborted(code, details)

    def abort_with_status(self, status: grpc.Status) -> NoReturn:
        """``abort`` with the status's code and message; its details are derived again when the error is written."""
        raise CallAborted(status.code, status.details)

    def peer(self) -> str:
        """The client's address, as gRPC writes it (``ipv4:127.0.0.1:53211``)."""
        return self._peer
