"""Load test of the gRPC service over loopback: latency percentiles and throughput.

Starts ``boaf serve`` on free loopback ports (or uses ``--address``), waits for
health SERVING, then runs each scenario for ``--duration`` seconds with
``--clients`` concurrent clients (spread over ``--processes`` client processes,
each an asyncio loop on one channel), and prints one row per scenario:

- ``classify-1``: Classify of one random 4x4 state;
- ``classify-1000``: Classify of 1,000 random states;
- ``solve-deal``: Solve (ordered DFS) of a seeded 16-card deal, a fresh seed each call;
- ``features-1000``: Features of 1,000 random states;
- ``hint``: Game.Hint of a seeded 16-card deal, a fresh seed each call: every legal move
  (~40) searched within the model's exact-path budget, the rest to the model;
- ``server-info`` and ``health-check`` (only when named): GetServerInfo, served
  from a cache, beside the health Check floor.

``--soak S`` adds a mixed run of all five for S seconds and reports its errors.
``--hostile S`` (default 60; 0 for none) ends with the hostile mix of
``benchmarks/hostile.py`` at the largest client count, after a baseline of its
normal calls alone (a quarter of S, at least 1 s): malformed and runaway-shaped
gRPC calls among normal ones on both edges, with the attacks of issue 21 (idle
streams past the stream cap, the largest batches with a 0.5 s deadline, JSON
type confusion, half bodies, slowloris, a 2 GB Content-Length, slow readers).
It reports every status code by kind, the normal calls' p50/p99 during the
attack against the baseline, the server's CPU seconds in the 5 s after it, its
peak RSS and its RSS ``--hostile-rss-wait`` seconds (default 60) after it
against the idle RSS; it exits 1 on any INTERNAL or UNKNOWN, HTTP 500 or 501, or
503/504 without a JSON error body. With ``--address``, the server's HTTP port is
taken to be 8080 and its metrics port 8082, its stream cap BOAF_MAX_STREAMS as
set here (unless GetServerInfo lists it), and /proc figures are n/a.
``--http`` adds ``http classify-1`` and ``http classify-1000``: the same calls as
JSON over the HTTP edge (``POST /boaf.v1.Boaf/Classify``, a keep-alive connection
per client), beside the gRPC rows.

First (unless ``--per-call-rounds 0`` or ``--address``), the per-call table of
``benchmarks/percall.py``: the bare-grpcio floor, boaf's own cost per call, GetServerInfo,
and Classify throughput at 16 clients beside the ``--baseline`` commit (issue 23).

Targets (issue 6): classify-1 p50 <= 2 ms; >= 20,000 states/s through
classify-1000; solve-deal p50 <= 3 ms; no errors in a 60 s soak at 16 clients.

    python benchmarks/load.py                                  # every scenario at 1 and 16 clients
    python benchmarks/load.py --clients 16 --duration 10 --soak 60
    python benchmarks/load.py --scenarios classify-1,classify-1000 --http   # gRPC and HTTP/JSON side by side
    python benchmarks/load.py --scenarios solve-deal --duration 1 --hostile 60   # mostly the hostile mix
    python benchmarks/load.py --scenarios hint --clients 1,16 --duration 10 --hostile 0
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

if not __package__:  # run as a script: its own folder is sys.path[0]; the repository's root imports it as benchmarks
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import numpy as np

from benchmarks import hostile, percall
from benchmarks.calls import (
    EXTRA_SCENARIOS,
    HTTP_SCENARIOS,
    SCENARIOS,
    Outcome,
    local_server,
    run_http_scenario,
    run_scenario,
)
from boaf.service.core.settings import Settings

# ---------------------------------------------------------------- report


def report_row(name: str, clients: int, out: Outcome, seconds: float) -> str:
    calls = len(out.latencies)
    ms = np.array(out.latencies) * 1000 if calls else np.array([np.nan])
    errors = sum(out.errors.values())
    detail = "" if not errors else "  " + ", ".join(f"{k}={v}" for k, v in sorted(out.errors.items()))
    return (
        f"{name:<15} {clients:>7} {calls:>8} {errors:>6} {np.percentile(ms, 50):>8.2f} {np.percentile(ms, 99):>8.2f}"
        f" {calls / seconds:>9.0f} {out.states / seconds:>10.0f}{detail}"
    )


HEADER = (
    f"{'scenario':<15} {'clients':>7} {'calls':>8} {'errors':>6} {'p50 ms':>8} {'p99 ms':>8}"
    f" {'calls/s':>9} {'states/s':>10}"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--address", help="host:port of a running server (default: start one on loopback)")
    parser.add_argument("--clients", default="1,16", help="comma-separated concurrent client counts (default 1,16)")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per scenario (default 10)")
    parser.add_argument("--processes", type=int, default=2, help="client processes (default 2)")
    parser.add_argument(
        "--scenarios",
        default=",".join(SCENARIOS),
        help="comma-separated subset of " + ", ".join(SCENARIOS + EXTRA_SCENARIOS),
    )
    parser.add_argument("--soak", type=float, default=0.0, help="seconds of mixed load at the largest client count")
    parser.add_argument(
        "--hostile", type=float, default=60.0, help="seconds of the hostile mix at the largest client count (0: none)"
    )
    parser.add_argument(
        "--hostile-rss-wait",
        type=float,
        default=60.0,
        help="seconds after the hostile mix at which the server's RSS is read (default 60)",
    )
    parser.add_argument(
        "--http", action="store_true", help="also Classify over HTTP/JSON (the started server's HTTP port)"
    )
    parser.add_argument(
        "--per-call-rounds",
        type=int,
        default=5,
        help="rounds of the per-call table (benchmarks/percall.py: the floor, boaf's own cost, throughput against "
        "--baseline) before the scenarios; 0: none, and none with --address",
    )
    parser.add_argument("--baseline", default="c73f0e4", help="the per-call baseline commit (none: none)")
    options = parser.parse_args(argv)
    if options.per_call_rounds and not options.address:
        baseline = None if options.baseline == "none" else options.baseline
        for line in percall.run(options.per_call_rounds, 3.0, baseline):
            print(line, flush=True)
    client_counts = [int(c) for c in options.clients.split(",")]
    scenarios = options.scenarios.split(",")
    with _server(options.address) as target:
        address, http_port = target.grpc, target.http_port
        print(f"server {address}; {os.cpu_count()} cores shared by server and clients; {options.duration:g} s per row")
        if target.log_path is not None:
            print(f"server log: {target.log_path}")
        print(HEADER)
        for scenario in scenarios:
            for clients in client_counts:
                out = run_scenario(address, [scenario], clients, options.duration, options.processes)
                print(report_row(scenario, clients, out, options.duration), flush=True)
        if options.http:
            base = f"{address.rsplit(':', 1)[0]}:{http_port}"
            for scenario in HTTP_SCENARIOS:
                for clients in client_counts:
                    out = run_http_scenario(base, scenario, clients, options.duration, options.processes)
                    print(report_row(f"http {scenario}", clients, out, options.duration), flush=True)
        if options.hostile and not run_hostile_mix(target, max(client_counts), options):
            return 1
        if options.soak:
            clients = max(client_counts)
            out = run_scenario(address, list(SCENARIOS), clients, options.soak, options.processes)
            print(report_row("soak (mixed)", clients, out, options.soak), flush=True)
            return 1 if out.errors else 0
    return 0


def run_hostile_mix(target: hostile.Target, clients: int, options: argparse.Namespace) -> bool:
    """Run and report the hostile mix; False on any INTERNAL, UNKNOWN, HTTP 500/501, or 503/504 without JSON."""
    outcome = hostile.run_hostile(
        target,
        clients,
        options.hostile,
        options.processes,
        baseline_s=max(1.0, options.hostile / 4),
        rss_wait_s=options.hostile_rss_wait,
    )
    for line in hostile.report(outcome):
        print(line, flush=True)
    return not outcome.failures()


@contextmanager
def _server(address: str | None) -> Iterator[hostile.Target]:
    if address:  # a running server: its default HTTP and metrics ports
        yield hostile.Target(address, 8080, 8082, None, Settings.from_env().max_streams)
        return
    with local_server({}) as started:
        yield started


if __name__ == "__main__":
    sys.exit(main())
