"""A call finding every place taken waits a moment for one, fairly between parties, on ``Admission`` directly.

Threads stand for calls; no timing is asserted beyond generous bounds.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable

import pytest
from servers import wait_for

from boaf.service.core.admission import Admission
from boaf.service.core.errors import Busy, Cancelled
from boaf.service.core.limits import MAX_CONCURRENT_RPCS
from boaf.service.core.settings import Settings

PLACES = 4
LONG_S = 30.0  # a wait no test reaches


def admission(places: int = PLACES) -> Admission:
    return Admission(Settings(max_concurrent_rpcs=places))


def wait_until(condition: Callable[[], bool]) -> None:
    assert wait_for(condition, timeout=10.0), "timed out"


class Waiting:
    """Calls asking for a place in threads; each records its name when admitted, then holds until released."""

    def __init__(self, places: Admission) -> None:
        self.places = places
        self.admitted: list[str] = []
        self.errors: dict[str, BaseException] = {}
        self.release: dict[str, threading.Event] = {}
        self.active: dict[str, bool] = {}
        self.threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def start(self, name: str, party: str, wait_s: float = LONG_S, deadline_s: float = LONG_S) -> None:
        self.release[name] = threading.Event()
        self.active[name] = True
        deadline = time.perf_counter() + deadline_s
        thread = threading.Thread(target=self._call, args=(name, party, wait_s, deadline), daemon=True)
        thread.start()
        self.threads.append(thread)

    def _call(self, name: str, party: str, wait_s: float, deadline: float) -> None:
        try:
            self.places.try_call(party=party, wait_s=wait_s, deadline=deadline, is_active=lambda: self.active[name])
        except BaseException as exc:
            with self._lock:
                self.errors[name] = exc
            return
        with self._lock:
            self.admitted.append(name)
        self.release[name].wait()
        self.places.end_call(party=party)

    def join(self) -> None:
        for event in self.release.values():
            event.set()
        for thread in self.threads:
            thread.join(timeout=10)
            assert not thread.is_alive()


def hold_every_place(places: Admission, party: str) -> None:
    for _ in range(places.settings.max_concurrent_rpcs):
        places.try_call(party=party)


def test_another_party_gets_the_next_freed_place_however_many_one_party_queued() -> None:
    places = admission(places=64)  # 64 places held and 50 waiting: within the waiters' bound
    hold_every_place(places, "attacker")
    calls = Waiting(places)
    for number in range(50):
        calls.start(f"a{number}", "attacker")
    wait_until(lambda: places._places.waiting == 50)
    calls.start("bystander", "bystander")
    wait_until(lambda: places._places.waiting == 51)
    places.end_call(party="attacker")
    wait_until(lambda: len(calls.admitted) == 1)
    assert calls.admitted == ["bystander"]
    assert places.calls == 64
    for _ in range(63):
        places.end_call(party="attacker")
    calls.join()
    assert not calls.errors
    assert places.calls == 0
    assert places._places.free == 64


def test_a_place_handed_over_goes_to_a_waiter_and_answers_still_evict() -> None:
    places = admission()
    hold_every_place(places, "attacker")
    calls = Waiting(places)
    calls.start("bystander", "bystander")
    wait_until(lambda: places._places.waiting == 1)
    cancelled: list[int] = []
    places.hand_over(places.settings.max_message_bytes, lambda: cancelled.append(1), party="attacker")
    wait_until(lambda: calls.admitted == ["bystander"])
    assert places.calls == PLACES
    # every place full and one full answer waiting: the spare (SPARE_ANSWER_MESSAGES) holds it ...
    assert cancelled == [] and places.answers_waiting == 1
    # ... and the byte bound holds: a second full answer beside them evicts the oldest
    places.hand_over(places.settings.max_message_bytes, lambda: cancelled.append(2), party="attacker")
    places.try_call(party="attacker")
    assert cancelled == [1] and places.answers_waiting == 1
    for _ in range(PLACES - 1):
        places.end_call(party="attacker")
    calls.join()
    assert places.calls == 0 and places._places.free == PLACES


@pytest.mark.parametrize("bound", ["wait", "deadline"])
def test_the_wait_and_the_deadline_end_in_busy_and_lose_no_place(bound: str) -> None:
    places = admission()
    hold_every_place(places, "attacker")
    started = time.perf_counter()
    with pytest.raises(Busy) as refused:
        if bound == "wait":
            places.try_call(party="bystander", wait_s=0.1)
        else:
            places.try_call(party="bystander", wait_s=LONG_S, deadline=time.perf_counter() + 0.1)
    assert 0.1 <= time.perf_counter() - started < 5
    assert str(refused.value) == MAX_CONCURRENT_RPCS.message(PLACES)
    assert places._places.waiting == 0 and places.calls == PLACES
    for _ in range(PLACES):
        places.end_call(party="attacker")
    assert places.calls == 0 and places._places.free == PLACES


def test_a_client_gone_while_waiting_is_cancelled_and_loses_no_place() -> None:
    places = admission()
    hold_every_place(places, "attacker")
    calls = Waiting(places)
    calls.start("gone", "bystander")
    wait_until(lambda: places._places.waiting == 1)
    calls.active["gone"] = False
    wait_until(lambda: "gone" in calls.errors)
    assert isinstance(calls.errors["gone"], Cancelled)
    assert places._places.waiting == 0
    for _ in range(PLACES):
        places.end_call(party="attacker")
    calls.join()
    assert places.calls == 0 and places._places.free == PLACES


def test_waiters_past_the_bound_are_refused_at_once_and_no_wait_means_none() -> None:
    places = admission()
    hold_every_place(places, "attacker")
    calls = Waiting(places)
    for number in range(places.max_place_waiters):
        calls.start(f"a{number}", "attacker")
    wait_until(lambda: places._places.waiting == places.max_place_waiters)
    started = time.perf_counter()
    with pytest.raises(Busy):
        places.try_call(party="bystander", wait_s=LONG_S)
    with pytest.raises(Busy):
        places.try_call(party="bystander")  # no wait asked (the HTTP edge): refused at once
    assert time.perf_counter() - started < 1
    assert places._places.waiting == places.max_place_waiters
    for _ in range(PLACES):
        places.end_call(party="attacker")
    calls.join()
    assert not calls.errors
    assert places.calls == 0 and places._places.free == PLACES


def test_stress_every_place_comes_back() -> None:
    places = admission(places=3)
    rng = random.Random(43)
    outcomes: list[str] = []
    lock = threading.Lock()

    def call(number: int) -> None:
        party = f"p{number % 5}"
        active = rng.random() > 0.1
        try:
            places.try_call(party=party, wait_s=rng.choice([0.0, 0.01, 0.2]), is_active=lambda: active)
        except (Busy, Cancelled) as exc:
            with lock:
                outcomes.append(type(exc).__name__)
            return
        time.sleep(rng.random() * 0.005)
        if number % 3 == 0:
            places.hand_over(10, lambda: None, party=party)
        else:
            places.end_call(party=party)
        with lock:
            outcomes.append("served")

    threads = [threading.Thread(target=call, args=(number,), daemon=True) for number in range(300)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
        assert not thread.is_alive()
    assert len(outcomes) == 300 and "served" in outcomes
    assert places.calls == 0
    assert places._places.free == 3 and places._places.waiting == 0
    assert not places._places._parties


def test_past_the_answers_bound_the_party_with_the_most_waiting_loses_its_oldest() -> None:
    places = admission()
    cancelled: list[str] = []
    places.try_call(party="bystander")
    places.hand_over(10, lambda: cancelled.append("bystander"), party="bystander")  # the oldest, not yet taken
    for number in range(PLACES):
        places.try_call(party="attacker")
        places.hand_over(10, lambda number=number: cancelled.append(f"a{number}"), party="attacker")
    assert cancelled == ["a0"]  # 5 answers past the bound of 4: the attacker's oldest goes, not the bystander's
    assert places.answers_waiting == PLACES and places.calls == 0
