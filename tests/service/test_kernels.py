"""The cold start: kernels compile before SERVING (puzzles after), in child processes, and never in a request.

The first start on a fresh clone is tested end to end by ``scripts/first-start``
(run by ``.ci/run`` on a fresh clone with an empty numba cache); these tests
cover the parts: the units, the child processes, the gating, the notices.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest
from kernel_layers import SEARCH_KERNEL
from numba.core.registry import CPUDispatcher as Dispatcher
from servers import GatedLoader, channel_to, loopback_settings, ready_server, start_server, wait_for

from boaf.game import deal
from boaf.service.cli import COMPILING_NOTICE, missing_extra
from boaf.service.core import warmup as kernels
from boaf.service.core.compile_log import COMPILING, CompileRecorder
from boaf.service.core.lifecycle import Stage
from boaf.service.grpc.server import BoafServer
from boaf.service.http import HttpServer
from boaf.service.rpc.converters import state_to_proto
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc, game_pb2, game_pb2_grpc

KERNEL_MODULES = (
    "boaf.game.bits",
    "boaf.game.graph",
    *(f"boaf.search.kernel.{module}" for module in (*SEARCH_KERNEL, "batch")),
    "boaf.features.compiled_graph",
    "boaf.features.compiled",
    "boaf.puzzles.compiled_enumeration",
)


def test_units_are_named_once_and_the_big_ones_compile_before_serving() -> None:
    assert len(set(kernels.UNIT_NAMES)) == len(kernels.UNITS)
    at_start = {unit.name for unit in kernels.UNITS if unit.at_start}
    assert {"game", "search", "search_late", "features", "progress"} <= at_start
    assert not {"best_n", "islands", "puzzles"} & at_start
    with pytest.raises(KeyError, match="the units are"):
        kernels.unit_named("nope")


ONE_COPY = """
import inspect, sys
from numba import types
from numba.core.registry import CPUDispatcher
from boaf.service.core import warmup as kernels
packages = ("boaf.game", "boaf.search", "boaf.features", "boaf.models", "boaf.puzzles")
def walk(phase):
    for module in sorted(name for name in sys.modules if ".".join(name.split(".")[:2]) in packages):
        for name, kernel in vars(sys.modules[module]).items():
            if isinstance(kernel, CPUDispatcher) and kernel.py_func.__module__ == module:
                params = list(inspect.signature(kernel.py_func).parameters)
                for signature in kernel.signatures:
                    literal = [f"{params[i]}={t}" for i, t in enumerate(signature) if isinstance(t, types.Literal)]
                    print(phase, f"{module}.{name}", len(kernel.signatures), ",".join(literal) or "-")
for unit in kernels.UNITS:
    if unit.at_start:
        unit.run()
walk("serving")
for unit in kernels.UNITS:
    if not unit.at_start:
        unit.run()
