"""Logs on stderr: one JSON object per line for machines, or a plain line for a person at a terminal.

``configure_logging`` chooses by ``LOG_FORMATS``: ``json``, ``text``, or ``auto``
(text when stderr is a terminal, JSON when it is not: a container, a file, a pipe).

JSON fields: ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message``, anything
passed in ``extra=``, and ``exception`` (the traceback) when there is one. A log
shipper can parse every line without a grammar. Fields meant for a terminal (uvicorn's
``color_message``, the message again with ANSI colour codes) are left out.

A text line is the local time, the level when it is not INFO, and the message;
warnings and errors add their ``extra=`` fields as ``key=value``.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any, TextIO

# Attributes every LogRecord has; anything else on a record came from ``extra=``.
_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}
TERMINAL_ONLY = frozenset({"color_message"})
"""``extra=`` fields that only a terminal can show, never written to a JSON line."""

LOG_FORMATS = ("auto", "json", "text")
"""The log formats ``configure_logging`` takes (``BOAF_LOG_FORMAT``)."""


def _extra(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in vars(record).items() if k not in _STANDARD and k not in TERMINAL_ONLY}


class JsonFormatter(logging.Formatter):
    """Formats a record as one line of JSON."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update(_extra(record))
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


class TextFormatter(logging.Formatter):
    """Formats a record as a line for a person: ``12:00:03 compiling kernels: 2 of 4 units done, 14 s``."""

    def format(self, record: logging.LogRecord) -> str:
        when = datetime.fromtimestamp(record.created).strftime("%H:%M:%S")
        level = "" if record.levelno == logging.INFO else f" {record.levelname}"
        line = f"{when}{level} {record.getMessage()}"
        if record.levelno >= logging.WARNING:
            line += "".join(f" {key}={value}" for key, value in _extra(record).items())
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def formatter_for(log_format: str, stream: TextIO) -> logging.Formatter:
    """The formatter of ``log_format`` (one of ``LOG_FORMATS``) for lines written to ``stream``."""
    if log_format == "text" or (log_format == "auto" and stream.isatty()):
        return TextFormatter()
    return JsonFormatter()


def configure_logging(level: str, log_format: str = "auto") -> None:
    """Send every log record at ``level`` or above to stderr, in ``log_format`` (see ``LOG_FORMATS``)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter_for(log_format, sys.stderr))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
