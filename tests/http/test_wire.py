"""JSON to messages and back on the HTTP edge: a large batch is read in chunks that a call's end stops."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
from google.protobuf import json_format

from boaf.game import random_state
from boaf.service.core.errors import Cancelled, DeadlineExceeded
from boaf.service.http.statuses import CallAborted
from boaf.service.http.wire import ENCODE_CHUNK, GZIP_CHUNK, accepts_gzip, gzipped, parse_request
from boaf.service.rpc.call import Call
from boaf.service.rpc.converters import state_to_proto
from boaf.v1 import boaf_pb2 as pb

SIZE = 3 * ENCODE_CHUNK + 7  # three whole chunks and a part


def batch_body(n: int) -> tuple[bytes, pb.ClassifyRequest]:
    rng = np.random.default_rng(21)
    request = pb.ClassifyRequest(states=[state_to_proto(random_state(rng, 4, 13, 52)) for _ in range(n)])
    return json_format.MessageToJson(request).encode(), request


def test_a_batch_read_in_chunks_is_the_message_parsed_whole() -> None:
    body, request = batch_body(SIZE)
    assert parse_request(body, pb.ClassifyRequest(), Call("test", None)) == request
    assert parse_request(body, pb.ClassifyRequest()) == request  # no call: parsed whole


def test_a_bad_state_deep_in_a_batch_is_named_by_its_index() -> None:
    body, _ = batch_body(SIZE)
    value = json.loads(body)
    value["states"][1234]["rows"] = "four"
    with pytest.raises(CallAborted) as caught:
        parse_request(json.dumps(value).encode(), pb.ClassifyRequest(), Call("test", None))
    assert caught.value.message.startswith("request body: states[1234]: ")


def test_reading_stops_between_chunks_once_the_deadline_has_passed_or_the_client_is_gone() -> None:
    body, _ = batch_body(SIZE)
    with pytest.raises(DeadlineExceeded, match="deadline passed while its request was read"):
        parse_request(body, pb.ClassifyRequest(), Call("test", 1e-9))
    gone = Call("test", None)
    gone.finish()
    with pytest.raises(Cancelled, match="cancelled while its request was read"):
        parse_request(body, pb.ClassifyRequest(), gone)


@pytest.mark.parametrize(
    ("header", "accepted"),
    [
        ("gzip", True),
        ("gzip, deflate, br", True),
        ("br;q=1.0, GZIP;q=0.5", True),
        ("*", True),
        ("gzip;q=0", False),
        ("gzip;q=0.0", False),
        ("gzip;q=nope", False),
        ("deflate, br", False),
        ("", False),
    ],
)
def test_gzip_is_used_only_when_the_client_accepts_it(header: str, accepted: bool) -> None:
    assert accepts_gzip(header) is accepted


def test_an_answer_is_gzipped_in_chunks_that_a_calls_end_stops() -> None:
    data = bytes(range(256)) * (3 * GZIP_CHUNK // 256 + 5)  # three whole chunks and a part
    assert gzip.decompress(gzipped(data, Call("test", None))) == data
    with pytest.raises(DeadlineExceeded, match="deadline passed while its answer was compressed"):
        gzipped(data, Call("test", 1e-9))
    gone = Call("test", None)
    gone.finish()
    with pytest.raises(Cancelled, match="cancelled while its answer was compressed"):
        gzipped(data, gone)
