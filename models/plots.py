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


def budget_sweep_plot(costs: Sequence[Any], chosen: int, path: Path) -> Path:
    """Classify's accuracy and batch ms/state against the exact path's node budget, one line per set.

    ``costs`` are ``boaf.models.budget.BudgetCost`` rows (``max_nodes``, ``name``, ``accuracy``, ``batch_ms``).
    """
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6, 6), sharex=True)
    for name in dict.fromkeys(c.name for c in costs):
        rows = sorted((c for c in costs if c.name == name), key=lambda c: c.max_nodes)
        budgets = [c.max_nodes for c in rows]
        top.plot(budgets, [c.accuracy for c in rows], marker="o", label=name)
        bottom.plot(budgets, [c.batch_ms for c in rows], marker="o", label=name)
    for ax in (top, bottom):
        ax.axvline(chosen, color="tab:green", linestyle=":", label=f"chosen {chosen} nodes")
        ax.set_xscale("log")
    top.set(ylabel="accuracy", title="Classify: exact path budget sweep")
    bottom.set(xlabel="node budget per state", ylabel="CPU ms per state (1,000-state batches)")
    top.legend()
    return _save(fig, path)


def _save(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
