"""The settings object: BOAF_* variables, defaults, and errors that name the variable."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import grpc
import pytest

from boaf.game.errors import QUOTE_CHARS
from boaf.service.core import errors
from boaf.service.core.limits import LIMITS, Limit
from boaf.service.core.settings import (
    DURATIONS,
    MAX_SECONDS,
    SHOWN_CHARS,
    InvalidSettings,
    Settings,
    env_name,
    env_names,
    shown,
)


def test_defaults_bind_loopback_on_50051() -> None:
    settings = Settings.from_env({})
    assert (settings.host, settings.port, settings.address) == ("127.0.0.1", 50051, "127.0.0.1:50051")
    assert settings.metrics_port == 8082  # MLServer's metrics port: Prometheus itself listens on 9090
    assert settings.log_format == "auto"
    assert settings.model_dir is None
    assert not settings.tls_enabled


def test_every_field_reads_its_boaf_variable(tmp_path: Path) -> None:
    (tmp_path / "tokens").write_text("from-file\n", encoding="utf-8")
    env = {
        "BOAF_API_TOKENS_FILE": str(tmp_path / "tokens"),
        "BOAF_HOST": "0.0.0.0",
        "BOAF_PORT": "6000",
        "BOAF_METRICS_PORT": "6001",
        "BOAF_METRICS_ENABLED": "false",
        "BOAF_GRPC_ENABLED": "false",
        "BOAF_HTTP_PORT": "6002",
        "BOAF_HTTP_ENABLED": "false",
        "BOAF_MODEL_DIR": "/models/v2",
        "BOAF_MODEL_POLL_S": "0.5",
        "BOAF_OTEL": "on",
        "BOAF_MAX_WORKERS": "3",
        "BOAF_MAX_CONCURRENT_RPCS": "7",
        "BOAF_MAX_STREAMS": "9",
        "BOAF_BATCH_TIME_LIMIT_MS": "1500",
        "BOAF_HTTP_HEADER_TIMEOUT_S": "2",
        "BOAF_HTTP_BODY_TIMEOUT_S": "3",
        "BOAF_IDLE_TIMEOUT_S": "4",
        "BOAF_METRICS_HOST": "0.0.0.0",
        "BOAF_ALLOWED_HOSTS": "boaf.example, localhost",
        "BOAF_CORS_ORIGINS": "https://app.example",
        "BOAF_API_TOKENS": "s3cret,other",
        "BOAF_REFLECTION_ENABLED": "no",
        "BOAF_PAGE_ENABLED": "off",
        "BOAF_MAX_MESSAGE_BYTES": "1000",
        "BOAF_MAX_BATCH_SIZE": "5",
        "BOAF_SOLVE_MAX_NODES": "99",
        "BOAF_SOLVE_TIME_LIMIT_MS": "250",
        "BOAF_PUZZLE_MAX_STATES": "1000",
        "BOAF_MAX_CONCURRENT_PUZZLES": "2",
        "BOAF_MAX_CONCURRENT_SEARCHES": "3",
        "BOAF_SEARCH_MEMORY_MB": "64",
        "BOAF_HINT_MAX_NODES": "300",
        "BOAF_PUZZLE_MAX_SAMPLES": "100",
        "BOAF_PUZZLE_MAX_ITERATIONS": "50",
        "BOAF_MEMORY_LIMIT_MB": "1024",
        "BOAF_SHUTDOWN_GRACE_S": "2.5",
        "BOAF_TLS_CERT": "/tls/cert.pem",
        "BOAF_TLS_KEY": "/tls/key.pem",
        "BOAF_LOG_LEVEL": "debug",
        "BOAF_LOG_FORMAT": "json",
    }
    assert set(env) == set(env_names())
    settings = Settings.from_env(env)
    assert settings == Settings(
        host="0.0.0.0",
        port=6000,
        metrics_port=6001,
        metrics_enabled=False,
        grpc_enabled=False,
        http_port=6002,
        http_enabled=False,
        model_dir=Path("/models/v2"),
        model_poll_s=0.5,
        otel=True,
        max_workers=3,
        max_concurrent_rpcs=7,
        max_streams=9,
        batch_time_limit_ms=1500,
        http_header_timeout_s=2.0,
        http_body_timeout_s=3.0,
        idle_timeout_s=4.0,
        metrics_host="0.0.0.0",
        allowed_hosts="boaf.example, localhost",
        cors_origins="https://app.example",
        api_tokens="s3cret,other",
        api_tokens_file=tmp_path / "tokens",
        reflection_enabled=False,
        page_enabled=False,
        max_message_bytes=1000,
        max_batch_size=5,
        solve_max_nodes=99,
        solve_time_limit_ms=250,
        puzzle_max_states=1000,
        max_concurrent_puzzles=2,
        max_concurrent_searches=3,
        search_memory_mb=64,
        hint_max_nodes=300,
        puzzle_max_samples=100,
        puzzle_max_iterations=50,
        memory_limit_mb=1024,
        shutdown_grace_s=2.5,
        tls_cert=Path("/tls/cert.pem"),
        tls_key=Path("/tls/key.pem"),
        log_level="debug",
        log_format="json",
    )
    assert settings.tls_enabled
    assert settings.allowed_host_set() == {"boaf.example", "localhost"}
    assert settings.cors_origin_set() == {"https://app.example"}
    assert settings.api_token_set() == {"s3cret", "other", "from-file"}


def test_api_tokens_file_adds_one_token_a_line(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text("# the app's token\nalpha\n\nbeta  # the page\n", encoding="utf-8")
    assert Settings.from_env({"BOAF_API_TOKENS": "gamma", "BOAF_API_TOKENS_FILE": str(path)}).api_token_set() == {
        "alpha",
        "beta",
        "gamma",
    }
    with pytest.raises(InvalidSettings, match=r"BOAF_API_TOKENS_FILE=.*: no such file"):
        Settings.from_env({"BOAF_API_TOKENS_FILE": str(tmp_path / "missing")})


def test_the_host_check_is_on_for_loopback_and_off_elsewhere_unless_set() -> None:
    assert "localhost" in Settings().allowed_host_set()
    assert Settings(host="0.0.0.0").allowed_host_set() is None
    assert Settings(host="0.0.0.0", allowed_hosts="boaf.example").allowed_host_set() == {"boaf.example"}


def test_overrides_beat_the_environment_and_none_keeps_it() -> None:
    settings = Settings.from_env({"BOAF_PORT": "6000", "BOAF_HOST": "::1"}, port=7000, host=None)
    assert (settings.port, settings.address) == (7000, "[::1]:7000")


def test_every_variable_is_documented() -> None:
    assert all(doc.strip() for doc in env_names().values())


@pytest.mark.parametrize(
    ("env", "match"),
    [
        ({"BOAF_PORT": "http"}, "BOAF_PORT='http'"),
        ({"BOAF_PORT": "70000"}, "BOAF_PORT=70000: a port is 0 … 65535"),
        ({"BOAF_MAX_BATCH_SIZE": "0"}, "BOAF_MAX_BATCH_SIZE=0: must be at least 1"),
        ({"BOAF_MAX_CONCURRENT_PUZZLES": "0"}, "BOAF_MAX_CONCURRENT_PUZZLES=0: must be at least 1"),
        ({"BOAF_METRICS_ENABLED": "maybe"}, "BOAF_METRICS_ENABLED='maybe': expected true or false"),
        ({"BOAF_TLS_CERT": "/a.pem"}, "BOAF_TLS_CERT and BOAF_TLS_KEY must be set together"),
        ({"BOAF_LOG_LEVEL": "LOUD"}, "BOAF_LOG_LEVEL='LOUD'"),
        ({"BOAF_LOG_FORMAT": "xml"}, "BOAF_LOG_FORMAT='xml': expected auto, json, text"),
        ({"BOAF_SHUTDOWN_GRACE_S": "-1"}, "BOAF_SHUTDOWN_GRACE_S=-1.0: must be at least 0"),
        ({"BOAF_MODEL_POLL_S": "-1"}, "BOAF_MODEL_POLL_S=-1.0: must be at least 0 (0: no polling)"),
        ({"BOAF_MAX_CONCURRENT_SEARCHES": "0"}, "BOAF_MAX_CONCURRENT_SEARCHES=0: must be at least 1"),
        ({"BOAF_MAX_CONCURRENT_SEARCHES": "8"}, "BOAF_MEMORY_LIMIT_MB=3,072: the limits need up to 5,321 MiB"),
        ({"BOAF_HINT_MAX_NODES": "0"}, "BOAF_HINT_MAX_NODES=0: must be at least 1"),
        # Every work slot may hold one hint search of 1M nodes at 408 B a node: 8 x 389 MiB.
        ({"BOAF_HINT_MAX_NODES": "1000000"}, "the limits need up to 6,067 MiB (base 512, searches 768, hints 3,113"),
    ],
)
def test_bad_values_name_the_variable(env: dict[str, str], match: str) -> None:
    with pytest.raises(InvalidSettings) as caught:
        Settings.from_env(env)
    assert match in str(caught.value)


@pytest.mark.parametrize("limit", LIMITS, ids=lambda limit: limit.name)
def test_every_limit_is_at_least_1(limit: Limit) -> None:
    with pytest.raises(InvalidSettings) as caught:
        Settings.from_env({limit.variable: "0"})
    assert str(caught.value) == f"{limit.variable}=0: must be at least 1"


# Each setting that documents a status code, and the error the server raises when a call meets that setting.
ENFORCED_BY: dict[str, type[Exception]] = {
    "max_workers": errors.DeadlineExceeded,  # an admitted call that never got a work slot within its time
    "max_concurrent_rpcs": errors.Busy,
    "max_streams": errors.Busy,
    "max_message_bytes": errors.LimitExceeded,
    "max_batch_size": errors.LimitExceeded,
    "solve_max_nodes": errors.LimitExceeded,
    "solve_time_limit_ms": errors.LimitExceeded,
    "batch_time_limit_ms": errors.DeadlineExceeded,
    "puzzle_max_states": errors.LimitExceeded,
    "max_concurrent_puzzles": errors.Busy,
    "max_concurrent_searches": errors.Busy,
    "puzzle_max_samples": errors.LimitExceeded,
    "puzzle_max_iterations": errors.LimitExceeded,
    "hint_max_nodes": errors.LimitExceeded,
    "api_tokens": errors.Unauthenticated,
}


def test_each_setting_documents_the_code_status_of_gives_its_error() -> None:
    codes = {code.name for code in grpc.StatusCode}
    words = {f.name: {word.strip(".,;()") for word in f.metadata["doc"].split()} for f in dataclasses.fields(Settings)}
    documented = {name: named & codes for name, named in words.items()}
    assert {name for name, named in documented.items() if named} == set(ENFORCED_BY)
    for name, error in ENFORCED_BY.items():
        code, _ = errors.status_of(error("x"))
        assert documented[name] == {code.name}, name


DURATION_FIELDS = [f.name for f in dataclasses.fields(Settings) if f.type == "float"]
LONG_VALUE = "9" * 100_000  # the attack suite's value: once quoted whole, in a line of 100,175 bytes


def test_every_float_setting_is_a_checked_duration() -> None:
    assert set(DURATION_FIELDS) == set(DURATIONS) and DURATION_FIELDS


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN", "Infinity", "1e400", "-1e400"])
@pytest.mark.parametrize("name", DURATION_FIELDS)
def test_a_duration_is_a_finite_number(name: str, value: str) -> None:
    with pytest.raises(InvalidSettings, match=rf"^{env_name(name)}=-?inf|^{env_name(name)}=nan"):
        Settings.from_env({env_name(name): value})


@pytest.mark.parametrize("name", DURATION_FIELDS)
def test_a_duration_is_at_most_a_day(name: str) -> None:
    assert getattr(Settings.from_env({env_name(name): str(MAX_SECONDS)}), name) == MAX_SECONDS
    with pytest.raises(InvalidSettings, match=rf"^{env_name(name)}=1e\+300: must be at most 86,400"):
        Settings.from_env({env_name(name): "1e300"})


def test_minus_zero_is_zero() -> None:
    settings = Settings.from_env({"BOAF_MODEL_POLL_S": "-0.0", "BOAF_SHUTDOWN_GRACE_S": "-0"})
    assert (str(settings.model_poll_s), str(settings.shutdown_grace_s)) == ("0.0", "0.0")
    with pytest.raises(InvalidSettings, match=r"^BOAF_IDLE_TIMEOUT_S=0\.0: must be more than 0"):
        Settings.from_env({"BOAF_IDLE_TIMEOUT_S": "-0.0"})


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("BOAF_MAX_BATCH_SIZE", LONG_VALUE),  # a number limit, past it
        ("BOAF_MAX_BATCH_SIZE", "x" * 100_000),  # not a number
        ("BOAF_PORT", LONG_VALUE),
        ("BOAF_MEMORY_LIMIT_MB", LONG_VALUE),  # no upper limit, and more digits than Python prints
        ("BOAF_MODEL_POLL_S", LONG_VALUE),
        ("BOAF_IDLE_TIMEOUT_S", "x" * 100_000),
        ("BOAF_METRICS_ENABLED", "x" * 100_000),
        ("BOAF_API_TOKENS_FILE", "/x" * 50_000),  # a path
        ("BOAF_LOG_LEVEL", "x" * 100_000),
        ("BOAF_LOG_FORMAT", "x" * 100_000),
    ],
)
def test_an_error_quotes_a_few_dozen_characters_of_a_long_value(name: str, value: str) -> None:
    with pytest.raises(InvalidSettings) as caught:
        Settings.from_env({name: value})
    message = str(caught.value)
    assert message.startswith(f"{name}=") and len(message) < 160 and "\n" not in message, message
    assert value[:QUOTE_CHARS] in message and "…" in message


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (10**5000, "a number of about 5,001 digits"),
        ("x" * 200, "x" * SHOWN_CHARS + "…"),
        ("/a/" + "b" * 80, "/a/" + "b" * 80),
        (7, "7"),
    ],
    ids=["huge number", "long text", "path", "short number"],
)
def test_shown_cuts_a_value_before_it_is_formatted(value: object, says: str) -> None:
    assert shown(value) == says
