"""``boaf serve`` as a process: serves, logs JSON lines, stops cleanly on SIGTERM, and says in one line why it
cannot start (exit status 2 for a setting, 1 for an internal failure)."""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2
from servers import READY_TIMEOUT_S, health_status

from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc


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
    command = [sys.executable, "-c", "from boaf.service.cli import main; main()", "serve", "--port", str(port),
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


# ---------------------------------------------------------------- start-up errors

SERVE = [sys.executable, "-c", "from boaf.service.cli import main; main()", "serve"]
# An internal failure at start: the metrics server breaks as no setting could make it.
BROKEN_METRICS = (
    "import boaf.service.core.metrics as m\n"
    "def broken(*args, **kwargs):\n"
    "    raise RuntimeError('the metrics registry is broken')\n"
    "m.Metrics.serve = broken\n"
    "from boaf.service.cli import main; main()"
)


@pytest.fixture(scope="module")
def tls_pairs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two self-signed certificates with their keys: cert1.pem/key1.pem and cert2.pem/key2.pem."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make certificates")
    folder = tmp_path_factory.mktemp("tls")
    for n in (1, 2):
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
             "-keyout", str(folder / f"key{n}.pem"), "-out", str(folder / f"cert{n}.pem")],
            check=True, capture_output=True,
        )  # fmt: skip
    return folder


@pytest.fixture(scope="module")
def taken_port() -> Iterator[int]:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield int(holder.getsockname()[1])


def not_utf8(folder: Path) -> str:
    path = folder / "tokens.txt"
    path.write_bytes(b"token-\xff\xfe\n")
    return str(path)


# (what, environment given the TLS folder and a taken port, exit status, what the one line says)
START_ERRORS: list[tuple[str, Callable[[Path, int], dict[str, str]], int, str]] = [
    ("a value that does not parse", lambda d, p: {"BOAF_MAX_WORKERS": "many"}, 2, "BOAF_MAX_WORKERS='many': "),
    ("a TLS key of another certificate",
     lambda d, p: {"BOAF_TLS_CERT": f"{d}/cert1.pem", "BOAF_TLS_KEY": f"{d}/key2.pem"}, 2,
     "BOAF_TLS_KEY={d}/key2.pem: not a PEM private key of the certificate in BOAF_TLS_CERT={d}/cert1.pem"),
    ("a missing certificate", lambda d, p: {"BOAF_TLS_CERT": f"{d}/none.pem", "BOAF_TLS_KEY": f"{d}/key1.pem"}, 2,
     "BOAF_TLS_CERT={d}/none.pem: cannot read it (No such file or directory)"),
    ("a certificate that is no PEM", lambda d, p: {"BOAF_TLS_CERT": f"{d}/key1.pem", "BOAF_TLS_KEY": f"{d}/key1.pem"},
     2, "BOAF_TLS_KEY={d}/key1.pem: not a PEM private key of the certificate in BOAF_TLS_CERT={d}/key1.pem"),
    ("a gRPC port in use", lambda d, p: {"BOAF_PORT": str(p)}, 2,
     "BOAF_PORT={p}: cannot listen on 127.0.0.1:{p} (the port is taken"),
    ("a metrics port in use", lambda d, p: {"BOAF_METRICS_PORT": str(p)}, 2,
     "BOAF_METRICS_PORT={p}: cannot listen on 127.0.0.1:{p} (the port is taken"),
    ("an HTTP port in use", lambda d, p: {"BOAF_HTTP_ENABLED": "true", "BOAF_HTTP_PORT": str(p)}, 2,
     "BOAF_HTTP_PORT={p}: cannot listen on 127.0.0.1:{p} (the port is taken)"),
    ("no tokens file", lambda d, p: {"BOAF_API_TOKENS_FILE": f"{d}/none.txt"}, 2,
     "BOAF_API_TOKENS_FILE={d}/none.txt: no such file"),
    ("a tokens file that is not UTF-8", lambda d, p: {"BOAF_API_TOKENS_FILE": not_utf8(d)}, 2,
     "BOAF_API_TOKENS_FILE={d}/tokens.txt: cannot read it ("),
    ("a model directory without a model", lambda d, p: {"BOAF_MODEL_DIR": str(d)}, 2,
     "BOAF_MODEL_DIR={d}: model file {d}/classifier.onnx is missing"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("environment", "status", "says"), [e[1:] for e in START_ERRORS], ids=[e[0] for e in START_ERRORS]
)
def test_a_start_up_error_is_one_line_naming_the_setting(
    tls_pairs: Path, taken_port: int, environment: Callable[[Path, int], dict[str, str]], status: int, says: str
) -> None:
    settings = {"BOAF_PORT": "0", "BOAF_METRICS_PORT": "0", "BOAF_HTTP_ENABLED": "false"}
    settings.update(environment(tls_pairs, taken_port))
    ended = subprocess.run(SERVE, env={**os.environ, **settings}, capture_output=True, text=True, timeout=120)
    assert ended.returncode == status, ended.stderr
    assert_one_plain_line(ended.stderr, "boaf: " + says.format(d=tls_pairs, p=taken_port))


@pytest.mark.parametrize("flag", ["--port", "--metrics-port", "--http-port"])
def test_a_start_up_error_names_the_flag_that_set_the_value(taken_port: int, flag: str) -> None:
    settings = {"BOAF_PORT": "0", "BOAF_METRICS_PORT": "0", "BOAF_HTTP_PORT": "0", "BOAF_HTTP_ENABLED": "true"}
    command = [*SERVE, flag, str(taken_port)]
    ended = subprocess.run(command, env={**os.environ, **settings}, capture_output=True, text=True, timeout=120)
    assert ended.returncode == 2, ended.stderr
    assert_one_plain_line(ended.stderr, f"boaf: {flag}={taken_port}: cannot listen on 127.0.0.1:{taken_port} (")


def test_a_flag_out_of_range_is_named_too() -> None:
    ended = subprocess.run([*SERVE, "--port", "70000"], capture_output=True, text=True, timeout=120)
    assert (ended.returncode, ended.stderr) == (2, "boaf: --port=70000: a port is 0 … 65535\n")


def on_a_terminal(command: list[str], env: dict[str, str]) -> tuple[int, str]:
    """Run ``command`` with stderr on a pseudo-terminal: its exit status and what it wrote there."""
    main_end, terminal = pty.openpty()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=terminal)
    os.close(terminal)
    written = b""
    while True:
        try:
            chunk = os.read(main_end, 65536)
        except OSError:  # EIO: the process closed its end
            break
        if not chunk:
            break
        written += chunk
    os.close(main_end)
    return process.wait(120), written.decode().replace("\r\n", "\n")


