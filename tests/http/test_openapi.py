"""The served OpenAPI document (``GET /openapi.json``) is valid OpenAPI 3.1 and says what the server does.

Real requests the server accepts, its real answers and its real errors are checked
against the document's own schemas with ``jsonschema``; the API page (``GET /api``)
lists every route; ``scripts/fuzz-api`` runs schemathesis against a live server.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from google.protobuf import json_format
from google.protobuf.message import Message
from http_client import Answer, Client
from hypothesis import HealthCheck, given, settings
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from servers import TEST_LIMITS, grid_state

from boaf.game import deal
from boaf.service.http.openapi import COMMENTS_FILE, JSON, PROTO
from boaf.service.rpc.converters import state_to_proto
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import game_pb2

ROOT = Path(__file__).resolve().parents[2]
SERVICES = [pb.DESCRIPTOR.services_by_name["Boaf"], game_pb2.DESCRIPTOR.services_by_name["Game"]]
DEAL_1 = state_to_proto(deal(1))
DEAL_360528 = grid_state("5S 7D QS 2C/4C AD 8D 5C/QH 7C TC 3C/8C 2D 9C 3D")
DEAL_MINUS_4965 = grid_state("2D JS AS 5C/9D JD 4H 6S/4C TS QS 8S/7D KD 9S TD")  # seconds of search
BASE = "urn:boaf:openapi"

# (method path, request): requests the server answers 200, as clients write them.
REQUESTS: list[tuple[str, Message]] = [
    ("Boaf/Classify", pb.ClassifyRequest(states=[DEAL_1, DEAL_360528])),
    ("Boaf/Features", pb.FeaturesRequest(states=[DEAL_1])),
    ("Boaf/Solve", pb.SolveRequest(state=DEAL_1, algorithm=pb.COMPATIBLE, max_nodes=100_000)),
    ("Boaf/GetServerInfo", pb.GetServerInfoRequest()),
    ("Boaf/AnalyzePuzzle", pb.AnalyzePuzzleRequest(state=grid_state("AC 2C 3C"))),
    ("Boaf/GeneratePuzzle", pb.GeneratePuzzleRequest(cards=4, seed=1)),
    ("Game/Deal", game_pb2.DealRequest(seed=-4965)),
    ("Game/Play", game_pb2.PlayRequest(state=DEAL_1, moves=["9H-9S"])),
    ("Game/Hint", game_pb2.HintRequest(state=DEAL_1, max_nodes_per_move=3)),
]
TOO_MANY = TEST_LIMITS["max_batch_size"] + 1
# (name, method path, JSON body, headers, status): real errors of each kind the edge answers.
ERRORS: list[tuple[str, str, Any, dict[str, str], int]] = [
    ("bad cell", "Boaf/Solve", {"state": {"rows": 1, "cols": 2, "cells": ["AS", "ZZ"]}}, {}, 400),
    ("unknown field", "Boaf/Classify", {"statez": []}, {}, 400),
    ("too many states", "Boaf/Classify", {"states": [json_format.MessageToDict(DEAL_1)] * TOO_MANY}, {}, 400),
    ("bad timeout header", "Game/Deal", {}, {"Connect-Timeout-Ms": "soon"}, 400),
    ("illegal move", "Game/Play", {"state": json_format.MessageToDict(DEAL_1), "moves": ["AS-AS"]}, {}, 400),
    ("deadline", "Boaf/Solve", {"state": json_format.MessageToDict(DEAL_MINUS_4965), "algorithm": "COMPATIBLE"},
     {"Connect-Timeout-Ms": "1"}, 504),
]  # fmt: skip


@pytest.fixture(scope="module")
def document(client: Client) -> dict[str, Any]:
    answer = client.get("/openapi.json")
    assert answer.status == 200 and answer.headers["content-type"] == JSON
    assert isinstance(answer.body, dict)
    return answer.body


def schema_validator(document: dict[str, Any], schema: dict[str, Any]) -> Draft202012Validator:
    """A validator of ``schema``, a part of ``document`` whose ``$ref``s point into the document."""
    registry = Registry().with_resource(BASE, Resource.from_contents(document, default_specification=DRAFT202012))
    return Draft202012Validator({"$id": BASE + "-part", "$ref": BASE + schema["$ref"]}, registry=registry)


def request_schema(document: dict[str, Any], path: str) -> dict[str, Any]:
    schema: dict[str, Any] = document["paths"][path]["post"]["requestBody"]["content"][JSON]["schema"]
    return schema


def answer_schema(document: dict[str, Any], path: str, status: int) -> dict[str, Any]:
    responses = document["paths"][path]["post"]["responses"]
    assert str(status) in responses, f"{path}: status {status} is not documented"
    schema: dict[str, Any] = responses[str(status)]["content"][JSON]["schema"]
    return schema


def assert_matches(document: dict[str, Any], schema: dict[str, Any], value: Any) -> None:
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in schema_validator(document, schema).iter_errors(value)]
    assert errors == [], f"{schema['$ref']}: {errors}"


def test_the_served_document_is_valid_openapi_3_1(document: dict[str, Any]) -> None:
    validate(document)
    assert document["openapi"].startswith("3.1")


def test_every_rpc_of_the_protos_has_its_route_with_its_messages(document: dict[str, Any]) -> None:
    routes = {path for path, item in document["paths"].items() if "requestBody" in item.get("post", {})}
    rpcs = {f"/{service.full_name}/{method.name}" for service in SERVICES for method in service.methods}
    assert routes == rpcs
    # Every RPC is marked NO_SIDE_EFFECTS in proto/, so each has Connect's GET too.
    assert {path for path in rpcs if "get" in document["paths"][path]} == rpcs
    for service in SERVICES:
        for method in service.methods:
            path = f"/{service.full_name}/{method.name}"
            assert request_schema(document, path)["$ref"].endswith(f"/{method.input_type.full_name}.input")
            assert answer_schema(document, path, 200)["$ref"].endswith(f"/{method.output_type.full_name}")


def test_the_limits_of_the_running_server_bound_the_request_schemas(document: dict[str, Any]) -> None:
    classify = document["components"]["schemas"]["boaf.v1.ClassifyRequest.input"]
    batch = classify["properties"]["states"]["anyOf"][0]
    assert batch["maxItems"] == TEST_LIMITS["max_batch_size"]
    solve = document["components"]["schemas"]["boaf.v1.SolveRequest.input"]
    number = solve["properties"]["max_nodes"]["anyOf"][0]
    assert (number["type"], number["maximum"]) == ("integer", TEST_LIMITS["solve_max_nodes"])


def test_the_description_has_the_status_table_and_the_headers_are_documented(document: dict[str, Any]) -> None:
    description = document["info"]["description"]
    for row in ["| 400 | INVALID_ARGUMENT (invalid_argument)", "| 429 | RESOURCE_EXHAUSTED", "| 504 | DEADLINE"]:
        assert row in description
    headers = {p["name"] for p in document["paths"]["/boaf.v1.Boaf/Solve"]["post"]["parameters"]}
    assert headers >= {"Connect-Timeout-Ms", "Connect-Protocol-Version"}
    assert "securitySchemes" not in document["components"]  # this server asks for no token


@pytest.mark.parametrize(("method", "request_message"), REQUESTS, ids=[path for path, _ in REQUESTS])
@pytest.mark.parametrize("names", ["json", "proto"])
def test_real_requests_and_their_answers_match_the_schemas(
    document: dict[str, Any], client: Client, method: str, request_message: Message, names: str
) -> None:
    path = f"/boaf.v1.{method}"
    body = json_format.MessageToDict(request_message, preserving_proto_field_name=names == "proto")
    assert_matches(document, request_schema(document, path), body)
    answer = client.call(method, body)
    assert answer.status == 200, answer.body
    assert_matches(document, answer_schema(document, path, 200), answer.body)


def test_a_schema_refuses_what_the_server_refuses(document: dict[str, Any]) -> None:
    schema = request_schema(document, "/boaf.v1.Boaf/Solve")
    validator = schema_validator(document, schema)
    assert validator.is_valid({"state": None, "maxNodes": "12", "algorithm": 2})
    for refused in [{"stat": {}}, {"maxNodes": 10**20}, {"algorithm": "FASTEST"}, {"maxNodes": True}]:
        assert not validator.is_valid(refused), refused


@pytest.mark.parametrize(("name", "method", "body", "headers", "status"), ERRORS, ids=[e[0] for e in ERRORS])
def test_real_errors_match_the_error_schema_of_their_status(
    document: dict[str, Any], client: Client, name: str, method: str, body: Any, headers: dict[str, str], status: int
) -> None:
    answer = client.call(method, body, headers=headers)
    assert answer.status == status, answer.body
    assert answer.headers["content-type"] == JSON
    assert_matches(document, answer_schema(document, f"/boaf.v1.{method}", status), answer.body)


def test_with_tokens_on_the_document_has_the_bearer_scheme_and_401(strict: Client) -> None:
    document = strict.get("/openapi.json").body  # the document needs no token
    validate(document)
    assert document["components"]["securitySchemes"] == {"bearer": {"type": "http", "scheme": "bearer"}}
    operation = document["paths"]["/boaf.v1.Boaf/Classify"]["post"]
    assert operation["security"] == [{"bearer": []}]
    assert document["paths"]["/healthz"]["get"]["security"] == []
    refused = strict.call("Boaf/Classify", {})
    assert (refused.status, refused.headers["www-authenticate"]) == (401, "Bearer")
    assert_matches(document, answer_schema(document, "/boaf.v1.Boaf/Classify", 401), refused.body)


def plain_route_schema(document: dict[str, Any], path: str, status: int) -> dict[str, Any]:
    schema: dict[str, Any] = document["paths"][path]["get"]["responses"][str(status)]["content"][JSON]["schema"]
    return schema


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_health_and_readiness_answer_as_documented(document: dict[str, Any], client: Client, path: str) -> None:
    answer: Answer = client.get(path)
    assert answer.status == 200
    errors = list(Draft202012Validator(plain_route_schema(document, path, 200)).iter_errors(answer.body))
    assert errors == []


def test_the_api_page_lists_every_route_and_the_playground_links_to_it(
    document: dict[str, Any], client: Client
) -> None:
    page = client.get("/api")
    assert page.status == 200 and page.headers["content-type"].startswith("text/html")
    assert page.headers["content-security-policy"] == "default-src 'self'"
    for path in document["paths"]:
        assert f"<code>POST {path}</code>" in page.body or f"<code>GET {path}</code>" in page.body, path
    assert f"curl -s {client.base}/boaf.v1.Boaf/Classify" in page.body  # the address it was asked at
    assert not re.search(r"<script|https?://(?!127\.0\.0\.1)", page.body)  # offline: nothing loaded from elsewhere
    playground = (ROOT / "service" / "http" / "static" / "index.html").read_text(encoding="utf-8")
    assert 'href="api"' in playground


def send(request: urllib.request.Request) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, answer.headers["content-type"], answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["content-type"], error.read()


def test_a_real_get_request_and_its_answer_match_the_get_operation(document: dict[str, Any], client: Client) -> None:
    operation = document["paths"]["/boaf.v1.Game/Play"]["get"]
    parameters = {p["name"]: p for p in operation["parameters"]}
    body = {"state": json_format.MessageToDict(DEAL_1), "moves": ["9H-9S"]}
    assert_matches(document, parameters["message"]["content"][JSON]["schema"], body)
    query = urllib.parse.urlencode({"connect": "v1", "encoding": "json", "message": json.dumps(body)})
    for name, value in urllib.parse.parse_qsl(query):
        if name != "message":
            assert value in parameters[name]["schema"]["enum"]
    status, media, data = send(urllib.request.Request(f"{client.base}/boaf.v1.Game/Play?{query}"))
    assert (status, media) == (200, JSON)
    assert_matches(document, operation["responses"]["200"]["content"][JSON]["schema"], json.loads(data))


def test_a_too_long_get_is_the_documented_414(document: dict[str, Any], client: Client) -> None:
    message = json.dumps({"seed": 1, "x": "y" * 10_000})
    url = f"{client.base}/boaf.v1.Game/Deal?encoding=json&message={urllib.parse.quote(message)}"
    status, media, data = send(urllib.request.Request(url))
    assert (status, media) == (414, JSON)
    assert_matches(
        document,
        document["paths"]["/boaf.v1.Game/Deal"]["get"]["responses"]["414"]["content"][JSON]["schema"],
        json.loads(data),
    )


def test_binary_protobuf_is_a_documented_request_and_answer(document: dict[str, Any], client: Client) -> None:
    operation = document["paths"]["/boaf.v1.Game/Deal"]["post"]
    assert PROTO in operation["requestBody"]["content"] and PROTO in operation["responses"]["200"]["content"]
    data = game_pb2.DealRequest(seed=1).SerializeToString()
    request = urllib.request.Request(f"{client.base}/boaf.v1.Game/Deal", data=data, headers={"Content-Type": PROTO})
    status, media, answer = send(request)
    assert (status, media) == (200, PROTO)
    assert pb.State.FromString(answer) == state_to_proto(deal(1))
    refused = urllib.request.Request(f"{client.base}/boaf.v1.Game/Deal", data=b"\xff", headers={"Content-Type": PROTO})
    status, media, error = send(refused)
    assert (status, media) == (400, JSON)  # an error is JSON whatever the codec
    assert_matches(document, answer_schema(document, "/boaf.v1.Game/Deal", 400), json.loads(error))


def test_the_documents_example_states_are_states_the_server_accepts(document: dict[str, Any], client: Client) -> None:
    examples = document["components"]["schemas"]["boaf.v1.State.input"]["examples"]
    for state in examples:
        answer = client.call("Game/Play", {"state": state})
        assert answer.status == 200, (state, answer.body)


# scripts/fuzz-api's checks and allowed statuses, in a short run: every operation, 5 derandomized examples.
FUZZ_CONFIG = {"checks": {"not_a_server_error": {"expected-statuses": ["2xx", "3xx", "4xx", "503", "504"]}}}
FUZZ_CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


def test_a_short_schemathesis_run_finds_no_server_error_and_no_mismatch(client: Client) -> None:
    config = SchemathesisConfig.from_dict(FUZZ_CONFIG)
    api = schemathesis.openapi.from_url(f"{client.base}/openapi.json", config=config)
    sent: list[str] = []
    for result in api.get_all_operations():
        operation = result.ok()

        @given(case=operation.as_strategy())
        @settings(
            max_examples=5, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck)
        )
        def answers_as_documented(case: schemathesis.Case) -> None:
            sent.append(case.operation.label)
            case.call_and_validate(base_url=client.base, checks=FUZZ_CHECKS)

        answers_as_documented()
        assert operation.label in sent
    # Loaded from its URL, schemathesis leaves out the route it read the document from; every other one ran.
    paths = client.get("/openapi.json").body["paths"]
    assert set(sent) == {f"{verb.upper()} {path}" for path, item in paths.items() for verb in item} - {
        "GET /openapi.json"
    }


def test_the_committed_proto_comments_are_what_the_script_makes_from_proto(tmp_path: Path) -> None:
    fresh = tmp_path / "comments.json"
    script = ROOT / "scripts" / "generate-proto-comments"
    subprocess.run([sys.executable, str(script), "--out", str(fresh)], check=True, capture_output=True, timeout=120)
    committed = COMMENTS_FILE.read_text(encoding="utf-8")
    assert committed == fresh.read_text(encoding="utf-8"), "stale: run scripts/generate-proto-comments and commit"


def test_the_proto_comments_describe_routes_messages_fields_and_enum_values(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    classify = document["paths"]["/boaf.v1.Boaf/Classify"]["post"]["description"]
    assert classify.startswith("P(solvable) of each state of a batch, from the served ONNX classifier.")
    assert schemas["boaf.v1.Limits"]["description"].startswith("The limits past which a request is OUT_OF_RANGE")
    rows = schemas["boaf.v1.GeneratePuzzleRequest.input"]["properties"]["rows"]["description"]
    assert rows == "The grid; 0 = 4. At most 52 (the cells of a grid)."
    algorithm = schemas["boaf.v1.SolveRequest.input"]["properties"]["algorithm"]["description"]
    assert "ALGORITHM_UNSPECIFIED (0): The server default (ORDERED)." in algorithm
