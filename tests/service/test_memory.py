"""Memory that holds: the worst case of the limits fits the pod, and hard searches stay under the bound.

The arithmetic is ``Settings.worst_case_memory_mb`` (deploy/README.md shows the
sums); the run starts ``boaf serve`` as a process of its own, so that its peak
RSS (``VmHWM``) is the server's alone.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest
import yaml
from servers import serve_process

from game import deal
from service.converters import state_to_proto
from service.generated.boaf.v1 import boaf_pb2 as pb
from service.generated.boaf.v1 import boaf_pb2_grpc
from service.settings import MIB, Settings, search_bytes_per_node

K8S = Path(__file__).resolve().parents[2] / "deploy" / "k8s"
# Deal -4965 by Compatible DFS (2.6M nodes: outgrows a 16 MiB table) and -115618 by Ordered DFS (0.62M: 8 MiB).
HARD = ((-4965, pb.COMPATIBLE), (-115618, pb.ORDERED))
UNITS = {"Ki": 1 / 1024, "Mi": 1, "Gi": 1024}


def manifest(name: str) -> dict:  # type: ignore[type-arg]
    return yaml.safe_load((K8S / name).read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def pod_memory_limit_mb() -> int:
    (container,) = manifest("deployment.yaml")["spec"]["template"]["spec"]["containers"]
    number, unit = re.fullmatch(r"(\d+)(Ki|Mi|Gi)", container["resources"]["limits"]["memory"]).groups()  # type: ignore[union-attr]
    return int(int(number) * UNITS[unit])


def test_the_worst_case_of_the_deployed_limits_fits_the_pod() -> None:
    settings = Settings.from_env(manifest("configmap.yaml")["data"])
    worst = settings.worst_case_memory_mb()
    assert settings.memory_limit_mb == pod_memory_limit_mb()
    assert worst["total"] == sum(mb for part, mb in worst.items() if part != "total")
    assert worst["total"] <= pod_memory_limit_mb()


def test_the_default_limits_fit_their_own_memory_limit() -> None:
    settings = Settings()
    assert settings.worst_case_memory_mb()["total"] <= settings.memory_limit_mb


def test_a_search_node_cap_keeps_its_memo_within_the_cap() -> None:
    settings = Settings(search_memory_mb=384)
    for cells in (1, 16, 52):
        nodes = settings.search_node_cap(cells)
        assert nodes * search_bytes_per_node(cells) <= 384 * MIB
        assert (nodes + 1) * search_bytes_per_node(cells) > 384 * MIB
    assert settings.search_node_cap(16) > 1_500_000  # a puzzle's searches are of far fewer stacks


@pytest.fixture(scope="module")
def small_server() -> Iterator[tuple[subprocess.Popen[str], Settings, str]]:
    """``boaf serve`` with two search slots of 16 MiB each."""
    env = {"BOAF_MAX_CONCURRENT_SEARCHES": "2", "BOAF_SEARCH_MEMORY_MB": "16", "BOAF_SHUTDOWN_GRACE_S": "0"}
    process, address = serve_process(env)
    try:
        yield process, Settings.from_env(env), address
    finally:
        process.kill()
        process.wait(10)


@pytest.mark.slow
def test_eight_concurrent_hard_solves_stay_under_the_configured_bound(
    small_server: tuple[subprocess.Popen[str], Settings, str],
) -> None:
    process, settings, address = small_server
    ready_mb = _status_mb(process.pid, "VmRSS")
    requests = [
        pb.SolveRequest(state=state_to_proto(deal(HARD[i % 2][0])), algorithm=HARD[i % 2][1], time_limit_ms=20_000)
        for i in range(8)
    ]
    with grpc.insecure_channel(address) as channel, ThreadPoolExecutor(8) as pool:
        stub = boaf_pb2_grpc.BoafStub(channel)
        answers = list(pool.map(lambda r: stub.Solve(r, timeout=60), requests))
    # −4965 by Compatible DFS outgrows its 16 MiB table: unknown, reason memory; −115618 fits and is decided.
    assert {(a.status, a.reason) for a in answers[0::2]} == {(pb.UNKNOWN, "memory")}
    assert {a.status for a in answers[1::2]} == {pb.UNSOLVABLE}
    peak_mb = _status_mb(process.pid, "VmHWM")
    worst = settings.worst_case_memory_mb()
    assert peak_mb <= worst["total"]
    # The searches' own share: two slots at their cap, not eight searches.
    assert peak_mb - ready_mb <= worst["searches"] + worst["batches"]


def _status_mb(pid: int, key: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"{key} not in /proc/{pid}/status")