walk("all")
"""

# Island Merge's own copy of the search (``Config.islands``): the kernels its ``Config`` or ``Stack`` reach.
ISLAND_COPIES = {
    f"boaf.search.kernel.{name}"
    for name in (
        "batch.search_states",
        "dfs._search",
        "dfs._place_next",
        "dfs.new_stack",
        "generate._order",
        "islands.new_islands",
        "islands._enter_island",
        "islands._tag_at",
        "islands._tag_child",
    )
}


def test_every_unit_compiles_each_kernel_once_and_never_for_a_literal(tmp_path: Path) -> None:
    """A literal int reaching a compiled call (``n = 0`` before a loop, a constant argument) made numba compile
    a second copy of that kernel, and of everything under it, for the literal: a first start compiled
    ``_generate``, ``_graph_features`` and eight more twice. Every unit's work now types each kernel once
    for its argument types."""
    # Typing is what decides the copies, and only a compile types (a load from the cache does not): an empty
    # cache, unoptimised (NUMBA_OPT=0) since the machine code does not matter here.
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "NUMBA_OPT": "0"}
    done = subprocess.run(
        [sys.executable, "-c", ONE_COPY], capture_output=True, text=True, env=env, timeout=900, check=True
    )
    lines = [line.split(" ") for line in done.stdout.splitlines()]
    serving = [row[1:] for row in lines if row[0] == "serving"]
    rows = [row[1:] for row in lines if row[0] == "all"]
    assert len(serving) > 50 and len(rows) > len(serving)  # the walk saw the kernels
    assert [row for row in rows if row[2] != "-"] == []
    # Kernels with more than one signature take arrays of different types on purpose (``_grow_rows``, ``_grown``),
    # or are Island Merge's copy: at SERVING none but the first two has a second one. (So ``search_late`` types
    # ``dfs``'s callees exactly as ``dfs`` does, and the search's child loads them from the cache it fills.)
    assert {row[0] for row in serving if row[1] != "1"} == set()
    assert {row[0] for row in rows if row[1] != "1"} == {
        "boaf.search.kernel.best_n._grow_rows",
        "boaf.puzzles.compiled_enumeration._grown",
        *ISLAND_COPIES,
    }
    assert {row[1] for row in rows if row[0] in ISLAND_COPIES} == {"2"}
    # Subset H's flows are not in any served copy (``generate._subset_h_scores``): no unit types them.
    assert {"boaf.search.kernel.order._child_scores", "boaf.search.kernel.order._pair_flows"} & {
        row[0] for row in rows
    } == set()
    assert "boaf.search.kernel.order._square_scores" in {row[0] for row in rows}
    # Island Merge's work is typed only by its own unit, after SERVING: the served search holds none of it.
    island_work = {"boaf.search.kernel.islands._island_split", "boaf.search.kernel.islands._keep_inside"}
    assert island_work & {row[0] for row in serving} == set()
    assert island_work <= {row[0] for row in rows}


def test_after_a_server_has_started_every_unit_is_in_numbas_cache(server: BoafServer) -> None:
    assert all(server.kernels.is_ready(name) for name in kernels.UNIT_NAMES)
    assert [unit.name for unit in kernels.UNITS if not kernels.is_cached(unit)] == []


def test_no_rpc_compiles_a_kernel(server: BoafServer, stub: boaf_pb2_grpc.BoafStub) -> None:
    """Every RPC, every algorithm, small and whole-deck grids: numba loads nothing new and compiles nothing."""
    small, big = state_to_proto(deal(7)), state_to_proto(deal(3, rows=4, cols=13))
    recorder = CompileRecorder()
    loaded = _compiled_signatures()
    with recorder.recording(), channel_to(server) as channel:
        game = game_pb2_grpc.GameStub(channel)
        game.Deal(game_pb2.DealRequest(seed=5, rows=4, cols=13), timeout=30)
        hard = state_to_proto(deal(12226))  # an FFUD past the first search: the second search (deep gathering) runs
        learned = state_to_proto(deal(104))  # past both (63,502 nodes, not FFUD-like): the learned path runs
        answer = stub.Classify(pb.ClassifyRequest(states=[small, big, hard, learned]), timeout=60)
        assert answer.predictions[2].exact and not answer.predictions[3].exact
        stub.Features(pb.FeaturesRequest(states=[small, big]), timeout=60)
        for algorithm in pb.Algorithm.values():
            if algorithm:
                stub.Solve(pb.SolveRequest(state=small, algorithm=algorithm, max_nodes=2_000), timeout=60)
        stub.Solve(pb.SolveRequest(state=big, max_nodes=2_000), timeout=60)
        stub.GetServerInfo(pb.GetServerInfoRequest(), timeout=30)
        stub.AnalyzePuzzle(pb.AnalyzePuzzleRequest(state=state_to_proto(deal(9, rows=2, cols=3))), timeout=60)
        stub.GeneratePuzzle(pb.GeneratePuzzleRequest(cards=5, seed=2), timeout=60)
        game.Play(game_pb2.PlayRequest(state=small, moves=[]), timeout=30)
        # Each move's search at the model's budget, at the limit on the whole deck, and cut short (the model runs).
        for state, nodes in [(small, 0), (big, server.settings.hint_max_nodes), (hard, 1)]:
            game.Hint(game_pb2.HintRequest(state=state, max_nodes_per_move=nodes), timeout=60)
    assert recorder.compiled == []
    # Nor does any kernel gain a new compiled version (one loaded from the cache counts too: cold, it compiles).
    assert _compiled_signatures() == loaded


def _compiled_signatures() -> dict[str, int]:
    modules = [sys.modules[name] for name in KERNEL_MODULES]
    return {
        f"{module.__name__}.{name}": len(value.signatures)
        for module in modules
        for name, value in vars(module).items()
        if isinstance(value, Dispatcher)
    }


def test_a_puzzle_call_while_its_kernels_compile_is_unavailable_with_a_retry_hint(server: BoafServer) -> None:
    web = HttpServer(server)
    web.start()
    server.kernels.ready.discard("puzzles")  # as in the seconds after SERVING on a first start
    try:
        with channel_to(server) as channel:
            call = boaf_pb2_grpc.BoafStub(channel).AnalyzePuzzle.with_call
            with pytest.raises(grpc.RpcError) as caught:
                call(pb.AnalyzePuzzleRequest(state=state_to_proto(deal(9, rows=2, cols=3))), timeout=30)
        assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
        assert COMPILING in caught.value.details() and "retry" in caught.value.details()
        assert ("retry-after", str(kernels.RETRY_AFTER_S)) in caught.value.trailing_metadata()
        request = urllib.request.Request(
            f"http://127.0.0.1:{web.port}/boaf.v1.Boaf/GeneratePuzzle",
            data=b'{"cards": 5}',
            headers={"Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 503
        assert refused.value.headers["Retry-After"] == str(kernels.RETRY_AFTER_S)
        body = json.loads(refused.value.read())
        assert body["code"] == "unavailable" and COMPILING in body["message"]
    finally:
        server.kernels.ready.add("puzzles")
        web.stop()


@pytest.mark.parametrize(("algorithm", "unit"), [(pb.BEST_N, "best_n"), (pb.ISLAND_MERGE, "islands")])
def test_a_solve_while_its_kernels_compile_is_unavailable_and_other_solves_answer(
    server: BoafServer, stub: boaf_pb2_grpc.BoafStub, algorithm: pb.Algorithm, unit: str
) -> None:
    """Best-n DFS and Island Merge's copy of the search compile after SERVING: until then only their Solve
    calls are turned away, and they answer once their unit is ready."""
    state = state_to_proto(deal(7))
    server.kernels.ready.discard(unit)
    try:
        with pytest.raises(grpc.RpcError) as caught:
            stub.Solve(pb.SolveRequest(state=state, algorithm=algorithm), timeout=30)
        assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
        assert f"the {unit} kernels are not ready yet" in caught.value.details()
        for other in pb.Algorithm.values():
            if other and other != algorithm:
                assert stub.Solve(pb.SolveRequest(state=state, algorithm=other), timeout=30).status
    finally:
        server.kernels.ready.add(unit)
    answer = stub.Solve(pb.SolveRequest(state=state, algorithm=algorithm), timeout=30)
    assert answer.status == pb.SOLVABLE


def test_the_search_and_islands_units_are_cached_only_by_their_own_copy(tmp_path: Path) -> None:
    """Both units are ``search_states`` (the search's one entry), typed by a different ``Config``: each is cached
    only when its own copy is (a cache holding the served copy alone must not say Island Merge's is there)."""
    script = (
        "from boaf.service.core import warmup as kernels\n"
        "search, islands = kernels.unit_named('search'), kernels.unit_named('islands')\n"
        "print(kernels.is_cached(search), kernels.is_cached(islands))\n"
        "search.run()\n"
        "print(kernels.is_cached(search), kernels.is_cached(islands))\n"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}  # (unoptimised code is not cached)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "False", "True", "False"]


def test_readyz_and_unavailable_calls_say_what_the_server_is_doing() -> None:
    loader = GatedLoader()
    server = start_server(loopback_settings(http_port=0), loader)
    web = HttpServer(server)
    web.start()
    try:
        assert loader.called.wait(120)
        assert _readyz(web) == (503, {"status": "NOT_SERVING", "stage": "loading the model"})
        server.lifecycle.enter(Stage.COMPILING)  # what a first start says while the child processes compile
        assert _readyz(web) == (503, {"status": "NOT_SERVING", "stage": COMPILING})
        with channel_to(server) as channel, pytest.raises(grpc.RpcError) as caught:
            boaf_pb2_grpc.BoafStub(channel).GetServerInfo(pb.GetServerInfoRequest(), timeout=10)
        assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
        assert caught.value.details().startswith(COMPILING)
        loader.release()
        assert server.wait_until_ready(120)
        assert _readyz(web) == (200, {"status": "SERVING"})
    finally:
        loader.release()
        web.stop()
        server.stop(0)


def test_the_warm_up_has_its_own_time_limit_not_a_requests() -> None:
    """A 1 ms request time limit cannot fail the warm-up's checks (it did when compiling counted against it)."""
    server = ready_server(loopback_settings(solve_time_limit_ms=1))
    server.stop(0)


def test_a_child_process_compiles_into_the_cache_and_the_next_finds_it_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    first: list[str] = []
    done: list[str] = []
    assert kernels._compile_in_child(["game"], lambda c: first.append(c.kernel), on_unit=done.append)
    assert first == ["boaf.game.bits.shuffled_cells"] and done == ["game"]
    second: list[str] = []
    assert kernels._compile_in_child(["game", "game"], lambda c: second.append(c.kernel), on_unit=done.append)
    assert second == [] and done == ["game"] * 3  # one child, two units: each said once it is done


def test_a_failed_child_is_logged_and_costs_nothing_but_its_time(caplog: pytest.LogCaptureFixture) -> None:
    assert not kernels._compile_in_child(["no-such-unit"], lambda c: None)
    assert "a kernel compile process failed" in caplog.text


def test_the_cli_says_once_that_it_compiles_and_never_when_the_cache_has_it(tmp_path: Path) -> None:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    command = [sys.executable, "-c", "from boaf.service.cli import main; main()", "deal", "1"]
    cold = subprocess.run(command, capture_output=True, text=True, env=env, check=True, timeout=300)
    assert cold.stderr.splitlines() == [COMPILING_NOTICE]
    assert cold.stdout.startswith("JD 2D")
    warm = subprocess.run(command, capture_output=True, text=True, env=env, check=True, timeout=300)
    assert warm.stderr == "" and warm.stdout == cold.stdout


def test_a_command_that_needs_an_extra_says_which_one() -> None:
    # As on a plain install: the batch extra's Dask is not there.
    code = "import sys; sys.modules['distributed'] = None; from boaf.service.cli import main; main()"
    done = subprocess.run(
        [sys.executable, "-c", code, "census", "--seeds", "1:3"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "boaf: `boaf census` needs the batch extra (module 'distributed' is not installed): "
        "in a clone, pip install -e clients/python -e '.[batch]' (or install the boaf wheel with [batch])"
    )
    assert "Traceback" not in done.stderr


def test_only_modules_of_an_extra_are_explained() -> None:
    assert missing_extra(ModuleNotFoundError("x", name="lightgbm.basic"), "retrain") is not None
    assert "'.[train]'" in (missing_extra(ModuleNotFoundError("x", name="sklearn"), "retrain") or "")
    assert missing_extra(ModuleNotFoundError("x", name="numpy"), "solve") is None


def _readyz(web: HttpServer) -> tuple[int, object]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{web.port}/readyz", timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_sigterm_while_the_kernels_compile_ends_the_server_and_its_compile_processes(tmp_path: Path) -> None:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "BOAF_LOG_LEVEL": "INFO", "BOAF_HTTP_ENABLED": "false"}
    command = [sys.executable, "-c", "from boaf.service.cli import main; main()", "serve", "--port", "0"]
    command += ["--metrics-port", "0"]
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    for line in process.stderr:
        if COMPILING in line:
            break
    assert wait_for(lambda: bool(_compile_children(process.pid)), timeout=30), "a cold start compiles in children"
    children = _compile_children(process.pid)
    process.send_signal(signal.SIGTERM)
    assert process.wait(30) == 0
    assert wait_for(lambda: not any(Path(f"/proc/{pid}").exists() for pid in children), timeout=10)


def _compile_children(parent: int) -> list[int]:
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
            command = (status.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if fields.get("PPid", "").strip() == str(parent) and b"boaf.service.core.warmup" in command:
            found.append(int(status.parent.name))
    return found


def test_a_stop_while_the_children_compile_loads_nothing_here(monkeypatch: pytest.MonkeyPatch) -> None:
    # Stopped mid-compile, the children are ended and the cache is incomplete: loading the units in this process
    # would compile them here, and a server that exits while its loader is inside LLVM aborts (SIGTERM test above,
    # which then failed 2 of 2 full runs with exit -6 / -11).
    runs: list[str] = []
    cold = kernels.Unit("cold", ("boaf.game.bits:shuffled_cells",), lambda: runs.append("cold"), at_start=True)
    small = kernels.Unit("small", ("boaf.game.bits:shuffled_cells",), lambda: runs.append("small"), True, small=True)
    prepared = kernels.Kernels()
    monkeypatch.setattr(kernels, "is_cached", lambda unit: False)
    monkeypatch.setattr(prepared, "_compile_in_children", lambda units, parallel, started: prepared.stop())
    prepared.prepare([small, cold], on_stage=lambda stage: None)
    assert runs == ["small"]
    assert prepared.ready == {"small"}


def test_a_unit_is_ready_as_soon_as_its_own_child_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    """The background units compile side by side; the puzzle RPCs must not wait for Island Merge's longer
    compile: each unit is loaded, and ready, once its own child process ends."""
    slow_may_end = threading.Event()
    quick_ready = threading.Event()
    prepared = kernels.Kernels()

    def compile_in_child(names: list[str], on_compiled: object, running: object = None, on_unit: object = None) -> bool:
        if "slow" in names:
            assert slow_may_end.wait(60)
        return True

    def quick_loaded() -> None:
        quick_ready.set()

    slow = kernels.Unit("slow", ("boaf.game.bits:shuffled_cells",), lambda: None, at_start=False)
    quick = kernels.Unit("quick", ("boaf.game.bits:shuffled_cells",), quick_loaded, at_start=False)
    monkeypatch.setattr(kernels, "is_cached", lambda unit: False)
    monkeypatch.setattr(kernels, "_compile_in_child", compile_in_child)
    loader = threading.Thread(target=prepared.prepare, args=([slow, quick],), kwargs={"parallel": 2})
    loader.start()
    try:
        assert quick_ready.wait(30), "the quick unit waited for the slow one's child"
        assert wait_for(lambda: prepared.is_ready("quick"), timeout=10)
        assert not prepared.is_ready("slow")
    finally:
        slow_may_end.set()
        loader.join(60)
    assert prepared.ready == {"slow", "quick"}


def test_the_units_share_a_child_a_core_the_first_alone() -> None:
    units = [kernels.Unit(name, ("boaf.game.bits:shuffled_cells",), lambda: None, True) for name in "abcde"]

    def names(groups: list[list[kernels.Unit]]) -> list[list[str]]:
        return [[unit.name for unit in group] for group in groups]

    assert names(kernels._groups(units, 2)) == [["a"], ["b", "c", "d", "e"]]
    assert names(kernels._groups(units, 3)) == [["a"], ["b", "c"], ["d", "e"]]
    assert names(kernels._groups(units, 4)) == [["a"], ["b", "c"], ["d", "e"]]
    assert names(kernels._groups(units, 5)) == names(kernels._groups(units, 1)) == [[n] for n in "abcde"]


def test_a_unit_in_a_shared_child_is_ready_once_the_child_says_it_is_done(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three units on 2 cores: the first alone, the other two in one child. The second is ready as soon as
    that child reports it, while the third still compiles."""
    third_may_end = threading.Event()
    prepared = kernels.Kernels()

    def compile_in_child(
        names: list[str], on_compiled: object, running: object, on_unit: Callable[[str], None]
    ) -> bool:
        for name in names:
            if name == "third":
                assert third_may_end.wait(60)
            on_unit(name)
        return True

    units = [
        kernels.Unit(name, ("boaf.game.bits:shuffled_cells",), lambda: None, False)
        for name in ("first", "second", "third")
    ]
    monkeypatch.setattr(kernels, "is_cached", lambda unit: False)
    monkeypatch.setattr(kernels, "_compile_in_child", compile_in_child)
    loader = threading.Thread(target=prepared.prepare, args=(units,), kwargs={"parallel": 2})
    loader.start()
    try:
        assert wait_for(lambda: prepared.is_ready("second"), timeout=30), "the second unit waited for its child's end"
        assert not prepared.is_ready("third")
    finally:
        third_may_end.set()
        loader.join(60)
    assert prepared.ready == {"first", "second", "third"}


def test_the_compiling_notice_comes_before_any_kernel_compiles(monkeypatch: pytest.MonkeyPatch) -> None:
    """A small unit compiles in this process: the notice must come before its "compiled kernel" line."""
    said: list[str] = []
    small = kernels.Unit("small", ("boaf.game.bits:shuffled_cells",), lambda: said.append("small"), True, small=True)
    cold = kernels.Unit("cold", ("boaf.game.bits:shuffled_cells",), lambda: said.append("cold"), at_start=True)
    monkeypatch.setattr(kernels, "is_cached", lambda unit: False)
    monkeypatch.setattr(kernels, "_compile_in_child", lambda names, on_compiled, running=None, on_unit=None: True)
    kernels.Kernels().prepare([small, cold], on_stage=said.append)
    assert said == [COMPILING, "small", "cold"]


def test_the_log_counts_the_units_done_with_no_long_silence(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    ended = threading.Event()

    def compile_in_child(names: list[str], on_compiled: object, running: object = None, on_unit: object = None) -> bool:
        return names == ["quick"] or ended.wait(0.5)  # the slow one: some PROGRESS_EVERY_S long

    units = [kernels.Unit(name, ("boaf.game.bits:shuffled_cells",), lambda: None, True) for name in ("quick", "slow")]
    monkeypatch.setattr(kernels, "is_cached", lambda unit: False)
    monkeypatch.setattr(kernels, "_compile_in_child", compile_in_child)
    monkeypatch.setattr(kernels, "PROGRESS_EVERY_S", 0.1)
    with caplog.at_level("INFO", logger=kernels.__name__):
        kernels.Kernels().prepare(units, parallel=2, on_stage=lambda stage: None)
    progress = [m for m in caplog.messages if m.startswith("compiling kernels: ")]
    assert any(m.startswith("compiling kernels: 1 of 2 units done, ") for m in progress)
    assert len(progress) >= 3  # the slow unit's wait is not silent
    assert progress[-1].startswith("compiling kernels: 2 of 2 units done, ") and progress[-1].endswith(" s")
