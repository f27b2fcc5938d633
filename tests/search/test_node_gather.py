"""Gathering at a node (``GATHER_NODES``): on wide grids, a node near the root whose subtree grows big is gathered,
closed as dead when no block holds all its cards, and won by its block's derivation when one does.

The rule is ``gather_refutes``' own, on any state, so it is checked the same
way: against the plain reference search on small states of several grids, where
every win it finds is replayed; on larger states, every win it finds is replayed
and every state it refutes is confirmed by the search without it. Then
the search with it against the same search without gathering on the slow
4x13 tuning states it was made for (the same answers, a ninth of the nodes or
less), and its bounds: a memory cap too small for its blocks makes it claim
nothing, a passed deadline or a raised cancel flag stop it claiming nothing,
the same state gets the same answer and nodes every time, and the memo leaves the
gatherings their share of the memory cap.
"""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.grids import TUNING_SEED, random_grid_states, state_set
from boaf import search
from boaf.game import State, parse_move
from boaf.game.arrays import state_to_array
from boaf.search import kernel
from boaf.search.kernel.gather import (
    BLOCK_BYTES,
    GATHER_BLOCKS,
    NODE_MEMORY_SHARE,
    NODE_WORK_PER_NODE,
    REFUTED,
    gather_node,
)
from boaf.search.ordering import default_ordering
from boaf.search.reference import is_connected, reference_solve
from boaf.search.tables import grid_tables, kernel_config

ORDERED = search.algorithm_named("ordered")
WITHOUT = ORDERED.without(kernel.PRUNE_GATHER, "ordered-no-gather")
SLOW_UNSOLVABLE = (77, 340, 88)  # 4x13 tuning states: 410,180-729,145 nodes without gathering
SLOW_SOLVABLE = 48  # and one with a win, 551,049 nodes without gathering
PLENTY = 200_000  # a subtree's nodes: 10^8 units of work, more than any state here needs


def node_gathered(state: State, subtree: int = PLENTY, *, max_bytes: int = 0, cancel: int = 0) -> tuple[int, list]:
    """``gather_node``'s answer on ``state`` as a search's node: ``REFUTED``, 0 (gave up) or a win's moves' count,
    with those moves as ``(source, target)`` cells."""
    budget = kernel.Budget(0, 0.0, np.array([cancel], dtype=np.int64), max_bytes)
    tables = (kernel.compat_table(), kernel.line_table(state.rows, state.cols))
    moves = np.zeros((state.rows * state.cols, 2), dtype=np.int8)
    found = int(gather_node(state_to_array(state), *tables, budget, np.int64(subtree), moves))
    return found, moves[: max(found, 0)].tolist()


def node_refutes(state: State, subtree: int = PLENTY, *, max_bytes: int = 0, cancel: int = 0) -> bool:
    return node_gathered(state, subtree, max_bytes=max_bytes, cancel=cancel)[0] == REFUTED


def assert_wins(state: State, moves: list) -> None:
    """``moves`` replay from ``state``, each legal where it is played, to one stack."""
    assert len(moves) == state.n_stacks - 1, (state.cells, moves)
    _, stacks = state.replay_cells(moves)
    assert stacks == 1, (state.cells, moves)


def slow_states(indices: tuple[int, ...]) -> list[State]:
    states = state_set("random", TUNING_SEED, max(indices) + 1, (4, 13))
    return [states[i] for i in indices]


@pytest.mark.parametrize(("rows", "cols"), [(3, 3), (4, 4), (2, 6), (3, 5), (2, 9), (4, 5)])
def test_a_node_is_refuted_exactly_when_it_is_unsolvable_and_won_by_moves_that_replay_otherwise(
    rows: int, cols: int
) -> None:
    refuted = solvable = 0
    for state in random_grid_states(61, 300, rows, cols, cards=(4, min(10, rows * cols))):
        if not is_connected(state.top_cards()):
            continue  # (a disconnected G: the search's own test)
        answer = reference_solve(state).solvable
        found, moves = node_gathered(state)
        if answer:
            assert found > 0, state.cells
            assert_wins(state, moves)
        else:
            assert found == REFUTED, state.cells
        refuted += not answer
        solvable += answer
    assert refuted >= 10 and solvable >= 10, (refuted, solvable)


@pytest.mark.parametrize(("rows", "cols"), [(6, 6), (4, 13), (13, 4), (7, 7)])
def test_on_wide_grids_every_win_a_gathering_finds_replays_and_every_refutation_is_confirmed(
    rows: int, cols: int
) -> None:
    """States of 12-20 cards, gathered with the work of a 4,096-node subtree (the first gathering of a node)."""
    refuted = won = 0
    for state in random_grid_states(62, 60, rows, cols, cards=(12, 20)):
        found, moves = node_gathered(state, subtree=4_096)
        if found > 0:
            assert_wins(state, moves)
            won += 1
        elif found == REFUTED:
            assert search.solve(state, WITHOUT).status is search.UNSOLVABLE, state.cells
            refuted += 1
    assert won >= 5 and refuted >= 5, (won, refuted)


