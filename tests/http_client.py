"""A small JSON-over-HTTP client for the HTTP edge's tests (urllib only), and ``boaf serve`` as a process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Answer:
    """An HTTP answer: status and the JSON body."""

    status: int
    body: Any


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

    def get(self, path: str) -> Answer:
        return self.send(urllib.request.Request(self.base + path))

    def call(self, method: str, body: Any = None, **options: Any) -> Answer:
        """``POST /boaf.v1.<method>``, e.g. ``call("Boaf/Classify", {...})``."""
        return self.post(f"/boaf.v1.{method}", body, **options)

    @staticmethod
    def send(request: urllib.request.Request) -> Answer:
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return Answer(response.status, _json(response.read()))
        except urllib.error.HTTPError as error:
            return Answer(error.code, _json(error.read()))


def _json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return data.decode("utf-8", "replace")


@contextmanager
def boaf_serve(*options: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """``boaf serve`` on free loopback ports (0 everywhere) until SERVING; yields the line it printed then."""
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
                yield line
                break
        else:
            raise AssertionError(f"boaf serve exited with {process.wait()} before serving: {''.join(said[-5:])}")
    finally:
        process.terminate()
        process.wait(30)
