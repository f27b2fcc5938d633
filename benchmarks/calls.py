"""The calls every load benchmark makes: scenarios' requests, client processes, and a local ``boaf serve``.

``run_scenario`` runs concurrent gRPC callers of named scenarios (asyncio clients, one channel per
process, spread over spawned processes) and returns what they measured (``Outcome``: per-call
latencies in seconds, states answered, failures by status code); ``run_http_scenario`` does the same
over HTTP/JSON. ``local_server`` starts ``boaf serve`` on free loopback ports and yields its
``hostile.Target`` once it reports SERVING. ``benchmarks/load.py`` and ``benchmarks/percall.py`` both
build on this module; neither imports the other's internals.
"""

from __future__ import annotations

import asyncio
import itertools
import multiprocessing
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import json_format
from grpc_health.v1 import health_pb2, health_pb2_grpc

from benchmarks import hostile
from boaf.game import State, card_text, deal, random_states
from boaf.service.core.settings import Settings
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc, game_pb2, game_pb2_grpc

SCENARIOS = ("classify-1", "classify-1000", "solve-deal", "features-1000", "hint")
# Not run unless named: the cheapest calls, boaf's (served from a cache) beside the health Check floor.
EXTRA_SCENARIOS = ("server-info", "health-check")
CALL_TIMEOUT_S = 30.0
READY_TIMEOUT_S = 300.0
STOP_TIMEOUT_S = 60.0  # then the server is killed


@dataclass
class Outcome:
    """What one client process measured: per-call latencies in seconds, and failures by status code."""

    latencies: list[float] = field(default_factory=list)
    states: int = 0
    errors: dict[str, int] = field(default_factory=dict)


# ---------------------------------------------------------------- requests


def state_to_proto(state: State) -> pb.State:
    """The message of a state, as any client would build it: card text, "" for empty."""
    return pb.State(rows=state.rows, cols=state.cols, cells=["" if c is None else card_text(c) for c in state.cells])


def request_maker(scenario: str, worker: int) -> Callable[[boaf_pb2_grpc.BoafStub], tuple[object, int]]:
    """A function giving the next (pending call, states in it) for ``scenario`` on a stub."""
    rng_seed = 1000 + worker
    if scenario == "classify-1":
        singles = [pb.ClassifyRequest(states=[state_to_proto(s)]) for s in random_states(rng_seed, 1000)]
        cycle = itertools.cycle(singles)
        return lambda stub: (stub.Classify(next(cycle), timeout=CALL_TIMEOUT_S), 1)
    if scenario in ("classify-1000", "features-1000"):
        batches = [[state_to_proto(s) for s in random_states(rng_seed * 10 + i, 1000)] for i in range(4)]
        if scenario == "classify-1000":
            classify = itertools.cycle([pb.ClassifyRequest(states=b) for b in batches])
            return lambda stub: (stub.Classify(next(classify), timeout=CALL_TIMEOUT_S), 1000)
        featurize = itertools.cycle([pb.FeaturesRequest(states=b) for b in batches])
        return lambda stub: (stub.Features(next(featurize), timeout=CALL_TIMEOUT_S), 1000)
    if scenario == "solve-deal":
        seeds = itertools.count(1 + 1_000_000 * worker)
        return lambda stub: (
            stub.Solve(pb.SolveRequest(state=state_to_proto(deal(next(seeds)))), timeout=CALL_TIMEOUT_S),
            1,
        )
    if scenario == "hint":
        deals = itertools.count(1 + 1_000_000 * worker)
        return lambda stub: (
            stub.game.Hint(  # type: ignore[attr-defined]
                game_pb2.HintRequest(state=state_to_proto(deal(next(deals)))), timeout=CALL_TIMEOUT_S
            ),
            1,
        )
    if scenario == "server-info":
        return lambda stub: (stub.GetServerInfo(pb.GetServerInfoRequest(), timeout=CALL_TIMEOUT_S), 0)
    if scenario == "health-check":
        return lambda stub: (stub.health.Check(health_pb2.HealthCheckRequest(), timeout=CALL_TIMEOUT_S), 0)  # type: ignore[attr-defined]
    raise ValueError(f"unknown scenario {scenario!r}")


