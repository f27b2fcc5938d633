"""The one admission layer: what both edges (gRPC and HTTP) decide the same way before a servicer runs.

The concurrency model of the server, in one place:

- One process. Each edge has its own I/O: gRPC core's poller threads, and
  uvicorn's asyncio event loop for HTTP. Neither runs boaf code on its I/O
  threads beyond this module's cheap checks.
- Every admitted call gets a thread of its own at once (the gRPC pool has
  ``2 × max_concurrent_rpcs + max_streams`` threads, with the waiters for a
  place; HTTP runs calls in threads up to ``max_concurrent_rpcs``), so no
  admitted call ever waits behind another in a queue it cannot see.
- ``max_concurrent_rpcs`` counts unary calls in flight on both edges together
  (``call``). A gRPC call past it waits a moment for a place (``PLACE_WAIT_S`` at
  most, and never past its deadline), places being shared fairly between parties
  like work slots, while at most ``max_concurrent_rpcs`` calls wait; past that, or
  when its wait runs out, it is RESOURCE_EXHAUSTED. An HTTP call past it is
  RESOURCE_EXHAUSTED at once (admission runs on the event loop, which must not
  block). So the gRPC pool has a thread for every place and every waiter. A gRPC call whose
  answer is made gives its place back as it hands the answer over
  (``hand_over``) and joins the answers waiting to be taken, so a client that
  never reads (a zero flow-control window) shuts nobody out; those answers are
  bounded (``AnswersWaiting``), and past the bound the oldest of the party (connection)
  with the most answers waiting is cancelled, never a
  new call refused for it. Streams (health
  Watch, reflection) are counted apart against ``max_streams`` (``stream``), so
  idle streams never hold a worker nor shut out calls.
- ``max_workers`` work slots, shared by both edges, bound the calls that parse
  and compute at once (``work_slot``); an admitted call waits for one while its
  client is there and its time allows. The kernels release the GIL, so slots
  run in parallel. Slots are shared fairly between parties (connections): a
  freed slot goes to the waiting party holding the fewest slots, the least
  recently served first, so one connection's queue of calls never holds up
  another connection's call for longer than one running call.

It also owns the other edge rules: each call's arrival time (``mark_arrival``,
``arrival_time``: time limits count from it), the message size limit (``check_size``, OUT_OF_RANGE
on both edges), how much of the client's input a message may quote
(``cut_quotes``), and bearer tokens (``authenticate``). Host and origin checks
apply to HTTP only and live in ``boaf.service.http``, reading the sets from the settings.
"""

from __future__ import annotations

import hmac
import itertools
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from boaf.game.errors import QUOTE_CHARS, quote
from boaf.service.core.errors import Busy, Cancelled, DeadlineExceeded, Unauthenticated
from boaf.service.core.limits import MAX_CONCURRENT_RPCS, MAX_MESSAGE_BYTES, MAX_STREAMS, MAX_WORKERS
from boaf.service.core.settings import SPARE_ANSWER_MESSAGES, Settings

_ARRIVAL: ContextVar[float | None] = ContextVar("boaf_call_arrival", default=None)
SLOT_POLL_S = 0.05  # how often a call waiting for a work slot checks that its client is still there
PLACE_WAIT_S = 0.25  # the longest a call waits for a place (``try_call``) when every one is taken, in seconds
QUOTE_PREFIX = QUOTE_CHARS  # characters of a quoted input a message keeps
QUOTE_CUT_FROM = QUOTE_PREFIX + 8  # a quote this long or longer is cut (a few characters more are kept whole)
MESSAGE_END_CHARS = 200  # a longer message keeps this many characters of each end (``cut_quotes``)
QUOTE_MARKS = "'\""


def mark_arrival(arrived: float) -> None:
    """Record when the current call arrived (``time.perf_counter`` seconds); each edge does, first thing."""
    _ARRIVAL.set(arrived)


def arrival_time() -> float:
    """When the current call arrived (``time.perf_counter`` seconds); now, outside a call.

    Time limits count from here, so a call that waited (for its request, a work slot,
    a search slot) has that much less time left, on either edge.
    """
    arrived = _ARRIVAL.get()
    return time.perf_counter() if arrived is None else arrived


