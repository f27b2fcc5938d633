"""``boaf serve``: run the gRPC and HTTP/JSON service until SIGTERM or Ctrl-C."""

from __future__ import annotations

import gc
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from service.cli.app import app

if TYPE_CHECKING:
    from service.http import HttpServer


@app.command("serve")
def serve_command(
    host: Annotated[str | None, typer.Option("--host", help="Bind address [BOAF_HOST, default 127.0.0.1].")] = None,
    port: Annotated[int | None, typer.Option("--port", help="gRPC port [BOAF_PORT, default 50051].")] = None,
    metrics_port: Annotated[
        int | None, typer.Option("--metrics-port", help="Prometheus port [BOAF_METRICS_PORT, default 9090].")
    ] = None,
    http_port: Annotated[
        int | None, typer.Option("--http-port", help="HTTP/JSON and page port [BOAF_HTTP_PORT, default 8080].")
    ] = None,
    grpc: Annotated[
        bool | None, typer.Option("--grpc/--no-grpc", help="Serve gRPC [BOAF_GRPC_ENABLED, default on].")
    ] = None,
    http: Annotated[
        bool | None,
        typer.Option("--http/--no-http", help="Serve HTTP/JSON and the page [BOAF_HTTP_ENABLED, default on]."),
    ] = None,
    model_dir: Annotated[
        Path | None, typer.Option("--model-dir", help="Classifier directory [BOAF_MODEL_DIR, default: built in].")
    ] = None,
    check: Annotated[
        bool, typer.Option("--check", help="Load the model, run the warm-up, report, and exit without serving.")
    ] = False,
) -> None:
    """Serve every RPC over gRPC and over HTTP/JSON (with the playground page at /), health, reflection and metrics.

    Every other setting comes from BOAF_* environment variables (see service/settings.py).
    """
    # SIGTERM first: as a container's PID 1, the process would ignore it until a handler is set.
    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    # Imported here for start-up time: only this command pays for grpc, onnxruntime and the HTTP stack.
    from service.http import HttpServer
    from service.logs import configure_logging
    from service.server import BoafServer, check_model
    from service.settings import Settings

    settings = Settings.from_env(
        host=host,
        port=port,
        metrics_port=metrics_port,
        http_port=http_port,
        grpc_enabled=grpc,
        http_enabled=http,
        model_dir=model_dir,
    )
    configure_logging(settings.log_level)
    if check:
        typer.echo(f"boaf: model loaded and warmed up in {check_model(settings):.2f} s")
        return
    server = BoafServer(settings)
    server.start()
    web = HttpServer(server) if settings.http_enabled else None
    if web is not None:
        web.start()
    # A SIGTERM while the kernels compile or the model loads stops the server then, not once it is ready.
    while not server.wait_until_ready(0.25) and server.load_error is None and not stopping.is_set():
        pass
    if server.load_error is not None:
        if web is not None:
            web.stop()
        server.stop(0)
        print(f"boaf: the service could not start: {server.load_error}", file=sys.stderr)
        raise typer.Exit(1)
    if not stopping.is_set():
        typer.echo(
            f"boaf: serving {_addresses(settings.host, server.port, web)} (metrics on {server.metrics_port})", err=True
        )
    stopping.wait()
    if web is not None:
        web.shutdown()  # both sides drain at once, within one grace period
    server.stop()
    if web is not None:
        web.stop()
    # Every call has ended; spare the exit a final garbage collection over everything numba and
    # onnxruntime loaded (seconds on a busy node), so the process ends within its grace period.
    gc.freeze()


def _addresses(host: str, grpc_port: int, web: HttpServer | None) -> str:
    sides = [f"gRPC on {host}:{grpc_port}"] if grpc_port else []
    if web is not None:
        sides.append(f"HTTP on http://{host}:{web.port}/")
    return ", ".join(sides) or "nothing"
