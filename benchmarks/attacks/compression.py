"""Compression: small bodies that inflate to the message limit and past it, many at once.

- gRPC: ``grpc-encoding`` gzip or deflate (by seed), a ClassifyRequest of one state padded with an
  unknown bytes field of zeros to just under the message limit, just over it, or nearly four times
  it (gRPC core's own refusal point), 64 to 128 streams at once on raw HTTP/2 connections. Under
  the limit should be OK; over it OUT_OF_RANGE.
- HTTP: ``Content-Encoding: gzip`` JSON bodies padded with spaces (valid JSON) to just under the
  limit, just over it, and far past it (up to 1 GiB from about 1 MB on the wire), 16 at once.

The bombs are made by streaming compression of the padding, so the harness never holds them
inflated.
"""

from __future__ import annotations

import json
import zlib

from benchmarks import calls, hostile
from benchmarks.attacks import send, wire
from benchmarks.attacks.harness import Attack, ClassRun, in_turn
from benchmarks.attacks.wire import CLASSIFY
from boaf.game import deal
from boaf.v1 import boaf_pb2 as pb

PAD_FIELD = 15  # an unknown field number of ClassifyRequest (length-delimited)
CHUNK = 1 << 20


def compressed_padding(prefix: bytes, pad: int, suffix: bytes, encoding: str, fill: bytes = b"\0") -> bytes:
    """``prefix``, ``pad`` bytes of ``fill``, ``suffix``, compressed as ``encoding`` without ever holding them whole."""
    wbits = {"gzip": 31, "deflate": 15}[encoding]
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    out = [packer.compress(prefix)]
    block = fill * CHUNK
    while pad > 0:
        out.append(packer.compress(block[: min(pad, CHUNK)]))
        pad -= CHUNK
    out += [packer.compress(suffix), packer.flush()]
    return b"".join(out)


def padded_classify(size: int, encoding: str) -> bytes:
    """A ClassifyRequest of one state, ``size`` bytes inflated, compressed as ``encoding``."""
    head = pb.ClassifyRequest(states=[calls.state_to_proto(deal(3))]).SerializeToString()
    tag = bytes(((PAD_FIELD << 3) | 2,))
    pad = size - len(head) - 1 - len(wire.varint(size))
    pad = size - len(head) - 1 - len(wire.varint(pad))
    return compressed_padding(head + tag + wire.varint(pad), pad, b"", encoding)


def sizes(ctx: ClassRun, limit: int) -> dict[str, int]:
    """Inflated sizes by name: just under the limit, just over it, and nearly four times it (by seed)."""
    delta = int(ctx.rng.integers(1, 64 * 1024))
    return {"under": limit - delta, "over": limit + delta, "4x": 4 * limit - delta}


async def grpc_bombs(ctx: ClassRun) -> None:
    """Bursts of compressed gRPC messages, 64 to 128 streams at once."""
    limit = ctx.limits.max_message_bytes
    bombs = {
        (name, encoding): padded_classify(size, encoding)
        for name, size in sizes(ctx, limit).items()
        for encoding in ("gzip", "deflate")
    }
    on_wire = max(len(b) for b in bombs.values())
    ctx.note(f"gRPC bombs: at most {on_wire:,} bytes on the wire for up to {4 * limit:,} inflated")
    keys = list(bombs)
    for _ in range(ctx.size(3, 1)):
        at_once = 8 if ctx.quick else int(ctx.rng.integers(64, 129))
        chosen = [keys[int(i)] for i in ctx.rng.integers(0, len(keys), at_once)]
        requests = [(f"gRPC {enc} inflating {name} the limit", CLASSIFY, bombs[name, enc], enc) for name, enc in chosen]
        await send.grpc_calls(ctx, requests, compressed=True)


async def http_bombs(ctx: ClassRun) -> None:
    """Gzipped JSON bodies padded with spaces: under, just over, and far over the limit, at once."""
    limit = ctx.limits.max_message_bytes
    body = json.dumps({"states": [{"rows": 4, "cols": 4, "cells": hostile.deal_cells(4)}]}).encode()
    far = ctx.size(1024, 32) * 1024 * 1024
    targets = {**sizes(ctx, limit), "far over": far}
    bombs = {name: compressed_padding(body, size - len(body), b"", "gzip", b" ") for name, size in targets.items()}
    ctx.note(f"HTTP gzip bombs: {len(bombs['far over']):,} bytes on the wire inflate to {far:,}")
    at_once = ctx.size(16, 4)
    for _ in range(ctx.size(3, 1)):
        names = [str(ctx.rng.choice(list(bombs))) for _ in range(at_once)]
        requests = [(f"HTTP gzip inflating {name} the limit", CLASSIFY, bombs[name], "gzip") for name in names]
        await send.http_calls(ctx, requests, compressed=True)


async def run(ctx: ClassRun) -> None:
    await in_turn(ctx, grpc_bombs, http_bombs)


ATTACK = Attack("compression", "gRPC gzip/deflate messages and HTTP gzip bodies around the limit", run)
