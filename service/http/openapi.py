"""The OpenAPI 3.1 description of the HTTP edge, made from the proto descriptors when the server starts.

Nothing here is written per message: ``openapi_document`` walks the services the
app serves (``app.endpoints`` makes their routes the same way) and turns every
message into JSON Schema in the proto3 JSON mapping:

- **Requests** (``<message>.input``) take each field by its lowerCamelCase JSON
  name or its proto name, ``null`` for a default, 32- and 64-bit
  integers as numbers or decimal strings, enums by name or number; an unknown
  field is refused, as the edge's parser does. A field bounded by a server limit
  (``REQUEST_LIMITS``: the request fields of ``boaf.service.core.limits``, valued from
  the running ``Settings``) or by the grid's 52 cells says so with ``maximum`` / ``maxItems``.
- **Answers** (``<message>``) are what ``wire.encode_answer`` writes: JSON names
  only, every field without presence always there, 64-bit integers as strings,
  enums as names, doubles as numbers (or ``"NaN"``, ``"Infinity"``).
- ``google.protobuf.Struct`` is any JSON object, ``Value`` any JSON value.

Every RPC is ``POST /<package>.<Service>/<Method>`` with a JSON or binary
protobuf (``application/proto``) body, and ``GET`` with Connect's query
parameters when the proto marks it ``NO_SIDE_EFFECTS``; each has the
``Connect-Timeout-Ms`` and ``Connect-Protocol-Version`` headers, Connect's error
body (``ConnectError``, JSON whatever the codec) on every error status, and the
bearer scheme when tokens are on. The code-to-status table of ``statuses.HTTP_STATUS`` is in the description.
The health, readiness and document routes (and the pages, when served) are there
too. The document depends on the settings only through the limits and tokens.
"""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor, MethodDescriptor, ServiceDescriptor

from boaf.game.state import MAX_CELLS
from boaf.models.provenance import package_version
from boaf.service.core.errors import Code
from boaf.service.core.limits import MAX_MESSAGE_BYTES, Limit, request_limits
from boaf.service.core.settings import Settings, env_name
from boaf.service.http.statuses import HTTP_STATUS, connect_code
from boaf.service.http.wire import GET_MAX_URL_BYTES

OPENAPI_VERSION = "3.1.0"
JSON = "application/json"
PROTO = "application/proto"
TIMEOUT_HEADER = "Connect-Timeout-Ms"
PROTOCOL_HEADER = "Connect-Protocol-Version"
ERROR = "ConnectError"
SCHEMAS = "#/components/schemas/"
INPUT = ".input"  # the suffix of a message's request form
COMMENTS_FILE = Path(__file__).resolve().parent / "proto_comments.json"  # scripts/generate-proto-comments

# Request fields a server limit bounds: (message, field) -> its limit; more is OUT_OF_RANGE.
REQUEST_LIMITS: dict[tuple[str, str], Limit] = request_limits()
# Fields the grid bounds, whatever the settings: a grid has at most MAX_CELLS cells.
GRID_FIELDS = {("boaf.v1.State", name) for name in ("rows", "cols", "cells", "sizes")} | {
    ("boaf.v1.GeneratePuzzleRequest", name) for name in ("cards", "rows", "cols")
}

# Examples of messages, for people and for a fuzzer's first cases (most random states are refused).
EXAMPLES: dict[str, list[dict[str, Any]]] = {
    "boaf.v1.State": [
        {"rows": 2, "cols": 2, "cells": ["5S", "7D", "4C", "AD"]},
        {"rows": 1, "cols": 3, "cells": ["AC", "", "3C"], "sizes": [2, 0, 1]},
    ],
}

_T = FieldDescriptor
INTEGER_RANGES: dict[int, tuple[int, int]] = {
    _T.TYPE_INT32: (-(2**31), 2**31 - 1),
    _T.TYPE_SINT32: (-(2**31), 2**31 - 1),
    _T.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    _T.TYPE_UINT32: (0, 2**32 - 1),
    _T.TYPE_FIXED32: (0, 2**32 - 1),
    _T.TYPE_INT64: (-(2**63), 2**63 - 1),
    _T.TYPE_SINT64: (-(2**63), 2**63 - 1),
    _T.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    _T.TYPE_UINT64: (0, 2**64 - 1),
    _T.TYPE_FIXED64: (0, 2**64 - 1),
}
WIDE = {_T.TYPE_INT64, _T.TYPE_SINT64, _T.TYPE_SFIXED64, _T.TYPE_UINT64, _T.TYPE_FIXED64}
NON_FINITE = ["NaN", "Infinity", "-Infinity"]
# Well-known types with a JSON form of their own.
FREE_JSON: dict[str, dict[str, Any]] = {
    "google.protobuf.Struct": {"type": "object", "description": "Any JSON object."},
    "google.protobuf.Value": {"description": "Any JSON value."},
    "google.protobuf.ListValue": {"type": "array", "description": "Any JSON array."},
}

