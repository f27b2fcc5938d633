"""PNG plots a person would rather look at than read: ROC, calibration, importance, cutoff sweep."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from sklearn.metrics import roc_auc_score, roc_curve


def roc_plot(curves: Mapping[str, tuple[np.ndarray, np.ndarray]], path: Path) -> Path:
    """ROC curves, one per held-out set: ``{name: (p_solvable, solvable)}``."""
    fig, ax = plt.subplots(figsize=(5, 5))
    for name, (p, y) in curves.items():
        fpr, tpr, _ = roc_curve(y, p)
        ax.plot(fpr, tpr, label=f"{name} (AUC {roc_auc_score(y, p):.4f})")
    ax.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1)
    ax.set(xlabel="false positive rate", ylabel="true positive rate", title="ROC: P(solvable)")
    ax.legend(loc="lower right")
    return _save(fig, path)


def calibration_plot(curves: Mapping[str, tuple[np.ndarray, np.ndarray]], path: Path, bins: int = 10) -> Path:
    """Reliability diagram: observed solvable fraction against mean predicted probability per bin."""
    fig, ax = plt.subplots(figsize=(5, 5))
    edges = np.linspace(0, 1, bins + 1)
    for name, (p, y) in curves.items():
        which = np.clip(np.digitize(p, edges) - 1, 0, bins - 1)
        filled = [b for b in range(bins) if np.any(which == b)]
        ax.plot([p[which == b].mean() for b in filled], [y[which == b].mean() for b in filled], marker="o", label=name)
    ax.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1)
    ax.set(xlabel="mean predicted P(solvable)", ylabel="observed fraction solvable", title="Calibration")
    ax.legend(loc="upper left")
    return _save(fig, path)


def importance_plot(names: Sequence[str], gains: np.ndarray, path: Path, top: int = 25) -> Path:
    """Horizontal bars of the ``top`` features by total split gain."""
    order = np.argsort(gains)[::-1][:top][::-1]
    fig, ax = plt.subplots(figsize=(6, 0.25 * len(order) + 1.2))
    ax.barh([names[i] for i in order], gains[order] / max(gains.sum(), 1e-12))
    ax.set(xlabel="share of total split gain", title="Feature importance")
    return _save(fig, path)


def cutoff_sweep_plot(
    cutoffs: Sequence[int], mean_ms: Sequence[float], baseline_ms: float, chosen: int, *, path: Path
) -> Path:
    """Mean Ordered DFS solve time by ordering cutoff, with Compatible DFS as a flat line (Araki's Figure 2)."""
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(cutoffs, mean_ms, marker="o", label="Ordered DFS")
    ax.axhline(baseline_ms, color="grey", linestyle="--", label="Compatible DFS")
    ax.axvline(chosen, color="tab:green", linestyle=":", label=f"chosen cutoff {chosen}")
    ax.set(xlabel="ordering cutoff (stacks)", ylabel="mean solve time (ms)", title="Ordering cutoff sweep")
    ax.legend()
    return _save(fig, path)


def budget_sweep_plot(costs: Sequence[Any], chosen: int, path: Path, limits: dict[str, float] | None = None) -> Path:
    """What each node budget leaves to the model and what it costs, one line per set.

    ``costs`` are ``boaf.models.budget.BudgetCost`` rows. Panels: the share of states left
    open; single calls' p99 (solid) and the call of a state left open (dashed); CPU ms a state
    in 1,000-state batches. ``limits`` (``{"single_p99_ms", "single_open_ms", "batch_ms"}``,
    each optional) draws the bars the budget was chosen against.
    """
    bars = limits or {}
    fig, (top, middle, bottom) = plt.subplots(3, 1, figsize=(6.5, 8.5), sharex=True)
    for k, name in enumerate(dict.fromkeys(c.name for c in costs)):
        rows = sorted((c for c in costs if c.name == name), key=lambda c: c.max_nodes)
        budgets, colour = [c.max_nodes for c in rows], f"C{k}"
        top.plot(budgets, [100 * (1 - c.exact_share) for c in rows], marker="o", color=colour, label=name)
        middle.plot(budgets, [c.single_p99_ms for c in rows], marker="o", color=colour, label=f"{name}: p99")
        opened = [(b, c.single_open_ms) for b, c in zip(budgets, rows, strict=True) if c.single_open_ms > 0]
        if opened:
            dashed = {"marker": "s", "linestyle": "--", "color": colour}
            middle.plot(*zip(*opened, strict=True), **dashed, label=f"{name}: left open")
        bottom.plot(budgets, [c.batch_ms for c in rows], marker="o", color=colour, label=name)
    for ax, key in ((middle, "single_p99_ms"), (middle, "single_open_ms"), (bottom, "batch_ms")):
        if key in bars:
            line = "-." if key == "single_open_ms" else ":"
            ax.axhline(bars[key], color="tab:red", linestyle=line, label=f"limit {key.removesuffix('_ms')}")
    for ax in (top, middle, bottom):
        ax.axvline(chosen, color="tab:green", linestyle=":", label=f"chosen {chosen} nodes")
        ax.set_xscale("log")
    left_open = any(c.exact_share < 1 for c in costs)  # a log scale needs a share above zero
    top.set(ylabel="% left to the model", title="Classify: exact path budget sweep")
    top.set_yscale("log" if left_open else "linear")
    middle.set(ylabel="CPU ms, one state a call")
    bottom.set(xlabel="node budget per state", ylabel="CPU ms a state (1,000-state batches)")
    top.legend(fontsize="small")
    middle.legend(fontsize="x-small", ncol=2)
    return _save(fig, path)


def _save(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
