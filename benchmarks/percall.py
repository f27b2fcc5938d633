"""boaf's own cost per gRPC call, against the bare-grpcio floor and a baseline commit, in one run.

Three servers run side by side on loopback and are measured in turn, ``--rounds``
times; the machine is shared and noisy, so each figure is the median of its rounds,
and every difference or ratio is taken within a round, then its median reported:

- **floor**: a bare grpcio server with the health service only (the same grpcio,
  a thread pool), as ``python benchmarks/percall.py --floor-server PORT`` starts it;
- **boaf**: this tree's ``boaf serve``;
- **baseline**: the server of ``--baseline`` (default c73f0e4, "today's server" in
  issue 23), unpacked by ``git archive`` into ``out/bench/baseline-<ref>/`` and kept,
  so that its numba cache makes later runs start in seconds.

The load generator runs in processes of its own (``calls.run_scenario``). For each
of boaf and the baseline it measures, at 1 client: Classify of one state (p50, p99),
health Check and GetServerInfo (p50); at 16 clients: Classify calls/s and the
server's CPU time per call (``/proc``). The floor gets its health Check at 1 and at
16 clients, so its calls/s say what boaf's throughput would be if boaf's own work
per call cost nothing. Then:

- **own cost per call** = Classify(1) p50 − the floor's health Check p50 (issue 23:
  at most 0.2 ms);
- **throughput ratio** = boaf's Classify calls/s at 16 clients over the baseline's
  (issue 23: at least 2).

    python benchmarks/percall.py                      # 5 rounds of 3 s per figure
    python benchmarks/percall.py --rounds 3 --seconds 2 --baseline none
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

if not __package__:  # run as a script: its own folder is sys.path[0]; the repository's root imports it as benchmarks
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import grpc
import numpy as np
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from benchmarks import calls, hostile
from benchmarks.trees import cli_command, unpacked

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "c73f0e4"
FLOOR_THREADS = 64  # the floor's thread pool: more than the clients, as boaf's is
THROUGHPUT_CLIENTS = 16


def floor_server(port: int) -> None:
    """Serve grpcio's own health service, and nothing else, on ``port`` until killed."""
    server = grpc.server(ThreadPoolExecutor(max_workers=FLOOR_THREADS))
    servicer = health.HealthServicer()
    servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    servicer.set("boaf.v1.Boaf", health_pb2.HealthCheckResponse.SERVING)  # what calls.wait_until_serving asks
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    server.wait_for_termination()


@dataclass(frozen=True)
class Server:
    """A server under measurement: its gRPC address and process id (for its CPU time)."""

    address: str
    pid: int


@contextmanager
def floor() -> Iterator[Server]:
    """A floor server in its own process."""
    port = calls.free_port()
    process = subprocess.Popen([sys.executable, __file__, "--floor-server", str(port)])
    try:
        calls.wait_until_serving(f"127.0.0.1:{port}", process.poll)
        yield Server(f"127.0.0.1:{port}", process.pid)
    finally:
        process.kill()
        process.wait()


def baseline_server(ref: str, stack: ExitStack) -> Server:
    """``boaf serve`` of ``ref`` on loopback, stopped with ``stack``; returns its gRPC address.

    Its first start compiles its kernels in its warm-up, and c73f0e4's warm-up has a time limit
    that a busy machine can pass: the start is tried again once, on the kernels the first compiled.
    """
    tree = unpacked(ref)
    cli, env = cli_command(tree)  # the tree's own server, not this repository's (its editable install)
    for attempt in (1, 2):
        try:
            return _server(stack.enter_context(calls.local_server(env, boaf=cli, cwd=tree)))
        except SystemExit:
            if attempt == 2:
                raise
            print(f"the baseline {ref} did not start (see above); once more, on its cached kernels", file=sys.stderr)
    raise AssertionError("unreachable")


def _server(target: hostile.Target) -> Server:
    assert target.pid is not None
    return Server(target.grpc, target.pid)


def one_round(server: Server, seconds: float, is_floor: bool) -> dict[str, float]:
    """The figures of one server in one round (milliseconds, calls/s, server CPU microseconds per call)."""
    address = server.address
    if is_floor:
        checks = calls.run_scenario(address, ["health-check"], 1, seconds, 1)
        busy, cpu_s = _busy(server, "health-check", seconds)
        return {
            "health_p50": _ms(checks, 50),
            "health_p99": _ms(checks, 99),
            "calls_per_s": len(busy.latencies) / seconds,
            "cpu_us": cpu_s / max(1, len(busy.latencies)) * 1e6,
        }
    single = calls.run_scenario(address, ["classify-1"], 1, seconds, 1)
    checks = calls.run_scenario(address, ["health-check"], 1, seconds, 1)
    info = calls.run_scenario(address, ["server-info"], 1, seconds, 1)
    busy, cpu_s = _busy(server, "classify-1", seconds)
    return {
        "classify_p50": _ms(single, 50),
        "classify_p99": _ms(single, 99),
        "health_p50": _ms(checks, 50),
        "info_p50": _ms(info, 50),
        "calls_per_s": len(busy.latencies) / seconds,
        "cpu_us": cpu_s / max(1, len(busy.latencies)) * 1e6,
        "errors": float(sum(single.errors.values()) + sum(busy.errors.values()) + sum(info.errors.values())),
    }


