"""The hostile mix of ``benchmarks/load.py`` (issue 21), briefly, against a real ``boaf serve`` with tiny limits.

A smoke test of the harness, not a benchmark: every attack runs and is reported, and no call comes back
INTERNAL or UNKNOWN. The figures of such a short run mean nothing.
"""

from __future__ import annotations

import pytest

from benchmarks import calls, hostile

TINY_LIMITS = {
    "BOAF_MAX_STREAMS": "4",
    "BOAF_MAX_WORKERS": "4",
    "BOAF_MAX_CONCURRENT_RPCS": "16",
    "BOAF_MAX_BATCH_SIZE": "50",
    "BOAF_MAX_MESSAGE_BYTES": "65536",
    "BOAF_BATCH_TIME_LIMIT_MS": "2000",
    "BOAF_SOLVE_TIME_LIMIT_MS": "2000",
    "BOAF_PUZZLE_MAX_STATES": "200000",
    "BOAF_HTTP_HEADER_TIMEOUT_S": "1",
    "BOAF_HTTP_BODY_TIMEOUT_S": "1",
    "BOAF_IDLE_TIMEOUT_S": "2",
    "BOAF_SHUTDOWN_GRACE_S": "1",
}
ATTACK_KINDS = (
    "grpc normal",
    "http normal",
    "grpc health Watch stream",
    "grpc reflection stream past the cap",
    "grpc health Check while streams are held",
    "http type confusion",
    "http half body, then close",
    "http half body, then write side shut",
    "slowloris, http port",
    "slowloris, metrics port",
    "http Content-Length 2,000,000,000",
    "http slow reader of a large answer",
)


@pytest.fixture(scope="module")
def outcome(tmp_path_factory: pytest.TempPathFactory) -> hostile.HostileOutcome:
    with calls.local_server(TINY_LIMITS, tmp_path_factory.mktemp("hostile")) as target:
        assert target.max_streams == 4
        return hostile.run_hostile(
            target, clients=2, seconds=3.0, processes=1, baseline_s=1.0, rss_wait_s=1.0, cpu_window_s=1.0
        )


def test_every_attack_runs_and_is_counted(outcome: hostile.HostileOutcome) -> None:
    seen = set(outcome.attack.codes)
    assert set(ATTACK_KINDS) <= seen, set(ATTACK_KINDS) - seen
    for edge in ("grpc", "http"):
        assert any(kind.startswith(f"{edge} largest Classify (50 states") for kind in seen), seen
        assert any(kind.startswith(f"{edge} largest Features (50 states") for kind in seen), seen
    assert {"grpc normal", "http normal"} <= set(outcome.baseline.codes)


def test_no_internal_and_no_unknown(outcome: hostile.HostileOutcome) -> None:
    for tally in (outcome.baseline, outcome.attack):
        assert tally.total("INTERNAL") == 0, tally.codes
        assert tally.total("UNKNOWN") == 0, tally.codes


def test_the_report_gives_codes_latency_ratios_memory_and_cpu(outcome: hostile.HostileOutcome) -> None:
    text = "\n".join(hostile.report(outcome))
    assert "hostile mix: 2 gRPC clients" in text
    assert "baseline: grpc normal" in text
    assert "p99 ratio" in text
    assert "server RSS: idle after warm-up" in text and "peak (VmHWM)" in text and "x idle" in text
    assert "server CPU in the 1 s after the attack" in text
    assert "after the wait: gRPC health Check" in text
    assert "server log over the run:" in text
    assert outcome.server.peak_rss_mb is not None and outcome.server.cpu_after_s is not None