def cut_quotes(message: str) -> str:
    """``message`` with every quoted input longer than ``QUOTE_PREFIX`` characters cut to a prefix and ``…``.

    Messages quote the caller's input (``unknown card 'ZZ'``); a 100,000-character
    cell must not come back whole (it would not even fit in a status header). Most
    quotes are cut before they are formatted (``quoted``); this cuts what a
    library quoted whole (protobuf's ``no field named "..."``). A message longer
    than ``2 * MESSAGE_END_CHARS`` characters keeps its two ends and ``…`` between
    them (two slices), so the quotes are looked for in at most 401 characters
    whatever the message's length: the work is one copy of each end, not a scan of
    the input. A quote opens at ``'`` or ``"`` after a character that is not a
    letter, digit or ``_`` (not the apostrophe of "server's") and runs to the same
    mark. Characters that cannot be encoded (a lone surrogate from JSON's
    ``\\ud800``) become ``\\ud800`` escapes, so the message always encodes as UTF-8.
    """
    if len(message) > 2 * MESSAGE_END_CHARS:
        message = f"{message[:MESSAGE_END_CHARS]}…{message[-MESSAGE_END_CHARS:]}"
    return _cut_long_quotes(message).encode("utf-8", "backslashreplace").decode("utf-8")


def _cut_long_quotes(message: str) -> str:
    # One pass left to right over a message of at most 2 * MESSAGE_END_CHARS + 1 characters: each character
    # is looked at once by _opening_quote, and each mark's last, failed, find runs once.
    parts, done, at, marks = [], 0, 0, QUOTE_MARKS
    while (opening := _opening_quote(message, at, marks)) >= 0:
        mark = message[opening]
        closing = message.find(mark, opening + 1)
        if closing < 0:  # this mark is never closed again, so it opens nothing: look on for the other
            marks, at = marks.replace(mark, ""), opening + 1
            continue
        if closing - opening - 1 >= QUOTE_CUT_FROM:
            parts += [message[done : opening + 1 + QUOTE_PREFIX], "…", mark]
            done = closing + 1
        at = closing + 1
    return "".join([*parts, message[done:]])


def _opening_quote(message: str, at: int, marks: str) -> int:
    # The first of ``marks`` at or after ``at`` that opens a quote (not after a word character); -1 for none.
    for index in range(at, len(message) if marks else at):
        if message[index] in marks and (index == 0 or not _is_word(message[index - 1])):
            return index
    return -1


def _is_word(character: str) -> bool:
    return character.isalnum() or character == "_"


def _run_all(actions: list[Callable[[], None]]) -> None:
    for action in actions:
        action()


def quoted(text: str) -> str:
    """``text`` as a short quote for a message: ``repr`` of at most ``QUOTE_PREFIX`` characters of it.

    Cut before it is formatted (``boaf.game.errors.quote``); its ``repr`` (up to 4 characters an
    escaped character) is cut again to ``QUOTE_PREFIX`` characters.
    """
    return cut_quotes(quote(text))


class AnswersWaiting:
    """Answers made and handed to the transport but not yet taken by their clients, by party, oldest first.

    Each is ``(bytes, cancel)`` under a key that grows with each answer added;
    ``cancel`` ends its call (its client then gets CANCELLED). The caller holds
    ``Admission``'s lock around every method and runs the returned cancels after
    releasing it.
    """

    def __init__(self) -> None:
        self._parties: dict[str, OrderedDict[int, tuple[int, Callable[[], None]]]] = {}
        self._party_of: dict[int, str] = {}
        self.bytes = 0  # the answers' bytes in all

    def __len__(self) -> int:
        return len(self._party_of)

    def add(self, key: int, size: int, cancel: Callable[[], None], party: str = "") -> None:
        """Add the newest answer, ``size`` bytes, ended by ``cancel``, of ``party``; ``key`` above every key added."""
        self._parties.setdefault(party, OrderedDict())[key] = (size, cancel)
        self._party_of[key] = party
        self.bytes += size

    def remove(self, key: int) -> bool:
        """Take out the answer under ``key``; False when it is not here (taken out already)."""
        party = self._party_of.pop(key, None)
        if party is None:
            return False
        answers = self._parties[party]
        self.bytes -= answers.pop(key)[0]
        if not answers:
            del self._parties[party]
        return True

    def evict_oldest(self) -> Callable[[], None]:
        """Take out the oldest answer of the party with the most answers waiting (of those, the one whose oldest
        is oldest); returns its ``cancel`` (to run outside the lock). So a party that reads its answers, with
        one or two waiting a moment, loses none to a party that does not read while that party has more."""
        party = max(self._parties, key=lambda name: (len(self._parties[name]), -next(iter(self._parties[name]))))
        key = next(iter(self._parties[party]))
        cancel = self._parties[party][key][1]
        self.remove(key)
        return cancel


