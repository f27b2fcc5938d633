"""``State.replay``: a move list played on one mutable list of top cards, checked move by move."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boaf.game import IllegalMove, deal
from boaf.game.state import Move


@given(seed=st.integers(-(2**31), 2**31 - 1), data=st.data())
@settings(max_examples=60, deadline=None)
def test_a_replay_matches_playing_state_by_state(seed: int, data: st.DataObject) -> None:
    # Random legal walks: the texts and the stacks left equal those of State.apply, move by move.
    state = deal(seed, 3, 4)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    moves, texts, current = [], [], state
    while True:
        legal = list(current.legal_moves())
        if not legal:
            break
        move = legal[rng.integers(len(legal))]
        moves.append(move)
        texts.append(current.move_text(move))
        current = current.apply(move)
    assert state.replay(moves) == (texts, current.n_stacks)


def test_an_illegal_move_is_named_by_its_place() -> None:
    state = deal(1)  # JD 2D 9H JC/5D 7H 7C 5H/...: 9H onto 9S is legal, JD onto 5S is not (no shared line)
    with pytest.raises(IllegalMove, match=r"move 2 \(cell 0 to cell 11\) is not legal here"):
        state.replay([Move(2, 10), Move(0, 11)])


@given(seed=st.integers(0, 10**6), source=st.integers(-2, 13), target=st.integers(-2, 13), walk=st.integers(0, 8))
@settings(max_examples=300, deadline=None)
def test_replay_refuses_exactly_the_moves_is_legal_refuses(seed: int, source: int, target: int, walk: int) -> None:
    # any cell pair, in or out of the grid, empty or not, after a few legal moves
    state = deal(seed, 3, 4)
    for _ in range(walk):
        legal = list(state.legal_moves())
        if not legal:
            break
        state = state.apply(legal[seed % len(legal)])
    move = Move(source, target)
    if state.is_legal(move):
        assert state.replay([move]) == ([state.move_text(move)], state.n_stacks - 1)
    else:
        with pytest.raises(IllegalMove):
            state.replay([move])
