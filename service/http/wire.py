"""Messages to and from the wire on the HTTP edge: JSON and binary protobuf (Connect's two codecs).

A call's codec comes from its content type (``codec_for``) or, for a GET, from
its query (``get_request``: Connect's ``encoding``, ``message``, ``base64`` and
``compression`` parameters). Binary bodies are parsed and written by protobuf
itself (C, milliseconds for the largest message); bytes that are not the
method's request message are INVALID_ARGUMENT. The rest of these notes are about JSON.

Parsing is RFC 8259 JSON (no ``NaN`` or ``Infinity``, no number too large for a
float) in the proto3 JSON mapping; anything else is ``CallAborted`` with
INVALID_ARGUMENT and a message that may quote the input, cut and escaped by
``boaf.service.core.admission``, so it always encodes. A request is counted before it is
converted: no more JSON objects and arrays are built than a batch at ``max_batch_size`` holds
(``objects_at_most``, ``arrays_at_most``), no more JSON strings and values than a request within the
limits holds (``values_at_most``, counted as ``"``), and a batch past it is OUT_OF_RANGE,
a cells, stack sizes or moves list past what the game allows INVALID_ARGUMENT
(``REPEATED_LIMITS``), before any of it is converted. Parsing reads, and encoding writes, the
large repeated fields of a message (10,000 states, predictions or feature
vectors) in chunks, and between chunks stops a call that has ended (client gone,
deadline passed, server stopping) with ``Cancelled`` or ``DeadlineExceeded``.
"""

from __future__ import annotations

import base64
import binascii
import functools
import itertools
import json
import urllib.parse
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn, Protocol

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError, Message

from boaf.service.core.admission import cut_quotes, quoted
from boaf.service.core.errors import Cancelled, Code, DeadlineExceeded, LimitExceeded
from boaf.service.core.limits import MAX_BATCH_SIZE, MAX_MESSAGE_BYTES
from boaf.service.http.statuses import CallAborted
from boaf.service.rpc.call import Call
from boaf.service.rpc.wire_scan import REPEATED_LIMITS, wire_scan

ENCODE_CHUNK = 500  # elements of a repeated field encoded between two checks of the call's state
SPARE_VALUES = 32  # names and values past a request's own, so a few unknown keys still get protobuf's message


def _invalid(message: str) -> CallAborted:
    """The body is not the method's request message in JSON: INVALID_ARGUMENT with ``message``."""
    return CallAborted(Code.INVALID_ARGUMENT, message)


def parse_request(body: bytes, message: Message, call: Call | None = None, *, max_states: int | None = None) -> Message:
    """``message`` filled from ``body``, a JSON object in the proto3 JSON mapping (empty: ``{}``).

    With ``max_states``, a batch is counted before any of it is converted: a ``states`` list of more is
    ``LimitExceeded`` (OUT_OF_RANGE, ``states: a batch of more than N states ...`` as on the gRPC edge),
    and a body with more ``[`` than ``arrays_at_most(max_states)`` is refused unparsed, and the parse itself
    stops at the first JSON object past ``objects_at_most(max_states)`` (no request holds more), so a body
    of a million ``{}`` or ``[]`` builds no more containers than a batch at the limit. A body with more
    ``"`` than twice ``values_at_most`` (and ``SPARE_VALUES``) is refused unparsed (in a batch
    OUT_OF_RANGE, else INVALID_ARGUMENT), so a million empty cells builds no strings; after the parse,
    a list of ``REPEATED_LIMITS`` past its limit is ``InvalidInput`` naming it
    (``states[3].cells: more than 52 cells; ...``, as the wire scan says).
    Unknown fields and wrong types are errors that name the field. A large repeated message field
    (a batch's 10,000 states) is filled
    ``ENCODE_CHUNK`` elements at a time, and between chunks a call no longer active (``call``)
    ends with ``DeadlineExceeded`` or ``Cancelled``, as encoding does: parsing a
    maximum-size batch costs seconds of Python on a busy machine.
    """
    if max_states is not None:
        _count_bytes(body, message, max_states)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _invalid(f"request body is not UTF-8: byte {exc.start}") from None
    value = _json_object(text, message, max_states)
    if max_states is not None:
        _check_batch(value, max_states)
        _check_repeated(value, message.DESCRIPTOR, "")
    large = _large_lists(value, message) if call is not None else {}
    _parse_dict({key: item for key, item in value.items() if key not in large}, message, "request body")
    for key, field in large.items():
        items, target = value[key], getattr(message, field.name)
        for start in range(0, len(items), ENCODE_CHUNK):
            if call is not None and not call.is_active():
                _stop(call, "was read")
            for index in range(start, min(start + ENCODE_CHUNK, len(items))):
                _parse_dict(items[index], target.add(), f"request body: {field.json_name}[{index}]")
    return message


