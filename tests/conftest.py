"""The whole suite's set-up: every numba kernel compiled once, in parallel, before the first test."""

from __future__ import annotations

import pytest

from boaf.service.kernels import UNITS, Kernels


@pytest.fixture(scope="session", autouse=True)
def compiled_kernels() -> None:
    """On a cold numba cache (a fresh clone, as CI has), compile every kernel unit first, two at a time.

    Without it the tests compile the kernels one after another, on one core, as they first call
    them. On a warm cache this only reads the cache index and loads the kernels (about a second).
    Tests of compiling itself use caches of their own (``tests/service/test_kernels.py``).
    """
    Kernels().prepare(UNITS, on_stage=lambda stage: None)
