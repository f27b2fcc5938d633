"""The one settings object of the service, read from ``BOAF_*`` environment variables.

Every field below is one variable: the field name upper-cased with a ``BOAF_``
prefix (``port`` is ``BOAF_PORT``: ``env_name``). The limits a request meets take their
default and documentation from their one declaration in ``boaf.service.core.limits``.
``Settings.from_env()`` reads them, and the
result is passed into the constructors that need it; nothing reads the
environment anywhere else. An unset or empty variable keeps the default.

A number is at most ``MAX_NUMBER_CHARS`` characters. A duration (a ``*_s`` field, in
seconds) is finite, not negative (``nan``, ``inf`` and ``1e400`` are refused; ``-0.0``
is 0) and at most ``MAX_SECONDS``. An error names the variable and quotes at most
``boaf.game.errors.QUOTE_CHARS`` characters of its value (``SHOWN_CHARS`` of a path or host, shown
unquoted), cut before it is formatted, so a value of any length gives a short line.

The deploy manifests (``deploy/``) set these names, and a test checks they exist.
"""

from __future__ import annotations

import dataclasses
import errno
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from boaf.game.errors import InvalidInput, quote
from boaf.game.state import MAX_CELLS
from boaf.service.core import limits
from boaf.service.core.limits import MIB as MIB
from boaf.service.core.limits import env_name as env_name
from boaf.service.core.logs import LOG_FORMATS

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "[::1]", "::1"})
# The memory arithmetic (worst_case_memory_mb; deploy/README.md shows the sums).
BASE_MEMORY_MB = 512  # a warmed-up server: 317 MiB RSS measured, with room for Python's heap to grow
PUZZLE_BYTES_PER_STATE = 60  # an enumerated state at its peak (boaf.puzzles.analysis.DEFAULT_BUDGET)
BATCH_BYTES_PER_MESSAGE_BYTE = 8  # a 16 MiB Classify request raised the peak RSS by 129 MiB (parsed cells)
SEARCH_MEMO_GROWTH = 6  # memo rows per entry at worst: a full table at half load, growing into one twice its size
SEARCH_RECORD_BYTES = 72  # best-n's per-node record, 24 bytes, in an array that grows by doubling (3x at worst)
# What requests hold before they are refused (Settings.request_memory_mb). The gRPC edge reads these two.
HARD_MESSAGE_FACTOR = 1  # gRPC core takes messages up to this many times max_message_bytes, refusing more itself
PROBE_CALLS = 8  # health Check and List calls at once, apart from the calls and streams caps
HTTP_BODY_COPIES = 1  # an HTTP body is read into one growing buffer, handed on as bytes without a copy
GRPC_COPY_EXTRA = 2  # grpcio copies a message out of core into a bytearray, then bytes: two more at once
SPARE_ANSWER_MESSAGES = 1  # answers waiting to be taken may hold this many messages past the places' bytes
QUOTE_BYTES = 1024  # an error's quote of its input: a few dozen characters, cut in time linear in them
SHOWN_CHARS = 120  # a path or host an error shows unquoted: long enough for a real one, whole
MAX_NUMBER_CHARS = 32  # the largest limit, a uint64, has 20 digits; a longer number is refused unread
MAX_SECONDS = 86_400.0  # a duration setting is at most a day (threading's waits overflow on huge ones)