@pytest.mark.parametrize(("log_format", "json_lines"), [("", False), ("json", True)], ids=["auto", "json asked"])
def test_on_a_terminal_the_log_is_plain_lines_unless_json_is_asked(
    tmp_path: Path, log_format: str, json_lines: bool
) -> None:
    settings = {"BOAF_PORT": "0", "BOAF_METRICS_PORT": "0", "BOAF_HTTP_ENABLED": "false"}
    settings |= {"BOAF_MODEL_DIR": str(tmp_path), "BOAF_LOG_FORMAT": log_format}  # a quick end: no model
    status, written = on_a_terminal(SERVE, {**os.environ, **settings})
    lines = written.splitlines()
    assert status == 2 and lines[-1].startswith(f"boaf: BOAF_MODEL_DIR={tmp_path}: model file"), written
    logged = lines[:-1]
    assert logged and all(line.startswith("{") == json_lines for line in logged if line[:1] in "{0123456789")
    assert "\x1b" not in written
    if not json_lines:
        assert any(re.fullmatch(r"\d\d:\d\d:\d\d listening", line) for line in logged), written


def test_an_internal_failure_at_start_is_one_line_and_exit_status_1() -> None:
    command = [sys.executable, "-c", BROKEN_METRICS, "serve"]
    settings = {"BOAF_PORT": "0", "BOAF_METRICS_PORT": "0", "BOAF_HTTP_ENABLED": "false"}
    ended = subprocess.run(command, env={**os.environ, **settings}, capture_output=True, text=True, timeout=120)
    assert ended.returncode == 1, ended.stderr
    assert_one_plain_line(
        ended.stderr, "boaf: the service could not start: RuntimeError: the metrics registry is broken"
    )
    logged = [json.loads(line) for line in ended.stderr.splitlines() if line.startswith("{")]
    assert any(entry["level"] == "ERROR" and "Traceback" in entry.get("exception", "") for entry in logged)


def assert_one_plain_line(stderr: str, starts: str) -> None:
    """Every line of ``stderr`` is JSON but one, which starts with ``starts``; no traceback, no gRPC core line."""
    plain = [line for line in stderr.splitlines() if not line.startswith("{")]
    assert len(plain) == 1, stderr
    assert plain[0].startswith(starts), plain[0]
    for line in stderr.splitlines():
        if line.startswith("{"):
            json.loads(line)
