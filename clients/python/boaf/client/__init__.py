"""A small Python client of a boaf server: ``Client(address)``, one method per RPC, boaf's own types in and out.

    from boaf.game import parse_grid
    from boaf.client import Client

    with Client("127.0.0.1:50051") as boaf:
        answer = boaf.solve(parse_grid("5S JC QH 8H/KC 6H 3H 9H/3S JS TH TS/KS 7D AH 5C"))
        print(answer.status, " ".join(answer.moves))

It speaks gRPC (``proto/boaf/v1``) and takes and returns ``game.State`` and the
frozen dataclasses below, never protobuf messages. It is light: importing it, or
calling a server with it, loads grpcio, protobuf, the generated stubs and
``game``'s cards, states and notation, never numba, the kernels or onnxruntime.

- **Deadlines.** Every call has one: ``timeout_s`` of the client (10 s by
  default), or of the call when it passes its own. Retries live within it.
- **Retries**, as gRPC's retry guidance says: only UNAVAILABLE (loading,
  compiling, stopping) and RESOURCE_EXHAUSTED (busy) are retried, at most
  ``RetryPolicy.attempts`` attempts, with exponential backoff and full jitter,
  waiting at least the server's ``retry-after`` hint (seconds, in the trailing
  metadata). A wait that would end past the call's deadline is not taken: the
  call raises at once. Every other code raises at once.
- **Errors** are ``ClientError``s, one class per status code (``.code``,
  ``.message`` (the server's words), ``.attempts``, ``.retry_after_s``), each also
  in its branch of ``boaf.game.errors``: bad input (INVALID_ARGUMENT, OUT_OF_RANGE,
  UNAUTHENTICATED) is an ``InvalidInput``, a budget, a deadline or a busy server
  (RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED, CANCELLED, NOT_FOUND) is ``Stopped``,
  anything else (UNAVAILABLE, INTERNAL) is a ``Failure``. gRPC core's own refusal
  of a message past its size cap (RESOURCE_EXHAUSTED, "message larger than max")
  is a ``LimitExceeded`` with code OUT_OF_RANGE, as the server's own is.
- **Security.** ``tls=True`` uses the system's root certificates;
  ``root_certificates=PEM bytes`` trusts those instead; ``tls=`` also takes any
  ``grpc.ChannelCredentials``. ``token="..."`` sends ``authorization: Bearer ...``
  with every call (``BOAF_API_TOKENS`` on the server).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, TypeVar

import grpc
from google.protobuf import json_format

from boaf.game.cards import CARD_TEXTS, Card, parse_card
from boaf.game.errors import BoafError, Failure, InvalidInput, Stopped
from boaf.game.state import State
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc, game_pb2, game_pb2_grpc

__all__ = [
    "DEFAULT_ADDRESS",
    "DEFAULT_TIMEOUT_S",
    "Busy",
    "Cancelled",
    "Classification",
    "Client",
    "ClientError",
    "DeadlineExceeded",
    "DepthCount",
    "FeatureTable",
    "GeneratedPuzzle",
    "Hints",
    "InternalError",
    "InvalidRequest",
    "LegalMove",
    "LimitExceeded",
    "Limits",
    "MoveHint",
    "NotFound",
    "Played",
    "Prediction",
    "PuzzleAnalysis",
    "RetryPolicy",
    "ServerInfo",
    "Solution",
    "Unauthenticated",
    "Unavailable",
]

DEFAULT_ADDRESS = "127.0.0.1:50051"
DEFAULT_TIMEOUT_S = 10.0
MAX_TIMEOUT_S = 24 * 3600.0  # a deadline past a day is a mistake, not a wish
MAX_MESSAGE_BYTES = 64 * 1024 * 1024  # largest answer the client reads (a server's own limit is usually lower)
RETRYABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED})
RETRY_AFTER = "retry-after"  # the server's hint, in seconds, in the trailing metadata of an UNAVAILABLE answer

Response = TypeVar("Response")


# ---------------------------------------------------------------- errors


class ClientError(BoafError):
    """A call failed: ``code`` (a ``grpc.StatusCode``), ``message`` (the server's, or the client's own).

    ``attempts`` counts the calls made (more than 1 after retries); ``retry_after_s``
    is the server's retry hint, when it sent one.
    """

    def __init__(
        self, code: grpc.StatusCode, message: str, *, attempts: int = 1, retry_after_s: float | None = None
    ) -> None:
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message
        self.attempts = attempts
        self.retry_after_s = retry_after_s


class InvalidRequest(ClientError, InvalidInput):
    """INVALID_ARGUMENT: the request is wrong; the message names what and where. Never retried.

    Also raised before sending, with code INVALID_ARGUMENT, for an argument the client can check itself.
    """


class LimitExceeded(InvalidRequest):
    """OUT_OF_RANGE: the request asks for more than a server limit allows (``server_info().limits``)."""


class Unauthenticated(ClientError, InvalidInput):
    """UNAUTHENTICATED: the server wants a bearer token (``token=``) and the call had no valid one."""


class Busy(ClientError, Stopped):
    """RESOURCE_EXHAUSTED on every attempt: the server stayed busy."""


class DeadlineExceeded(ClientError, Stopped):
    """DEADLINE_EXCEEDED: the call's deadline, or the server's time limit, passed before the answer."""


class Cancelled(ClientError, Stopped):
    """CANCELLED: the call was cancelled."""


class NotFound(ClientError, Stopped):
    """NOT_FOUND: GeneratePuzzle found no solvable puzzle within its iterations and time."""


class Unavailable(ClientError, Failure):
    """UNAVAILABLE on every attempt: the server is loading, compiling, stopping, or cannot be reached."""


class InternalError(ClientError, Failure):
    """Any other code (INTERNAL, UNIMPLEMENTED, ...): the server, not the request, failed."""


ERRORS: Mapping[grpc.StatusCode, type[ClientError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidRequest,
    grpc.StatusCode.OUT_OF_RANGE: LimitExceeded,
    grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
    grpc.StatusCode.RESOURCE_EXHAUSTED: Busy,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceeded,
    grpc.StatusCode.CANCELLED: Cancelled,
    grpc.StatusCode.NOT_FOUND: NotFound,
    grpc.StatusCode.UNAVAILABLE: Unavailable,
}
"""The client's exception for each status code; any code not here is an ``InternalError``."""
# What gRPC core says when it refuses a message past its size cap (RESOURCE_EXHAUSTED): "Received message
# larger than max (N vs. M)", "Sent ...", "Decompressed ...". The request or answer is too large, so the call
# is OUT_OF_RANGE, not busy (``error_of``).
CORE_SIZE_REFUSAL = "message larger than max"


