"""Compressed gRPC messages, inflated by boaf itself: at most ``BOAF_MAX_MESSAGE_BYTES`` ever come out.

gRPC core is told not to inflate messages (``grpc.per_message_decompression`` 0 in
``boaf.service.grpc.server``), so a compressed message reaches the gate as it came
over the wire, and core's ``grpc-encoding`` header is not shown to handlers. The gate
tells the encoding by the bytes (``inflated``), for the two encodings grpcio clients send:

- **gzip** (RFC 1952) starts ``1f 8b``. No protobuf message starts so: ``1f`` is the
  tag of field 3 with wire type 7, which does not exist.
- **deflate** (gRPC's "deflate" is the zlib format, RFC 1950) starts with a zlib
  header: compression method 8, a window of at most 32 KiB, no preset dictionary,
  and a check that makes the two bytes a multiple of 31. A protobuf message may
  start with such two bytes too (``78 01`` is field 15, varint 1), so a message is
  taken as deflate only when it inflates as one whole zlib stream, its Adler-32
  checked, ending at the message's last byte; anything else is the message itself.

Cost: inflation stops once ``max_bytes + 1`` bytes have come out (``LimitExceeded``,
OUT_OF_RANGE), taking ``CHUNK_BYTES`` at a time, so a message holds at most
``max_bytes + CHUNK_BYTES`` inflated bytes, plus one copy of at most ``max_bytes``
when they are joined, and zlib's CPU is linear in the bytes it reads and writes.
"""

from __future__ import annotations

import zlib

from boaf.game.errors import InvalidInput
from boaf.service.core.errors import LimitExceeded
from boaf.service.core.limits import MAX_MESSAGE_BYTES

GZIP_MAGIC = b"\x1f\x8b"
CHUNK_BYTES = 256 * 1024  # inflated bytes taken from zlib at a time
GZIP_WBITS = 16 + zlib.MAX_WBITS  # zlib's window bits for a gzip stream ...
ZLIB_WBITS = zlib.MAX_WBITS  # ... and for a zlib stream


class _NotOneStream(Exception):
    """The bytes are not one whole compressed stream (cut short, broken, or with bytes after its end)."""


def inflated(raw: bytes, max_bytes: int) -> bytes:
    """``raw`` inflated when it is a gzip or deflate message (module notes), else ``raw`` itself.

    ``LimitExceeded`` when more than ``max_bytes`` would come out (no more is inflated);
    ``InvalidInput`` for bytes that start as gzip but are not one whole gzip stream.
    """
    if raw.startswith(GZIP_MAGIC):
        try:
            return _inflate(raw, GZIP_WBITS, max_bytes, "gzip")
        except _NotOneStream as exc:
            message = f"request: {len(raw):,} bytes that start as gzip but are not one gzip stream ({exc})"
            raise InvalidInput(message) from None
    if has_zlib_header(raw):
        try:
            return _inflate(raw, ZLIB_WBITS, max_bytes, "deflate")
        except _NotOneStream:
            return raw  # a protobuf message that starts like a zlib header
    return raw


def has_zlib_header(raw: bytes) -> bool:
    """Whether ``raw`` starts with a zlib header gRPC's deflate can send (method 8, window <= 32 KiB, no dictionary)."""
    if len(raw) < 2:
        return False
    method, flags = raw[0], raw[1]
    return method & 0x0F == 8 and method >> 4 <= 7 and not flags & 0x20 and (method << 8 | flags) % 31 == 0


def _inflate(raw: bytes, wbits: int, max_bytes: int, encoding: str) -> bytes:
    unpacker = zlib.decompressobj(wbits)
    parts: list[bytes] = []
    size = 0
    pending = raw
    try:
        while not unpacker.eof:
            part = unpacker.decompress(pending, CHUNK_BYTES)
            size += len(part)
            if size > max_bytes:
                raise LimitExceeded(
                    f"request: a message of more than {max_bytes:,} bytes once inflated ({encoding}) exceeds the "
                    f"limit of {max_bytes:,} bytes ({MAX_MESSAGE_BYTES.variable})"
                )
            parts.append(part)
            pending = unpacker.unconsumed_tail
            if not pending and len(part) < CHUNK_BYTES:
                break  # all read, and zlib holds nothing more
    except zlib.error as exc:
        raise _NotOneStream(str(exc)) from None
    if not unpacker.eof:
        raise _NotOneStream("cut short")
    if unpacker.unused_data:
        raise _NotOneStream(f"{len(unpacker.unused_data):,} bytes after its end")
    return b"".join(parts)
