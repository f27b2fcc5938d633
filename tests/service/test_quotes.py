"""The quote cutter: every message quotes at most ``QUOTE_PREFIX`` characters of its input, cut in
time linear in what is quoted, with work counted (lines run, bytes allocated), never timed.
"""

from __future__ import annotations

import sys
import tracemalloc
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest

import boaf.service.core.admission as admission
from boaf.game import parse_card
from boaf.game.errors import QUOTE_CHARS, InvalidCard, quote
from boaf.service.core.admission import MESSAGE_END_CHARS, QUOTE_PREFIX, cut_quotes, quoted

MIB = 1 << 20
X40 = "X" * QUOTE_PREFIX

CUTS = [
    # (message, what cut_quotes makes of it)
    ("unknown card 'ZZ'", "unknown card 'ZZ'"),
    (f"unknown card '{'X' * 47}'", f"unknown card '{'X' * 47}'"),  # a few characters past the prefix stay
    (f"unknown card '{'X' * 48}': expected", f"unknown card '{X40}…': expected"),
    (f'no field named "{"K" * 100}" at "ClassifyRequest"', f'no field named "{"K" * 40}…" at "ClassifyRequest"'),
    (f"the server's '{'Y' * 60}'", f"the server's '{'Y' * 40}…'"),  # an apostrophe opens no quote
    (f"a \"b '{'c' * 60}' d", f"a \"b '{'c' * 40}…' d"),  # a mark never closed opens nothing
    ("lone \ud800 surrogate", "lone \\ud800 surrogate"),  # always encodes as UTF-8
]


@pytest.mark.parametrize(("message", "cut"), CUTS)
def test_long_quotes_are_cut_to_a_prefix(message: str, cut: str) -> None:
    assert cut_quotes(message) == cut
    assert cut_quotes(cut) == cut  # cutting again changes nothing


HUGE = [
    # (a message quoting 4 MiB of input, how it starts once cut)
    (f"unknown card '{'X' * 4 * MIB}': expected a rank", f"unknown card '{X40}…'"),
    (f'no field named "{"K" * 4 * MIB}" at "Request".', f'no field named "{"K" * 40}…'),
    ("'" * 4 * MIB, "''"),
    ("x" * 4 * MIB, "x" * MESSAGE_END_CHARS + "…"),
    (f"never closed '{'Z' * 4 * MIB}", f"never closed '{'Z' * (MESSAGE_END_CHARS - 14)}…"),
    ("'\ud800" * 2 * MIB, "'\\ud800'"),
]


@pytest.mark.parametrize(("message", "start"), HUGE, ids=["cell", "key", "marks", "no quote", "unclosed", "surrogates"])
def test_a_message_quoting_4_mib_comes_back_short(message: str, start: str) -> None:
    cut = cut_quotes(message)
    assert cut.startswith(start)
    assert len(cut) <= 6 * (2 * MESSAGE_END_CHARS + 1)  # its two ends, each character escaped at most as \udXXX


def test_the_quoted_part_is_at_most_the_prefix() -> None:
    cut = cut_quotes(f"unknown card '{'X' * 4 * MIB}': expected a rank of A23456789TJQK")
    assert cut == f"unknown card '{X40}…': expected a rank of A23456789TJQK"


def test_cutting_4_mib_allocates_only_the_two_ends() -> None:
    message = f"unknown card '{'X' * 4 * MIB}': expected"
    tracemalloc.start()
    try:
        cut_quotes(message)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024  # bytes; the regex it replaced held ~100 bytes a character quoted


def lines_run(function: Callable[[], Any], module: str) -> int:
    """How many lines of ``module``'s code ``function()`` runs (its loops' iterations included)."""
    count = 0

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if frame.f_globals.get("__name__") != module:
            return None
        if event == "line":
            count += 1
        return trace

    sys.settrace(trace)
    try:
        function()
    finally:
        sys.settrace(None)
    return count


@pytest.mark.parametrize(
    "make",
    [
        lambda n: f"unknown card '{'X' * n}': expected",
        lambda n: "'" * n,
        lambda n: "'a" * (n // 2),
        lambda n: "s'" * (n // 2),  # every mark after a word character: none opens a quote
        lambda n: "x" * n,
    ],
    ids=["one quote", "marks", "short quotes", "apostrophes", "no quote"],
)
def test_the_work_is_bounded_whatever_the_length(make: Callable[[int], str]) -> None:
    # Past 2 * MESSAGE_END_CHARS characters the lines run stop growing: the length costs two slices.
    messages = [make(n) for n in (1024, 64 * 1024, 4 * MIB)]
    runs = [lines_run(lambda m=message: cut_quotes(m), admission.__name__) for message in messages]
    assert runs[0] == runs[1] == runs[2]
    assert runs[2] < 12 * (2 * MESSAGE_END_CHARS + 1)  # a few lines a character of the two ends


def test_the_work_grows_linearly_below_the_cut() -> None:
    messages = ["'a" * n for n in (25, 50, 100)]
    runs = [lines_run(lambda m=message: cut_quotes(m), admission.__name__) for message in messages]
    assert runs[1] - runs[0] == pytest.approx((runs[2] - runs[1]) / 2, rel=0.1)


def test_quoted_cuts_before_it_formats() -> None:
    assert quoted("X" * 4 * MIB) == f"'{X40}…'"
    assert quoted("ab") == "'ab'"
    assert len(quoted("\x00" * 4 * MIB)) <= QUOTE_PREFIX + 3  # its repr is cut again
    assert quote("Y" * 4 * MIB) == f"'{'Y' * QUOTE_CHARS}…'"


def test_a_huge_card_is_quoted_short() -> None:
    with pytest.raises(InvalidCard) as caught:
        parse_card("Q" * 4 * MIB)
    assert str(caught.value).startswith(f"unknown card '{'Q' * QUOTE_CHARS}…': expected")
    assert len(str(caught.value)) < 120
