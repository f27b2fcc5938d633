"""The ordering artifact: the committed one is the search's default, and a written one reads back."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from boaf import search
from boaf.features import feature_matrix
from boaf.game import random_states
from boaf.models import registry
from boaf.models.ordering import ORDERING_FILE, OrderingFit, subset_h_columns, write_ordering
from boaf.search.ordering import subset_h


def test_the_committed_artifact_is_the_search_default() -> None:
    committed = search.read_ordering(registry.resolve() / ORDERING_FILE)
    assert committed == search.default_ordering() == search.ordering.DEFAULT_ORDERING


def test_a_written_artifact_reads_back(tmp_path: Path) -> None:
    fit = OrderingFit(coefficients=(0.5, -0.1, 0.2, 0.3), rmse=0.4, rows=100)
    path = write_ordering(tmp_path / ORDERING_FILE, fit, 9, None, provenance={"feature_schema": "test"})
    assert search.read_ordering(path) == search.OrderingModel(0.5, (-0.1, 0.2, 0.3), 9)
    assert json.loads(path.read_text())["rmse"] == 0.4
    assert [p.name for p in tmp_path.iterdir()] == [ORDERING_FILE]


def test_the_subset_h_columns_of_a_feature_matrix_are_what_the_search_sorts_by() -> None:
    states = random_states(3, 40)
    columns = subset_h_columns(feature_matrix(states))
    assert columns.shape == (40, 3)
    assert np.array_equal(columns, [subset_h(s.top_cards()) for s in states])
