"""The shared argument checks of ``boaf.game.validation``."""

from __future__ import annotations

from typing import Any

import pytest

from boaf.game.errors import InvalidState
from boaf.game.validation import check_positive_int


@pytest.mark.parametrize("value", [1, 7, 10**12])
def test_positive_int_returns_the_value(value: int) -> None:
    assert check_positive_int(value, "count") == value


@pytest.mark.parametrize(
    ("value", "kwargs", "error", "match"),
    [
        (0, {}, ValueError, "^count must be a positive integer, got 0$"),
        (-3, {}, ValueError, "^count must be a positive integer, got -3$"),
        (True, {}, ValueError, "^count must be a positive integer, got True$"),
        (2.0, {}, ValueError, "^count must be a positive integer, got 2.0$"),
        ("5", {}, ValueError, "^count must be a positive integer, got '5'$"),
        (None, {"error": InvalidState}, InvalidState, "got None$"),
        (0, {"kind": "number of states"}, ValueError, "^count must be a positive number of states, got 0$"),
    ],
)
def test_positive_int_names_the_bad_input(
    value: Any, kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        check_positive_int(value, "count", **kwargs)
