"""Parser amplification: few bytes on the wire, much work before a limit refuses them.

Each shape is sent as protobuf over gRPC and as JSON over HTTP, gzipped or not by seed, a few at
once, sized to stay under the message limit so that only the parser and the later checks stand in
the way:

- empty states: ``{"states": [{}, {}, …]}``, up to 1.3 million (over the batch limit: refused);
- deep nesting: JSON arrays nested 100,000 deep; protobuf groups nested as deep in an unknown field;
- many unknown fields: a million unknown fields beside an empty batch;
- huge repeated cells: one state with a million empty cells.

Each answer is counted with its latency: a refusal that takes seconds is work done before a limit.
"""

from __future__ import annotations

from benchmarks.attacks import send, wire
from benchmarks.attacks.harness import Attack, ClassRun
from benchmarks.attacks.wire import CLASSIFY

UNKNOWN_FIELD = 15  # no request message of boaf.v1 has it


def empty_states(n: int) -> tuple[bytes, bytes]:
    """(protobuf, JSON) of a ClassifyRequest of ``n`` empty states."""
    return b"\x0a\x00" * n, b'{"states":[' + b"{}," * (n - 1) + b"{}]}"


def deep_nesting(depth: int) -> tuple[bytes, bytes]:
    """(protobuf, JSON): groups of the unknown field nested ``depth`` deep; JSON arrays as deep in ``states``."""
    start, end = bytes(((UNKNOWN_FIELD << 3) | 3,)), bytes(((UNKNOWN_FIELD << 3) | 4,))
    return start * depth + end * depth, b'{"states":[' + b"[" * depth + b"]" * depth + b"]}"


def unknown_fields(n: int) -> tuple[bytes, bytes]:
    """(protobuf, JSON) of an empty ClassifyRequest with ``n`` unknown fields (varint 0; keys ``u0``…)."""
    keys = b",".join(b'"u%d":0' % i for i in range(n))
    return bytes((UNKNOWN_FIELD << 3, 0)) * n, b"{" + keys + b',"states":[]}'


def many_cells(n: int) -> tuple[bytes, bytes]:
    """(protobuf, JSON) of one 4x4 state with ``n`` empty cells."""
    state = b"\x08\x04\x10\x04" + b"\x1a\x00" * n
    proto = b"\x0a" + wire.varint(len(state)) + state
    return proto, b'{"states":[{"rows":4,"cols":4,"cells":[' + b'"",' * (n - 1) + b'""]}]}'


def shapes(ctx: ClassRun) -> dict[str, tuple[bytes, bytes]]:
    """Every shape by name, sized by seed (smaller when quick), each under the message limit."""
    limit = ctx.limits.max_message_bytes
    built = {
        "empty states": empty_states(min(ctx.size(1_300_000, 100_000), (limit - 16) // 3)),
        "deep nesting": deep_nesting(ctx.size(100_000, 10_000)),
        "unknown fields": unknown_fields(min(ctx.size(1_000_000, 50_000), (limit - 16) // 9)),
        "many cells": many_cells(min(ctx.size(1_000_000, 100_000), (limit - 64) // 3)),
    }
    for name, (proto, json_body) in built.items():
        ctx.note(f"{name}: {len(proto):,} bytes of protobuf, {len(json_body):,} of JSON")
    return built


async def run(ctx: ClassRun) -> None:
    """Each shape a few at once on each edge, gzipped or not by seed."""
    at_once = ctx.size(8, 2)
    for name, (proto, json_body) in shapes(ctx).items():
        ctx.phase(name)
        encodings = [str(ctx.rng.choice(["", "gzip"])) for _ in range(at_once)]
        grpc_requests = [(f"gRPC {name}{' gzip' * bool(e)}", CLASSIFY, proto, e) for e in encodings]
        http_requests = [(f"HTTP {name}{' gzip' * bool(e)}", CLASSIFY, json_body, e) for e in encodings]
        await send.grpc_calls(ctx, grpc_requests)
        await send.http_calls(ctx, http_requests)
        for label in {r[0] for r in grpc_requests + http_requests}:
            seconds = ctx.tally.seconds.get(label, [])
            if seconds:
                ctx.note(f"{label}: slowest answer {max(seconds):.2f} s")


ATTACK = Attack("parser amplification", "empty states, deep nesting, unknown fields, huge repeated cells", run)
