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

``CURRENT`` is an input like any request (``read_current``): it names a version directly
inside the root, a single name of at most ``MAX_VERSION_BYTES`` bytes of UTF-8, not
``.`` or ``..``, with no ``/``, ``\\`` or NUL, not starting with ``.`` (the registry's
staging directories), and not a link out of the root. At most ``MAX_CURRENT_BYTES`` of
it are read, whatever its size. Anything else is refused before any load: counted in
``boaf_model_reload_refused_total{reason}`` (one of ``CURRENT_REASONS``) and logged with
at most ``QUOTE_CHARS`` characters of it, once per content of ``CURRENT`` (SIGHUP: again).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from boaf.models import registry
from boaf.models.errors import ModelError

log = logging.getLogger(__name__)

RELOADED = "reloaded"  # warmed up and swapped in
FAILED = "failed"  # loading or warm-up failed: the old model serves on
REFUSED = "refused"  # two models would not fit the memory limit
ABANDONED = "abandoned"  # the server stopped during the reload
OUTCOMES = (RELOADED, FAILED, REFUSED, ABANDONED)
STOP_WAIT_S = 5.0  # how long stopping waits for the watcher's thread (a warm-up takes well under a second)

MAX_VERSION_BYTES = 255
"""The longest version name ``CURRENT`` may give, in bytes of UTF-8 (a file name's limit on Linux)."""
MAX_CURRENT_BYTES = 256
"""The most of ``CURRENT`` ever read, in bytes: a name, a newline, nothing more."""
QUOTE_CHARS = 40
"""The most characters of a refused ``CURRENT`` that its log line quotes."""

TOO_LONG = "too_long"  # past MAX_CURRENT_BYTES, or a name past MAX_VERSION_BYTES
NOT_TEXT = "not_text"  # not UTF-8
NOT_A_NAME = "not_a_name"  # empty, ".", "..", a path ("/", "\\"), NUL or another control character, a hidden name
OUTSIDE_ROOT = "outside_root"  # a link that leads out of the model root
NOT_A_VERSION = "not_a_version"  # no such directory in the root
CURRENT_REASONS = (TOO_LONG, NOT_TEXT, NOT_A_NAME, OUTSIDE_ROOT, NOT_A_VERSION)


class CurrentRefused(ModelError):
    """``CURRENT`` does not name a version directly inside the model root; ``reason`` is one of ``CURRENT_REASONS``."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def quoted(text: str | bytes) -> str:
    """``text`` as ``repr`` quotes it, at most ``QUOTE_CHARS`` characters of it (then ``...`` and its length)."""
    head = text[:QUOTE_CHARS]
    return repr(head) + (f"... ({len(text):,} in all)" if len(text) > QUOTE_CHARS else "")


def read_current(root: Path) -> str:
    """The version ``root``'s ``CURRENT`` names, checked (module notes); raises ``CurrentRefused`` or ``OSError``.

    Reads at most ``MAX_CURRENT_BYTES + 1`` bytes of the file.
    """
    with (root / registry.CURRENT_FILE).open("rb") as pointer:
        raw = pointer.read(MAX_CURRENT_BYTES + 1)
    if len(raw) > MAX_CURRENT_BYTES:
        raise CurrentRefused(TOO_LONG, f"{registry.CURRENT_FILE} is over {MAX_CURRENT_BYTES} bytes: {quoted(raw)}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CurrentRefused(NOT_TEXT, f"{registry.CURRENT_FILE} is not UTF-8 text: {quoted(raw)}") from None
    return version_in(root, text.strip())


def version_in(root: Path, version: str) -> str:
    """``version`` when it names a version directory directly inside ``root``; else ``CurrentRefused``."""
    named = f"{registry.CURRENT_FILE} names"
    if len(version.encode("utf-8")) > MAX_VERSION_BYTES:
        raise CurrentRefused(TOO_LONG, f"{named} a version of more than {MAX_VERSION_BYTES} bytes: {quoted(version)}")
    if version in {"", ".", ".."} or version.startswith(".") or any(c in "/\\" or not c.isprintable() for c in version):
        raise CurrentRefused(NOT_A_NAME, f"{named} no version directly inside the model root: {quoted(version)}")
    directory = root / version
    if not directory.is_dir():
        raise CurrentRefused(NOT_A_VERSION, f"{named} {quoted(version)}, which is no directory in the model root")
    if directory.resolve().parent != root.resolve():
        raise CurrentRefused(OUTSIDE_ROOT, f"{named} {quoted(version)}, a link out of the model root")
    return version


def model_root(model_dir: Path | None) -> Path | None:
    """``model_dir`` when it is a model root (it holds ``CURRENT``), else None: there is nothing to watch."""
    if model_dir is None or not (model_dir / registry.CURRENT_FILE).is_file():
        return None
    return model_dir


class ModelWatcher:
    """Reads ``root``'s ``CURRENT`` every ``poll_s`` seconds (0: only when asked) and reloads a new version.

    ``served`` is the version directory's name being served; ``reload(version)`` loads, checks and
    swaps in that version and returns its outcome (one of ``OUTCOMES``). ``refused(reason)`` hears
    each refused ``CURRENT`` (module notes), once per content.
    """

    def __init__(
        self,
        root: Path,
        served: str,
        poll_s: float,
        reload: Callable[[str], str],
        *,
        refused: Callable[[str], object] = lambda reason: None,
    ) -> None:
        self.root = root
        self.served = served
        self.poll_s = poll_s
        self._reload = reload
        self._refused = refused
        self._tried = served  # the last version tried: one that failed waits for CURRENT to change
        self._refused_message = ""  # the last refusal: the same CURRENT is refused again in silence
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
            version = read_current(self.root)
        except OSError as exc:  # a volume briefly unreadable: look again next time
            log.warning("model watcher: cannot read %s (%s)", self.root / registry.CURRENT_FILE, exc.strerror or exc)
            return
        except CurrentRefused as exc:
            self._refuse(exc, retry)
            return
        self._refused_message = ""
        if version == self.served or (version == self._tried and not retry):
            return
        self._tried = version
        if self._reload(version) == RELOADED:
            self.served = version

    def _refuse(self, refusal: CurrentRefused, retry: bool) -> None:
        message = str(refusal)
        if message == self._refused_message and not retry:
            return
        self._refused_message = message
        self._refused(refusal.reason)
        log.warning(
            "model reload refused: %s; still serving %s",
            message,
            self.served,
            extra={"reason": refusal.reason},
        )