def _json_object(text: str, message: Message, max_states: int | None) -> dict[str, Any]:
    hook = None if max_states is None else _counting_objects(message, max_states)
    try:
        value = json.loads(text.strip() or "{}", parse_constant=_not_json, parse_float=_finite, object_hook=hook)
    except LimitExceeded:  # the count stopped the parse (an InvalidInput, so a ValueError too)
        raise
    except (ValueError, RecursionError) as exc:
        raise _invalid(cut_quotes(f"request body is not JSON: {exc}")) from None
    if not isinstance(value, dict):
        raise _invalid(f"request body must be a JSON object, got {_json_type(value)}")
    if "\\u" in text and not _is_unicode(value):
        raise _invalid("request body: a string holds a lone surrogate (a \\uD800-\\uDFFF escape not in a pair)")
    return value


BATCH_FIELD = "states"
"""The repeated field of a batch request (Classify, Features), in JSON and in the proto alike."""


def objects_at_most(max_states: int) -> int:
    """The most JSON objects a request of at most ``max_states`` states holds: itself and one a state.

    No request message has a message field but its ``state`` or ``states`` (``State`` has none, and there
    is no map or ``Struct`` field), so an object past this many is a state past the batch limit, or
    something no request holds.
    """
    return max_states + 1


def arrays_at_most(max_states: int) -> int:
    """The most ``[`` a request of at most ``max_states`` states holds: its ``states`` or ``moves``, and
    each state's ``cells`` and ``sizes`` (no request's string holds one: cards, moves and energy names).

    Counted in the body's bytes before the parse (``bytes.count``, in C): JSON has no hook for arrays,
    and a million ``[]`` would cost the parse a million lists and the garbage collector their traversal.
    """
    return 2 * max_states + 1


def values_at_most(descriptor: Descriptor, max_states: int) -> int | None:
    """The most JSON values and member names a request of ``descriptor`` holds within ``max_states``.

    Each field is a name and a value (a string, for an enum or a 64-bit integer), a repeated field of
    ``REPEATED_LIMITS`` at most its limit's elements, the batch field ``max_states`` messages. So a body
    within the limits has at most twice this many ``"`` (no request's string holds one). None when some
    repeated field has no limit (no request has).
    """
    total = 0
    for field in descriptor.fields:
        if field.message_type is not None:
            inner = values_at_most(field.message_type, max_states)
            count = max_states if field.name == BATCH_FIELD else 1
            if inner is None or (field.is_repeated and field.name != BATCH_FIELD):
                return None
            total += 1 + count * inner
        elif field.is_repeated:
            limit = REPEATED_LIMITS.get(field.full_name)
            if limit is None:
                return None
            total += 1 + limit.most
        else:
            total += 2
    return total


def _count_bytes(body: bytes, message: Message, max_states: int) -> None:
    # Counted in the body's bytes before the parse (bytes.count, in C, ~1 ms a MiB each): a body past what a
    # request within the limits holds never builds its lists and strings.
    if body.count(b"[") > arrays_at_most(max_states):
        raise _more_than_a_request_holds(message, max_states)
    most = values_at_most(message.DESCRIPTOR, max_states)
    if most is not None and body.count(b'"') > 2 * (most + SPARE_VALUES):
        raise _more_strings_than_a_request_holds(message, max_states)


def _more_strings_than_a_request_holds(message: Message, max_states: int) -> Exception:
    # In a batch, what a request holds follows from the batch limit: OUT_OF_RANGE, as a batch past it is.
    if BATCH_FIELD in message.DESCRIPTOR.fields_by_name:
        return LimitExceeded(
            f"request body: more JSON strings than a batch of at most {max_states} states holds "
            f"({MAX_BATCH_SIZE.variable})"
        )
    return _invalid(f"request body: more JSON strings than a {message.DESCRIPTOR.full_name} holds")


