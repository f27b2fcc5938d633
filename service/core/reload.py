"""Model reload without downtime: a thread that watches the model root's ``CURRENT``.

When ``BOAF_MODEL_DIR`` is a model root (``boaf.models.registry``: versioned directories
and a ``CURRENT`` naming one), the server starts a ``ModelWatcher`` once it serves.
At once (``CURRENT`` may have changed while the model loaded), then every
``BOAF_MODEL_POLL_S`` seconds (0: never by itself), and whenever asked (``check_now``:
``boaf serve`` asks on SIGHUP), it reads ``CURRENT``; a version
other than the served one is handed to the server's reload (``BoafServer``), which:

1. refuses it when two models would not fit the memory limit
   (``boaf.service.core.memory.check_reload_fits``), since the old one serves meanwhile;
2. loads it and warms it up beside the served model, with the checks and time
   limit of the start's warm-up (``DataPlane.warm_up``);
3. swaps the servicers' data plane only when the warm-up passed. Calls in flight
   hold their own reference to the old plane and finish on it; the old model is
   freed when the last of them ends.

A version that failed or was refused is not tried again until ``CURRENT`` names
another one (or ``check_now`` asks: an operator who fixed it sends SIGHUP). One
thread does every reload, so there is never more than one at a time. Each ends
with an outcome, counted in ``boaf_model_reloads_total{outcome}`` and logged.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from boaf.models import registry

log = logging.getLogger(__name__)

RELOADED = "reloaded"  # warmed up and swapped in
FAILED = "failed"  # loading or warm-up failed: the old model serves on
REFUSED = "refused"  # two models would not fit the memory limit
ABANDONED = "abandoned"  # the server stopped during the reload
OUTCOMES = (RELOADED, FAILED, REFUSED, ABANDONED)
STOP_WAIT_S = 5.0  # how long stopping waits for the watcher's thread (a warm-up takes well under a second)


def model_root(model_dir: Path | None) -> Path | None:
    """``model_dir`` when it is a model root (it holds ``CURRENT``), else None: there is nothing to watch."""
    if model_dir is None or not (model_dir / registry.CURRENT_FILE).is_file():
        return None
    return model_dir


class ModelWatcher:
    """Reads ``root``'s ``CURRENT`` every ``poll_s`` seconds (0: only when asked) and reloads a new version.

    ``served`` is the version directory's name being served; ``reload(version)`` loads, checks and
    swaps in that version and returns its outcome (one of ``OUTCOMES``).
    """

    def __init__(self, root: Path, served: str, poll_s: float, reload: Callable[[str], str]) -> None:
        self.root = root
        self.served = served
        self.poll_s = poll_s
        self._reload = reload
        self._tried = served  # the last version tried: one that failed waits for CURRENT to change
        self._asked = threading.Event()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="boaf-model-watcher", daemon=True)

    def start(self) -> None:
        """Start watching, in a daemon thread."""
        self._thread.start()

    def check_now(self) -> None:
        """Read ``CURRENT`` now, and try again a version that failed (safe from a signal handler)."""
        self._asked.set()

    def stop(self) -> None:
        """Stop watching; a reload under way is abandoned before its swap (waits up to ``STOP_WAIT_S``)."""
        self._stopping.set()
        self._asked.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(STOP_WAIT_S)

    @property
    def stopping(self) -> bool:
        """True once ``stop`` was called."""
        return self._stopping.is_set()

    def _run(self) -> None:
        while not self._stopping.is_set():
            asked = self._asked.wait(self.poll_s or None)
            self._asked.clear()
            if self._stopping.is_set():
                return
            try:
                self._look(retry=asked)
            except Exception:  # the watcher must outlive any one failed look
                log.exception("model watcher: the look at %s failed", self.root / registry.CURRENT_FILE)

    def _look(self, retry: bool) -> None:
        try:
            version = registry.installed_version(self.root)
        except OSError as exc:  # a volume briefly unreadable: look again next time
            log.warning("model watcher: cannot read %s (%s)", self.root / registry.CURRENT_FILE, exc)
            return
        if not version or version == self.served or (version == self._tried and not retry):
            return
        self._tried = version
        if self._reload(version) == RELOADED:
            self.served = version
