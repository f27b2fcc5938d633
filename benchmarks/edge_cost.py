"""Where single-Classify throughput goes: boaf's edge, the classification, or gRPC itself.

Runs one in-process server at a time on a loopback port (the load generator in a
process of its own, ``calls.run_scenario``: Classify of one random state, 16 clients)
in three variants, ``--rounds`` times in turn:

- **full**: the server as it ships (``tests/servers.py``'s loopback settings with
  the default limits' concurrency);
- **no edge**: the admission gate (``boaf.service.grpc.interceptors.CallGate``) left out of the
  gRPC server, and Classify a plain function: the states read (``converters``),
  ``Classifier.classify_cells``, the answer built; no batch budget, alarm, cancel
  flag, metrics or tracing;
- **no work**: no gate, and Classify reads the states and returns a fixed answer.

Each row gives calls/s (median of the rounds) and its ratio to **full**: *no edge /
full* is the most that making boaf's own edge cost nothing could give, *no work / no
edge* what the classification itself costs.

``--parts`` runs, beside **full**, the full server with one part of its edge left out
at a time (``PARTS``): the work slot, the call place and the answer's hand-over, the
read and answer timeouts, the wire scan, the metrics, or the servicer's Classify
(budget, alarm, cancel flag, tracing: *plain Classify* puts ``plain_classify`` in its
place). A part whose variant is no faster than full within the rounds' spread costs
no more than the machine's noise. Each row also gives the variant's own
cost at 1 client as ``percall`` counts it: Classify's p50 minus a bare grpcio
server's health Check p50 (``percall.floor``) in the same round. The variants replace the servicer method
and leave the gate out in this process only; nothing here is how boaf serves.

    python benchmarks/edge_cost.py                 # 3 rounds of 5 s
    python benchmarks/edge_cost.py --rounds 5 --seconds 5
    python benchmarks/edge_cost.py --parts --rounds 3 --seconds 4
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

if not __package__:  # run as a script: its own folder is sys.path[0]; the repository's root imports it as benchmarks
    sys.path[0] = str(Path(__file__).resolve().parents[1])
sys.path.append(str(Path(__file__).resolve().parents[1] / "tests"))  # tests/servers.py: the in-process server

import grpc
import numpy as np
from servers import loopback_settings, ready_server

from benchmarks import calls, percall
from boaf.service.core.admission import Admission
from boaf.service.core.dataplane import CancelFlag
from boaf.service.core.metrics import Metrics
from boaf.service.grpc import interceptors
from boaf.service.grpc.servicer import BoafServicer
from boaf.service.rpc import converters
from boaf.v1 import boaf_pb2 as pb

CLIENTS = 16
FIXED = pb.ClassifyResponse(model_version="fixed", threshold=0.5, predictions=[pb.Prediction(p_solvable=1.0)])


def plain_classify(servicer: BoafServicer, request: pb.ClassifyRequest, context: Any) -> pb.ClassifyResponse:
    """Classify with nothing of the edge: read, classify, answer."""
    assert servicer.plane is not None
    model = servicer.plane.classifier
    states = converters.states_from_proto(request.states, CancelFlag())
    assert isinstance(states, converters.StateArray), "the load's states are one plain grid"
    answers = model.classify_cells(states.cells, states.rows, states.cols, cancel=np.zeros(1, dtype=np.int64))
    rows = zip(answers.p_solvable.tolist(), answers.exact.tolist(), answers.nodes.tolist(), strict=True)
    return pb.ClassifyResponse(
        model_version=model.version,
        threshold=model.threshold,
        predictions=[pb.Prediction(p_solvable=p, solvable=p >= model.threshold, exact=e, nodes=n) for p, e, n in rows],
    )


def fixed_classify(servicer: BoafServicer, request: pb.ClassifyRequest, context: Any) -> pb.ClassifyResponse:
    """Read the states, and answer the same every time."""
    converters.states_from_proto(request.states, CancelFlag())
    return FIXED


def _server_without_gate(pool: Any, *args: Any, interceptors: Any = None, **kwargs: Any) -> grpc.Server:
    return _GRPC_SERVER(pool, *args, **kwargs)


_GRPC_SERVER = grpc.server
VARIANTS: dict[str, tuple[Callable[..., pb.ClassifyResponse] | None, bool]] = {
    "full": (None, True),
    "no edge": (plain_classify, False),
    "no work": (fixed_classify, False),
}


@contextmanager
def _no_work_slot(admission: Admission, *args: Any, **kwargs: Any) -> Iterator[None]:
    yield


def _nothing_done(*args: Any, **kwargs: Any) -> None:
    return None


def _no_key(*args: Any, **kwargs: Any) -> int:
    return 0


# Each part of the edge ``--parts`` leaves out, as the attributes it replaces. mock.patch.object fails on an
# attribute that is not there, so a part renamed in service/ fails the run rather than measuring nothing.
PARTS: dict[str, list[tuple[object, str, object]]] = {
    "no work slot": [(Admission, "work_slot", _no_work_slot)],
    "no call place": [
        (Admission, "try_call", _nothing_done),
        (Admission, "end_call", _nothing_done),
        (Admission, "hand_over", _no_key),
        (Admission, "taken", _nothing_done),
    ],
    "no timeouts": [(interceptors.Timeouts, "arm", _no_key), (interceptors.Timeouts, "disarm", _nothing_done)],
    "no wire scan": [(interceptors, "wire_scan_of", _nothing_done)],
    "no metrics": [(Metrics, "record", _nothing_done), (Metrics, "count_answers", _nothing_done)],
    "plain Classify": [(BoafServicer, "Classify", plain_classify)],
}


@contextmanager
def variant(name: str) -> Iterator[str]:
    """A ready in-process server of the variant ``name`` (of ``VARIANTS`` or ``PARTS``); yields its gRPC address."""
    classify, gate = VARIANTS.get(name, (None, True))
    with ExitStack() as patches:
        for owner, attribute, replacement in PARTS.get(name, []):
            patches.enter_context(mock.patch.object(owner, attribute, replacement))
        if classify is not None:
            patches.enter_context(mock.patch.object(BoafServicer, "Classify", classify))
        if not gate:
            patches.enter_context(mock.patch("boaf.service.grpc.server.grpc.server", _server_without_gate))
        server = ready_server(loopback_settings(http_enabled=False, max_concurrent_rpcs=64, max_workers=16))
        try:
            yield f"127.0.0.1:{server.port}"
        finally:
            server.stop(0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the three variants (default 3)")
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds per variant per round (default 5)")
    parser.add_argument("--parts", action="store_true", help="full, and full with each part of the edge left out")
    options = parser.parse_args(argv)
    names = ["full", *PARTS] if options.parts else list(VARIANTS)
    rates: dict[str, list[float]] = {name: [] for name in names}
    own: dict[str, list[float]] = {name: [] for name in names}  # p50 at 1 client minus the floor's, ms
    with percall.floor() as floor:
        for _ in range(options.rounds):
            checks = calls.run_scenario(floor.address, ["health-check"], 1, options.seconds, 1)
            floor_p50 = float(np.median(checks.latencies)) * 1000
            for name in names:
                with variant(name) as address:
                    single = calls.run_scenario(address, ["classify-1"], 1, options.seconds, 1)
                    out = calls.run_scenario(address, ["classify-1"], CLIENTS, options.seconds, 1)
                if out.errors or single.errors:
                    raise SystemExit(f"{name}: errors {out.errors or single.errors}")
                rates[name].append(len(out.latencies) / options.seconds)
                own[name].append(float(np.median(single.latencies)) * 1000 - floor_p50)
    print(f"Classify of one state, {options.rounds} rounds of {options.seconds:g} s per figure")
    print(f"{'variant':<14} {'calls/s @' + str(CLIENTS):>12} {'rounds':>12} {'of full':>8} {'p50 - floor @1':>15}")
    full = statistics.median(rates["full"])
    for name, values in rates.items():
        median, spread = statistics.median(values), f"{min(values):.0f}-{max(values):.0f}"
        own_ms = statistics.median(own[name])
        print(f"{name:<14} {median:>12.0f} {spread:>12} {median / full:>7.2f}x {own_ms:>12.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
