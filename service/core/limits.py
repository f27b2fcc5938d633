"""Every limit a request meets, declared once: the table the rest of the service is derived from.

A ``Limit`` is one setting of ``boaf.service.core.settings.Settings`` (its ``name``), read from
one ``BOAF_*`` variable (``env_name(name)``), reported by GetServerInfo as the field of the
proto's ``Limits`` message of the same name, with its default, unit, documentation and the
message a call gets past it. From ``LIMITS`` come:

- the Settings fields (``Limit.setting``: default and documentation) and their check that
  each limit is at least 1;
- the checks: ``Limit.check`` raises ``LimitExceeded`` (OUT_OF_RANGE) with the limit's
  message; the limits that make a call wait or fail later (concurrency, time) give their
  text through ``Limit.message``;
- GetServerInfo's ``Limits`` (``reported``), the OpenAPI document's ``maximum`` /
  ``maxItems`` (``request_limits``) and the limits table of ``docs/service.md``
  (``docs_table``; a test checks the page holds it).

``tests/service/test_limits.py`` fails when the proto's ``Limits`` fields and this table
disagree. Every ``BOAF_*`` name follows one rule, ``env_name``, kept here because the
table needs it and ``settings`` builds on the table.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from boaf.game.state import MAX_CELLS
from boaf.service.core.errors import LimitExceeded

ENV_PREFIX = "BOAF_"
MIB = 1024 * 1024
UINT32_MAX = 2**32 - 1
UINT64_MAX = 2**64 - 1
OUT_OF_RANGE = "OUT_OF_RANGE"
WHOLE_REQUEST = "request"  # what a message past a limit names when no one field is at fault (the message size)
# The message of a request field past its limit, with the field, the value asked for and the limit.
PAST_SERVER_LIMIT = "{field}: {value} exceeds the server's limit of {limit} ({variable})"
# The message of a call that waited its whole time for a slot: the slots, and the call's time in s.
SLOTS_TAKEN = "{limit} already running ({variable}) and none finished within the call's {seconds:.3g} s; retry later"
WAIT_THEN_BUSY = "wait within the time limit, then RESOURCE_EXHAUSTED"


def env_name(field_name: str) -> str:
    """The environment variable of a settings field: ``port`` -> ``BOAF_PORT``."""
    return ENV_PREFIX + field_name.upper()


@dataclass(frozen=True, kw_only=True)
class Limit:
    """One server limit: a ``Settings`` field, its ``BOAF_*`` variable and the proto ``Limits`` field of its name.

    ``template`` is the message past the limit, a ``str.format`` template given ``variable``
    and ``limit`` (the server's value) and, per limit, ``field`` and ``value`` (a request
    past it) or ``seconds`` (a call's time). ``request_fields`` are the ``(message, field)`` pairs of the proto requests
    it bounds (OpenAPI's ``maximum``); ``bounds``, ``note`` and ``past`` are its row of the
    docs' table.
    """

    name: str
    default: int
    unit: str
    doc: str
    template: str
    bounds: str
    past: str = OUT_OF_RANGE
    note: str = ""
    request_fields: tuple[tuple[str, str], ...] = ()
    largest: int = UINT32_MAX  # the largest value its proto Limits field holds (uint32, or UINT64_MAX)

    @property
    def variable(self) -> str:
        """The ``BOAF_*`` environment variable that sets it."""
        return env_name(self.name)

    @property
    def proto_field(self) -> str:
        """The field of the proto's ``Limits`` message (GetServerInfo) that reports it: its name."""
        return self.name

    @property
    def field_name(self) -> str:
        """The request field its ``check`` names by default (the first of ``request_fields``), else ``request``."""
        return self.request_fields[0][1] if self.request_fields else WHOLE_REQUEST

    def setting(self) -> Any:
        """The ``dataclasses.field`` of ``Settings`` that holds it: its default and documentation."""
        return dataclasses.field(default=self.default, metadata={"doc": self.doc})

    def of(self, settings: object) -> int:
        """Its value in ``settings`` (a ``Settings``; typed ``object`` because ``settings`` is built on this module)."""
        value: int = getattr(settings, self.name)
        return value

    def message(self, limit: int, **values: Any) -> str:
        """The message past it: ``template`` with ``limit`` (the server's value), ``values`` and ``variable``."""
        return self.template.format(limit=limit, variable=self.variable, **values)

    def check(self, settings: object, value: int, *, field: str | None = None) -> None:
        """Raise ``LimitExceeded`` (OUT_OF_RANGE) when ``value`` is past it, naming ``field`` (or ``field_name``).

        The error's ``fields`` are that field, or none when it is ``WHOLE_REQUEST``.
        """
        limit = self.of(settings)
        if value > limit:
            named = field or self.field_name
            fields = () if named == WHOLE_REQUEST else (named,)
            raise LimitExceeded(self.message(limit, field=named, value=value), fields=fields)

    def shown(self) -> str:
        """Its default with its unit, as the docs write it: ``10,000 states``, ``4 MiB``, ``1 puzzle slot``."""
        if self.unit == "bytes" and self.default % MIB == 0:
            return f"{self.default // MIB:,} MiB"
        unit = self.unit.removesuffix("s") if self.default == 1 else self.unit
        return f"{self.default:,} {unit}"


def _request(message: str, *fields: str) -> tuple[tuple[str, str], ...]:
    return tuple((f"boaf.v1.{message}", name) for name in fields)


# In the order of the proto's Limits fields (their numbers).
MAX_BATCH_SIZE = Limit(
    name="max_batch_size",
    default=10_000,
    unit="states",
    doc="States per Classify or Features request; more are OUT_OF_RANGE.",
    template="{field}: a batch of {value} states exceeds the limit of {limit} ({variable})",
    bounds="`states` of Classify / Features",
    request_fields=_request("ClassifyRequest", "states") + _request("FeaturesRequest", "states"),
)
MAX_MESSAGE_BYTES = Limit(
    name="max_message_bytes",
    largest=UINT64_MAX,
    default=4 * MIB,
    unit="bytes",
    doc=(
        "Largest request or response message, in bytes (a 10,000-state 52-card batch is ~2.2 MB); "
        "a larger request is OUT_OF_RANGE (over gRPC, gRPC core refuses an uncompressed one itself, with "
        "a code of its own: docs/service.md, Limits)."
    ),
    template="{field}: a message of {value:,} bytes exceeds the limit of {limit:,} bytes ({variable})",
    bounds="any message",
    note="HTTP checks `Content-Length` before reading",
    past=(
        "OUT_OF_RANGE (HTTP 400, and the connection closes); over gRPC an uncompressed message is refused by "
        'gRPC core: RESOURCE_EXHAUSTED "Received message larger than max (N vs. M)", which `Client` makes '
        "OUT_OF_RANGE"
    ),
)
MAX_CONCURRENT_RPCS = Limit(
    name="max_concurrent_rpcs",
    default=64,
    unit="calls",
    doc=(
        "Unary calls in flight at once, gRPC and HTTP together (running or waiting for a work slot); "
        "more are RESOURCE_EXHAUSTED."
    ),
    template="{limit} calls already in flight ({variable}); retry later",
    bounds="calls in flight, both edges together",
    past="RESOURCE_EXHAUSTED",
)
SOLVE_MAX_NODES = Limit(
    name="solve_max_nodes",
    largest=UINT64_MAX,
    default=100_000_000,
    unit="nodes",
    doc="Largest node budget of a Solve, and the budget when it asks for none; more is OUT_OF_RANGE.",
    template=PAST_SERVER_LIMIT,
    bounds="`max_nodes` of Solve",
    note="also the budget of a Solve asking for none",
    request_fields=_request("SolveRequest", "max_nodes"),
)
SOLVE_TIME_LIMIT_MS = Limit(
    name="solve_time_limit_ms",
    largest=UINT64_MAX,
    default=30_000,
    unit="ms",
    doc=(
        "Longest search time of a Solve or puzzle call in ms, and the limit when it asks for none; "
        "more is OUT_OF_RANGE."
    ),
    template=PAST_SERVER_LIMIT,
    bounds="`time_limit_ms` of Solve and the puzzle RPCs",
    request_fields=_request("SolveRequest", "time_limit_ms")
    + _request("AnalyzePuzzleRequest", "time_limit_ms")
    + _request("GeneratePuzzleRequest", "time_limit_ms"),
)
MAX_STREAMS = Limit(
    name="max_streams",
    default=32,
    unit="streams",
    doc=(
        "Open streams (health Watch, reflection) at once, apart from max_concurrent_rpcs; each has a thread of "
        "its own, so none holds a worker. More are RESOURCE_EXHAUSTED."
    ),
    template="{limit} streams already open ({variable}); retry later",
    bounds="open streams (health Watch, reflection)",
    past="RESOURCE_EXHAUSTED",
)
MAX_WORKERS = Limit(
    name="max_workers",
    default=8,
    unit="work slots",
    doc=(
        "Work slots, shared by gRPC and HTTP: calls parsing and computing at once (the kernels run in parallel, "
        "GIL-free); an admitted call past them waits for one within its time, then is DEADLINE_EXCEEDED."
    ),
    template="the call's time ran out while it waited for a worker ({limit} busy, {variable})",
    bounds="calls computing at once, both edges together",
    past="wait within the time limit, then DEADLINE_EXCEEDED",
)
BATCH_TIME_LIMIT_MS = Limit(
    name="batch_time_limit_ms",
    largest=UINT64_MAX,
    default=30_000,
    unit="ms",
    doc=(
        "Longest time of a Classify or Features call in ms, counted from arrival; past it the call ends "
        "DEADLINE_EXCEEDED (a client deadline shortens it)."
    ),
    template="the time limit of {seconds:.3g} s ({variable}, counted from the call's arrival) ran out",
    bounds="time of Classify / Features / Hint",
    past="DEADLINE_EXCEEDED",
)
PUZZLE_MAX_STATES = Limit(
    name="puzzle_max_states",
    largest=UINT64_MAX,
    default=10_000_000,
    unit="states",
    doc=(
        "States a puzzle analysis may keep (about 60 bytes each at peak), and the budget when it asks for none "
        "(more is OUT_OF_RANGE); the default keeps every 12-card puzzle exact."
    ),
    template=PAST_SERVER_LIMIT,
    bounds="`max_states` of AnalyzePuzzle",
    note="every 12-card puzzle is exact; `states_enumerated` never passes it",
    request_fields=_request("AnalyzePuzzleRequest", "max_states"),
)
PUZZLE_MAX_SAMPLES = Limit(
    name="puzzle_max_samples",
    default=2_000,
    unit="samples",
    doc="Largest samples (states solved per sampled depth) of an AnalyzePuzzle; more are OUT_OF_RANGE.",
    template=PAST_SERVER_LIMIT,
    bounds="`samples` of AnalyzePuzzle",
    request_fields=_request("AnalyzePuzzleRequest", "samples"),
)
PUZZLE_MAX_ITERATIONS = Limit(
    name="puzzle_max_iterations",
    default=10_000,
    unit="iterations",
    doc="Largest iterations (local steps) of a GeneratePuzzle; more are OUT_OF_RANGE.",
    template=PAST_SERVER_LIMIT,
    bounds="`iterations` of GeneratePuzzle",
    request_fields=_request("GeneratePuzzleRequest", "iterations"),
)
MAX_CONCURRENT_PUZZLES = Limit(
    name="max_concurrent_puzzles",
    default=1,
    unit="puzzle slots",
    doc=(
        "Puzzle analyses and generations running at once; more wait within their time limit, "
        "then are RESOURCE_EXHAUSTED."
    ),
    template="puzzles: " + SLOTS_TAKEN,
    bounds="puzzle calls at once",
    note="an analysis may hold ~0.6 GB",
    past=WAIT_THEN_BUSY,
)
MAX_CONCURRENT_SEARCHES = Limit(
    name="max_concurrent_searches",
    default=2,
    unit="search slots",
    doc=(
        "Solve searches running at once (each may hold search_memory_mb); more wait within their time limit, "
        "then are RESOURCE_EXHAUSTED."
    ),
    template="searches: " + SLOTS_TAKEN,
    bounds="searches at once (Solve)",
    past=WAIT_THEN_BUSY,
)
SEARCH_MEMORY_MB = Limit(
    name="search_memory_mb",
    default=384,
    unit="MiB",
    doc=(
        "Memory cap of one exact search, in MiB. Solve passes it to the solver (max_memory_mb: past it the "
        "answer is unknown, reason memory); each search of a puzzle call gets the nodes that fit in it "
        "(search_node_cap)."
    ),
    template="",  # no message: a Solve past it answers OK, status unknown, reason memory
    bounds="memory of one search (Solve, each search of a puzzle call)",
    past="Solve: `unknown` with reason `memory`; a puzzle call's searches get the nodes that fit",
)
HINT_MAX_NODES = Limit(
    name="hint_max_nodes",
    largest=UINT64_MAX,
    default=20_000,
    unit="nodes",
    doc=(
        "Largest node budget of each move's search in a Game Hint (max_nodes_per_move; more is OUT_OF_RANGE); "
        "a Hint asking for none gets the model's exact-path budget, capped by this."
    ),
    template=PAST_SERVER_LIMIT,
    bounds="`max_nodes_per_move` of Hint",
    note="0 asks for the model's exact-path budget, capped by this",
    request_fields=_request("HintRequest", "max_nodes_per_move"),
)

LIMITS: tuple[Limit, ...] = (
    MAX_BATCH_SIZE,
    MAX_MESSAGE_BYTES,
    MAX_CONCURRENT_RPCS,
    SOLVE_MAX_NODES,
    SOLVE_TIME_LIMIT_MS,
    MAX_STREAMS,
    MAX_WORKERS,
    BATCH_TIME_LIMIT_MS,
    PUZZLE_MAX_STATES,
    PUZZLE_MAX_SAMPLES,
    PUZZLE_MAX_ITERATIONS,
    MAX_CONCURRENT_PUZZLES,
    MAX_CONCURRENT_SEARCHES,
    SEARCH_MEMORY_MB,
    HINT_MAX_NODES,
)
"""Every limit, in the order of the proto's ``Limits`` field numbers."""

# The one bound no setting changes: a grid has at most MAX_CELLS cells (OpenAPI's GRID_FIELDS, the docs' last row).
GRID_ROW = (
    "`rows` × `cols`, `cards` of GeneratePuzzle",
    f"{MAX_CELLS} cells; 2 … rows × cols cards",
    "OUT_OF_RANGE; INVALID_ARGUMENT",
)


def reported(settings: object) -> dict[str, int]:
    """GetServerInfo's ``Limits``: each proto field with its limit's value in ``settings``."""
    return {limit.proto_field: limit.of(settings) for limit in LIMITS}


def request_limits() -> dict[tuple[str, str], Limit]:
    """The limit of each bounded request field: ``(message full name, field)`` -> ``Limit``."""
    return {key: limit for limit in LIMITS for key in limit.request_fields}


def docs_table() -> str:
    """The limits table of ``docs/service.md`` (Markdown), one row a limit.

    The limits of a request's fields come first (OUT_OF_RANGE past them), then the grid's bound,
    then the limits a call meets while it runs; each group in ``LIMITS``' order.
    """
    rows = ["| request field or resource | limit (default) | past it |", "|---|---|---|"]
    requests = [limit for limit in LIMITS if limit.past.startswith(OUT_OF_RANGE)]
    for limit in requests:
        rows.append(_docs_row(limit))
    rows.append("| {} | {} | {} |".format(*GRID_ROW))
    rows += [_docs_row(limit) for limit in LIMITS if limit not in requests]
    return "\n".join(rows)


def _docs_row(limit: Limit) -> str:
    default = limit.shown() + (f"; {limit.note}" if limit.note else "")
    return f"| {limit.bounds} | `{limit.variable}` ({default}) | {limit.past} |"
