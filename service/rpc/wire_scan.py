"""What both edges read of a binary request's wire format before protobuf parses it: batch sizes and wire types.

The gRPC gate (``boaf.service.grpc.interceptors``) scans every request; the HTTP edge scans
a body sent as binary protobuf (``application/proto``), so both refuse the same requests
at the same cost.

``WireScan(descriptor).check(raw, max_batch_size=...)`` walks the protobuf wire format of
one request (tags and lengths; no value is decoded, no message is built) and raises

- ``LimitExceeded`` (OUT_OF_RANGE, "a batch of more than N states") as soon as a
  batch field (the request fields of ``MAX_BATCH_SIZE``: ``states`` of Classify and
  Features) passes ``BOAF_MAX_BATCH_SIZE`` elements: the scan stops there, so a
  request of a million empty states costs the scan of ``max_batch_size + 1`` of
  them, never a million parsed messages;
- ``InvalidInput`` (INVALID_ARGUMENT) naming the field (``states[3].sizes``) when a
  known field, at any depth, comes with a wire type its type never has. Protobuf
  itself (upb) keeps such a field among the unknown ones, which would make the call
  go on without it. Unknown field numbers are skipped, whatever their wire type;
- ``InvalidInput`` (INVALID_ARGUMENT, ``states[3].cells: more than 52 cells; at most 52
  are allowed``) as soon as a repeated field of ``REPEATED_LIMITS`` (a state's cells and
  stack sizes, a Play's moves) passes the most elements the game allows: the scan stops
  at the first element past it, so a state of two million empty cells costs the scan of
  53 of them. A packed element is counted as one per byte (fixed-width ones by their
  width): an upper bound, exact for every stack size the game allows (under 128, one byte);
- ``LimitExceeded`` when reading the request would take more than ``field_budget``
  fields read one by one (``FIELDS_PER_STATE`` per state of the batch limit, plus
  ``SPARE_FIELDS``): the cost of the scan is bounded whatever the request holds.

Bytes it cannot read (a cut varint, a length past the end, wire types 6 and 7, an
unmatched group end) end the scan silently: the parse that follows refuses them.

Cost, linear in the request's bytes: the top level and every nested message that no
fast form matches are read field by field in Python (~0.2 us a field, at most
``field_budget`` fields); a nested message whose fields all have small numbers and
short values (every state a legitimate client sends) is matched whole by a regular
expression built from its descriptor (``_fast_forms``), in C, in time linear in its
bytes. A match bounds each limited repeated field's elements from above by counting
its tag bytes in the match (``bytes.count``, in C; ``_Bound``); a match whose bound
passes the limit (too many elements, or tag bytes inside values) is read field by
field instead, which counts exactly. A 10,000-state batch of 52-card states costs
~10,000 Python steps, 10,000 matches and their counts; nothing the scan does allocates
per field.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import NamedTuple, NoReturn

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from boaf.game.errors import InvalidInput
from boaf.game.state import MAX_CELLS
from boaf.service.core.errors import LimitExceeded
from boaf.service.core.limits import MAX_BATCH_SIZE
from boaf.v1 import boaf_pb2, game_pb2

FIELDS_PER_STATE = 4  # fields the scan may read one by one for each state BOAF_MAX_BATCH_SIZE allows ...
SPARE_FIELDS = 1024  # ... and this many more, whatever the limit
SHORT_VALUE = 63  # longest length-delimited value (bytes) the fast forms match; longer ones are read field by field
VARINT, FIXED64, LENGTH, GROUP_START, GROUP_END, FIXED32 = 0, 1, 2, 3, 4, 5
_FD = FieldDescriptor
_SCALAR_WIRE = {
    **dict.fromkeys(
        (_FD.TYPE_INT32, _FD.TYPE_INT64, _FD.TYPE_UINT32, _FD.TYPE_UINT64, _FD.TYPE_SINT32, _FD.TYPE_SINT64,
         _FD.TYPE_BOOL, _FD.TYPE_ENUM),
        VARINT,
    ),
    **dict.fromkeys((_FD.TYPE_FIXED64, _FD.TYPE_SFIXED64, _FD.TYPE_DOUBLE), FIXED64),
    **dict.fromkeys((_FD.TYPE_FIXED32, _FD.TYPE_SFIXED32, _FD.TYPE_FLOAT), FIXED32),
    **dict.fromkeys((_FD.TYPE_STRING, _FD.TYPE_BYTES, _FD.TYPE_MESSAGE), LENGTH),
    _FD.TYPE_GROUP: GROUP_START,
}  # fmt: skip
WIRE_NAMES = {VARINT: "varint", FIXED64: "64-bit", LENGTH: "length-delimited", GROUP_START: "group start",
              GROUP_END: "group end", FIXED32: "32-bit"}  # fmt: skip


MAX_MOVES = MAX_CELLS - 1  # each move puts one stack on another: a grid of MAX_CELLS cards is won after this many


class RepeatedLimit(NamedTuple):
    """The most elements a repeated request field holds in any request the game allows, and what one is called."""

    most: int
    noun: str

    def refusal(self, where: str) -> InvalidInput:
        """The error for the field at ``where`` (``states[3].cells``) past ``most`` elements."""
        return InvalidInput(
            f"{where}: more than {self.most} {self.noun}; at most {self.most} are allowed", fields=(where,)
        )


REPEATED_LIMITS: dict[str, RepeatedLimit] = {
    boaf_pb2.State.DESCRIPTOR.fields_by_name["cells"].full_name: RepeatedLimit(MAX_CELLS, "cells"),
    boaf_pb2.State.DESCRIPTOR.fields_by_name["sizes"].full_name: RepeatedLimit(MAX_CELLS, "stack sizes"),
    game_pb2.PlayRequest.DESCRIPTOR.fields_by_name["moves"].full_name: RepeatedLimit(MAX_MOVES, "moves"),
}
"""Full name of a repeated request field -> its ``RepeatedLimit``: a grid has at most ``MAX_CELLS`` cells
(and so stack sizes), and is won after at most ``MAX_MOVES`` moves. Both edges refuse a field past it
before any of its elements is converted."""


class _Unreadable(Exception):
    """The bytes are no protobuf wire format: the scan stops, and the parse refuses them."""


def wire_types(field: FieldDescriptor) -> frozenset[int]:
    """The wire types ``field`` may arrive with: its type's, and length-delimited (packed) for repeated scalars."""
    wire = _SCALAR_WIRE[field.type]
    packable = field.is_repeated and wire in (VARINT, FIXED64, FIXED32)
    return frozenset({wire, LENGTH} if packable else {wire})