def error_of(
    code: grpc.StatusCode, message: str, *, attempts: int = 1, retry_after_s: float | None = None
) -> ClientError:
    """The ``ClientError`` of a failed call's code and message.

    gRPC core's own refusal of a message past its size cap (RESOURCE_EXHAUSTED, ``CORE_SIZE_REFUSAL``,
    before the server's code reads it) is a ``LimitExceeded`` with code OUT_OF_RANGE, as the server
    answers a message past ``BOAF_MAX_MESSAGE_BYTES`` itself: it is never retried.
    """
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED and CORE_SIZE_REFUSAL in message:
        message = (
            f"a message past gRPC's size cap, refused before the server read it ({message}); the server takes "
            "messages up to its BOAF_MAX_MESSAGE_BYTES (server_info().limits.max_message_bytes)"
        )
        return LimitExceeded(grpc.StatusCode.OUT_OF_RANGE, message, attempts=attempts)
    kind = ERRORS.get(code, InternalError)
    return kind(code, message, attempts=attempts, retry_after_s=retry_after_s)


def _invalid(message: str) -> InvalidRequest:
    return InvalidRequest(grpc.StatusCode.INVALID_ARGUMENT, message, attempts=0)


# ---------------------------------------------------------------- retries


@dataclass(frozen=True)
class RetryPolicy:
    """How UNAVAILABLE and RESOURCE_EXHAUSTED calls are retried, always within the call's deadline.

    ``attempts`` counts the first call (1: never retry, at most 10). Before retry
    ``n`` (from 1) the backoff is ``min(max_backoff_s, initial_backoff_s *
    multiplier ** (n - 1))`` seconds, of which the fraction ``jitter`` is random:
    the client waits ``backoff * (1 - jitter * U)``, ``U`` uniform in [0, 1). The
    default ``jitter=1`` is gRPC's full jitter (a wait anywhere up to the backoff);
    ``jitter=0`` waits exactly the backoff. It waits at least the server's
    ``retry-after`` hint.
    """

    attempts: int = 4
    initial_backoff_s: float = 0.1
    max_backoff_s: float = 5.0
    multiplier: float = 2.0
    jitter: float = 1.0

    def __post_init__(self) -> None:
        if isinstance(self.attempts, bool) or not isinstance(self.attempts, int) or not 1 <= self.attempts <= 10:
            raise _invalid(f"RetryPolicy.attempts must be an integer in 1..10, got {self.attempts!r}")
        if not 0 < self.initial_backoff_s <= self.max_backoff_s <= 60:
            raise _invalid(
                f"RetryPolicy backoffs must satisfy 0 < initial_backoff_s <= max_backoff_s <= 60 s, "
                f"got {self.initial_backoff_s!r} and {self.max_backoff_s!r}"
            )
        if not 1 <= self.multiplier <= 10:
            raise _invalid(f"RetryPolicy.multiplier must be in 1..10, got {self.multiplier!r}")
        if not 0 <= self.jitter <= 1:
            raise _invalid(f"RetryPolicy.jitter must be in 0..1, got {self.jitter!r}")

    def backoff_s(self, retry: int, rng: random.Random) -> float:
        """The jittered wait before retry number ``retry`` (counted from 1), in seconds."""
        backoff = min(self.max_backoff_s, self.initial_backoff_s * self.multiplier ** (retry - 1))
        return backoff * (1.0 - self.jitter * rng.random())


