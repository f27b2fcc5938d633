"""Run the ``boaf`` CLI as a real process, as a user would (shared by the CLI tests)."""

from __future__ import annotations

import subprocess
import sys


def boaf(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``boaf ARGS…`` in a fresh interpreter; never raises on a non-zero exit status."""
    return subprocess.run(
        [sys.executable, "-c", "from boaf.service.cli import main; main()", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )
