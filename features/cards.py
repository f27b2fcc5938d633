"""Card and position features of a state, computed plainly (the reference).

Card features depend only on the set of top cards; position features (mobility,
rc_count_*, rc_compat_*) also depend on which cells hold them. Every state has at
least one stack, so no statistic here is taken over an empty list.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from boaf.game.cards import card_rank, card_suit, compatible
from boaf.game.state import State

ACE, KING = 1, 13


def card_features(cards: list[int]) -> dict[str, Any]:
    """rank_clusters … kings for these top cards (ranks A=1 … K=13)."""
    n = len(cards)
    ranks = np.array([card_rank(c) for c in cards], dtype=np.int64)
    suit_counts = np.bincount([card_suit(c) for c in cards], minlength=4)
    return {
        "rank_clusters": rank_clusters(ranks.tolist()),
        "rank_std": float(ranks.std()),
        "suit_dominance": float(suit_counts.max() - suit_counts.min()) / n,
        "dominant_suit_ratio": float(suit_counts.max()) / n,
        "suit_diversity": int((suit_counts > 0).sum()),
        "rank_diversity": len(set(ranks.tolist())),
        **{f"suit_ratio_{s}": float(suit_counts[i]) / n for i, s in enumerate("cdhs")},
        "aces": int((ranks == ACE).sum()),
        "kings": int((ranks == KING).sum()),
    }


def rank_clusters(ranks: list[int]) -> int:
    """Maximal runs of consecutive present ranks (A and K are not adjacent)."""
    present = sorted(set(ranks))
    return sum(1 for i, r in enumerate(present) if i == 0 or present[i - 1] != r - 1)


def position_features(state: State, flockability: int) -> dict[str, Any]:
    """mobility and its ratios, rc_count_* and rc_compat_* of ``state``.

    ``flockability`` (edges of G) is the denominator of the mobility ratio.
    """
    cells = state.stack_cells()
    n = len(cells)
    rc_count = np.zeros(n, dtype=np.int64)
    rc_compat = np.zeros(n, dtype=np.int64)
    for i, a in enumerate(cells):
        for b in cells:
            if state.shares_line(a, b):
                rc_count[i] += 1
                rc_compat[i] += compatible(state.cells[a], state.cells[b])  # type: ignore[arg-type]
    # Compatibility and sharing a line are both symmetric, so each pair is counted twice.
    mobility = int(rc_compat.sum()) // 2
    return {
        "mobility": mobility,
        "mobility_per_card": mobility / n,
        "mobility_flockability_ratio": mobility / flockability if flockability else 0.0,
        **_summary("rc_count", rc_count),
        **_summary("rc_compat", rc_compat),
    }


def _summary(prefix: str, values: np.ndarray) -> dict[str, Any]:
    return {
        f"{prefix}_min": int(values.min()),
        f"{prefix}_max": int(values.max()),
        f"{prefix}_median": float(np.median(values)),
        f"{prefix}_mean": float(values.mean()),
    }
