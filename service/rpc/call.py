"""One call as the handlers see it, whichever edge it came in by: its peer, its deadline and its one cancel flag.

An edge makes a ``Call`` when a call arrives and ends it (``finish``) when the call
ends: answered, cancelled, its client gone, or the server stopping. The gRPC edge
builds it from ``grpc.ServicerContext`` (``boaf.service.grpc.servicer.call_of``),
the HTTP edge from the request and its ``Connect-Timeout-Ms`` header. Times are
``time.perf_counter`` seconds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from boaf.service.core.deadlines import CancelFlag

NO_DEADLINE_S = 1e18
"""What ``Call.time_remaining`` answers without a deadline: a time that never comes (as gRPC's)."""


class Call:
    """Deadline, liveness and cancel flag of one call.

    ``timeout_s`` is the client's timeout in seconds (None: no deadline), counted from
    ``arrived`` (default now). ``cancel`` is the call's one cancel flag: every search and
    loop of the call polls it, and ``finish()`` sets it.

    ``peer`` is the client's address, or a function that reads it: the gRPC edge passes
    ``context.peer``, which is read only when a message or a log names the peer (a failure).
    grpcio's ``peer()`` lets go of the GIL, and under load every such call waits its turn
    to take it back: hundreds of microseconds, so a call that succeeds never reads it here.
    """

    def __init__(self, peer: str | Callable[[], str], timeout_s: float | None, arrived: float | None = None) -> None:
        self._peer = peer
        start = time.perf_counter() if arrived is None else arrived
        self.deadline = None if timeout_s is None else start + timeout_s
        self.cancel = CancelFlag()
        self._finished = threading.Event()

    @property
    def peer(self) -> str:
        """The client's address, as gRPC writes it (``ipv4:127.0.0.1:53211``); read once, when first asked."""
        if not isinstance(self._peer, str):
            self._peer = self._peer()
        return self._peer

    def time_remaining(self) -> float:
        """Seconds until the deadline (negative once past); without one, ``NO_DEADLINE_S``."""
        return NO_DEADLINE_S if self.deadline is None else self.deadline - time.perf_counter()

    def deadline_s(self) -> float | None:
        """``time_remaining`` for the data plane: the seconds the client has left, None without a deadline."""
        return None if self.deadline is None else self.time_remaining()

    @property
    def finished(self) -> bool:
        """True once the call has ended (answered, cancelled, client gone, server stopping), whatever its deadline."""
        return self._finished.is_set()

    def is_active(self) -> bool:
        """True while the call has not finished and its deadline has not passed."""
        return not self.finished and self.time_remaining() > 0

    def finish(self) -> None:
        """End the call: its cancel flag is set, so whatever of it still runs stops (later calls do nothing)."""
        self._finished.set()
        self.cancel.set()