def batch_fields() -> dict[str, str]:
    """Request message (full name) -> its batch field's name: the request fields of ``MAX_BATCH_SIZE``."""
    return dict(MAX_BATCH_SIZE.request_fields)


class WireScan:
    """The scan of the module notes for one request message type (``descriptor``); build once, use per call."""

    def __init__(self, descriptor: Descriptor) -> None:
        self.descriptor = descriptor
        self.batch_field = batch_fields().get(descriptor.full_name)

    def check(self, raw: bytes, *, max_batch_size: int) -> None:
        """Raise ``LimitExceeded`` or ``InvalidInput`` as the module notes say; return when the scan finds nothing."""
        budget = field_budget(max_batch_size)
        reader = _Reader(raw, budget, max_batch_size, self.batch_field)
        try:
            reader.message(self.descriptor, 0, len(raw), "", top=True)
        except _Unreadable:
            return


def field_budget(max_batch_size: int) -> int:
    """How many fields the scan may read one by one: ``FIELDS_PER_STATE`` per state allowed, plus ``SPARE_FIELDS``."""
    return FIELDS_PER_STATE * max_batch_size + SPARE_FIELDS


class _Field(NamedTuple):
    name: str
    wires: frozenset[int]
    inner: Descriptor | None  # a message field's type
    fast: tuple[_FastForm, ...]  # the inner type's fast forms
    repeated: bool
    limit: RepeatedLimit | None  # a limited repeated field's
    packed_width: int  # bytes of one element when packed (a varint: 1, a lower bound); 0 when never packed


