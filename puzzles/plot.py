"""The paper's Figure 2: solvable vs unsolvable states at each depth, on a log scale."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: no display on servers and in CI

import matplotlib.pyplot as plt

from boaf.puzzles.errors import InvalidPuzzleRequest
from boaf.puzzles.results import PuzzleAnalysis


def plot_depths(analysis: PuzzleAnalysis, path: Path, title: str | None = None) -> Path:
    """Write side-by-side bars of solvable and unsolvable states per depth to ``path`` (PNG).

    Needs exact counts (``analysis.exact``): an estimate has no per-depth state counts to draw.
    """
    if not analysis.exact:
        raise InvalidPuzzleRequest("the depth plot needs an exact analysis; raise --budget")
    depths = [d.depth for d in analysis.by_depth]
    solvable = [d.solvable or 0 for d in analysis.by_depth]
    unsolvable = [(d.states or 0) - (d.solvable or 0) for d in analysis.by_depth]
    figure, axes = plt.subplots(figsize=(6.4, 3.6), dpi=100)
    width = 0.4
    axes.bar([d - width / 2 for d in depths], solvable, width, label="solvable", color="#2b8cbe")
    axes.bar([d + width / 2 for d in depths], unsolvable, width, label="unsolvable", color="#e34a33")
    axes.set_yscale("log")
    axes.set_xlabel("depth (moves played)")
    axes.set_ylabel("distinct states")
    axes.set_xticks(depths)
    axes.set_title(title or f"{analysis.stacks} cards, halfway ratio {analysis.halfway_ratio:.3g}")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, format="png")
    plt.close(figure)
    return path
