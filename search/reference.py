"""The plain-Python reference search: small, slow and obviously correct.

It is the oracle the compiled kernel is tested against, never the product path.
Depth-first search over ``game.State`` in ``legal_moves`` order, with a memo of
unsolvable states keyed on the exact cells, and (unless turned off) the
connectivity pruning of Compatible DFS: a child whose compatibility graph is
disconnected is skipped, since no move can ever join two components.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from game import Card, Move, State, compatible


def compatibility_components(cards: Sequence[Card]) -> list[list[Card]]:
    """Connected components of the compatibility graph on ``cards`` (one node per card)."""
    unseen = list(cards)
    components: list[list[Card]] = []
    while unseen:
        component = [unseen.pop()]
        frontier = list(component)
        while frontier:
            card = frontier.pop()
            linked = [other for other in unseen if compatible(card, other)]
            unseen = [other for other in unseen if not compatible(card, other)]
            component.extend(linked)
            frontier.extend(linked)
        components.append(component)
    return components


def is_connected(cards: Sequence[Card]) -> bool:
    """True when the compatibility graph on ``cards`` has at most one component."""
    return len(compatibility_components(cards)) <= 1


@dataclass
class ReferenceResult:
    """Outcome of the reference search: ``moves`` is empty unless solvable; ``nodes`` counts expanded states."""

    solvable: bool
    moves: list[Move] = field(default_factory=list)
    nodes: int = 0


def reference_solve(state: State, prune_disconnected: bool = True) -> ReferenceResult:
    """Decide ``state`` exactly; ``prune_disconnected=False`` gives Constrained DFS.

    A node is *expanded* when the search generates its children: it has more
    than one stack and is not already known unsolvable.
    """
    result = ReferenceResult(solvable=False)
    unsolvable: set[tuple[Card | None, ...]] = set()

    def search(node: State) -> list[Move] | None:
        if node.n_stacks == 1:
            return []
        if node.cells in unsolvable:
            return None
        result.nodes += 1
        for move in node.legal_moves():
            child = node.apply(move)
            if prune_disconnected and not is_connected(child.top_cards()):
                continue
            path = search(child)
            if path is not None:
                return [move, *path]
        unsolvable.add(node.cells)
        return None

    if prune_disconnected and not is_connected(state.top_cards()):
        return result
    path = search(state)
    if path is not None:
        result.solvable, result.moves = True, path
    return result