# The codes a call may end with, beside OK, and what each means here.
CALL_ERRORS: dict[Code, str] = {
    Code.INVALID_ARGUMENT: "bad input: the message names the field, state or cell at fault",
    Code.OUT_OF_RANGE: "a server limit (batch size, body size, nodes, states, time); never retry as is",
    Code.UNAUTHENTICATED: "no valid bearer token",
    Code.NOT_FOUND: "GeneratePuzzle found no solvable puzzle",
    Code.RESOURCE_EXHAUSTED: "busy: retry later, with backoff",
    Code.CANCELLED: "the client went away",
    Code.DEADLINE_EXCEEDED: "the client's deadline or a server time limit passed",
    Code.INTERNAL: "a bug in boaf: the server logged it",
    Code.UNAVAILABLE: "loading, compiling kernels, the model failed, or stopping: retry",
}
BODY_TIMEOUT_STATUS = 408  # HTTP's own: the body did not arrive within http_body_timeout_s


def openapi_document(services: Sequence[ServiceDescriptor], settings: Settings) -> dict[str, Any]:
    """The OpenAPI 3.1 document of an app serving ``services`` with ``settings`` (see the module notes)."""
    schemas = SchemaBook(settings)
    secured = bool(settings.api_token_set())
    paths: dict[str, Any] = {}
    for service in services:
        for method in service.methods:
            paths[f"/{service.full_name}/{method.name}"] = _rpc_item(service, method, schemas, secured)
    paths.update(_plain_routes(settings.page_enabled))
    components: dict[str, Any] = {"schemas": {**schemas.schemas, ERROR: _error_schema()}}
    if secured:
        components["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "boaf",
            "version": package_version("boaf", missing="0+unknown"),  # 0+unknown: a source tree not installed
            "description": _description(settings),
        },
        "tags": [
            {"name": s.full_name, "description": comment(s.full_name) or f"The RPCs of {s.full_name}."}
            for s in services
        ],
        "paths": paths,
        "components": components,
    }


class SchemaBook:
    """The JSON Schemas of every message reached from the RPCs, by component name, filled as they are asked for."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.schemas: dict[str, dict[str, Any]] = {}

    def ref(self, message: Descriptor, request: bool) -> dict[str, Any]:
        """A ``$ref`` to ``message``'s request (``request``) or answer form, made on first use."""
        if message.full_name in FREE_JSON:
            return dict(FREE_JSON[message.full_name])
        name = message.full_name + (INPUT if request else "")
        if name not in self.schemas:
            self.schemas[name] = {}  # taken before the fields, so a message that holds itself ends
            self.schemas[name] = self._message(message, request)
        return {"$ref": SCHEMAS + name}

    def _message(self, message: Descriptor, request: bool) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        for field in message.fields:
            properties[field.json_name] = self._field(message, field, request)
            if request and field.name != field.json_name:
                properties[field.name] = properties[field.json_name]
        schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
        if message.full_name in EXAMPLES:
            schema["examples"] = EXAMPLES[message.full_name]
        kind = "request" if request else "answer"
        form = f"{message.full_name}, {kind} form (proto3 JSON mapping)."
        schema["description"] = f"{comment(message.full_name)} {form}".strip()
        if not request:
            schema["required"] = [f.json_name for f in message.fields if not f.has_presence]
        return schema

    def _field(self, message: Descriptor, field: FieldDescriptor, request: bool) -> dict[str, Any]:
        one = self._value(field, request)
        limit = self._limit(message, field)
        if field.is_repeated:
            schema: dict[str, Any] = {"type": "array", "items": one}
            if limit is not None:
                schema["maxItems"] = limit[0]
        else:
            schema = one if limit is None else _bounded(one, limit[0])
        if request:
            schema = _or_null(schema)
        bound = "" if limit is None else f"At most {limit[0]:,} ({limit[1]})."
        notes = [comment(f"{message.full_name}.{field.name}"), bound, schema.get("description", "")]
        if any(notes):
            schema["description"] = " ".join(note for note in notes if note)
        return schema

    def _limit(self, message: Descriptor, field: FieldDescriptor) -> tuple[int, str] | None:
        key = (message.full_name, field.name)
        if key in REQUEST_LIMITS:
            limit = REQUEST_LIMITS[key]
            return limit.of(self.settings), limit.variable
        if key in GRID_FIELDS:
            return MAX_CELLS, "the cells of a grid"
        return None

    def _value(self, field: FieldDescriptor, request: bool) -> dict[str, Any]:
        if field.message_type is not None:
            return self.ref(field.message_type, request)
        if field.enum_type is not None:
            return _enum(field.enum_type, request)
        if field.type in INTEGER_RANGES:
            return _integer(field.type, request)
        if field.type in (_T.TYPE_DOUBLE, _T.TYPE_FLOAT):
            return {"anyOf": [{"type": "number"}, {"enum": NON_FINITE}]}
        if field.type == _T.TYPE_BOOL:
            return {"type": "boolean"}
        if field.type == _T.TYPE_BYTES:
            return {"type": "string", "contentEncoding": "base64"}
        return {"type": "string"}


