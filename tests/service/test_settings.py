"""The settings object: BOAF_* variables, defaults, and errors that name the variable."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.settings import InvalidSettings, Settings, env_names


def test_defaults_bind_loopback_on_50051() -> None:
    settings = Settings.from_env({})
    assert (settings.host, settings.port, settings.address) == ("127.0.0.1", 50051, "127.0.0.1:50051")
    assert settings.model_dir is None
    assert not settings.tls_enabled


def test_every_field_reads_its_boaf_variable() -> None:
    env = {
        "BOAF_HOST": "0.0.0.0",
        "BOAF_PORT": "6000",
        "BOAF_METRICS_PORT": "6001",
        "BOAF_METRICS_ENABLED": "false",
        "BOAF_GRPC_ENABLED": "false",
        "BOAF_HTTP_PORT": "6002",
        "BOAF_HTTP_ENABLED": "false",
        "BOAF_MODEL_DIR": "/models/v2",
        "BOAF_MAX_WORKERS": "3",
        "BOAF_MAX_CONCURRENT_RPCS": "7",
        "BOAF_MAX_MESSAGE_BYTES": "1000",
        "BOAF_MAX_BATCH_SIZE": "5",
        "BOAF_SOLVE_MAX_NODES": "99",
        "BOAF_SOLVE_TIME_LIMIT_MS": "250",
        "BOAF_PUZZLE_MAX_STATES": "1000",
        "BOAF_MAX_CONCURRENT_PUZZLES": "2",
        "BOAF_MAX_CONCURRENT_SEARCHES": "3",
        "BOAF_SEARCH_MEMORY_MB": "64",
        "BOAF_PUZZLE_MAX_SAMPLES": "100",
        "BOAF_PUZZLE_MAX_ITERATIONS": "50",
        "BOAF_MEMORY_LIMIT_MB": "1024",
        "BOAF_SHUTDOWN_GRACE_S": "2.5",
        "BOAF_TLS_CERT": "/tls/cert.pem",
        "BOAF_TLS_KEY": "/tls/key.pem",
        "BOAF_LOG_LEVEL": "debug",
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
        max_workers=3,
        max_concurrent_rpcs=7,
        max_message_bytes=1000,
        max_batch_size=5,
        solve_max_nodes=99,
        solve_time_limit_ms=250,
        puzzle_max_states=1000,
        max_concurrent_puzzles=2,
        max_concurrent_searches=3,
        search_memory_mb=64,
        puzzle_max_samples=100,
        puzzle_max_iterations=50,
        memory_limit_mb=1024,
        shutdown_grace_s=2.5,
        tls_cert=Path("/tls/cert.pem"),
        tls_key=Path("/tls/key.pem"),
        log_level="debug",
    )
    assert settings.tls_enabled


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
        ({"BOAF_SHUTDOWN_GRACE_S": "-1"}, "BOAF_SHUTDOWN_GRACE_S=-1.0: must be at least 0"),
        ({"BOAF_MAX_CONCURRENT_SEARCHES": "0"}, "BOAF_MAX_CONCURRENT_SEARCHES=0: must be at least 1"),
        ({"BOAF_MAX_CONCURRENT_SEARCHES": "8"}, "BOAF_MEMORY_LIMIT_MB=3,072: the limits need up to 5,053 MiB"),
    ],
)
def test_bad_values_name_the_variable(env: dict[str, str], match: str) -> None:
    with pytest.raises(InvalidSettings) as caught:
        Settings.from_env(env)
    assert match in str(caught.value)