def test_the_slow_wide_states_get_the_same_answers_in_a_tenth_of_the_nodes() -> None:
    for index, state in zip(SLOW_UNSOLVABLE, slow_states(SLOW_UNSOLVABLE), strict=True):
        fast, plain = search.solve(state), search.solve(state, WITHOUT)
        assert fast.status is plain.status is search.UNSOLVABLE, index
        assert fast.nodes * 9 <= plain.nodes, (index, fast.nodes, plain.nodes)
        assert node_refutes(state), index


def test_a_won_state_with_dead_children_is_won_sooner_with_a_replayed_solution() -> None:
    (state,) = slow_states((SLOW_SOLVABLE,))
    fast, plain = search.solve(state), search.solve(state, WITHOUT)
    assert fast.status is plain.status is search.SOLVABLE
    assert fast.nodes * 2 <= plain.nodes, (fast.nodes, plain.nodes)
    replayed = state
    for move in fast.moves:  # (``solve`` replays it too before answering)
        replayed = replayed.apply(parse_move(replayed, move))
    assert replayed.n_stacks == 1


def test_the_same_state_gets_the_same_answer_nodes_and_moves_every_time() -> None:
    (state,) = slow_states((SLOW_SOLVABLE,))
    runs = [search.solve(state) for _ in range(3)]
    assert len({(r.status, r.nodes, tuple(r.moves)) for r in runs}) == 1


def test_a_memory_cap_too_small_for_the_blocks_claims_nothing_and_the_search_stays_exact() -> None:
    (state,) = slow_states((SLOW_UNSOLVABLE[0],))
    assert node_refutes(state)
    too_small = NODE_MEMORY_SHARE * BLOCK_BYTES * (state.n_stacks - 1)  # room for fewer blocks than cards
    assert not node_refutes(state, max_bytes=too_small)
    enough = NODE_MEMORY_SHARE * BLOCK_BYTES * GATHER_BLOCKS  # the root's gathering's blocks, no more
    assert node_refutes(state, max_bytes=enough)
    for megabytes in (0.05, 0.5, 4.0):
        answer = search.solve(state, max_memory_mb=megabytes)
        assert answer.status in (search.UNSOLVABLE, search.UNKNOWN), megabytes
        if answer.status is search.UNKNOWN:
            assert answer.reason == search.MEMORY, megabytes


def test_a_raised_cancel_flag_or_too_little_work_claims_nothing() -> None:
    (state,) = slow_states((SLOW_UNSOLVABLE[0],))
    assert node_gathered(state, cancel=1) == (0, [])
    assert node_gathered(state, subtree=1) == (0, [])  # NODE_WORK_PER_NODE units: far too few
    assert NODE_WORK_PER_NODE * PLENTY >= 10**8


def test_the_memo_leaves_the_node_gatherings_their_share_of_the_memory_cap() -> None:
    (state,) = slow_states((606,))  # unknown at 1 s before gathering at nodes: its memo outgrows a small cap
    config = kernel_config(ORDERED, default_ordering())
    for cap in (400_000, 2_000_000):
        root = state_to_array(state)
        memo = kernel.new_memo(root.shape[0], max_bytes=cap)
        limits = kernel.Budget(0, 0.0, np.zeros(1, dtype=np.int64), cap)
        status, _, _, memo = kernel.solve_one(
            root,
            grid_tables(4, 13),
            config,
            limits,
            memo=memo,
            stamp=1,
            path=np.zeros((root.shape[0], 2), dtype=np.int8),
            share=kernel.NO_SHARE,
        )
        assert status in (kernel.OUT_OF_MEMORY, kernel.UNSOLVABLE), cap
        # the table and, while it grows, its half-size predecessor fit in the cap less the gatherings' share
        assert 1.5 * memo.nbytes <= cap - cap // NODE_MEMORY_SHARE, (cap, memo.nbytes)


def test_one_search_wins_through_a_node_gathering_with_a_line_that_replays() -> None:
    """Three slow 6x6 tuning states, one kernel search each (no restarts, no probes): won, in a fifth of the nodes
    of the search without gathering or less, by a line whose last moves are a gathered node's derivation."""
    states = state_set("random", TUNING_SEED, 69, (6, 6))
    config, plain = kernel_config(ORDERED, default_ordering()), kernel_config(WITHOUT, default_ordering())
    for index in (12, 49, 68):  # 82,066, 495,106 and 60,436 nodes without gathering
        state = states[index]
        root = state_to_array(state)
        runs = []
        for each in (config, plain):
            path = np.zeros((root.shape[0], 2), dtype=np.int8)
            status, nodes, length, _ = kernel.solve_one(
                root,
                grid_tables(6, 6),
                each,
                kernel.Budget(0, 0.0, np.zeros(1, dtype=np.int64), 0),
                memo=kernel.new_memo(root.shape[0]),
                stamp=1,
                path=path,
                share=kernel.NO_SHARE,
            )
            assert status == kernel.SOLVABLE, index
            assert_wins(state, path[:length].tolist())
            runs.append(nodes)
        assert runs[0] * 5 <= runs[1], (index, runs)


def test_a_win_found_by_a_gathering_is_not_derived_once_the_cancel_flag_is_raised() -> None:
    """The derivation reads the cancel flag as the gathering does: raised, a gathering that would win gives up."""
    state = next(s for s in random_grid_states(63, 40, 6, 6, cards=(12, 16)) if node_gathered(s)[0] > 0)
    assert node_gathered(state, cancel=1) == (0, [])
