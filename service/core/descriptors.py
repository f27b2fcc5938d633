"""File descriptors: a budget shared by the edges, so no part of the service runs out because another used them.

Every connection holds a descriptor, and so do the model watcher (``CURRENT``, a model's
files), the metrics server, the log, numba's cache and gRPC's own machinery. A process
at its limit (``RLIMIT_NOFILE``) fails wherever it next opens one, so a flood of gRPC
connections would break the metrics, the HTTP edge and the reloads.

``plan_descriptors`` runs once at start-up. It raises the soft limit toward the hard one
(at most ``SOFT_LIMIT_TARGET``), keeps ``RESERVE`` descriptors and the ones open now for
the service itself, gives the HTTP edge ``http_connections`` (a quarter of the rest, at
most ``HTTP_CONNECTIONS``) and the gRPC listener the remainder. Each edge refuses a
connection past its share at once, so the sum of the shares and the reserve never passes
the soft limit::

    soft limit = open at start + RESERVE + http_connections + grpc_connections

gRPC core closes a connection past its cap silently, so ``DescriptorWatch`` says, at
most once every ``WARN_EVERY_S`` seconds, when the descriptors in use show gRPC within
``MIN_CONNECTIONS`` of its cap, with the number in use and how often it saw it; nothing
is logged per connection. (The HTTP edge says when it refuses, as often.)
"""

from __future__ import annotations

import logging
import os
import resource
import threading
import time
from dataclasses import dataclass

log = logging.getLogger(__name__)

SOFT_LIMIT_TARGET = 65536  # the soft limit is raised toward the hard one, at most to this
RESERVE = 256  # model watcher and reloads (~20), metrics (~50 connections), log files, numba's cache, gRPC's own
HTTP_CONNECTIONS = 1024  # the HTTP edge's connections, at most (a quarter of what is left, when that is less)
MIN_CONNECTIONS = 16  # the least either edge is given; a smaller limit is refused at start-up
WARN_EVERY_S = 60.0  # the watch says the limit is near at most this often
WATCH_EVERY_S = 1.0


class TooFewDescriptors(RuntimeError):
    """The descriptor limit leaves the edges fewer than ``MIN_CONNECTIONS`` connections each."""


@dataclass(frozen=True)
class DescriptorPlan:
    """The soft limit after raising it, and each part's share of it (descriptors)."""

    soft_limit: int
    open_at_start: int
    reserved: int  # open at start, plus RESERVE
    http_connections: int
    grpc_connections: int


def plan_descriptors(*, raise_soft_limit: bool = True) -> DescriptorPlan:
    """Raise the soft limit (unless told not to) and share it out; raises ``TooFewDescriptors`` when it is too small."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if raise_soft_limit:
        soft = _raise_soft_limit(soft, hard)
    return share(soft, open_descriptors())


def share(soft_limit: int, open_now: int) -> DescriptorPlan:
    """Share ``soft_limit`` descriptors, ``open_now`` of them in use, between the reserve and the two edges."""
    reserved = open_now + RESERVE
    left = soft_limit - reserved
    http = min(HTTP_CONNECTIONS, left // 4)
    grpc = left - http
    if http < MIN_CONNECTIONS or grpc < MIN_CONNECTIONS:
        raise TooFewDescriptors(
            f"the descriptor limit (RLIMIT_NOFILE, soft {soft_limit}) leaves the edges {max(left, 0)} connections "
            f"after the {reserved} the service keeps; raise it (ulimit -n) to at least {reserved + 5 * MIN_CONNECTIONS}"
        )
    return DescriptorPlan(soft_limit, open_now, reserved, http, grpc)


def _raise_soft_limit(soft: int, hard: int) -> int:
    ceiling = SOFT_LIMIT_TARGET if hard == resource.RLIM_INFINITY else min(hard, SOFT_LIMIT_TARGET)
    if soft != resource.RLIM_INFINITY and soft < ceiling:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (ceiling, hard))
        except (OSError, ValueError):  # a sandbox may refuse: keep the soft limit there is
            return soft
        return ceiling
    return SOFT_LIMIT_TARGET if soft == resource.RLIM_INFINITY else soft


def open_descriptors() -> int:
    """Descriptors this process has open now (0 where ``/proc/self/fd`` is not there to count them)."""
    try:
        return len(os.listdir("/proc/self/fd")) - 1  # listing the folder opens one more
    except OSError:
        return 0


class DescriptorWatch:
    """A daemon thread that logs a WARNING, at most once every ``WARN_EVERY_S`` s, while gRPC is near its cap."""

    def __init__(self, plan: DescriptorPlan) -> None:
        self.plan = plan
        self.near_limit_at = plan.open_at_start + plan.grpc_connections - MIN_CONNECTIONS  # gRPC near its cap
        self._stop = threading.Event()
        self._last_warning = -WARN_EVERY_S
        self._seen = 0  # looks that found the limit near since the last warning
        self._thread = threading.Thread(target=self._run, name="boaf-descriptors", daemon=True)

    def start(self) -> None:
        """Look every ``WATCH_EVERY_S`` s until ``stop``."""
        self._thread.start()

    def stop(self) -> None:
        """Stop looking."""
        self._stop.set()

    def look(self, now: float | None = None) -> bool:
        """Count the descriptors in use, warn if they are near the limit and the last warning is old; True if near."""
        in_use = open_descriptors()
        if in_use < self.near_limit_at:
            return False
        self._seen += 1
        now = time.monotonic() if now is None else now
        if now - self._last_warning >= WARN_EVERY_S:
            log.warning(
                "descriptors near the limit: gRPC connections past its cap are closed as they open",
                extra={
                    "descriptors_in_use": in_use,
                    "soft_limit": self.plan.soft_limit,
                    "grpc_connections_cap": self.plan.grpc_connections,
                    "http_connections_cap": self.plan.http_connections,
                    "times_seen": self._seen,
                },
            )
            self._last_warning, self._seen = now, 0
        return True

    def _run(self) -> None:
        while not self._stop.wait(WATCH_EVERY_S):
            self.look()
