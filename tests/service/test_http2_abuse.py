"""HTTP/2 abuse on one gRPC connection, while a well-behaved client calls on another.

A real ``boaf serve`` process; the attacker speaks HTTP/2 frame by frame (``hyperframe``
and ``hpack``, the frame and header layers of the ``h2`` package), so it can send what no
gRPC client would: rapid resets (HEADERS then RST_STREAM, 10,000 a second), floods of
SETTINGS, PING and CONTINUATION frames, and a zero flow-control window. The well-behaved
client makes single-state Classify calls with a 2 s deadline, 20 a second, on a
connection of its own, and must see no failed call. What each attack gets from the
server is asserted where gRPC core answers it at the connection (PING: GOAWAY; rapid
reset: the streams past the limit refused), and printed otherwise (rapid reset, SETTINGS
and CONTINUATION floods keep their connection open); docs/service.md ("HTTP/2 frames")
has the figures. Bounds are generous: no latency is asserted.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import grpc
import hpack
import pytest
from hyperframe.frame import (
    ContinuationFrame,
    DataFrame,
    Frame,
    GoAwayFrame,
    HeadersFrame,
    PingFrame,
    RstStreamFrame,
    SettingsFrame,
)
from servers import grid_state, serve_process

from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
CANCEL, REFUSED_STREAM, ENHANCE_YOUR_CALM = 0x8, 0x7, 0xB
ATTACK_S = 5.0
RESETS_PER_S = 10_000
STATE = grid_state("AS 2S 3S/4H 5H 6H/7D 8D 9D")


@dataclass
class Seen:
    """What the attacker got back on its connection."""

    goaway_code: int | None = None
    goaway_debug: bytes = b""
    refused_streams: int = 0
    closed: threading.Event = field(default_factory=threading.Event)


class Attacker:
    """One HTTP/2 connection that sends raw frames, and reads (and ACKs the SETTINGS of) what comes back."""

    def __init__(self, address: str, settings: dict[int, int] | None = None) -> None:
        host, port = address.rsplit(":", 1)
        self.authority = address
        self.sock = socket.create_connection((host, int(port)))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.seen = Seen()
        self.sent = 0
        self.sock.sendall(PREFACE + SettingsFrame(0, settings=settings or {}).serialize())
        threading.Thread(target=self._read, daemon=True).start()

    def send(self, data: bytes) -> bool:
        try:
            self.sock.sendall(data)
        except OSError:
            self.seen.closed.set()
            return False
        return True

    def headers(self, stream: int, path: str, *, end_headers: bool = True) -> HeadersFrame:
        pairs = [(":method", "POST"), (":scheme", "http"), (":path", path), (":authority", self.authority),
                 ("content-type", "application/grpc"), ("te", "trailers")]  # fmt: skip
        # Never indexed: every copy of the block decodes the same, whatever the server's table holds.
        block = hpack.Encoder().encode([hpack.NeverIndexedHeaderTuple(k, v) for k, v in pairs])
        return HeadersFrame(stream, block, flags=["END_HEADERS"] if end_headers else [])

    def flood(self, batch: bytes, frames: int, seconds: float, per_s: float = 0.0) -> None:
        """Send ``batch`` (``frames`` frames) again and again for ``seconds``, or until closed; at most ``per_s``."""
        started = time.monotonic()
        while time.monotonic() - started < seconds and not self.seen.closed.is_set():
            if not self.send(batch):
                return
            self.sent += frames
            ahead = self.sent / per_s - (time.monotonic() - started) if per_s else 0.0
            if ahead > 0:
                time.sleep(ahead)

    def close(self) -> None:
        self.sock.close()

    def _read(self) -> None:
        buffer = b""
        while True:
            try:
                data = self.sock.recv(65536)
            except OSError:
                data = b""
            if not data:
                self.seen.closed.set()
                return
            buffer += data
            while len(buffer) >= 9:
                frame, length = Frame.parse_frame_header(memoryview(buffer[:9]))
                if len(buffer) < 9 + length:
                    break
                frame.parse_body(memoryview(buffer[9 : 9 + length]))
                buffer = buffer[9 + length :]
                self._saw(frame)

    def _saw(self, frame: Frame) -> None:
        if isinstance(frame, SettingsFrame) and "ACK" not in frame.flags:
            self.send(SettingsFrame(0, flags=["ACK"]).serialize())
        elif isinstance(frame, GoAwayFrame) and self.seen.goaway_code is None:
            self.seen.goaway_code, self.seen.goaway_debug = frame.error_code, bytes(frame.additional_data)
        elif isinstance(frame, RstStreamFrame) and frame.error_code == REFUSED_STREAM:
            self.seen.refused_streams += 1


class WellBehaved:
    """Single-state Classify calls, 2 s deadline, 20 a second, on a connection of their own; counts failures."""

    def __init__(self, address: str) -> None:
        self.channel = grpc.insecure_channel(address)
        self.stub = boaf_pb2_grpc.BoafStub(self.channel)
        self.ok = 0
        self.failed: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        due = time.monotonic()
        while not self._stop.is_set():
            try:
                self.stub.Classify(pb.ClassifyRequest(states=[STATE]), timeout=2.0)
                self.ok += 1
            except grpc.RpcError as error:
                self.failed.append(error.code().name)
            due += 0.05
            time.sleep(max(0.0, due - time.monotonic()))

    def __enter__(self) -> WellBehaved:
        self.stub.Classify(pb.ClassifyRequest(states=[STATE]), timeout=30)  # connected and warm before the attack
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(30)
        self.channel.close()


@pytest.fixture(scope="module")
def address() -> Iterator[str]:
    process, address = serve_process({})
    try:
        yield address
    finally:
        process.terminate()
        process.wait(60)


@contextlib.contextmanager
def attack(address: str, **settings: int) -> Iterator[tuple[Attacker, WellBehaved]]:
    with WellBehaved(address) as client:
        attacker = Attacker(address, {int(k.removeprefix("s")): v for k, v in settings.items()})
        try:
            yield attacker, client
            time.sleep(0.5)  # calls under way when the attack ended count too
        finally:
            attacker.close()
    assert client.failed == [], f"{len(client.failed)} of {client.ok + len(client.failed)} calls failed"
    assert client.ok > 0


def test_rapid_reset_leaves_other_clients_whole_and_its_streams_past_the_limit_are_refused(address: str) -> None:
    with attack(address) as (attacker, _):
        pairs, stream = 400, 1  # each write more streams than a connection may hold (208): some are refused
        started = time.monotonic()
        while time.monotonic() - started < ATTACK_S and not attacker.seen.closed.is_set():
            batch = b"".join(
                attacker.headers(s, "/boaf.v1.Boaf/Classify").serialize() + RstStreamFrame(s, CANCEL).serialize()
                for s in range(stream, stream + 2 * pairs, 2)
            )
            stream += 2 * pairs
            if not attacker.send(batch):
                break
            attacker.sent += pairs
            ahead = attacker.sent / RESETS_PER_S - (time.monotonic() - started)
            if ahead > 0:
                time.sleep(ahead)
        print(f"rapid reset: {attacker.sent} resets, closed by the server: {attacker.seen.closed.is_set()}")
    # grpc.max_concurrent_streams took effect: core refused the streams past it, counting reset ones.
    assert attacker.seen.refused_streams > 0


def test_a_ping_flood_gets_goaway_too_many_pings(address: str) -> None:
    with attack(address) as (attacker, _):
        attacker.flood(PingFrame(0, opaque_data=b"\0" * 8).serialize() * 200, 200, ATTACK_S)
        assert attacker.seen.closed.wait(10) or attacker.seen.goaway_code is not None
    assert (attacker.seen.goaway_code, attacker.seen.goaway_debug) == (ENHANCE_YOUR_CALM, b"too_many_pings")


def test_a_continuation_flood_leaves_other_clients_whole(address: str) -> None:
    # One header block that never ends: core drops what passes its metadata limit and reads on; the
    # connection stays open (docs/service.md, "HTTP/2 frames").
    with attack(address) as (attacker, _):
        attacker.send(attacker.headers(1, "/boaf.v1.Boaf/Classify", end_headers=False).serialize())
        pad = hpack.Encoder().encode([hpack.NeverIndexedHeaderTuple("x-pad", "a" * 1000)])
        attacker.flood(ContinuationFrame(1, pad).serialize() * 16, 16, ATTACK_S)
        print(f"CONTINUATION flood: {attacker.sent} frames, closed by the server: {attacker.seen.closed.is_set()}")


def test_a_settings_flood_leaves_other_clients_whole(address: str) -> None:
    # Core answers each with an ACK and stops reading while too many ACKs are unsent: the flood costs
    # CPU, not memory, and the connection stays open (docs/service.md, "HTTP/2 frames").
    with attack(address) as (attacker, _):
        attacker.flood(SettingsFrame(0, settings={4: 65535}).serialize() * 200, 200, ATTACK_S)
        print(f"SETTINGS flood: {attacker.sent} frames, closed by the server: {attacker.seen.closed.is_set()}")


def test_a_zero_window_stall_holds_no_more_than_its_calls_until_the_answer_timeout() -> None:
    # The attacker's window is 0: the answers to its calls can never be sent. They hold their call
    # places until the answer timeout (BOAF_IDLE_TIMEOUT_S) cancels them; then other clients get in.
    idle_timeout_s = 2.0
    process, address = serve_process({"BOAF_IDLE_TIMEOUT_S": str(idle_timeout_s), "BOAF_MAX_CONCURRENT_RPCS": "8"})
    try:
        attacker = Attacker(address, {SettingsFrame.INITIAL_WINDOW_SIZE: 0})
        empty = b"\0\0\0\0\0"  # one gRPC message: an empty GetServerInfoRequest
        calls = b"".join(
            attacker.headers(s, "/boaf.v1.Boaf/GetServerInfo").serialize()
            + DataFrame(s, empty, flags=["END_STREAM"]).serialize()
            for s in range(1, 40, 2)
        )
        attacker.send(calls)
        with grpc.insecure_channel(address) as channel:
            stub = boaf_pb2_grpc.BoafStub(channel)
            give_up = time.monotonic() + idle_timeout_s + 30
            while True:
                try:
                    stub.Classify(pb.ClassifyRequest(states=[STATE]), timeout=2.0)
                    break
                except grpc.RpcError as error:
                    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                    assert time.monotonic() < give_up, "the stalled calls never let go of their places"
                    time.sleep(0.2)
        attacker.close()
    finally:
        process.terminate()
        process.wait(60)
