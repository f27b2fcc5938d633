"""Protobuf messages to domain values and back: the only module that touches both.

Readers validate as they convert and raise ``boaf.game.errors.InvalidState`` (and
friends) whose message starts with where the bad value is in the request, e.g.
``states[3]: duplicate card 5S at row 2, column 2 (first at row 1, column 1)``.
No protobuf type goes past this module into ``game``, ``search``, ``features``
or ``models``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypedDict

import numpy as np
from google.protobuf import struct_pb2

from boaf import puzzles, search
from boaf.game.arrays import EMPTY
from boaf.game.cards import DECK_SIZE, Card, card_text
from boaf.game.errors import BoafError, InvalidState
from boaf.game.notation import check_rows_and_cols, state_from_json
from boaf.game.state import MAX_CELLS, State
from boaf.puzzles.generation import GeneratedPuzzle
from boaf.service.core import answers
from boaf.service.core.answers import Batch, Classification, FeatureRows, Hints, StateArray
from boaf.service.core.deadlines import CancelFlag
from boaf.service.core.errors import Cancelled
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import game_pb2

ALGORITHMS: dict[pb.Algorithm, str] = {
    pb.ORDERED: "ordered",
    pb.COMPATIBLE: "compatible",
    pb.CONSTRAINED: "constrained",
    pb.BEST_N: "best-n",
    pb.ISLAND_MERGE: "island-merge",
}
DEFAULT_ALGORITHM = pb.ORDERED
SOLVE_STATUSES: dict[search.Status, pb.SolveStatus] = {
    search.SOLVABLE: pb.SOLVABLE,
    search.UNSOLVABLE: pb.UNSOLVABLE,
    search.UNKNOWN: pb.UNKNOWN,
}
VERDICTS: dict[str, game_pb2.Verdict] = {
    answers.WINNABLE: game_pb2.VERDICT_WINNABLE,
    answers.LOSES: game_pb2.VERDICT_LOSES,
    answers.ESTIMATE: game_pb2.VERDICT_ESTIMATE,
}
DEFAULT_PUZZLE_GRID = (4, 4)  # rows, cols of a GeneratePuzzle that leaves them unset
SMALL_BATCH = 8  # batches of at most this many states are checked state by state (_every_row_a_state)
CHUNK_STATES = 512  # states read, or answers built, between two looks at the cancel flag (~10-50 ms of work)


class AnalysisOptions(TypedDict):
    """An AnalyzePuzzle request's options, as keyword arguments of ``DataPlane.analyze_puzzle``."""

    samples: int | None  # None: ``puzzles.analyze``'s default
    seed: int


class GenerationOptions(TypedDict):
    """A GeneratePuzzle request's options, as keyword arguments of ``DataPlane.generate_puzzle``."""

    rows: int
    cols: int
    seed: int
    iterations: int | None  # None: the paper's iterations for the card count
    energy: str | None  # None: the default energy


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
    """The ``State`` a message describes; errors are prefixed with ``where`` (e.g. ``states[3]``), their ``fields``."""
    try:
        return _read_state(message)
    except BoafError as exc:
        raise type(exc)(f"{where}: {exc}", fields=(where,)) from exc


def states_from_proto(messages: Sequence[pb.State], cancel: CancelFlag | None = None) -> Batch:
    """States of a batch, in order; an error names the state as ``states[i]``.

    A batch of plain states on one grid (the common case) becomes a ``StateArray``
    in a few vectorised steps, ``CHUNK_STATES`` states at a time (so the cell texts
    of a large batch are never all held as Python strings at once); anything else,
    including every invalid batch, is read state by state, which gives the precise
    error. ``cancel``, once set, stops the reading between chunks (``Cancelled``).
    """
    flag = CancelFlag() if cancel is None else cancel
    array = _state_array(messages, flag)
    if array is not None:
        return array
    states = []
    for i, message in enumerate(messages):
        if i % CHUNK_STATES == 0:
            _raise_if_set(flag, "reading the states")
        states.append(state_from_proto(message, f"states[{i}]"))
    return states


def _state_array(messages: Sequence[pb.State], cancel: CancelFlag) -> StateArray | None:
    # None means "not the fast case": the slow path then accepts it or says exactly what is wrong.
    if not messages:
        return None
    rows, cols = messages[0].rows, messages[0].cols
    n_cells = rows * cols
    if not (rows >= 1 and cols >= 1 and n_cells <= MAX_CELLS):
        return None
    cells = np.empty((len(messages), n_cells), dtype=np.int8)
    for start in range(0, len(messages), CHUNK_STATES):
        _raise_if_set(cancel, "reading the states")
        chunk = messages[start : start + CHUNK_STATES]
        texts: list[str] = []
        for message in chunk:
            if message.rows != rows or message.cols != cols or message.sizes or len(message.cells) != n_cells:
                return None
            texts.extend(message.cells)
        try:
            cells[start : start + len(chunk)] = np.array([_CODES[t] for t in texts], dtype=np.int8).reshape(-1, n_cells)
        except KeyError:
            return None
    return StateArray(cells, rows, cols) if _every_row_a_state(cells) else None


def _every_row_a_state(cells: np.ndarray) -> bool:
    # Each row has a card, and no card twice. A few rows (a single Classify, a Hint) are checked in
    # plain Python: numpy's cost per call (~15 us for a sort and two reductions) is more than the work.
    if len(cells) <= SMALL_BATCH:
        for row in cells.tolist():
            present = [code for code in row if code >= 0]
            if not present or len(set(present)) != len(present):
                return False
        return True
    ordered = np.sort(cells, axis=1)
    return not (np.any(ordered[:, -1] < 0) or np.any((ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] >= 0)))


