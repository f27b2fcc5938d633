"""The plain-Python reference search: small, slow and obviously correct.

It is the oracle the compiled kernel is tested against, never the product path.
Depth-first search over ``game.State`` in ``legal_moves`` order, with a memo of
unsolvable states keyed on the exact cells, and (unless turned off) the
connectivity pruning of Compatible DFS: a child whose compatibility graph is
disconnected is skipped, since no move can ever join two components.

``play_open_block`` is the game of the open-blocks rule's proof, for any set of
cards, and ``cut_blocks`` the sets the kernel tries: the oracle
``kernel.open_block_stuck`` is tested against, and what
``benchmarks/ffud_trials.py`` tries on the FFUD deals the search is slow on.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from boaf.game import Card, Move, State, compatible


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


@dataclass
class OpenPlay:
    """What ``play_open_block`` found: whether the block comes down, and how many positions it met.

    ``finished`` is False when it stopped at its ``max_positions`` (then it claims nothing: ``comes_down``).
    """

    comes_down: bool
    positions: int
    finished: bool = True


def play_open_block(state: State, block: Collection[Card], max_positions: int = 0) -> OpenPlay:
    """The game of ``kernel.open_block_stuck``'s proof, for any set ``block`` of ``state``'s top cards.

    The block's cards alone, the rest R replaced by its open cells (R's cells and
    the cells where R covered a block card): an open card (one compatible with
    some card of R) may cover a card of R in any open cell in line (R goes on, if
    it has two cells, or is gone), or be covered by R from one (its cell opens);
    the ends are R gone with one block card left, or no block card left; a position
    whose block cards cannot all still meet R (or, R gone, each other) is dead.
    If the block cannot come down, ``state`` is unsolvable, whatever the block.
    ``max_positions > 0`` stops the play there (a block may have millions).
    """
    where = {card: cell for cell, card in enumerate(state.cells) if card is not None}
    cols = state.cols
    rest = [card for card in where if card not in block]
    open_cards = {card for card in block if any(compatible(card, other) for other in rest)}
    rest_cells = frozenset(where[card] for card in rest)

    def in_line(p: int, q: int) -> bool:
        return p != q and (p // cols == q // cols or p % cols == q % cols)

    def dead(alive: dict[Card, int], gone: bool) -> bool:
        parts = compatibility_components(list(alive))
        return len(parts) > 1 if gone else any(not open_cards.intersection(part) for part in parts)

    Position = tuple[frozenset[tuple[Card, int]], frozenset[int], bool]  # the block's cards in their cells, R's, gone
    start: Position = (frozenset((card, where[card]) for card in block), frozenset(), False)
    seen = {start}
    todo = [start]
    while todo:
        placed, covered, gone = todo.pop()
        alive = dict(placed)
        if len(alive) == (1 if gone else 0):
            return OpenPlay(True, len(seen))
        cells = set() if gone else set(rest_cells) | set(covered)
        after: list[Position] = []
        for x, p in alive.items():
            for y, q in alive.items():
                if x != y and compatible(x, y) and in_line(p, q):
                    moved = {c: at for c, at in alive.items() if c != y} | {x: q}
                    after.append((frozenset(moved.items()), covered, gone))
            if x in open_cards and not gone and any(in_line(p, c) for c in cells):
                left = frozenset((c, at) for c, at in alive.items() if c != x)
                after.append((left, covered | {p}, False))
                for c in cells:
                    if in_line(p, c):
                        jumped = frozenset((alive | {x: c}).items())
                        if len(cells) >= 2:
                            after.append((jumped, covered, False))
                        after.append((jumped, frozenset(), True))
        if max_positions and len(seen) >= max_positions:
            return OpenPlay(True, len(seen), finished=False)
        for position in after:
            if position not in seen:
                seen.add(position)
                if not dead(dict(position[0]), position[2]):
                    todo.append(position)
    return OpenPlay(False, len(seen))


def cut_blocks(
    state: State, cut_sizes: Iterable[int] = (1, 2), side_max: int = 8, neighbours_only: bool = True
) -> Iterator[frozenset[Card]]:
    """The blocks of ``kernel.open_block_stuck`` (by default), each once: a component of G minus ``k`` cards (``k``
    in ``cut_sizes``) of at most ``side_max`` cards, with the cut's cards next to it (all of the cut's cards, unless
    ``neighbours_only``), when cards are left outside it."""
    cards = state.top_cards()
    seen: set[frozenset[Card]] = set()
    for k in cut_sizes:
        for cut in itertools.combinations(cards, k):
            for side in compatibility_components([card for card in cards if card not in cut]):
                kept = [c for c in cut if not neighbours_only or any(compatible(c, other) for other in side)]
                block = frozenset(side) | frozenset(kept)
                if len(side) <= side_max and len(block) < len(cards) and block not in seen:
                    seen.add(block)
                    yield block