def _or_null(schema: dict[str, Any]) -> dict[str, Any]:
    # A request may give any field as null: its default, as the mapping allows.
    null = {"type": "null"}
    if "anyOf" in schema:
        return {**schema, "anyOf": [*schema["anyOf"], null]}
    return {"anyOf": [schema, null]}


def _integer(kind: int, request: bool) -> dict[str, Any]:
    low, high = INTEGER_RANGES[kind]
    number = {"type": "integer", "minimum": low, "maximum": high}
    text = {"type": "string", "pattern": "^-?[0-9]+$" if low < 0 else "^[0-9]+$"}
    if request:
        return {"anyOf": [number, text]}
    return text if kind in WIDE else number  # 64-bit integers are strings in answers


def _bounded(schema: dict[str, Any], limit: int) -> dict[str, Any]:
    # The number form of an integer field gets the limit as its maximum (a string past it is refused too).
    if "anyOf" in schema:
        return {"anyOf": [_bounded(part, limit) for part in schema["anyOf"]]}
    if schema.get("type") == "integer":
        return {**schema, "maximum": limit}
    return schema


def _enum(enum: EnumDescriptor, request: bool) -> dict[str, Any]:
    names = {"type": "string", "enum": [v.name for v in enum.values]}
    schema = names if not request else {"anyOf": [names, {"type": "integer", "enum": [v.number for v in enum.values]}]}
    said = [f"{v.name} ({v.number}): {comment(f'{enum.full_name}.{v.name}')}" for v in enum.values]
    meanings = [text for text in said if not text.endswith(": ")]
    if meanings:
        return {**schema, "description": f"{enum.name}: " + " ".join(meanings)}
    return schema


@functools.cache
def proto_comments() -> dict[str, str]:
    """The comments of proto/ by full name (``scripts/generate-proto-comments`` writes them)."""
    table: dict[str, str] = json.loads(COMMENTS_FILE.read_text(encoding="utf-8"))
    return table


def comment(full_name: str) -> str:
    """The proto comment of a service, method, message, field, enum or enum value; "" when it has none."""
    return proto_comments().get(full_name, "")


def _error_schema() -> dict[str, Any]:
    codes = sorted({connect_code(code) for code in HTTP_STATUS if code is not Code.OK})
    detail = {
        "type": "object",
        "properties": {
            "type": {"type": "string", "description": "The detail's protobuf message type, without a type URL."},
            "value": {"type": "string", "description": "The detail message, base64 (unpadded) of its binary form."},
            "debug": {"description": "The detail as JSON, for people."},
        },
        "required": ["type", "value"],
    }
    return {
        "type": "object",
        "description": "Connect's error body: the gRPC code's Connect name and the message gRPC gives.",
        "properties": {
            "code": {"type": "string", "enum": codes},
            "message": {"type": "string"},
            "details": {"type": "array", "items": detail},
        },
        "required": ["code", "message"],
        "additionalProperties": False,
    }


