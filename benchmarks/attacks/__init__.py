"""The attack suite of ``benchmarks/hostile.py``, by class: one module a class, each exposing ``ATTACK``.

``run_suite`` runs the named classes, in order, against one server (``boaf serve`` started here on
free loopback ports with the default limits, its log in a file, over a model root the suite owns;
or a running server), each class with its own seeded generator, and returns each class's figures
(``harness.ClassFigures``). ``harness`` says how a class is measured and judged.
"""

from __future__ import annotations

import resource
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import numpy as np

from benchmarks import calls, hostile
from benchmarks.attacks import compression, connection, control, error_paths, frames, harness, parser, reloads
from benchmarks.attacks.harness import Attack, ClassFigures, ClassRun, run_class
from boaf.v1 import boaf_pb2 as pb

ATTACKS: dict[str, Attack] = {
    "connection": connection.ATTACK,
    "frames": frames.ATTACK,
    "compression": compression.ATTACK,
    "parser": parser.ATTACK,
    "errors": error_paths.ATTACK,
    "control": control.ATTACK,
}
SETTLE_S, QUICK_SETTLE_S = 60.0, 15.0
MODEL_POLL_S = "1"  # the suite's own server looks at CURRENT every second: a repeated reload log shows at once


def raise_descriptor_limit() -> None:
    """The harness holds thousands of connections: its soft descriptor limit goes up to its hard one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


@contextmanager
def suite_server(work_dir: Path, target: hostile.Target | None) -> Iterator[tuple[hostile.Target, Path | None]]:
    """(the server, the model root it watches when the suite owns it): ``target``, or one started here."""
    if target is not None:
        yield target, None
        return
    root = reloads.model_root(work_dir)
    env = {"BOAF_MODEL_DIR": str(root), "BOAF_MODEL_POLL_S": MODEL_POLL_S}
    with calls.local_server(env, work_dir, boaf=harness.boaf_command()) as target:
        yield target, root


def server_limits(address: str) -> pb.Limits:
    """The server's limits, from GetServerInfo."""
    with grpc.insecure_channel(address) as channel:
        answer = channel.unary_unary("/boaf.v1.Boaf/GetServerInfo")(b"", timeout=hostile.SETUP_TIMEOUT_S)
    return pb.ServerInfo.FromString(answer).limits


def run_suite(
    names: list[str],
    seed: int,
    *,
    quick: bool,
    target: hostile.Target | None = None,
    work_dir: Path | None = None,
) -> tuple[hostile.Target, list[ClassFigures]]:
    """Run the classes ``names`` (keys of ``ATTACKS``) in order; the server and each class's figures."""
    raise_descriptor_limit()
    work_dir = work_dir or Path(tempfile.mkdtemp(prefix="boaf-attacks-"))
    results = []
    with suite_server(work_dir, target) as (target, root):
        limits = server_limits(target.grpc)
        waited = harness.wait_until_idle(target)
        for name in names:
            attack = ATTACKS[name]
            ctx = ClassRun(
                attack.name,
                target,
                np.random.default_rng([seed, list(ATTACKS).index(name)]),  # a class's draws do not depend on the others
                quick,
                work_dir,
                limits,
                model_root=root,
            )
            results.append(run_class(attack, ctx, QUICK_SETTLE_S if quick else SETTLE_S))
    results[0].notes.insert(0, f"the server was idle (background kernels ready, RSS steady) {waited:.0f} s after start")
    return target, results
