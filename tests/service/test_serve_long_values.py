"""``boaf serve`` given a 100,000-character setting: one short line naming it, exit status 2, at once.

The attack suite's control class found a 100,175-byte error line; each start-up error now
quotes a few dozen characters of a value, wherever the message was worded.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SERVE = [sys.executable, "-c", "from boaf.service.cli import main; main()", "serve"]
LONG = 100_000
LINE_CHARS = 300
QUIET = {"BOAF_PORT": "0", "BOAF_METRICS_PORT": "0", "BOAF_HTTP_ENABLED": "false", "BOAF_LOG_FORMAT": "json"}

CASES = [
    ("a number limit", {"BOAF_MAX_BATCH_SIZE": "9" * LONG}, [], "BOAF_MAX_BATCH_SIZE="),
    ("a duration", {"BOAF_MODEL_POLL_S": "9" * LONG}, [], "BOAF_MODEL_POLL_S="),
    ("a path", {"BOAF_API_TOKENS_FILE": "/x" * (LONG // 2)}, [], "BOAF_API_TOKENS_FILE="),
    ("a model directory", {"BOAF_MODEL_DIR": "x" * LONG}, [], "BOAF_MODEL_DIR="),
    ("a host", {"BOAF_HOST": "x" * LONG}, [], "BOAF_PORT=0: cannot listen on xxx"),
    ("the log format", {"BOAF_LOG_FORMAT": "x" * LONG}, [], "BOAF_LOG_FORMAT="),
    ("a flag", {}, ["--port", "9" * LONG], "--port="),
]  # fmt: skip


@pytest.mark.parametrize(("environment", "flags", "starts"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_long_value_gives_one_short_line(environment: dict[str, str], flags: list[str], starts: str) -> None:
    env = {**os.environ, **QUIET, **environment}
    ended = subprocess.run([*SERVE, *flags], env=env, capture_output=True, text=True, timeout=120)
    assert ended.returncode == 2, ended.stderr[-2000:]
    plain = [line for line in ended.stderr.splitlines() if not line.startswith("{")]
    assert len(plain) == 1, ended.stderr[-2000:]
    assert plain[0].startswith("boaf: " + starts), plain[0][:400]
    assert len(plain[0]) < LINE_CHARS, plain[0]
    assert max(map(len, ended.stderr.splitlines())) < 4096  # no log line quotes it whole either