# ---------------------------------------------------------------- clients


async def _client(
    stub: boaf_pb2_grpc.BoafStub, make: Callable[..., tuple[object, int]], stop_at: float, out: Outcome
) -> None:
    while time.perf_counter() < stop_at:
        started = time.perf_counter()
        call, n_states = make(stub)
        try:
            await call  # type: ignore[misc]
        except grpc.aio.AioRpcError as exc:
            out.errors[exc.code().name] = out.errors.get(exc.code().name, 0) + 1
            continue
        out.latencies.append(time.perf_counter() - started)
        out.states += n_states


async def _run_process(address: str, scenarios: list[str], clients: int, seconds: float, worker: int) -> Outcome:
    out = Outcome()
    makers = [request_maker(s, worker * 100 + i) for i, s in enumerate(scenarios)]
    async with grpc.aio.insecure_channel(address) as channel:
        stub = boaf_pb2_grpc.BoafStub(channel)
        stub.health = health_pb2_grpc.HealthStub(channel)  # type: ignore[attr-defined]  # health-check scenario
        stub.game = game_pb2_grpc.GameStub(channel)  # type: ignore[attr-defined]  # hint scenario
        await asyncio.wait_for(channel.channel_ready(), CALL_TIMEOUT_S)  # connect before timing (any server)
        stop_at = time.perf_counter() + seconds
        await asyncio.gather(*(_client(stub, makers[i % len(makers)], stop_at, out) for i in range(clients)))
    return out


def _process_main(args: tuple[str, list[str], int, float, int]) -> Outcome:
    return asyncio.run(_run_process(*args))


def run_scenario(address: str, scenarios: list[str], clients: int, seconds: float, processes: int) -> Outcome:
    """Run ``clients`` concurrent callers of ``scenarios`` for ``seconds``; returns what they measured."""
    return _fan_out(_process_main, address, scenarios, clients, seconds, processes)


def _fan_out(main: Any, target: str, scenarios: Any, clients: int, seconds: float, processes: int) -> Outcome:
    """Share ``clients`` between up to ``processes`` spawned processes running ``main``; merge what they measured."""
    processes = max(1, min(processes, clients))
    shares = [clients // processes + (1 if i < clients % processes else 0) for i in range(processes)]
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        parts = pool.map(main, [(target, scenarios, n, seconds, i) for i, n in enumerate(shares)])
    merged = Outcome()
    for part in parts:
        merged.latencies += part.latencies
        merged.states += part.states
        for code, n in part.errors.items():
            merged.errors[code] = merged.errors.get(code, 0) + n
    return merged


# ---------------------------------------------------------------- HTTP/JSON clients

HTTP_SCENARIOS = ("classify-1", "classify-1000")


def json_bodies(scenario: str, worker: int) -> tuple[list[bytes], int]:
    """The request bodies of ``scenario`` (the gRPC scenario's messages in proto3 JSON), and states per call."""
    rng_seed = 1000 + worker
    if scenario == "classify-1":
        requests = [pb.ClassifyRequest(states=[state_to_proto(s)]) for s in random_states(rng_seed, 1000)]
    elif scenario == "classify-1000":
        batches = [random_states(rng_seed * 10 + i, 1000) for i in range(4)]
        requests = [pb.ClassifyRequest(states=[state_to_proto(s) for s in b]) for b in batches]
    else:
        raise ValueError(f"no HTTP scenario {scenario!r}")
    return [json_format.MessageToJson(r, indent=None).encode() for r in requests], len(requests[0].states)


def _http_client(base: str, bodies: list[bytes], n_states: int, stop_at: float, out: Outcome) -> None:
    import http.client

    host, port = base.rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=CALL_TIMEOUT_S)
    headers = {"Content-Type": "application/json", "Connect-Timeout-Ms": str(int(CALL_TIMEOUT_S * 1000))}
    for body in itertools.cycle(bodies):
        if time.perf_counter() >= stop_at:
            break
        started = time.perf_counter()
        connection.request("POST", "/boaf.v1.Boaf/Classify", body, headers)
        response = connection.getresponse()
        response.read()
        if response.status != 200:
            out.errors[str(response.status)] = out.errors.get(str(response.status), 0) + 1
            continue
        out.latencies.append(time.perf_counter() - started)
        out.states += n_states
    connection.close()