def _read_state(message: pb.State) -> State:
    texts = list(message.cells)
    try:
        cells = [_CARDS[t] for t in texts]
    except KeyError:
        return state_from_json(_as_json(message))
    sizes = list(message.sizes) or None
    check_rows_and_cols(message.rows, message.cols)
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
    raise InvalidState(f"algorithm: {value} is not one of {known}", fields=("algorithm",))


def algorithm_to_proto(name: str) -> pb.Algorithm:
    """The ``Algorithm`` value of a ``search`` algorithm name."""
    return {v: k for k, v in ALGORITHMS.items()}[name]


def analysis_options(request: pb.AnalyzePuzzleRequest) -> AnalysisOptions:
    """The options of ``request``; an unset (0) ``samples`` is the default."""
    return AnalysisOptions(samples=request.samples or None, seed=request.seed)


def generation_options(request: pb.GeneratePuzzleRequest) -> GenerationOptions:
    """The options of ``request``; unset (0 or empty) fields are the defaults (a 4x4 grid)."""
    rows, cols = DEFAULT_PUZZLE_GRID
    return GenerationOptions(
        rows=request.rows or rows,
        cols=request.cols or cols,
        seed=request.seed,
        iterations=request.iterations or None,
        energy=request.energy or None,
    )


def solve_response(result: search.SolveResult) -> pb.SolveResponse:
    """A ``SolveResponse`` from a ``search.solve`` result."""
    return pb.SolveResponse(
        status=SOLVE_STATUSES[result.status],
        moves=list(result.moves),
        nodes=result.nodes,
        elapsed_ms=result.elapsed_ms,
        reason=result.reason or "",
        algorithm=algorithm_to_proto(result.algorithm),
    )


def analyze_puzzle_response(analysis: puzzles.PuzzleAnalysis) -> pb.AnalyzePuzzleResponse:
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


def _depth_count(depth: puzzles.DepthCount) -> pb.DepthCount:
    # The message has the fields of the JSON form, one for one (tests/service/test_converters.py holds them
    # equal). Unknown counts and tensions (None) stay unset: the proto fields are optional.
    return pb.DepthCount(**depth.to_json())


def generate_puzzle_response(puzzle: GeneratedPuzzle) -> pb.GeneratePuzzleResponse:
    """A ``GeneratePuzzleResponse`` from a ``boaf.puzzles.generation.GeneratedPuzzle``."""
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


def classify_response(result: Classification, cancel: CancelFlag | None = None) -> pb.ClassifyResponse:
    """A ``ClassifyResponse``: one prediction per state, labelled against the model's threshold, exact or not.

    Built ``CHUNK_STATES`` predictions at a time; ``cancel``, once set, stops it between chunks (``Cancelled``).
    """
    flag = CancelFlag() if cancel is None else cancel
    threshold = result.threshold
    response = pb.ClassifyResponse(model_version=result.model_version, threshold=threshold)
    for start in range(0, len(result.p_solvable), CHUNK_STATES):
        _raise_if_set(flag, "building the answer")
        end = start + CHUNK_STATES
        rows = zip(
            result.p_solvable[start:end].tolist(),
            result.exact[start:end].tolist(),
            result.nodes[start:end].tolist(),
            strict=True,
        )
        response.predictions.extend(
            pb.Prediction(p_solvable=p, solvable=p >= threshold, exact=exact, nodes=nodes) for p, exact, nodes in rows
        )
    return response


def hint_response(hints: Hints) -> game_pb2.HintResponse:
    """The message of a Hint's answer: each move with its result state and verdict, then the state's verdict."""
    moves = [
        game_pb2.MoveHint(
            move=m.move,
            result=state_to_proto(m.result),
            verdict=VERDICTS[m.verdict],
            p_winnable=m.p_winnable,
            nodes=m.nodes,
        )
        for m in hints.moves
    ]
    return game_pb2.HintResponse(
        moves=moves,
        won=hints.won,
        verdict=VERDICTS[hints.verdict],
        p_winnable=hints.p_winnable,
        model_version=hints.model_version,
    )


def play_response(state: State) -> game_pb2.PlayResponse:
    """The message of a state reached by play: the state, each legal move with its result, and whether it is won."""
    moves = [
        game_pb2.LegalMove(move=state.move_text(move), result=state_to_proto(state.apply(move)))
        for move in state.legal_moves()
    ]
    return game_pb2.PlayResponse(state=state_to_proto(state), legal_moves=moves, won=state.is_solved)


def features_response(rows: FeatureRows, cancel: CancelFlag | None = None) -> pb.FeaturesResponse:
    """A ``FeaturesResponse``: one vector per row of the (N, len(names)) matrix.

    Built ``CHUNK_STATES`` vectors at a time; ``cancel``, once set, stops it between chunks (``Cancelled``).
    """
    flag = CancelFlag() if cancel is None else cancel
    response = pb.FeaturesResponse(schema_version=rows.schema_version, names=list(rows.names))
    for start in range(0, rows.matrix.shape[0], CHUNK_STATES):
        _raise_if_set(flag, "building the answer")
        response.vectors.extend(
            pb.FeatureVector(values=row) for row in rows.matrix[start : start + CHUNK_STATES].tolist()
        )
    return response


def _raise_if_set(cancel: CancelFlag, doing: str) -> None:
    if cancel.is_set():
        raise Cancelled(f"the call was stopped while {doing}")


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
