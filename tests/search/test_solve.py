"""``search.solve``: results, reasons, budgets, cancellation and bad requests."""

from __future__ import annotations

import numpy as np
import pytest

from boaf import search
from boaf.game import BoafError, deal, parse_grid, play


def test_result_json_has_exactly_the_documented_fields() -> None:
    data = search.solve(deal(1)).to_json()
    assert set(data) == {"status", "moves", "nodes", "elapsed_ms", "reason", "algorithm"}
    assert data["status"] == "solvable" and data["reason"] is None and data["algorithm"] == "ordered"
    assert play(deal(1), data["moves"]).n_stacks == 1


@pytest.mark.parametrize(
    ("grid", "reason"),
    [
        ("AC 2C/7H --", search.ODD_BIRD),  # 7H flocks with neither club
        ("AC 2C/7H 8H", search.SEPARATED_FLOCK),  # clubs and hearts never meet
        ("AS --/-- 2S", search.EXHAUSTED),  # connected graph, but never in one line
    ],
)
@pytest.mark.parametrize("algorithm", search.ALGORITHM_NAMES)
def test_reasons_on_constructed_states(grid: str, reason: str, algorithm: str) -> None:
    result = search.solve(parse_grid(grid), algorithm)
    assert (result.status, result.reason, result.moves) == (search.UNSOLVABLE, reason, [])


def test_separated_flock_and_connected_unsolvable_deals() -> None:
    assert search.solve(deal(1264)).reason == search.SEPARATED_FLOCK
    assert search.solve(deal(1163)).reason == search.EXHAUSTED


def test_one_stack_is_solved_without_moves() -> None:
    assert search.solve(parse_grid("-- KD")).to_json() | {"elapsed_ms": 0} == {
        "status": "solvable",
        "moves": [],
        "nodes": 0,
        "elapsed_ms": 0,
        "reason": None,
        "algorithm": "ordered",
    }


@pytest.mark.parametrize(("seed", "status"), [(360528, "unsolvable"), (731678, "unsolvable"), (557593, "solvable")])
def test_the_hardest_published_deals(seed: int, status: str) -> None:
    result = search.solve(deal(seed))
    assert result.status == status
    if status == "solvable":
        assert play(deal(seed), result.moves).n_stacks == 1
    else:
        assert result.reason == search.EXHAUSTED


@pytest.mark.parametrize("algorithm", search.ALGORITHM_NAMES)
def test_a_node_budget_gives_unknown(algorithm: str) -> None:
    result = search.solve(deal(1163), algorithm, max_nodes=50)
    assert (result.status, result.moves, result.reason) == (search.UNKNOWN, [], None)
    assert result.nodes <= 50


HARD = 618979  # 0.78M nodes, the most of the FFUD deals of ten million (open blocks decide -115618 at 1,024 nodes)


def test_a_time_limit_gives_unknown() -> None:
    result = search.solve(deal(HARD), time_limit=0.001)
    assert result.status == search.UNKNOWN


def test_a_raised_cancel_flag_gives_unknown() -> None:
    result = search.solve(deal(HARD), cancel=np.ones(1, dtype=np.int64))
    assert result.status == search.UNKNOWN


