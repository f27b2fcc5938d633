"""The private internals of third-party libraries that boaf relies on, and the pins that keep them.

Where a library has no public API for what boaf needs, boaf uses its internals, and pyproject.toml
pins the library to the range these tests pass on (lower bound: the version tested; upper bound: the
next minor release, not yet tested). deploy/constraints.txt pins what the images install, inside
that range. An upgrade that removes or changes an internal fails here first, naming the internal,
the installed version and the boaf code that reads it.

``INTERNALS`` is the table: (library, internal, where boaf uses it, check). A check raises
``AssertionError`` or ``AttributeError`` when the internal is gone or behaves otherwise.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import threading
import tomllib
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import import_module, metadata
from pathlib import Path
from typing import Any

import grpc
import h11
import numba
import pytest
import uvicorn
from grpc_health.v1 import health_pb2
from numba.core import caching
from packaging.requirements import Requirement
from packaging.version import Version
from uvicorn.protocols.http import h11_impl
from uvicorn.server import ServerState

from boaf.game import numba_cache
from boaf.service.core import warmup as kernels
from boaf.service.grpc.server import BoafHealth
from boaf.service.http import protocol

ROOT = Path(__file__).resolve().parents[1]
UPPER_BOUNDS = ("<", "<=", "~=", "==", "===")


@dataclass(frozen=True)
class Internal:
    library: str  # the distribution, as pyproject.toml names it
    internal: str
    used_by: str
    check: Callable[[Path], None]  # gets a temporary folder

    def __str__(self) -> str:
        return f"{self.library}: {self.internal}"


# ---------------------------------------------------------------- numba


def check_cache_locator_base(tmp_path: Path) -> None:
    missing = caching._CacheLocator.__abstractmethods__ - set(vars(numba_cache.KernelSourcesLocator))
    assert not missing, f"_CacheLocator has new abstract methods KernelSourcesLocator lacks: {sorted(missing)}"


def check_locator_classes(tmp_path: Path) -> None:
    locators = caching.CacheImpl._locator_classes
    assert isinstance(locators, list), f"CacheImpl._locator_classes is a {type(locators).__name__}, not a list"
    assert locators[0] is numba_cache.KernelSourcesLocator, "install() did not put its locator first"
    # numba still consults the list: a cached kernel of boaf's gets the stamp of boaf's kernel sources
    from boaf.game import graph  # a module of cached kernels: decorating them picks their locator, no compile

    dispatcher = next(value for value in vars(graph).values() if isinstance(value, numba.core.registry.CPUDispatcher))
    locator = dispatcher._cache._impl.locator
    assert isinstance(locator, numba_cache.KernelSourcesLocator), f"numba chose {type(locator).__name__}"


def check_no_nrt_option(tmp_path: Path) -> None:
    @numba.njit(_nrt=False)
    def increment(x: int) -> int:
        return x + 1

    assert increment(1) == 2
    (signature,) = increment.signatures
    compiled = increment.overloads[signature]
    assert compiled.target_context.enable_nrt is False, "numba compiled with reference counting all the same"


def check_cache_index(tmp_path: Path) -> None:
    (tmp_path / "numba_cache_probe.py").write_text(
        "import numba\n\n@numba.njit(cache=True)\ndef increment(x):\n    return x + 1\n", encoding="utf-8"
    )
    unit = kernels.Unit("probe", ("numba_cache_probe:increment",), run=lambda: None, at_start=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(tmp_path))
        probe = import_module("numba_cache_probe")
        cache = probe.increment._cache
        for owner, name in ((cache, "_cache_file"), (cache, "_index_key"), (cache._cache_file, "_load_index")):
            assert hasattr(owner, name), f"{type(owner).__name__}.{name} is gone"
        assert not kernels.is_cached(unit), "is_cached says a function never compiled is cached"
        probe.increment(1)
        assert kernels.is_cached(unit), "is_cached cannot find a function numba has just cached"


# ---------------------------------------------------------------- grpcio


def check_server_state(tmp_path: Path) -> None:
    server = grpc.server(ThreadPoolExecutor(max_workers=1), maximum_concurrent_rpcs=3)
    state = server._state  # type: ignore[attr-defined]
    assert (state.maximum_concurrent_rpcs, state.active_rpc_count) == (3, 0)
    # the interceptors run after this test, under the same lock, so they see the numbers it saw
    source = inspect.getsource(import_module("grpc._server"))
    assert "state.active_rpc_count >= state.maximum_concurrent_rpcs" in source, "grpc turns calls away otherwise"


# ---------------------------------------------------------------- uvicorn


def check_h11_protocol(tmp_path: Path) -> None:
    class Transport(asyncio.Transport):
        def get_extra_info(self, name: str, default: Any = None) -> Any:
            return {"peername": ("127.0.0.1", 40000), "sockname": ("127.0.0.1", 8000)}.get(name, default)

        def is_closing(self) -> bool:
            return False

        def close(self) -> None:
            pass

        def get_write_buffer_size(self) -> int:
            return 0

    async def connect() -> None:
        config = uvicorn.Config(app=lambda scope, receive, send: None, log_config=None)
        state = ServerState()
        made = protocol.HeaderTimedProtocol(
            config=config, server_state=state, app_state={}, header_timeout_s=1.0, answer_timeout_s=1.0
        )
        made.connection_made(Transport())
        assert isinstance(made.conn, h11.Connection)
        assert made.cycle is None and made.flow.write_paused is False and made.client == ("127.0.0.1", 40000)
        assert made.loop is asyncio.get_running_loop()
        assert state.connections == {made}
        made.connection_lost(None)

    asyncio.run(connect())
    for hook in ("on_response_complete", "pause_writing", "resume_writing", "send_400_response"):
        assert callable(getattr(h11_impl.H11Protocol, hook, None)), f"H11Protocol.{hook} is gone"
    cycle = inspect.getsource(h11_impl.RequestResponseCycle)
    assert "self.response_complete = " in cycle, "RequestResponseCycle.response_complete is gone"
    assert h11_impl.STATUS_PHRASES[400] == b"Bad Request"


def check_bad_request_warning(tmp_path: Path) -> None:
    source = inspect.getsource(h11_impl.H11Protocol)
    assert protocol.UVICORN_BAD_REQUEST in source, f"uvicorn no longer logs {protocol.UVICORN_BAD_REQUEST!r}"


def check_server_connections(tmp_path: Path) -> None:
    server = uvicorn.Server(uvicorn.Config(app=lambda scope, receive, send: None, log_config=None))
    assert server.server_state.connections == set()


# ---------------------------------------------------------------- typer


def check_usage_error_class(tmp_path: Path) -> None:
    from boaf.service.cli import usage

    assert usage.UsageError.__name__ == "UsageError", f"typer.BadParameter's base is {usage.UsageError.__name__}"
    assert "typer" in usage.UsageError.__module__ or "click" in usage.UsageError.__module__, usage.UsageError.__module__
    error = usage.usage_error_message(typer_no_such_option())
    assert error == "boaf: no such option: --bogus", error


def typer_no_such_option() -> Exception:
    import typer

    from boaf.service.cli import app

    try:
        typer.main.get_command(app).main(["deal", "--bogus"], standalone_mode=False)
    except Exception as exc:  # the parser's NoSuchOption, a UsageError
        return exc
    raise AssertionError("an unknown option was accepted")


INTERNALS = [
    Internal(
        "typer",
        "typer.BadParameter's base (the parser's UsageError) and its NoSuchOption, param and message",
        "boaf.service.cli.usage",
        check_usage_error_class,
    ),
    Internal(
        "numba",
        "numba.core.caching._CacheLocator (base class, its abstract methods)",
        "boaf.game.numba_cache.KernelSourcesLocator",
        check_cache_locator_base,
    ),
    Internal(
        "numba",
        "numba.core.caching.CacheImpl._locator_classes (the locators numba tries, in order)",
        "boaf.game.numba_cache.install",
        check_locator_classes,
    ),
    Internal("numba", "the jit option _nrt=False", "boaf.game.bits.lean_njit", check_no_nrt_option),
    Internal(
        "numba",
        "Dispatcher._cache, Cache._cache_file._load_index(), Cache._index_key()",
        "boaf.service.core.warmup.is_cached",
        check_cache_index,
    ),
    Internal(
        "grpcio",
        "grpc._server: Server._state.active_rpc_count and .maximum_concurrent_rpcs",
        "boaf.service.grpc.server._concurrency_exceeded",
        check_server_state,
    ),
    Internal(
        "uvicorn",
        "uvicorn.protocols.http.h11_impl: H11Protocol's attributes and hooks, RequestResponseCycle, STATUS_PHRASES",
        "boaf.service.http.protocol.HeaderTimedProtocol",
        check_h11_protocol,
    ),
    Internal(
        "uvicorn",
        "H11Protocol's WARNING text for an unparsable request",
        "boaf.service.http.protocol.drop_uvicorn_bad_request_warnings",
        check_bad_request_warning,
    ),
    Internal(
        "uvicorn",
        "Server.server_state.connections",
        "boaf.service.http.server.HttpServer.connections",
        check_server_connections,
    ),
]


@pytest.mark.parametrize("internal", INTERNALS, ids=str)
def test_an_internal_boaf_uses_is_still_there(internal: Internal, tmp_path: Path) -> None:
    try:
        internal.check(tmp_path)
    except (AssertionError, AttributeError, KeyError, TypeError) as exc:
        pytest.fail(
            f"{internal.library} {metadata.version(internal.library)} no longer has {internal.internal} "
            f"(used by {internal.used_by}): {type(exc).__name__}: {exc}. Adapt boaf to it, or keep "
            f"{internal.library} below this version in pyproject.toml and deploy/constraints.txt."
        )


# ---------------------------------------------------------------- replaced by a public API


class WatchContext:
    """The one part of a ``grpc.ServicerContext`` that ``Watch`` uses: callbacks for the call's end."""

    def __init__(self) -> None:
        self.callbacks: list[Callable[[], None]] = []

    def add_callback(self, callback: Callable[[], None]) -> bool:
        self.callbacks.append(callback)
        return True

    def end(self) -> None:
        for callback in self.callbacks:
            callback()


