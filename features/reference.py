"""The reference feature vector of one state: plain igraph, numpy and exact integers.

This is the definition the compiled batch path (``boaf.features.compiled``) is tested
against. It costs about a millisecond per state; use ``features.feature_matrix``
for batches.
"""

from __future__ import annotations

from typing import Any

from boaf.features.cards import card_features, position_features
from boaf.features.graph import compatibility_graph, graph_features
from boaf.features.schema import feature_names
from boaf.game.state import State


def state_features(state: State) -> dict[str, Any]:
    """Every feature of ``state`` by name, in schema order.

    Integer features are Python ``int`` (exact, however large), the others
    ``float``; ``is_connected`` is 0 or 1.
    """
    cards = state.top_cards()
    graph = graph_features(compatibility_graph(cards))
    values = {**graph, **card_features(cards), **position_features(state, graph["flockability"])}
    return {name: values[name] for name in feature_names()}


def state_feature_vector(state: State) -> list[int | float]:
    """``state_features`` as a list in schema order."""
    return list(state_features(state).values())
