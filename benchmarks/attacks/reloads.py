"""A model root the suite owns, and reloads asked of a server that watches it.

``model_root`` copies the committed model into a root as its first version; ``reload_to`` writes
``CURRENT``, sends SIGHUP (the server looks at once) and waits for ``boaf_model_reloads_total``
on the metrics port to count an outcome, which it returns.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import time
import urllib.request
from pathlib import Path

from benchmarks import hostile
from boaf.models import registry

FIRST_VERSION = "v1"
RELOAD_OUTCOME = re.compile(rb'^boaf_model_reloads_total\{outcome="(\w+)"\} ([0-9.e+]+)$', re.MULTILINE)


def model_root(work_dir: Path, name: str = "models") -> Path:
    """A model root in ``work_dir``: the committed model copied in as ``FIRST_VERSION``, CURRENT naming it."""
    root = work_dir / name
    if not (root / FIRST_VERSION).is_dir():
        shutil.copytree(registry.default_root(), root / FIRST_VERSION, ignore=shutil.ignore_patterns("plots"))
    (root / registry.CURRENT_FILE).write_text(FIRST_VERSION + "\n")
    return root


def add_version(root: Path, name: str) -> Path:
    """A copy of ``FIRST_VERSION`` named ``name`` in ``root`` (made once)."""
    version = root / name
    if not version.is_dir():
        shutil.copytree(root / FIRST_VERSION, version)
    return version


def reload_outcomes(target: hostile.Target) -> dict[str, float]:
    """``boaf_model_reloads_total`` by outcome, from the metrics port (empty when it does not answer)."""
    try:
        with urllib.request.urlopen(f"http://{target.host}:{target.metrics_port}/metrics", timeout=5.0) as answer:
            text = answer.read()
    except OSError:
        return {}
    return {m[1].decode(): float(m[2]) for m in RELOAD_OUTCOME.finditer(text)}


async def reload_to(target: hostile.Target, root: Path, current: str, wait_s: float) -> list[str]:
    """Write ``current`` to ``root``'s CURRENT, SIGHUP, wait up to ``wait_s``: the outcomes counted meanwhile."""
    loop = asyncio.get_running_loop()
    before = await loop.run_in_executor(None, reload_outcomes, target)
    (root / registry.CURRENT_FILE).write_text(current + "\n")
    os.kill(target.pid or 0, signal.SIGHUP)
    after, deadline = before, time.perf_counter() + wait_s
    while after == before and time.perf_counter() < deadline:
        await asyncio.sleep(0.25)
        after = await loop.run_in_executor(None, reload_outcomes, target)
    return [outcome for outcome, n in after.items() if n > before.get(outcome, 0.0)]
