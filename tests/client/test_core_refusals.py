"""gRPC core's own refusals, which boaf's code never sees, as the client reports them: codes mean what the docs say.

Past ``BOAF_MAX_MESSAGE_BYTES`` on the wire (``HARD_MESSAGE_FACTOR`` is 1), gRPC core refuses
an uncompressed message from its length prefix, before the server's gate reads it, with
RESOURCE_EXHAUSTED ("Received message larger than max"), which boaf reserves for "busy, retry
later". ``Client`` reports it as what it is, a ``LimitExceeded`` with code OUT_OF_RANGE, and
does not retry it.
"""

from __future__ import annotations

import grpc
import pytest
from servers import TEST_LIMITS

from boaf.client import Busy, Client, LimitExceeded, error_of
from boaf.service.app import BoafService
from boaf.service.grpc.interceptors import HARD_MESSAGE_FACTOR
from boaf.v1 import boaf_pb2 as pb

CODE = grpc.StatusCode

CORE_MESSAGES = [
    "SERVER: Received message larger than max (16777217 vs. 16777216)",
    "Received message larger than max (70000000 vs. 67108864)",
    "Sent message larger than max (5000000 vs. 4194304)",
    "Decompressed message larger than max",
]


@pytest.mark.parametrize("message", CORE_MESSAGES)
def test_a_size_refusal_of_grpc_core_is_out_of_range(message: str) -> None:
    error = error_of(CODE.RESOURCE_EXHAUSTED, message, attempts=1)
    assert isinstance(error, LimitExceeded)
    assert error.code == CODE.OUT_OF_RANGE
    assert message in error.message and "BOAF_MAX_MESSAGE_BYTES" in error.message


def test_busy_stays_busy() -> None:
    error = error_of(CODE.RESOURCE_EXHAUSTED, "64 calls already in flight (BOAF_MAX_CONCURRENT_RPCS); retry later")
    assert isinstance(error, Busy)
    assert error.code == CODE.RESOURCE_EXHAUSTED


def test_a_request_past_the_limit_is_a_limit_exceeded_after_one_attempt(server: BoafService) -> None:
    huge = "X" * (HARD_MESSAGE_FACTOR * TEST_LIMITS["max_message_bytes"])
    request = pb.ClassifyRequest(states=[pb.State(rows=1, cols=1, cells=[huge])])
    with Client(f"127.0.0.1:{server.port}") as client, pytest.raises(LimitExceeded) as caught:
        client._call(client._boaf.Classify, request, 20)
    assert (caught.value.code, caught.value.attempts) == (CODE.OUT_OF_RANGE, 1)
    assert "larger than max" in caught.value.message
