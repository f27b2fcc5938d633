"""``boaf serve``: run the gRPC service until SIGTERM or Ctrl-C."""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path
from typing import Annotated

import typer

from service.cli import app


@app.command("serve")
def serve_command(
    host: Annotated[str | None, typer.Option("--host", help="Bind address [BOAF_HOST, default 127.0.0.1].")] = None,
    port: Annotated[int | None, typer.Option("--port", help="gRPC port [BOAF_PORT, default 50051].")] = None,
    metrics_port: Annotated[
        int | None, typer.Option("--metrics-port", help="Prometheus port [BOAF_METRICS_PORT, default 9090].")
    ] = None,
    model_dir: Annotated[
        Path | None, typer.Option("--model-dir", help="Classifier directory [BOAF_MODEL_DIR, default: built in].")
    ] = None,
    check: Annotated[
        bool, typer.Option("--check", help="Load the model, run the warm-up, report, and exit without serving.")
    ] = False,
) -> None:
    """Serve Classify, Solve, Features and GetServerInfo over gRPC, with health, reflection and metrics.

    Every other setting comes from BOAF_* environment variables (see service/settings.py).
    """
    from service.logs import configure_logging
    from service.server import BoafServer, check_model
    from service.settings import Settings

    settings = Settings.from_env(host=host, port=port, metrics_port=metrics_port, model_dir=model_dir)
    configure_logging(settings.log_level)
    if check:
        typer.echo(f"boaf: model loaded and warmed up in {check_model(settings):.2f} s")
        return
    server = BoafServer(settings)
    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    server.start()
    if not server.wait_until_ready():
        server.stop(0)
        print(f"boaf: the service could not start: {server.load_error}", file=sys.stderr)
        raise typer.Exit(1)
    typer.echo(f"boaf: serving on {settings.host}:{server.port} (metrics on {server.metrics_port})", err=True)
    stopping.wait()
    server.stop()
