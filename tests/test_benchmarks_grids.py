"""The per-grid benchmark (``benchmarks/grids.py``): its state sets, its two-limit timing and its report.

Correctness only: the figures of such short runs mean nothing, and nothing here asserts a time.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest

from benchmarks import grid_checks, grid_worker, grids
from boaf import search
from boaf.game import State, deal, format_grid
from boaf.game.deals import seeded_rng

SMALL = 12  # states a set in the reproducibility tests


def texts(states: list[State]) -> list[str]:
    return [format_grid(state) for state in states]


@pytest.mark.parametrize("grid", grids.GRIDS, ids=grids.grid_name)
def test_random_states_are_reproducible_and_in_range(grid: tuple[int, int]) -> None:
    rows, cols = grid
    n = rows * cols
    states = grids.random_grid_states(7, 200, rows, cols)
    assert texts(states) == texts(grids.random_grid_states(7, 200, rows, cols))
    assert {(s.rows, s.cols) for s in states} == {grid}
    stacks = [s.n_stacks for s in states]
    assert math.ceil(n / 3) <= min(stacks) and max(stacks) <= n
    assert len(set(stacks)) > 1


@pytest.mark.parametrize("grid", grids.GRIDS, ids=grids.grid_name)
def test_plausible_positions_are_reproducible_and_played(grid: tuple[int, int]) -> None:
    positions = grids.plausible_positions(grids.grid_seed(grids.BENCH_SEED, grid), SMALL, *grid)
    assert texts(positions) == texts(grids.plausible_positions(grids.grid_seed(grids.BENCH_SEED, grid), SMALL, *grid))
    assert len(positions) == SMALL
    assert all((p.rows, p.cols) == grid and 2 <= p.n_stacks < p.rows * p.cols for p in positions)
    assert any(max(p.sizes) > 1 for p in positions)  # reached by moves, not dealt


def test_a_game_is_a_line_of_legal_moves() -> None:
    rng = seeded_rng(5)
    reached = grids.plausible_game(5, 4, 4, rng)
    for before, after in zip([deal(5, 4, 4), *reached], reached, strict=False):
        assert after.n_stacks == before.n_stacks - 1
        assert any(before.apply(move) == after for move in before.legal_moves())


def test_bench_tuning_and_warm_up_seeds_never_meet() -> None:
    seeds = {
        grids.grid_seed(run, g) for run in (grids.BENCH_SEED, grids.TUNING_SEED, grids.WARM_SEED) for g in grids.GRIDS
    }
    assert len(seeds) == 3 * len(grids.GRIDS)
    spans = [range(seed, seed + grids.GRID_SEED_STRIDE) for seed in sorted(seeds)]
    assert all(a.stop <= b.start for a, b in itertools.pairwise(spans))
    for name in grids.SETS:
        here = grids.state_set(name, grids.BENCH_SEED, SMALL, (5, 5))
        there = grids.state_set(name, grids.TUNING_SEED, SMALL, (5, 5))
        assert not set(texts(here)) & set(texts(there))


@pytest.mark.parametrize(("text", "grid"), [("4x13", (4, 13)), (" 13X4 ", (13, 4)), ("1x52", (1, 52))])
def test_grid_names(text: str, grid: tuple[int, int]) -> None:
    assert grids.parse_grid_name(text) == grid


@pytest.mark.parametrize("text", ["4x12", "4", "4x13x1", "axb"])
def test_other_grids_are_refused(text: str) -> None:
    with pytest.raises(Exception, match="expected one of 3x3, 4x4"):
        grids.parse_grid_name(text)


def test_only_states_unknown_at_the_first_limit_run_again() -> None:
    """A fake solver: the second state is unknown at 0.2 s (and late), solvable at 1 s; the third never ends."""
    states = grids.random_grid_states(1, 3, 3, 3)
    slow, endless = format_grid(states[1]), format_grid(states[2])

    def solver(state: State, limit_s: float) -> grids.Run:
        if format_grid(state) == endless or (format_grid(state) == slow and limit_s < 1):
            return grids.Run(str(search.UNKNOWN), 1_000, limit_s * 1e3 + 30.0, limit_s)
        return grids.Run(str(search.SOLVABLE), 10, 0.5, limit_s)

    steps: list[bool] = []
    [timings] = grids.timed(states, [solver], (0.2, 1.0), steps.append)
    assert steps == [False, False, False, True, True]
    assert [t.second is None for t in timings] == [True, False, False]
    assert timings[1].second is not None and timings[1].second.limit_s == 1.0
    assert [t.last.status for t in timings] == ["solvable", "solvable", "unknown"]
    figs = grids.figures(states, timings, (0.2, 1.0))
    assert [u["states"] for u in figs["unknown"]] == [2, 1]
    assert figs["worst"]["grid"] == endless and figs["worst"]["elapsed_ms"] == 1030.0
    first, second = figs["overrun"]
    assert (first["runs_at_limit"], first["worst_ms"], first["tolerance_ms"], first["within"]) == (2, 30.0, 20.0, False)
    assert (second["runs_at_limit"], second["worst_ms"], second["tolerance_ms"], second["within"]) == (
        1,
        30.0,
        50.0,
        True,
    )
    assert figs["over_100_ms"] == 1


def test_the_warm_up_solves_other_states_of_the_grid() -> None:
    seen: list[tuple[State, float]] = []

    def solver(state: State, limit_s: float) -> grids.Run:
        seen.append((state, limit_s))
        return grids.Run("solvable", 1, 0.1, limit_s)

    grids.warm_up(solver, (5, 5))
    assert len(seen) == grids.WARM_STATES + 1
    assert {(s.rows, s.cols) for s, _ in seen} == {(5, 5)} and {limit for _, limit in seen} == {grids.WARM_LIMIT_S}
    benchmark = set(texts(grids.state_set("random", grids.BENCH_SEED, 100, (5, 5))))
    assert not benchmark & set(texts([s for s, _ in seen]))


def test_two_solvers_take_turns() -> None:
    states = grids.random_grid_states(1, 4, 3, 3)
    calls: list[str] = []

    def named(name: str) -> grids.Solver:
        def solver(state: State, limit_s: float) -> grids.Run:
            calls.append(name)
            return grids.Run(str(search.SOLVABLE), 1, 0.1, limit_s)

        return solver

    this, ref = grids.timed(states, [named("this"), named("ref")], (0.2, 1.0), lambda again: None)
    assert len(this) == len(ref) == 4
    assert calls == ["this", "ref", "ref", "this", "this", "ref", "ref", "this"]


def test_a_tiny_run_prints_every_column_and_writes_every_figure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "grids.json"
    flags = ["--grid", "3x3", "--grid", "4x4", "--count", "20", "--plausible-count", "20", "--limit", "0.2"]
    grids.main([*flags, "--json", str(report)])
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("| grid |"))
    for column in grids.COLUMNS:
        assert column.format("0.2", "10") in header
    rows = [line for line in out.splitlines() if line.startswith(("| 3x3 |", "| 4x4 |"))]
    assert len(rows) == 4 and all(row.count("|") == len(grids.COLUMNS) + 1 for row in rows)
    written = json.loads(report.read_text(encoding="utf-8"))
    assert written["seed"] == grids.BENCH_SEED and written["limits_s"] == [0.2, 10.0]
    assert set(written["grids"]) == {"3x3", "4x4"}
    for sets in written["grids"].values():
        assert set(sets) == set(grids.SETS)
        for figs in sets.values():
            assert figs["states"] == 20
            assert {"median_ms", "p99_ms", "mean_ms", "worst", "nodes_max", "over_100_ms", "overrun"} <= set(figs)
            assert figs["slowest"][0]["elapsed_ms"] == figs["worst"]["elapsed_ms"]


def test_limits_must_grow() -> None:
    with pytest.raises(SystemExit, match="need 0 < limit < second"):
        grids.main(["--limit", "2", "--second-limit", "1"])


def test_the_tree_importer_finds_the_trees_own_packages(tmp_path: Path) -> None:
    (tmp_path / "search").mkdir()
    (tmp_path / "search" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools.package-dir]\n"boaf.search" = "search"\n', encoding="utf-8"
    )
    importer = grid_worker.TreeImporter(tmp_path)
    spec = importer.find_spec("boaf.search")
    assert spec is not None and spec.origin == str(tmp_path.resolve() / "search" / "__init__.py")
    assert importer.find_spec("numpy") is None


def test_answers_are_cross_checked_and_hard_unsolvables_confirmed_without_a_limit() -> None:
    """Five states: agreed, easy unsolvable, hard unsolvable (confirmed), REF unknown (unconfirmed), differing."""
    states = grids.random_grid_states(3, 5, 4, 4)
    solvable, unsolvable, unknown = str(search.SOLVABLE), str(search.UNSOLVABLE), str(search.UNKNOWN)
    hard = grid_checks.CONFIRM_NODES + 1

    def timing(status: str, nodes: int) -> grids.Timing:
        return grids.Timing(grids.Run(status, nodes, 1.0, 1.0))

    this = [timing(s, 10) for s in (solvable, unsolvable, unsolvable, unsolvable, solvable)]
    ref = [timing(solvable, 10), timing(unsolvable, 10), timing(unsolvable, hard), timing(unknown, hard)]
    ref.append(timing(unsolvable, 10))
    asked: list[tuple[int, float | None]] = []

    def solve_ref(state: State, limit_s: float | None) -> grids.Run:
        i = texts(states).index(format_grid(state))
        asked.append((i, limit_s))
        return grids.Run(unsolvable if i == 2 else unknown, hard, 5.0, limit_s, None if i == 2 else search.MEMORY)

    checked = grid_checks.cross_check(states, this, ref, solve_ref)
    assert asked == [(2, None), (3, None)]  # only the hard ones, without a limit
    assert checked.decided_by_both == 4
    assert [d["state"] for d in checked.disagreements] == [4]
    assert checked.confirmed == 1 and [u["state"] for u in checked.unconfirmed] == [3]
    assert not checked.passed
    line = checked.line("4x4", "random", "main")
    assert "FAILED" in line and "1 answers differ" in line and "1 of 2 unsolvable answers" in line


def test_a_real_unsolvable_is_confirmed_by_the_solver_without_a_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grid_checks, "CONFIRM_NODES", -1)  # every unsolvable answer is confirmed
    states = grids.random_grid_states(9, 60, 3, 3)
    timings = [grids.Timing(grids.solve_here(s, 1.0)) for s in states]
    unsolvable = sum(t.last.status == str(search.UNSOLVABLE) for t in timings)
    assert unsolvable > 0
    checked = grid_checks.cross_check(states, timings, timings, grids.solve_here)
    assert checked.passed and checked.confirmed == unsolvable and checked.decided_by_both == len(states)
