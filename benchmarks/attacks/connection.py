"""Connections as a resource: idle TCP, connections that never send the HTTP/2 preface, half-open TLS,
and descriptor exhaustion.

- idle TCP: connections to the gRPC, HTTP and metrics ports that send nothing, held;
- preface-less: thousands of connections to the gRPC port, each sending (by seed) nothing, half the
  HTTP/2 preface, random bytes or an HTTP/1.1 request head, then nothing more, held;
- half-open TLS: a child ``boaf serve`` with TLS (a self-signed certificate made by ``openssl``), and
  connections that send a ClientHello's first bytes, then nothing; a TLS health Check meanwhile
  must answer;
- descriptor exhaustion: a child ``boaf serve`` whose soft RLIMIT_NOFILE is 4,096, and 5,000
  preface-less connections to its gRPC port; then its HTTP edge, its metrics, health, a new gRPC
  call and a model reload must all work (a failure here fails the class).

Each connection's fate is counted: ``closed by the server`` (in whole seconds after it opened),
``open at the end``, or why it could not connect.
"""

from __future__ import annotations

import asyncio
import os
import resource
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import numpy as np
from grpc_health.v1 import health_pb2, health_pb2_grpc

from benchmarks import calls, hostile
from benchmarks.attacks import reloads
from benchmarks.attacks.harness import Attack, ClassRun, boaf_command
from boaf.game import deal
from boaf.v1 import boaf_pb2 as pb

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
CONNECT_TIMEOUT_S = 5.0
PROBE_TIMEOUT_S = 5.0
TLS_READY_S = 120.0  # for the TLS child server to answer health SERVING (and to stop)
EXHAUSTION_SOFT_LIMIT = 4096
EXHAUSTION_CONNECTIONS = 5000
QUICK_SOFT_LIMIT = 1024  # quick: the same shape, smaller
QUICK_CONNECTIONS = 1300
OPEN_AT_ONCE = 200  # connections being opened at the same time


def first_bytes(rng: np.random.Generator) -> tuple[str, bytes]:
    """What a preface-less connection sends, by seed: (label, bytes)."""
    kind = int(rng.integers(4))
    if kind == 0:
        return "nothing", b""
    if kind == 1:
        return "half the preface", PREFACE[: int(rng.integers(1, len(PREFACE)))]
    if kind == 2:
        return "random bytes", bytes(rng.integers(0, 256, int(rng.integers(1, 64)), dtype=np.uint8))
    return "an HTTP/1.1 head", b"GET / HTTP/1.1\r\nHost: x\r\n"


async def hold(host: str, port: int, data: bytes, stop_at: float, gate: asyncio.Semaphore) -> str:
    """Connect, send ``data``, then read until the server closes or ``stop_at``: what became of it."""
    async with gate:
        opened = time.perf_counter()
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), CONNECT_TIMEOUT_S)
        except TimeoutError:
            return "connect timed out"
        except OSError as exc:
            return f"connect failed: {os.strerror(exc.errno) if exc.errno else type(exc).__name__}"
    try:
        if data:
            writer.write(data)
        while (left := stop_at - time.perf_counter()) > 0:
            try:
                if not await asyncio.wait_for(reader.read(65536), left):
                    return f"closed by the server in {int(time.perf_counter() - opened)} s"
            except TimeoutError:
                break
        return "open at the end"
    except OSError:
        return f"reset by the server in {int(time.perf_counter() - opened)} s"
    finally:
        await hostile.close_writer(writer)


async def idle_tcp(ctx: ClassRun) -> None:
    """Connections to every port that send nothing."""
    target, n, seconds = ctx.target, ctx.size(300, 30), ctx.size(20, 3)
    stop_at = time.perf_counter() + seconds
    gate = asyncio.Semaphore(OPEN_AT_ONCE)
    ports = {"gRPC": int(target.grpc.rsplit(":", 1)[1]), "HTTP": target.http_port, "metrics": target.metrics_port}
    jobs = {name: [hold(target.host, port, b"", stop_at, gate) for _ in range(n)] for name, port in ports.items()}
    for name, outcomes in zip(jobs, await asyncio.gather(*(asyncio.gather(*j) for j in jobs.values())), strict=True):
        for outcome in outcomes:
            ctx.count(f"idle TCP to the {name} port ({n}, {seconds} s)", outcome)


