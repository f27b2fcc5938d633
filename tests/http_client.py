"""A small JSON-over-HTTP client for the HTTP edge's tests (urllib only), and ``boaf serve`` as a process."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Answer:
    """An HTTP answer: status, the JSON body (text when it is not JSON) and the headers (names in lower case)."""

    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict, compare=False)


class Client:
    """POSTs to ``base`` (``http://127.0.0.1:PORT``) and reads JSON back, whatever the status."""

    def __init__(self, base: str) -> None:
        self.base = base

    def post(
        self, path: str, body: Any = None, *, raw: bytes | None = None, headers: dict[str, str] | None = None
    ) -> Answer:
        data = raw if raw is not None else json.dumps({} if body is None else body).encode()
        sent = {"Content-Type": "application/json", **(headers or {})}
        return self.send(urllib.request.Request(self.base + path, data=data, headers=sent, method="POST"))

    def get(self, path: str, headers: dict[str, str] | None = None) -> Answer:
        return self.send(urllib.request.Request(self.base + path, headers=headers or {}))

    def request(self, method: str, path: str, headers: dict[str, str] | None = None) -> Answer:
        """Any method without a body (``OPTIONS`` for a CORS preflight, ``GET`` on an RPC route)."""
        return self.send(urllib.request.Request(self.base + path, headers=headers or {}, method=method))

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.base.removeprefix("http://").split(":")
        return host, int(port)

    def call(self, method: str, body: Any = None, **options: Any) -> Answer:
        """``POST /boaf.v1.<method>``, e.g. ``call("Boaf/Classify", {...})``."""
        return self.post(f"/boaf.v1.{method}", body, **options)

    @staticmethod
    def send(request: urllib.request.Request) -> Answer:
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return Answer(response.status, _json(response.read()), _lower(response.headers.items()))
        except urllib.error.HTTPError as error:
            return Answer(error.code, _json(error.read()), _lower(error.headers.items()))


def _lower(headers: Any) -> dict[str, str]:
    return {name.lower(): value for name, value in headers}


def raw_exchange(address: tuple[str, int], data: bytes, *, timeout: float = 30) -> tuple[bytes, bool]:
    """Send ``data`` (a request as bytes, complete or not) on a new connection and read until the server
    closes it or ``timeout`` seconds pass; returns what came back and whether the server closed the connection.
    """
    with socket.create_connection(address, timeout=timeout) as connection:
        connection.sendall(data)
        return read_until_closed(connection)


def read_until_closed(connection: socket.socket) -> tuple[bytes, bool]:
    """Everything the server sends until it closes (True) or the socket's timeout passes (False)."""
    received = b""
    try:
        while chunk := connection.recv(65536):
            received += chunk
    except TimeoutError:
        return received, False
    except ConnectionResetError:
        return received, True
    return received, True


def parse_answer(raw: bytes) -> Answer:
    """The first HTTP/1.1 answer in ``raw`` (Content-Length framed, as the edge answers)."""
    head, _, rest = raw.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = _lower(line.split(": ", 1) for line in lines)
    size = int(headers.get("content-length", len(rest)))
    return Answer(int(status_line.split()[1]), _json(rest[:size]), headers)


def _json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return data.decode("utf-8", "replace")


@contextmanager
def boaf_serve(*options: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """``boaf serve`` on free loopback ports (0 everywhere) until SERVING; yields the line it printed then."""
    with boaf_process(*options, env=env) as (_, line):
        yield line


@contextmanager
def boaf_process(*options: str, env: dict[str, str] | None = None) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``boaf_serve``, yielding the process too (the caller may signal it)."""
    command = [str(Path(sys.executable).with_name("boaf")), "serve", "--host", "127.0.0.1", "--port", "0"]
    command += ["--metrics-port", "0", "--http-port", "0", *options]
    variables = {**os.environ, "BOAF_LOG_LEVEL": "WARNING", **(env or {})}
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=variables)
    assert process.stderr is not None
    said: list[str] = []
    try:
        for line in process.stderr:
            said.append(line)
            if line.startswith("boaf: serving"):
                yield process, line
                break
        else:
            raise AssertionError(f"boaf serve exited with {process.wait()} before serving: {''.join(said[-5:])}")
    finally:
        process.terminate()
        process.wait(30)