def _rpc_item(
    service: ServiceDescriptor, method: MethodDescriptor, schemas: SchemaBook, secured: bool
) -> dict[str, Any]:
    # POST always; GET too when the proto marks the method NO_SIDE_EFFECTS (Connect's GET).
    name, said = f"{service.full_name}.{method.name}", comment(method.full_name)
    answer = schemas.ref(method.output_type, request=False)
    binary = {"schema": {"type": "string", "contentMediaType": PROTO}}
    common: dict[str, Any] = {
        "tags": [service.full_name],
        "summary": f"{method.name}: {method.input_type.name} -> {method.output_type.name}",
        "responses": {
            "200": {
                "description": "The answer, in the request's codec.",
                "content": {JSON: {"schema": answer}, PROTO: binary},
            },
            **_errors(secured),
        },
    }
    if secured:
        common["security"] = [{"bearer": []}]
    post = {
        **common,
        "operationId": name,
        "description": f"{said} The RPC {service.full_name}/{method.name}, in Connect's unary protocol: the "
        f"request message as JSON ({JSON}) or binary protobuf ({PROTO}); the answer in the same codec.".strip(),
        "parameters": _connect_headers(),
        "requestBody": {
            "required": True,
            "content": {JSON: {"schema": schemas.ref(method.input_type, request=True)}, PROTO: binary},
        },
    }
    if method.GetOptions().idempotency_level != descriptor_pb2.MethodOptions.NO_SIDE_EFFECTS:
        return {"post": post}
    get = {
        **common,
        "operationId": name + ".get",
        "description": f"{said} {service.full_name}/{method.name} by Connect's GET (the proto "
        "marks it NO_SIDE_EFFECTS): "
        "the request message in the query. A request target past "
        f"{GET_MAX_URL_BYTES:,} bytes is OUT_OF_RANGE with 414: POST it instead.".strip(),
        "parameters": [*_get_query(schemas.ref(method.input_type, request=True)), *_connect_headers()],
    }
    get["responses"] = {**common["responses"], "414": _too_long()}
    return {"post": post, "get": get}


def _get_query(request: dict[str, Any]) -> list[dict[str, Any]]:
    # Connect's GET parameters: https://connectrpc.com/docs/protocol/#unary-get-request
    def query(name: str, description: str, schema: dict[str, Any], required: bool = False) -> dict[str, Any]:
        return {"name": name, "in": "query", "required": required, "description": description, "schema": schema}

    message = {
        "name": "message",
        "in": "query",
        "required": True,
        "description": "The request message in the codec of encoding, percent-encoded; with base64=1, its bytes "
        "in URL-safe base64 (padding optional), as a binary message must be.",
        "content": {JSON: {"schema": request}},
    }
    return [
        query("connect", "Connect's protocol version.", {"type": "string", "enum": ["v1"]}),
        query("encoding", "The message's codec.", {"type": "string", "enum": ["json", "proto"]}, required=True),
        message,
        query("base64", "1: message is URL-safe base64.", {"type": "string", "enum": ["0", "1"]}),
        query("compression", "The message's compression.", {"type": "string", "enum": ["identity", "gzip"]}),
    ]


def _too_long() -> dict[str, Any]:
    message = f"OUT_OF_RANGE: the request target is longer than {GET_MAX_URL_BYTES:,} bytes."
    return {"description": message, "content": {JSON: {"schema": {"$ref": SCHEMAS + ERROR}}}}


def _connect_headers() -> list[dict[str, Any]]:
    return [
        {
            "name": TIMEOUT_HEADER,
            "in": "header",
            "description": "The call's deadline in ms (at most 10 digits); past it the call ends DEADLINE_EXCEEDED.",
            "schema": {"type": "string", "pattern": "^0*[1-9][0-9]*$", "maxLength": 10},
        },
        {
            "name": PROTOCOL_HEADER,
            "in": "header",
            "description": "Connect's protocol version.",
            "schema": {"type": "string", "enum": ["1"]},
        },
    ]


