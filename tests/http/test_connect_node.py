"""Connect's own Node client (``@connectrpc/connect-node``) against a live boaf: ``tests/connect-node``.

Its stubs are generated from ``proto/`` by ``@bufbuild/protoc-gen-es`` through ``@bufbuild/buf``
(``npm run generate``, here each time, so they are never stale), and its ``npm test`` calls every
RPC over Connect JSON, binary and GET and over gRPC, and checks that they agree, errors included.
Without ``tests/connect-node/node_modules`` (``npm ci`` there) the test is skipped, except in CI
(``CI`` set), where it fails.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from boaf.service.grpc.server import BoafServer
from boaf.service.http import HttpServer

NODE_DIR = Path(__file__).resolve().parents[1] / "connect-node"
NPM_TIMEOUT_S = 600


def npm(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["npm", *args], cwd=NODE_DIR, env=env, capture_output=True, text=True, timeout=NPM_TIMEOUT_S, check=False
    )


def require_node_modules() -> None:
    if (NODE_DIR / "node_modules").is_dir():
        return
    missing = f"{NODE_DIR / 'node_modules'} is missing: run `npm ci` there (.ci/run does)"
    if os.environ.get("CI"):
        pytest.fail(missing)
    pytest.skip(missing)


def test_the_connect_node_client_gets_grpcs_answers_over_json_binary_and_get(
    grpc_server: BoafServer, http_server: HttpServer
) -> None:
    require_node_modules()
    generated = npm("run", "generate")
    assert generated.returncode == 0, generated.stdout + generated.stderr
    env = {
        **os.environ,
        "BOAF_HTTP_URL": f"http://127.0.0.1:{http_server.port}",
        "BOAF_GRPC_URL": f"http://127.0.0.1:{grpc_server.port}",
    }
    result = npm("test", env=env)
    assert result.returncode == 0, result.stdout[-8000:] + result.stderr[-4000:]
    assert "# fail 0" in result.stdout and "# pass 0" not in result.stdout, result.stdout[-4000:]
