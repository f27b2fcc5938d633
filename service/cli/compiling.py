"""The CLI's word on compiling: said once, on stderr, when a command compiles numba kernels.

In-process compiles are heard by a ``CompileRecorder`` around the command
(``boaf.service.cli.main``). Commands that run on Dask call ``compile_for_workers``
first: their workers would each compile in silence, so the kernels are compiled
once here (in a child process, into numba's cache), said once, and every worker
then loads them.
"""

from __future__ import annotations

import sys

COMPILING_NOTICE = "boaf: compiling kernels (first run only: numba caches them for later runs)..."


def say_compiling(_stage: str = "") -> None:
    """Print ``COMPILING_NOTICE`` on stderr."""
    print(COMPILING_NOTICE, file=sys.stderr, flush=True)


def compile_for_workers(*units: str) -> None:
    """Compile (once, here) the kernel units a Dask job's workers will run, saying so when they were not cached."""
    # Imported here for start-up time: the unit list imports every kernel module.
    from boaf.service.core.warmup import Kernels, unit_named

    Kernels().prepare([unit_named(name) for name in units], on_stage=say_compiling)
