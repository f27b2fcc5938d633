"""Probe a running serving container from the host: health, one HTTP Classify, one gRPC Solve.

    python deploy/image/probe.py --grpc-port 18051 --http-port 18080 --started EPOCH_SECONDS [--within 10]

Waits for gRPC health (``boaf.v1.Boaf``) to be SERVING, failing if that takes more than
``--within`` seconds counted from ``--started`` (when the container was started); then
POSTs one Classify to http://127.0.0.1:HTTP_PORT/boaf.v1.Boaf/Classify (Connect's JSON
protocol, as the README's curl examples do) and makes one Solve over gRPC. Needs grpcio,
grpcio-health-checking and boaf-client's stubs (the repository's venv has them).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.request

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from boaf.game.notation import parse_state
from boaf.service.rpc.converters import state_to_proto
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc

README_GRID = "5S JC QH 8H/KC 6H 3H 9H/3S JS TH TS/KS 7D AH 5C"

# The README's Classify example, read by boaf's own parser (both scripts use it: no second copy of the cells).
CELLS = list(state_to_proto(parse_state(README_GRID)).cells)


def wait_serving(channel: grpc.Channel, started: float, within: float) -> float:
    health = health_pb2_grpc.HealthStub(channel)
    last = "no answer"
    while time.time() - started < within:
        try:
            status = health.Check(health_pb2.HealthCheckRequest(service="boaf.v1.Boaf"), timeout=1).status
            last = health_pb2.HealthCheckResponse.ServingStatus.Name(status)
            if status == health_pb2.HealthCheckResponse.SERVING:
                return time.time() - started
        except grpc.RpcError as exc:
            last = exc.code().name
        time.sleep(0.1)
    sys.exit(f"probe.py: not SERVING {within:.0f} s after the container started (last: {last})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--grpc-port", type=int, required=True)
    parser.add_argument("--http-port", type=int, required=True)
    parser.add_argument("--started", type=float, required=True, help="the container's start, in epoch seconds")
    parser.add_argument("--within", type=float, default=10.0)
    args = parser.parse_args()

    with grpc.insecure_channel(f"127.0.0.1:{args.grpc_port}") as channel:
        serving_s = wait_serving(channel, args.started, args.within)
        print(f"probe.py: gRPC health SERVING {serving_s:.1f} s after the container's start")

        body = json.dumps({"states": [{"rows": 4, "cols": 4, "cells": CELLS}]}).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{args.http_port}/boaf.v1.Boaf/Classify",
            data=body,
            headers={"Content-Type": "application/json", "Connect-Timeout-Ms": "10000"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=15) as response:
            answer = json.load(response)
        (prediction,) = answer["predictions"]
        if not 0 <= prediction["pSolvable"] <= 1 or not answer.get("modelVersion"):
            sys.exit(f"probe.py: HTTP Classify answered {answer}")
        print(f"probe.py: HTTP Classify: {json.dumps(answer)}")

        solved = boaf_pb2_grpc.BoafStub(channel).Solve(
            pb.SolveRequest(state=pb.State(rows=4, cols=4, cells=CELLS), time_limit_ms=10_000), timeout=15
        )
        if solved.status != pb.SOLVABLE or not solved.moves:
            sys.exit(f"probe.py: gRPC Solve answered {solved}")
        print(f"probe.py: gRPC Solve: SOLVABLE in {len(solved.moves)} moves, {solved.nodes} nodes")


if __name__ == "__main__":
    main()