# ---------------------------------------------------------------- results


@dataclass(frozen=True)
class Prediction:
    """P(solvable) of one state; ``exact`` when the server's search settled it (p is then 1 or 0)."""

    p_solvable: float
    solvable: bool  # p_solvable >= the model's threshold
    exact: bool
    nodes: int  # nodes the exact search expanded for this state


@dataclass(frozen=True)
class Classification:
    """A Classify answer: one prediction per state, in order, and the model that made them."""

    predictions: tuple[Prediction, ...]
    model_version: str
    threshold: float


@dataclass(frozen=True)
class Solution:
    """A Solve answer.

    ``status`` is ``"solvable"`` (``moves`` win), ``"unsolvable"`` or ``"unknown"`` (a
    budget ran out; ``reason`` names it: ``"max_nodes"``, ``"memory"``, ``"time_limit"``).
    """

    status: str
    moves: tuple[str, ...]
    nodes: int
    elapsed_ms: float
    reason: str
    algorithm: str  # the algorithm that ran, e.g. "ordered"


@dataclass(frozen=True)
class FeatureTable:
    """A Features answer: ``vectors[i][j]`` is feature ``names[j]`` of state ``i``."""

    schema_version: str
    names: tuple[str, ...]
    vectors: tuple[tuple[float, ...], ...]


@dataclass(frozen=True)
class LegalMove:
    """A legal move's text (``XS-YD``) and the state it leads to."""

    move: str
    result: State