def _check_repeated(value: dict[str, Any], descriptor: Descriptor, where: str) -> None:
    # Each list of REPEATED_LIMITS, at any depth, against its limit, before any of it is converted.
    fields = _fields_by_key(descriptor)
    for key, item in value.items():
        field = fields.get(key)
        if field is None:
            continue
        limit = REPEATED_LIMITS.get(field.full_name)
        if limit is not None and isinstance(item, list) and len(item) > limit.most:
            raise limit.refusal(f"{where}{field.name}")
        if field.message_type is not None and _holds_limits(field.message_type):
            if isinstance(item, dict):
                _check_repeated(item, field.message_type, f"{where}{field.name}.")
            elif isinstance(item, list):
                for index, element in enumerate(item):
                    if isinstance(element, dict):
                        _check_repeated(element, field.message_type, f"{where}{field.name}[{index}].")


@functools.cache
def _fields_by_key(descriptor: Descriptor) -> dict[str, FieldDescriptor]:
    # The JSON keys of a message's fields: its json_name, or its proto name.
    return {**{f.json_name: f for f in descriptor.fields}, **descriptor.fields_by_name}


@functools.cache
def _holds_limits(descriptor: Descriptor) -> bool:
    return any(f.full_name in REPEATED_LIMITS for f in descriptor.fields)


def _more_than_a_request_holds(message: Message, max_states: int) -> Exception:
    # More JSON objects or arrays than a request within the limits holds: in a batch, a batch past its
    # limit (or a malformed one); anywhere else, a body no request message describes.
    if BATCH_FIELD in message.DESCRIPTOR.fields_by_name:
        return _too_many_states(max_states)
    return _invalid(f"request body: more JSON objects or arrays than a {message.DESCRIPTOR.full_name} holds")


def _check_batch(value: dict[str, Any], max_states: int) -> None:
    # The batch limit, before any state is converted (the gRPC edge's scan says the same).
    states = value.get(BATCH_FIELD)
    if isinstance(states, list) and len(states) > max_states:
        raise _too_many_states(max_states)


def _too_many_states(max_states: int) -> LimitExceeded:
    message = MAX_BATCH_SIZE.message(max_states, field=BATCH_FIELD, value=f"more than {max_states}")
    return LimitExceeded(message, fields=(BATCH_FIELD,))


def _counting_objects(message: Message, max_states: int) -> Callable[[dict[str, Any]], dict[str, Any]]:
    # json.loads's object_hook, called as each object closes (the body's own object last): past
    # objects_at_most, the parse stops there. Those objects are states, or the request is malformed.
    seen, most = itertools.count(1), objects_at_most(max_states)

    def counted(obj: dict[str, Any]) -> dict[str, Any]:
        if next(seen) > most:
            raise _more_than_a_request_holds(message, max_states)
        return obj

    return counted


def _large_lists(value: dict[str, Any], message: Message) -> dict[str, FieldDescriptor]:
    # The JSON keys (json_name or the proto name) of repeated message fields holding a list past a chunk.
    fields = message.DESCRIPTOR.fields_by_name
    by_key = {**{f.json_name: f for f in fields.values()}, **fields}
    return {
        key: by_key[key]
        for key, item in value.items()
        if key in by_key
        and by_key[key].is_repeated
        and by_key[key].message_type is not None
        and not by_key[key].message_type.GetOptions().map_entry
        and isinstance(item, list)
        and len(item) > ENCODE_CHUNK
        and all(isinstance(element, dict) for element in item)
    }


