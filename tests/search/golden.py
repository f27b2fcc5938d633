"""Write the reference search's answers on the fixed random sample: ``python tests/search/golden.py``.

The reference search takes about ten minutes on these 5,000 states, too long for
every test run, so its answers are kept in ``tests/data/search/``; the tests
check the kernel against them, and against the live reference on a smaller sample.
"""

from __future__ import annotations

from conftest import GOLDEN, GOLDEN_COUNT, GOLDEN_SEED  # run as a script, this folder is on the path

from boaf.game import random_states
from boaf.search.reference import reference_solve


def main() -> None:
    """Solve the golden states with the reference (Compatible DFS) and write one line per state."""
    lines = [f"# random_states({GOLDEN_SEED}, {GOLDEN_COUNT}), 4x4: solvable (1/0) and nodes of search.reference_solve"]
    for state in random_states(GOLDEN_SEED, GOLDEN_COUNT):
        result = reference_solve(state)
        lines.append(f"{int(result.solvable)} {result.nodes}")
    GOLDEN.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
