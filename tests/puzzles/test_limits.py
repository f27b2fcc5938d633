"""Deadlines and the cancel flag shared by analysis, estimation and generation."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

from boaf.puzzles import AnalysisStopped
from boaf.puzzles.limits import MIN_TIME_LIMIT_S, check_stop, deadline_after, seconds_left

RAISED, CLEAR = np.ones(1, dtype=np.int64), np.zeros(1, dtype=np.int64)


def test_no_limit_means_no_deadline() -> None:
    assert deadline_after(None) is None and deadline_after(0) is None and seconds_left(None) is None


def test_time_left_is_never_below_the_floor() -> None:
    assert seconds_left(time.perf_counter() - 5) == MIN_TIME_LIMIT_S
    left = seconds_left(deadline_after(60))
    assert left is not None and 59 < left <= 60


@pytest.mark.parametrize(
    ("deadline", "cancel", "kwargs", "match"),
    [
        (None, RAISED, {}, "^analysis cancelled$"),
        (-1.0, None, {}, "^time limit ran out while estimating$"),
        (None, RAISED, {"task": "generation", "doing": "generating"}, "^generation cancelled$"),
        (-1.0, CLEAR, {"task": "generation", "doing": "generating"}, "^time limit ran out while generating$"),
    ],
)
def test_stops_name_what_stopped(deadline: float | None, cancel: Any, kwargs: dict[str, str], match: str) -> None:
    with pytest.raises(AnalysisStopped, match=match):
        check_stop(deadline, cancel, **kwargs)


def test_no_stop_before_the_deadline_and_without_the_flag() -> None:
    check_stop(deadline_after(60), CLEAR)
    check_stop(None, None)
