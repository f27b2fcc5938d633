"""Protobuf messages to domain values and back: the only module that touches both.

Readers validate as they convert and raise ``game.errors.InvalidState`` (and
friends) whose message starts with where the bad value is in the request, e.g.
``states[3]: duplicate card 5S at row 2, column 2 (first at row 1, column 1)``.
No protobuf type goes past this module into ``game``, ``search``, ``features``
or ``models``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from google.protobuf import struct_pb2

from game.arrays import EMPTY
from game.cards import DECK_SIZE, Card, card_text
from game.errors import BoafError, InvalidState
from game.notation import state_from_json
from game.state import MAX_CELLS, State
from service.dataplane import Batch, StateArray
from service.generated.boaf.v1 import boaf_pb2 as pb

ALGORITHMS: dict[pb.Algorithm, str] = {
    pb.ORDERED: "ordered",
    pb.COMPATIBLE: "compatible",
    pb.CONSTRAINED: "constrained",
    pb.BEST_N: "best-n",
}
DEFAULT_ALGORITHM = pb.ORDERED
SOLVE_STATUSES: dict[str, pb.SolveStatus] = {
    "solvable": pb.SOLVABLE,
    "unsolvable": pb.UNSOLVABLE,
    "unknown": pb.UNKNOWN,
}


def _card_spellings() -> dict[str, Card | None]:
    # Every spelling parse_card accepts without surrounding spaces, so the common
    # case is one dict lookup per cell; anything else takes the slow, precise path.
    spellings: dict[str, Card | None] = {"": None}  # "" is the empty cell
    for card in range(DECK_SIZE):
        text = card_text(card)
        ranks = [text[0], text[0].lower()] + (["10"] if text[0] == "T" else [])
        for rank in ranks:
            for suit in (text[1], text[1].lower()):
                spellings[rank + suit] = card
    return spellings


_CARDS = _card_spellings()
_CODES = {text: EMPTY if card is None else card for text, card in _CARDS.items()}


def state_from_proto(message: pb.State, where: str) -> State:
    """The ``State`` a message describes; errors are prefixed with ``where`` (e.g. ``states[3]``)."""
    try:
        return _read_state(message)
    except BoafError as exc:
        raise type(exc)(f"{where}: {exc}") from exc


def states_from_proto(messages: Sequence[pb.State]) -> Batch:
    """States of a batch, in order; an error names the state as ``states[i]``.

    A batch of plain states on one grid (the common case) becomes a ``StateArray``
    in a few vectorised steps; anything else, including every invalid batch, is
    read state by state, which gives the precise error.
    """
    return _state_array(messages) or [state_from_proto(m, f"states[{i}]") for i, m in enumerate(messages)]


def _state_array(messages: Sequence[pb.State]) -> StateArray | None:
    # None means "not the fast case": the slow path then accepts it or says exactly what is wrong.
    if not messages:
        return None
    rows, cols = messages[0].rows, messages[0].cols
    n_cells = rows * cols
    if not (rows >= 1 and cols >= 1 and n_cells <= MAX_CELLS):
        return None
    texts: list[str] = []
    for message in messages:
        if message.rows != rows or message.cols != cols or message.sizes or len(message.cells) != n_cells:
            return None
        texts.extend(message.cells)
    try:
        cells = np.array([_CODES[t] for t in texts], dtype=np.int8).reshape(len(messages), n_cells)
    except KeyError:
        return None
    ordered = np.sort(cells, axis=1)
    if np.any(ordered[:, -1] < 0) or np.any((ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] >= 0)):
        return None  # a state with no stacks, or a duplicate card
    return StateArray(cells, rows, cols)


def _read_state(message: pb.State) -> State:
    texts = list(message.cells)
    try:
        cells = [_CARDS[t] for t in texts]
    except KeyError:
        return state_from_json(_as_json(message))
    sizes = list(message.sizes) or None
    if message.rows < 1 or message.cols < 1:
        raise InvalidState(f"rows and cols must be positive integers, got {message.rows} and {message.cols}")
    return State.from_cells(message.rows, message.cols, cells, sizes)


def _as_json(message: pb.State) -> dict[str, Any]:
    data: dict[str, Any] = {"rows": message.rows, "cols": message.cols, "cells": list(message.cells)}
    if message.sizes:
        data["sizes"] = list(message.sizes)
    return data


def state_to_proto(state: State) -> pb.State:
    """The message of ``state``; ``sizes`` only when some stack is taller than 1."""
    cells = ["" if c is None else card_text(c) for c in state.cells]
    sizes = list(state.sizes) if any(s > 1 for s in state.sizes) else []
    return pb.State(rows=state.rows, cols=state.cols, cells=cells, sizes=sizes)


def algorithm_from_proto(value: int) -> str:
    """The ``search`` algorithm name of an ``Algorithm`` value; UNSPECIFIED is the default (ordered)."""
    if value == pb.ALGORITHM_UNSPECIFIED:
        return ALGORITHMS[DEFAULT_ALGORITHM]
    # proto3 enums are open: an unknown number arrives as itself.
    for algorithm, name in ALGORITHMS.items():
        if algorithm == value:
            return name
    known = ", ".join(pb.Algorithm.Name(a) for a in ALGORITHMS)
    raise InvalidState(f"algorithm: {value} is not one of {known}")


def algorithm_to_proto(name: str) -> pb.Algorithm:
    """The ``Algorithm`` value of a ``search`` algorithm name."""
    return {v: k for k, v in ALGORITHMS.items()}[name]


def solve_response(result: Any) -> pb.SolveResponse:
    """A ``SolveResponse`` from a ``search.solve`` result."""
    return pb.SolveResponse(
        status=SOLVE_STATUSES[result.status],
        moves=list(result.moves),
        nodes=result.nodes,
        elapsed_ms=result.elapsed_ms,
        reason=result.reason or "",
        algorithm=algorithm_to_proto(result.algorithm),
    )


def analyze_puzzle_response(analysis: Any) -> pb.AnalyzePuzzleResponse:
    """An ``AnalyzePuzzleResponse`` from a ``puzzles.PuzzleAnalysis``."""
    return pb.AnalyzePuzzleResponse(
        stacks=analysis.stacks,
        solvable=analysis.solvable,
        exact=analysis.exact,
        by_depth=[_depth_count(d) for d in analysis.by_depth],
        halfway_depth=analysis.halfway_depth,
        halfway_ratio=analysis.halfway_ratio,
        tension=analysis.tension,
        solution=list(analysis.solution),
        solution_tension=list(analysis.solution_tension),
        states_enumerated=analysis.states_enumerated,
        elapsed_ms=analysis.elapsed_ms,
        notes=list(analysis.notes),
    )


def _depth_count(depth: Any) -> pb.DepthCount:
    # Unknown counts and tensions (None) stay unset: the proto fields are optional.
    return pb.DepthCount(
        depth=depth.depth,
        states=depth.states,
        solvable=depth.solvable,
        ratio=depth.ratio,
        ratio_low=depth.ratio_low,
        ratio_high=depth.ratio_high,
        method=depth.method,
        sampled=depth.sampled,
        tension=depth.tension,
    )


def generate_puzzle_response(puzzle: Any) -> pb.GeneratePuzzleResponse:
    """A ``GeneratePuzzleResponse`` from a ``puzzles.generation.GeneratedPuzzle``."""
    return pb.GeneratePuzzleResponse(
        state=state_to_proto(puzzle.state),
        energy=puzzle.energy,
        energy_name=puzzle.energy_name,
        halfway_ratio=puzzle.halfway_ratio,
        halfway_exact=puzzle.halfway_exact,
        solution=list(puzzle.solution),
        elapsed_ms=puzzle.elapsed_ms,
        seed=puzzle.seed,
        steps=puzzle.steps,
    )


def classify_response(p_solvable: np.ndarray, threshold: float, model_version: str) -> pb.ClassifyResponse:
    """A ``ClassifyResponse``: one prediction per probability, labelled against ``threshold``."""
    predictions = [pb.Prediction(p_solvable=p, solvable=p >= threshold) for p in p_solvable.tolist()]
    return pb.ClassifyResponse(predictions=predictions, model_version=model_version, threshold=threshold)


def features_response(matrix: np.ndarray, names: Sequence[str], schema_version: str) -> pb.FeaturesResponse:
    """A ``FeaturesResponse`` from an (N, len(names)) float matrix."""
    vectors = [pb.FeatureVector(values=row) for row in matrix.tolist()]
    return pb.FeaturesResponse(schema_version=schema_version, names=list(names), vectors=vectors)


def server_info(info: Mapping[str, Any]) -> pb.ServerInfo:
    """A ``ServerInfo`` from ``DataPlane.info()``."""
    fields = {k: v for k, v in info.items() if k not in {"model_card", "limits"}}
    return pb.ServerInfo(
        **fields,
        model_card=struct_from_mapping(info["model_card"]),
        limits=pb.Limits(**info["limits"]),
        algorithms=list(ALGORITHMS),
        default_algorithm=DEFAULT_ALGORITHM,
    )


def struct_from_mapping(data: Mapping[str, Any]) -> struct_pb2.Struct:
    """A ``google.protobuf.Struct`` of JSON-like data; values that JSON cannot hold become text."""
    struct = struct_pb2.Struct()
    struct.update({str(k): _json_value(v) for k, v in data.items()})
    return struct


def _json_value(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Mapping):
        return {str(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, Iterable):
        return [_json_value(v) for v in value]
    return str(value)
