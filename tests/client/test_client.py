"""boaf.client against live servers on loopback: every RPC, its errors, retries, TLS, tokens and lightness."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import numpy as np
import pytest
from google.protobuf import json_format
from servers import GatedLoader, loopback_settings, ready_server, start_server, wait_for

from boaf import puzzles, search
from boaf.client import (
    ALGORITHMS,
    Busy,
    Client,
    ClientError,
    DepthCount,
    InvalidRequest,
    LimitExceeded,
    Limits,
    RetryPolicy,
    Unauthenticated,
    Unavailable,
)
from boaf.game import State, deal, parse_grid, play, random_state, random_states
from boaf.service.core.warmup import RETRY_AFTER_S
from boaf.service.grpc.server import BoafServer
from boaf.service.rpc.converters import state_from_proto, state_to_proto
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc, game_pb2, game_pb2_grpc

CODE = grpc.StatusCode
FAST_RETRY = RetryPolicy(attempts=4, initial_backoff_s=0.01, max_backoff_s=0.05)
HEAVY = ("numba", "llvmlite", "onnxruntime", "search", "models", "features", "puzzles", "numpy")


class Attempts(grpc.UnaryUnaryClientInterceptor):  # type: ignore[misc]
    """Counts every attempt the client makes, with its timeout and code; ``on_failure`` runs after a failed one."""

    def __init__(self, on_failure: Callable[[int], None] = lambda attempt: None) -> None:
        self.codes: list[grpc.StatusCode] = []
        self.timeouts: list[float] = []
        self.on_failure = on_failure

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        self.timeouts.append(details.timeout)
        outcome = continuation(details, request)
        self.codes.append(outcome.code())
        if outcome.code() != CODE.OK:
            self.on_failure(len(self.codes))
        return outcome


@pytest.fixture(scope="module")
def client(server: BoafServer) -> Iterator[Client]:
    with Client(f"127.0.0.1:{server.port}", timeout_s=30) as open_client:
        yield open_client


@pytest.fixture(scope="module")
def game(channel: grpc.Channel) -> game_pb2_grpc.GameStub:
    return game_pb2_grpc.GameStub(channel)


def grpc_error(call: Callable[[], object]) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        call()
    return caught.value


# ---------------------------------------------------------------- every RPC, against the gRPC answer


def test_classify_answers_what_grpc_answers(client: Client, stub: boaf_pb2_grpc.BoafStub) -> None:
    states = [deal(seed) for seed in (1, 360528, -115618)] + random_states(7, 20)
    answer = client.classify(states)
    expected = stub.Classify(pb.ClassifyRequest(states=[state_to_proto(s) for s in states]), timeout=30)
    got = [(p.p_solvable, p.solvable, p.exact, p.nodes) for p in answer.predictions]
    assert got == [(p.p_solvable, p.solvable, p.exact, p.nodes) for p in expected.predictions]
    assert (answer.model_version, answer.threshold) == (expected.model_version, expected.threshold)
    assert answer.predictions[1].exact and not answer.predictions[1].solvable  # 360528 is unsolvable


def test_solve_of_a_seeded_deal_replays_to_a_win(client: Client) -> None:
    state = deal(1)
    solution = client.solve(state)
    assert (solution.status, solution.algorithm, solution.reason) == ("solvable", "ordered", "")
    assert play(state, solution.moves).is_solved
    assert solution.nodes == search.solve(state).nodes


@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
def test_solve_runs_the_asked_algorithm(client: Client, algorithm: str) -> None:
    solution = client.solve(deal(1), algorithm=algorithm)
    assert (solution.status, solution.algorithm) == ("solvable", algorithm)
    assert play(deal(1), solution.moves).is_solved


def test_a_budget_that_runs_out_is_an_unknown_solution_not_an_error(client: Client) -> None:
    solution = client.solve(deal(-115618), max_nodes=1_000)
    assert (solution.status, solution.reason, solution.moves) == ("unknown", "max_nodes", ())
    assert solution.nodes >= 1_000
    assert client.solve(deal(360528)).status == "unsolvable"


def test_features_answer_what_grpc_answers(client: Client, stub: boaf_pb2_grpc.BoafStub) -> None:
    states = [*random_states(3, 10), deal(2, 4, 13)]
    table = client.features(states)
    expected = stub.Features(pb.FeaturesRequest(states=[state_to_proto(s) for s in states]), timeout=30)
    assert table.vectors == tuple(tuple(v.values) for v in expected.vectors)
    assert (table.schema_version, table.names) == (expected.schema_version, tuple(expected.names))
    assert len(table.vectors) == len(states) and all(len(v) == len(table.names) for v in table.vectors)


def test_server_info_answers_what_grpc_answers(client: Client, stub: boaf_pb2_grpc.BoafStub) -> None:
    info = client.server_info()
    expected = stub.GetServerInfo(pb.GetServerInfoRequest(), timeout=10)
    assert {f.name for f in dataclasses.fields(Limits)} == set(pb.Limits.DESCRIPTOR.fields_by_name)
    assert dataclasses.asdict(info.limits) == {
        n: getattr(expected.limits, n) for n in pb.Limits.DESCRIPTOR.fields_by_name
    }
    assert info.limits.max_batch_size == expected.limits.max_batch_size == 100
    assert info.model_card == json_format.MessageToDict(expected.model_card)
    assert (info.version, info.model_version, info.classify_threshold) == (
        expected.version,
        expected.model_version,
        expected.classify_threshold,
    )
    assert info.feature_names == tuple(expected.feature_names)
    assert info.classify_exact_max_nodes == expected.classify_exact_max_nodes
    budgets = tuple((g.rows, g.cols, g.max_nodes) for g in expected.classify_exact_grid_budgets)
    assert info.classify_exact_grid_budgets == budgets
    assert info.classify_exact_deal_nodes == expected.classify_exact_deal_nodes == 8192
    assert set(info.algorithms) == set(ALGORITHMS) and info.default_algorithm == "ordered"


@pytest.mark.parametrize(("seed", "rows", "cols"), [(1, 4, 4), (-4965, 4, 4), (367297990, 13, 4), (2**31 - 1, 1, 2)])
def test_deal_is_the_seeded_deal(client: Client, seed: int, rows: int, cols: int) -> None:
    assert client.deal(seed, rows, cols) == deal(seed, rows, cols)


def test_play_replays_the_moves_and_lists_the_legal_ones(client: Client) -> None:
    state = deal(1)
    moves = ["9H-9S", "5H-5S"]
    played = client.play(state, " ".join(moves))
    reached = play(state, moves)
    assert (played.state, played.won) == (reached, False)
    assert [(m.move, m.result) for m in played.legal_moves] == [
        (reached.move_text(m), reached.apply(m)) for m in reached.legal_moves()
    ]
    won = client.play(state, client.solve(state).moves)
    assert won.won and won.legal_moves == () and won.state.is_solved


def test_a_state_with_stacks_travels_with_its_sizes(client: Client) -> None:
    state = play(deal(1), "9H-9S 5H-5S")
    assert max(state.sizes) == 2
    assert client.play(state).state == state


def test_hint_answers_what_grpc_answers(client: Client, game: game_pb2_grpc.GameStub) -> None:
    state = deal(367297990)
    hints = client.hint(state, max_nodes_per_move=500)
    request = game_pb2.HintRequest(state=state_to_proto(state), max_nodes_per_move=500)
    expected = game.Hint(request, timeout=30)
    verdicts = {game_pb2.VERDICT_WINNABLE: "winnable", game_pb2.VERDICT_LOSES: "loses"}
    verdicts[game_pb2.VERDICT_ESTIMATE] = "estimate"
    got = [(m.move, m.result, m.verdict, m.p_winnable, m.nodes) for m in hints.moves]
    assert got == [
        (m.move, state_from_proto(m.result, "result"), verdicts[m.verdict], m.p_winnable, m.nodes)
        for m in expected.moves
    ]
    assert (hints.won, hints.verdict, hints.p_winnable, hints.model_version) == (
        expected.won,
        verdicts[expected.verdict],
        expected.p_winnable,
        expected.model_version,
    )


def test_analyze_puzzle_equals_the_plain_function(client: Client) -> None:
    five = random_state(np.random.default_rng(5), 3, 3, 5)
    analysis = client.analyze_puzzle(five)
    expected = puzzles.analyze(five)
    assert [dataclasses.asdict(d) for d in analysis.by_depth] == [d.to_json() for d in expected.by_depth]
    assert all(isinstance(d, DepthCount) for d in analysis.by_depth)
    assert (analysis.stacks, analysis.solvable, analysis.exact) == (5, expected.solvable, True)
    assert (analysis.halfway_depth, analysis.halfway_ratio) == (expected.halfway_depth, expected.halfway_ratio)
    assert (analysis.solution, analysis.tension) == (tuple(expected.solution), expected.tension)
    assert analysis.solution_tension == tuple(expected.solution_tension)
    assert analysis.states_enumerated == expected.states_enumerated
    if analysis.solvable:
        assert play(five, analysis.solution).is_solved


def test_generate_puzzle_returns_a_solvable_puzzle_and_the_seed_decides_it(client: Client) -> None:
    puzzle = client.generate_puzzle(5, seed=3, iterations=20)
    assert (puzzle.state.rows, puzzle.state.cols, puzzle.state.n_stacks, puzzle.seed) == (4, 4, 5, 3)
    assert play(puzzle.state, puzzle.solution).is_solved
    assert search.solve(puzzle.state).status == search.SOLVABLE
    assert client.generate_puzzle(5, seed=3, iterations=20).state == puzzle.state


# ---------------------------------------------------------------- errors: the server's words, never retried


def _too_many_states(c: Client) -> object:
    return c.classify([deal(1)] * 101)


SERVER_ERRORS: list[tuple[str, Callable[[Client], object], type[ClientError], CODE, str]] = [
    ("illegal move", lambda c: c.play(deal(1), ["9H-9S", "2D-JC"]), InvalidRequest, CODE.INVALID_ARGUMENT,
     "move 2 of 2: move '2D-JC' is not legal: the cards share no suit"),
    ("seed past 32 bits", lambda c: c.deal(2**31), InvalidRequest, CODE.INVALID_ARGUMENT, "seed 2147483648 is outside"),
    ("grid too big", lambda c: c.deal(1, 8, 8), InvalidRequest, CODE.INVALID_ARGUMENT, "grid 8x8 has 64 cells"),
    ("one card", lambda c: c.generate_puzzle(1), InvalidRequest, CODE.INVALID_ARGUMENT, "cards"),
    ("max_nodes past the limit", lambda c: c.solve(deal(1), max_nodes=50_000_001), LimitExceeded, CODE.OUT_OF_RANGE,
     "max_nodes"),
    ("batch past the limit", _too_many_states, LimitExceeded, CODE.OUT_OF_RANGE, "more than 100 states"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("call", "kind", "code", "match"), [e[1:] for e in SERVER_ERRORS], ids=[e[0] for e in SERVER_ERRORS]
)
def test_bad_input_raises_the_clients_error_with_the_servers_message_at_once(
    server: BoafServer, call: Callable[[Client], object], kind: type[ClientError], code: CODE, match: str
) -> None:
    attempts = Attempts()
    with (
        Client(f"127.0.0.1:{server.port}", interceptors=[attempts], retry=FAST_RETRY) as counted,
        pytest.raises(kind) as caught,
    ):
        call(counted)
    assert type(caught.value) is kind and isinstance(caught.value, ValueError)  # InvalidInput's branch
    assert (caught.value.code, caught.value.attempts, attempts.codes) == (code, 1, [code])
    assert match in caught.value.message
    assert str(caught.value) == f"{code.name}: {caught.value.message}"


def test_the_message_is_the_one_grpc_gives(client: Client, game: game_pb2_grpc.GameStub) -> None:
    request = game_pb2.PlayRequest(state=state_to_proto(deal(1)), moves=["5S-7D"])
    expected = grpc_error(lambda: game.Play(request, timeout=10))
    with pytest.raises(InvalidRequest) as caught:
        client.play(deal(1), "5S-7D")
    assert caught.value.message == expected.details()


CLIENT_ERRORS: list[tuple[str, Callable[[Client], object], str]] = [
    ("unknown algorithm", lambda c: c.solve(deal(1), algorithm="fastest"), "algorithm 'fastest' is not one of"),
    ("negative budget", lambda c: c.solve(deal(1), max_nodes=-1), "max_nodes must be an integer in 0.."),
    ("zero timeout", lambda c: c.server_info(timeout_s=0), "timeout_s must be a number of seconds"),
    ("grid text", lambda c: c.solve("AC 2C"), "expected a game.State, got str"),  # type: ignore[arg-type]
    ("bool seed", lambda c: c.deal(True), "seed must be an integer"),
]


@pytest.mark.parametrize(("call", "match"), [e[1:] for e in CLIENT_ERRORS], ids=[e[0] for e in CLIENT_ERRORS])
def test_arguments_the_client_can_check_fail_before_sending(
    server: BoafServer, call: Callable[[Client], object], match: str
) -> None:
    attempts = Attempts()
    with (
        Client(f"127.0.0.1:{server.port}", interceptors=[attempts]) as counted,
        pytest.raises(InvalidRequest, match=match) as caught,
    ):
        call(counted)
    assert (caught.value.code, caught.value.attempts, attempts.codes) == (CODE.INVALID_ARGUMENT, 0, [])


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"timeout_s": -1}, "timeout_s"),
        ({"token": "two words"}, "token must be printable ASCII"),
        ({"retry": None}, ""),
    ],
    ids=["timeout", "token", "no retry"],
)
def test_bad_client_options_are_refused(options: dict[str, Any], match: str) -> None:
    if options.get("retry", 0) is None:
        with pytest.raises(InvalidRequest, match=r"attempts must be an integer in 1\.\.10"):
            RetryPolicy(attempts=0)
        with pytest.raises(InvalidRequest, match="backoffs"):
            RetryPolicy(initial_backoff_s=2, max_backoff_s=1)
        with pytest.raises(InvalidRequest, match=r"jitter must be in 0\.\.1"):
            RetryPolicy(jitter=1.5)
        return
    with pytest.raises(InvalidRequest, match=match):
        Client("127.0.0.1:1", **options)


# ---------------------------------------------------------------- retries


def _parked_call(server: BoafServer) -> tuple[grpc.Channel, Any, threading.Event]:
    # A Solve whose client never sends its request holds the server's one call slot until cancelled.
    never = threading.Event()

    def no_request() -> Iterator[bytes]:
        never.wait(60)
        yield b""

    channel = grpc.insecure_channel(f"127.0.0.1:{server.port}")
    parked = channel.stream_unary("/boaf.v1.Boaf/Solve").future(no_request(), timeout=60)
    assert wait_for(lambda: server.admission.calls == 1)
    return channel, parked, never


@pytest.fixture(scope="module")
def one_slot() -> Iterator[BoafServer]:
    running = ready_server(loopback_settings(max_concurrent_rpcs=1, metrics_enabled=False))
    yield running
    running.stop(0)


def busy_answers(server: BoafServer) -> float:
    sample = {"method": "GetServerInfo", "code": "RESOURCE_EXHAUSTED"}
    return server.metrics.registry.get_sample_value("boaf_requests_total", sample) or 0.0


def test_a_busy_server_is_retried_and_the_call_succeeds_once_a_slot_frees(one_slot: BoafServer) -> None:
    channel, parked, never = _parked_call(one_slot)

    def free_the_slot(attempt: int) -> None:
        if attempt == 2:  # two busy answers, then the slot frees before the third attempt
            never.set()
            parked.cancel()
            assert wait_for(lambda: one_slot.admission.calls == 0)

    attempts = Attempts(free_the_slot)
    before = busy_answers(one_slot)
    try:
        with Client(f"127.0.0.1:{one_slot.port}", interceptors=[attempts], retry=FAST_RETRY, timeout_s=60) as c:
            assert c.server_info().limits.max_concurrent_rpcs == 1
    finally:
        never.set()
        channel.close()
    assert attempts.codes == [CODE.RESOURCE_EXHAUSTED, CODE.RESOURCE_EXHAUSTED, CODE.OK]
    assert busy_answers(one_slot) == before + 2  # the server saw each attempt


def test_a_server_that_stays_busy_is_tried_the_policys_attempts_then_busy(one_slot: BoafServer) -> None:
    channel, parked, never = _parked_call(one_slot)
    attempts = Attempts()
    try:
        with (
            Client(f"127.0.0.1:{one_slot.port}", interceptors=[attempts], retry=FAST_RETRY, timeout_s=60) as c,
            pytest.raises(Busy) as caught,
        ):
            c.server_info()
    finally:
        never.set()
        parked.cancel()
        channel.close()
    assert attempts.codes == [CODE.RESOURCE_EXHAUSTED] * 4
    assert (caught.value.attempts, caught.value.code) == (4, CODE.RESOURCE_EXHAUSTED)
    assert "calls already in flight" in caught.value.message
    assert attempts.timeouts == sorted(attempts.timeouts, reverse=True)  # one deadline: each attempt has less of it
    assert all(0 < t <= 60 for t in attempts.timeouts)


def test_retries_never_run_past_the_calls_deadline(one_slot: BoafServer) -> None:
    # Waits of exactly 1 s (no jitter) in a 2.5 s deadline: attempt k starts 1 s * (k - 1) or later, so at most
    # 3 fit, of the 10 the policy allows; each attempt's timeout is what is left of the one deadline.
    channel, parked, never = _parked_call(one_slot)
    attempts = Attempts()
    slow = RetryPolicy(attempts=10, initial_backoff_s=1.0, max_backoff_s=1.0, multiplier=1.0, jitter=0.0)
    try:
        with (
            Client(f"127.0.0.1:{one_slot.port}", interceptors=[attempts], retry=slow) as c,
            pytest.raises(Busy) as caught,
        ):
            c.server_info(timeout_s=2.5)
    finally:
        never.set()
        parked.cancel()
        channel.close()
    assert 1 <= caught.value.attempts == len(attempts.codes) <= 3
    assert attempts.timeouts == sorted(attempts.timeouts, reverse=True) and attempts.timeouts[0] <= 2.5


def test_unavailable_with_a_retry_hint_past_the_deadline_raises_at_once() -> None:
    loader = GatedLoader()
    server = start_server(loopback_settings(metrics_enabled=False), loader)
    attempts = Attempts()
    try:
        assert loader.called.wait(30)
        with (
            Client(f"127.0.0.1:{server.port}", interceptors=[attempts], retry=FAST_RETRY) as c,
            pytest.raises(Unavailable) as caught,
        ):
            c.classify([deal(1)], timeout_s=RETRY_AFTER_S / 2)
        assert attempts.codes == [CODE.UNAVAILABLE]
        assert (caught.value.retry_after_s, caught.value.attempts) == (RETRY_AFTER_S, 1)
        assert "loading" in caught.value.message
        assert isinstance(caught.value, RuntimeError)  # Failure's branch
    finally:
        loader.release()
        server.stop(0)


def test_unavailable_is_retried_after_the_servers_hint() -> None:
    loader = GatedLoader()
    server = start_server(loopback_settings(metrics_enabled=False), loader)
    started: list[float] = []

    def become_ready(attempt: int) -> None:
        loader.release()
        assert server.wait_until_ready(120)
        started.append(time.monotonic())

    attempts = Attempts(become_ready)
    try:
        assert loader.called.wait(30)
        with Client(f"127.0.0.1:{server.port}", interceptors=[attempts], retry=FAST_RETRY, timeout_s=60) as c:
            assert c.classify([deal(1)]).predictions[0].solvable
        waited = time.monotonic() - started[0]
    finally:
        loader.release()
        server.stop(0)
    assert attempts.codes == [CODE.UNAVAILABLE, CODE.OK]
    assert waited >= RETRY_AFTER_S  # the hint, not the policy's 10 ms backoff (a lower bound: sleep never ends early)


# ---------------------------------------------------------------- TLS and tokens


TOKEN = "client-test-token"


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a certificate")
    directory = tmp_path_factory.mktemp("tls")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def test_tls_and_a_bearer_token(certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    server = ready_server(loopback_settings(tls_cert=cert, tls_key=key, api_tokens=TOKEN, metrics_enabled=False))
    address = f"localhost:{server.port}"
    try:
        with Client(address, root_certificates=cert.read_bytes(), token=TOKEN) as trusted:
            assert trusted.deal(1) == deal(1)
            assert trusted.solve(deal(1)).status == "solvable"
        with (
            Client(address, root_certificates=cert.read_bytes()) as anonymous,
            pytest.raises(Unauthenticated, match="Bearer") as caught,
        ):
            anonymous.server_info()
        assert (caught.value.code, caught.value.attempts) == (CODE.UNAUTHENTICATED, 1)
        with (
            Client(address, root_certificates=cert.read_bytes(), token="wrong") as wrong,
            pytest.raises(Unauthenticated),
        ):
            wrong.deal(1)
        credentials = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
        with Client(address, tls=credentials, token=TOKEN) as own_credentials:
            assert own_credentials.deal(2) == deal(2)
        # tls=True trusts the default roots, which gRPC reads from this variable when it is set
        env = {**os.environ, "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH": str(cert)}
        code = f"from boaf.client import Client\nprint(Client({address!r}, tls=True, token={TOKEN!r}).deal(3))"
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
        assert (result.returncode, result.stdout.strip()) == (0, str(deal(3))), result.stderr
        # no TLS: no connection
        with Client(address, token=TOKEN, retry=RetryPolicy(attempts=1)) as plain, pytest.raises(Unavailable):
            plain.deal(1, timeout_s=5)
    finally:
        server.stop(0)


# ---------------------------------------------------------------- lightness


LIGHT = """
import sys
heavy = {heavy!r}
import boaf.client
loaded = sorted(m for m in sys.modules if m.split(".")[0] in heavy)
assert not loaded, f"importing boaf.client loaded {{loaded}}"
with boaf.client.Client({address!r}) as boaf:
    state = boaf.deal(1)
    assert boaf.solve(state).status == "solvable"
    assert boaf.classify([state]).predictions[0].solvable
    assert boaf.play(state, "9H-9S").legal_moves
loaded = sorted(m for m in sys.modules if m.split(".")[0] in heavy)
assert not loaded, f"calls through boaf.client loaded {{loaded}}"
print("light")
"""


def test_the_client_and_its_calls_load_no_numba_kernels_onnxruntime_nor_numpy(server: BoafServer) -> None:
    code = LIGHT.format(heavy=HEAVY, address=f"127.0.0.1:{server.port}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOAF_")}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert (result.returncode, result.stdout.strip()) == (0, "light"), result.stderr


def test_a_state_from_grid_text_needs_no_deal(client: Client) -> None:
    state: State = parse_grid("5S JC QH 8H/KC 6H 3H 9H/3S JS TH TS/KS 7D AH 5C")
    assert play(state, client.solve(state).moves).is_solved
