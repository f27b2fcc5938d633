"""Checks of request arguments shared by every layer (imports nothing of boaf's).

Each check returns the value it accepted, converted, and raises the caller's
error type with a message naming the argument, in the manner of scikit-learn's
``check_scalar``.
"""

from __future__ import annotations

from typing import Any

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
"""The 32-bit signed range of deal seeds, as in Microsoft FreeCell."""


def check_positive_int(value: Any, name: str, *, error: type[Exception] = ValueError, kind: str = "integer") -> int:
    """``value`` as an ``int`` when it is an integer of at least 1 (``bool`` is not).

    Otherwise raises ``error("{name} must be a positive {kind}, got {value!r}")``;
    ``kind`` says what is counted, e.g. ``"number of states"``.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise error(f"{name} must be a positive {kind}, got {value!r}")
    return int(value)