class _Waiter:
    # One call waiting for a work slot; ``granted`` is set under _WorkSlots' lock, then ``event``.
    __slots__ = ("event", "granted", "order")

    def __init__(self, order: int) -> None:
        self.event = threading.Event()
        self.granted = False
        self.order = order  # when it began to wait: earlier first among parties otherwise equal


class _Party:
    # One party's slots held and calls waiting (oldest first); kept while it holds or waits for any.
    __slots__ = ("held", "served", "waiting")

    def __init__(self) -> None:
        self.held = 0
        self.served = -1  # the number of its latest grant (-1: none while it has been here)
        self.waiting: deque[_Waiter] = deque()


class _WorkSlots:
    """``size`` work slots shared fairly between parties, under one lock, each waiter with an event of its own.

    A slot is taken at once when one is free. Otherwise the call joins its party's
    queue (first in, first out), and a slot given back goes straight to a waiter:
    the head of the waiting party that holds the fewest slots; among those, the
    party granted least recently (a party that has had no grant since it last held
    and waited for nothing counts as never granted), then the one whose head began
    to wait first. Parties with calls waiting and equal holdings thus take turns
    (round-robin), whatever each has queued.

    No slot is lost or granted twice. Under the lock, ``free`` plus the slots every
    party holds is always ``size``: a grant from ``free`` moves one from ``free`` to a
    party; a slot given back goes either to a waiter (popped from its queue, so
    granted once) or back to ``free`` when no party waits; a waiter that stops (client
    gone, deadline, any exception) takes itself out of its queue if it was not
    granted, so nothing is granted to it later, and gives its slot on as if given
    back if it was granted in the meantime. ``free > 0`` only while nobody waits
    (waiters join only when ``free`` is 0, and ``free`` grows only when nobody waits),
    so a waiting call waits only while every slot is held.

    The bound: let a call of party P begin to wait while P holds no slot and has no
    call waiting (so P counts as never granted), and let F parties holding no slot
    and never granted have calls waiting already. Each slot given back goes to a
    party with key (slots held, latest grant, head's order) below P's (0, -1, o);
    only those F parties have such keys, and each leaves them for good once granted
    (it then holds a slot, or has a grant number), so P is granted at the (F + 1)-th
    slot given back at the latest. With one other party queuing (F = 0), that is the
    first running call to finish, however many calls that party queued.
    """

    def __init__(self, size: int) -> None:
        self._lock = threading.Lock()
        self.free = size
        self.waiting = 0  # calls waiting, all parties together
        self._parties: dict[str, _Party] = {}
        self._grants = itertools.count()
        self._orders = itertools.count()

    def take(
        self,
        name: str,
        deadline: float,
        is_active: Callable[[], bool],
        refused: Callable[[], Exception],
        *,
        max_waiting: int | None = None,
        what: str = "a worker",
    ) -> None:
        """Hold a slot for party ``name``, or raise ``Cancelled`` (client gone) or ``refused()`` (``deadline``
        passed; given ``max_waiting``, also at once when that many calls wait already or ``deadline`` has
        passed). ``what`` names a slot in the ``Cancelled`` message."""
        with self._lock:
            party = self._parties.setdefault(name, _Party())
            if self.free > 0:  # the common case: no waiting, no event
                self.free -= 1
                self._grant(party)
                return
            if max_waiting is not None and (self.waiting >= max_waiting or time.perf_counter() >= deadline):
                self._forget_if_idle(name, party)
                raise refused()
            waiter = _Waiter(next(self._orders))
            party.waiting.append(waiter)
            self.waiting += 1
        try:
            while not waiter.event.wait(max(0.0, min(SLOT_POLL_S, deadline - time.perf_counter()))):
                if not is_active():
                    raise Cancelled(f"the call was cancelled while it waited for {what}")
                if time.perf_counter() >= deadline:
                    raise refused()
        except BaseException:
            with self._lock:
                if waiter.granted:  # granted as it stopped: the slot goes on to the next waiter
                    self._pass_on(name, party)
                else:
                    party.waiting.remove(waiter)
                    self.waiting -= 1
                    self._forget_if_idle(name, party)
            raise

    def give_back(self, name: str) -> None:
        """Party ``name`` gives back a slot it holds: to the next waiter, or free when nobody waits."""
        with self._lock:
            self._pass_on(name, self._parties[name])

    def _pass_on(self, name: str, party: _Party) -> None:
        # Under the lock: ``party`` gives one slot up; it goes to the fairest waiter (see the class notes).
        party.held -= 1
        self._forget_if_idle(name, party)
        waiting = [each for each in self._parties.values() if each.waiting]
        if not waiting:
            self.free += 1
            return
        next_party = min(waiting, key=lambda each: (each.held, each.served, each.waiting[0].order))
        waiter = next_party.waiting.popleft()
        self.waiting -= 1
        self._grant(next_party)
        waiter.granted = True
        waiter.event.set()

    def _grant(self, party: _Party) -> None:
        party.held += 1
        party.served = next(self._grants)

    def _forget_if_idle(self, name: str, party: _Party) -> None:
        # A party that holds and waits for nothing is dropped, so the table holds at most
        # ``size`` parties plus the waiting ones, however many connections come and go.
        if party.held == 0 and not party.waiting:
            del self._parties[name]