def _parse_dict(value: Any, message: Message, where: str) -> None:
    try:
        json_format.ParseDict(value, message)
    except (json_format.ParseError, RecursionError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        # Only the first line, cut: protobuf's message may quote a 4 MiB key or value whole.
        reason = cut_quotes(str(exc).strip().partition("\n")[0]) or type(exc).__name__
        raise _invalid(f"{where}: {reason}") from None


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


def encode_answer(answer: Message, call: Call) -> bytes:
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
        parts[field.json_name] = _encoded_list(getattr(answer, field.name), call)
    return json.dumps(parts, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


def _is_large(answer: Message, field: FieldDescriptor) -> bool:
    return field.is_repeated and field.message_type is not None and len(getattr(answer, field.name)) > ENCODE_CHUNK


def _encoded_list(items: Any, call: Call) -> list[Any]:
    encoded: list[Any] = []
    for start in range(0, len(items), ENCODE_CHUNK):
        if not call.is_active():
            _stop(call, "was encoded")
        encoded += [_as_dict(item) for item in items[start : start + ENCODE_CHUNK]]
    return encoded


def _as_dict(message: Message) -> dict[str, Any]:
    return dict(json_format.MessageToDict(message, always_print_fields_with_no_presence=True))


def _stop(call: Call, when: str) -> NoReturn:
    what = "request" if when == "was read" else "answer"
    if call.time_remaining() <= 0:
        raise DeadlineExceeded(f"the client's deadline passed while its {what} {when}")
    raise Cancelled(f"the call was cancelled while its {what} {when}")


GZIP_MIN_BYTES = 1024
"""Answers at least this long are gzipped for a client that accepts it (shorter ones gain little)."""
GZIP_CHUNK = 1 << 18
"""Bytes compressed between two checks that the call is still active."""


def accepts_gzip(accept_encoding: str) -> bool:
    """True when an ``Accept-Encoding`` header lists ``gzip`` (or ``*``) with a quality above 0."""
    for part in accept_encoding.split(","):
        name, _, params = part.partition(";")
        if name.strip().lower() not in ("gzip", "*"):
            continue
        quality = params.strip().lower().removeprefix("q=")
        try:
            return not quality or float(quality) > 0
        except ValueError:
            return False
    return False


def gzipped(data: bytes, call: Call) -> bytes:
    """``data`` gzipped, ``GZIP_CHUNK`` bytes at a time: a call no longer active stops it as ``encode_answer`` does."""
    packer = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # 16 +: a gzip header and trailer
    parts = []
    for start in range(0, len(data), GZIP_CHUNK):
        if not call.is_active():
            _stop(call, "was compressed")
        parts.append(packer.compress(data[start : start + GZIP_CHUNK]))
    parts.append(packer.flush())
    return b"".join(parts)


def parse_binary(body: bytes, message: Message, call: Call | None = None, *, max_states: int | None = None) -> Message:
    """``message`` filled from ``body``, the message in binary protobuf (empty: all defaults).

    With ``max_states``, the body's wire format is scanned first, as the gRPC gate scans a message
    (``boaf.service.rpc.wire_scan``): a batch past ``max_states`` is ``LimitExceeded`` at its first state
    past the limit, a known field with a wrong wire type is ``InvalidInput`` naming it, and the fields
    read one by one are bounded; only then does protobuf parse, in C, in time and memory linear in ``body``.
    """
    if max_states is not None:
        wire_scan(message.DESCRIPTOR).check(body, max_batch_size=max_states)
    try:
        message.ParseFromString(body)
    except (DecodeError, RecursionError, ValueError) as exc:
        name = message.DESCRIPTOR.full_name
        raise _invalid(cut_quotes(f"request body is not a binary {name} ({len(body):,} bytes): {exc}")) from None
    return message


def encode_binary(answer: Message, call: Call) -> bytes:
    """``answer`` in binary protobuf."""
    return bytes(answer.SerializeToString())


class Parser(Protocol):
    """A codec's parser: ``message`` filled from ``body``, within ``max_states`` (``parse_request``)."""

    def __call__(
        self, body: bytes, message: Message, call: Call | None = None, *, max_states: int | None = None
    ) -> Message: ...


@dataclass(frozen=True)
class Codec:
    """One of Connect's codecs: its name in a GET's ``encoding``, its content type, its parser and encoder."""

    name: str
    media_type: str
    parse: Parser
    encode: Callable[[Message, Call], bytes]


JSON = Codec("json", "application/json", parse_request, encode_answer)
PROTO = Codec("proto", "application/proto", parse_binary, encode_binary)
CODECS = {codec.name: codec for codec in (JSON, PROTO)}
MEDIA_TYPES = " or ".join(codec.media_type for codec in CODECS.values())


def codec_for(content_type: str) -> Codec:
    """The codec of a ``Content-Type`` header (parameters such as ``charset`` ignored); else INVALID_ARGUMENT."""
    media_type = content_type.split(";")[0].strip().lower()
    for codec in CODECS.values():
        if media_type == codec.media_type:
            return codec
    raise _invalid(f"content-type must be {MEDIA_TYPES}, got {quoted(media_type)}")


GET_MAX_URL_BYTES = 8192
"""The longest GET request target (path and query) served; a longer one is OUT_OF_RANGE: POST it instead."""
GET_MAX_FIELDS = 8  # query parameters of a GET: Connect's five, and a few a cache buster may add


def get_request(query: str, max_bytes: int) -> tuple[Codec, bytes]:
    """The codec and request body of a Connect GET from its query string, e.g. ``encoding=json&message=%7B%7D``.

    ``message`` is the request (URL-safe base64 when ``base64=1``; padding optional), ``encoding`` its codec
    (``json`` or ``proto``), ``compression`` ``identity`` or ``gzip``, ``connect`` the protocol (``v1``).
    A missing or bad parameter is INVALID_ARGUMENT; a message past ``max_bytes`` once decoded, ``LimitExceeded``.
    """
    try:
        fields = urllib.parse.parse_qs(
            query, keep_blank_values=True, max_num_fields=GET_MAX_FIELDS, errors="surrogateescape"
        )
    except ValueError:
        raise _invalid(f"GET: more than {GET_MAX_FIELDS} query parameters") from None
    value = functools.partial(_query_value, fields)
    if value("connect", "v1") != "v1":
        raise _invalid(f"GET: connect={quoted(value('connect', ''))}, this server speaks connect=v1")
    encoding = value("encoding", "")
    if encoding not in CODECS:
        raise _invalid(f"GET: encoding must be {' or '.join(CODECS)}, got {quoted(encoding)}")
    if "message" not in fields:
        raise _invalid("GET: the query has no message parameter (the request, encoded)")
    data = value("message", "").encode("utf-8", "surrogateescape")
    if value("base64", "") not in ("", "0"):
        data = _from_base64(data, value("base64", ""))
    return CODECS[encoding], _decompressed(data, value("compression", "identity"), max_bytes)


def _query_value(fields: dict[str, list[str]], name: str, default: str) -> str:
    values = fields.get(name)
    if not values:
        return default
    if len(values) > 1:
        raise _invalid(f"GET: the query has {len(values)} {name} parameters, expected one")
    return values[0]


def _from_base64(data: bytes, flag: str) -> bytes:
    if flag != "1":
        raise _invalid(f"GET: base64 must be 1 or absent, got {quoted(flag)}")
    try:
        return base64.b64decode(data + b"=" * (-len(data) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        raise _invalid("GET: message is not URL-safe base64 (base64=1)") from None


def _decompressed(data: bytes, compression: str, max_bytes: int) -> bytes:
    if compression not in COMPRESSIONS:
        raise _invalid(f"GET: compression must be identity or gzip, got {quoted(compression)}")
    if compression == "identity":
        return data
    return gunzipped(data, max_bytes, "GET: message", "compression=gzip")


COMPRESSIONS = ("identity", "gzip")


def request_compression(content_encoding: str) -> str:
    """A POST's ``Content-Encoding`` (Connect's request compression): ``identity`` or ``gzip``.

    Anything else is INVALID_ARGUMENT.
    """
    name = content_encoding.strip().lower() or "identity"
    if name not in COMPRESSIONS:
        raise _invalid(f"content-encoding must be identity or gzip, got {quoted(name)}")
    return name


def gunzipped(data: bytes, max_bytes: int, what: str = "request body", how: str = "Content-Encoding: gzip") -> bytes:
    """``data`` gunzipped: at most ``max_bytes`` come out (more is ``LimitExceeded``, and no more is inflated).

    Bytes that are not one whole gzip stream are INVALID_ARGUMENT, naming ``what`` was sent and ``how``.
    """
    unpacker = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        plain = unpacker.decompress(data, max_bytes + 1)
    except zlib.error as exc:
        raise _invalid(f"{what} is not gzip ({how}): {exc}") from None
    if len(plain) > max_bytes:
        raise LimitExceeded(
            f"request: a message of more than {max_bytes:,} bytes once decompressed exceeds the limit of "
            f"{max_bytes:,} bytes ({MAX_MESSAGE_BYTES.variable})"
        )
    if not unpacker.eof or unpacker.unused_data:
        raise _invalid(f"{what} is not one whole gzip stream ({how})")
    return plain
