"""``boaf serve`` as a process: serves, logs JSON lines, and stops cleanly on SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import grpc
from grpc_health.v1 import health_pb2
from servers import READY_TIMEOUT_S, health_status

from service.generated.boaf.v1 import boaf_pb2 as pb
from service.generated.boaf.v1 import boaf_pb2_grpc


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def serving(channel: grpc.Channel) -> bool:
    try:
        return health_status(channel) == health_pb2.HealthCheckResponse.SERVING
    except grpc.RpcError:
        return False


def test_boaf_serve_answers_then_stops_on_sigterm_with_json_logs() -> None:
    port, metrics_port = free_port(), free_port()
    command = [sys.executable, "-c", "from service.cli import main; main()", "serve", "--port", str(port),
               "--metrics-port", str(metrics_port)]  # fmt: skip
    env = {**os.environ, "BOAF_SHUTDOWN_GRACE_S": "1", "BOAF_MAX_BATCH_SIZE": "7"}
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            give_up = time.monotonic() + READY_TIMEOUT_S
            while not serving(channel):
                assert process.poll() is None, process.stderr.read() if process.stderr else ""
                assert time.monotonic() < give_up, "boaf serve never became SERVING"
                time.sleep(0.1)
            info = boaf_pb2_grpc.BoafStub(channel).GetServerInfo(pb.GetServerInfoRequest(), timeout=10)
            assert info.limits.max_batch_size == 7  # settings came from the environment
        process.send_signal(signal.SIGTERM)
        assert process.wait(60) == 0
    finally:
        if process.poll() is None:
            process.kill()
    assert process.stderr is not None
    lines = [line for line in process.stderr.read().splitlines() if line.startswith("{")]
    messages = [json.loads(line)["message"] for line in lines]
    assert {"listening", "serving", "shutting down", "stopped"} <= set(messages)
