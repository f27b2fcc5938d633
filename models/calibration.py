"""Recalibration of the learned model's P(solvable), per stack count, and for whole 4x4 deals.

A raw score from the ONNX model is mapped through a monotone step function
fitted by isotonic regression on a held-out split, one per stack count that
has enough rows there (the rest share one fitted on all rows), so that p means
what it says on every stack count. Whole 4x4 deals (every cell filled) may get a
curve of their own (``deals``): the deals the exact path leaves open are nearly
all solvable (99.97% of three million far deals' residue), the other residue states
90-97%, and one curve over both gives every open deal the others' rate. With so few
unsolvable deals (about 20 in 65,000 open ones) a step function through them is noise,
so the deals' curve is logistic in the raw score's logit (Platt scaling: two
parameters). A grid may get a curve of its own too (``grids``, by ``"RxC"``): the
residue model's rows come from 4x4, 5x5, 6x6 and 4x13 residues whose scores mean
different things, and a curve pooled over all of them is off on each grid. The
function is stored beside the model as ``calibration.json`` (``{"stacks": {"12":
{"x": [...], "y": [...]}, ...}, "all": {...}, "grids": {"5x5": {...}}, "deals":
{...}}``; ``grids`` and ``deals`` only when fitted, the logistic curve as knots too;
readers that know no ``grids`` use the pooled curve) and applied by linear
interpolation between its knots.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from boaf.models.errors import ModelError
from boaf.models.files import write_text_atomically

CALIBRATION_FILE = "calibration.json"
MIN_ROWS = 200  # fewer held-out rows of a stack count, or deals, than this share the pooled fit ...
MIN_MINORITY = 20  # ... as do a stack count's with fewer than this of either class: a step through a few is noise
LOGIT_KNOTS = np.linspace(-16.0, 16.0, 641)  # where the logistic deals' curve is stored: raw scores 1e-7 to 1 - 1e-7


@dataclass(frozen=True)
class Curve:
    """A monotone map from raw score to calibrated P(solvable): knots ``x`` (ascending) and values ``y``."""

    x: list[float]
    y: list[float]

    def __call__(self, p: np.ndarray) -> np.ndarray:
        return np.asarray(np.interp(p, self.x, self.y), dtype=np.float64)


@dataclass(frozen=True)
class Calibration:
    """One ``Curve`` per stack count or per grid, ``deals`` for whole 4x4 deals (when fitted), and ``pooled``
    for the others. A grid's curve takes the place of the pooled and stack-count curves on its states."""

    pooled: Curve
    by_stacks: dict[int, Curve] = field(default_factory=dict)
    deals: Curve | None = None
    by_grid: dict[str, Curve] = field(default_factory=dict)

    def apply(
        self, p: np.ndarray, stacks: np.ndarray, deals: np.ndarray | None = None, grid: str | None = None
    ) -> np.ndarray:
        """Calibrated P(solvable) of raw scores ``p`` of states with ``stacks`` stacks, all on ``grid``
        (``"RxC"``, ``boaf.models.exact_path.grid_key``; None: unknown); ``deals`` marks the whole 4x4 deals
        among them (``boaf.models.exact_path.whole_deals``; None: none)."""
        if grid in self.by_grid:
            out = self.by_grid[grid](p)
        else:
            out = self.pooled(p)
            for k, curve in self.by_stacks.items():
                rows = stacks == k
                out[rows] = curve(p[rows])
        if self.deals is not None and deals is not None and deals.any():
            out[deals] = self.deals(p[deals])
        return out


def fit_calibration(
    p: np.ndarray,
    solvable: np.ndarray,
    stacks: np.ndarray | None = None,
    *,
    weight: np.ndarray | None = None,
    deals: np.ndarray | None = None,
    grids: np.ndarray | None = None,
) -> Calibration:
    """Isotonic curves of held-out raw scores ``p`` against labels, per stack count with ``MIN_ROWS`` rows.

    Without ``stacks`` there is one pooled curve. ``weight`` weighs the rows (default: equally). ``deals``
    marks the whole 4x4 deals: with ``MIN_ROWS`` of them, of both classes, they get a logistic curve of their
    own (``_logistic``) when it rises with the score, and the other curves are fitted on the other rows.
    ``grids`` names each row's grid (``"RxC"``): a grid whose rows (deals apart) are enough for a curve of
    their own (``_own_curve``) gets an isotonic one.
    """
    w = np.ones(len(p)) if weight is None else np.asarray(weight, dtype=np.float64)
    if deals is not None and np.sum(deals) >= MIN_ROWS and np.sum(~deals) > 0:
        own = _logistic(p[deals], solvable[deals], w[deals])
        if own is not None:
            rest = fit_calibration(
                p[~deals],
                solvable[~deals],
                None if stacks is None else stacks[~deals],
                weight=w[~deals],
                grids=None if grids is None else grids[~deals],
            )
            return replace(rest, deals=own)
    by_grid = {str(g): curve for g, curve in _group_curves(p, solvable, w, grids).items()}
    by_stacks = {int(k): curve for k, curve in _group_curves(p, solvable, w, stacks).items()}
    return Calibration(_isotonic(p, solvable, w), by_stacks, by_grid=by_grid)


