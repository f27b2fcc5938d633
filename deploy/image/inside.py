"""The in-image check of deploy/image/check: run with the image's python, the script on stdin.

    podman run --rm -i --entrypoint python boaf:VERSION - serve < deploy/image/inside.py
    podman run --rm -i --entrypoint python boaf-batch:VERSION - batch < deploy/image/inside.py

Both: every entry of the numba cache (NUMBA_CACHE_DIR) is keyed on the CPU target of the
image's environment (NUMBA_CPU_NAME, NUMBA_CPU_FEATURES), not the build machine's CPU.
``serve``: every module of the serving packages imports, except BATCH_ONLY (the modules that
need the batch or train extras, which the serving image leaves out on purpose); then a server
starts in this process (the baked model, the baked numba cache) and every RPC of boaf.v1.Boaf
and boaf.v1.Game (read from the generated descriptors, so a new RPC without a call here fails)
is called once over gRPC and its answer checked. ``batch``: every module of every package,
jobs and BATCH_ONLY included, imports. A missing package, module or data file fails either.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import pkgutil
import sys
import time
from collections.abc import Callable
from importlib import metadata
from typing import Any

SERVING_PACKAGES = (
    "boaf.client",
    "boaf.v1",
    "boaf.game",
    "boaf.features",
    "boaf.search",
    "boaf.models",
    "boaf.puzzles",
    "boaf.service",
)
BATCH_PACKAGES = ("boaf.jobs",)

# The modules of the serving packages that need the batch/train extras (found by importing each one in
# the serving image): training, datasets, budget tuning and plots. The service never imports them.
BATCH_ONLY = frozenset(
    {
        "boaf.models.budget",  # matplotlib
        "boaf.models.datasets",  # pyarrow
        "boaf.models.hard",  # scikit-learn
        "boaf.models.ordering",  # scikit-learn (fitting the ordering model; search reads its JSON)
        "boaf.models.plots",  # matplotlib
        "boaf.models.residue",  # pyarrow (decision states come from models.datasets)
        "boaf.models.residue_model",  # lightgbm, matplotlib
        "boaf.models.retrain_steps",  # matplotlib, lightgbm
        "boaf.models.training",  # lightgbm
        "boaf.puzzles.plot",  # matplotlib
    }
)


# What only the batch and train extras bring: the serving image must not hold any of it (size, attack surface).
EXTRAS_ONLY = ("dask", "distributed", "pandas", "pyarrow", "matplotlib", "lightgbm", "scikit-learn", "scipy", "onnx")


def modules(packages: tuple[str, ...]) -> list[str]:
    found = []
    for name in packages:
        package = importlib.import_module(name)
        found.append(name)
        found.extend(m.name for m in pkgutil.walk_packages(package.__path__, name + "."))
    return sorted(found)


def import_all(names: list[str]) -> list[str]:
    failed = []
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:  # any failure is the finding
            failed.append(f"{name}: {type(exc).__name__}: {exc}")
    return failed


def check_imports(kind: str) -> None:
    if kind == "serve":
        present = []
        for dist in EXTRAS_ONLY:
            with contextlib.suppress(metadata.PackageNotFoundError):
                present.append(f"{dist} {metadata.version(dist)}")
        if present:
            sys.exit(f"inside.py: the serving image holds what only the batch/train extras need: {present}")
        everything = modules(SERVING_PACKAGES)
        wanted = [m for m in everything if m not in BATCH_ONLY]
        unknown = sorted(BATCH_ONLY - set(everything))
        if unknown:
            sys.exit(f"inside.py: BATCH_ONLY names modules that do not exist: {unknown}")
        failed = import_all(wanted)
        # Not an error, but the list should shrink when a module stops needing the extras.
        spare = [m for m in sorted(BATCH_ONLY) if not import_all([m])]
        if spare:
            print(f"inside.py: note: these BATCH_ONLY modules import without the extras: {spare}")
    else:
        wanted = modules(SERVING_PACKAGES + BATCH_PACKAGES)
        failed = import_all(wanted)
    if failed:
        sys.exit("inside.py: modules that do not import:\n  " + "\n  ".join(failed))
    print(f"inside.py: {len(wanted)} modules import ({kind} image)")


def check_cache_target() -> None:
    """Every entry of the baked numba cache is keyed on the portable CPU target of the image's environment."""
    cache = os.environ["NUMBA_CACHE_DIR"]
    target = [os.environ["NUMBA_CPU_NAME"].encode(), os.environ["NUMBA_CPU_FEATURES"].encode()]
    indexes = [os.path.join(d, f) for d, _, files in os.walk(cache) for f in files if f.endswith(".nbi")]
    if not indexes:
        sys.exit(f"inside.py: no numba cache index in {cache}")
    other = []
    for index in indexes:
        with open(index, "rb") as file:
            data = file.read()  # numba pickles (target triple, cpu name, features) into each index
        if not all(part in data for part in target):
            other.append(os.path.relpath(index, cache))
    if other:
        sys.exit(f"inside.py: cache entries compiled for another CPU target than {target}: {other}")
    print(f"inside.py: {len(indexes)} numba cache indexes, all for {target[0].decode()} {target[1].decode()}")


