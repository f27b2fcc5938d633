"""Logs on stderr: one JSON object per line for machines, or a plain line for a person at a terminal.

``configure_logging`` chooses by ``LOG_FORMATS``: ``json``, ``text``, or ``auto``
(text when stderr is a terminal, JSON when it is not: a container, a file, a pipe).

JSON fields: ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message``, anything
passed in ``extra=``, and ``exception`` (the traceback) when there is one. A log
shipper can parse every line without a grammar. Fields meant for a terminal (uvicorn's
``color_message``, the message again with ANSI colour codes) are left out.

A text line is the local time, the level when it is not INFO, and the message;
warnings and errors add their ``extra=`` fields as ``key=value``.

The log cannot be flooded. ``configure_logging`` puts two guards on the one handler,
so they hold for every logger that reaches it (boaf's, uvicorn's, grpc's, asyncio's):

- ``Repeats`` passes at most one record of a kind (logger, level and message
  template) every ``REPEAT_EVERY_S``; the others are counted, and once the second is
  over one line says how many there were (the field ``suppressed``, and ``(N more
  like this suppressed)`` in text). A flood of one error is one line a second.
- Every line is at most ``MAX_LINE_BYTES`` of UTF-8, traceback included: the longest
  field is cut (its middle, marked ``CUT_MARK``) until the line fits, so a JSON line
  stays JSON. Cutting costs time linear in the field, never in its repeats.
"""

from __future__ import annotations

import copy
import json
import logging
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TextIO

# Attributes every LogRecord has; anything else on a record came from ``extra=``.
_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}
TERMINAL_ONLY = frozenset({"color_message"})
"""``extra=`` fields that only a terminal can show, never written to a JSON line."""

LOG_FORMATS = ("auto", "json", "text")
"""The log formats ``configure_logging`` takes (``BOAF_LOG_FORMAT``)."""

MAX_LINE_BYTES = 4096
"""The longest log line, in bytes of UTF-8 (a text record with a traceback counts as one line)."""
FIELD_CHARS = 1024  # a field (message, traceback, extra value) is first cut to this many characters
CUT_MARK = " [... {cut:,} characters cut ...] "
"""What replaces the middle of a field that was cut."""
SMALL_ITEMS = 64  # a list or mapping of at most this many items may stay one in a JSON line
MIN_CUT_CHARS = 96  # a field this short is not cut: half of it and CUT_MARK would be no shorter
REPEAT_EVERY_S = 1.0
"""At most one log line of a kind this often, in seconds."""
MAX_KINDS = 4096  # kinds of record remembered at once; past it, the quiet ones are forgotten
SUPPRESSED = "suppressed"
"""The field of a line that counts the records of its kind left out before it."""


def cut(text: str, chars: int) -> str:
    """``text`` cut to ``chars`` characters plus ``CUT_MARK``: its head and its tail, in time linear in ``chars``."""
    if len(text) <= chars:
        return text
    head = max(0, chars * 2 // 3)
    tail = max(0, chars - head)
    return text[:head] + CUT_MARK.format(cut=len(text) - head - tail) + (text[-tail:] if tail else "")


def _extra(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in vars(record).items() if k not in _STANDARD and k not in TERMINAL_ONLY}


def _field(value: Any) -> Any:
    # A number or a flag stays what it is, a small list or mapping too; anything else is its text, cut.
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, list | tuple | dict) and len(value) <= SMALL_ITEMS:
        text = json.dumps(value, default=str)
        return value if len(text) <= FIELD_CHARS else cut(text, FIELD_CHARS)
    return cut(value if isinstance(value, str) else str(value), FIELD_CHARS)


def _message(record: logging.LogRecord) -> str:
    try:
        return record.getMessage()
    except Exception as exc:  # a bad %-format must not lose the line (logging would print a traceback instead)
        return f"{record.msg!r} (unformattable: {type(exc).__name__})"


