"""The edge converters: messages to states and back, fast batch path equal to the precise one."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import states

from boaf.game import InvalidState, State, deal
from boaf.game.arrays import states_to_array
from boaf.puzzles import DepthCount
from boaf.service.core.answers import StateArray
from boaf.service.rpc.converters import (
    algorithm_from_proto,
    analysis_options,
    generation_options,
    state_from_proto,
    state_to_proto,
    states_from_proto,
)
from boaf.v1 import boaf_pb2 as pb


@given(states(tall_stacks=True))
def test_a_state_survives_the_round_trip_through_its_message(state: State) -> None:
    assert state_from_proto(state_to_proto(state), "state") == state


@given(st.lists(states(max_cells=16), min_size=1, max_size=20))
def test_batches_read_the_same_on_the_fast_and_the_precise_path(batch: list[State]) -> None:
    messages = [state_to_proto(s) for s in batch]
    read = states_from_proto(messages)
    precise = [state_from_proto(m, "x") for m in messages]
    assert precise == batch
    if isinstance(read, StateArray):
        assert len({(s.rows, s.cols) for s in batch}) == 1
        assert all(s.sizes == tuple(int(c is not None) for c in s.cells) for s in batch)
        np.testing.assert_array_equal(read.cells, states_to_array(batch))
    else:
        assert read == batch


def test_a_batch_of_deals_takes_the_fast_path() -> None:
    batch = states_from_proto([state_to_proto(deal(seed)) for seed in range(10)])
    assert isinstance(batch, StateArray)
    assert (batch.rows, batch.cols, batch.cells.shape) == (4, 4, (10, 16))


def test_cards_are_read_in_any_case_and_with_10_for_ten() -> None:
    message = pb.State(rows=1, cols=4, cells=["10h", "tS", "qd", ""])
    assert state_from_proto(message, "s") == State.from_cells(1, 4, [38, 39, 45, None])


@pytest.mark.parametrize(
    ("cells", "match"),
    [
        (["AS", "AS"], "states[1]: duplicate card AS at row 1, column 2 (first at row 1, column 1)"),
        (["", ""], "states[1]: no stacks: every cell is empty"),
        (["AS", "1S"], "states[1]: cells[1] (row 1, column 2): unknown card '1S'"),
    ],
)
def test_a_bad_state_in_an_otherwise_fast_batch_is_named(cells: list[str], match: str) -> None:
    good = pb.State(rows=1, cols=2, cells=["KD", "QD"])
    with pytest.raises(InvalidState) as caught:
        states_from_proto([good, pb.State(rows=1, cols=2, cells=cells), good])
    assert str(caught.value).startswith(match)


def test_unspecified_algorithm_is_ordered() -> None:
    assert algorithm_from_proto(pb.ALGORITHM_UNSPECIFIED) == "ordered"
    assert algorithm_from_proto(pb.BEST_N) == "best-n"
    assert algorithm_from_proto(pb.ISLAND_MERGE) == "island-merge"


def test_unset_puzzle_options_are_the_defaults() -> None:
    assert analysis_options(pb.AnalyzePuzzleRequest()) == {"samples": None, "seed": 0}
    assert generation_options(pb.GeneratePuzzleRequest(cards=5)) == {
        "rows": 4,
        "cols": 4,
        "seed": 0,
        "iterations": None,
        "energy": None,
    }


def test_set_puzzle_options_pass_through() -> None:
    assert analysis_options(pb.AnalyzePuzzleRequest(samples=9, seed=3)) == {"samples": 9, "seed": 3}
    request = pb.GeneratePuzzleRequest(cards=5, rows=3, cols=5, seed=7, iterations=20, energy="e1")
    assert generation_options(request) == {"rows": 3, "cols": 5, "seed": 7, "iterations": 20, "energy": "e1"}


def test_a_depth_count_message_has_the_fields_of_its_json_form() -> None:
    depth = DepthCount(depth=1, states=None, solvable=None, ratio=0.5, ratio_low=0.25, ratio_high=0.75)
    assert set(pb.DepthCount.DESCRIPTOR.fields_by_name) == set(depth.to_json())
