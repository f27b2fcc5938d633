"""What open blocks, tried on any set of cards, say of the FFUD deals the search is still slow on.

    python benchmarks/ffud_trials.py                  # the FFUD deals of 0-100,000 past 1,500 nodes
    python benchmarks/ffud_trials.py --seeds 25482 1163 --random-sets 30 --symmetry 1163

The open-blocks rule (``search/kernel/open_blocks.py``) plays a set of cards B
with the rest of the board open; its proof holds for any B, so any B may be
tried. The kernel tries components of G minus one or two cards with the cards
they hang from. For each deal, in plain Python (``boaf.search.reference.play_open_block``):

- ``cut 3``: the blocks of G minus three cards (a component of up to
  ``SIDE_MAX`` cards with the three), and whether one is stuck;
- ``parts``: the most components G minus up to three cards has (unions of
  components need three or more);
- ``random``: random sets of 6-11 cards (a fixed seed), and whether one is stuck;
- ``plus``: the kernel's blocks with up to two more cards of any kind (their
  cells then stop counting as the rest's open cells), and whether one is stuck;

each with the positions its games met (a block's play stops at ``MAX_POSITIONS``,
claiming nothing). For the ``--symmetry`` deals: the states
reachable with a connected graph, against the same counted up to permutations
of rows, of columns and a transpose (which share every verdict).
"""

from __future__ import annotations

import argparse
import itertools
import random
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.progress import track

from boaf import search
from boaf.game import Card, State, deal
from boaf.game.cards import card_text
from boaf.search.reference import compatibility_components, cut_blocks, is_connected, play_open_block

UNSOLVABLE_LIST = Path(__file__).resolve().parents[1] / "docs" / "data" / "unsolvable_-5000000_5000000.txt"
SIDE_MAX = 8
QUICK_NODES = 1_500  # Classify's exact path: the deals a search decides within it are not tried
MAX_POSITIONS = 100_000  # a block's play stops there, claiming nothing (some blocks have millions)


@dataclass
class Trial:
    """One family of blocks tried on a deal: how many, the positions their games met (``cut_off`` of them stopped at
    ``MAX_POSITIONS``), the first stuck one."""

    name: str
    blocks: int
    positions: int
    cut_off: int
    stuck: frozenset[Card] | None
    seconds: float


def slow_ffud_deals(first: int = 0, stop: int = 100_000) -> list[int]:
    """The FFUD deals of ``first``..``stop - 1`` (the committed census list) a search does not decide in
    ``QUICK_NODES`` nodes."""
    ffud = []
    for line in UNSOLVABLE_LIST.read_text().splitlines():
        if line and not line.startswith("#"):
            seed, kind = line.split()[:2]
            if kind == "FFUD" and first <= int(seed) < stop:
                ffud.append(int(seed))
    return [seed for seed in ffud if search.solve(deal(seed)).nodes > QUICK_NODES]


def first_stuck(state: State, name: str, blocks: Iterable[frozenset[Card]]) -> Trial:
    """Play ``blocks`` (smallest first) until one cannot come down."""
    started = time.perf_counter()
    tried = positions = cut_off = 0
    for block in sorted(blocks, key=lambda b: (len(b), sorted(b))):
        tried += 1
        play = play_open_block(state, block, MAX_POSITIONS)
        positions += play.positions
        cut_off += not play.finished
        if not play.comes_down:
            return Trial(name, tried, positions, cut_off, block, time.perf_counter() - started)
    return Trial(name, tried, positions, cut_off, None, time.perf_counter() - started)


def most_parts(state: State, up_to: int = 3) -> int:
    """The most components G minus up to ``up_to`` cards has."""
    cards = state.top_cards()
    return max(
        len(compatibility_components([card for card in cards if card not in cut]))
        for k in range(1, up_to + 1)
        for cut in itertools.combinations(cards, k)
    )


def random_sets(state: State, count: int, seed: int) -> list[frozenset[Card]]:
    """``count`` distinct random sets of 6-11 of ``state``'s cards."""
    rng = random.Random(seed)
    cards = sorted(state.top_cards())
    sets: set[frozenset[Card]] = set()
    while len(sets) < count:
        sets.add(frozenset(rng.sample(cards, rng.randint(6, min(11, len(cards) - 1)))))
    return sorted(sets, key=sorted)


