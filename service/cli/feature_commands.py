"""Commands for features: show, export and Kahn's sieve.

``boaf features GRID`` and ``boaf features export …`` share a name: ``features``
is a group whose first argument, when it is not a subcommand, is taken as the
GRID of ``features show``.
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from boaf.game.errors import InvalidState
from boaf.game.notation import parse_seed_range
from boaf.service.cli.app import app
from boaf.service.cli.compiling import compile_for_workers
from boaf.service.cli.options import Scheduler, Workers
from boaf.service.cli.usage import BoafTyper

SHOW_FLAGS = ("--json", "--help")


class GridOrCommandGroup(TyperGroup):
    """A group that runs ``show`` when its first argument is not a subcommand."""

    default_command = "show"

    # ctx is typer's vendored click Context, which has no public name to annotate with.
    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            # Grid text may start with "--" (an empty cell), so the grid goes after "--"
            # and only show's own flags stay in front.
            flags = [a for a in args if a in SHOW_FLAGS]
            rest = [a for a in args if a not in SHOW_FLAGS and a != "--"]
            args = [self.default_command, *flags, "--", *rest]
        return super().parse_args(ctx, args)


features_app = BoafTyper(
    cls=GridOrCommandGroup,
    no_args_is_help=True,
    help="Feature vectors of states: 'boaf features GRID' shows one; 'boaf features export' writes many.",
)
app.add_typer(features_app, name="features")


@features_app.command("show")
def show_command(
    grid: Annotated[str, typer.Argument(help="Grid text or JSON, e.g. '5S 7D QS 2C/4C AD 8D 5C/…'.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON: {schema, features}.")] = False,
) -> None:
    """Print every feature of one state (also: 'boaf features GRID')."""
    # Imported here for start-up time: only this command pays for numba's compiled kernels, game.
    from boaf.features import SCHEMA_VERSION, state_features
    from boaf.game import parse_state

    values = state_features(parse_state(grid))
    if as_json:
        typer.echo(json.dumps({"schema": SCHEMA_VERSION, "features": values}))
        return
    _print_table(f"features ({SCHEMA_VERSION})", [("feature", "left"), ("value", "right")], values.items())


@features_app.command("export")
def export_command(
    *,
    input_path: Annotated[
        Path, typer.Option("--input", help="Grid text or JSON lines per line, or a Parquet file with a 'grid' column.")
    ],
    output: Annotated[Path, typer.Option("--output", help="The Parquet file to write.")],
    workers: Workers = None,
    scheduler: Scheduler = None,
    on_error: Annotated[
        str, typer.Option("--on-error", help="A malformed line fails the job (fail) or is skipped (skip).")
    ] = "fail",
    chunk_size: Annotated[int, typer.Option("--chunk-size", min=1, help="Input lines per chunk.")] = 10_000,
) -> None:
    """Write the features of every state of a file to Parquet, on Dask; rerun to resume."""
    # Imported here for start-up time: only this command pays for Dask.
    from boaf.jobs.export import export
    from boaf.jobs.runner import Cluster

    compile_for_workers("features")
    if on_error not in ("skip", "fail"):
        raise InvalidState(f"--on-error must be 'skip' or 'fail', got {on_error!r}")
    with _progress_on_stderr():
        report = export(
            input_path,
            output,
            cluster=Cluster(workers=workers, scheduler=scheduler),
            on_error="skip" if on_error == "skip" else "fail",
            chunk_size=chunk_size,
        )
    for skipped in report.skipped:
        typer.echo(f"boaf: {input_path}:{skipped.line}: skipped: {skipped.message}", err=True)
    typer.echo(f"wrote {report.rows} rows to {output} ({len(report.skipped)} lines skipped)")


@app.command("sieve")
def sieve_command(
    *,
    seeds: Annotated[str, typer.Option("--seeds", help="Deal numbers A:B (A included, B excluded).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    verify: Annotated[
        bool, typer.Option("--verify", help="Solve every connected deal; report true FFUDs, recall and precision.")
    ] = False,
    workers: Workers = None,
    scheduler: Scheduler = None,
    max_nodes: Annotated[int | None, typer.Option("--max-nodes", min=1, help="Solver node budget per deal.")] = None,
    parts_dir: Annotated[
        Path | None,
        typer.Option("--parts-dir", help="Where --verify keeps finished chunks (default ./boaf-sieve-A-B)."),
    ] = None,
) -> None:
    """Kahn's sieve over seeded 4x4 deals: OBUDs, SFUDs and 3-heuristic flags."""
    # Imported here for start-up time: only this command pays for numba's compiled kernels.
    from boaf.features import sieve

    span = parse_seed_range(seeds)
    result = sieve(span)
    report: dict[str, Any] = {
        "seeds": [span.start, span.stop],
        "deals": len(span),
        "obud": result.obud,
        "sfud": result.sfud,
        "flagged": result.flagged,
    }
    if verify:
        report.update(_verify(result, parts_dir, workers, scheduler, max_nodes))
    if as_json:
        typer.echo(json.dumps(report))
    else:
        _print_sieve(report)


def _verify(
    result: Any, parts_dir: Path | None, workers: int | None, scheduler: str | None, max_nodes: int | None
) -> dict[str, Any]:
    # Imported here for start-up time: only this command pays for Dask.
    from boaf.jobs.runner import Cluster
    from boaf.jobs.sieve import verify

    where = parts_dir or Path(f"boaf-sieve-{result.seeds.start}-{result.seeds.stop}")
    with _progress_on_stderr():
        checked = verify(result, where, cluster=Cluster(workers=workers, scheduler=scheduler), max_nodes=max_nodes)
    return {
        "ffud": checked.ffud,
        "unknown": checked.unknown,
        "solved": checked.solved,
        "recall": checked.recall,
        "precision": checked.precision,
    }


def _progress_on_stderr() -> contextlib.AbstractContextManager[object]:
    # The runner's progress bar writes to stdout; stdout is for results (JSON).
    return contextlib.redirect_stdout(sys.stderr)


def _print_sieve(report: dict[str, Any]) -> None:
    rows: list[tuple[str, str]] = [("deals", str(report["deals"]))]
    for key in ("obud", "sfud", "flagged", "ffud", "unknown"):
        if key in report:
            seeds = report[key]
            shown = " ".join(map(str, seeds[:20])) + (" …" if len(seeds) > 20 else "")
            rows.append((f"{key} ({len(seeds)})", shown))
    for key in ("recall", "precision"):
        if key in report:
            rows.append((key, "n/a" if report[key] is None else f"{report[key]:.4f}"))
    start, stop = report["seeds"]
    _print_table(f"Kahn's sieve, deals {start}:{stop}", [("", "left"), ("", "left")], rows)


def _print_table(title: str, columns: list[tuple[str, str]], rows: Any) -> None:
    # Imported here for start-up time: only this command pays for rich.
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for name, justify in columns:
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for row in rows:
        table.add_row(*(str(cell) for cell in row))
    Console().print(table)