@dataclass(frozen=True)
class Played:
    """A Play answer: the state reached, its legal moves (Play's order), and whether it is won."""

    state: State
    legal_moves: tuple[LegalMove, ...]
    won: bool


@dataclass(frozen=True)
class MoveHint:
    """A legal move with its verdict: ``"winnable"`` or ``"loses"`` (exact), or ``"estimate"`` (``p_winnable``)."""

    move: str
    result: State
    verdict: str
    p_winnable: float
    nodes: int


@dataclass(frozen=True)
class Hints:
    """A Hint answer: every legal move's verdict, and the position's own."""

    moves: tuple[MoveHint, ...]
    won: bool
    verdict: str
    p_winnable: float
    model_version: str


@dataclass(frozen=True)
class DepthCount:
    """The states at one depth of a puzzle analysis; ``states``, ``solvable`` and ``tension`` are None when unknown."""

    depth: int
    states: int | None
    solvable: int | None
    ratio: float
    ratio_low: float
    ratio_high: float
    method: str  # "exact", "sample" or "walk"
    sampled: int
    tension: float | None


@dataclass(frozen=True)
class PuzzleAnalysis:
    """An AnalyzePuzzle answer (see ``proto/boaf/v1/boaf.proto``); ``tension`` is None when unset."""

    stacks: int
    solvable: bool
    exact: bool
    by_depth: tuple[DepthCount, ...]
    halfway_ratio: float
    tension: float | None
    solution: tuple[str, ...]
    elapsed_ms: float
    halfway_depth: int
    solution_tension: tuple[float, ...]
    states_enumerated: int
    notes: tuple[str, ...]


@dataclass(frozen=True)
class GeneratedPuzzle:
    """A GeneratePuzzle answer: the puzzle, its energy, halfway ratio and one solution."""

    state: State
    energy: float
    energy_name: str
    halfway_ratio: float
    halfway_exact: bool
    solution: tuple[str, ...]
    elapsed_ms: float
    seed: int
    steps: int


@dataclass(frozen=True)
class Limits:
    """The server's limits (``proto/boaf/v1/boaf.proto``, message ``Limits``, documents each)."""

    max_batch_size: int
    max_message_bytes: int
    max_concurrent_rpcs: int
    solve_max_nodes: int
    solve_time_limit_ms: int
    max_streams: int
    max_workers: int
    batch_time_limit_ms: int
    puzzle_max_states: int
    puzzle_max_samples: int
    puzzle_max_iterations: int
    max_concurrent_puzzles: int
    max_concurrent_searches: int
    search_memory_mb: int
    hint_max_nodes: int


@dataclass(frozen=True)
class ServerInfo:
    """A GetServerInfo answer: versions, the feature schema, the model card, limits and algorithms (by name)."""

    version: str
    feature_schema_version: str
    feature_names: tuple[str, ...]
    model_version: str
    model_schema_version: str
    model_card: dict[str, Any] = field(hash=False)
    classify_threshold: float
    limits: Limits
    algorithms: tuple[str, ...]
    default_algorithm: str
    classify_exact_max_nodes: int
    #: ``(rows, cols, max_nodes)`` of each grid with an exact-path budget of its own; the others get
    #: ``classify_exact_max_nodes``.
    classify_exact_grid_budgets: tuple[tuple[int, int, int], ...]
    #: The second search of a 4x4 deal the first leaves open and that looks like an FFUD (0: none).
    classify_exact_deal_nodes: int


# ---------------------------------------------------------------- conversions


