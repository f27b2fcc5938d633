"""``boaf puzzle``: analyse a puzzle by depth, or generate one by local search."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from boaf.game import format_grid, parse_state
from boaf.puzzles import DEFAULT_BUDGET, PuzzleAnalysis, analyze
from boaf.puzzles.energy import DEFAULT_ENERGY, ENERGIES
from boaf.puzzles.generation import GeneratedPuzzle, generate
from boaf.service.cli.app import app
from boaf.service.cli.options import AsJson, Cols, Rows
from boaf.service.cli.usage import BoafTyper

puzzle_app = BoafTyper(
    help="Puzzle difficulty by depth (Neller & Ziegler) and puzzle generation.", no_args_is_help=True
)
app.add_typer(puzzle_app, name="puzzle")


@puzzle_app.command("analyze")
def analyze_command(
    grid: Annotated[str, typer.Argument(help="Grid text or JSON.")],
    *,
    as_json: AsJson = False,
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Write solvable vs unsolvable states by depth (PNG).")
    ] = None,
    budget: Annotated[
        int, typer.Option("--budget", help="States enumerated before estimating instead.")
    ] = DEFAULT_BUDGET,
    samples: Annotated[int, typer.Option("--samples", help="States solved per depth by an estimate.")] = 400,
    seed: Annotated[int, typer.Option("--seed", help="Seed of an estimate's sampling.")] = 0,
) -> None:
    """States and solvable states at every depth, the halfway ratio and Browne's tension."""
    analysis = analyze(parse_state(grid), budget, samples=samples, seed=seed)
    if plot is not None:
        # Imported here for start-up time: only this command pays for matplotlib.
        from boaf.puzzles.plot import plot_depths

        plot_depths(analysis, plot)
    typer.echo(json.dumps(analysis.to_json()) if as_json else _analysis_text(analysis))


@puzzle_app.command("generate")
def generate_command(
    *,
    cards: Annotated[int, typer.Option("--cards", help="Cards in the puzzle (2 … rows·cols).")],
    seed: Annotated[int, typer.Option("--seed", help="Seed of the local search.")] = 0,
    iterations: Annotated[int | None, typer.Option("--iterations", help="Local steps (paper: 2500/800/50).")] = None,
    energy: Annotated[str, typer.Option("--energy", help=f"One of {', '.join(ENERGIES)}.")] = DEFAULT_ENERGY,
    rows: Rows = 4,
    cols: Cols = 4,
    as_json: AsJson = False,
) -> None:
    """Generate a solvable puzzle by hill descent with random uphill steps."""
    puzzle = generate(cards, seed=seed, iterations=iterations, energy=energy, rows=rows, cols=cols)
    typer.echo(json.dumps(puzzle.to_json()) if as_json else _puzzle_text(puzzle))


def _analysis_text(analysis: PuzzleAnalysis) -> str:
    kind = "exact" if analysis.exact else "estimate"
    lines = [f"{analysis.stacks} stacks, {'solvable' if analysis.solvable else 'unsolvable'} ({kind})"]
    lines.append("depth  states  solvable  ratio")
    for d in analysis.by_depth:
        states = "?" if d.states is None else str(d.states)
        good = "?" if d.solvable is None else str(d.solvable)
        interval = "" if d.ratio_low == d.ratio_high else f"  [{d.ratio_low:.4f}, {d.ratio_high:.4f}]"
        lines.append(f"{d.depth:>5}  {states:>6}  {good:>8}  {d.ratio:.4f}{interval}")
    lines.append(f"halfway ratio (depth {analysis.halfway_depth}): {analysis.halfway_ratio:.3g}")
    if analysis.tension is not None:
        lines.append(f"tension along the solution: {analysis.tension:.3f}  ({' '.join(analysis.solution)})")
    return "\n".join(lines)


def _puzzle_text(puzzle: GeneratedPuzzle) -> str:
    kind = "" if puzzle.halfway_exact else " (estimate)"
    return "\n".join(
        [
            format_grid(puzzle.state, "\n"),
            f"energy {puzzle.energy:g}, halfway ratio {puzzle.halfway_ratio:.3g}{kind}",
            f"solution: {' '.join(puzzle.solution)}",
        ]
    )