def check_rpcs() -> None:
    import grpc

    from boaf.game.notation import parse_state
    from boaf.service.app import BoafService
    from boaf.service.core.logs import configure_logging
    from boaf.service.core.settings import Settings
    from boaf.service.rpc.converters import state_to_proto
    from boaf.v1 import boaf_pb2 as pb
    from boaf.v1 import boaf_pb2_grpc, game_pb2, game_pb2_grpc

    configure_logging("INFO")
    logging.getLogger("boaf.service").setLevel(logging.INFO)
    deal_1 = state_to_proto(parse_state("5S JC QH 8H/KC 6H 3H 9H/3S JS TH TS/KS 7D AH 5C"))  # the README's Classify
    three = pb.State(rows=1, cols=3, cells=["AC", "2C", "3C"])

    def ok(condition: bool, what: str) -> None:
        if not condition:
            raise AssertionError(what)

    # method -> (request, check of the answer)
    boaf_calls: dict[str, tuple[Any, Callable[[Any], None]]] = {
        "Classify": (
            pb.ClassifyRequest(states=[deal_1]),
            lambda r: ok(
                len(r.predictions) == 1 and 0 <= r.predictions[0].p_solvable <= 1 and r.model_version, "a prediction"
            ),
        ),
        "Solve": (
            pb.SolveRequest(state=deal_1, time_limit_ms=10_000),
            lambda r: ok(r.status == pb.SOLVABLE and len(r.moves) == 15, f"solvable in 15 moves, got {r}"),
        ),
        "Features": (
            pb.FeaturesRequest(states=[deal_1]),
            lambda r: ok(len(r.vectors) == 1 and len(r.vectors[0].values) == len(r.names) > 0, "one feature vector"),
        ),
        "GetServerInfo": (
            pb.GetServerInfoRequest(),
            lambda r: ok(bool(r.version and r.model_version and r.feature_names), f"server info, got {r}"),
        ),
        "AnalyzePuzzle": (
            pb.AnalyzePuzzleRequest(state=three),
            lambda r: ok(r.exact and r.solvable and len(r.by_depth) == 3, f"AC 2C 3C analysed exactly, got {r}"),
        ),
        "GeneratePuzzle": (
            pb.GeneratePuzzleRequest(cards=4, seed=1),
            lambda r: ok(len([c for c in r.state.cells if c and c != "--"]) == 4, f"a 4-card puzzle, got {r}"),
        ),
    }
    game_calls: dict[str, tuple[Any, Callable[[Any], None]]] = {
        "Deal": (game_pb2.DealRequest(seed=1), lambda r: ok(len(r.cells) == 16, f"16 cells, got {r}")),
        "Play": (
            game_pb2.PlayRequest(state=deal_1),
            lambda r: ok(len(r.legal_moves) > 0 and not r.won, f"legal moves, got {r}"),
        ),
        "Hint": (
            game_pb2.HintRequest(state=deal_1),
            lambda r: ok(
                len(r.moves) > 0 and r.verdict == game_pb2.VERDICT_WINNABLE and bool(r.model_version),
                f"deal 1's moves, one of them winnable, got {r}",
            ),
        ),
    }
    services = {
        "Boaf": (pb.DESCRIPTOR.services_by_name["Boaf"], boaf_pb2_grpc.BoafStub, boaf_calls),
        "Game": (game_pb2.DESCRIPTOR.services_by_name["Game"], game_pb2_grpc.GameStub, game_calls),
    }
    for name, (descriptor, _, calls) in services.items():
        methods = {m.name for m in descriptor.methods}
        if methods != set(calls):
            sys.exit(f"inside.py: {name} has RPCs {sorted(methods)}, this script calls {sorted(calls)}: update it")

    started = time.perf_counter()
    server = BoafService(Settings.from_env(host="127.0.0.1", port=0, metrics_port=0, http_enabled=False))
    server.start()
    try:
        if not server.wait_until_ready(60):
            sys.exit(f"inside.py: the server did not become ready: {server.lifecycle.load_error}")
        if not server.wait_for_all_kernels(60):
            sys.exit("inside.py: the background (puzzle) kernels did not load")
        ready_s = time.perf_counter() - started
        failed = []
        with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            for descriptor, stub_class, calls in services.values():
                stub = stub_class(channel)
                for method, (request, check) in calls.items():
                    try:
                        check(getattr(stub, method)(request, timeout=30))
                        print(f"inside.py: {descriptor.full_name}/{method} ok")
                    except Exception as exc:
                        failed.append(f"{descriptor.full_name}/{method}: {type(exc).__name__}: {exc}")
        if failed:
            sys.exit("inside.py: RPCs that failed:\n  " + "\n  ".join(failed))
        print(f"inside.py: every RPC answered (server ready with all kernels in {ready_s:.1f} s)")
    finally:
        server.stop(0)


def main(argv: list[str]) -> None:
    kind = argv[0] if argv else "serve"
    if kind not in {"serve", "batch"}:
        sys.exit(__doc__)
    settings = {name: os.environ.get(name) for name in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES", "NUMBA_CACHE_DIR")}
    print("inside.py: " + " ".join(f"{name}={value}" for name, value in settings.items()))
    check_imports(kind)
    check_cache_target()
    if kind == "serve":
        check_rpcs()


if __name__ == "__main__":
    main(sys.argv[1:])