def _group_curves(p: np.ndarray, solvable: np.ndarray, w: np.ndarray, groups: np.ndarray | None) -> dict[Any, Curve]:
    """An isotonic curve for each value of ``groups`` whose rows are enough for one (``_own_curve``)."""
    if groups is None:
        return {}
    return {
        g: _isotonic(p[groups == g], solvable[groups == g], w[groups == g])
        for g in np.unique(groups)
        if _own_curve(solvable[groups == g])
    }


def _own_curve(solvable: np.ndarray) -> bool:
    """Whether rows with these labels are enough for a curve of their own (``MIN_ROWS``, ``MIN_MINORITY``)."""
    positive = int(np.sum(solvable))
    return len(solvable) >= MIN_ROWS and min(positive, len(solvable) - positive) >= MIN_MINORITY


def read_calibration(directory: Path) -> Calibration | None:
    """The calibration stored in ``directory``, or None when it has none; ``ModelError`` when malformed."""
    path = directory / CALIBRATION_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        deals = data.get("deals")
        return Calibration(
            Curve(**data["all"]),
            {int(k): Curve(**curve) for k, curve in data.get("stacks", {}).items()},
            None if deals is None else Curve(**deals),
            {str(g): Curve(**curve) for g, curve in data.get("grids", {}).items()},
        )
    except (json.JSONDecodeError, AttributeError, KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"{path}: not a calibration (JSON with 'all' and 'stacks' curves): {exc}") from exc


def write_calibration(directory: Path, calibration: Calibration) -> Path:
    """Write ``calibration`` as ``directory/calibration.json`` atomically."""
    data = {
        "all": vars(calibration.pooled),
        "stacks": {str(k): vars(curve) for k, curve in sorted(calibration.by_stacks.items())},
    }
    if calibration.by_grid:
        data["grids"] = {g: vars(curve) for g, curve in sorted(calibration.by_grid.items())}
    if calibration.deals is not None:
        data["deals"] = vars(calibration.deals)
    return write_text_atomically(directory / CALIBRATION_FILE, json.dumps(data) + "\n")


def _logistic(p: np.ndarray, solvable: np.ndarray, weight: np.ndarray) -> Curve | None:
    """P(solvable) = sigmoid(a * logit(p) + b) fitted by weighted logistic regression, as knots at ``LOGIT_KNOTS``;
    None when the rows hold one class only or the fit does not rise with the score (a <= 0)."""
    from sklearn.linear_model import LogisticRegression  # training work: not imported at start-up (``_isotonic``)

    if len(np.unique(solvable)) < 2:
        return None
    q = np.clip(p, 1e-7, 1 - 1e-7)
    z = np.log(q) - np.log1p(-q)
    fitted = LogisticRegression(C=1.0).fit(z[:, None], solvable, sample_weight=weight / weight.mean())
    a, b = float(fitted.coef_[0, 0]), float(fitted.intercept_[0])
    if a <= 0:
        return None
    x = 1 / (1 + np.exp(-LOGIT_KNOTS))
    y = 1 / (1 + np.exp(-(a * LOGIT_KNOTS + b)))
    return Curve([0.0, *map(float, x), 1.0], [float(y[0]), *map(float, y), float(y[-1])])


def _isotonic(p: np.ndarray, solvable: np.ndarray, weight: np.ndarray) -> Curve:
    # Fitting is training work (boaf[train]); for start-up time serving never imports scikit-learn.
    from sklearn.isotonic import IsotonicRegression

    fitted = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(
        p, solvable.astype(np.float64), sample_weight=weight
    )
    return Curve([float(v) for v in fitted.X_thresholds_], [float(v) for v in fitted.y_thresholds_])