ALGORITHMS: Mapping[str, pb.Algorithm] = {
    "ordered": pb.ORDERED,
    "compatible": pb.COMPATIBLE,
    "constrained": pb.CONSTRAINED,
    "best-n": pb.BEST_N,
    "island-merge": pb.ISLAND_MERGE,
}
"""The algorithm names ``Client.solve`` takes, as ``boaf solve --algorithm`` spells them."""
_ALGORITHM_NAMES = {number: name for name, number in ALGORITHMS.items()}
_STATUSES = {pb.SOLVABLE: "solvable", pb.UNSOLVABLE: "unsolvable", pb.UNKNOWN: "unknown"}
_VERDICTS = {
    game_pb2.VERDICT_WINNABLE: "winnable",
    game_pb2.VERDICT_LOSES: "loses",
    game_pb2.VERDICT_ESTIMATE: "estimate",
}
_CARDS: Mapping[str, Card] = {text: card for card, text in enumerate(CARD_TEXTS)}
UINT32, UINT64, INT64 = (0, 2**32 - 1), (0, 2**64 - 1), (-(2**63), 2**63 - 1)


def state_message(state: State) -> pb.State:
    """The ``State`` message of ``state``; ``sizes`` only when some stack is taller than 1."""
    if not isinstance(state, State):
        raise _invalid(f"expected a game.State, got {type(state).__name__} (game.parse_grid reads grid text)")
    cells = ["" if card is None else CARD_TEXTS[card] for card in state.cells]
    sizes = list(state.sizes) if any(size > 1 for size in state.sizes) else []
    return pb.State(rows=state.rows, cols=state.cols, cells=cells, sizes=sizes)


def state_of(message: pb.State) -> State:
    """The ``game.State`` of a server's ``State`` message."""
    cells = [_card_of(text) for text in message.cells]
    return State.from_cells(message.rows, message.cols, cells, list(message.sizes) or None)


def _card_of(text: str) -> Card | None:
    if text == "":
        return None
    return _CARDS[text] if text in _CARDS else parse_card(text)  # the server writes cards upper case


def _number(value: int, name: str, bounds: tuple[int, int]) -> int:
    low, high = bounds
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _invalid(f"{name} must be an integer in {low}..{high}, got {value!r}")
    return value


def _algorithm(name: str | None) -> pb.Algorithm:
    if name is None:
        return pb.ALGORITHM_UNSPECIFIED
    if name not in ALGORITHMS:
        raise _invalid(f"algorithm {name!r} is not one of {', '.join(ALGORITHMS)}")
    return ALGORITHMS[name]


def _optional(message: Any, name: str) -> Any:
    return getattr(message, name) if message.HasField(name) else None


def _depth_count(message: pb.DepthCount) -> DepthCount:
    return DepthCount(
        depth=message.depth,
        states=_optional(message, "states"),
        solvable=_optional(message, "solvable"),
        ratio=message.ratio,
        ratio_low=message.ratio_low,
        ratio_high=message.ratio_high,
        method=message.method,
        sampled=message.sampled,
        tension=_optional(message, "tension"),
    )


def _analysis(message: pb.AnalyzePuzzleResponse) -> PuzzleAnalysis:
    return PuzzleAnalysis(
        stacks=message.stacks,
        solvable=message.solvable,
        exact=message.exact,
        by_depth=tuple(_depth_count(depth) for depth in message.by_depth),
        halfway_ratio=message.halfway_ratio,
        tension=_optional(message, "tension"),
        solution=tuple(message.solution),
        elapsed_ms=message.elapsed_ms,
        halfway_depth=message.halfway_depth,
        solution_tension=tuple(message.solution_tension),
        states_enumerated=message.states_enumerated,
        notes=tuple(message.notes),
    )


def _generated(message: pb.GeneratePuzzleResponse) -> GeneratedPuzzle:
    return GeneratedPuzzle(
        state=state_of(message.state),
        energy=message.energy,
        energy_name=message.energy_name,
        halfway_ratio=message.halfway_ratio,
        halfway_exact=message.halfway_exact,
        solution=tuple(message.solution),
        elapsed_ms=message.elapsed_ms,
        seed=message.seed,
        steps=message.steps,
    )


