"""Hearing numba compile: which kernels it compiles (not loads from its cache), and for how long.

Light on purpose (numba only): the CLI installs a ``CompileRecorder`` around every
command to say once that it is compiling, and ``boaf.service.core.warmup`` logs each kernel.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from numba.core import event
from numba.core.dispatcher import LiftedCode

COMPILING = "compiling kernels (first start only)"
"""What the log, ``/readyz`` and UNAVAILABLE answers say while kernels compile."""


@dataclass
class Compiled:
    """One kernel numba compiled (not loaded): its qualified name and the seconds it took, callees included."""

    kernel: str
    seconds: float


@dataclass(frozen=True)
class CompileProgress:
    """How far the running compile has come: ``done`` of ``total`` units (groups of kernels compiled together)."""

    done: int
    total: int


class CompileRecorder:
    """Records the top-level kernels numba compiles while it is installed (``recording``)."""

    def __init__(self, on_compiled: Callable[[Compiled], None] | None = None) -> None:
        self.compiled: list[Compiled] = []
        self._on_compiled = on_compiled
        self._stack: list[tuple[str, float]] = []

    @contextmanager
    def recording(self) -> Iterator[CompileRecorder]:
        listener = _Listener(self)
        event.register("numba:compile", listener)  # type: ignore[no-untyped-call]  # numba is untyped
        try:
            yield self
        finally:
            event.unregister("numba:compile", listener)  # type: ignore[no-untyped-call]

    def start(self, name: str) -> None:
        self._stack.append((name, time.perf_counter()))

    def end(self) -> None:
        name, started = self._stack.pop()
        if not self._stack:  # a callee's time is in its caller's
            compiled = Compiled(name, time.perf_counter() - started)
            self.compiled.append(compiled)
            if self._on_compiled is not None:
                self._on_compiled(compiled)


class _Listener(event.Listener):
    def __init__(self, recorder: CompileRecorder) -> None:
        super().__init__()
        self.recorder = recorder

    # Object-mode blocks (``now_s``'s clock) are lifted code that numba builds afresh in every process, at
    # their first run, in well under 0.1 s and without LLVM: not a kernel compile, and never cached.
    def on_start(self, ev: Any) -> None:
        dispatcher = ev.data["dispatcher"]
        if not isinstance(dispatcher, LiftedCode):
            func = dispatcher.py_func
            self.recorder.start(f"{func.__module__}.{func.__qualname__}")

    def on_end(self, ev: Any) -> None:
        if not isinstance(ev.data["dispatcher"], LiftedCode):
            self.recorder.end()
