"""``boaf serve``: run the gRPC and HTTP/JSON service until SIGTERM or Ctrl-C; SIGHUP reloads the model.

SIGHUP makes a server whose ``BOAF_MODEL_DIR`` is a model root look at its ``CURRENT``
at once, and load a new version without a restart (``boaf.service.core.reload``).

Start-up errors are one short line on stderr, never a traceback (a value of any length is
quoted by a few dozen characters of it, at most ``WORD_CHARS``): a setting that cannot
be used (a value that does not parse, a port that is taken, a TLS file that is
missing or does not match its pair, an unreadable tokens file, a model directory
without a model that loads) names the setting and its value, exit status 2: the flag
when a flag set it (``--http-port=52080``), else its ``BOAF_*`` variable. Anything else
is an internal failure, exit status 1 (its traceback goes to the log). Every other line
the process writes is a log line (``boaf.service.core.logs``), but for the one that says
where it serves.
"""

from __future__ import annotations

import gc
import logging
import os
import re
import signal
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from boaf.service.cli.app import app
from boaf.service.core.settings import InvalidSettings, Settings, env_name, shown

if TYPE_CHECKING:
    from boaf.service.app import BoafService
    from boaf.service.http import HttpServer

log = logging.getLogger(__name__)

REASON_CHARS = 200  # the most of a failure's own text (which may quote a path or a file) a start-up error shows
WORD_CHARS = 120  # the longest word (a path, a host) a start-up error shows whole
SIGNAL_CHECK_S = 0.5  # the main thread wakes this often to run the handlers of signals other threads received

SETTING_FLAGS = {
    "host": "--host",
    "port": "--port",
    "metrics_port": "--metrics-port",
    "http_port": "--http-port",
    "model_dir": "--model-dir",
}
"""The flag of each setting ``serve`` takes a value for: an error about a value a flag set names the flag."""


def _setting(field: str, about: str) -> str:
    """Help for a setting's flag: what it is, its ``BOAF_*`` variable and its default."""
    default = getattr(Settings, field)
    return f"{about} [{env_name(field)}, default {'on' if default is True else default}]."


@app.command("serve")
def serve_command(
    *,
    host: Annotated[str | None, typer.Option(SETTING_FLAGS["host"], help=_setting("host", "Bind address"))] = None,
    port: Annotated[int | None, typer.Option(SETTING_FLAGS["port"], help=_setting("port", "gRPC port"))] = None,
    metrics_port: Annotated[
        int | None, typer.Option(SETTING_FLAGS["metrics_port"], help=_setting("metrics_port", "Prometheus port"))
    ] = None,
    http_port: Annotated[
        int | None,
        typer.Option(SETTING_FLAGS["http_port"], help=_setting("http_port", "HTTP/JSON and page port")),
    ] = None,
    grpc: Annotated[bool | None, typer.Option("--grpc/--no-grpc", help=_setting("grpc_enabled", "Serve gRPC"))] = None,
    http: Annotated[
        bool | None,
        typer.Option("--http/--no-http", help=_setting("http_enabled", "Serve HTTP/JSON and the page")),
    ] = None,
    model_dir: Annotated[
        Path | None,
        typer.Option(
            SETTING_FLAGS["model_dir"], help=f"Classifier directory [{env_name('model_dir')}, default: built in]."
        ),
    ] = None,
    check: Annotated[
        bool, typer.Option("--check", help="Load the model, run the warm-up, report, and exit without serving.")
    ] = False,
) -> None:
    """Serve every RPC over gRPC and over HTTP/JSON (with the playground page at /), health, reflection and metrics.

    Every other setting comes from BOAF_* environment variables (see service/core/settings.py).
    """
    # SIGTERM first: as a container's PID 1, the process would ignore it until a handler is set.
    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    signal.signal(signal.SIGHUP, lambda *_: None)  # not its default (exit): nothing to reload until serving
    # gRPC core writes its own lines to stderr, not JSON: one per failed TLS handshake (a port scanner, a
    # plaintext client) at its default level, and "Failed to add port" beside boaf's own one-line start-up
    # error. Boaf logs and counts what matters of these itself, so core stays quiet unless GRPC_VERBOSITY
    # is set (ERROR or DEBUG, to debug gRPC itself). Set before grpc is first imported, which reads it.
    os.environ.setdefault("GRPC_VERBOSITY", "NONE")
    flags: dict[str, Any] = {
        "host": host,
        "port": port,
        "metrics_port": metrics_port,
        "http_port": http_port,
        "model_dir": model_dir,
    }
    try:
        settings = Settings.from_env(**flags, grpc_enabled=grpc, http_enabled=http)
        _serve(settings, check, stopping)
    except InvalidSettings as exc:
        named = named_by_flags(short_line(str(exc)), [f for f, value in flags.items() if value is not None])
        raise InvalidSettings(named) from exc