def _hints(message: game_pb2.HintResponse) -> Hints:
    moves = tuple(
        MoveHint(m.move, state_of(m.result), _VERDICTS[m.verdict], m.p_winnable, m.nodes) for m in message.moves
    )
    return Hints(moves, message.won, _VERDICTS[message.verdict], message.p_winnable, message.model_version)


def _server_info(message: pb.ServerInfo) -> ServerInfo:
    limits = Limits(**{name: getattr(message.limits, name) for name in Limits.__dataclass_fields__})
    return ServerInfo(
        version=message.version,
        feature_schema_version=message.feature_schema_version,
        feature_names=tuple(message.feature_names),
        model_version=message.model_version,
        model_schema_version=message.model_schema_version,
        model_card=json_format.MessageToDict(message.model_card),
        classify_threshold=message.classify_threshold,
        limits=limits,
        algorithms=tuple(_ALGORITHM_NAMES[a] for a in message.algorithms if a in _ALGORITHM_NAMES),
        default_algorithm=_ALGORITHM_NAMES.get(message.default_algorithm, ""),
        classify_exact_max_nodes=message.classify_exact_max_nodes,
        classify_exact_grid_budgets=tuple((g.rows, g.cols, g.max_nodes) for g in message.classify_exact_grid_budgets),
        classify_exact_deal_nodes=message.classify_exact_deal_nodes,
    )


def _retry_after_s(error: grpc.RpcError) -> float | None:
    # The hint comes as seconds; anything else (absent, not a number, negative) is no hint.
    for key, value in error.trailing_metadata() or ():
        if key == RETRY_AFTER:
            try:
                seconds = float(value)
            except ValueError:
                return None
            return seconds if 0 <= seconds <= MAX_TIMEOUT_S else None
    return None


def _credentials(tls: bool | grpc.ChannelCredentials, root: bytes | None) -> grpc.ChannelCredentials | None:
    if root is not None:
        return grpc.ssl_channel_credentials(root_certificates=root)
    if tls is True:
        return grpc.ssl_channel_credentials()
    if tls is False:
        return None
    return tls


# ---------------------------------------------------------------- the client