def plus_cards(state: State, extra: int = 2) -> set[frozenset[Card]]:
    """The kernel's blocks (cuts of one or two cards) with up to ``extra`` more cards of any kind."""
    cards = set(state.top_cards())
    out: set[frozenset[Card]] = set()
    for block in cut_blocks(state):
        for k in range(1, extra + 1):
            for added in itertools.combinations(sorted(cards - block), k):
                grown = block | frozenset(added)
                if len(grown) < len(cards):
                    out.add(grown)
    return out


def canonical_key(state: State) -> tuple[tuple[Card, int, int], ...]:
    """A key shared exactly by the states equal up to a permutation of rows, one of columns and a transpose.

    The cards are distinct, so labelling rows and columns in order of first
    appearance, cards in card order, leaves no choice: two states get the same
    key (for one orientation) exactly when a permutation of rows and one of
    columns maps one onto the other; the smaller of the two orientations' keys
    covers the transpose. Moves need only "same row or same column", which all
    of these keep, so such states share every verdict.
    """
    keys = []
    for transpose in (False, True):
        rows: dict[int, int] = {}
        cols: dict[int, int] = {}
        key = []
        for card, cell in sorted((card, cell) for cell, card in enumerate(state.cells) if card is not None):
            row, col = divmod(cell, state.cols)
            if transpose:
                row, col = col, row
            key.append((card, rows.setdefault(row, len(rows)), cols.setdefault(col, len(cols))))
        keys.append(tuple(key))
    return min(keys)


def symmetric_copies(state: State) -> tuple[int, int]:
    """The states reachable from ``state`` with a connected graph, and the same up to ``canonical_key``."""
    level = {state.cells: state}
    states = keys = 0
    while level:
        states += len(level)
        keys += len({canonical_key(node) for node in level.values()})
        after: dict[tuple[Card | None, ...], State] = {}
        for node in level.values():
            for move in node.legal_moves():
                child = node.apply(move)
                if child.cells not in after and is_connected(child.top_cards()):
                    after[child.cells] = child
        level = after
    return states, keys


def cards_text(block: frozenset[Card] | None) -> str:
    return " ".join(sorted(card_text(card) for card in block)) if block else "none"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="*", help="deals to try (default: the slow FFUD of 0-100,000)")
    parser.add_argument("--random-sets", type=int, default=100, help="random sets tried a deal")
    parser.add_argument("--symmetry", type=int, nargs="*", default=[1163], help="deals whose states are counted")
    args = parser.parse_args()
    seeds = args.seeds if args.seeds else slow_ffud_deals()
    console = Console(stderr=True)
    print(f"FFUD deals tried: {', '.join(map(str, seeds))} (search without a budget past {QUICK_NODES:,} nodes)")
    print()
    print(f"| deal | nodes | family | blocks | positions | stopped at {MAX_POSITIONS:,} | first stuck block | s |")
    print("|---|---|---|---|---|---|---|---|")
    for seed in track(seeds, description="deals", console=console):
        state = deal(seed)
        nodes = search.solve(state).nodes
        trials = (
            first_stuck(state, "cut 3", cut_blocks(state, (3,), SIDE_MAX, neighbours_only=False)),
            first_stuck(state, "random", random_sets(state, args.random_sets, seed)),
            first_stuck(state, "plus", plus_cards(state)),
        )
        for trial in trials:
            print(
                f"| {seed} | {nodes:,} | {trial.name} | {trial.blocks:,} | {trial.positions:,} | {trial.cut_off} | "
                f"{cards_text(trial.stuck)} | {trial.seconds:.1f} |"
            )
        print(f"| {seed} | {nodes:,} | parts | most components of G minus up to 3 cards: {most_parts(state)} | | | | |")
    for seed in args.symmetry:
        states, keys = symmetric_copies(deal(seed))
        print()
        print(
            f"{seed}: {states:,} states reachable with a connected graph, {keys:,} up to rows, columns and a "
            f"transpose ({states - keys:,} copies, {100 * (states - keys) / states:.1f}%)"
        )


if __name__ == "__main__":
    main()