def _errors(secured: bool) -> dict[str, Any]:
    by_status: dict[int, list[str]] = defaultdict(list)
    for code, meaning in CALL_ERRORS.items():
        if code is not Code.UNAUTHENTICATED or secured:
            by_status[HTTP_STATUS[code]].append(f"{code.name} ({meaning})")
    by_status[BODY_TIMEOUT_STATUS].append(
        f"DEADLINE_EXCEEDED: the body did not arrive within {env_name('http_body_timeout_s')}"
    )
    content = {JSON: {"schema": {"$ref": SCHEMAS + ERROR}}}
    responses: dict[str, Any] = {}
    for status in sorted(by_status):
        response: dict[str, Any] = {"description": "; ".join(by_status[status]) + ".", "content": content}
        header = {429: "Retry-After", 503: "Retry-After", 401: "WWW-Authenticate"}.get(status)
        if header is not None:
            response["headers"] = {header: {"schema": {"type": "string"}}}
        responses[str(status)] = response
    return responses


def _plain_routes(page_enabled: bool) -> dict[str, Any]:
    alive = {"type": "object", "properties": {"status": {"const": "alive"}}, "required": ["status"]}
    units = "Units (groups of kernels compiled together) of the first start's compile"
    ready = {
        "type": "object",
        "properties": {
            "status": {"enum": ["SERVING", "NOT_SERVING"]},
            "stage": {"type": "string", "description": "What the server is doing before SERVING."},
            "kernels_compiled": {
                "type": "integer",
                "minimum": 0,
                "description": f"{units} done; only while the stage is compiling kernels.",
            },
            "kernels_total": {
                "type": "integer",
                "minimum": 1,
                "description": f"{units} in all; only while the stage is compiling kernels.",
            },
        },
        "required": ["status"],
    }
    routes = {
        "/healthz": _get("health", "200 while the server runs.", {"200": _json("Alive.", alive)}),
        "/readyz": _get(
            "readiness",
            "200 exactly when gRPC health reports SERVING; before that 503 with the stage the server is in and, "
            "while kernels compile, how many of them are done.",
            {"200": _json("SERVING.", ready), "503": {**_json("Not serving yet, or stopping.", ready), **_retry()}},
        ),
        "/openapi.json": _get(
            "this document", "The OpenAPI 3.1 description of this server.", {"200": _json("This document.", {})}
        ),
    }
    if page_enabled:
        routes["/"] = _get("the playground page", "The playground (HTML).", {"200": _html("The page.")})
        routes["/api"] = _get("the API page", "This document for people (HTML).", {"200": _html("The page.")})
    return routes


def _get(summary: str, description: str, responses: dict[str, Any]) -> dict[str, Any]:
    return {"get": {"summary": summary, "description": description, "security": [], "responses": responses}}


def _json(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {JSON: {"schema": {"type": "object", **schema}}}}


def _html(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"text/html": {"schema": {"type": "string"}}}}


def _retry() -> dict[str, Any]:
    return {"headers": {"Retry-After": {"description": "Seconds.", "schema": {"type": "string"}}}}


def status_rows() -> list[tuple[int, list[str]]]:
    """``statuses.HTTP_STATUS`` by HTTP status: each status with its gRPC codes (and their Connect names)."""
    rows = defaultdict(list)
    for code, status in HTTP_STATUS.items():
        if code is not Code.OK:
            rows[status].append(f"{code.name} ({connect_code(code)})")
    return sorted(rows.items())


def _description(settings: Settings) -> str:
    table = "\n".join(f"| {status} | {', '.join(codes)} |" for status, codes in status_rows())
    auth = (
        "Every RPC needs `Authorization: Bearer TOKEN`."
        if settings.api_token_set()
        else f"This server asks for no token (`{env_name('api_tokens')}` is unset)."
    )
    return (
        "Birds of a Feather solitaire as a service: every RPC of the gRPC services, in Connect's unary "
        f"protocol. Each RPC is `POST /<service>/<method>` with its request message as JSON ({JSON}) in "
        "the proto3 JSON mapping; the answer is the response message the same way. The deadline is the "
        f"`{TIMEOUT_HEADER}` header. A request body is at most {settings.max_message_bytes:,} bytes "
        f"(`{MAX_MESSAGE_BYTES.variable}`). {auth}\n\n"
        'An error is Connect\'s JSON body `{"code": ..., "message": ...}` (`ConnectError`) with the code\'s '
        "HTTP status:\n\n| HTTP status | gRPC code (Connect code) |\n|---|---|\n"
        f"{table}\n| {BODY_TIMEOUT_STATUS} | DEADLINE_EXCEEDED when the body did not arrive in time |"
    )
