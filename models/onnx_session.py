"""The ONNX classifier graph's names, and an onnxruntime session on it.

Both the served classifier (``boaf.models.classifier``) and the export's parity check
(``boaf.models.onnx_export``) run a classifier file through this session.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from boaf.models.errors import ModelError

INPUT_NAME = "features"
LABEL_OUTPUT = "label"
PROBABILITY_OUTPUT = "probabilities"


class OnnxSession:
    """An onnxruntime session on a classifier file: float matrix in, P(solvable) out."""

    def __init__(self, path: Path, threads: int = 1) -> None:
        import onnxruntime as ort  # local for start-up time: commands that never classify skip loading it

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        try:
            self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own unrelated exception types
            raise ModelError(f"{path}: onnxruntime cannot load the model: {exc}") from exc
        meta = self._session.get_modelmeta()
        self.metadata: dict[str, str] = dict(meta.custom_metadata_map)
        inputs = self._session.get_inputs()
        if len(inputs) != 1 or inputs[0].name != INPUT_NAME:
            raise ModelError(f"{path}: expected one input named {INPUT_NAME!r}")
        self.n_features = int(inputs[0].shape[1])

    def p_solvable(self, matrix: np.ndarray) -> np.ndarray:
        """P(solvable) for each row of an (N, n_features) matrix, as float64."""
        if matrix.shape[0] == 0:
            return np.empty(0, dtype=np.float64)
        features = np.ascontiguousarray(matrix, dtype=np.float32)
        (probabilities,) = self._session.run([PROBABILITY_OUTPUT], {INPUT_NAME: features})
        return np.asarray(probabilities[:, 1], dtype=np.float64)
