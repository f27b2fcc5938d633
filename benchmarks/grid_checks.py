"""The answers behind ``grids.py --vs``: both trees agree, and every hard "unsolvable" is confirmed.

A benchmark of speed counts only right answers. For each set that both trees ran:

- every state that both trees decided gets the same answer from each (``disagreements``);
- every state this tree calls unsolvable, where REF's search took over ``CONFIRM_NODES``
  nodes or stopped unknown, is solved again by REF's solver with no time limit (its
  memory cap still holds): REF must call it unsolvable too (``confirmed``). A search
  that proved a state unsolvable after so many nodes is the likeliest place for a wrong
  pruning rule to hide, and REF's answer comes from other code.

``grids.run`` prints one line a set and exits non-zero when any check fails.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from boaf import search
from boaf.game import State, format_grid

CONFIRM_NODES = 100_000
DECIDED = (str(search.SOLVABLE), str(search.UNSOLVABLE))


@dataclass
class Checked:
    """One set's checks: the states both trees decided, those they disagree on, and the confirmations."""

    decided_by_both: int = 0
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    confirmed: int = 0
    unconfirmed: list[dict[str, Any]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True when no two answers differ and every answer to confirm was confirmed."""
        return not self.disagreements and not self.unconfirmed

    def line(self, grid: str, name: str, ref: str) -> str:
        """The set's line under the table."""
        to_confirm = self.confirmed + len(self.unconfirmed)
        verdict = "passed" if self.passed else "FAILED"
        return (
            f"  answers {grid} {name}: {verdict}: {self.decided_by_both:,} states decided by both trees, "
            f"{len(self.disagreements):,} answers differ; {self.confirmed:,} of {to_confirm:,} unsolvable answers "
            f"over {CONFIRM_NODES:,} nodes on {ref} confirmed by {ref} without a time limit"
        )


def cross_check(
    states: Sequence[State],
    this: Sequence[Any],
    ref: Sequence[Any],
    solve_ref: Callable[[State, float | None], Any],
) -> Checked:
    """The checks of one set: ``this`` and ``ref`` are the trees' ``grids.Timing``\\ s, state by state.

    ``solve_ref(state, None)`` runs REF's solver without a time limit.
    """
    out = Checked()
    for i, (state, mine, theirs) in enumerate(zip(states, this, ref, strict=True)):
        a, b = mine.last, theirs.last
        if a.status in DECIDED and b.status in DECIDED:
            out.decided_by_both += 1
            if a.status != b.status:
                out.disagreements.append({"state": i, "grid": format_grid(state), "this": a.status, "ref": b.status})
        hard = b.nodes > CONFIRM_NODES or b.status not in DECIDED
        if a.status == str(search.UNSOLVABLE) and hard:
            again = solve_ref(state, None)
            if again.status == str(search.UNSOLVABLE):
                out.confirmed += 1
            else:
                out.unconfirmed.append(
                    {"state": i, "grid": format_grid(state), "ref": again.status, "reason": again.reason}
                )
    return out
