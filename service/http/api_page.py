"""The API page (``GET /api``): the OpenAPI document of ``openapi`` as plain HTML, for people.

Rendered once from the document when the app is built: every route with its
headers, request and answer messages and error statuses, every message's fields
with their JSON types and limits, the code-to-status table and a ``curl``
example at the address the page was asked for (``ApiPage.html``). No script, no
style from elsewhere (the page's CSP is ``default-src 'self'``): one stylesheet,
``static/api.css``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import escape
from typing import Any

from boaf.service.http.openapi import INPUT, JSON, SCHEMAS, status_rows

BASE_URL = "{base_url}"  # where each request's address goes in the example
EXAMPLE = (
    f"curl -s {BASE_URL}/boaf.v1.Boaf/Classify -H 'content-type: application/json' "
    """-d '{"states": [{"rows": 2, "cols": 2, "cells": ["5S", "7D", "4C", "AD"]}]}'"""
)
# A Host header the example may show: a DNS name, an IPv4 address or a bracketed IPv6 one, and a port. Anything
# else (quotes, spaces, paths, markup) is a client's mistake or an attack, and the example shows the socket's address.
HOST_AND_PORT = re.compile(
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*"
    r"|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?"
)
HOST_MAX_CHARS = 255
ANY_ADDRESS = {"0.0.0.0", "::", ""}  # a socket bound to every address: the example says localhost


@dataclass(frozen=True)
class ApiPage:
    """The API page, made once; ``html(base_url)`` is it with the example's address filled in."""

    before: str
    after: str

    def html(self, base_url: str) -> str:
        """The page whose ``curl`` example calls ``base_url`` (``http://host:port``, escaped here)."""
        return self.before + escape(base_url) + self.after


def base_url_of(scheme: str, host_header: str | None, server: tuple[str, int] | None) -> str:
    """The address a client reached this server at: the request's ``Host`` when it is a sane host[:port],
    else the socket's own address (``server``: host and port; ``localhost`` for an any-address bind)."""
    scheme = scheme if scheme in ("http", "https") else "http"
    if host_header and len(host_header) <= HOST_MAX_CHARS and HOST_AND_PORT.fullmatch(host_header):
        return f"{scheme}://{host_header}"
    host, port = server or ("", 8080)
    host = "localhost" if host in ANY_ADDRESS else f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}:{port}"


def api_page(document: dict[str, Any]) -> ApiPage:
    """The HTML page of ``document`` (an ``openapi_document``)."""
    before, after = _page(document).split(escape(BASE_URL), 1)
    return ApiPage(before, after)


def _page(document: dict[str, Any]) -> str:
    info = document["info"]
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>boaf API {escape(info['version'])}</title>",
        '<link rel="icon" href="favicon.svg" type="image/svg+xml"><link rel="stylesheet" href="api.css">',
        "</head><body><header>",
        f"<h1>The boaf API <small>{escape(info['version'])}</small></h1>",
        '<p><a href="openapi.json">openapi.json</a> (OpenAPI 3.1) · <a href="./">the playground</a></p>',
        "</header><main>",
        _overview(document),
        _status_table(),
        *(_route(path, verb, op) for path, item in document["paths"].items() for verb, op in item.items()),
        '<section aria-labelledby="messages"><h2 id="messages">Messages</h2>',
        *(_message(name, schema) for name, schema in sorted(document["components"]["schemas"].items())),
        "</section></main></body></html>",
    ]
    return "\n".join(parts)


def _overview(document: dict[str, Any]) -> str:
    security = document["components"].get("securitySchemes")
    token = "Every RPC needs <code>Authorization: Bearer TOKEN</code>." if security else "No token is needed."
    return (
        '<section aria-labelledby="overview"><h2 id="overview">Calls</h2>'
        "<p>Each RPC is <code>POST /&lt;service&gt;/&lt;method&gt;</code> with its request message as JSON in the "
        "proto3 JSON mapping (field names in lowerCamelCase or as in the proto; 64-bit integers as strings or "
        "numbers; enums by name or number), and answers its response message the same way; or the message in "
        "binary protobuf (<code>application/proto</code>) both ways. An RPC without side effects also answers "
        "Connect's GET, its request in the query. The deadline is the "
        f"<code>Connect-Timeout-Ms</code> header. {token} An error is "
        '<code>{"code": "invalid_argument", "message": "..."}</code> with the HTTP status below.</p>'
        f"<pre><code>{escape(EXAMPLE)}</code></pre></section>"
    )