def _busy(server: Server, scenario: str, seconds: float) -> tuple[calls.Outcome, float]:
    # THROUGHPUT_CLIENTS callers of scenario, and the server's CPU seconds meanwhile (spawning the client
    # process included, which the server spends idle).
    before = _cpu_s(server.pid)
    outcome = calls.run_scenario(server.address, [scenario], THROUGHPUT_CLIENTS, seconds, 1)
    return outcome, _cpu_s(server.pid) - before


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _ms(outcome: calls.Outcome, percentile: float) -> float:
    return float(np.percentile(np.array(outcome.latencies) * 1000, percentile)) if outcome.latencies else float("nan")


def report(rounds: list[dict[str, dict[str, float]]]) -> list[str]:
    """The table: each figure's median over the rounds; differences and ratios within each round."""

    def median(server: str, key: str) -> float:
        return statistics.median(r[server][key] for r in rounds)

    def within(figure: Callable[[dict[str, dict[str, float]]], float]) -> float:
        return statistics.median(figure(r) for r in rounds)

    names = [name for name in ("boaf", "baseline") if name in rounds[0]]
    lines = [
        f"floor (bare grpcio health Check): p50 {median('floor', 'health_p50'):.3f} ms, "
        f"p99 {median('floor', 'health_p99'):.3f} ms at 1 client; {median('floor', 'calls_per_s'):.0f} calls/s "
        f"and {median('floor', 'cpu_us'):.0f} us of server CPU a call at {THROUGHPUT_CLIENTS}",
        f"{'server':<10} {'Classify(1) p50':>15} {'p99':>7} {'own cost':>9} {'Check p50':>10} "
        f"{'ServerInfo p50':>15} {'calls/s @16':>12} {'CPU us/call':>12} {'errors':>7}",
    ]
    for name in names:
        own = within(lambda r, n=name: r[n]["classify_p50"] - r["floor"]["health_p50"])
        lines.append(
            f"{name:<10} {median(name, 'classify_p50'):>12.3f} ms {median(name, 'classify_p99'):>7.2f} "
            f"{own:>6.3f} ms {median(name, 'health_p50'):>7.3f} ms {median(name, 'info_p50'):>12.3f} ms "
            f"{median(name, 'calls_per_s'):>12.0f} {median(name, 'cpu_us'):>12.0f} "
            f"{sum(r[name]['errors'] for r in rounds):>7.0f}"
        )
    ceiling = within(lambda r: r["floor"]["calls_per_s"] / r["boaf"]["calls_per_s"])
    lines.append(f"throughput at {THROUGHPUT_CLIENTS} clients, floor / boaf: {ceiling:.2f} (boaf's own cost at 0)")
    if "baseline" in rounds[0]:
        ratio = within(lambda r: r["boaf"]["calls_per_s"] / r["baseline"]["calls_per_s"])
        spread = [r["boaf"]["calls_per_s"] / r["baseline"]["calls_per_s"] for r in rounds]
        lines.append(
            f"throughput at {THROUGHPUT_CLIENTS} clients, boaf / baseline: {ratio:.2f} "
            f"(rounds {min(spread):.2f}-{max(spread):.2f})"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="rounds of every measurement (default 5)")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per figure per round (default 3)")
    parser.add_argument("--baseline", default=BASELINE, help=f"commit to compare with (default {BASELINE}; none)")
    parser.add_argument("--floor-server", type=int, metavar="PORT", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.floor_server is not None:
        floor_server(options.floor_server)
        return 0
    for line in run(options.rounds, options.seconds, None if options.baseline == "none" else options.baseline):
        print(line, flush=True)
    return 0


def run(rounds: int, seconds: float, baseline: str | None) -> list[str]:
    """Start the servers, measure ``rounds`` rounds, and return the report's lines."""
    with ExitStack() as servers:
        started = {"floor": servers.enter_context(floor())}
        started["boaf"] = _server(servers.enter_context(calls.local_server({})))
        if baseline is not None:
            started["baseline"] = baseline_server(baseline, servers)
        measured: list[dict[str, dict[str, float]]] = []
        for _ in range(rounds):
            measured.append({name: one_round(server, seconds, name == "floor") for name, server in started.items()})
        head = f"per-call cost: {rounds} rounds of {seconds:g} s per figure; boaf = this tree"
        if baseline is not None:
            head += f", baseline = {baseline}"
        return [head, *report(measured)]


if __name__ == "__main__":
    sys.exit(main())