def fit(fields: dict[str, Any], render: Callable[[dict[str, Any]], str]) -> str:
    """``render(fields)``, with the longest text field cut in half until the line is at most ``MAX_LINE_BYTES``."""
    fields = {key: _field(value) for key, value in fields.items()}
    while len(line := render(fields).encode("utf-8", "replace")) > MAX_LINE_BYTES:
        texts = [(len(value), key) for key, value in fields.items() if isinstance(value, str)]
        longest, key = max(texts, default=(0, ""))
        if longest <= MIN_CUT_CHARS:  # too many fields: keep the first ones, and say so
            kept = dict(list(fields.items())[: max(1, len(fields) // 2)])
            fields = {**kept, "cut_fields": len(fields) - len(kept)}
            continue
        fields[key] = cut(fields[key], longest // 2)
    return line.decode("utf-8", "replace")


class JsonFormatter(logging.Formatter):
    """Formats a record as one line of JSON, at most ``MAX_LINE_BYTES``."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": _message(record),
        }
        entry.update(_extra(record))
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return fit(entry, lambda fields: json.dumps(fields, default=str))


class TextFormatter(logging.Formatter):
    """Formats a record as a line for a person: ``12:00:03 compiling kernels: 2 of 4 units done, 14 s``.

    At most ``MAX_LINE_BYTES``, traceback included.
    """

    def format(self, record: logging.LogRecord) -> str:
        when = datetime.fromtimestamp(record.created).strftime("%H:%M:%S")
        level = "" if record.levelno == logging.INFO else f" {record.levelname}"
        fields: dict[str, Any] = {"": f"{when}{level}", " ": _message(record)}
        extra = _extra(record)
        suppressed = extra.pop(SUPPRESSED, None)
        if record.levelno >= logging.WARNING:
            fields.update({f" {key}=": value for key, value in extra.items()})
        if suppressed:
            fields[" ("] = f"{suppressed:,} more like this suppressed)"
        if record.exc_info:
            fields["\n"] = self.formatException(record.exc_info)
        return fit(fields, lambda parts: "".join(f"{key}{value}" for key, value in parts.items()).lstrip())


@dataclass
class _Kind:
    last: float  # when the last line of this kind was written (monotonic seconds)
    suppressed: int = 0
    example: logging.LogRecord | None = None  # the last record left out


class Repeats(logging.Filter):
    """Passes at most one record of a kind every ``every_s`` seconds; says how many it left out (module notes).

    A kind is a record's logger, level and message template (``record.msg``): one call site with
    ``%`` arguments is one kind whatever its arguments. A line's ``suppressed`` counts the records
    of its kind left out before it: the next record of the kind carries it, or, when none comes
    once the kind's second is over, one thread writes the last record left out to ``handler``
    with the count of the others (without its traceback).
    """

    def __init__(self, handler: logging.Handler, every_s: float = REPEAT_EVERY_S) -> None:
        super().__init__()
        self.every_s = every_s
        self._handler = handler
        self._kinds: dict[tuple[str, int, str], _Kind] = {}
        self._waiting: set[tuple[str, int, str]] = set()  # kinds with records left out and not yet said
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, record.levelno, str(record.msg)[:FIELD_CHARS])
        now = time.monotonic()
        with self._wake:
            kind = self._kinds.get(key)
            if kind is None or now - kind.last >= self.every_s:
                self._pass(key, kind, record, now)
                return True
            kind.suppressed += 1
            kind.example = record
            if key not in self._waiting:
                self._waiting.add(key)
                self._start()
                self._wake.notify()
            return False

    def _pass(self, key: tuple[str, int, str], kind: _Kind | None, record: logging.LogRecord, now: float) -> None:
        if kind is not None and kind.suppressed:
            setattr(record, SUPPRESSED, kind.suppressed)  # the count rides on this line
        self._waiting.discard(key)
        if kind is None and len(self._kinds) >= MAX_KINDS:
            self._forget_quiet()
        self._kinds[key] = _Kind(last=now)

    def _forget_quiet(self) -> None:
        quiet = [key for key in self._kinds if key not in self._waiting]
        for key in quiet or list(self._kinds):
            del self._kinds[key]
            self._waiting.discard(key)

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._say_left_out, name="boaf-log-repeats", daemon=True)
            self._thread.start()

    def _say_left_out(self) -> None:
        while True:
            with self._wake:
                while not self._waiting:
                    self._wake.wait()
                now = time.monotonic()
                due = {key: self._kinds[key].last + self.every_s for key in self._waiting}
                lines = [self._left_out_line(key, now) for key, at in due.items() if at <= now]
                if not lines:
                    self._wake.wait(min(due.values()) - now)
            for line in lines:
                self._write(line)

    def _left_out_line(self, key: tuple[str, int, str], now: float) -> logging.LogRecord:
        kind = self._kinds[key]
        assert kind.example is not None
        line, others = copy.copy(kind.example), kind.suppressed - 1
        self._kinds[key] = _Kind(last=now)  # this line is its kind's line of a new second
        self._waiting.discard(key)
        line.exc_info, line.exc_text, line.stack_info = None, None, None
        if others:
            setattr(line, SUPPRESSED, others)
        return line

    def _write(self, line: logging.LogRecord) -> None:
        self._handler.acquire()  # what Handler.handle does after its filters
        try:
            self._handler.emit(line)
        finally:
            self._handler.release()


def formatter_for(log_format: str, stream: TextIO) -> logging.Formatter:
    """The formatter of ``log_format`` (one of ``LOG_FORMATS``) for lines written to ``stream``."""
    if log_format == "text" or (log_format == "auto" and stream.isatty()):
        return TextFormatter()
    return JsonFormatter()


def guarded_handler(stream: TextIO, log_format: str = "auto") -> logging.Handler:
    """A handler writing to ``stream`` in ``log_format``, with the flood guards of the module notes."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter_for(log_format, stream))
    handler.addFilter(Repeats(handler))
    return handler


def configure_logging(level: str, log_format: str = "auto") -> None:
    """Send every log record at ``level`` or above to stderr, in ``log_format`` (see ``LOG_FORMATS``), guarded."""
    root = logging.getLogger()
    root.handlers[:] = [guarded_handler(sys.stderr, log_format)]
    root.setLevel(level.upper())
