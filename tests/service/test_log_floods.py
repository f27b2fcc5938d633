"""The log cannot be flooded: a repeated record is one line a second with a count, and no line passes 4 KB."""

from __future__ import annotations

import io
import json
import logging
import threading
import time
from collections.abc import Iterator

import pytest

from boaf.service.core.logs import MAX_LINE_BYTES, SUPPRESSED, guarded_handler


@pytest.fixture(params=["json", "text"])
def logged(request: pytest.FixtureRequest) -> Iterator[tuple[logging.Logger, io.StringIO, str]]:
    """A logger whose only handler is the service's guarded one, writing to a string."""
    stream = io.StringIO()
    logger = logging.getLogger(f"boaf.test_log_floods.{request.param}")
    logger.handlers[:] = [guarded_handler(stream, request.param)]
    logger.propagate = False
    logger.setLevel(logging.INFO)
    yield logger, stream, request.param
    logger.handlers.clear()


def lines(stream: io.StringIO, log_format: str) -> list[str]:
    text = stream.getvalue()
    if log_format == "json":
        return text.splitlines()
    return [line for line in text.split("\n") if line]  # a text traceback's lines belong to its record


def test_a_hundred_thousand_identical_warnings_are_a_few_lines_with_their_count(
    logged: tuple[logging.Logger, io.StringIO, str],
) -> None:
    logger, stream, log_format = logged
    started = time.monotonic()
    for peer in range(100_000):
        logger.warning("accept failed for %s: too many open files", f"10.0.0.{peer % 250}:{peer}")
    assert time.monotonic() - started < 10  # a left-out record costs a dictionary look-up
    time.sleep(1.5)  # the kind's second ends: its count is written
    written = lines(stream, log_format)
    assert 2 <= len(written) <= 12, written
    if log_format == "json":
        # Each line counts the records of its kind left out before it: every record is accounted for.
        assert sum(1 + json.loads(line).get(SUPPRESSED, 0) for line in written) == 100_000
    else:
        assert "more like this suppressed" in written[-1]


def test_kinds_are_limited_apart(logged: tuple[logging.Logger, io.StringIO, str]) -> None:
    logger, stream, log_format = logged
    for _ in range(1000):
        logger.warning("reload failed: %s", "x")
        logger.error("accept failed: %s", "y")
        logger.info("a client went away")
    assert len(lines(stream, log_format)) == 3


@pytest.mark.parametrize("where", ["message", "argument", "extra", "exception"])
def test_a_20_mib_text_yields_lines_of_at_most_4_kb(
    logged: tuple[logging.Logger, io.StringIO, str], where: str
) -> None:
    logger, stream, log_format = logged
    huge = "\u00e9\u4e2d" * (10 * 1024 * 1024)  # 20 Mi characters, 50 MiB of UTF-8; every one escaped in JSON
    started = time.monotonic()
    if where == "message":
        logger.warning(huge)
    elif where == "argument":
        logger.warning("CURRENT names %s", huge)
    elif where == "extra":
        logger.warning("a bad request", extra={"error": huge, "peer": huge})
    else:
        try:
            raise ValueError(huge)
        except ValueError:
            logger.exception("a call failed")
    assert time.monotonic() - started < 5
    written = stream.getvalue()
    assert 0 < len(written.encode()) <= MAX_LINE_BYTES + 1, len(written.encode())  # + its newline
    assert "characters cut" in written
    if log_format == "json":
        entry = json.loads(written)  # still one JSON object
        assert entry["level"] == "WARNING" if where != "exception" else "ERROR"


def test_many_long_extra_fields_still_fit(logged: tuple[logging.Logger, io.StringIO, str]) -> None:
    logger, stream, log_format = logged
    logger.warning("fields", extra={f"field_{i}": "v" * 200 for i in range(400)})
    written = stream.getvalue()
    assert len(written.encode()) <= MAX_LINE_BYTES + 1
    if log_format == "json":
        assert json.loads(written)["message"] == "fields"


def test_the_service_set_up_guards_every_logger() -> None:
    from boaf.service.core.logs import Repeats, configure_logging

    root = logging.getLogger()
    saved = root.handlers[:], root.level
    try:
        configure_logging("INFO", "json")
        (handler,) = root.handlers
        assert any(isinstance(f, Repeats) for f in handler.filters)  # uvicorn's, grpc's and asyncio's propagate here
    finally:
        root.handlers[:], _ = saved
        root.setLevel(saved[1])


def test_many_kinds_left_out_at_once_are_said_by_one_thread(logged: tuple[logging.Logger, io.StringIO, str]) -> None:
    logger, stream, log_format = logged
    threads = threading.active_count()
    for kind in range(500):
        for _ in range(3):
            logger.warning(f"kind {kind}: %s", "x")  # 500 kinds, each with two records left out
    assert threading.active_count() <= threads + 1
    time.sleep(1.5)
    assert len(lines(stream, log_format)) == 1000  # each kind: its first line, then one for the two left out


def test_a_small_list_field_stays_a_list() -> None:
    stream = io.StringIO()
    logger = logging.getLogger("boaf.test_log_floods.list")
    logger.handlers[:] = [guarded_handler(stream, "json")]
    logger.propagate = False
    try:
        logger.warning("ready", extra={"units": ["best_n", "puzzles"], "sizes": {"rows": 4}})
    finally:
        logger.handlers.clear()
    entry = json.loads(stream.getvalue())
    assert entry["units"] == ["best_n", "puzzles"] and entry["sizes"] == {"rows": 4}
