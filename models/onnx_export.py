"""Export a trained LightGBM classifier to ONNX and check that the two agree.

The served model is always the ONNX file run by onnxruntime; LightGBM only trains.
ONNX tree ensembles compare in float32, so models are trained on float32-rounded
features (see ``boaf.models.training``) and every export is checked for parity.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # importing lightgbm costs seconds; the served classifier never needs it
    import lightgbm as lgb
    import onnx

from boaf.models.errors import ModelError
from boaf.models.onnx_session import INPUT_NAME, LABEL_OUTPUT, OnnxSession


def export_onnx(model: lgb.LGBMClassifier, path: Path, metadata: Mapping[str, str]) -> Path:
    """Write ``model`` as ONNX (``zipmap=False``) with ``metadata`` in the model's properties.

    The graph takes ``features`` (float32, N × n_features) and returns ``label``
    (int64, N) and ``probabilities`` (float32, N × 2).
    """
    # Local for start-up time: the converter pulls in onnx and onnxmltools, which serving never needs.
    from onnxmltools import convert_lightgbm
    from onnxmltools.convert.common.data_types import FloatTensorType

    n_features = int(model.n_features_in_)
    try:
        graph = convert_lightgbm(model, initial_types=[(INPUT_NAME, FloatTensorType([None, n_features]))], zipmap=False)
    except Exception as exc:  # the converter raises bare RuntimeErrors and the like
        raise ModelError(f"onnxmltools could not convert the LightGBM model: {exc}") from exc
    _declare_batch_label_shape(graph)
    for key, value in metadata.items():
        entry = graph.metadata_props.add()
        entry.key, entry.value = key, value
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(graph.SerializeToString())
    return path


#: The parity bar an exported model must clear to be installed.
MIN_LABEL_AGREEMENT = 0.9999
MAX_ABS_DP = 1e-4


@dataclass(frozen=True)
class Parity:
    """How far the ONNX model is from LightGBM on the same rows."""

    rows: int
    label_agreement: float
    max_abs_dp: float

    def passes(self) -> bool:
        """True when labels agree on at least 99.99% of rows and max |Δp| is at most 1e-4."""
        return self.label_agreement >= MIN_LABEL_AGREEMENT and self.max_abs_dp <= MAX_ABS_DP


def parity(model: lgb.LGBMClassifier, onnx_path: Path, matrix: np.ndarray, threshold: float = 0.5) -> Parity:
    """Compare LightGBM and the exported ONNX model (through onnxruntime) on ``matrix``."""
    session = OnnxSession(onnx_path)
    expected = np.asarray(model.predict_proba(matrix.astype(np.float32)))[:, 1]
    got = session.p_solvable(matrix)
    agree = float(np.mean((expected >= threshold) == (got >= threshold))) if len(got) else 1.0
    worst = float(np.max(np.abs(expected - got))) if len(got) else 0.0
    return Parity(rows=len(got), label_agreement=agree, max_abs_dp=worst)


def _declare_batch_label_shape(graph: onnx.ModelProto) -> None:
    # The converter declares the label output as shape [1]; it is really one per row.
    for output in graph.graph.output:
        if output.name == LABEL_OUTPUT:
            shape = output.type.tensor_type.shape
            shape.ClearField("dim")
            shape.dim.add().dim_param = "N"
