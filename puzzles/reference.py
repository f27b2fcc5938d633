"""Plain-Python enumeration of reachable states: small, slow and obviously correct.

The oracle ``boaf.puzzles.compiled_enumeration`` is tested against, never the product path.
"""

from __future__ import annotations

from boaf.game import Card, State

Cells = tuple[Card | None, ...]


def reference_levels(state: State) -> list[dict[Cells, bool]]:
    """For each depth d: the distinct states reachable in exactly d moves (keyed by cells) -> solvable."""
    levels: list[dict[Cells, State]] = [{state.cells: state}]
    for _ in range(state.n_stacks - 1):
        children: dict[Cells, State] = {}
        for node in levels[-1].values():
            for move in node.legal_moves():
                child = node.apply(move)
                children.setdefault(child.cells, child)
        levels.append(children)
    labels: list[dict[Cells, bool]] = [{cells: True for cells in levels[-1]}]
    for level in reversed(levels[:-1]):
        below = labels[0]
        labels.insert(0, {cells: _any_solvable(node, below) for cells, node in level.items()})
    return labels


def _any_solvable(node: State, below: dict[Cells, bool]) -> bool:
    return any(below[node.apply(move).cells] for move in node.legal_moves())
