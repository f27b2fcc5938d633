"""Per-grid exact-path budgets: stored, read (old files too), used by Classify, and chosen grid by grid."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from boaf.game import deal, random_states
from boaf.models import budget
from boaf.models.classifier import CARD_FILE, load_classifier
from boaf.models.errors import ModelError
from boaf.models.exact_path import EXACT_FILE, ExactBudget, read_exact_budget, write_exact_budget
from boaf.models.registry import default_root
from boaf.search import solve_many

SMALL, BIG = 300, 37  # 4x4's budget and 4x13's, both unlike the committed model's


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The committed model with an exact path of ``SMALL`` nodes, and ``BIG`` on 4x13."""
    directory = tmp_path_factory.mktemp("model") / "v1"
    shutil.copytree(default_root(), directory)
    write_exact_budget(directory, ExactBudget(SMALL, by_grid={"4x13": BIG}))
    return directory


@pytest.fixture
def any_latency(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every budget meets every grid's targets: the tests below are about what is chosen and written, never timing."""
    monkeypatch.setattr(
        budget, "TARGETS", {g: budget.LatencyTarget(float("inf"), float("inf")) for g in budget.TARGETS}
    )


def test_per_grid_budgets_round_trip_and_every_other_grid_falls_back(tmp_path: Path) -> None:
    written = ExactBudget(1500, "ordered", {"grids": {}}, {"4x13": 400, "6x6": 0})
    write_exact_budget(tmp_path, written)
    read = read_exact_budget(tmp_path)
    assert read == written and read.by_grid == {"4x13": 400, "6x6": 0}
    assert json.loads((tmp_path / EXACT_FILE).read_text())["by_grid"] == {"4x13": 400, "6x6": 0}
    assert [read.nodes_for(r, c) for r, c in [(4, 13), (6, 6), (4, 4), (5, 5), (13, 4)]] == [400, 0, 1500, 1500, 1500]


def test_a_file_from_before_per_grid_budgets_gives_every_grid_its_one_budget(tmp_path: Path) -> None:
    old = {"max_nodes": 1500, "algorithm": "ordered", "measured": {"targets": {}, "costs": []}}
    (tmp_path / EXACT_FILE).write_text(json.dumps(old), encoding="utf-8")
    read = read_exact_budget(tmp_path)
    assert read == ExactBudget(1500) and read.by_grid == {}
    assert read.nodes_for(4, 13) == read.nodes_for(4, 4) == 1500


@pytest.mark.parametrize(
    ("by_grid", "match"),
    [
        ({"4x13": -1}, r"exact_path\.json: by_grid\['4x13'\] must be 0 or more, got -1"),
        ({"4x13": "many"}, r"exact_path\.json: not an exact path"),
        ([400], r"exact_path\.json: not an exact path"),
        ({"4-13": 400}, r"exact_path\.json: by_grid key '4-13' is not a grid"),
        ({"0x13": 400}, r"exact_path\.json: by_grid key '0x13' is not a grid"),
    ],
)
def test_a_malformed_per_grid_budget_is_refused_naming_the_file(tmp_path: Path, by_grid: object, match: str) -> None:
    text = json.dumps({"max_nodes": 1500, "algorithm": "ordered", "by_grid": by_grid})
    (tmp_path / EXACT_FILE).write_text(text, encoding="utf-8")
    with pytest.raises(ModelError, match=match):
        read_exact_budget(tmp_path)


def test_each_state_gets_its_grids_budget(model_dir: Path) -> None:
    classifier = load_classifier(model_dir)
    big, small = random_states(5, 40, rows=4, cols=13), random_states(5, 40)
    answers = classifier.classify([*big, *small])
    np.testing.assert_array_equal(answers.nodes[:40], solve_many(big, max_nodes=BIG).nodes)
    np.testing.assert_array_equal(answers.nodes[40:], solve_many(small, max_nodes=SMALL).nodes)
    assert answers.nodes[:40].max() == BIG and answers.nodes[40:].max() > BIG  # each budget was reached


def test_choose_grid_budgets_holds_each_grid_to_its_own_targets() -> None:
    small, big = budget.TARGETS["4x4"], budget.TARGETS["4x13"]

    def cost(grid: str, max_nodes: int, single_p99_ms: float) -> budget.BudgetCost:
        return budget.BudgetCost(max_nodes, f"random {grid}", 1.0, 1.0, 0.0, 0.0, 0.0, single_p99_ms, grid)

    # 3 ms is over 4x4's bar (0.8 * 2 ms) but within 4x13's (0.8 * 5 ms).
    assert budget.HEADROOM * small.single_p99_ms < 3.0 < budget.HEADROOM * big.single_p99_ms
    costs = [cost("4x4", 500, 1.0), cost("4x4", 1000, 3.0), cost("4x13", 500, 1.0), cost("4x13", 1000, 3.0)]
    assert budget.choose_grid_budgets(costs) == {"4x4": 500, "4x13": 1000}
    with pytest.raises(ModelError, match=r"^4x13: no budget of \[500\] meets the latency targets"):
        budget.choose_grid_budgets([cost("4x4", 500, 1.0), cost("4x13", 500, 9.0)])
    with pytest.raises(ModelError, match=r"^no latency targets for grid 9x9; grids with targets: 4x4, "):
        budget.choose_grid_budgets([cost("9x9", 500, 1.0)])


def test_the_batch_target_of_a_bigger_grid_is_4x4s_per_card() -> None:
    per_card = budget.TARGETS["4x4"].batch_ms / 16
    assert budget.TARGETS["4x13"] == budget.LatencyTarget(pytest.approx(per_card * 52), 5.0)
    assert {g: t.single_p99_ms for g, t in budget.TARGETS.items()} == {"4x4": 2.0, "5x5": 5.0, "6x6": 5.0, "4x13": 5.0}


def test_a_bigger_grids_tuning_set_is_its_own_grid_with_k_from_a_third_and_unlabelled_states_kept() -> None:
    labelled = budget.grid_tuning_set("4x13", 30)
    assert labelled.grid == "4x13" and labelled.name == "random 4x13"
    assert all(18 <= s.n_stacks <= 52 for s in labelled.states)
    again = budget.grid_tuning_set("4x13", 30)
    assert [s.cells for s in again.states] == [s.cells for s in labelled.states]
    assert labelled.known is not None and labelled.known.shape == (30,)
    assert set(budget.GRID_SEEDS.values()).isdisjoint({budget.TUNING_RANDOM_SEED, budget.TUNING_DECISIONS_SEED})


def _tiny_sets() -> list[budget.LabelledStates]:
    small = random_states(7, 60)
    big = random_states(8, 20, rows=4, cols=13)
    known = np.ones(20, dtype=bool)
    known[0] = False  # a state the labelling search left open: timed, not scored
    return [
        budget.LabelledStates("random", small, np.array([s.n_stacks < 12 for s in small])),
        budget.LabelledStates("random 4x13", big, np.ones(20, dtype=bool), known),
    ]


def test_tune_budget_measures_and_writes_every_grid_it_sets(tmp_path: Path, any_latency: None) -> None:
    directory = tmp_path / "v1"
    shutil.copytree(default_root(), directory)
    lines: list[str] = []
    committed = read_exact_budget(directory)
    entry = budget.tune_budget(directory, _tiny_sets(), (20, 40), singles=5, log=lines.append)
    written = read_exact_budget(directory)
    assert (written.max_nodes, written.by_grid) == (40, {**committed.by_grid, "4x13": 40})
    assert set(written.measured["grids"]) == {"4x4", "4x13"} | set(committed.by_grid)
    for grid, names in [("4x4", {"random"}), ("4x13", {"random 4x13"})]:
        record = written.measured["grids"][grid]
        assert record["max_nodes"] == 40 and {c["name"] for c in record["costs"]} == names
        assert all(c["grid"] == grid and c["max_nodes"] == 40 for c in record["costs"])
        assert set(entry["grids"][grid]) == {"max_nodes", "targets", "costs", "at_budget", "sweep"}
        assert {c["max_nodes"] for c in entry["grids"][grid]["sweep"]} == {20, 40}
    assert entry["grids"]["4x13"]["at_budget"]["random 4x13"]["rows_scored"] == 19
    card = json.loads((directory / CARD_FILE).read_text())["exact_path"]
    assert (card["max_nodes"], card["by_grid"]) == (40, written.by_grid)
    assert (directory / "plots" / "budget_sweep.png").is_file()
    assert (directory / "plots" / "budget_sweep_4x13.png").is_file()
    chosen = [line.split(" (")[0] for line in lines if line.startswith("chosen budget for ")]
    assert chosen == ["chosen budget for 4x4: 40 nodes", "chosen budget for 4x13: 40 nodes"]


def test_tuning_one_grid_keeps_the_others_budgets_and_records(tmp_path: Path, any_latency: None) -> None:
    directory = tmp_path / "v1"
    shutil.copytree(default_root(), directory)
    committed = read_exact_budget(directory)
    assert {"4x4", "5x5", "6x6", "4x13"} <= set(committed.measured["grids"])  # the committed model's own tuning
    budget.tune_budget(directory, _tiny_sets()[1:], (25,), singles=5, log=lambda _: None)
    written = read_exact_budget(directory)
    assert (written.max_nodes, written.by_grid) == (committed.max_nodes, {**committed.by_grid, "4x13": 25})
    for grid in ("4x4", "5x5", "6x6"):
        assert written.measured["grids"][grid] == committed.measured["grids"][grid]
    card = json.loads((directory / CARD_FILE).read_text())["exact_path"]
    assert card["grids"]["4x4"]["max_nodes"] == committed.max_nodes and card["grids"]["4x4"]["sweep"]
    assert card["grids"]["5x5"]["max_nodes"] == committed.by_grid["5x5"] and card["grids"]["5x5"]["sweep"]
    assert card["grids"]["4x13"]["max_nodes"] == 25
    assert written.deal_nodes == card["deal_nodes"] == committed.deal_nodes > 0  # kept when not asked to change


def test_tuning_a_model_from_before_grid_budgets_keeps_its_record_as_the_4x4_grids(
    tmp_path: Path, any_latency: None
) -> None:
    # exact_path.json and the card's entry as a model tuned before grids had budgets wrote them: 4x4's alone.
    directory = tmp_path / "v1"
    shutil.copytree(default_root(), directory)
    costs = [{"max_nodes": 1500, "name": "random", "accuracy": 0.99, "exact_share": 0.98, "batch_ms": 0.05}]
    targets = {"batch_ms": 0.3, "single_p99_ms": 2.0, "headroom": 0.8}
    old = {"max_nodes": 1500, "algorithm": "ordered", "measured": {"targets": targets, "costs": costs}}
    (directory / EXACT_FILE).write_text(json.dumps(old), encoding="utf-8")
    card = json.loads((directory / CARD_FILE).read_text())
    sweep = [{**costs[0], "max_nodes": n} for n in (1000, 1500)]
    card["exact_path"] = {"max_nodes": 1500, "algorithm": "ordered", "targets": targets, "costs": costs, "sweep": sweep}
    (directory / CARD_FILE).write_text(json.dumps(card), encoding="utf-8")
    budget.tune_budget(directory, _tiny_sets()[1:], (25,), singles=5, log=lambda _: None)
    written = read_exact_budget(directory)
    assert (written.max_nodes, written.by_grid, written.deal_nodes) == (1500, {"4x13": 25}, 0)
    assert written.measured["grids"]["4x4"] == {"max_nodes": 1500, "targets": targets, "costs": costs}
    entry = json.loads((directory / CARD_FILE).read_text())["exact_path"]
    assert entry["grids"]["4x4"] == {"max_nodes": 1500, "targets": targets, "costs": costs, "sweep": sweep}
    assert entry["grids"]["4x13"]["max_nodes"] == 25


def test_tune_budget_sets_the_second_search_of_ffud_like_deals_and_measures_with_it(
    tmp_path: Path, any_latency: None
) -> None:
    directory = tmp_path / "v1"
    shutil.copytree(default_root(), directory)
    deals = [deal(seed) for seed in (12226, 38711, 45088, 1, 2, 3)]  # three FFUDs the first search leaves open
    sets = [budget.LabelledStates("random", deals, np.array([False, False, False, True, True, True]))]
    for deal_nodes, exact_share in [(0, 0.5), (8192, 1.0)]:
        entry = budget.tune_budget(directory, sets, (1500,), singles=5, log=lambda _: None, deal_nodes=deal_nodes)
        assert read_exact_budget(directory).deal_nodes == entry["deal_nodes"] == deal_nodes
        assert entry["grids"]["4x4"]["at_budget"]["random"]["exact_share"] == exact_share


def test_tune_budget_refuses_a_grid_without_targets_before_measuring(tmp_path: Path) -> None:
    sets = [budget.LabelledStates("random 3x5", random_states(1, 5, rows=3, cols=5), np.ones(5, dtype=bool))]
    with pytest.raises(ModelError, match=r"^no latency targets for grid 3x5"):
        budget.tune_budget(tmp_path, sets, (10,), singles=5, log=lambda _: None)
