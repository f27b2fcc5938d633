"""A census on a real local Dask cluster survives a SIGKILLed worker, and a SIGKILLed client resumes.

``benchmarks/rehearsal.py`` on a small slice: ``dask scheduler``, two ``dask worker`` processes and
``boaf census --scheduler`` as subprocesses, each in a process group of its own. Nothing here waits
for a fixed time: each step waits for a condition (workers connected, parts written) with a
generous timeout, so a slow or loaded machine makes it slower, not flaky.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from benchmarks import rehearsal

SEEDS = range(0, 25_000)  # 10 chunks of the census's 2,500 deals
TIMEOUT_S = 300.0  # per wait: generous, since a kernel edited meanwhile makes each process recompile


@pytest.fixture(scope="module")
def rehearsed(tmp_path_factory: pytest.TempPathFactory) -> rehearsal.Rehearsal:
    out_dir = tmp_path_factory.mktemp("rehearsal")
    return rehearsal.rehearse(SEEDS, workers=2, out_dir=out_dir, timeout_s=TIMEOUT_S)


@pytest.mark.slow
def test_the_census_goes_on_without_the_killed_worker(rehearsed: rehearsal.Rehearsal) -> None:
    assert rehearsed.workers_alive == {"at the start": 2, "after the kill": 1, "at the end": 1}
    killed, client_killed = rehearsed.marks["worker killed"], rehearsed.marks["client killed"]
    assert any(killed <= mtime < client_killed for mtime in rehearsed.watch.mtimes()), "no part after the kill"


@pytest.mark.slow
def test_the_killed_client_resumes_from_the_parts_it_left(rehearsed: rehearsal.Rehearsal) -> None:
    assert rehearsed.chunks == 10
    assert 0 < rehearsed.parts_before_resume < rehearsed.chunks
    assert rehearsed.solved_by_resume == rehearsed.chunks - rehearsed.parts_before_resume
    # Every part left before the resume was still the same file (inode and mtime) whenever it was seen.
    assert rehearsed.watch.rewritten == set()


@pytest.mark.slow
def test_the_output_is_exactly_the_census_of_the_slice(rehearsed: rehearsal.Rehearsal) -> None:
    verification = rehearsal.verify(rehearsed, every_chunk=True)
    assert verification.problems == []
    assert (verification.rows, verification.deals_checked) == (len(SEEDS), len(SEEDS))
    assert verification.unsolvable == len(rehearsed.summary["unsolvable"]) > 0
    text = "\n".join(rehearsal.report(rehearsed, verification))
    assert "verification: OK, 25,000 seeds once each, in order; 10 chunks" in text
    assert "processes: 5 process groups started, all gone" in text


@pytest.mark.slow
def test_no_process_outlives_the_rehearsal(rehearsed: rehearsal.Rehearsal) -> None:
    assert len(rehearsed.pgids) == 5  # the scheduler, two workers, the census and its resume
    assert rehearsed.survivors == []
    assert rehearsal.live_members(set(rehearsed.pgids)) == []


def test_leaving_the_block_stops_every_group_even_children_that_ignore_sigterm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rehearsal, "STOP_GRACE_S", 0.5)
    stubborn = "import signal, subprocess, time; signal.signal(signal.SIGTERM, signal.SIG_IGN)"
    stubborn += "; subprocess.Popen(['sleep', '300']); print('started', flush=True); time.sleep(300)"
    with pytest.raises(RuntimeError, match="the census failed"), rehearsal.ProcessGroups(tmp_path) as groups:
        group = groups.start("stubborn", [sys.executable, "-c", stubborn])
        rehearsal.wait_until(lambda: group.stdout.read_text() == "started\n", "the child", TIMEOUT_S, group)
        assert len(rehearsal.live_members({group.process.pid})) == 2
        raise RuntimeError("the census failed")
    assert groups.survivors == []
    assert rehearsal.live_members({group.process.pid}) == []
    assert group.process.returncode == -signal.SIGKILL