@functools.cache
def _plan(descriptor: Descriptor) -> dict[int, _Field]:
    return {f.number: _field(f) for f in descriptor.fields}


def _field(field: FieldDescriptor) -> _Field:
    inner = field.message_type if field.type == _FD.TYPE_MESSAGE else None
    fast = () if inner is None else _fast_forms(inner)
    wires = wire_types(field)
    width = {VARINT: 1, FIXED32: 4, FIXED64: 8}.get(_SCALAR_WIRE[field.type], 0) if LENGTH in wires else 0
    return _Field(field.name, wires, inner, fast, field.is_repeated, REPEATED_LIMITS.get(field.full_name), width)


class _Reader:
    def __init__(self, raw: bytes, budget: int, max_batch_size: int, batch_field: str | None) -> None:
        self.raw, self.left, self.budget = raw, budget, budget
        self.max_batch_size, self.batch_field = max_batch_size, batch_field

    def message(self, descriptor: Descriptor, pos: int, end: int, where: str, *, top: bool = False) -> None:
        raw, plan = self.raw, _plan(descriptor)
        batch = self.batch_field if top else None
        counts: dict[int, int] = {}
        depth = 0  # inside an unknown group
        while pos < end:
            self.left -= 1
            if self.left < 0:
                self._over_budget()
            tag = raw[pos]
            pos += 1
            if tag >= 0x80:
                tag, pos = _varint(raw, pos - 1, end)
            number, wire = tag >> 3, tag & 7
            if number == 0 or wire > FIXED32:
                raise _Unreadable
            field = plan.get(number) if depth == 0 else None
            if field is not None and wire not in field.wires:
                _wrong_wire_type(f"{where}{field.name}", wire, descriptor.fields_by_number[number])
            elements = 1
            if wire == LENGTH:
                length = raw[pos] if pos < end else 0x80
                pos += 1
                if length >= 0x80:
                    length, pos = _varint(raw, pos - 1, end)
                start, pos = pos, pos + length
                if pos > end:
                    raise _Unreadable
                if field is not None and field.inner is not None:
                    index = counts[number] = counts.get(number, 0) + 1
                    if field.name == batch and index > self.max_batch_size:
                        self._over_batch(field.name)
                    if not _matched_whole(field.fast, raw, start, pos):
                        inner_where = (
                            f"{where}{field.name}[{index - 1}]." if field.repeated else f"{where}{field.name}."
                        )
                        self.message(field.inner, start, pos, inner_where)
                elif field is not None and field.packed_width:
                    elements = length // field.packed_width
            elif wire == VARINT:
                _, pos = _varint(raw, pos, end)
            elif wire == FIXED64:
                pos += 8
            elif wire == FIXED32:
                pos += 4
            elif wire == GROUP_START:
                depth += 1
            else:
                depth -= 1
                if depth < 0:
                    raise _Unreadable
            if field is not None and field.limit is not None:
                counts[number] = counts.get(number, 0) + elements
                if counts[number] > field.limit.most:
                    raise field.limit.refusal(f"{where}{field.name}")
        if pos > end or depth:
            raise _Unreadable

    def _over_batch(self, name: str) -> NoReturn:
        # The scan stops here: how many more came is not worth reading (the HTTP edge says the same).
        limit = self.max_batch_size
        raise LimitExceeded(MAX_BATCH_SIZE.message(limit, field=name, value=f"more than {limit}"), fields=(name,))

    def _over_budget(self) -> NoReturn:
        raise LimitExceeded(
            f"request: more than {self.budget:,} fields to read exceeds the limit of {self.budget:,} "
            f"({FIELDS_PER_STATE} for each state of {MAX_BATCH_SIZE.variable}={self.max_batch_size:,}, "
            f"and {SPARE_FIELDS:,} more)"
        )