class Admission:
    """Counts, slots and checks shared by both edges of one server (see the module notes)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.tokens = settings.api_token_set()
        self._lock = threading.Lock()
        self._calls = 0
        self._streams = 0
        self._slots = _WorkSlots(settings.max_workers)
        self._places = _WorkSlots(settings.max_concurrent_rpcs)  # who holds the places; ``_calls`` counts them
        self._waiting = AnswersWaiting()
        self._keys = itertools.count()

    @property
    def calls(self) -> int:
        """Unary calls in flight now, on both edges."""
        return self._calls

    @property
    def answers_waiting(self) -> int:
        """Answers handed over (``hand_over``) and not yet taken by their clients."""
        return len(self._waiting)

    @property
    def streams(self) -> int:
        """Streams open now."""
        return self._streams

    def check_size(self, size: int, what: str = "request") -> None:
        """``LimitExceeded`` (OUT_OF_RANGE) when a message of ``size`` bytes is past ``BOAF_MAX_MESSAGE_BYTES``."""
        MAX_MESSAGE_BYTES.check(self.settings, size, field=what)

    @property
    def max_place_waiters(self) -> int:
        """The most calls that wait for a place at once (``try_call``): ``max_concurrent_rpcs``."""
        return self.settings.max_concurrent_rpcs

    def try_call(
        self,
        *,
        party: str = "",
        wait_s: float = 0.0,
        deadline: float = float("inf"),
        is_active: Callable[[], bool] = lambda: True,
    ) -> None:
        """Admit one unary call of ``party`` (the connection); pair with ``end_call`` (or ``hand_over``), same party.

        When all ``max_concurrent_rpcs`` places are taken it waits for one, shared fairly between
        parties (``_WorkSlots``: a party with none held is served by the next places given back), for
        ``wait_s`` seconds at most and never past ``deadline`` (``time.perf_counter``); it is ``Busy``
        when the wait runs out or ``max_place_waiters`` calls wait already (then at once), ``Cancelled``
        when ``is_active()`` turns False. A waiting call holds no place, so no place is lost on any of
        these. Admitting it may cancel the oldest answers waiting (``hand_over``), never refuse it for them.
        """
        limit = self.settings.max_concurrent_rpcs
        until = min(time.perf_counter() + wait_s, deadline)
        self._places.take(
            party,
            until,
            is_active,
            lambda: Busy(MAX_CONCURRENT_RPCS.message(limit)),
            max_waiting=self.max_place_waiters,
            what="a place",
        )
        with self._lock:
            self._calls += 1
            evicted = self._evictions()
        _run_all(evicted)

    def end_call(self, *, party: str = "") -> None:
        """One admitted call of ``party`` has ended (answered, failed or cancelled) without handing its answer
        over: its place goes to the next waiter, if any."""
        with self._lock:
            self._calls -= 1
        self._places.give_back(party)

    def hand_over(self, size: int, cancel: Callable[[], None], *, holds_place: bool = True, party: str = "") -> int:
        """An admitted call's answer, ``size`` bytes, is made and handed to the transport: its place is given
        back, and the answer waits for its client, ended by ``cancel`` if it is evicted. Returns the key to
        pass to ``taken`` when the call ends (taken, failed or cancelled), instead of ``end_call``. A call
        with a place of its own elsewhere (a health probe's) passes ``holds_place=False`` and releases that.

        The answers waiting are at most ``max_concurrent_rpcs``, and their bytes plus a full message
        (``max_message_bytes``) for each call in flight are at most ``max_concurrent_rpcs`` +
        ``SPARE_ANSWER_MESSAGES`` messages: what the places alone held before, and a spare, so that while
        every place is taken the small answers of clients that read (a health check's, a single-state
        Classify's) wait a moment to be sent rather than being cancelled; the memory arithmetic counts the
        spare ("answers spare") beside "calls held". Past either
        bound answers are cancelled, the oldest of the party with the most waiting first (``AnswersWaiting``).
        Proof of the byte bound: ``try_call`` and ``hand_over`` are the only steps that grow the sum, and each
        evicts until it holds; an answer of at most ``max_message_bytes`` replaces its call's full message,
        so never makes it grow (a probe's answer, a few bytes, may: it is then the newest of all). A call
        waiting for a place (``try_call``) holds none and is not counted; it joins ``_calls`` in
        ``try_call``, which then evicts. The place given back goes to ``party``'s account (the party of
        its ``try_call``).
        """
        key = next(self._keys)
        with self._lock:
            if holds_place:
                self._calls -= 1
            self._waiting.add(key, size, cancel, party)
            evicted = self._evictions()
        if holds_place:
            self._places.give_back(party)
        _run_all(evicted)
        return key

    def taken(self, key: int) -> None:
        """The call of the answer under ``key`` has ended; nothing if it was evicted already."""
        with self._lock:
            self._waiting.remove(key)

    def _evictions(self) -> list[Callable[[], None]]:
        # Under the lock: take out the oldest answers until both bounds hold (see hand_over). In hand_over
        # only the count can be past its bound, by one, so the answer just added is never the one taken out
        # (the newest of all: taken only if every party had one answer, and then the oldest party's goes).
        settings, waiting = self.settings, self._waiting
        limit, message = settings.max_concurrent_rpcs, settings.max_message_bytes
        evicted = []
        most = (limit + SPARE_ANSWER_MESSAGES) * message
        while len(waiting) > 0 and (len(waiting) > limit or waiting.bytes + self._calls * message > most):
            evicted.append(waiting.evict_oldest())
        return evicted

    def try_stream(self) -> None:
        """Admit one stream, or raise ``Busy`` when ``max_streams`` are open; pair with ``end_stream``."""
        limit = self.settings.max_streams
        with self._lock:
            if self._streams >= limit:
                raise Busy(MAX_STREAMS.message(limit))
            self._streams += 1

    def end_stream(self) -> None:
        """One admitted stream has ended."""
        with self._lock:
            self._streams -= 1

    @contextmanager
    def work_slot(self, deadline: float, is_active: Callable[[], bool], *, party: str = "") -> Iterator[None]:
        """Hold one of the ``max_workers`` work slots; wait for one until ``deadline`` (``time.perf_counter``).

        ``party`` names who asks (the connection: gRPC's ``context.peer()``, HTTP's
        client address); slots are shared fairly between parties (``_WorkSlots``). A
        call whose client has gone (``is_active()`` False) stops waiting with
        ``Cancelled``; one still waiting at ``deadline`` gets ``DeadlineExceeded``.
        """
        limit = self.settings.max_workers
        self._slots.take(party, deadline, is_active, lambda: DeadlineExceeded(MAX_WORKERS.message(limit)))
        try:
            yield
        finally:
            self._slots.give_back(party)

    @property
    def free_work_slots(self) -> int:
        """Work slots no call holds now."""
        return self._slots.free

    def wait_limit_s(self) -> float:
        """The longest a call may wait for a work slot, from its arrival: the longest server time limit."""
        settings = self.settings
        return max(settings.solve_time_limit_ms, settings.batch_time_limit_ms) / 1000

    @property
    def tokens_required(self) -> bool:
        """True when bearer tokens are configured."""
        return bool(self.tokens)

    def authenticate(self, authorization: str | None) -> None:
        """Raise ``Unauthenticated`` unless tokens are off or ``authorization`` is ``Bearer <a configured token>``."""
        if not self.tokens:
            return
        if not authorization:
            raise Unauthenticated("authorization: this server needs a bearer token ('authorization: Bearer TOKEN')")
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthenticated("authorization: expected 'Bearer TOKEN'")
        given = token.strip().encode("utf-8", "surrogateescape")
        # Compare with every token, in constant time each, so the answer's timing says nothing of which matched.
        if not any([hmac.compare_digest(given, known.encode()) for known in self.tokens]):
            raise Unauthenticated("authorization: the bearer token is not valid")
