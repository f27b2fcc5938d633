"""What a state looks like as numbers: the compatibility-graph feature vector.

The public API:

- ``SCHEMA_VERSION`` and ``feature_names()``: the versioned, ordered feature list;
- ``state_features(state)``: the plain reference for one state (name -> value);
- ``feature_matrix(states_or_array)`` / ``feature_table(...)`` / ``compute_features(...)``:
  the compiled batch path, equal to the reference;
- ``kahn_class``, ``three_heuristic``, ``sieve``: Kahn's unsolvability classes and sieve.
"""

from typing import TYPE_CHECKING, Any

from boaf.features.batch import FeatureBatch, compute_features, feature_matrix, feature_table, schema_metadata
from boaf.features.kahn import (
    DealClass,
    SieveResult,
    classify_states,
    kahn_class,
    looks_like_ffud,
    sieve,
    three_heuristic,
)
from boaf.features.schema import BIG_INTEGER_FEATURES, INTEGER_FEATURES, SCHEMA_VERSION, feature_names

if TYPE_CHECKING:
    from boaf.features.reference import state_feature_vector, state_features


def __getattr__(name: str) -> Any:
    # The plain reference needs igraph (which imports matplotlib when present: ~0.6 s); for start-up time
    # it loads on first use, so `boaf solve` and the service's batch path never pay for it.
    if name in ("state_feature_vector", "state_features"):
        from boaf.features import reference

        return getattr(reference, name)
    raise AttributeError(f"module 'boaf.features' has no attribute {name!r}")


__all__ = [
    "BIG_INTEGER_FEATURES",
    "INTEGER_FEATURES",
    "SCHEMA_VERSION",
    "DealClass",
    "FeatureBatch",
    "SieveResult",
    "classify_states",
    "compute_features",
    "feature_matrix",
    "feature_names",
    "feature_table",
    "kahn_class",
    "looks_like_ffud",
    "schema_metadata",
    "sieve",
    "state_feature_vector",
    "state_features",
    "three_heuristic",
]
