"""Where a running service is in its life: its ``Stage``, and the events its peers wait on.

A service goes through the stages in this order, each at most once:

    STARTING -> LOADING_KERNELS -> [COMPILING] -> LOADING_MODEL -> WARMING_UP -> SERVING

COMPILING only when numba's cache lacks a kernel (a first start). Any stage before
SERVING may end in FAILED instead: ``load_error`` says why, and ``failed_stage``
in which stage. A stop may come at any stage; it does not change the stage.

``Lifecycle`` is written by one thread, the loader of ``boaf.service.app.BoafService``,
and read by any: the edges ask ``is_ready`` (gRPC health, ``/readyz``), ``/readyz``
shows ``stage.value``, and a call that comes too early is told ``not_ready_reason()``.
Protocol-free: nothing here knows gRPC or HTTP.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from boaf.service.core.compile_log import COMPILING

NOT_LOADED = "the model is still loading"
"""What a call that needs the model is told before SERVING, unless kernels are compiling (``COMPILING``)."""


class Stage(enum.Enum):
    """What the service is doing; the value is what the log and ``/readyz`` say."""

    STARTING = "starting"
    LOADING_KERNELS = "loading kernels"
    COMPILING = COMPILING
    LOADING_MODEL = "loading the model"
    WARMING_UP = "warming up"
    SERVING = "serving"
    FAILED = "failed to start"


class Lifecycle:
    """The stage, the load error, and four events: ready, settled, background kernels settled, stopping.

    - *ready*: SERVING was reached;
    - *settled*: SERVING was reached, or loading failed, or a stop ended the loading (``wait_until_ready``);
    - *background kernels settled*: the kernels compiled after SERVING are loaded or failed to, or none will be;
    - *stopping*: ``begin_stop`` was called. It is set under the same lock as ``unless_stopping`` holds, so
      a step run under ``unless_stopping`` (a model swap) either ends before the stop begins or never runs.
    """

    def __init__(self) -> None:
        self.stage = Stage.STARTING
        self.load_error: BaseException | None = None
        self.failed_stage: Stage | None = None
        self._ready = threading.Event()
        self._settled = threading.Event()
        self._background_kernels = threading.Event()
        self._stopping = threading.Event()
        self._stop_lock = threading.Lock()

    def enter(self, stage: Stage) -> None:
        """Move on to ``stage`` (one before SERVING: ``serve`` and ``fail`` end the loading)."""
        self.stage = stage

    def serve(self) -> None:
        """SERVING: the model is loaded and warmed up."""
        self.stage = Stage.SERVING
        self._ready.set()
        self._settled.set()

    def fail(self, error: BaseException) -> None:
        """Loading failed in the current stage with ``error``: FAILED, and nothing more will load."""
        self.load_error = error
        self.failed_stage = self.stage
        self.stage = Stage.FAILED
        self._settled.set()
        self._background_kernels.set()

    def abandon_loading(self) -> None:
        """A stop came while loading: nothing more will load, and the stage stays where it was."""
        self._settled.set()
        self._background_kernels.set()

    def background_kernels_settled(self) -> None:
        """The kernels compiled after SERVING are loaded, or failed to."""
        self._background_kernels.set()

    def begin_stop(self) -> None:
        """The service is stopping: no step under ``unless_stopping`` starts from now on."""
        with self._stop_lock:
            self._stopping.set()

    @contextmanager
    def unless_stopping(self) -> Iterator[bool]:
        """Yields False once the stop has begun, else True, and holds the stop off until the block ends."""
        with self._stop_lock:
            yield not self._stopping.is_set()

    @property
    def stopping(self) -> bool:
        """True once ``begin_stop`` was called."""
        return self._stopping.is_set()

    @property
    def is_ready(self) -> bool:
        """True once SERVING was reached."""
        return self._ready.is_set()

    @property
    def failed_loading_the_model(self) -> bool:
        """True when loading failed while the model itself loaded (``BOAF_MODEL_DIR`` names no loadable model)."""
        return self.failed_stage is Stage.LOADING_MODEL

    def wait_until_ready(self, timeout: float | None = None) -> bool:
        """Block until settled (or ``timeout`` seconds); True when SERVING."""
        self._settled.wait(timeout)
        return self._ready.is_set()

    def wait_for_background_kernels(self, timeout: float | None = None) -> bool:
        """Block until the background kernels settled (or ``timeout`` seconds); True when they have."""
        return self._background_kernels.wait(timeout)

    def not_ready_reason(self) -> str:
        """What a call that needs the model is told before SERVING: ``COMPILING`` while kernels compile."""
        return COMPILING if self.stage is Stage.COMPILING else NOT_LOADED