def test_boafs_health_ends_watch_streams_through_grpcios_public_watch() -> None:
    # BoafHealth hands grpcio-health-checking's Watch a send_response_callback of its own (the public,
    # experimental parameter) instead of reading the servicer's private _send_response_callbacks.
    serving, not_serving = health_pb2.HealthCheckResponse.SERVING, health_pb2.HealthCheckResponse.NOT_SERVING
    servicer = BoafHealth(experimental_non_blocking=False)
    ended, open_ = WatchContext(), WatchContext()
    first = servicer.Watch(health_pb2.HealthCheckRequest(service=""), ended)
    stream = servicer.Watch(health_pb2.HealthCheckRequest(service=""), open_)
    assert first is not None and stream is not None
    assert [next(first).status, next(stream).status] == [serving, serving]
    ended.end()  # the call is over: grpcio ends its stream and forgets it, and so does BoafHealth
    assert rest_of(first) == []
    servicer.set("", not_serving)
    assert next(stream).status == not_serving
    servicer.end_watches()
    assert rest_of(stream) == []


def rest_of(stream: Iterator[Any], timeout_s: float = 5.0) -> list[Any]:
    """What ``stream`` still yields, once it ends (fails if it has not ended within ``timeout_s``)."""
    rest: list[Any] = []
    reader = threading.Thread(target=lambda: rest.extend(stream), daemon=True)
    reader.start()
    reader.join(timeout_s)
    assert not reader.is_alive(), f"the Watch stream did not end within {timeout_s} s"
    return rest


