"""``benchmarks/ffud_trials.py``, small: its canonical key against every permutation of rows and columns, its
count of symmetric copies against the same by brute force, and the one stuck block it finds for FFUD deal 25482.
"""

from __future__ import annotations

import itertools

from benchmarks import ffud_trials
from boaf.game import State, deal, random_states
from boaf.game.cards import parse_card
from boaf.search.reference import play_open_block

STUCK_25482 = frozenset(parse_card(text) for text in ("2D", "3D", "6H", "AS", "JC", "KD", "KS", "QD", "QS", "TC"))


def mapped(state: State, rows: tuple[int, ...], cols: tuple[int, ...], transpose: bool) -> tuple[object, ...]:
    """``state``'s cards moved by a permutation of rows and one of columns, then transposed if asked (square grids)."""
    out: list[object] = [None] * len(state.cells)
    for cell, card in enumerate(state.cells):
        row, col = divmod(cell, state.cols)
        row, col = rows[row], cols[col]
        out[col * state.cols + row if transpose else row * state.cols + col] = card
    return tuple(out)


def images(state: State) -> set[tuple[object, ...]]:
    """Every arrangement of ``state`` up to rows, columns and (square grids) a transpose, by brute force."""
    flips = (False, True) if state.rows == state.cols else (False,)
    return {
        mapped(state, rows, cols, flip)
        for rows in itertools.permutations(range(state.rows))
        for cols in itertools.permutations(range(state.cols))
        for flip in flips
    }


def test_the_canonical_key_is_shared_exactly_by_states_equal_up_to_rows_columns_and_a_transpose() -> None:
    states = random_states(5, 12, rows=3, cols=3, stacks=4) + random_states(6, 8, rows=3, cols=3, stacks=6)
    # Each state's images under a few permutations (equal), and each pair of states (equal only by brute force).
    family = list(states)
    for state in states[:6]:
        for rows, cols in (((1, 0, 2), (0, 1, 2)), ((2, 0, 1), (1, 2, 0))):
            family.append(State.from_cells(3, 3, list(mapped(state, rows, cols, transpose=True))))
    for a, b in itertools.combinations(family, 2):
        same = b.cells in images(a)
        assert (ffud_trials.canonical_key(a) == ffud_trials.canonical_key(b)) == same, (a.cells, b.cells)
    keys = [ffud_trials.canonical_key(state) for state in family]
    assert len(set(keys)) < len(keys)  # and some are equal


def test_symmetric_copies_counts_the_reachable_states_and_their_classes() -> None:
    state = deal(7, rows=3, cols=3)
    states, keys = ffud_trials.symmetric_copies(state)
    reached = {state.cells: state}
    level = [state]
    while level:
        after = []
        for node in level:
            for move in node.legal_moves():
                child = node.apply(move)
                if child.cells not in reached and ffud_trials.is_connected(child.top_cards()):
                    reached[child.cells] = child
                    after.append(child)
        level = after
    classes: list[set[tuple[object, ...]]] = []
    for node in reached.values():
        if not any(node.cells in seen for seen in classes):
            classes.append(images(node))
    assert (states, keys) == (len(reached), len(classes))
    assert keys < states  # a 3x3 deal's endgame has copies


def test_a_block_with_two_cards_added_is_stuck_for_ffud_deal_25482() -> None:
    state = deal(25482)
    trial = ffud_trials.first_stuck(state, "plus", ffud_trials.plus_cards(state))
    assert trial.stuck == STUCK_25482
    # The seven cards hang from JC alone: the kernel's own block (with JC) comes down with the rest open.
    assert play_open_block(state, STUCK_25482 - {parse_card("6H"), parse_card("TC")}).comes_down


def test_a_play_stopped_at_its_positions_claims_nothing() -> None:
    state = deal(25482)
    assert not play_open_block(state, STUCK_25482).comes_down
    stopped = play_open_block(state, STUCK_25482, max_positions=100)
    assert stopped.comes_down and not stopped.finished and stopped.positions >= 100
