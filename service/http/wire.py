"""Messages to and from JSON on the HTTP edge: strict parsing, and encoding that a call's end can stop.

Parsing is RFC 8259 JSON (no ``NaN`` or ``Infinity``, no number too large for a
float) in the proto3 JSON mapping; anything else is ``CallAborted`` with
INVALID_ARGUMENT and a message that may quote the input, cut and escaped by
``service.admission``, so it always encodes. Encoding writes the large repeated
fields of an answer (10,000 predictions or feature vectors) in chunks, and
between chunks stops a call that has ended (client gone, deadline passed,
server stopping) with ``Cancelled`` or ``DeadlineExceeded``.
"""

from __future__ import annotations

import json
from typing import Any, NoReturn

import grpc
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from service.admission import cut_quotes, quoted
from service.errors import Cancelled, DeadlineExceeded
from service.http.context import CallAborted, CallContext

ENCODE_CHUNK = 500  # elements of a repeated field encoded between two checks of the call's state


def _invalid(message: str) -> CallAborted:
    """The body is not the method's request message in JSON: INVALID_ARGUMENT with ``message``."""
    return CallAborted(grpc.StatusCode.INVALID_ARGUMENT, message)


def parse_request(body: bytes, message: Message) -> Message:
    """``message`` filled from ``body``, a JSON object in the proto3 JSON mapping (empty: ``{}``).

    Unknown fields and wrong types are errors that name the field.
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _invalid(f"request body is not UTF-8: byte {exc.start}") from None
    try:
        value = json.loads(text.strip() or "{}", parse_constant=_not_json, parse_float=_finite)
    except (ValueError, RecursionError) as exc:
        raise _invalid(cut_quotes(f"request body is not JSON: {exc}")) from None
    if not isinstance(value, dict):
        raise _invalid(f"request body must be a JSON object, got {_json_type(value)}")
    if "\\u" in text and not _is_unicode(value):
        raise _invalid("request body: a string holds a lone surrogate (a \\uD800-\\uDFFF escape not in a pair)")
    try:
        return json_format.ParseDict(value, message)
    except (json_format.ParseError, RecursionError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise _invalid(cut_quotes(f"request body: {reason}")) from None


def _not_json(constant: str) -> NoReturn:
    # json.loads accepts NaN, Infinity and -Infinity; JSON (and so the proto3 mapping) does not.
    raise ValueError(f"{constant} is not a JSON number")


def _finite(text: str) -> float:
    number = float(text)
    if number in (float("inf"), float("-inf")):
        raise ValueError(f"the number {quoted(text)} is too large")
    return number


def _is_unicode(value: Any) -> bool:
    # Only a \\u escape makes a lone surrogate (the body decoded as UTF-8); encoding finds one anywhere, in C.
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _json_type(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(type(value), "a number")


def encode_answer(answer: Message, context: CallContext) -> bytes:
    """``answer`` as proto3 JSON (every field, defaults included), UTF-8.

    Between chunks of ``ENCODE_CHUNK`` elements of a large repeated message
    field, a call no longer active ends the encoding with ``DeadlineExceeded``
    (its deadline passed) or ``Cancelled`` (client gone, server stopping).
    """
    large = [f for f in answer.DESCRIPTOR.fields if _is_large(answer, f)]
    head = type(answer)()
    head.CopyFrom(answer)
    for field in large:
        head.ClearField(field.name)
    parts = _as_dict(head)
    for field in large:
        parts[field.json_name] = _encoded_list(getattr(answer, field.name), context)
    return json.dumps(parts, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


def _is_large(answer: Message, field: FieldDescriptor) -> bool:
    return field.is_repeated and field.message_type is not None and len(getattr(answer, field.name)) > ENCODE_CHUNK


def _encoded_list(items: Any, context: CallContext) -> list[Any]:
    encoded: list[Any] = []
    for start in range(0, len(items), ENCODE_CHUNK):
        if not context.is_active():
            _stop(context)
        encoded += [_as_dict(item) for item in items[start : start + ENCODE_CHUNK]]
    return encoded


def _as_dict(message: Message) -> dict[str, Any]:
    return dict(json_format.MessageToDict(message, always_print_fields_with_no_presence=True))


def _stop(context: CallContext) -> NoReturn:
    if context.time_remaining() <= 0:
        raise DeadlineExceeded("the client's deadline passed while its answer was encoded")
    raise Cancelled("the call was cancelled while its answer was encoded")
