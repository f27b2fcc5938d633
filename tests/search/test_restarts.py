"""The restarts of wide grids: the symmetries, the resumed main search, the probes, and what ``solve`` answers."""

from __future__ import annotations

import time
from itertools import combinations

import numpy as np
import pytest

from benchmarks.grids import TUNING_SEED, random_grid_states, state_set
from boaf.game import State
from boaf.game.arrays import state_to_array
from boaf.search import kernel, restarts, solve
from boaf.search.algorithms import algorithm_named
from boaf.search.kernel.gather import NODE_GATHER_FIRST
from boaf.search.kernel.memo import grown_in_time
from boaf.search.ordering import default_ordering
from boaf.search.reference import reference_solve
from boaf.search.solver import checked_solution
from boaf.search.tables import grid_tables, kernel_config

GRIDS = [(3, 3), (4, 4), (5, 5), (6, 6), (4, 13), (13, 4), (2, 26), (1, 52), (7, 7)]
SLOW_SEED = 777  # 4x13 states (k from n/3 to n) whose first slice decides nothing; state 294 is won by a probe


def slow_state(index: int) -> State:
    return random_grid_states(SLOW_SEED, index + 1, 4, 13)[index]


def images_of(rows: int, cols: int, count: int) -> list[restarts.Symmetry]:
    rng = np.random.default_rng(44)
    return [restarts.shuffled(rows, cols, rng, transpose=k % 2 == 1) for k in range(count)]