def test_budgets_large_enough_do_not_change_the_answer() -> None:
    assert search.solve(deal(1163), max_nodes=10**7, time_limit=600).reason == search.EXHAUSTED


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"algorithm": "breadth-first"}, search.UnknownAlgorithm, "unknown algorithm 'breadth-first': choose one of"),
        ({"max_nodes": 0}, search.InvalidBudget, "max_nodes must be a positive integer, got 0"),
        ({"max_nodes": 2.5}, search.InvalidBudget, "max_nodes must be a positive integer"),
        ({"time_limit": -1}, search.InvalidBudget, "time_limit must be a positive number of seconds, got -1"),
        ({"cohort": 0}, search.InvalidBudget, "cohort must be a positive integer, got 0"),
        ({"max_memory_mb": 0}, search.InvalidBudget, "max_memory_mb must be a positive number of MiB, got 0"),
        ({"max_memory_mb": "1"}, search.InvalidBudget, "max_memory_mb must be a positive number of MiB"),
        ({"threads": 0}, search.InvalidBudget, "threads must be a positive integer, got 0"),
    ],
)
def test_bad_requests(kwargs: dict[str, object], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        search.solve(deal(1), **kwargs)  # type: ignore[arg-type]
    assert issubclass(error, BoafError)


def test_best_n_cohort_size_is_configurable() -> None:
    for cohort in (1, 2, 8):
        assert search.solve(deal(1163), "best-n", cohort=cohort).status == search.UNSOLVABLE
        assert search.solve(deal(1), "best-n", cohort=cohort).status == search.SOLVABLE


def test_batches_of_deals_match_single_solves() -> None:
    seeds = list(range(1160, 1170))
    batch = search.solve_deals(seeds)
    assert batch.status_names() == [search.solve(deal(s)).status for s in seeds]
    assert batch.reasons == [search.solve(deal(s)).reason for s in seeds]


def test_single_and_batch_answers_share_one_status_vocabulary() -> None:
    batch = search.solve_deals([1, 1163])
    assert batch.status == (search.Status.SOLVABLE, search.Status.UNSOLVABLE)
    result = search.solve(deal(1))
    assert result.status is search.Status.SOLVABLE and f"{result.status}" == "solvable"
    assert type(result.to_json()["status"]) is str and type(batch.status_names()[0]) is str


@pytest.mark.parametrize("algorithm", search.ALGORITHM_NAMES)
def test_a_memory_budget_gives_unknown_with_reason_memory(algorithm: str) -> None:
    result = search.solve(deal(HARD), algorithm, max_memory_mb=0.5)
    assert (result.status, result.reason, result.moves) == (search.UNKNOWN, search.MEMORY, [])


def test_the_transposition_table_never_grows_past_the_memory_budget() -> None:
    from boaf.game.bits import shuffled_cells
    from boaf.search import kernel
    from boaf.search.solver import default_ordering
    from boaf.search.tables import grid_tables, kernel_config

    root = shuffled_cells(np.array([HARD], dtype=np.int64), 16)[0]
    algo, model = search.algorithm_named("ordered"), default_ordering()
    for budget in (100_000, 1_000_000, 3_000_000):
        memo = kernel.new_memo(16, max_bytes=budget)
        limits = kernel.Budget(0, 0.0, np.zeros(1, dtype=np.int64), budget)
        path = np.zeros((16, 2), dtype=np.int8)
        status, _, _, memo = kernel.solve_one(
            root,
            grid_tables(4, 4),
            kernel_config(algo, model),
            limits,
            memo=memo,
            stamp=1,
            path=path,
            share=kernel.NO_SHARE,
        )
        assert status == kernel.OUT_OF_MEMORY
        # the table and, while it grows, its half-size predecessor fit in the budget
        assert 1.5 * memo.nbytes <= budget < 3 * memo.nbytes


def test_a_memory_budget_large_enough_does_not_change_answers() -> None:
    seeds = list(range(1160, 1200))
    plain = search.solve_deals(seeds)
    capped = search.solve_deals(seeds, max_memory_mb=64)
    assert capped.status_names() == plain.status_names() and capped.reasons == plain.reasons
    assert capped.nodes.tolist() == plain.nodes.tolist()
    one = search.solve(deal(1163), max_memory_mb=64)
    assert (one.status, one.reason) == (search.UNSOLVABLE, search.EXHAUSTED)


def test_batches_report_memory_as_an_unknown_reason() -> None:
    batch = search.solve_deals([1, HARD], max_memory_mb=2)
    assert batch.status_names() == [search.SOLVABLE, search.UNKNOWN]
    assert batch.reasons == [None, search.MEMORY]


@pytest.mark.parametrize("algorithm", ["ordered"])
def test_threads_do_not_change_the_answer(algorithm: str, golden: list[tuple[bool, int]]) -> None:
    # (the split is the same for every algorithm; compatible and best-n lose their shared table there and are slow)
    from boaf.game import random_states

    sample = random_states(2026, 100)
    for i, (state, (label, _)) in enumerate(zip(sample, golden[:100], strict=True)):
        result = search.solve(state, algorithm, threads=2 + i % 2)
        assert (result.status == search.SOLVABLE) == label  # a solution is replayed inside solve
    for seed in (1, 1163, 360528, 557593):
        assert search.solve(deal(seed), algorithm, threads=2).status == search.solve(deal(seed), algorithm).status


def test_threads_share_one_table_that_grows_between_restarts(monkeypatch: pytest.MonkeyPatch) -> None:
    # A tiny shared table fills at once: the threads are halted, it is doubled and they search again.
    from boaf.search import threads

    monkeypatch.setattr(threads, "SHARED_ROWS", 64)
    grows = []
    real_grow = threads._Run._grow

    def counting_grow(run: threads._Run) -> bool:
        grows.append(run.table.shape[0])
        return real_grow(run)

    monkeypatch.setattr(threads._Run, "_grow", counting_grow)
    for seed in (1, 1163, 174024, -115618):
        one = search.solve(deal(seed))
        two = search.solve(deal(seed), threads=2)
        assert two.status == one.status
    assert len(grows) >= 5
    assert max(grows) >= 1024  # each solve starts at 64 rows and doubles


def test_a_shared_table_keeps_to_the_memory_budget() -> None:
    result = search.solve(deal(HARD), threads=2, max_memory_mb=1)
    assert (result.status, result.reason) == (search.UNKNOWN, search.MEMORY)


def test_a_solution_that_does_not_replay_is_a_bug_not_an_answer() -> None:
    from boaf.search.solver import checked_solution

    state = deal(1)
    with pytest.raises(search.SolutionCheckFailed, match="does not replay"):
        checked_solution(state, np.array([[0, 0]], dtype=np.int8))
    with pytest.raises(search.SolutionCheckFailed, match="leaves 15 stacks"):
        checked_solution(state, np.array([[0, 1]], dtype=np.int8))


SPECIALIZATIONS = """
import numpy as np
from boaf import search
from boaf.game import deal
from boaf.search import kernel
from boaf.search.ordering import OrderingModel, DEFAULT_ORDERING
from boaf.search.probe import probe
from boaf.game.arrays import states_to_array
states = [deal(1), deal(2)]
numpy_model = OrderingModel(
    DEFAULT_ORDERING.intercept, DEFAULT_ORDERING.coefficients, np.int32(DEFAULT_ORDERING.cutoff)
)
search.solve_many(states)
search.solve_many(states, max_nodes=500, time_limit=5, ordering=numpy_model)
search.solve_many(states, time_limit=30, max_memory_mb=64)
search.solve(deal(3), max_nodes=300, time_limit=2, ordering=numpy_model)
search.solve(deal(3), threads=2, max_nodes=300, time_limit=2)
probe(states_to_array(states), 4, 4, max_nodes=100)
probe(states_to_array(states), 4, 4, max_nodes=100, algorithm="ordered")
print(len(kernel.search_states.signatures))
"""


def test_numpy_scalars_and_defaults_compile_no_second_copy_of_the_kernel() -> None:
    """Every caller hands the kernels plain ints and floats, so numba compiles each kernel once (not per type)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", SPECIALIZATIONS], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["1"]  # one entry serves solve and solve_many
