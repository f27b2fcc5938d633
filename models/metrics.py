"""How good a probability is: accuracy, log loss, Brier score, AUC and expected calibration error.

Each function takes ``p`` (P(solvable), floats in [0, 1]) and ``solvable``
(the exact labels, bool or 0/1) of the same length, and returns a float.
``scores`` gathers them for one predictor. They judge the learned model beside
its baselines on the states it actually answers (``benchmarks/residue.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: How far from 0 and 1 a probability is held before its logarithm: a certain, wrong answer costs
#: -ln(1e-15) = 34.5 nats, not infinity (scikit-learn's ``log_loss`` clips the same way).
LOG_LOSS_EPS = 1e-15
ECE_BINS = 10


def accuracy(p: np.ndarray, solvable: np.ndarray, threshold: float = 0.5) -> float:
    """Share of states whose label ``p >= threshold`` is right."""
    return float(np.mean((np.asarray(p) >= threshold) == np.asarray(solvable, dtype=bool)))


def log_loss(p: np.ndarray, solvable: np.ndarray) -> float:
    """Mean negative log-likelihood in nats, p held within [``LOG_LOSS_EPS``, 1 - ``LOG_LOSS_EPS``]."""
    q = np.clip(np.asarray(p, dtype=np.float64), LOG_LOSS_EPS, 1 - LOG_LOSS_EPS)
    y = np.asarray(solvable, dtype=bool)
    return float(-np.mean(np.where(y, np.log(q), np.log1p(-q))))


def brier(p: np.ndarray, solvable: np.ndarray) -> float:
    """Mean squared difference between p and the 0/1 label."""
    return float(np.mean((np.asarray(p, dtype=np.float64) - np.asarray(solvable, dtype=np.float64)) ** 2))


def auc(p: np.ndarray, solvable: np.ndarray) -> float:
    """Area under the ROC curve (ties count half: a constant scores 0.5); NaN when only one label occurs.

    The Mann-Whitney form: the chance that a random solvable state gets a higher p than a random
    unsolvable one, from the average ranks of p (tied p share their rank, so a tie counts half).
    """
    y = np.asarray(solvable, dtype=bool)
    if y.all() or not y.any():
        return float("nan")
    q = np.asarray(p, dtype=np.float64)
    values, first, counts = np.unique(np.sort(q), return_index=True, return_counts=True)
    tied = (2 * first + counts + 1) / 2  # the average of ranks first+1 … first+counts
    ranks = tied[np.searchsorted(values, q)]
    positives, negatives = int(y.sum()), int((~y).sum())
    return float((ranks[y].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def expected_calibration_error(p: np.ndarray, solvable: np.ndarray, bins: int = ECE_BINS) -> float:
    """ECE: over ``bins`` equal-width bins of p ([0, 0.1), …, [0.9, 1]), the share-weighted |mean p - observed|."""
    q = np.asarray(p, dtype=np.float64)
    y = np.asarray(solvable, dtype=np.float64)
    which = np.clip((q * bins).astype(np.int64), 0, bins - 1)
    gap = np.abs(np.bincount(which, q, minlength=bins) - np.bincount(which, y, minlength=bins))
    return float(gap.sum() / max(len(q), 1))  # n_b/n * |mean p - observed| summed: n_b cancels


def binary_entropy(rate: float) -> float:
    """H(rate) in nats: the log loss of the constant ``rate`` on labels whose solvable share is ``rate``."""
    if rate <= 0 or rate >= 1:
        return 0.0
    return float(-(rate * np.log(rate) + (1 - rate) * np.log1p(-rate)))


@dataclass(frozen=True)
class Scores:
    """One predictor's figures on one set of states (see the functions of the same names)."""

    accuracy: float
    log_loss: float
    brier: float
    auc: float
    ece: float


def scores(p: np.ndarray, solvable: np.ndarray, threshold: float = 0.5) -> Scores:
    """All five figures of ``p`` against ``solvable``."""
    return Scores(
        accuracy(p, solvable, threshold),
        log_loss(p, solvable),
        brier(p, solvable),
        auc(p, solvable),
        expected_calibration_error(p, solvable),
    )