def _matched_whole(forms: tuple[_FastForm, ...], raw: bytes, start: int, end: int) -> bool:
    # The first form that matches decides: past a limit's bound, the field-by-field read counts exactly.
    # More tag bytes in the whole message than a limit allows: no match can keep within it, so none is tried.
    # (~1.5 us a state with the bounds: 15 ms more for a batch of 10,000 states of 52 cards and sizes.)
    if not forms:
        return False
    for bound in forms[0].bounds:
        if raw.count(bound.tag, start, end) > bound.most:
            return False
    for form in forms:
        match = form.pattern.fullmatch(raw, start, end)
        if match is not None:
            return all(not bound.passed(match, raw) for bound in form.bounds)
    return False


def _wrong_wire_type(name: str, wire: int, field: FieldDescriptor) -> NoReturn:
    expected = " or ".join(str(w) for w in sorted(wire_types(field)))
    raise InvalidInput(
        f"{name}: a {WIRE_NAMES[wire]} value (wire type {wire}), but the field is {_type_name(field)} "
        f"(wire type {expected})",
        fields=(name,),
    )


def _varint(raw: bytes, pos: int, end: int) -> tuple[int, int]:
    value, shift = 0, 0
    while pos < end and shift < 70:
        byte = raw[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
    raise _Unreadable


def _type_name(field: FieldDescriptor) -> str:
    if field.type == _FD.TYPE_MESSAGE:
        return f"a message ({field.message_type.name})"
    names = {v: k for k, v in vars(_FD).items() if k.startswith("TYPE_")}
    kind = names[field.type].removeprefix("TYPE_").lower()
    return f"repeated {kind}" if field.is_repeated else kind


# ---------------------------------------------------------------- the fast forms

_VARINT = rb"[\x80-\xff]{0,9}[\x00-\x7f]"
# Card texts first: the lengths a state's cells have.
_LENGTHS = (2, 3, 0, 1, *range(4, SHORT_VALUE + 1))
_SHORT = b"(?:" + b"|".join(re.escape(bytes([n])) + b".{%d}" % n for n in _LENGTHS) + b")"
_VALUE = {VARINT: _VARINT, FIXED64: rb".{8}", FIXED32: rb".{4}", LENGTH: _SHORT}


class _Bound(NamedTuple):
    """How a fast form's match bounds a limited repeated field's elements from above, reading no value.

    Each element carries its tag byte (``tag``), and a packed chunk, whose value the forms match only up
    to ``most`` bytes, holds at most ``most`` elements (``packed_tag``): so the elements are at most the
    count of those bytes in the match (more when they also occur inside values). In the in-order form the
    field's fields are one run, the group ``group``: there a run of L bytes also holds at most
    max(L - 2, L // 2) elements (a packed chunk costs 2 bytes and each element 1, an unpacked element 2),
    so a packed run is never over-counted by its values' bytes.
    """

    group: str | None  # None: the whole match (the any-order form)
    tag: bytes
    packed_tag: bytes | None
    most: int

    def passed(self, match: re.Match[bytes], raw: bytes) -> bool:
        """True when the match may hold more than ``most`` elements of the field (bytes.count, in C)."""
        start, end = match.span(self.group) if self.group is not None else match.span()
        elements = raw.count(self.tag, start, end)
        if self.packed_tag is not None:
            elements += self.most * raw.count(self.packed_tag, start, end)
            if self.group is not None:
                elements = min(elements, max(end - start - 2, (end - start) // 2))
        return elements > self.most


class _FastForm(NamedTuple):
    pattern: re.Pattern[bytes]
    bounds: tuple[_Bound, ...]  # a match passing one of them is read field by field


def _value(field: FieldDescriptor, wire: int) -> bytes:
    # A limited field's packed chunk is matched up to its limit's bytes, so that a chunk bounds its elements.
    limit = REPEATED_LIMITS.get(field.full_name)
    if wire == LENGTH and limit is not None and _SCALAR_WIRE[field.type] != LENGTH:
        return b"(?:" + b"|".join(re.escape(bytes([n])) + b".{%d}" % n for n in range(limit.most + 1)) + b")"
    return _VALUE[wire]


def _bounds(fields: list[FieldDescriptor], *, in_order: bool) -> tuple[_Bound, ...]:
    bounds = []
    for field in fields:
        limit = REPEATED_LIMITS.get(field.full_name)
        if limit is None:
            continue
        tag = bytes([field.number << 3 | _SCALAR_WIRE[field.type]])
        packed = bytes([field.number << 3 | LENGTH]) if _SCALAR_WIRE[field.type] != LENGTH else None
        bounds.append(_Bound(f"f{field.number}" if in_order else None, tag, packed, limit.most))
    return tuple(bounds)


@functools.cache
def _fast_forms(descriptor: Descriptor) -> tuple[_FastForm, ...]:
    """Patterns that match whole encodings of ``descriptor`` the field-by-field scan would let through.

    Each matches a run of fields, each one of: a known field (all numbers under 16,
    one-byte tags) with a wire type it may have; an unknown field of any number
    under 2**28 with a canonical tag and any wire type but groups. Values: any
    varint, 4 or 8 bytes, or a length-delimited value of at most ``SHORT_VALUE``
    bytes. The first takes the known fields in the order of their numbers, as every
    protobuf library writes them, then the unknown ones (~12 ns a byte); the second
    takes fields in any order (~4 times slower), for other writers. None for a
    message with a message field or a number of 16 or more: the scan reads those
    field by field, as it does a message that no form matches (which is not wrong). A limited
    repeated field's run is bounded after the match (``_Bound``).
    """
    fields = sorted(descriptor.fields, key=lambda f: f.number)
    if any(f.type in (_FD.TYPE_MESSAGE, _FD.TYPE_GROUP) or f.number >= 16 for f in fields):
        return ()
    in_order, known = [], []
    for field in fields:
        values = [
            re.escape(bytes([field.number << 3 | wire])) + _value(field, wire) for wire in sorted(wire_types(field))
        ]
        run = b"(?:" + b"|".join(values) + (b")*+" if field.is_repeated else b")?+")
        in_order.append(b"(?P<f%d>%s)" % (field.number, run) if field.full_name in REPEATED_LIMITS else run)
        known += values
    numbers = {f.number for f in fields}
    unknown = []
    for wire, value in _VALUE.items():
        tags = [n << 3 | wire for n in range(1, 16) if n not in numbers]
        if tags:
            unknown.append(_byte_class(tags) + value)
        # Tags of two to five bytes: numbers of 16 and more, all unknown here.
        first = _byte_class(b for b in range(0x80, 0x100) if b & 7 == wire)
        unknown.append(first + rb"[\x80-\xff]{0,3}[\x01-\x7f]" + value)
    any_unknown = b"(?:" + b"|".join(unknown) + b")*+"
    any_order = b"(?:" + b"|".join(known + unknown) + b")*+"
    return (
        _FastForm(re.compile(b"".join(in_order) + any_unknown, re.DOTALL), _bounds(fields, in_order=True)),
        _FastForm(re.compile(any_order, re.DOTALL), _bounds(fields, in_order=False)),
    )


def _byte_class(values: Iterable[int]) -> bytes:
    return b"[" + b"".join(re.escape(bytes([v])) for v in values) + b"]"


@functools.cache
def wire_scan(descriptor: Descriptor) -> WireScan:
    """The ``WireScan`` of the message ``descriptor`` describes (built once a message type)."""
    return WireScan(descriptor)
