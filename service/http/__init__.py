"""The HTTP/JSON edge: every RPC of ``proto/`` over HTTP, the playground page, health and readiness.

``POST /boaf.v1.Boaf/Classify`` with a JSON body in the proto3 JSON mapping calls
the same servicer as gRPC (Connect's unary JSON protocol: errors are
``{"code": "invalid_argument", "message": ...}`` with the HTTP status of
``statuses.HTTP_STATUS``, the deadline comes from ``Connect-Timeout-Ms``).
Routes are made from the proto descriptors, so a new RPC needs no code here.
"""

from service.http.app import build_app
from service.http.server import HttpServer

__all__ = ["HttpServer", "build_app"]