@pytest.mark.parametrize(("rows", "cols"), GRIDS)
def test_every_image_is_a_bijection_that_keeps_lines(rows: int, cols: int) -> None:
    n = rows * cols
    for s in images_of(rows, cols, 6):
        assert sorted(s.cells.tolist()) == list(range(n)) and s.image_rows * s.image_cols == n
        for a, b in combinations(range(n), 2):
            same = a // cols == b // cols or a % cols == b % cols
            ia, ib = int(s.cells[a]), int(s.cells[b])
            assert same == (ia // s.image_cols == ib // s.image_cols or ia % s.image_cols == ib % s.image_cols)


@pytest.mark.parametrize(("rows", "cols"), [(4, 13), (5, 5), (1, 52)])
def test_an_image_has_the_same_moves_and_its_paths_replay_on_the_state(rows: int, cols: int) -> None:
    for state in random_grid_states(44_100, 20, rows, cols, cards=(4, 12)):
        moves = {(m.source, m.target) for m in state.legal_moves()}
        solvable = reference_solve(state).solvable
        for s in images_of(rows, cols, 4):
            image = s.image(state)
            image_moves = {(m.source, m.target) for m in image.legal_moves()}
            back = s.path_back(np.array(sorted(image_moves), dtype=np.int8).reshape(-1, 2))
            assert {tuple(m) for m in back.tolist()} == moves
            won = reference_solve(image)
            assert won.solvable == solvable
            if won.solvable:
                path = np.array([(m.source, m.target) for m in won.moves], dtype=np.int8)
                checked_solution(state, s.path_back(path))  # raises unless it replays to one stack


def test_the_probes_of_a_round_are_the_same_every_time_and_differ_between_rounds() -> None:
    state = slow_state(294)
    config = kernel_config(algorithm_named("ordered"), default_ordering(), 4)
    first, again, later = (list(restarts.probes(state, config, r)) for r in (0, 0, 1))
    assert len(first) == restarts.PROBES_A_ROUND
    assert [p[1].tolist() for p in first] == [p[1].tolist() for p in again]
    assert [p[1].tolist() for p in first] != [p[1].tolist() for p in later]
    assert {p[0].image_rows for p in first} == {4, 13}  # every other image transposed
    for symmetry, cells, _ in first:  # the image's cells, made without a State, are those of the image
        assert cells.tolist() == state_to_array(symmetry.image(state)).tolist()
    assert {p[2].options & kernel.ORDER for p in first} == {0, kernel.ORDER}  # half in the generated order


@pytest.mark.parametrize(("rows", "cols"), [(5, 5), (6, 6), (4, 13), (13, 4), (2, 26), (1, 52), (7, 7)])
def test_solve_with_restarts_agrees_with_the_plain_search_on_small_states(
    rows: int, cols: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Slices of 8 nodes and probes of 1-2: every state past a few nodes is resumed and probed many times.
    monkeypatch.setattr(restarts, "FIRST_SLICE", 8)
    monkeypatch.setattr(restarts, "SLICE_GROWTH", 2)
    for state in random_grid_states(44_200 + rows, 60, rows, cols, cards=(6, 12)):
        answer = solve(state)
        assert (answer.status.value == "solvable") == reference_solve(state).solvable
        if answer.moves:  # (replayed by ``solve`` before it answers)
            assert len(answer.moves) == state.n_stacks - 1


def test_a_resumed_search_keeps_its_memo_and_decides_as_one_search(monkeypatch: pytest.MonkeyPatch) -> None:
    # 4x13 states of 12-18 cards, in slices of 64 nodes growing by 2: many resumes, memos grown between them.
    states = random_grid_states(44_300, 30, 4, 13, cards=(12, 18))
    monkeypatch.setattr(restarts, "FIRST_SLICE", 400_000)  # one slice: the search alone
    whole = [solve(s, max_nodes=400_000) for s in states]
    assert sum(one.nodes > 64 for one in whole) >= 10 and sum(one.status.value == "unsolvable" for one in whole) >= 5
    monkeypatch.setattr(restarts, "FIRST_SLICE", 64)
    monkeypatch.setattr(restarts, "SLICE_GROWTH", 2)
    monkeypatch.setattr(restarts, "PROBE_SHARE", 0.0)  # (probes of one node each: the main search decides)
    for state, one in zip(states, whole, strict=True):
        if one.status.value == "unknown":
            continue
        assert solve(state).status == one.status


def test_a_state_won_by_a_probe_is_answered_with_a_replayed_solution_and_the_same_each_time() -> None:
    state = slow_state(294)
    first, again = solve(state), solve(state)
    assert first.status.value == "solvable" and first.nodes < 20_000  # one search alone: about 1.1 million nodes
    assert (again.moves, again.nodes) == (first.moves, first.nodes)
    assert len(first.moves) == state.n_stacks - 1


def test_the_node_budget_covers_the_main_search_and_the_probes() -> None:
    state = slow_state(22)  # unsolvable, 2.3 million nodes
    for budget in (100, 2_048, 2_049, 5_000, 30_000):
        answer = solve(state, max_nodes=budget)
        assert answer.status.value == "unknown" and answer.nodes <= budget


def test_a_growth_the_deadline_leaves_no_time_for_is_refused_and_one_it_does_is_made() -> None:
    table = kernel.new_memo(52)
    table[3, -1] = 1
    table[3, 0] = 12345
    late = time.perf_counter() - 1.0
    same, refused = grown_in_time(table, 1, late, 0.0)
    assert refused < 0 and same.shape == table.shape
    grown, per_row = grown_in_time(table, 1, 0.0, 1.0)  # no deadline: grown whatever it costs
    assert per_row >= 0 and grown.shape[0] == 2 * table.shape[0]
    assert np.count_nonzero(grown[:, -1] == 1) == 1
    # A first growth (no rate timed yet) of a large table is not started a moment before the deadline.
    big = np.zeros((1 << 20, table.shape[1]), dtype=np.uint64)
    assert grown_in_time(big, 1, time.perf_counter() + 0.01, 0.0)[1] < 0
    # A deadline with time for it, at the rate the last growth took.
    grown_again, _ = grown_in_time(grown, 1, time.perf_counter() + 60.0, per_row)
    assert grown_again.shape[0] == 2 * grown.shape[0]


SLOWEST = {(5, 5): 780, (6, 6): 418, (4, 13): 341}  # the slowest of 1,000 tuning states of each grid (1 s each)


@pytest.mark.parametrize(("rows", "cols"), list(SLOWEST))
def test_a_search_stops_within_its_time_limit_on_the_slowest_states(rows: int, cols: int) -> None:
    state = state_set("random", TUNING_SEED, SLOWEST[rows, cols] + 1, (rows, cols))[-1]
    solve(state, max_nodes=10)  # (the grid's tables, outside the timed search)
    for limit in (0.02, 0.25):
        # The search reads the clock every 1,024 nodes and refuses growths the deadline has no time for; the
        # wall clock also counts time this process was not running (the suite runs in two worker processes,
        # beside servers and compile children), so a run may be late for that alone: one of three must be on time.
        late = []
        for _ in range(3):
            answer = solve(state, time_limit=limit)
            if answer.status.value != "unknown":  # (the 5x5 state may be decided within 0.25 s)
                break
            if answer.elapsed_ms <= 1e3 * limit + max(0.05 * 1e3 * limit, 20.0):
                break
            late.append(answer.elapsed_ms)
        assert len(late) < 3, f"limit {limit} s: stopped at {late} ms"


def test_the_main_search_gathers_its_nodes_over_all_its_slices_as_one_search_would() -> None:
    # A solvable 6x6 state of 18 cards that a gathering wins once its node's subtree passes a few thousand nodes
    # over the slices; searched in slices of 4,096 nodes, each a new call of the kernel.
    state = state_set("random", 47_000_000, 314, (6, 6))[313]
    config = kernel_config(algorithm_named("ordered"), default_ordering(), 1)
    cancel = np.zeros(1, dtype=np.int64)

    def sliced(carried: bool) -> tuple[int, int]:
        main = restarts._Search(state_to_array(state), config, grid_tables(6, 6), 0)
        if not carried:  # counted per call: a node gathered at 4,096 nodes at most, its small gatherings again
            main.share = main.share._replace(gathered=kernel.NO_SHARE.gathered)
        spent = 0
        for _ in range(60):
            status, nodes, length = main.run(4_096, 0.0, cancel)
            spent += nodes
            if carried and status == kernel.UNKNOWN:  # the root's subtree: every slice's nodes
                assert main.share.gathered[0, 0] == spent and main.share.gathered[0, 1] >= NODE_GATHER_FIRST
            if status != kernel.UNKNOWN:
                assert status == kernel.SOLVABLE
                assert len(checked_solution(state, main.path[:length])) == state.n_stacks - 1
                return status, spent
        return status, spent

    won, spent = sliced(carried=True)
    assert won == kernel.SOLVABLE and spent <= 8 * 4_096  # (18,186 nodes)
    per_call = sliced(carried=False)  # (won after 78,582 nodes)
    assert per_call[0] == kernel.UNKNOWN or per_call[1] >= 4 * spent


def test_slices_that_gather_their_nodes_decide_as_one_search_and_leave_the_line_they_stopped_on() -> None:
    # 4x13 states of 16-21 cards in slices of 4,096 nodes and more (each slice gathers at nodes and carries the
    # counts to the next, no probes), against one search of the same state in one call.
    config = kernel_config(algorithm_named("ordered"), default_ordering(), 1)
    cancel = np.zeros(1, dtype=np.int64)
    decided = carried = lines = 0
    for state in random_grid_states(44_601, 60, 4, 13, cards=(16, 21)):
        one = restarts._Search(state_to_array(state), config, grid_tables(4, 13), 0).run(300_000, 0.0, cancel)
        main = restarts._Search(state_to_array(state), config, grid_tables(4, 13), 0)
        spent, slices = 0, 0
        while spent < 300_000:
            status, nodes, length = main.run(4_096 << slices, 0.0, cancel)
            spent, slices = spent + nodes, slices + 1
            if status != kernel.UNKNOWN:
                break
            gathered = main.share.gathered  # the moves into the nodes at depths 1 and 2 of the line it stopped on
            line = [(int(row[2]), int(row[3])) for row in gathered[1:] if row[1] > 0]
            state.replay_cells(line)  # (raises on a move that is not legal where it is played)
            lines += len(line) > 0
        carried += slices > 2
        if status == kernel.SOLVABLE:
            assert len(checked_solution(state, main.path[:length])) == state.n_stacks - 1
        if one[0] != kernel.UNKNOWN and status != kernel.UNKNOWN:
            assert status == one[0], state.cells
            decided += 1
    assert decided >= 55 and carried >= 10 and lines >= 10
