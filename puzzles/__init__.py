"""Puzzle analysis and generation (Neller & Ziegler): ratios by depth, tension, local search.

- ``analyze(state, budget)``: states and solvable states at every depth, the
  halfway ratio and Browne's tension; exact within the budget, else an estimate.
- ``generate(cards, seed=…)``: hill descent with random uphill steps on a
  pluggable energy (``ENERGIES``; the default is the paper's iteration 4).
- ``plot_depths(analysis, path)``: solvable vs unsolvable states by depth (PNG).

Imports ``search``, ``features`` and ``game``; nothing below imports it.
"""

from boaf.puzzles.analysis import DEFAULT_BUDGET, analyze
from boaf.puzzles.errors import AnalysisStopped, GenerationFailed, InvalidPuzzleRequest, PuzzleError
from boaf.puzzles.results import DepthCount, PuzzleAnalysis, browne_tension

__all__ = [
    "DEFAULT_BUDGET",
    "AnalysisStopped",
    "DepthCount",
    "GenerationFailed",
    "InvalidPuzzleRequest",
    "PuzzleAnalysis",
    "PuzzleError",
    "analyze",
    "browne_tension",
]
