"""The ONNX classifier: export, parity with LightGBM, and the loader's schema check."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from boaf.features import SCHEMA_VERSION, feature_names
from boaf.game import random_states
from boaf.models.classifier import CARD_FILE, CLASSIFIER_FILE, load_classifier
from boaf.models.errors import ModelError
from boaf.models.exact_path import ExactBudget, write_exact_budget
from boaf.models.inputs import input_names, model_inputs
from boaf.models.onnx_export import Parity, export_onnx, parity
from boaf.models.training import PAPER_PARAMS, Labelled, fit


def _model_dir(
    tmp_path: Path,
    schema: str = SCHEMA_VERSION,
    rows: int = 3000,
    probe_nodes: int = 64,
    *,
    children: bool = False,
    child_meta: str | None = None,
    exact: ExactBudget | None = None,
    exact_meta: str | None = None,
) -> tuple[Path, object, np.ndarray]:
    # Labels here are a made-up function of the inputs: the point is the export, not the accuracy.
    states = random_states(11, rows) if exact is None else random_states(11, rows, rows=4, cols=13)
    matrix = model_inputs(states, probe_nodes, children=children, exact=exact)
    label = (matrix[:, feature_names().index("is_connected")] > 0).astype(np.int8)
    if exact is not None:  # a label the exact path's columns decide, so the model reads them
        label = (matrix[:, input_names(probe_nodes, exact=True).index("exact_fewest_stacks")] < 0.4).astype(np.int8)
        write_exact_budget(tmp_path, exact)
    model = fit(PAPER_PARAMS, Labelled(matrix, label, np.zeros(rows, dtype=np.int8)))
    meta = {"model_version": "test-1", "feature_schema": schema, "probe_nodes": str(probe_nodes), "threshold": "0.5"}
    if child_meta is not None:
        meta["child_features"] = child_meta
    if exact_meta is not None:
        meta["exact_columns"] = exact_meta
    export_onnx(model, tmp_path / CLASSIFIER_FILE, meta)
    (tmp_path / CARD_FILE).write_text(json.dumps({"model_version": "test-1"}), encoding="utf-8")
    return tmp_path, model, matrix


def test_onnx_agrees_with_lightgbm_on_10000_states(tmp_path: Path) -> None:
    model_dir, model, _ = _model_dir(tmp_path)
    matrix = model_inputs(random_states(12, 10_000), probe_nodes=64)
    check = parity(model, model_dir / CLASSIFIER_FILE, matrix)  # type: ignore[arg-type]
    assert check.rows == 10_000
    assert check.label_agreement >= 0.9999
    assert check.max_abs_dp <= 1e-4
    assert check.passes()


@pytest.mark.parametrize(
    ("agreement", "max_dp", "passes"),
    [(1.0, 0.0, True), (0.9999, 1e-4, True), (0.9998, 0.0, False), (1.0, 2e-4, False)],
)
def test_the_parity_bar(agreement: float, max_dp: float, passes: bool) -> None:
    assert Parity(rows=10, label_agreement=agreement, max_abs_dp=max_dp).passes() is passes


def test_loaded_classifier_predicts_states(tmp_path: Path) -> None:
    model_dir, _, _ = _model_dir(tmp_path)
    classifier = load_classifier(model_dir)
    assert (classifier.version, classifier.schema_version, classifier.threshold) == ("test-1", SCHEMA_VERSION, 0.5)
    assert classifier.probe_nodes == 64
    p = classifier.predict(random_states(3, 50))
    assert p.shape == (50,) and np.all((p >= 0) & (p <= 1))
    assert classifier.predict([]).shape == (0,)


def test_a_model_reading_the_states_one_move_down_computes_them_itself(tmp_path: Path) -> None:
    model_dir, model, _ = _model_dir(tmp_path, rows=500, children=True, child_meta="1")
    classifier = load_classifier(model_dir)
    assert classifier.child_features and classifier.session.n_features == len(input_names(64, children=True))
    batch = [*random_states(3, 30), *random_states(4, 10, rows=4, cols=13)]
    expected = np.asarray(model.predict_proba(model_inputs(batch, 64, children=True)))[:, 1]  # type: ignore[attr-defined]
    np.testing.assert_allclose(classifier.predict(batch), expected, atol=1e-4)


@pytest.mark.parametrize(
    ("children", "meta", "match"),
    [
        (False, "1", r"takes 45 inputs; .* child_features 1, exact_columns 0\) gives 142"),  # claims them, lacks them
        (True, None, r"takes 142 inputs; .* child_features 0, exact_columns 0\) gives 45"),  # reads them, unsaid
        (True, "2", r"child_features metadata 2 is neither 0 nor 1"),
    ],
)
def test_the_loader_holds_the_child_features_flag_to_the_models_width(
    tmp_path: Path, children: bool, meta: str | None, match: str
) -> None:
    model_dir, _, _ = _model_dir(tmp_path, rows=300, children=children, child_meta=meta)
    with pytest.raises(ModelError, match=match):
        load_classifier(model_dir)


def test_a_model_reading_the_exact_paths_search_gets_the_figures_classify_found(tmp_path: Path) -> None:
    """Classify hands the model its own exact search's figures; ``Classifier.inputs`` searches again and finds
    the same, so the model serves what it was trained on."""
    model_dir, model, _ = _model_dir(tmp_path, rows=400, exact=ExactBudget(150), exact_meta="1")
    classifier = load_classifier(model_dir)
    assert classifier.exact_columns and classifier.exact.max_nodes == 150
    batch = [*random_states(5, 80, rows=4, cols=13), *random_states(6, 20)]
    answers = classifier.classify(batch)
    still_open = np.flatnonzero(~answers.exact)
    assert still_open.size >= 20
    inputs = classifier.inputs([batch[i] for i in still_open])
    memo = input_names(64, exact=True).index("exact_memo")
    assert np.all(inputs[:, memo] > 0)
    expected = np.asarray(model.predict_proba(inputs))[:, 1]  # type: ignore[attr-defined]
    np.testing.assert_allclose(answers.p_solvable[still_open], expected, atol=1e-4)
    assert len(np.unique(np.round(expected, 3))) > 1


@pytest.mark.parametrize(
    ("exact", "meta", "match"),
    [
        (None, "1", r"takes 45 inputs; .* exact_columns 1\) gives 52"),
        (ExactBudget(100), None, r"takes 52 inputs; .* exact_columns 0\) gives 45"),
        (ExactBudget(100), "3", r"exact_columns metadata 3 is neither 0 nor 1"),
    ],
)
def test_the_loader_holds_the_exact_columns_flag_to_the_models_width(
    tmp_path: Path, exact: ExactBudget | None, meta: str | None, match: str
) -> None:
    model_dir, _, _ = _model_dir(tmp_path, rows=200, exact=exact, exact_meta=meta)
    with pytest.raises(ModelError, match=match):
        load_classifier(model_dir)


def test_loader_refuses_a_model_of_another_feature_schema(tmp_path: Path) -> None:
    model_dir, _, _ = _model_dir(tmp_path, schema="boaf-features-0")
    with pytest.raises(ModelError, match=r"trained on feature schema 'boaf-features-0', but this build computes"):
        load_classifier(model_dir)


def test_loader_names_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"model file .*classifier\.onnx is missing"):
        load_classifier(tmp_path)


def test_loader_refuses_a_corrupt_model(tmp_path: Path) -> None:
    (tmp_path / CLASSIFIER_FILE).write_bytes(b"not an onnx file")
    (tmp_path / CARD_FILE).write_text("{}", encoding="utf-8")
    with pytest.raises(ModelError, match="onnxruntime cannot load the model"):
        load_classifier(tmp_path)