def _status_table() -> str:
    rows = "".join(f"<tr><td>{status}</td><td>{escape(', '.join(codes))}</td></tr>" for status, codes in status_rows())
    return (
        '<section aria-labelledby="statuses"><h2 id="statuses">Errors and HTTP statuses</h2><table>'
        '<thead><tr><th scope="col">HTTP status</th><th scope="col">gRPC code (Connect code)</th></tr></thead>'
        f"<tbody>{rows}<tr><td>408</td><td>DEADLINE_EXCEEDED: the request body did not arrive in time</td></tr>"
        "</tbody></table></section>"
    )


def _route(path: str, verb: str, operation: dict[str, Any]) -> str:
    anchor = _anchor(f"{verb}{path}")
    lines = [
        f'<section aria-labelledby="{anchor}"><h2 id="{anchor}"><code>{verb.upper()} {escape(path)}</code></h2>',
        f"<p>{escape(operation.get('description', ''))}</p>",
    ]
    for place, title in (("query", "Query parameters"), ("header", "Headers")):
        items = "".join(
            f"<li><code>{escape(p['name'])}</code>{' (required)' if p.get('required') else ''}: "
            f"{escape(p['description'])} ({_type(p.get('schema') or p['content'][JSON]['schema'])})</li>"
            for p in operation.get("parameters", [])
            if p["in"] == place
        )
        if items:
            lines.append(f"<p>{title}:</p><ul>{items}</ul>")
    body = operation.get("requestBody", {}).get("content", {})
    for media, content in body.items():
        lines.append(f"<p>Request ({escape(media)}): {_type(content.get('schema', {}))}</p>")
    answers = []
    for status, response in operation["responses"].items():
        media = ", ".join(response.get("content", {}))
        contents: list[dict[str, Any]] = list(response.get("content", {}).values())
        schema = contents[0].get("schema", {}) if contents else {}
        shown = _type(schema) if "$ref" in schema else escape(media)
        answers.append(f"<li><strong>{status}</strong> {shown}: {escape(response['description'])}</li>")
    lines.append(f"<p>Answers:</p><ul>{''.join(answers)}</ul></section>")
    return "".join(lines)


def _message(name: str, schema: dict[str, Any]) -> str:
    anchor = _anchor(name)
    required = set(schema.get("required", []))
    rows = "".join(
        f"<tr><td><code>{escape(field)}</code></td><td>{_type(part)}</td>"
        f"<td>{escape(_note(part, field in required))}</td></tr>"
        for field, part in schema.get("properties", {}).items()
    )
    return (
        f'<h3 id="{anchor}"><code>{escape(name)}</code></h3><p>{escape(schema.get("description", ""))}</p>'
        '<table><thead><tr><th scope="col">field</th><th scope="col">JSON type</th><th scope="col">notes</th></tr>'
        f"</thead><tbody>{rows}</tbody></table>"
    )


def _type(schema: dict[str, Any]) -> str:
    # A schema in a few words, with links to the messages it names.
    if "$ref" in schema:
        name = schema["$ref"].removeprefix(SCHEMAS)
        shown = name.removesuffix(INPUT).rsplit(".", 1)[-1]
        return f'<a href="#{_anchor(name)}">{escape(shown)}</a>'
    if "anyOf" in schema:
        return " or ".join(_type(part) for part in schema["anyOf"] if part.get("type") != "null")
    if schema.get("type") == "array":
        return f"array of {_type(schema['items'])}"
    if "enum" in schema:
        return "one of " + ", ".join(escape(str(value)) for value in schema["enum"])
    if "const" in schema:
        return escape(str(schema["const"]))
    if "contentMediaType" in schema:
        return f"bytes ({escape(schema['contentMediaType'])})"
    if schema.get("type") == "string" and "pattern" in schema:
        return "decimal string"
    return escape(str(schema.get("type", "any JSON")))


def _note(schema: dict[str, Any], always: bool) -> str:
    notes = ["always there" if always else "", schema.get("description", "")]
    for part in schema.get("anyOf", []):
        notes.append(part.get("description", ""))
    return "; ".join(note for note in notes if note)


def _anchor(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text).strip("-").lower()
