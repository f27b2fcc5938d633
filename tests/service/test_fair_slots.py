"""Work slots are shared fairly between parties (connections), on ``Admission`` directly, with threads.

No timing is asserted beyond generous bounds: the order of grants is read from what each thread records.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

import pytest
from servers import wait_for

from boaf.service.core.admission import Admission
from boaf.service.core.errors import Cancelled, DeadlineExceeded
from boaf.service.core.limits import MAX_WORKERS
from boaf.service.core.settings import Settings

WORKERS = 2
LONG_S = 30.0  # a deadline no test reaches


def admission(workers: int = WORKERS) -> Admission:
    return Admission(Settings(max_workers=workers))


def wait_until(condition: Callable[[], bool]) -> None:
    assert wait_for(condition, timeout=10.0), "timed out"


class Queued:
    """Calls waiting for a slot in threads; each records its name when granted, then holds until released."""

    def __init__(self, slots: Admission) -> None:
        self.slots = slots
        self.granted: list[str] = []
        self.errors: dict[str, BaseException] = {}
        self.release: dict[str, threading.Event] = {}
        self.active: dict[str, bool] = {}
        self.threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def start(self, name: str, party: str, deadline_s: float = LONG_S) -> None:
        self.release[name] = threading.Event()
        self.active[name] = True
        deadline = time.perf_counter() + deadline_s
        thread = threading.Thread(target=self._call, args=(name, party, deadline), daemon=True)
        thread.start()
        self.threads.append(thread)

    def _call(self, name: str, party: str, deadline: float) -> None:
        try:
            with self.slots.work_slot(deadline, lambda: self.active[name], party=party):
                with self._lock:
                    self.granted.append(name)
                self.release[name].wait(LONG_S)
        except (Cancelled, DeadlineExceeded) as exc:
            with self._lock:
                self.errors[name] = exc

    def finish(self, name: str) -> None:
        self.release[name].set()

    def join(self) -> None:
        for name in self.release:
            self.release[name].set()
        for thread in self.threads:
            thread.join(LONG_S)


@contextmanager
def held(slots: Admission, count: int, party: str = "holder") -> Iterator[None]:
    with ExitStack() as stack:
        for _ in range(count):
            stack.enter_context(slots.work_slot(time.perf_counter() + LONG_S, lambda: True, party=party))
        yield


def test_a_free_slot_is_taken_at_once_and_given_back() -> None:
    slots = admission()
    with held(slots, WORKERS):
        assert slots.free_work_slots == 0
    assert slots.free_work_slots == WORKERS


def test_another_partys_call_gets_the_next_freed_slot_ahead_of_fifty_queued() -> None:
    slots = admission()
    calls = Queued(slots)
    for index in range(WORKERS):
        calls.start(f"running{index}", "attacker")
    wait_until(lambda: len(calls.granted) == WORKERS)
    for index in range(50):
        calls.start(f"queued{index}", "attacker")
        wait_until(lambda index=index: len(slots._slots._parties["attacker"].waiting) == index + 1)
    calls.start("bystander", "bystander")
    wait_until(lambda: "bystander" in slots._slots._parties)
    calls.finish("running0")
    wait_until(lambda: len(calls.granted) == WORKERS + 1)
    assert calls.granted[-1] == "bystander"
    # One slot given back at a time, so the grants are recorded in their order: first in, first out.
    for index, name in enumerate(["bystander", "running1", *(f"queued{index}" for index in range(48))]):
        calls.finish(name)
        wait_until(lambda index=index: len(calls.granted) == WORKERS + 2 + index)
        assert calls.granted[-1] == f"queued{index}"
    calls.join()
    assert not calls.errors
    assert slots.free_work_slots == WORKERS


def test_two_queuing_parties_take_turns() -> None:
    slots = admission(workers=1)
    calls = Queued(slots)
    calls.start("first", "a")
    wait_until(lambda: calls.granted == ["first"])
    for index in range(3):
        calls.start(f"a{index}", "a")
        wait_until(lambda index=index: len(slots._slots._parties["a"].waiting) == index + 1)
    for index in range(3):
        calls.start(f"b{index}", "b")
        wait_until(lambda index=index: len(slots._slots._parties["b"].waiting) == index + 1)
    for name in ["first", "b0", "a0", "b1", "a1", "b2"]:
        wait_until(lambda name=name: calls.granted[-1] == name)
        calls.finish(name)
    calls.join()
    assert calls.granted == ["first", "b0", "a0", "b1", "a1", "b2", "a2"]


@pytest.mark.parametrize("ending", ["cancelled", "deadline"])
def test_a_queued_call_that_stops_waiting_leaves_the_slot_to_the_next_waiter(ending: str) -> None:
    slots = admission(workers=1)
    calls = Queued(slots)
    calls.start("running", "a")
    wait_until(lambda: calls.granted == ["running"])
    calls.start("leaving", "b", deadline_s=0.2 if ending == "deadline" else LONG_S)
    wait_until(lambda: "b" in slots._slots._parties)
    calls.start("next", "c")
    wait_until(lambda: "c" in slots._slots._parties)
    if ending == "cancelled":
        calls.active["leaving"] = False
    wait_until(lambda: "leaving" in calls.errors)
    assert isinstance(calls.errors["leaving"], Cancelled if ending == "cancelled" else DeadlineExceeded)
    if ending == "deadline":
        assert str(calls.errors["leaving"]) == str(DeadlineExceeded(MAX_WORKERS.message(1)))
    assert "b" not in slots._slots._parties
    calls.finish("running")
    wait_until(lambda: calls.granted == ["running", "next"])
    calls.join()
    assert slots.free_work_slots == 1
    assert not slots._slots._parties


def test_a_waiter_granted_as_it_stops_passes_the_slot_on() -> None:
    slots = admission(workers=1)
    gone = threading.Event()
    with held(slots, 1):
        party = "racer"

        def is_active() -> bool:
            # The slot is given back while the caller decides its client is gone: a grant in the race.
            gone.set()
            time.sleep(0.05)
            return False

        errors: list[BaseException] = []

        def call() -> None:
            try:
                with slots.work_slot(time.perf_counter() + LONG_S, is_active, party=party):
                    pass
            except Cancelled as exc:
                errors.append(exc)

        thread = threading.Thread(target=call, daemon=True)
        thread.start()
        assert gone.wait(LONG_S)
    thread.join(LONG_S)
    # Whether it was granted in the race or not, the slot is back and nothing is left waiting.
    assert slots.free_work_slots == 1
    assert not slots._slots._parties


def test_many_threads_with_random_cancels_and_deadlines_lose_no_slot() -> None:
    workers, parties, calls_each = 3, 6, 25
    slots = admission(workers)
    running, most, lock = 0, 0, threading.Lock()
    outcomes: list[str] = []

    def caller(seed: int) -> None:
        nonlocal running, most
        chance = random.Random(seed)
        for _ in range(calls_each):
            cancel_at = time.perf_counter() + chance.uniform(0, 0.1)
            deadline = time.perf_counter() + chance.choice([0.02, 0.1, LONG_S])
            try:
                with slots.work_slot(
                    deadline,
                    lambda cancel_at=cancel_at: time.perf_counter() < cancel_at or chance.random() < 0.5,
                    party=f"party{seed % parties}",
                ):
                    with lock:
                        running += 1
                        most = max(most, running)
                    time.sleep(chance.uniform(0, 0.05))  # long enough for the waiters to poll
                    if chance.random() < 0.1:
                        raise RuntimeError("the work failed")
                    with lock:
                        running -= 1
                outcome = "ok"
            except RuntimeError:
                with lock:
                    running -= 1
                outcome = "failed"
            except Cancelled:
                outcome = "cancelled"
            except DeadlineExceeded:
                outcome = "deadline"
            with lock:
                outcomes.append(outcome)

    threads = [threading.Thread(target=caller, args=(seed,), daemon=True) for seed in range(2 * parties)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not any(thread.is_alive() for thread in threads)
    assert len(outcomes) == 2 * parties * calls_each
    assert {"ok", "failed"} <= set(outcomes) and {"cancelled", "deadline"} & set(outcomes)  # every exit path ran
    assert 1 <= most <= workers
    assert slots.free_work_slots == workers
    assert not slots._slots._parties
    with held(slots, workers):  # every slot can still be taken at once
        assert slots.free_work_slots == 0
