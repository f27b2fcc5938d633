"""Connect beyond unary JSON: binary protobuf, GET for the methods without side effects, and error details.

Each answer is checked against the gRPC side's answer to the same request; the limits (URL length,
message size, deadlines) hold on the new paths as on JSON POSTs.
"""

from __future__ import annotations

import base64
import gzip
import json
import urllib.parse
import urllib.request
from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from google.protobuf.message import Message
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2
from grpc_status import rpc_status
from http_client import Answer, Client
from servers import GatedLoader, channel_to, grid_state, loopback_settings, start_server

from boaf.game import deal
from boaf.service.grpc.server import BoafServer
from boaf.service.http import HttpServer
from boaf.service.http.app import has_no_side_effects
from boaf.service.http.wire import GET_MAX_URL_BYTES
from boaf.service.rpc.converters import state_to_proto
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc, game_pb2

DEAL_1 = state_to_proto(deal(1))
HARD = grid_state("2D JS AS 5C/9D JD 4H 6S/4C TS QS 8S/7D KD 9S TD")  # seconds of Compatible DFS
CLASSIFY = pb.ClassifyRequest(states=[DEAL_1, state_to_proto(deal(2))])
BAD_STATE = pb.SolveRequest(state=pb.State(rows=1, cols=2, cells=["AS", "ZZ"]))