def _http_process_main(args: tuple[str, str, int, float, int]) -> Outcome:
    import threading

    base, scenario, clients, seconds, worker = args
    out = Outcome()
    bodies, n_states = json_bodies(scenario, worker)
    stop_at = time.perf_counter() + seconds
    threads = [
        threading.Thread(target=_http_client, args=(base, bodies[i % len(bodies) :] + bodies, n_states, stop_at, out))
        for i in range(clients)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return out


def run_http_scenario(base: str, scenario: str, clients: int, seconds: float, processes: int) -> Outcome:
    """``run_scenario`` over HTTP/JSON: ``clients`` keep-alive connections to ``base`` (host:port)."""
    return _fan_out(_http_process_main, base, scenario, clients, seconds, processes)


# ---------------------------------------------------------------- server


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def local_server(
    env: dict[str, str], log_dir: Path | None = None, boaf: list[str] | None = None, cwd: Path | None = None
) -> Iterator[hostile.Target]:
    """``boaf serve`` (gRPC, HTTP, metrics) on free loopback ports with ``env`` added, SERVING; yields where.

    Its output goes to a new ``boaf-serve-*.log`` in ``log_dir`` (default: the temporary directory).
    ``boaf`` is the command that runs the CLI (default: ``boaf``), run in ``cwd``.
    """
    port, http_port, metrics_port = free_port(), free_port(), free_port()
    command = [*(boaf or ["boaf"]), "serve", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--metrics-port", str(metrics_port), "--http-port", str(http_port)]
    server_env = {**os.environ, "BOAF_LOG_LEVEL": "WARNING", **env}
    max_streams = Settings.from_env(server_env).max_streams
    # Its log goes to a file: a hostile run can make it long (issue 21, rows 3 and 4), and the report counts it.
    with tempfile.NamedTemporaryFile("wb", prefix="boaf-serve-", suffix=".log", dir=log_dir, delete=False) as log:
        process = subprocess.Popen(command, env=server_env, stdout=log, stderr=subprocess.STDOUT, cwd=cwd)
    log_path = Path(log.name)
    target = hostile.Target(f"127.0.0.1:{port}", http_port, metrics_port, process.pid, max_streams, log_path)
    try:
        try:
            wait_until_serving(target.grpc, process.poll)
        except SystemExit:
            sys.stderr.write(log_path.read_text(errors="replace")[-4000:])
            raise
        yield target
    finally:
        process.terminate()
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            print(f"the server did not stop within {STOP_TIMEOUT_S:g} s of SIGTERM; killed", file=sys.stderr)
            process.kill()
            process.wait()


def wait_until_serving(address: str, exited: Callable[[], int | None] = lambda: None) -> None:
    """Return once the server at ``address`` reports SERVING; exit if it does not, or if ``exited()`` says it ended."""
    give_up = time.monotonic() + READY_TIMEOUT_S
    with grpc.insecure_channel(address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < give_up:
            if exited() is not None:
                raise SystemExit(f"the server at {address} exited before it was SERVING")
            try:
                reply = health.Check(health_pb2.HealthCheckRequest(service="boaf.v1.Boaf"), timeout=2)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                pass
            time.sleep(0.2)
    raise SystemExit(f"the server at {address} did not become SERVING within {READY_TIMEOUT_S:.0f} s")
