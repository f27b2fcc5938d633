"""Log lines: JSON for machines (no terminal-only fields), plain lines for a person at a terminal."""

from __future__ import annotations

import io
import json
import logging

import pytest

from boaf.service.core.logs import JsonFormatter, TextFormatter, formatter_for


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("log_format", "stream", "kind"),
    [
        ("auto", Terminal(), TextFormatter),
        ("auto", io.StringIO(), JsonFormatter),  # a container, a file, a pipe
        ("json", Terminal(), JsonFormatter),  # asked for
        ("text", io.StringIO(), TextFormatter),
    ],
)
def test_the_format_follows_the_setting_and_the_terminal(
    log_format: str, stream: io.StringIO, kind: type[logging.Formatter]
) -> None:
    assert type(formatter_for(log_format, stream)) is kind


def record(level: int, message: str, **extra: object) -> logging.LogRecord:
    entry = logging.makeLogRecord({"name": "uvicorn.error", "levelno": level, "msg": message, **extra})
    entry.levelname = logging.getLevelName(level)
    return entry


def test_a_json_line_has_no_terminal_colour_codes() -> None:
    line = JsonFormatter().format(record(logging.INFO, "Started", color_message="\x1b[32mStarted\x1b[0m", port=8080))
    entry = json.loads(line)
    assert "color_message" not in entry and "\x1b" not in line
    assert (entry["message"], entry["port"], entry["level"]) == ("Started", 8080, "INFO")


def test_a_text_line_is_time_and_message_with_a_warning_s_fields() -> None:
    info = TextFormatter().format(record(logging.INFO, "compiling kernels: 1 of 4 units done, 12 s", units=4))
    assert info.split(" ", 1)[1] == "compiling kernels: 1 of 4 units done, 12 s"
    warning = TextFormatter().format(record(logging.WARNING, "a kernel compile process failed", unit="search"))
    assert warning.split(" ", 1)[1] == "WARNING a kernel compile process failed unit=search"
    assert "color_message" not in TextFormatter().format(record(logging.ERROR, "x", color_message="\x1b[31mx"))