def search_bytes_per_node(cells: int) -> int:
    """Worst-case bytes one expanded node adds to a search of a ``cells``-cell grid.

    Each node adds at most one memo entry: its exact key in 64-bit words (6
    bits a cell) plus a stamp word. On grids of up to 16 cells most algorithms
    store one word instead (``boaf.search.kernel``'s one-word keys: 13 bytes a state
    measured), but Island Merge keeps wide keys there, so the wide entry is
    counted everywhere: an upper bound for every algorithm.
    """
    key_words = -(-cells // 10)
    return SEARCH_MEMO_GROWTH * 8 * (key_words + 1) + SEARCH_RECORD_BYTES


class InvalidSettings(InvalidInput):
    """A ``BOAF_*`` variable does not parse or is out of range."""


def _doc(text: str) -> dict[str, str]:
    return {"doc": text}


@dataclass(frozen=True)
class Settings:
    """Everything the service can be told, with its default."""

    host: str = field(default="127.0.0.1", metadata=_doc("Address the gRPC and metrics servers bind to."))
    port: int = field(default=50051, metadata=_doc("gRPC port; 0 picks a free one."))
    metrics_port: int = field(default=8082, metadata=_doc("Prometheus /metrics HTTP port; 0 picks a free one."))
    metrics_enabled: bool = field(default=True, metadata=_doc("Serve Prometheus metrics at all."))
    grpc_enabled: bool = field(default=True, metadata=_doc("Serve gRPC at all (on port)."))
    http_port: int = field(
        default=8080, metadata=_doc("HTTP/JSON port (every RPC, health, readiness, the page at /); 0 picks a free one.")
    )
    http_enabled: bool = field(default=True, metadata=_doc("Serve HTTP/JSON and the page at all (on http_port)."))
    model_dir: Path | None = field(
        default=None,
        metadata=_doc("Model version directory, or a model root whose CURRENT names one; unset: the committed model."),
    )
    model_poll_s: float = field(
        default=5.0,
        metadata=_doc(
            "When model_dir is a model root: seconds between looks at its CURRENT; a new version is loaded and "
            "warmed up beside the served one, then swapped in without a restart (SIGHUP looks at once). 0: no polling."
        ),
    )
    max_workers: int = limits.MAX_WORKERS.setting()
    max_concurrent_rpcs: int = limits.MAX_CONCURRENT_RPCS.setting()
    max_streams: int = limits.MAX_STREAMS.setting()
    max_message_bytes: int = limits.MAX_MESSAGE_BYTES.setting()
    max_batch_size: int = limits.MAX_BATCH_SIZE.setting()
    solve_max_nodes: int = limits.SOLVE_MAX_NODES.setting()
    solve_time_limit_ms: int = limits.SOLVE_TIME_LIMIT_MS.setting()
    batch_time_limit_ms: int = limits.BATCH_TIME_LIMIT_MS.setting()
    puzzle_max_states: int = limits.PUZZLE_MAX_STATES.setting()
    max_concurrent_puzzles: int = limits.MAX_CONCURRENT_PUZZLES.setting()
    max_concurrent_searches: int = limits.MAX_CONCURRENT_SEARCHES.setting()
    search_memory_mb: int = limits.SEARCH_MEMORY_MB.setting()
    hint_max_nodes: int = limits.HINT_MAX_NODES.setting()
    puzzle_max_samples: int = limits.PUZZLE_MAX_SAMPLES.setting()
    puzzle_max_iterations: int = limits.PUZZLE_MAX_ITERATIONS.setting()
    memory_limit_mb: int = field(
        default=3072,
        metadata=_doc(
            "The memory the server may use, in MiB (the pod's limit in deploy/k8s); the limits above must fit "
            "it in the worst case (worst_case_memory_mb), or the settings are refused."
        ),
    )
    shutdown_grace_s: float = field(
        default=10.0, metadata=_doc("On SIGTERM, seconds in-flight calls get to finish before they are cancelled.")
    )
    http_header_timeout_s: float = field(
        default=10.0, metadata=_doc("Seconds an HTTP client has to send a request's headers; then it is closed.")
    )
    http_body_timeout_s: float = field(
        default=30.0, metadata=_doc("Seconds an HTTP client has to send a request's body; then 408, and it is closed.")
    )
    idle_timeout_s: float = field(
        default=60.0,
        metadata=_doc(
            "Seconds a connection (HTTP keep-alive, gRPC) may sit idle between calls, a gRPC request may take to "
            "arrive, and a client may take to receive an answer; then the call or connection is cut."
        ),
    )
    metrics_host: str = field(
        default="127.0.0.1",
        metadata=_doc("Address the metrics server binds to: loopback by default, whatever host says (0.0.0.0 in k8s)."),
    )
    allowed_hosts: str = field(
        default="",
        metadata=_doc(
            "Comma-separated Host header names the HTTP edge answers (DNS rebinding). Unset: localhost, 127.0.0.1 "
            "and [::1] when host is loopback; any Host otherwise."
        ),
    )
    cors_origins: str = field(
        default="",
        metadata=_doc("Comma-separated origins a browser page may call the HTTP API from (CORS); unset: none."),
    )
    api_tokens: str = field(
        default="",
        metadata=_doc(
            "Comma-separated bearer tokens; set (here or in api_tokens_file), every RPC on both edges needs "
            "'authorization: Bearer TOKEN', else UNAUTHENTICATED. Health, readiness and the page's files are exempt."
        ),
    )
    api_tokens_file: Path | None = field(
        default=None, metadata=_doc("A file of bearer tokens, one per line ('#' starts a comment); adds to api_tokens.")
    )
    reflection_enabled: bool = field(default=True, metadata=_doc("Serve gRPC server reflection."))
    page_enabled: bool = field(default=True, metadata=_doc("Serve the playground page at / on the HTTP port."))
    tls_cert: Path | None = field(default=None, metadata=_doc("PEM certificate chain; with tls_key, serve TLS."))
    tls_key: Path | None = field(default=None, metadata=_doc("PEM private key of tls_cert."))
    log_level: str = field(default="INFO", metadata=_doc("Logging level: DEBUG, INFO, WARNING or ERROR."))
    log_format: str = field(
        default="auto",
        metadata=_doc(
            "Log lines on stderr: json (one object a line), text (a plain line, for a person), or auto: text "
            "when stderr is a terminal, json when it is not (a container, a file)."
        ),
    )
    otel: bool = field(
        default=False,
        metadata=_doc(
            "OpenTelemetry tracing (needs the 'otel' extra): a span per RPC with its exact path, features and "
            "inference, sent by OTLP as the standard OTEL_* variables say (OTEL_EXPORTER_OTLP_ENDPOINT, ...)."
        ),
    )

    def __post_init__(self) -> None:
        _check(self)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Settings from ``BOAF_*`` variables of ``environ`` (default ``os.environ``), then ``overrides``.

        Raises ``InvalidSettings`` naming the variable when a value does not parse.
        """
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            raw = env.get(env_name(f.name), "").strip()
            if raw:
                values[f.name] = _parse(f.name, f.type, raw)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def search_node_cap(self, cells: int) -> int:
        """The most nodes one search of a ``cells``-cell grid may expand within ``search_memory_mb``."""
        return max(1, self.search_memory_mb * MIB // search_bytes_per_node(cells))

    def api_token_set(self) -> frozenset[str]:
        """The bearer tokens of ``api_tokens`` and ``api_tokens_file`` (empty: no authentication)."""
        tokens = [t.strip() for t in self.api_tokens.split(",")]
        if self.api_tokens_file is not None:
            lines = self.api_tokens_file.read_text(encoding="utf-8").splitlines()
            tokens += [line.split("#", 1)[0].strip() for line in lines]
        return frozenset(t for t in tokens if t)

    def allowed_host_set(self) -> frozenset[str] | None:
        """Host header names (lower case, no port) the HTTP edge answers; None: any."""
        names = {h.strip().lower() for h in self.allowed_hosts.split(",") if h.strip()}
        if names:
            return frozenset(names)
        if self.host in LOOPBACK_HOSTS:
            return LOOPBACK_NAMES
        return None

    def cors_origin_set(self) -> frozenset[str]:
        """Origins (``scheme://host[:port]``) allowed to call the HTTP API from a browser page."""
        return frozenset(o.strip().rstrip("/") for o in self.cors_origins.split(",") if o.strip())

    def worst_case_memory_mb(self) -> dict[str, int]:
        """The most memory each part of the server can hold at once, in MiB, and their ``total``.

        ``base``: the process with the model and the compiled kernels (``BASE_MEMORY_MB``).
        ``searches``: every Solve slot holding a search at its cap. ``hints``: every work slot
        running a Hint's searches, one at a time, each at ``hint_max_nodes`` on the largest grid
        (``search_bytes_per_node``; its ~300 result states are a batch ``parsed`` covers).
        ``puzzles``: every puzzle slot holding its states (``PUZZLE_BYTES_PER_STATE`` each) and
        one search at its cap. The other parts are what requests hold (``request_memory_mb``).
        """
        parts = {
            "base": BASE_MEMORY_MB,
            "searches": self.max_concurrent_searches * self.search_memory_mb,
            "hints": -(-self.max_workers * self.hint_max_nodes * search_bytes_per_node(MAX_CELLS) // MIB),
            "puzzles": self.max_concurrent_puzzles
            * (-(-self.puzzle_max_states * PUZZLE_BYTES_PER_STATE // MIB) + self.search_memory_mb),
        }
        parts.update({part: mb for part, mb in self.request_memory_mb().items() if part != "total"})
        return {**parts, "total": sum(parts.values())}

    def request_memory_mb(self) -> dict[str, int]:
        """What requests can hold before they are refused, and while admitted, in MiB, by part, and their ``total``.

        ``L`` is ``max_message_bytes``. gRPC core takes a message of up to ``HARD_MESSAGE_FACTOR``
        × ``L`` before boaf's gate sees its size (core refuses past that, from its length prefix,
        holding nothing), and each of its pool's readers may hold one: every admitted call
        (``max_concurrent_rpcs``, both edges together), stream (``max_streams``) and health
        check (``PROBE_CALLS``). grpcio then copies it out (``GRPC_COPY_EXTRA`` more, one call at
        a time: the copy holds the GIL). Over HTTP an admitted call holds its body
        (``HTTP_BODY_COPIES`` × ``L``); the calls are counted on whichever edge holds more. Answers
        waiting to be taken share the calls' bytes, plus ``SPARE_ANSWER_MESSAGES`` × ``L``
        (``Admission.hand_over``). In a
        work slot (``max_workers``), a body may be inflated (gzip, up to ``L``) and is parsed and
        processed (``BATCH_BYTES_PER_MESSAGE_BYTE`` × ``L``; batches are processed in chunks, so
        their working arrays stay within this). An error's quote is at most ``QUOTE_BYTES``.
        """
        limit, calls = self.max_message_bytes, self.max_concurrent_rpcs
        grpc_message = HARD_MESSAGE_FACTOR * limit
        parts = {
            "calls_held": -(-calls * max(grpc_message, HTTP_BODY_COPIES * limit) // MIB),
            "answers_spare": -(-SPARE_ANSWER_MESSAGES * limit // MIB),
            "streams_and_probes_held": -(-(self.max_streams + PROBE_CALLS) * grpc_message // MIB),
            "grpc_copy": -(-GRPC_COPY_EXTRA * grpc_message // MIB),
            "inflated": -(-self.max_workers * limit // MIB),
            "parsed": -(-self.max_workers * BATCH_BYTES_PER_MESSAGE_BYTE * limit // MIB),
            "quotes": -(-calls * QUOTE_BYTES // MIB),
        }
        return {**parts, "total": sum(parts.values())}

    @property
    def tls_enabled(self) -> bool:
        """True when a certificate and key are configured."""
        return self.tls_cert is not None and self.tls_key is not None

    @property
    def address(self) -> str:
        """``host:port`` of the gRPC server (IPv6 hosts bracketed)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


def env_names() -> dict[str, str]:
    """Every ``BOAF_*`` variable the service reads, with its documentation."""
    return {env_name(f.name): f.metadata["doc"] for f in dataclasses.fields(Settings)}


def unbindable(port_field: str, exc: OSError, *, host: str, port: int, hint: str = "") -> InvalidSettings:
    """The one-line start-up error of a port that cannot be bound, naming its ``BOAF_*`` variable."""
    reason = "the port is taken" if exc.errno == errno.EADDRINUSE else (exc.strerror or str(exc))
    return InvalidSettings(
        f"{env_name(port_field)}={port}: cannot listen on {shown(host)}:{port} ({reason}{'; ' + hint if hint else ''})"
    )


def shown(value: object) -> str:
    """``value`` as a settings error shows it unquoted (a number, a path, a host): cut to ``SHOWN_CHARS`` and ``…``.

    A huge number is shown by its digit count, not converted (Python refuses to print one of
    more than 4,300 digits).
    """
    if isinstance(value, int) and value.bit_length() > 4 * MAX_NUMBER_CHARS:
        return f"a number of about {int(value.bit_length() * math.log10(2)) + 1:,} digits"
    text = str(value)
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "…"


def _parse(name: str, kind: Any, raw: str) -> Any:
    kind = str(kind)
    try:
        if kind.startswith("int"):
            return int(_number_text(raw, "a whole number"))
        if kind.startswith("float"):
            return _parse_float(raw)
        if kind.startswith("bool"):
            return _parse_bool(raw)
        if kind.startswith("Path"):
            return Path(raw)
        return raw
    except ValueError as exc:
        # int() and float() quote the whole value in their messages: those are replaced, never shown
        reason = str(exc) if isinstance(exc, _Unparsed) else "expected a whole number"
        raise InvalidSettings(f"{env_name(name)}={quote(raw)}: {reason}") from None


class _Unparsed(ValueError):
    """A value that does not parse, with a message of boaf's own that does not quote it."""


def _number_text(raw: str, kind: str) -> str:
    if len(raw) > MAX_NUMBER_CHARS:
        raise _Unparsed(f"expected {kind} of at most {MAX_NUMBER_CHARS} characters")
    return raw


def _parse_float(raw: str) -> float:
    try:
        value = float(_number_text(raw, "a number"))
    except _Unparsed:
        raise
    except ValueError:
        raise _Unparsed("expected a number") from None
    return value + 0.0  # -0.0 is 0; nan and inf are refused by _check, naming their range


def _parse_bool(raw: str) -> bool:
    lowered = raw.lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise _Unparsed("expected true or false")


def _check(settings: Settings) -> None:
    for name in ("port", "metrics_port", "http_port"):
        value = getattr(settings, name)
        if not 0 <= value <= 65535:
            raise InvalidSettings(f"{env_name(name)}={shown(value)}: a port is 0 … 65535")
    for name in [limit.name for limit in limits.LIMITS] + ["memory_limit_mb"]:
        if getattr(settings, name) < 1:
            raise InvalidSettings(f"{env_name(name)}={shown(getattr(settings, name))}: must be at least 1")
    for limit in limits.LIMITS:  # GetServerInfo reports each in a proto field that must hold it
        if limit.of(settings) > limit.largest:
            raise InvalidSettings(f"{limit.variable}={shown(limit.of(settings))}: must be at most {limit.largest:,}")
    worst = settings.worst_case_memory_mb()
    if worst["total"] > settings.memory_limit_mb:
        sums = ", ".join(f"{part} {mb:,}" for part, mb in worst.items() if part != "total")
        raise InvalidSettings(
            f"{env_name('memory_limit_mb')}={settings.memory_limit_mb:,}: the limits need up to {worst['total']:,} MiB "
            f"({sums}); lower them or raise the memory limit"
        )
    for name, lowest in DURATIONS.items():
        _check_seconds(name, getattr(settings, name), lowest)
    if settings.api_tokens_file is not None and not _is_file(settings.api_tokens_file):
        raise InvalidSettings(f"{env_name('api_tokens_file')}={shown(settings.api_tokens_file)}: no such file")
    if (settings.tls_cert is None) != (settings.tls_key is None):
        raise InvalidSettings(f"{env_name('tls_cert')} and {env_name('tls_key')} must be set together")
    if settings.log_level.upper() not in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
        raise InvalidSettings(
            f"{env_name('log_level')}={quote(settings.log_level)}: expected DEBUG, INFO, WARNING or ERROR"
        )
    if settings.log_format not in LOG_FORMATS:
        raise InvalidSettings(
            f"{env_name('log_format')}={quote(settings.log_format)}: expected {', '.join(LOG_FORMATS)}"
        )


DURATIONS = {
    "model_poll_s": "at least 0 (0: no polling)",
    "shutdown_grace_s": "at least 0",
    "http_header_timeout_s": "more than 0",
    "http_body_timeout_s": "more than 0",
    "idle_timeout_s": "more than 0",
}
"""Every duration setting (seconds), with the least value it takes."""


def _check_seconds(name: str, value: float, lowest: str) -> None:
    """Refuse a duration that is not finite, below its least value or above ``MAX_SECONDS``."""
    if not math.isfinite(value):
        raise InvalidSettings(f"{env_name(name)}={value}: must be a finite number of seconds")
    if value < 0 or (value == 0 and lowest.startswith("more")):
        raise InvalidSettings(f"{env_name(name)}={value}: must be {lowest}")
    if value > MAX_SECONDS:
        raise InvalidSettings(f"{env_name(name)}={value:g}: must be at most {MAX_SECONDS:,.0f} (a day)")


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError):  # a name too long for the system, a NUL in it, a part that is no directory
        return False
