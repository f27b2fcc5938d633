"""Every RPC through boaf.client against a live server, as an app that installed boaf-client alone would call it.

    python live_calls.py HOST:PORT

Run by scripts/check-dists in fresh venvs outside the repository (the client's wheel and its
dependencies, nothing else), once per protobuf and grpcio version it tests. It needs only what
boaf-client brings: it checks that, and that no heavy library was loaded, before it exits.
Prints one line, ``client: N calls passed on protobuf X, grpcio Y``; any failure raises.
"""

from __future__ import annotations

import sys

import google.protobuf
import grpc

from boaf.client import Client, InvalidRequest
from boaf.game import InvalidInput, parse_grid

README_GRID = "5S JC QH 8H/KC 6H 3H 9H/3S JS TH TS/KS 7D AH 5C"
HEAVY = ("numpy", "numba", "llvmlite", "onnxruntime", "igraph")


def calls(address: str) -> int:
    """Call every RPC once (and one refused call); return how many calls were made."""
    state = parse_grid(README_GRID)
    with Client(address, timeout_s=60) as boaf:
        (prediction,) = boaf.classify([state]).predictions
        assert 0.0 <= prediction.p_solvable <= 1.0 and prediction.solvable, prediction
        solution = boaf.solve(state)
        assert solution.status == "solvable" and solution.moves, solution
        table = boaf.features([state])
        assert len(table.vectors) == 1 and len(table.vectors[0]) == len(table.names) > 10
        info = boaf.server_info()
        assert info.limits.max_batch_size > 0 and info.model_version
        analysis = boaf.analyze_puzzle(parse_grid("AC 2C 3C"), samples=10)
        assert analysis.by_depth, analysis
        puzzle = boaf.generate_puzzle(6, rows=3, cols=3, seed=5)
        assert puzzle.solution, puzzle
        dealt = boaf.deal(1)
        played = boaf.play(dealt, [])
        assert played.legal_moves and not played.won
        hints = boaf.hint(dealt)
        assert hints.moves and hints.verdict, hints
        try:
            boaf.play(state, "5S-7D")
        except InvalidInput as error:  # the server-side branch catches the client's error: one class
            assert isinstance(error, InvalidRequest) and error.code == grpc.StatusCode.INVALID_ARGUMENT
        else:
            raise AssertionError("an illegal move was accepted")
    return 10


def main(address: str) -> None:
    made = calls(address)
    loaded = sorted(name for name in sys.modules if name.partition(".")[0] in HEAVY)
    assert not loaded, f"the client loaded {loaded}"
    print(f"client: {made} calls passed on protobuf {google.protobuf.__version__}, grpcio {grpc.__version__}")


if __name__ == "__main__":
    main(sys.argv[1])
