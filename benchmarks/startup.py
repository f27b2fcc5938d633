"""Start-up figures: ``boaf serve`` from an empty numba cache and from a warm one, and warm CLI commands.

    python benchmarks/startup.py [--warm-runs 3] [--cli-runs 5] [--no-cold]

Prints, for a cold start (an empty ``NUMBA_CACHE_DIR``): seconds from the process's
start to SERVING, and each kernel's compile time as the server logged it; for warm
starts (the cache the cold start filled): seconds to SERVING; and the warm
``boaf solve --seed 1`` / ``boaf classify GRID`` times, beside the floor of any
command that imports numba (``python -c "import numba"``), as a ratio.
Run it on a quiet machine: it times whole processes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BOAF = str(Path(sys.executable).with_name("boaf"))
GRID = "5S 7D QS 2C/4C AD 8D 5C/QH 7C TC 3C/8C 2D 9C 3D"


def serve_until_serving(cache: Path) -> tuple[float, list[dict[str, object]]]:
    """Seconds from ``boaf serve``'s start to its SERVING line, and its JSON log lines."""
    command = [BOAF, "serve", "--host", "127.0.0.1", "--port", "0", "--http-port", "0", "--metrics-port", "0"]
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "BOAF_LOG_LEVEL": "INFO"}
    started = time.perf_counter()
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
    assert process.stderr is not None
    logged: list[dict[str, object]] = []
    try:
        for line in process.stderr:
            if line.startswith("{"):
                logged.append(json.loads(line))
            if line.startswith("boaf: serving"):
                return time.perf_counter() - started, logged
        raise SystemExit(f"boaf serve exited with {process.wait()} before SERVING")
    finally:
        process.terminate()
        process.wait(60)


def command_seconds(argv: list[str], runs: int, cache: Path) -> list[float]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, env=env, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm-runs", type=int, default=3)
    parser.add_argument("--cli-runs", type=int, default=5)
    parser.add_argument("--no-cold", action="store_true", help="skip the cold start (uses a fresh cache anyway)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        cache = Path(directory)
        seconds, logged = serve_until_serving(cache)
        if not args.no_cold:
            print(f"cold start (empty numba cache): SERVING after {seconds:.1f} s")
            for entry in logged:
                if str(entry.get("message", "")).startswith("compiled kernel"):
                    print(f"    {entry['kernel']}: {float(entry['seconds']):.1f} s")  # type: ignore[arg-type]
            serving = next(e for e in logged if e.get("message") == "serving")
            print(f"    kernels {serving['kernels_s']} s, warm-up checks {serving['warm_up_s']} s (server's log)")
        warm = [serve_until_serving(cache)[0] for _ in range(args.warm_runs)]
        print(f"warm start: SERVING after {min(warm):.2f} s min, {statistics.median(warm):.2f} s median")
        floor = command_seconds([sys.executable, "-c", "import numba"], args.cli_runs, cache)
        print(f"floor, python -c 'import numba': {statistics.median(floor):.2f} s median")
        for name, argv in (
            ("boaf solve --seed 1", [BOAF, "solve", "--seed", "1"]),
            ("boaf classify GRID", [BOAF, "classify", GRID]),
        ):
            command_seconds(argv, 1, cache)  # the first loads the kernels the server did not (none, normally)
            times = command_seconds(argv, args.cli_runs, cache)
            median, ratio = statistics.median(times), statistics.median(times) / statistics.median(floor)
            print(f"warm {name}: {min(times):.2f} s min, {median:.2f} s median (x{ratio:.2f} the floor)")


if __name__ == "__main__":
    main()
