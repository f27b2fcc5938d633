"""The pages the HTTP edge serves beside the API: the playground's static files and the API page, with their headers.

Both carry ``PAGE_HEADERS``: a content security policy that lets a page talk only to this
server, no MIME sniffing, and revalidation on every load (a 304 by ETag when unchanged).
The playground's files are gzipped for clients that accept it, from ``PAGE_GZIP_MIN_BYTES``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.staticfiles import StaticFiles

from boaf.service.http.api_page import ApiPage, base_url_of

STATIC_DIR = Path(__file__).resolve().parent / "static"
# The page talks only to this server; nothing else may load.
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'",
    "X-Content-Type-Options": "nosniff",
    # Revalidated on every load (a 304 by ETag when unchanged): a new page is seen at once.
    "Cache-Control": "no-cache",
}
PAGE_GZIP_MIN_BYTES = 500  # the page's files are gzipped, for clients that accept it, from this size


class PageFiles(StaticFiles):
    """The page's static files, each with ``PAGE_HEADERS`` (its ETag comes from StaticFiles)."""

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers.update(PAGE_HEADERS)
        return response


def page_files() -> GZipMiddleware:
    """The playground's files from ``STATIC_DIR`` (``index.html`` at ``/``), gzipped from ``PAGE_GZIP_MIN_BYTES``."""
    return GZipMiddleware(PageFiles(directory=STATIC_DIR, html=True), minimum_size=PAGE_GZIP_MIN_BYTES)


async def api_page_route(page: ApiPage, request: Request) -> Response:
    """``/api``: the API page, its curl examples addressed to the host the request names."""
    base_url = base_url_of(request.url.scheme, request.headers.get("host"), request.scope.get("server"))
    return Response(page.html(base_url), media_type="text/html; charset=utf-8", headers=PAGE_HEADERS)