# ---------------------------------------------------------------- the pins


def dependencies() -> dict[str, Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = (Requirement(line) for line in project["dependencies"])
    return {canonical(requirement.name): requirement for requirement in requirements}


def constraints() -> dict[str, Version]:
    pins = {}
    for line in (ROOT / "deploy" / "constraints.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[canonical(name)] = Version(version)
    return pins


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


PINNED = sorted({internal.library for internal in INTERNALS})


@pytest.mark.parametrize("library", PINNED)
def test_a_library_whose_internals_boaf_uses_has_an_upper_bound(library: str) -> None:
    requirement = dependencies()[canonical(library)]
    assert any(spec.operator in UPPER_BOUNDS for spec in requirement.specifier), (
        f"pyproject.toml's {str(requirement)!r} has no upper bound, and boaf uses {library}'s internals "
        f"({', '.join(i.internal for i in INTERNALS if i.library == library)}): pin it to the tested range"
    )


@pytest.mark.parametrize("library", PINNED)
def test_the_images_pin_of_a_library_whose_internals_boaf_uses_is_in_pyprojects_range(library: str) -> None:
    requirement = dependencies()[canonical(library)]
    pin = constraints()[canonical(library)]
    assert requirement.specifier.contains(pin, prereleases=True), (
        f"deploy/constraints.txt pins {library}=={pin}, outside pyproject.toml's {str(requirement)!r}: "
        "regenerate it with deploy/image/lock"
    )