def send(client: Client, path: str, data: bytes | None = None, headers: dict[str, str] | None = None) -> Answer:
    """POST ``data`` (GET when None) and keep the answer's bytes: binary answers are not JSON."""
    method = "GET" if data is None else "POST"
    request = urllib.request.Request(client.base + path, data=data, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return Answer(response.status, response.read(), {k.lower(): v for k, v in response.headers.items()})
    except urllib.error.HTTPError as error:
        return Answer(error.code, error.read(), {k.lower(): v for k, v in error.headers.items()})


def post_binary(client: Client, method: str, request: Message, headers: dict[str, str] | None = None) -> Answer:
    sent = {"Content-Type": "application/proto", **(headers or {})}
    return send(client, f"/boaf.v1.{method}", request.SerializeToString(), sent)


def get_url(method: str, **query: str) -> str:
    return f"/boaf.v1.{method}?" + urllib.parse.urlencode(query)


def get_binary(client: Client, method: str, request: Message, headers: dict[str, str] | None = None) -> Answer:
    message = base64.urlsafe_b64encode(request.SerializeToString()).decode().rstrip("=")
    return send(client, get_url(method, connect="v1", encoding="proto", base64="1", message=message), None, headers)


def over_grpc(server: BoafServer, method: str, request: Message, timeout: float = 30) -> Message:
    with channel_to(server) as channel:
        answer: Message = getattr(boaf_pb2_grpc.BoafStub(channel), method)(request, timeout=timeout)
        return answer


def error_of(answer: Answer) -> dict[str, Any]:
    assert answer.headers["content-type"] == "application/json"  # errors are JSON whatever the codec
    body: dict[str, Any] = json.loads(answer.body)
    return body


def test_a_binary_call_answers_what_grpc_answers(client: Client, grpc_server: BoafServer) -> None:
    answer = post_binary(client, "Boaf/Classify", CLASSIFY)
    assert (answer.status, answer.headers["content-type"]) == (200, "application/proto")
    assert pb.ClassifyResponse.FromString(answer.body) == over_grpc(grpc_server, "Classify", CLASSIFY)


def test_a_large_binary_answer_is_gzipped_for_a_client_that_accepts_it(client: Client) -> None:
    request = game_pb2.DealRequest(seed=7, rows=4, cols=13)
    answer = send(client, "/boaf.v1.Game/Deal", request.SerializeToString(), {"Content-Type": "application/proto"})
    state = pb.State.FromString(answer.body)
    many = pb.FeaturesRequest(states=[state] * 40)
    zipped = post_binary(client, "Boaf/Features", many, {"Accept-Encoding": "gzip"})
    plain = post_binary(client, "Boaf/Features", many)
    assert zipped.headers.get("content-encoding") == "gzip" and "content-encoding" not in plain.headers
    assert gzip.decompress(zipped.body) == plain.body
    assert len(pb.FeaturesResponse.FromString(plain.body).vectors) == 40


# (name, body, message)
BAD_BINARY: list[tuple[str, bytes, str]] = [
    ("truncated field", b"\x0a\x05\x08", "request body is not a binary boaf.v1.SolveRequest (3 bytes): "),
    ("wrong wire type", b"\x0d\x01", "state: a 32-bit value (wire type 5)"),  # the wire scan names the field
    ("bad varint", b"\x10" + b"\xff" * 11, "request body is not a binary boaf.v1.SolveRequest (12 bytes): "),
]


@pytest.mark.parametrize(("body", "message"), [c[1:] for c in BAD_BINARY], ids=[c[0] for c in BAD_BINARY])
def test_bytes_that_are_not_the_request_message_are_invalid_argument(client: Client, body: bytes, message: str) -> None:
    answer = send(client, "/boaf.v1.Boaf/Solve", body, {"Content-Type": "application/proto"})
    error = error_of(answer)
    assert (answer.status, error["code"]) == (400, "invalid_argument")
    assert error["message"].startswith(message), error


def test_a_binary_body_past_the_size_limit_is_out_of_range(client: Client, grpc_server: BoafServer) -> None:
    limit = grpc_server.settings.max_message_bytes
    states = [pb.State(rows=1, cols=1, cells=["x" * 1000])] * (limit // 1000 + 1)
    answer = post_binary(client, "Boaf/Classify", pb.ClassifyRequest(states=states))
    error = error_of(answer)
    assert (answer.status, error["code"]) == (400, "out_of_range")
    assert "(BOAF_MAX_MESSAGE_BYTES)" in error["message"]


def test_an_unknown_content_type_names_both_codecs(client: Client) -> None:
    answer = send(client, "/boaf.v1.Boaf/Solve", b"{}", {"Content-Type": "application/grpc-web"})
    error = error_of(answer)
    assert (answer.status, error["code"]) == (400, "invalid_argument")
    assert error["message"] == "content-type must be application/json or application/proto, got 'application/grpc-web'"


def test_a_gzipped_request_body_is_read_in_either_codec(client: Client, grpc_server: BoafServer) -> None:
    expected = over_grpc(grpc_server, "Classify", CLASSIFY)
    packed = gzip.compress(CLASSIFY.SerializeToString())
    binary = send(
        client, "/boaf.v1.Boaf/Classify", packed, {"Content-Type": "application/proto", "Content-Encoding": "gzip"}
    )
    assert pb.ClassifyResponse.FromString(binary.body) == expected
    text = gzip.compress(json.dumps(json_format.MessageToDict(CLASSIFY)).encode())
    as_json = send(
        client, "/boaf.v1.Boaf/Classify", text, {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    )
    assert json_format.Parse(as_json.body, pb.ClassifyResponse()) == expected


def test_a_gzipped_body_past_the_size_limit_once_inflated_is_out_of_range(
    client: Client, grpc_server: BoafServer
) -> None:
    limit = grpc_server.settings.max_message_bytes
    bomb = gzip.compress(b" " * (limit * 50))  # ~50 KiB on the wire: only the first limit + 1 bytes are inflated
    answer = send(client, "/boaf.v1.Boaf/Solve", bomb, {"Content-Type": "application/json", "Content-Encoding": "gzip"})
    error = error_of(answer)
    assert (answer.status, error["code"]) == (400, "out_of_range")
    assert error["message"] == (
        f"request: a message of more than {limit:,} bytes once decompressed exceeds the limit of {limit:,} bytes "
        "(BOAF_MAX_MESSAGE_BYTES)"
    )


# (name, Content-Encoding, body, message)
BAD_COMPRESSION: list[tuple[str, str, bytes, str]] = [
    ("unknown encoding", "br", b"{}", "content-encoding must be identity or gzip, got 'br'"),
    ("not gzip", "gzip", b"{}",
     "request body is not gzip (Content-Encoding: gzip): Error -3 while decompressing data: incorrect header check"),
    ("cut gzip", "gzip", gzip.compress(b"{}")[:-4],
     "request body is not one whole gzip stream (Content-Encoding: gzip)"),
    ("two streams", "gzip", gzip.compress(b"{}") * 2,
     "request body is not one whole gzip stream (Content-Encoding: gzip)"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("encoding", "body", "message"), [c[1:] for c in BAD_COMPRESSION], ids=[c[0] for c in BAD_COMPRESSION]
)
def test_a_body_that_is_not_what_its_content_encoding_says_is_invalid_argument(
    client: Client, encoding: str, body: bytes, message: str
) -> None:
    answer = send(
        client, "/boaf.v1.Boaf/Solve", body, {"Content-Type": "application/json", "Content-Encoding": encoding}
    )
    assert (answer.status, error_of(answer)) == (400, {"code": "invalid_argument", "message": message})


# ---------------------------------------------------------------- GET


def test_every_rpc_the_proto_marks_without_side_effects_answers_get() -> None:
    services = [pb.DESCRIPTOR.services_by_name["Boaf"], game_pb2.DESCRIPTOR.services_by_name["Game"]]
    assert all(has_no_side_effects(method) for service in services for method in service.methods)
    assert not has_no_side_effects(health_pb2.DESCRIPTOR.services_by_name["Health"].methods_by_name["Check"])


def test_get_in_json_and_in_binary_answers_what_post_answers(client: Client, grpc_server: BoafServer) -> None:
    expected = over_grpc(grpc_server, "Classify", CLASSIFY)
    text = json.dumps(json_format.MessageToDict(CLASSIFY))
    as_json = send(client, get_url("Boaf/Classify", encoding="json", message=text))
    assert (as_json.status, as_json.headers["content-type"]) == (200, "application/json")
    assert json_format.Parse(as_json.body, pb.ClassifyResponse()) == expected
    as_binary = get_binary(client, "Boaf/Classify", CLASSIFY)
    assert (as_binary.status, as_binary.headers["content-type"]) == (200, "application/proto")
    assert pb.ClassifyResponse.FromString(as_binary.body) == expected


def test_a_gzipped_get_message_is_read(client: Client) -> None:
    packed = base64.urlsafe_b64encode(gzip.compress(b'{"seed": 3}')).decode()
    answer = send(client, get_url("Game/Deal", encoding="json", base64="1", compression="gzip", message=packed))
    assert answer.status == 200
    assert json_format.Parse(answer.body, pb.State()) == state_to_proto(deal(3))


def test_a_get_url_past_the_limit_is_out_of_range_414(client: Client, grpc_server: BoafServer) -> None:
    text = json.dumps({"states": [json_format.MessageToDict(DEAL_1)] * 60})
    path = get_url("Boaf/Classify", encoding="json", message=text)
    assert len(path) > GET_MAX_URL_BYTES
    answer = send(client, path)
    error = error_of(answer)
    assert (answer.status, error["code"]) == (414, "out_of_range")
    limit = f"{GET_MAX_URL_BYTES:,} bytes"
    assert (
        error["message"]
        == f"GET: a URL of {len(path):,} bytes exceeds the limit of {limit}; send this request with POST"
    )


def test_a_get_message_past_the_size_limit_once_unzipped_is_out_of_range(
    client: Client, grpc_server: BoafServer
) -> None:
    limit = grpc_server.settings.max_message_bytes
    packed = base64.urlsafe_b64encode(gzip.compress(b" " * (limit + 1))).decode()
    path = get_url("Boaf/Classify", encoding="json", base64="1", compression="gzip", message=packed)
    assert len(path) < GET_MAX_URL_BYTES
    answer = send(client, path)
    error = error_of(answer)
    assert (answer.status, error["code"]) == (400, "out_of_range")
    assert error["message"].startswith(f"request: a message of more than {limit:,} bytes once decompressed")


def test_a_get_honours_the_clients_deadline(client: Client) -> None:
    request = pb.SolveRequest(state=HARD, algorithm=pb.COMPATIBLE)
    answer = get_binary(client, "Boaf/Solve", request, {"Connect-Timeout-Ms": "1"})
    assert (answer.status, error_of(answer)["code"]) == (504, "deadline_exceeded")


# (name, query, message)
BAD_GETS: list[tuple[str, dict[str, str], str]] = [
    ("no encoding", {"message": "{}"}, "GET: encoding must be json or proto, got ''"),
    ("unknown encoding", {"encoding": "xml", "message": "{}"}, "GET: encoding must be json or proto, got 'xml'"),
    ("no message", {"encoding": "json"}, "GET: the query has no message parameter (the request, encoded)"),
    ("bad base64", {"encoding": "proto", "base64": "1", "message": "a*b"},
     "GET: message is not URL-safe base64 (base64=1)"),
    ("bad base64 flag", {"encoding": "json", "base64": "yes", "message": "{}"},
     "GET: base64 must be 1 or absent, got 'yes'"),
    ("unknown compression", {"encoding": "json", "compression": "br", "message": "{}"},
     "GET: compression must be identity or gzip, got 'br'"),
    ("not gzip", {"encoding": "json", "compression": "gzip", "message": "{}"},
     "GET: message is not gzip (compression=gzip): Error -3 while decompressing data: incorrect header check"),
    ("other protocol", {"connect": "v2", "encoding": "json", "message": "{}"},
     "GET: connect='v2', this server speaks connect=v1"),
    ("bad JSON", {"encoding": "json", "message": '{"seed": "x"}'},
     "request body: Failed to parse seed field: invalid literal for int() with base 10: 'x'."),
]  # fmt: skip


@pytest.mark.parametrize(("query", "message"), [c[1:] for c in BAD_GETS], ids=[c[0] for c in BAD_GETS])
def test_a_bad_get_query_is_invalid_argument_naming_the_parameter(
    client: Client, query: dict[str, str], message: str
) -> None:
    answer = send(client, get_url("Game/Deal", **query))
    assert (answer.status, error_of(answer)) == (400, {"code": "invalid_argument", "message": message})


def test_other_http_methods_are_405_with_the_methods_allowed(client: Client) -> None:
    answer = client.request("PUT", "/boaf.v1.Boaf/Solve")
    assert (answer.status, answer.body["code"], answer.headers["allow"]) == (405, "unimplemented", "GET, POST")
    assert answer.body["message"] == "PUT: /boaf.v1.Boaf/Solve answers GET and POST only"


# ---------------------------------------------------------------- error details


def connect_details(error: dict[str, Any]) -> list[Message]:
    """The details of a Connect error, decoded from their base64 values (padding restored)."""
    kinds = {"google.rpc.BadRequest": error_details_pb2.BadRequest, "google.rpc.RetryInfo": error_details_pb2.RetryInfo}
    decoded = []
    for detail in error.get("details", []):
        value = base64.b64decode(detail["value"] + "=" * (-len(detail["value"]) % 4))
        message = kinds[detail["type"]].FromString(value)
        assert json_format.MessageToDict(message) == detail["debug"]
        decoded.append(message)
    return decoded


def grpc_details(error: grpc.RpcError) -> list[Message]:
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None, "no grpc-status-details-bin trailer"
    kinds = {"google.rpc.BadRequest": error_details_pb2.BadRequest, "google.rpc.RetryInfo": error_details_pb2.RetryInfo}
    decoded = []
    for packed in status.details:
        message = kinds[packed.TypeName()]()
        packed.Unpack(message)
        decoded.append(message)
    return decoded


def test_a_bad_field_has_the_same_bad_request_details_on_both_edges(client: Client, grpc_server: BoafServer) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        over_grpc(grpc_server, "Solve", BAD_STATE)
    answer = post_binary(client, "Boaf/Solve", BAD_STATE)
    error = error_of(answer)
    assert (error["code"], error["message"]) == ("invalid_argument", caught.value.details())
    assert connect_details(error) == grpc_details(caught.value)
    [bad_request] = connect_details(error)
    assert isinstance(bad_request, error_details_pb2.BadRequest)
    [violation] = bad_request.field_violations
    assert violation.field == "state" and caught.value.details() == f"state: {violation.description}"


def test_a_limit_names_its_field_in_the_details(client: Client, grpc_server: BoafServer) -> None:
    over = pb.SolveRequest(state=DEAL_1, max_nodes=grpc_server.settings.solve_max_nodes + 1)
    with pytest.raises(grpc.RpcError) as caught:
        over_grpc(grpc_server, "Solve", over)
    error = error_of(post_binary(client, "Boaf/Solve", over))
    assert caught.value.code() is grpc.StatusCode.OUT_OF_RANGE and error["code"] == "out_of_range"
    details = grpc_details(caught.value)
    assert connect_details(error) == details
    assert [v.field for d in details for v in d.field_violations] == ["max_nodes"]  # type: ignore[attr-defined]


def test_unavailable_carries_retry_info_on_both_edges() -> None:
    loader = GatedLoader()
    server = start_server(loopback_settings(http_port=0), loader)
    web = HttpServer(server)
    web.start()
    try:
        with pytest.raises(grpc.RpcError) as caught:
            over_grpc(server, "Classify", CLASSIFY)
        answer = post_binary(Client(f"http://127.0.0.1:{web.port}"), "Boaf/Classify", CLASSIFY)
        error = error_of(answer)
        assert (answer.status, error["code"]) == (503, "unavailable")
        assert caught.value.code() is grpc.StatusCode.UNAVAILABLE
        [retry] = connect_details(error)
        assert grpc_details(caught.value) == [retry]
        assert isinstance(retry, error_details_pb2.RetryInfo)
        assert str(retry.retry_delay.seconds) == answer.headers["retry-after"]
        trailers = dict(caught.value.trailing_metadata())  # type: ignore[attr-defined]
        assert trailers["retry-after"] == answer.headers["retry-after"]
    finally:
        loader.release()
        web.stop()
        server.stop(0)
