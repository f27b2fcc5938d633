"""Optional OpenTelemetry tracing (``BOAF_OTEL``): off by default, and then free.

Off, ``span`` returns one shared do-nothing context manager and ``opentelemetry`` is
never imported. On (``enable``, which the server calls when ``BOAF_OTEL`` is set):

- every RPC, on either edge, is a span ``boaf/<Method>`` (``traced``, which the
  handlers' ``rpc`` decorator wears, so gRPC and HTTP/JSON calls alike);
- Classify and Hint have a child span per stage of each chunk of up to 256 states:
  ``exact path``, ``features`` (the model's inputs), ``second search`` (when an open
  4x4 deal looks like an FFUD: ``boaf.models.exact_path``) and ``inference``
  (``boaf.models.classifier`` calls them through its ``trace`` hook: models/ imports
  nothing of service/).

Spans go to the exporter ``enable`` is given (the tests' in-memory one), else to OTLP
over HTTP (``opentelemetry-exporter-otlp-proto-http``, the ``otel`` extra), configured
by the standard variables: ``OTEL_EXPORTER_OTLP_ENDPOINT`` (default
``http://localhost:4318``), ``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``.

The tracer is one per process, as OpenTelemetry's tracer provider is.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, TypeVar

from boaf.service.core.settings import InvalidSettings, env_name

Function = TypeVar("Function", bound=Callable[..., Any])

_NOTHING = contextlib.nullcontext()
_tracer: Any = None  # an opentelemetry Tracer while tracing is on
_provider: Any = None


def span(name: str, **attributes: Any) -> AbstractContextManager[Any]:
    """A span named ``name`` around a block, child of the current one; nothing at all while tracing is off."""
    if _tracer is None:
        return _NOTHING
    return _tracer.start_as_current_span(name, attributes=attributes)  # type: ignore[no-any-return]


def traced(method: str, function: Function) -> Function:
    """``function`` run inside a span ``boaf/<method>`` (an RPC's edge span) while tracing is on."""

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        if _tracer is None:
            return function(*args, **kwargs)
        with _tracer.start_as_current_span(f"boaf/{method}", attributes={"rpc.method": method}):
            return function(*args, **kwargs)

    return run  # type: ignore[return-value]


def enable(exporter: Any = None) -> None:
    """Turn tracing on: spans go to ``exporter`` (an opentelemetry ``SpanExporter``), or by OTLP when None.

    Raises ``InvalidSettings`` naming ``BOAF_OTEL`` when the SDK or the OTLP exporter is not installed.
    """
    global _tracer, _provider
    # Imported here, for start-up and memory: with tracing off, nothing of opentelemetry (an extra) is loaded.
    try:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

        if exporter is None:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError as exc:
        raise InvalidSettings(
            f"{env_name('otel')}=true: tracing needs boaf's otel extra "
            f"(in a clone, pip install -e clients/python -e '.[otel]'): {exc}"
        ) from exc
    # OTLP sends in batches from a thread of its own; a given exporter (the tests') gets each span at its end.
    processor: Any = BatchSpanProcessor(OTLPSpanExporter()) if exporter is None else SimpleSpanProcessor(exporter)
    disable()
    _provider = TracerProvider()  # its resource reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
    _provider.add_span_processor(processor)
    _tracer = _provider.get_tracer("boaf")


def disable() -> None:
    """Turn tracing off, sending the spans not yet sent."""
    global _tracer, _provider
    provider, _tracer, _provider = _provider, None, None
    if provider is not None:
        provider.shutdown()


def enabled() -> bool:
    """True while tracing is on."""
    return _tracer is not None
