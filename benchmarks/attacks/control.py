"""Control inputs: model reload, signals and settings, as an attacker (or a careless operator) gives them.

- reload (when the harness started the server over a model root it owns, ``BOAF_MODEL_DIR``):
  ``CURRENT`` naming ``../outside/v`` (a complete model outside the root), a 20 MiB ``CURRENT``
  (seeded junk), and a version whose model card has a 6 MiB field; each followed by SIGHUP and a
  wait. Each is counted by the reload outcome ``/metrics`` shows (``boaf_model_reloads_total``);
  a model from outside the root must never be served, and GetServerInfo must keep answering on both
  edges after each (a failure fails the class). At the end ``CURRENT`` names the first version again.
- signals: SIGTERM to a child server (``BOAF_SHUTDOWN_GRACE_S=1``) with small Classify calls in
  flight and the largest Classify batch: the code each call in flight got (UNAVAILABLE is the contract).
- settings past limits: ``boaf serve`` with a limit one past its largest value, negative, not a
  number, or 100,000 characters long (by seed): it should exit 2 at once with one short line.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import grpc

from benchmarks import calls, hostile
from benchmarks.attacks import connection, harness, reloads
from benchmarks.attacks.harness import Attack, ClassRun
from boaf.game import deal
from boaf.service.core import limits
from boaf.v1 import boaf_pb2 as pb

SETTINGS_WAIT_S, QUICK_SETTINGS_WAIT_S = (
    30.0,
    8.0,
)  # a server given bad settings exits at once; one still running accepted them
SMALL_CALLERS = 8
EXIT_WAIT_S = 60.0  # for a child server to be idle, and to exit after SIGTERM
LONG_VALUE = 100_000  # characters: Linux takes at most 128 KiB in one environment string


# ---------------------------------------------------------------- reload


async def reload_inputs(ctx: ClassRun) -> None:
    """Each bad reload input in turn; see the module's docstring."""
    root, pid = ctx.model_root, ctx.target.pid
    if root is None or pid is None:
        ctx.note("reload: skipped (the harness did not start the server over a model root it owns)")
        return
    reloads.add_version(root, "../outside/v")
    big_card = reloads.add_version(root, "big-card")
    card = json.loads((big_card / "model_card.json").read_text())
    card["notes"] = "x" * (6 * 1024 * 1024)
    (big_card / "model_card.json").write_text(json.dumps(card))
    junk = "".join(ctx.rng.choice(list("abcdefghij/."), 20 * 1024 * 1024 // 4)) * 4
    wait_s = 3.0 if ctx.quick else 10.0
    for label, current in (
        ("CURRENT = ../outside/v", "../outside/v"),
        ("a 20 MiB CURRENT", junk),
        ("a model card with a 6 MiB field", "big-card"),
    ):
        await _reload(ctx, root, label, current, wait_s)
    await _reload(ctx, root, "back to the first version", reloads.FIRST_VERSION, wait_s)


async def _reload(ctx: ClassRun, root: Path, label: str, current: str, wait_s: float) -> None:
    ctx.phase(f"reload: {label}")
    started = time.perf_counter()
    changed = await reloads.reload_to(ctx.target, root, current, wait_s)
    await asyncio.sleep(max(0.0, started + wait_s - time.perf_counter()))  # more polls: a repeated log shows
    ctx.count(f"reload: {label}", ", ".join(changed) or "no reload outcome")
    if "outside" in current and "reloaded" in changed:
        ctx.fail("a model from outside the model root was loaded and served")
    for what, code in await connection.probes(ctx.target):
        if what in ("HTTP GetServerInfo", "gRPC health Check") and code not in ("OK", "200"):
            ctx.fail(f"after {label}, {what} got {code}")
    info = await asyncio.get_running_loop().run_in_executor(None, _grpc_server_info, ctx.target.grpc)
    ctx.count("GetServerInfo after a reload input", info)
    if info != "OK":
        ctx.fail(f"after {label}, gRPC GetServerInfo got {info}")


def _grpc_server_info(address: str) -> str:
    with grpc.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)]) as channel:
        try:
            channel.unary_unary("/boaf.v1.Boaf/GetServerInfo")(b"", timeout=5.0)
        except grpc.RpcError as exc:
            return exc.code().name if isinstance(exc, grpc.Call) else type(exc).__name__
    return "OK"


# ---------------------------------------------------------------- signals


