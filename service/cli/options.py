"""Options shared by several commands, defined once."""

from __future__ import annotations

from typing import Annotated

import typer

Rows = Annotated[int, typer.Option("--rows", min=1, help="Grid rows.")]
Cols = Annotated[int, typer.Option("--cols", min=1, help="Grid columns.")]
AsJson = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
Workers = Annotated[int | None, typer.Option("--workers", min=1, help="Local Dask workers (default: one per core).")]
Scheduler = Annotated[str | None, typer.Option("--scheduler", help="Address of an existing Dask scheduler.")]