async def preface_less(ctx: ClassRun, host: str, port: int, n: int, seconds: float, label: str) -> None:
    """``n`` connections to a gRPC port that never send the preface, held ``seconds``."""
    stop_at = time.perf_counter() + seconds
    gate = asyncio.Semaphore(OPEN_AT_ONCE)
    sends = [first_bytes(ctx.rng) for _ in range(n)]
    outcomes = await asyncio.gather(*(hold(host, port, data, stop_at, gate) for _, data in sends))
    for (what, _), outcome in zip(sends, outcomes, strict=True):
        ctx.count(f"{label}: sends {what}", outcome)


async def half_open_tls(ctx: ClassRun) -> None:
    """A child server with TLS, and connections that send a ClientHello's first bytes, then nothing."""
    if shutil.which("openssl") is None:
        ctx.note("half-open TLS: skipped (no openssl command to make a certificate)")
        return
    cert, key = ctx.work_dir / "tls-cert.pem", ctx.work_dir / "tls-key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    with tls_server(ctx, cert, key) as address:
        loop = asyncio.get_running_loop()
        ready = await loop.run_in_executor(None, tls_health, address, cert.read_bytes(), TLS_READY_S)
        if ready != "OK":
            ctx.fail(f"half-open TLS: the TLS child server never answered health ({ready})")
            return
        n, seconds = ctx.size(1000, 50), ctx.size(20, 3)
        stop_at = time.perf_counter() + seconds
        hello = bytes.fromhex("16030100c8010000c40303")  # a ClientHello's record and handshake heads, no more
        gate = asyncio.Semaphore(OPEN_AT_ONCE)
        host, port = address.rsplit(":", 1)
        held = asyncio.gather(*(hold(host, int(port), hello, stop_at, gate) for _ in range(n)))
        await asyncio.sleep(seconds / 2)
        during = await loop.run_in_executor(None, tls_health, address, cert.read_bytes(), PROBE_TIMEOUT_S)
        ctx.count("probe during half-open TLS: TLS health Check", during)
        if during != "OK":
            ctx.fail(f"with {n:,} half-open TLS connections, a TLS health Check got {during}")
        for outcome in await held:
            ctx.count(f"half-open TLS ({n:,}, {seconds} s)", outcome)


