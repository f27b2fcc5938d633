"""Commands for exact answers: solve and census."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from boaf.game import InvalidState
from boaf.game.notation import parse_seed_range
from boaf.search import ALGORITHM_NAMES, DEFAULT_ALGORITHM
from boaf.service.cli.app import app
from boaf.service.cli.compiling import compile_for_workers
from boaf.service.cli.input import read_state_file, state_argument
from boaf.service.cli.options import AsJson, Cols, Rows, Scheduler, Workers

# The search package is loaded with the CLI already (the puzzle commands import it), so naming its algorithms is free.
Algorithm = Annotated[str, typer.Option("--algorithm", help=f"Search algorithm: {', '.join(ALGORITHM_NAMES)}.")]


@app.command("solve")
def solve_command(
    grid: Annotated[str | None, typer.Argument(help="Grid text or JSON (or use --seed / --input).")] = None,
    *,
    seed: Annotated[int | None, typer.Option("--seed", help="Solve this seeded deal.")] = None,
    rows: Rows = 4,
    cols: Cols = 4,
    algorithm: Algorithm = DEFAULT_ALGORITHM,
    max_nodes: Annotated[int | None, typer.Option("--max-nodes", help="Stop as unknown after this many nodes.")] = None,
    time_limit: Annotated[
        float | None, typer.Option("--time-limit", metavar="SECONDS", help="Stop as unknown after this long.")
    ] = None,
    max_memory_mb: Annotated[
        float | None, typer.Option("--max-memory-mb", help="Stop as unknown (memory) past this many MiB per search.")
    ] = None,
    threads: Annotated[
        int, typer.Option("--threads", min=1, help="Search the root's children on this many threads.")
    ] = 1,
    as_json: AsJson = False,
    input_file: Annotated[Path | None, typer.Option("--input", help="One grid (or JSON line) per line.")] = None,
    output_file: Annotated[Path | None, typer.Option("--output", help="Write the JSON lines here.")] = None,
) -> None:
    """Decide whether a state is solvable and print a solution (or why not)."""
    # Imported here for start-up time: only this command pays for numba's compiled kernels.
    from boaf.search import algorithm_named, solve

    algorithm_named(algorithm)
    if input_file is not None:
        if grid is not None or seed is not None:
            raise InvalidState("give either --input or a state (GRID or --seed), not both")
        _solve_file(input_file, output_file, algorithm, max_nodes, time_limit, max_memory_mb, threads)
        return
    if output_file is not None:
        raise InvalidState("--output needs --input")
    state = state_argument(grid, seed, rows, cols)
    result = solve(
        state, algorithm, max_nodes=max_nodes, time_limit=time_limit, max_memory_mb=max_memory_mb, threads=threads
    )
    if as_json:
        typer.echo(json.dumps(result.to_json()))
        return
    detail = f"{result.nodes:,} nodes, {result.elapsed_ms:.2f} ms, {result.algorithm}"
    reason = f" ({result.reason})" if result.reason else ""
    typer.echo(f"{result.status}{reason}: {detail}")
    if result.moves:
        typer.echo(" ".join(result.moves))


def _solve_file(
    input_file: Path,
    output_file: Path | None,
    algorithm: str,
    max_nodes: int | None,
    time_limit: float | None,
    max_memory_mb: float | None,
    threads: int = 1,
) -> None:
    # Imported here for start-up time: only this command pays for numba's compiled kernels.
    from boaf.search import solve

    if not input_file.is_file():
        raise InvalidState(f"input file {input_file} does not exist")
    states = [state for _, state in read_state_file(input_file)]  # every line is checked before solving
    lines = (
        json.dumps(
            solve(
                s, algorithm, max_nodes=max_nodes, time_limit=time_limit, max_memory_mb=max_memory_mb, threads=threads
            ).to_json()
        )
        for s in states
    )
    if output_file is None:
        for line in lines:
            typer.echo(line)
        return
    with output_file.open("w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(line + "\n")


@app.command("census")
def census_command(
    *,
    seeds: Annotated[str, typer.Option("--seeds", help="Seed range A:B, solving A <= seed < B.")],
    rows: Rows = 4,
    cols: Cols = 4,
    algorithm: Algorithm = DEFAULT_ALGORITHM,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            help="One row per deal: a Parquet file (NAME.parquet), or else a partitioned Parquet dataset (a folder).",
        ),
    ] = None,
    as_json: AsJson = False,
    workers: Workers = None,
    scheduler: Scheduler = None,
    chunk_size: Annotated[
        int,
        typer.Option("--chunk-size", min=1, max=1_000_000, help="Deals per Dask task (and per part file)."),
    ] = 2_500,
) -> None:
    """Solve every seeded deal of a range on Dask and list the unsolvable ones."""
    # Imported here for start-up time: only this command pays for Dask.
    from boaf.jobs.census import census
    from boaf.jobs.runner import Cluster

    compile_for_workers("search")
    summary = census(
        parse_seed_range(seeds),
        rows=rows,
        cols=cols,
        algorithm=algorithm,
        output=output,
        cluster=Cluster(workers=workers, scheduler=scheduler),
        chunk_size=chunk_size,
    )
    if as_json:
        typer.echo(json.dumps(summary))
        return
    classes = [u["class"] for u in summary["unsolvable"]]
    counts = ", ".join(f"{c} {classes.count(c)}" for c in ("OBUD", "SFUD", "FFUD"))
    typer.echo(
        f"seeds {summary['first']}..{summary['last']}: {summary['deals']} deals, "
        f"{len(classes)} unsolvable ({counts}); {summary['elapsed_s']:.1f} s, {summary['mean_ms']:.3f} ms per deal"
    )