class Client:
    """A connection to one boaf server; use it as a context manager, or ``close()`` it.

    ``address`` is ``host:port`` (gRPC). ``timeout_s`` is every call's deadline unless
    the call passes its own; ``retry`` says how UNAVAILABLE and RESOURCE_EXHAUSTED
    are retried within it. ``tls``, ``root_certificates`` and ``token`` are described
    in the module notes; ``interceptors`` (``grpc.UnaryUnaryClientInterceptor``) see
    every attempt. Safe to share between threads.
    """

    def __init__(
        self,
        address: str = DEFAULT_ADDRESS,
        *,
        tls: bool | grpc.ChannelCredentials = False,
        root_certificates: bytes | None = None,
        token: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retry: RetryPolicy = RetryPolicy(),  # frozen: one shared default is safe
        interceptors: Sequence[grpc.UnaryUnaryClientInterceptor] = (),
        max_message_bytes: int = MAX_MESSAGE_BYTES,
    ) -> None:
        self.timeout_s = _timeout(timeout_s)
        self.retry = retry
        self._metadata = () if token is None else (("authorization", f"Bearer {_token(token)}"),)
        self._rng = random.Random()
        options = [("grpc.max_receive_message_length", _number(max_message_bytes, "max_message_bytes", (1, 2**31 - 1)))]
        credentials = _credentials(tls, root_certificates)
        if credentials is None:
            self._channel = grpc.insecure_channel(address, options=options)
        else:
            self._channel = grpc.secure_channel(address, credentials, options=options)
        channel = grpc.intercept_channel(self._channel, *interceptors) if interceptors else self._channel
        self._boaf = boaf_pb2_grpc.BoafStub(channel)
        self._game = game_pb2_grpc.GameStub(channel)

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the channel; calls still running are cancelled."""
        self._channel.close()

    # ---------------------------------------------------------------- Boaf

    def classify(self, states: Iterable[State], *, timeout_s: float | None = None) -> Classification:
        """P(solvable) of each state (at most the server's ``max_batch_size``), exact where the search settles it."""
        request = pb.ClassifyRequest(states=[state_message(s) for s in states])
        answer = self._call(self._boaf.Classify, request, timeout_s)
        predictions = tuple(Prediction(p.p_solvable, p.solvable, p.exact, p.nodes) for p in answer.predictions)
        return Classification(predictions, answer.model_version, answer.threshold)

    def solve(
        self,
        state: State,
        *,
        algorithm: str | None = None,
        max_nodes: int = 0,
        time_limit_ms: int = 0,
        timeout_s: float | None = None,
    ) -> Solution:
        """The exact answer for ``state`` with ``algorithm`` (a name of ``ALGORITHMS``; None: the server's default).

        ``max_nodes`` (nodes) and ``time_limit_ms`` budget the search; 0 is the server's limit.
        A budget that runs out is a ``Solution`` with status ``"unknown"``, not an error.
        """
        request = pb.SolveRequest(
            state=state_message(state),
            algorithm=_algorithm(algorithm),
            max_nodes=_number(max_nodes, "max_nodes", UINT64),
            time_limit_ms=_number(time_limit_ms, "time_limit_ms", UINT64),
        )
        answer = self._call(self._boaf.Solve, request, timeout_s)
        algorithm_name = _ALGORITHM_NAMES.get(answer.algorithm, "")
        status = _STATUSES.get(answer.status, "unknown")
        return Solution(status, tuple(answer.moves), answer.nodes, answer.elapsed_ms, answer.reason, algorithm_name)

    def features(self, states: Iterable[State], *, timeout_s: float | None = None) -> FeatureTable:
        """The feature vector of each state, in order, with the feature names."""
        request = pb.FeaturesRequest(states=[state_message(s) for s in states])
        answer = self._call(self._boaf.Features, request, timeout_s)
        vectors = tuple(tuple(vector.values) for vector in answer.vectors)
        return FeatureTable(answer.schema_version, tuple(answer.names), vectors)

    def server_info(self, *, timeout_s: float | None = None) -> ServerInfo:
        """The server's versions, feature schema, model card, limits and algorithms."""
        return _server_info(self._call(self._boaf.GetServerInfo, pb.GetServerInfoRequest(), timeout_s))

    def analyze_puzzle(
        self,
        state: State,
        *,
        max_states: int = 0,
        samples: int = 0,
        seed: int = 0,
        time_limit_ms: int = 0,
        timeout_s: float | None = None,
    ) -> PuzzleAnalysis:
        """Solvability by depth, halfway ratio and tension of ``state``; 0 for a number is the server's default."""
        request = pb.AnalyzePuzzleRequest(
            state=state_message(state),
            max_states=_number(max_states, "max_states", UINT64),
            samples=_number(samples, "samples", UINT32),
            seed=_number(seed, "seed", UINT64),
            time_limit_ms=_number(time_limit_ms, "time_limit_ms", UINT64),
        )
        return _analysis(self._call(self._boaf.AnalyzePuzzle, request, timeout_s))

    def generate_puzzle(
        self,
        cards: int,
        *,
        rows: int = 4,
        cols: int = 4,
        seed: int = 0,
        iterations: int = 0,
        energy: str = "",
        time_limit_ms: int = 0,
        timeout_s: float | None = None,
    ) -> GeneratedPuzzle:
        """A solvable puzzle of ``cards`` cards on a ``rows x cols`` grid; ``NotFound`` when none turns up."""
        request = pb.GeneratePuzzleRequest(
            cards=_number(cards, "cards", UINT32),
            rows=_number(rows, "rows", UINT32),
            cols=_number(cols, "cols", UINT32),
            seed=_number(seed, "seed", UINT64),
            iterations=_number(iterations, "iterations", UINT32),
            energy=energy,
            time_limit_ms=_number(time_limit_ms, "time_limit_ms", UINT64),
        )
        return _generated(self._call(self._boaf.GeneratePuzzle, request, timeout_s))

    # ---------------------------------------------------------------- Game

    def deal(self, seed: int, rows: int = 4, cols: int = 4, *, timeout_s: float | None = None) -> State:
        """The Microsoft-FreeCell-seeded deal of ``seed`` (32-bit signed) on a ``rows x cols`` grid."""
        request = game_pb2.DealRequest(
            seed=_number(seed, "seed", INT64), rows=_number(rows, "rows", UINT32), cols=_number(cols, "cols", UINT32)
        )
        return state_of(self._call(self._game.Deal, request, timeout_s))

    def play(self, state: State, moves: str | Sequence[str] = (), *, timeout_s: float | None = None) -> Played:
        """Replay ``moves`` (move text ``XS-YD``, one space-separated string or a sequence) from ``state``.

        An illegal move is an ``InvalidRequest`` naming it and its position.
        """
        texts = moves.split() if isinstance(moves, str) else list(moves)
        answer = self._call(self._game.Play, game_pb2.PlayRequest(state=state_message(state), moves=texts), timeout_s)
        legal = tuple(LegalMove(m.move, state_of(m.result)) for m in answer.legal_moves)
        return Played(state_of(answer.state), legal, answer.won)

    def hint(self, state: State, *, max_nodes_per_move: int = 0, timeout_s: float | None = None) -> Hints:
        """Each legal move of ``state`` with its verdict; ``max_nodes_per_move`` 0 is the model's exact-path budget."""
        budget = _number(max_nodes_per_move, "max_nodes_per_move", UINT64)
        request = game_pb2.HintRequest(state=state_message(state), max_nodes_per_move=budget)
        return _hints(self._call(self._game.Hint, request, timeout_s))

    # ---------------------------------------------------------------- calls

    def _call(self, method: Callable[..., Response], request: Any, timeout_s: float | None) -> Response:
        """One RPC within one deadline, retried as ``self.retry`` says; failures raise ``ClientError``s."""
        timeout = self.timeout_s if timeout_s is None else _timeout(timeout_s)
        deadline = time.monotonic() + timeout
        attempt = 0
        while True:
            attempt += 1
            remaining = deadline - time.monotonic()
            if remaining <= 0:  # only when a wait overslept: waits end before the deadline
                message = f"the call's deadline ({timeout:g} s) passed after {attempt - 1} attempts"
                raise DeadlineExceeded(grpc.StatusCode.DEADLINE_EXCEEDED, message, attempts=attempt - 1)
            try:
                return method(request, timeout=remaining, metadata=self._metadata)
            except grpc.RpcError as error:
                failure = error_of(
                    error.code(), error.details() or "", attempts=attempt, retry_after_s=_retry_after_s(error)
                )
                wait = self._wait_s(failure)
                if wait is None or time.monotonic() + wait >= deadline:
                    raise failure from error
            time.sleep(wait)

    def _wait_s(self, failure: ClientError) -> float | None:
        # None: do not retry (a code that is not retried, or the attempts are spent).
        if failure.code not in RETRYABLE or failure.attempts >= self.retry.attempts:
            return None
        return max(self.retry.backoff_s(failure.attempts, self._rng), failure.retry_after_s or 0.0)


def _timeout(value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= MAX_TIMEOUT_S:
        raise _invalid(f"timeout_s must be a number of seconds in (0, {MAX_TIMEOUT_S:g}], got {value!r}")
    return float(value)


def _token(token: str) -> str:
    if not token or token != token.strip() or any(not (" " < c <= "~") for c in token):
        raise _invalid("token must be printable ASCII without spaces (a bearer token), got another string")
    return token
