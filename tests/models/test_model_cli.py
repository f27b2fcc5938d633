"""The model commands, run as a real process: classify, dataset generate, train, tune-cutoff."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_runner import boaf

from boaf.game import parse_grid
from boaf.models.classifier import load_classifier

GRIDS = ["5S JC QH 8H/KC 6H 3H 9H/3S JS TH TS/KS 7D AH 5C", "2S 3S/-- 4S", "AS KD/-- --"]


def test_classify_one_grid_as_json_matches_the_committed_model() -> None:
    result = boaf("classify", GRIDS[0], "--json")
    assert result.returncode == 0, result.stderr
    row = json.loads(result.stdout)
    classifier = load_classifier()
    assert row["model_version"] == classifier.version
    answer = classifier.classify([parse_grid(GRIDS[0])])
    assert row["p_solvable"] == pytest.approx(float(answer.p_solvable[0]))
    assert (row["exact"], row["nodes"]) == (bool(answer.exact[0]), int(answer.nodes[0]))
    assert row["solvable"] == (row["p_solvable"] >= classifier.threshold)


def test_classify_a_file_writes_one_line_per_state_in_order(tmp_path: Path) -> None:
    source, target = tmp_path / "in.txt", tmp_path / "out.jsonl"
    source.write_text("\n".join(GRIDS) + "\n", encoding="utf-8")
    result = boaf("classify", "--input", str(source), "--output", str(target))
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    expected = load_classifier().classify([parse_grid(g) for g in GRIDS])
    assert np.allclose([r["p_solvable"] for r in rows], expected.p_solvable)
    assert [r["exact"] for r in rows] == expected.exact.tolist()
    # "AS KD" can never merge: the exact path settles it.
    assert rows[2] | {"model_version": ""} == {
        "p_solvable": 0.0,
        "solvable": False,
        "exact": True,
        "nodes": 0,
        "model_version": "",
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("classify", "5S 5S"), "boaf: duplicate card 5S at row 1, column 2 (first at row 1, column 1)\n"),
        (("classify",), "boaf: give exactly one of GRID or --input FILE\n"),
    ],
)
def test_classify_bad_input_exits_2_with_one_line(args: tuple[str, ...], message: str) -> None:
    result = boaf(*args)
    assert (result.returncode, result.stderr) == (2, message)


def test_generate_train_and_tune_cutoff_make_a_loadable_model(tmp_path: Path) -> None:
    data = tmp_path / "random"
    generated = boaf("dataset", "generate", "--generator", "random", "--count", "1500", "--out", str(data))
    assert generated.returncode == 0, generated.stderr
    assert json.loads(generated.stdout)["rows"] == 1500

    model = tmp_path / "model"
    trained = boaf("train", "--data", str(data), "--out", str(model), "--paper")
    assert trained.returncode == 0, trained.stderr
    assert json.loads(trained.stdout)["parity"]["label_agreement"] >= 0.9999

    tuned = boaf("tune-cutoff", "--model", str(model), "--states", "300")
    assert tuned.returncode == 0, tuned.stderr
    assert 2 <= json.loads(tuned.stdout)["cutoff"] <= 16
    assert (model / "ordering.json").is_file() and (model / "plots" / "cutoff_sweep.png").is_file()
    assert load_classifier(model).predict([parse_grid(GRIDS[0])]).shape == (1,)
