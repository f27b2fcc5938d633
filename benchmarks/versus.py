"""The solver of this tree against an earlier commit's, in one run: the ablation table and the deals, as ratios.

    python benchmarks/versus.py                 # against 276dc88, the last one-file kernel (issue 24's "today")
    python benchmarks/versus.py --vs HEAD~3 --repeats 3 --deals 10000

The earlier tree is unpacked by ``git archive`` into ``out/bench/baseline-<ref>/``
and kept (with its numba cache). Each tree runs in a worker process of its own
(two packages named ``search`` cannot share one), both started before any
timing and fed the same tasks in turn, the order swapped every round: the
machine's noise then falls on both alike. Each task is timed inside its
worker by ``search``'s own elapsed time; the best of ``--repeats`` rounds is
kept. A task's node count must be the same in both trees: the script stops if not.

Rows: ``benchmarks/solver.py``'s ablation (ordered on the hard deals, with its
rules taken out one at a time; the option bits are named, since their values
changed), then Compatible and Ordered DFS over deals 1..``--deals`` (mean ms).
Ratio = this tree's seconds / the earlier tree's: below 1 is faster.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

if not __package__:  # run as a script: its own folder is sys.path[0]; the repository's root imports it as benchmarks
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from benchmarks.grid_worker import TreeImporter
from benchmarks.trees import unpacked

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "276dc88"
HARD_DEALS = (360528, 731678, 557593, 174024, -4965, -115618, 351410, -271101)
ABLATION = {  # a row name, and the option bits (by name) taken out of ordered
    "ordered": (),
    "without frozen": ("PRUNE_FROZEN",),
    "without sleep": ("SLEEP",),
    "without anchor": ("PRUNE_ANCHOR",),
    "v1": ("PRUNE_LEAF", "PRUNE_ANCHOR", "PRUNE_FROZEN", "SLEEP"),
}
DEAL_ALGORITHMS = ("compatible", "ordered", "island-merge", "best-n")


def serve(tree: str) -> None:
    """The worker: import ``tree``'s ``search``, then answer one JSON task per input line with one JSON line."""
    # The tree's own packages: the editable install maps boaf.* to this repository's folders, ahead of sys.path.
    sys.meta_path.insert(0, TreeImporter(Path(tree)))
    from boaf import search
    from boaf.game import deal
    from boaf.search import kernel

    ordered = search.algorithm_named("ordered")
    search.solve(deal(1))  # load (or compile) the kernel before any timing
    search.solve_deals(range(1, 3), "compatible")
    print(json.dumps({"ready": search.__file__}), flush=True)
    for line in sys.stdin:
        task = json.loads(line)
        if task["kind"] == "hard":
            bits = 0
            for name in task["without"]:
                bits |= getattr(kernel, name)
            algo = ordered.without(bits, "ordered-less") if bits else ordered
            result = search.solve(deal(task["seed"]), algo)
            answer = {"nodes": int(result.nodes), "seconds": result.elapsed_ms / 1e3, "status": str(result.status)}
        else:
            batch = search.solve_deals(range(1, task["deals"] + 1), task["algorithm"])
            answer = {"nodes": int(batch.nodes.sum()), "seconds": float(batch.elapsed_ms.mean()) / 1e3, "status": "-"}
        print(json.dumps(answer), flush=True)


class Worker:
    """One tree's worker process."""

    def __init__(self, tree: Path, command: list[str] | None = None) -> None:
        """Start ``command`` (this script's ``--serve`` of ``tree`` unless given) in ``tree``; wait for it."""
        self.process = subprocess.Popen(
            command or [sys.executable, __file__, "--serve", str(tree)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=tree,
        )
        ready = self.ask_line()
        if "ready" not in ready:
            raise RuntimeError(f"the worker of {tree} did not start: {ready}")
        print(f"  worker: {ready['ready']}", flush=True)

    def ask_line(self) -> dict[str, object]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("a worker died")
        answer: dict[str, object] = json.loads(line)
        return answer

    def ask(self, task: dict[str, object]) -> dict[str, object]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(task) + "\n")
        self.process.stdin.flush()
        return self.ask_line()

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)


def tasks(deals: int) -> list[tuple[str, dict[str, object]]]:
    """Every task, with its row label."""
    out: list[tuple[str, dict[str, object]]] = []
    for seed in HARD_DEALS:
        for name, without in ABLATION.items():
            out.append((f"{seed} {name}", {"kind": "hard", "seed": seed, "without": list(without)}))
    for algorithm in DEAL_ALGORITHMS:
        out.append((f"deals 1-{deals} {algorithm} (mean)", {"kind": "deals", "deals": deals, "algorithm": algorithm}))
    return out


def run(ref: str, repeats: int, deals: int) -> list[str]:
    """The table: for each task, both trees' nodes and best seconds, and the ratio."""
    workers = {"earlier": Worker(unpacked(ref)), "this": Worker(ROOT)}
    todo = tasks(deals)
    best: dict[tuple[str, str], float] = {}
    nodes: dict[tuple[str, str], int] = {}
    for round_ in range(repeats):
        order = ["earlier", "this"] if round_ % 2 == 0 else ["this", "earlier"]
        for label, task in todo:
            for name in order:
                answer = workers[name].ask(task)
                seconds = float(answer["seconds"])  # type: ignore[arg-type]
                best[label, name] = min(best.get((label, name), seconds), seconds)
                nodes[label, name] = int(answer["nodes"])  # type: ignore[call-overload]
            if nodes[label, "earlier"] != nodes[label, "this"]:
                raise SystemExit(f"{label}: {nodes[label, 'earlier']} nodes before, {nodes[label, 'this']} now")
        print(f"  round {round_ + 1} of {repeats} done", flush=True)
    for worker in workers.values():
        worker.close()
    lines = [
        f"| task | nodes | {ref} ms | this tree ms | ratio |",
        "|---|---|---|---|---|",
    ]
    hard_before = hard_now = 0.0
    for label, _ in todo:
        before, now = best[label, "earlier"], best[label, "this"]
        if not label.startswith("deals"):
            hard_before += before
            hard_now += now
        cells = f"{nodes[label, 'this']:,} | {before * 1e3:,.3f} | {now * 1e3:,.3f} | {now / before:.3f}"
        lines.append(f"| {label} | {cells} |")
    total = f"{hard_before * 1e3:,.1f} | {hard_now * 1e3:,.1f} | {hard_now / hard_before:.3f}"
    lines.append(f"| all hard-deal cells (sum) | | {total} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vs", default=BASELINE, help=f"the earlier commit (default {BASELINE})")
    parser.add_argument("--repeats", type=int, default=2, help="rounds (the best of them is kept)")
    parser.add_argument("--deals", type=int, default=2000, help="deals 1..N for the mean rows")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.serve:
        serve(options.serve)
        return
    print(f"== this tree against {options.vs}: best of {options.repeats} rounds, order swapped each round", flush=True)
    for line in run(options.vs, options.repeats, options.deals):
        print(line, flush=True)


if __name__ == "__main__":
    main()
