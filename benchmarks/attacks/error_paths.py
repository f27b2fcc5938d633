"""Error paths: requests whose error messages would quote megabytes, and requests that log at a high rate.

- one huge cell: a state whose one cell is nearly the message limit long (repeated letters, random
  letters or many-byte characters, by seed), on both edges, 16 at once; the answer may quote a few
  dozen characters of it, and the cut must take time linear in what is quoted;
- a huge unknown JSON key, and a huge string where a number belongs, over HTTP;
- a warning storm: undecodable gRPC messages (random bytes, by seed) and malformed JSON bodies,
  hundreds a second, each of which the server may log.

The longest error message an answer carried is reported beside the log's growth and longest line.
"""

from __future__ import annotations

import json
import time

import numpy as np

from benchmarks import calls, hostile
from benchmarks.attacks import send
from benchmarks.attacks.harness import Attack, ClassRun, in_turn
from benchmarks.attacks.wire import CLASSIFY
from boaf.game import deal
from boaf.v1 import boaf_pb2 as pb

STORM_BATCH = 64  # requests in flight at once in the warning storm


def huge_text(rng: np.random.Generator, chars: int) -> tuple[str, str]:
    """(label, text) about ``chars`` characters long: repeated, random letters or 3-byte characters, by seed."""
    kind = int(rng.integers(3))
    if kind == 0:
        return "repeated letters", "X" * chars
    if kind == 1:
        return "random letters", "".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), chars))
    return "3-byte characters", "€" * (chars // 3)


async def huge_quotes(ctx: ClassRun) -> None:
    """A huge cell on both edges, a huge unknown JSON key, a huge string for a number; at once."""
    limit, at_once = ctx.limits.max_message_bytes, ctx.size(16, 4)
    what, text = huge_text(ctx.rng, ctx.size(limit - 4096, 256 * 1024))
    cells = [text, *hostile.deal_cells(5)[1:]]
    proto = pb.ClassifyRequest(states=[pb.State(rows=4, cols=4, cells=cells)]).SerializeToString()
    cell_json = json.dumps({"states": [{"rows": 4, "cols": 4, "cells": cells}]}).encode()
    state = calls.state_to_proto(deal(5))
    key_json = json.dumps({text: 1, "states": [{"rows": 4, "cols": 4, "cells": list(state.cells)}]}).encode()
    rows_json = json.dumps({"states": [{"rows": text, "cols": 4, "cells": list(state.cells)}]}).encode()
    ctx.note(f"huge quotes: {what}, {len(text):,} characters")
    await send.grpc_calls(ctx, [(f"gRPC one huge cell ({what})", CLASSIFY, proto, "")] * at_once)
    await send.http_calls(
        ctx,
        [(f"HTTP one huge cell ({what})", CLASSIFY, cell_json, "")] * at_once
        + [(f"HTTP huge unknown key ({what})", CLASSIFY, key_json, "")] * at_once
        + [(f"HTTP huge string for rows ({what})", CLASSIFY, rows_json, "")] * at_once,
    )


async def warning_storm(ctx: ClassRun) -> None:
    """Undecodable gRPC messages and malformed JSON bodies, ``STORM_BATCH`` at a time, for some seconds."""
    seconds = ctx.size(10, 2)
    stop_at = time.perf_counter() + seconds
    rng = ctx.rng
    while time.perf_counter() < stop_at:
        garbage = [bytes(rng.integers(0, 256, int(rng.integers(1, 200)), dtype=np.uint8)) for _ in range(STORM_BATCH)]
        await send.grpc_calls(ctx, [("gRPC undecodable message", CLASSIFY, g, "") for g in garbage])
        bodies = [b'{"states": [' + g.hex().encode() for g in garbage[: STORM_BATCH // 4]]
        await send.http_calls(ctx, [("HTTP malformed JSON", CLASSIFY, b, "") for b in bodies])
    sent = sum(ctx.tally.codes.get("gRPC undecodable message", {}).values())
    ctx.note(f"warning storm: {sent:,} undecodable gRPC messages in {seconds} s")


async def run(ctx: ClassRun) -> None:
    await in_turn(ctx, huge_quotes, warning_storm)


ATTACK = Attack("error paths", "huge quotes in error messages, a warning storm", run)
