"""The one table of limits: the proto's Limits, Settings, the checks, OpenAPI and the docs all agree with it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import grpc
import pytest
from google.protobuf import descriptor_pool
from google.protobuf.descriptor import FieldDescriptor

from boaf.client import Limits as ClientLimits
from boaf.service.core import errors, limits
from boaf.service.core.limits import LIMITS, Limit
from boaf.service.core.settings import InvalidSettings, Settings, env_names
from boaf.service.grpc.status import status_of
from boaf.service.http.openapi import REQUEST_LIMITS
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import game_pb2  # noqa: F401  (registers the Game service's requests, HintRequest among them)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "service.md"
PROTO_LIMITS = pb.Limits.DESCRIPTOR
LARGEST = {FieldDescriptor.TYPE_UINT32: 2**32 - 1, FieldDescriptor.TYPE_UINT64: 2**64 - 1}


def test_the_table_is_the_protos_limits_field_for_field_in_number_order() -> None:
    by_number = sorted(PROTO_LIMITS.fields, key=lambda f: f.number)
    assert [limit.proto_field for limit in LIMITS] == [f.name for f in by_number]


@pytest.mark.parametrize("limit", LIMITS, ids=lambda limit: limit.name)
def test_each_default_fits_its_proto_field(limit: Limit) -> None:
    proto_field = PROTO_LIMITS.fields_by_name[limit.proto_field]
    assert 1 <= limit.default <= LARGEST[proto_field.type]
    assert limit.largest == LARGEST[proto_field.type]


@pytest.mark.parametrize("limit", LIMITS, ids=lambda limit: limit.name)
def test_a_setting_past_its_proto_field_is_refused_at_start_up(limit: Limit) -> None:
    with pytest.raises(InvalidSettings, match=rf"^{limit.variable}={limit.largest + 1}: must be at most "):
        Settings.from_env({limit.variable: str(limit.largest + 1)}, memory_limit_mb=2**80)
    assert limit.of(Settings.from_env({limit.variable: str(limit.largest)}, memory_limit_mb=2**80)) == limit.largest


@pytest.mark.parametrize("limit", LIMITS, ids=lambda limit: limit.name)
def test_settings_take_each_limits_default_doc_and_variable(limit: Limit) -> None:
    setting = {f.name: f for f in dataclasses.fields(Settings)}[limit.name]
    assert (setting.default, setting.metadata["doc"]) == (limit.default, limit.doc)
    assert env_names()[limit.variable] == limit.doc
    raised = Settings.from_env({limit.variable: str(limit.default + 1)}, memory_limit_mb=100_000)
    assert limit.of(raised) == limit.default + 1


def test_server_info_reports_every_limit_from_the_settings() -> None:
    settings = Settings(max_batch_size=5, hint_max_nodes=300)
    reported = pb.Limits(**limits.reported(settings))
    assert {f.name: getattr(reported, f.name) for f in PROTO_LIMITS.fields} == {
        limit.proto_field: getattr(settings, limit.name) for limit in LIMITS
    }


def test_the_client_spells_the_protos_limits() -> None:
    assert list(ClientLimits.__dataclass_fields__) == [f.name for f in PROTO_LIMITS.fields]


SMALL = Settings(
    max_batch_size=5,
    max_message_bytes=1000,
    solve_max_nodes=99,
    solve_time_limit_ms=250,
    puzzle_max_states=1000,
    puzzle_max_samples=100,
    puzzle_max_iterations=50,
    hint_max_nodes=300,
)


# (limit, value asked for, field named, the message past it): the messages both edges have always sent.
@pytest.mark.parametrize(
    ("limit", "value", "field", "message"),
    [
        (limits.MAX_BATCH_SIZE, 6, None, "states: a batch of 6 states exceeds the limit of 5 (BOAF_MAX_BATCH_SIZE)"),
        (limits.MAX_MESSAGE_BYTES, 1001, None,
         "request: a message of 1,001 bytes exceeds the limit of 1,000 bytes (BOAF_MAX_MESSAGE_BYTES)"),
        (limits.MAX_MESSAGE_BYTES, 2500, "answer",
         "answer: a message of 2,500 bytes exceeds the limit of 1,000 bytes (BOAF_MAX_MESSAGE_BYTES)"),
        (limits.SOLVE_MAX_NODES, 100, None, "max_nodes: 100 exceeds the server's limit of 99 (BOAF_SOLVE_MAX_NODES)"),
        (limits.SOLVE_TIME_LIMIT_MS, 251, None,
         "time_limit_ms: 251 exceeds the server's limit of 250 (BOAF_SOLVE_TIME_LIMIT_MS)"),
        (limits.PUZZLE_MAX_STATES, 1001, None,
         "max_states: 1001 exceeds the server's limit of 1000 (BOAF_PUZZLE_MAX_STATES)"),
        (limits.PUZZLE_MAX_SAMPLES, 101, None,
         "samples: 101 exceeds the server's limit of 100 (BOAF_PUZZLE_MAX_SAMPLES)"),
        (limits.PUZZLE_MAX_ITERATIONS, 51, None,
         "iterations: 51 exceeds the server's limit of 50 (BOAF_PUZZLE_MAX_ITERATIONS)"),
        (limits.HINT_MAX_NODES, 301, None,
         "max_nodes_per_move: 301 exceeds the server's limit of 300 (BOAF_HINT_MAX_NODES)"),
    ],
)  # fmt: skip
def test_a_request_past_a_limit_is_out_of_range_with_its_message(
    limit: Limit, value: int, field: str | None, message: str
) -> None:
    limit.check(SMALL, limit.of(SMALL), field=field)  # at the limit: allowed
    with pytest.raises(errors.LimitExceeded) as caught:
        limit.check(SMALL, value, field=field)
    assert str(caught.value) == message
    assert status_of(caught.value) == (grpc.StatusCode.OUT_OF_RANGE, message)


@pytest.mark.parametrize(
    ("limit", "values", "message"),
    [
        (limits.MAX_CONCURRENT_RPCS, {}, "64 calls already in flight (BOAF_MAX_CONCURRENT_RPCS); retry later"),
        (limits.MAX_STREAMS, {}, "64 streams already open (BOAF_MAX_STREAMS); retry later"),
        (limits.MAX_WORKERS, {}, "the call's time ran out while it waited for a worker (64 busy, BOAF_MAX_WORKERS)"),
        (limits.BATCH_TIME_LIMIT_MS, {"seconds": 1.5},
         "the time limit of 1.5 s (BOAF_BATCH_TIME_LIMIT_MS, counted from the call's arrival) ran out"),
        (limits.MAX_CONCURRENT_PUZZLES, {"seconds": 20.0},
         "puzzles: 64 already running (BOAF_MAX_CONCURRENT_PUZZLES) and none finished within the call's 20 s; "
         "retry later"),
        (limits.MAX_CONCURRENT_SEARCHES, {"seconds": 0.25},
         "searches: 64 already running (BOAF_MAX_CONCURRENT_SEARCHES) and none finished within the call's 0.25 s; "
         "retry later"),
    ],
)  # fmt: skip
def test_the_limits_a_running_call_meets_keep_their_messages(
    limit: Limit, values: dict[str, float], message: str
) -> None:
    assert limit.message(64, **values) == message


def test_openapi_bounds_request_fields_that_exist_with_their_limit() -> None:
    for (message, field), limit in REQUEST_LIMITS.items():
        descriptor = descriptor_pool.Default().FindMessageTypeByName(message)
        assert field in descriptor.fields_by_name, (message, field)
        assert limit.field_name == field
    assert {limit.name for limit in REQUEST_LIMITS.values()} == {
        limit.name for limit in LIMITS if limit.past == limits.OUT_OF_RANGE
    }


def test_the_docs_hold_the_generated_limits_table() -> None:
    # On a change to the table, paste limits.docs_table() over the table in docs/service.md ("## Limits").
    assert limits.docs_table() in DOCS.read_text(encoding="utf-8")
    for limit in LIMITS:
        assert f"`{limit.variable}` ({limit.shown()}" in limits.docs_table()