def sigterm_in_flight(ctx: ClassRun) -> None:
    """SIGTERM to a child server while small Classify calls and the largest Classify batch are in flight."""
    with calls.local_server({"BOAF_SHUTDOWN_GRACE_S": "1"}, ctx.work_dir, boaf=harness.boaf_command()) as child:
        if child.log_path is not None:
            ctx.other_logs.append(child.log_path)
        ctx.note(f"SIGTERM: the child server was idle {harness.wait_until_idle(child, EXIT_WAIT_S):.0f} s after start")
        codes: list[tuple[str, str]] = []
        sent = threading.Event()
        with grpc.insecure_channel(child.grpc, options=hostile.CLIENT_OPTIONS) as channel:
            threads = [threading.Thread(target=_small_calls, args=(channel, sent, codes)) for _ in range(SMALL_CALLERS)]
            largest = hostile.prepare(child).largest_grpc
            threads.append(threading.Thread(target=_long_call, args=(channel, largest, codes)))
            for thread in threads:
                thread.start()
            time.sleep(1.0)
            os.kill(child.pid or 0, signal.SIGTERM)
            signalled = time.perf_counter()
            sent.set()
            for thread in threads:
                thread.join()
        exited = _exited(child.pid, signalled + EXIT_WAIT_S)
        ctx.note(
            f"SIGTERM: the server exited {exited - signalled:.1f} s after it" if exited else "SIGTERM: still running"
        )
        for what, code in codes:
            ctx.count(f"SIGTERM: {what}", code)


def _exited(pid: int | None, give_up: float) -> float | None:
    """When ``pid`` (a child: a zombie once it exits) ended, polling until ``give_up``; None if it did not."""
    while time.perf_counter() < give_up:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return time.perf_counter()
        if state in ("Z", "X"):
            return time.perf_counter()
        time.sleep(0.1)
    return None


def _small_calls(channel: grpc.Channel, sent: threading.Event, codes: list[tuple[str, str]]) -> None:
    request = pb.ClassifyRequest(states=[calls.state_to_proto(deal(6))]).SerializeToString()
    classify = channel.unary_unary("/boaf.v1.Boaf/Classify")
    while True:
        signalled = sent.is_set()
        try:
            classify(request, timeout=5.0)
            code = "OK"
        except grpc.RpcError as exc:
            code = exc.code().name if isinstance(exc, grpc.Call) else type(exc).__name__
        if sent.is_set():  # the call was in flight when SIGTERM was sent, or was sent after it
            codes.append(("a small Classify in flight" if not signalled else "a small Classify after it", code))
        if signalled:
            return


def _long_call(channel: grpc.Channel, payload: bytes, codes: list[tuple[str, str]]) -> None:
    try:
        channel.unary_unary("/boaf.v1.Boaf/Classify")(payload, timeout=30.0)
        code = "OK"
    except grpc.RpcError as exc:
        code = exc.code().name if isinstance(exc, grpc.Call) else type(exc).__name__
    codes.append(("the largest Classify in flight", code))


# ---------------------------------------------------------------- settings


def bad_settings(ctx: ClassRun) -> list[tuple[str, str]]:
    """(variable, value) pairs past limits, chosen by seed."""
    chosen = [limits.LIMITS[int(i)] for i in ctx.rng.choice(len(limits.LIMITS), 2 if ctx.quick else 6, replace=False)]
    values = [str(limit.largest + 1) for limit in chosen]
    values += [str(ctx.rng.choice(["-1", "0x10", "1e999", "NaN", "9" * LONG_VALUE])) for _ in chosen]
    pairs = [(limit.variable, value) for limit, value in zip(chosen * 2, values, strict=True)]
    return pairs + [("BOAF_MODEL_POLL_S", "nan"), ("BOAF_SHUTDOWN_GRACE_S", "-inf")][: 1 if ctx.quick else 2]


def settings_past_limits(ctx: ClassRun) -> None:
    """``boaf serve`` with each bad setting: its exit status, time, and longest line of output."""
    longest, wait_s = 0, QUICK_SETTINGS_WAIT_S if ctx.quick else SETTINGS_WAIT_S
    for variable, value in bad_settings(ctx):
        env = {**os.environ, variable: value, "BOAF_PORT": "0", "BOAF_HTTP_PORT": "0", "BOAF_METRICS_PORT": "0"}
        started = time.perf_counter()
        command = [*harness.boaf_command(), "serve"]
        process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            output, _ = process.communicate(timeout=wait_s)
            code = f"exit {process.returncode}"
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
            code = f"still serving after {wait_s:g} s"
        lines = output.splitlines() or [b""]
        longest = max(longest, max(len(line) for line in lines))
        shown = value if len(value) <= 20 else f"{value[:8]}… ({len(value):,} characters)"
        ctx.count("settings past limits", code, time.perf_counter() - started)
        ctx.note(f"{variable}={shown}: {code} in {time.perf_counter() - started:.1f} s, {len(lines)} lines")
        if b"Traceback" in output:
            ctx.note(f"{variable}={shown}: a traceback")
    ctx.note(f"settings past limits: the longest line of output was {longest:,} bytes")


async def run(ctx: ClassRun) -> None:
    await reload_inputs(ctx)
    loop = asyncio.get_running_loop()
    ctx.phase("SIGTERM (a child server)")
    await loop.run_in_executor(None, sigterm_in_flight, ctx)
    ctx.phase("settings past limits (child servers)")
    await loop.run_in_executor(None, settings_past_limits, ctx)


ATTACK = Attack("control inputs", "reload inputs, SIGTERM with calls in flight, settings past limits", run)