@contextmanager
def tls_server(ctx: ClassRun, cert: Path, key: Path) -> Iterator[str]:
    """``boaf serve`` with TLS on a free loopback port, its log among the class's; yields its gRPC address."""
    port = calls.free_port()
    command = [*boaf_command(), "serve", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--http-port", str(calls.free_port()), "--metrics-port", str(calls.free_port())]
    env = {**os.environ, "BOAF_LOG_LEVEL": "WARNING", "BOAF_TLS_CERT": str(cert), "BOAF_TLS_KEY": str(key)}
    log_path = ctx.work_dir / f"boaf-serve-tls-{port}.log"
    ctx.other_logs.append(log_path)
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(TLS_READY_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def tls_health(address: str, root_certificate: bytes, within_s: float) -> str:
    """A health Check over TLS, asked until SERVING or ``within_s`` seconds: OK, or the last code."""
    credentials = grpc.ssl_channel_credentials(root_certificates=root_certificate)
    options = [("grpc.ssl_target_name_override", "localhost"), ("grpc.use_local_subchannel_pool", 1)]
    give_up, code = time.perf_counter() + within_s, "no answer"
    with grpc.secure_channel(address, credentials, options=options) as channel:
        check = health_pb2_grpc.HealthStub(channel).Check
        while time.perf_counter() < give_up:
            try:
                reply = check(health_pb2.HealthCheckRequest(service="boaf.v1.Boaf"), timeout=PROBE_TIMEOUT_S)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return "OK"
                code = "NOT_SERVING"
            except grpc.RpcError as exc:
                code = exc.code().name if isinstance(exc, grpc.Call) else type(exc).__name__
            time.sleep(0.5)
    return code


# ---------------------------------------------------------------- descriptor exhaustion


async def descriptor_exhaustion(ctx: ClassRun) -> None:
    """A child server at a soft descriptor limit, more preface-less connections than that; then probes."""
    soft, n = (QUICK_SOFT_LIMIT, QUICK_CONNECTIONS) if ctx.quick else (EXHAUSTION_SOFT_LIMIT, EXHAUSTION_CONNECTIONS)
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    boaf = ["prlimit", f"--nofile={soft}:{hard}", *boaf_command()]  # prlimit execs boaf: the pid is the server's
    root = reloads.model_root(ctx.work_dir, "exhaustion-models")
    reloads.add_version(root, "v2")
    env = {"BOAF_MODEL_DIR": str(root)}
    with calls.local_server(env, ctx.work_dir, boaf=boaf) as child:
        if child.log_path is not None:
            ctx.other_logs.append(child.log_path)
        port = int(child.grpc.rsplit(":", 1)[1])
        seconds = 8.0 if ctx.quick else 20.0
        flood = asyncio.create_task(
            preface_less(ctx, child.host, port, n, seconds, f"{n:,} preface-less to a server at {soft:,} descriptors")
        )
        await asyncio.sleep(seconds / 2)  # the connections are open (or refused) by now
        for what, code in await probes(child):
            ctx.count(f"probe during exhaustion: {what}", code)
            if code not in ("OK", "200"):
                ctx.fail(f"with {n:,} preface-less connections at {soft:,} descriptors, {what} got {code}")
        reloaded = ", ".join(await reloads.reload_to(child, root, "v2", PROBE_TIMEOUT_S)) or "no reload outcome"
        ctx.count("probe during exhaustion: a reload", reloaded)
        if reloaded != "reloaded":
            ctx.fail(f"with {n:,} preface-less connections at {soft:,} descriptors, a reload got {reloaded}")
        await flood


async def probes(target: hostile.Target) -> list[tuple[str, str]]:
    """(what, code) of the HTTP edge, metrics, health Check and a new gRPC call."""
    found = [("HTTP GetServerInfo", await _http_probe(target)), ("metrics GET", await _metrics_probe(target))]
    loop = asyncio.get_running_loop()
    found += await loop.run_in_executor(None, _grpc_probes, target.grpc)
    return found


async def _http_probe(target: hostile.Target) -> str:
    connection = hostile.HttpConnection(target.host, target.http_port)
    try:
        return hostile.answer_code(await connection.post("/boaf.v1.Boaf/GetServerInfo", b"{}", {}, PROBE_TIMEOUT_S))
    except (TimeoutError, EOFError, OSError, ValueError) as exc:
        return type(exc).__name__
    finally:
        await connection.close()


async def _metrics_probe(target: hostile.Target) -> str:
    try:
        reader, writer = await hostile.open_stream(target.host, target.metrics_port)
    except (TimeoutError, OSError) as exc:
        return type(exc).__name__
    try:
        writer.write(hostile.request_head("GET", "/metrics", target.host, target.metrics_port, None, {}))
        return str((await asyncio.wait_for(hostile.read_answer(reader), PROBE_TIMEOUT_S)).status)
    except (TimeoutError, EOFError, OSError, ValueError) as exc:
        return type(exc).__name__
    finally:
        await hostile.close_writer(writer)


def _grpc_probes(address: str) -> list[tuple[str, str]]:
    found = []
    with grpc.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)]) as channel:
        request = health_pb2.HealthCheckRequest(service="boaf.v1.Boaf")
        classify = pb.ClassifyRequest(states=[calls.state_to_proto(deal(2))])
        for what, call in (
            ("gRPC health Check", lambda: health_pb2_grpc.HealthStub(channel).Check(request, timeout=PROBE_TIMEOUT_S)),
            (
                "new gRPC Classify",
                lambda: channel.unary_unary("/boaf.v1.Boaf/Classify")(
                    classify.SerializeToString(), timeout=PROBE_TIMEOUT_S
                ),
            ),
        ):
            try:
                call()
                found.append((what, "OK"))
            except grpc.RpcError as exc:
                found.append((what, exc.code().name if isinstance(exc, grpc.Call) else type(exc).__name__))
    return found


async def run(ctx: ClassRun) -> None:
    """Every attack of the class, one after the other on the class's server, then exhaustion on a child."""
    port = int(ctx.target.grpc.rsplit(":", 1)[1])
    ctx.phase("idle TCP")
    await idle_tcp(ctx)
    ctx.phase("preface-less")
    n = ctx.size(3000, 300)
    await preface_less(ctx, ctx.target.host, port, n, ctx.size(20, 3), f"{n:,} preface-less")
    ctx.phase("half-open TLS (a child server)")
    await half_open_tls(ctx)
    if shutil.which("prlimit") is None:
        ctx.note("descriptor exhaustion: skipped (no prlimit command, util-linux)")
        return
    ctx.phase("descriptor exhaustion (a child server)")
    await descriptor_exhaustion(ctx)


ATTACK = Attack("connection", "idle TCP, preface-less, half-open TLS, descriptor exhaustion", run)