def short_line(message: str) -> str:
    """``message`` as one line, each run of more than ``WORD_CHARS`` non-space characters cut to them and ``…``.

    The backstop of every start-up error, wherever it was worded: a value of any length
    (a host, a path) costs a line of a few hundred characters at most, in time linear in it.
    """
    return " ".join(word if len(word) <= WORD_CHARS else word[:WORD_CHARS] + "…" for word in message.split())


def shown_reason(text: str) -> str:
    """``text`` cut to ``REASON_CHARS`` characters and ``…``: a start-up error stays one short line."""
    return text if len(text) <= REASON_CHARS else text[:REASON_CHARS] + "…"


def named_by_flags(message: str, fields: Iterable[str]) -> str:
    """``message`` naming the flag, not the ``BOAF_*`` variable, of each setting of ``fields`` (set by its flag)."""
    for field in fields:
        message = re.sub(rf"\b{env_name(field)}\b", SETTING_FLAGS[field], message)
    return message


def _serve(settings: Settings, check: bool, stopping: threading.Event) -> None:
    # Imported here for start-up time: only this command pays for grpc, onnxruntime and the HTTP stack.
    from boaf.service.app import check_model
    from boaf.service.core.logs import configure_logging
    from boaf.service.core.memory import bound_heap

    bound_heap()  # before the server's threads make heaps of their own
    configure_logging(settings.log_level, settings.log_format)
    if check:
        typer.echo(f"boaf: model loaded and warmed up in {check_model(settings):.2f} s")
        return
    service = _start(settings)
    # SIGHUP: look at the model root's CURRENT now, rather than at the next poll (boaf.service.core.reload).
    signal.signal(signal.SIGHUP, lambda *_: _reload_now(service))
    # A SIGTERM while the kernels compile or the model loads stops the service then, not once it is ready.
    lifecycle = service.lifecycle
    while not lifecycle.wait_until_ready(0.25) and lifecycle.load_error is None and not stopping.is_set():
        pass
    if lifecycle.load_error is not None:
        service.stop(0)
        if settings.model_dir is not None and lifecycle.failed_loading_the_model:
            # the setting names no model this server can load: exit status 2
            path, why = str(settings.model_dir), str(lifecycle.load_error)
            raise InvalidSettings(
                f"{env_name('model_dir')}={shown(path)}: {shown_reason(why.replace(path, shown(path)))}"
            )
        print(f"boaf: the service could not start: {lifecycle.load_error}", file=sys.stderr)
        raise typer.Exit(1)
    if not stopping.is_set():
        where = _addresses(settings.host, service.port, service.http)
        typer.echo(f"boaf: serving {where} (metrics on {service.metrics_port})", err=True)
    # Timed: a signal that lands on another thread (gRPC's, uvicorn's) has its handler run by this one
    # only when it next wakes, and an untimed wait never does (a SIGHUP would wait for the next signal).
    while not stopping.wait(SIGNAL_CHECK_S):
        pass
    service.stop()
    # Every call has ended; spare the exit a final garbage collection over everything numba and
    # onnxruntime loaded (seconds on a busy node), so the process ends within its grace period.
    gc.freeze()


def _reload_now(service: BoafService) -> None:
    if not service.reload_now():
        log.warning(
            "SIGHUP: nothing to reload now (%s is no model root, or the model is still loading: "
            "the server reads CURRENT once it serves)",
            env_name("model_dir"),
        )


def _start(settings: Settings) -> BoafService:
    """The service, started; a failure stops what had started, and ends the command (see the module notes)."""
    # Imported here for start-up time, as in serve: only this command loads the servers.
    from boaf.service.app import BoafService

    service: BoafService | None = None
    try:
        service = BoafService(settings)
        service.start()
        return service
    except InvalidSettings:
        _stop_quietly(service)
        raise  # one line and exit status 2 (boaf.service.cli.main)
    except Exception as exc:  # an internal failure: one line here, the traceback in the log
        log.exception("the service could not start")
        _stop_quietly(service)
        print(f"boaf: the service could not start: {type(exc).__name__}: {exc}", file=sys.stderr)
        raise typer.Exit(1) from exc


def _stop_quietly(service: BoafService | None) -> None:
    if service is not None:
        service.stop(0)


def _addresses(host: str, grpc_port: int, web: HttpServer | None) -> str:
    sides = [f"gRPC on {host}:{grpc_port}"] if grpc_port else []
    if web is not None:
        sides.append(f"HTTP on http://{host}:{web.port}/")
    return ", ".join(sides) or "nothing"
