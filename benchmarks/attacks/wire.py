"""HTTP/2 and gRPC on the wire, for attacks: frames built by hand, answers read by hand.

``RawH2`` is an HTTP/2 client connection on a plain socket. The ``h2`` package writes its preface
and first SETTINGS (with whatever settings the attack asks for: a zero window, say); from then on
frames are written as raw bytes (``frame``), so an attack can send what no well-behaved client
library would (a HEADERS frame then its RST_STREAM, ten thousand times a second). A reader task
parses every frame the server sends: it acknowledges SETTINGS and PING as a client must, decodes
header blocks with ``hpack`` (one decoder for the connection, as HPACK requires), notes the
``grpc-status`` and ``grpc-message`` of each stream, and the time of a GOAWAY or of the close.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import struct
import time
import zlib
from dataclasses import dataclass, field

import grpc
import h2.config
import h2.connection
import h2.settings
import hpack

from benchmarks import hostile

DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0x0, 0x1, 0x3, 0x4, 0x6, 0x7, 0x8, 0x9
INITIAL_WINDOW_SIZE, MAX_FRAME_SIZE = 0x4, 0x5  # SETTINGS parameters
DEFAULT_WINDOW = 65_535  # every flow-control window's size until SETTINGS or WINDOW_UPDATE say otherwise
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
CANCEL = 0x8  # RST_STREAM's error code
FRAME_HEAD = struct.Struct(">I")  # the 24-bit length is the low three bytes of this
CLASSIFY, FEATURES = "/boaf.v1.Boaf/Classify", "/boaf.v1.Boaf/Features"
CODE_NAMES = {code.value[0]: code.name for code in grpc.StatusCode}


def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    """One HTTP/2 frame: a 9-byte head (24-bit length, type, flags, 31-bit stream id), then ``payload``."""
    return FRAME_HEAD.pack(len(payload))[1:] + bytes((kind, flags)) + FRAME_HEAD.pack(stream) + payload


def grpc_message(payload: bytes, compressed: bool = False) -> bytes:
    """A gRPC length-prefixed message: a compressed flag byte, a 32-bit length, the bytes."""
    return bytes((int(compressed),)) + FRAME_HEAD.pack(len(payload)) + payload


def varint(value: int) -> bytes:
    """``value`` as a protobuf (and HPACK continuation) varint: 7 bits a byte, low first."""
    out = bytearray()
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    out.append(value)
    return bytes(out)


def compress(data: bytes, encoding: str) -> bytes:
    """``data`` compressed as ``grpc-encoding`` or ``Content-Encoding`` ``encoding`` says (gzip or deflate)."""
    if encoding == "gzip":
        return gzip.compress(data, 9, mtime=0)
    if encoding == "deflate":
        return zlib.compress(data, 9)  # HTTP's and gRPC's "deflate" is the zlib format
    raise ValueError(f"no encoding {encoding!r}")


def status_of(code: int | str) -> str:
    """The name of a gRPC status number (``grpc-status``), e.g. 3 -> ``INVALID_ARGUMENT``."""
    number = int(code)
    return str(CODE_NAMES.get(number, f"status {number}"))


@dataclass
class StreamAnswer:
    """What the server said on one stream: its ``grpc-status`` name (or the RST_STREAM), message length."""

    code: str | None = None
    message_chars: int = 0
    done: asyncio.Event = field(default_factory=asyncio.Event)


class RawH2:
    """One HTTP/2 connection to ``host:port``; see the module's docstring."""

    def __init__(self, host: str, port: int, authority: str) -> None:
        self.host, self.port, self.authority = host, port, authority
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.opened_at = 0.0
        self.goaway_at: float | None = None
        self.goaway_code: int | None = None
        self.closed_at: float | None = None
        self.frames_in: dict[int, int] = {}
        self.server_settings: dict[int, int] = {}
        self.answers: dict[int, StreamAnswer] = {}
        self._next_stream = 1
        self._decoder = hpack.Decoder()
        self._encoder = hpack.Encoder()
        self._block: dict[int, bytearray] = {}
        self._window = DEFAULT_WINDOW  # what the server's connection window lets us send
        self._stream_windows: dict[int, int] = {}
        self._window_opened = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def open(self, settings: dict[int, int] | None = None, timeout: float = 10.0) -> None:
        """Connect, send the preface and our SETTINGS (``h2.settings.SettingCodes`` -> value); start reading."""
        self.reader, writer = await asyncio.wait_for(asyncio.open_connection(self.host, self.port), timeout)
        self.writer = writer
        config = h2.config.H2Configuration(client_side=True, header_encoding=None)
        connection = h2.connection.H2Connection(config)
        values = {h2.settings.SettingCodes(code): value for code, value in (settings or {}).items()}
        connection.local_settings = h2.settings.Settings(client=True, initial_values=values)
        connection.initiate_connection()
        writer.write(connection.data_to_send())
        self.opened_at = time.perf_counter()
        self._task = asyncio.create_task(self._read())

    @property
    def gone(self) -> bool:
        """The server sent GOAWAY or closed the connection."""
        return self.goaway_at is not None or self.closed_at is not None

    def new_stream(self) -> int:
        """The next client stream id (odd, increasing)."""
        stream, self._next_stream = self._next_stream, self._next_stream + 2
        return stream

    def header_block(self, path: str, extra: list[tuple[str, str]] | None = None) -> bytes:
        """The HPACK block of a gRPC request's headers to ``path``; encoded once, valid on any stream.

        Every field is a literal that is never indexed, so the block does not change the server's
        HPACK table and can be sent again and again.
        """
        fields = [
            (":method", "POST"),
            (":scheme", "http"),
            (":path", path),
            (":authority", self.authority),
            ("content-type", "application/grpc"),
            ("te", "trailers"),
            *(extra or []),
        ]
        return bytes(self._encoder.encode([hpack.NeverIndexedHeaderTuple(n, v) for n, v in fields]))

    def write(self, data: bytes) -> None:
        """Queue ``data`` (frames) for sending; a closed connection drops it."""
        if self.writer is not None and not self.writer.is_closing():
            self.writer.write(data)

    async def drain(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for the socket to take what was written; False if it did not, or is gone."""
        if self.writer is None:
            return False
        try:
            await asyncio.wait_for(self.writer.drain(), timeout)
        except (TimeoutError, OSError):
            return False
        return True

    async def unary(self, path: str, message: bytes, headers: list[tuple[str, str]], timeout: float) -> StreamAnswer:
        """One gRPC call: HEADERS, then ``message`` (already length-prefixed) in DATA frames with END_STREAM.

        The DATA frames keep to the server's flow-control windows, as a client must: a message larger
        than the window waits for WINDOW_UPDATE frames (within ``timeout``, like the answer).
        """
        stream = self.new_stream()
        answer = self.answers.setdefault(stream, StreamAnswer())
        self.write(frame(HEADERS, END_HEADERS, stream, self.header_block(path, headers)))
        self._stream_windows[stream] = self.server_settings.get(INITIAL_WINDOW_SIZE, DEFAULT_WINDOW)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._send_data(stream, message), timeout)
            await asyncio.wait_for(answer.done.wait(), timeout)
        if answer.code is None:
            answer.code = "goaway" if self.gone else f"no answer in {timeout:g} s"
        return answer

    async def _send_data(self, stream: int, message: bytes) -> None:
        largest = self.server_settings.get(MAX_FRAME_SIZE, 16_384)
        sent = 0
        while not self.gone and not self.answers[stream].done.is_set():
            size = min(largest, len(message) - sent, self._window, self._stream_windows[stream])
            if size <= 0 and sent < len(message):
                self._window_opened.clear()
                await self._window_opened.wait()
                continue
            self._window -= size
            self._stream_windows[stream] -= size
            last = sent + size >= len(message)
            self.write(frame(DATA, END_STREAM if last else 0, stream, message[sent : sent + size]))
            sent += size
            if last:
                return
            await asyncio.sleep(0)

    async def wait_gone(self, timeout: float) -> bool:
        """Read on for up to ``timeout`` s; True once the server sent GOAWAY or closed."""
        deadline = time.perf_counter() + timeout
        while not self.gone and time.perf_counter() < deadline:
            await asyncio.sleep(0.02)
        return self.gone

    def outcome(self) -> str:
        """What became of the connection: ``GOAWAY <code> after S s``, ``closed after S s`` or ``open``."""
        if self.goaway_at is not None:
            return f"GOAWAY {self.goaway_code} after {self.goaway_at - self.opened_at:.2f} s"
        if self.closed_at is not None:
            return f"closed after {self.closed_at - self.opened_at:.2f} s"
        return "open"

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        if self.writer is not None:
            await hostile.close_writer(self.writer)
        for answer in self.answers.values():
            answer.done.set()

    async def _read(self) -> None:
        assert self.reader is not None
        try:
            while True:
                head = await self.reader.readexactly(9)
                length = FRAME_HEAD.unpack(b"\0" + head[:3])[0]
                kind, flags, stream = head[3], head[4], FRAME_HEAD.unpack(head[5:])[0] & 0x7FFF_FFFF
                self._on_frame(kind, flags, stream, await self.reader.readexactly(length))
        except (asyncio.IncompleteReadError, OSError):
            self.closed_at = time.perf_counter()
        except hpack.HPACKError:  # a header block we cannot follow: the rest of the connection is unreadable
            self.closed_at = time.perf_counter()
        finally:
            for answer in self.answers.values():
                answer.done.set()
            self._window_opened.set()  # a sender waiting for a window sees the connection gone

    def _on_frame(self, kind: int, flags: int, stream: int, payload: bytes) -> None:
        self.frames_in[kind] = self.frames_in.get(kind, 0) + 1
        if kind == SETTINGS and not flags & ACK:
            for i in range(0, len(payload) - 5, 6):
                code, value = struct.unpack(">HI", payload[i : i + 6])
                if code == INITIAL_WINDOW_SIZE:  # every open stream's window moves by the change
                    change = value - self.server_settings.get(code, DEFAULT_WINDOW)
                    self._stream_windows = {s: w + change for s, w in self._stream_windows.items()}
                    self._window_opened.set()
                self.server_settings[code] = value
            self.write(frame(SETTINGS, ACK, 0))
        elif kind == WINDOW_UPDATE:
            increment = FRAME_HEAD.unpack(payload[:4])[0] & 0x7FFF_FFFF
            if stream == 0:
                self._window += increment
            else:
                self._stream_windows[stream] = self._stream_windows.get(stream, 0) + increment
            self._window_opened.set()
        elif kind == PING and not flags & ACK:
            self.write(frame(PING, ACK, 0, payload))
        elif kind == GOAWAY and self.goaway_at is None:
            self.goaway_at = time.perf_counter()
            self.goaway_code = FRAME_HEAD.unpack(payload[4:8])[0] if len(payload) >= 8 else None
        elif kind in (HEADERS, CONTINUATION):
            self._on_headers(kind, flags, stream, payload)
        elif kind == RST_STREAM and stream in self.answers:
            answer = self.answers[stream]
            answer.code = answer.code or f"RST_STREAM {FRAME_HEAD.unpack(payload[:4])[0]}"
            answer.done.set()
            self._window_opened.set()  # its sender, if waiting for a window, stops

    def _on_headers(self, kind: int, flags: int, stream: int, payload: bytes) -> None:
        if kind == HEADERS:
            payload = _strip_padding_and_priority(flags, payload)
        block = self._block.setdefault(stream, bytearray())
        block += payload
        if not flags & END_HEADERS:
            return
        fields = dict(self._decoder.decode(bytes(self._block.pop(stream)), raw=True))
        answer = self.answers.get(stream)
        if answer is None or b"grpc-status" not in fields:
            return
        answer.code = status_of(fields[b"grpc-status"].decode())
        answer.message_chars = len(fields.get(b"grpc-message", b""))
        answer.done.set()


def _strip_padding_and_priority(flags: int, payload: bytes) -> bytes:
    padded, priority = flags & 0x8, flags & 0x20
    start = (1 if padded else 0) + (5 if priority else 0)
    end = len(payload) - (payload[0] if padded else 0)
    return payload[start:end]
