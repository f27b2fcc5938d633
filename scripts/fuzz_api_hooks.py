"""schemathesis hooks of ``scripts/fuzz-api`` (``SCHEMATHESIS_HOOKS``): how a binary protobuf body goes on the wire.

The document describes an ``application/proto`` body as a string of bytes
(``contentMediaType``); schemathesis has no serializer of its own for that media
type, so without this hook it would never send one. The generated string goes as
its UTF-8 bytes: arbitrary bytes for the server's binary parser, which must answer
them with a documented status (400 when they are not the request message).
"""

from __future__ import annotations

from typing import Any

import schemathesis


@schemathesis.serializer("application/proto")
def proto_body(ctx: schemathesis.SerializationContext, value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8", "surrogatepass")
