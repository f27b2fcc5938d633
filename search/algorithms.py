"""The search algorithms by name, and how each one drives the kernel.

Every algorithm is exact; they differ in pruning, child order and node count.

- ``constrained``: plain DFS with a memo of unsolvable states (Araki's baseline).
- ``compatible``: adds the connectivity pruning: a child whose compatibility
  graph is disconnected is skipped (this subsumes odd birds).
- ``ordered`` (the default): Compatible DFS whose children are sorted, at
  nodes of more than 6 stacks, by the sum of squared degrees of their
  compatibility graph, ties broken by flockability (``ORDER_SQUARES``).
  The paper's order, the subset-H linear regression above the model's
  ``cutoff`` stacks (``ORDERED_SUBSET_H``, kept for comparison), takes 1.9x
  the time and 1.5x the nodes on deals 1-10,000: its connectivity flows cost
  more than they save, and the squares also order below the cutoff.
  It also drops children whose occupied cells no longer link up by rows and
  columns (cells only ever empty, so such a grid can never merge), and does not
  memoise states of fewer than 4 stacks (searching those again is cheaper
  than a cache miss). And it drops children where a card of degree 1 is
  stranded: its one neighbour can no longer come into line with it, or (the
  anchor rule) that neighbour has one other neighbour, which can no longer
  reach a cell in line with both (proofs in ``kernel.prune._leaf_stranded``; these
  two rules decide deals 360528 and 731678 at the root's children).

``compatible`` and ``ordered`` use sleep sets: two moves on four distinct cells
commute, so after searching ``m`` and then ``x`` from a state, the children of
``x`` need not try ``m`` again (proof with the memo in ``kernel.prune._fall_asleep``).
Every child skipped that way would have been found in the memo, so
``compatible`` still expands exactly the reference's nodes.
- ``best-n``: Neller's best-n DFS, cohorts of ``n`` (default 4) nodes of equal
  flockability, children ordered by flockability.
- ``island-merge``: Araki's Island Merge on Compatible DFS. At a bridge of G
  whose two sides (islands) each hold two cards or more, one side is
  collapsed to its bridge card before any move on the other (both choices are
  searched); sides of a single card are merged into their neighbour. The memo
  key carries the island under way. Proof of exactness in
  ``kernel.islands._island_split``: in any solution, the moves on the side brought
  down first commute to the front.

``constrained`` and ``compatible`` expand exactly the nodes the reference search
expands, in the same order; the tests hold them to that.
"""

from __future__ import annotations

from dataclasses import dataclass

from boaf.search import kernel
from boaf.search.errors import UnknownAlgorithm


@dataclass(frozen=True)
class Algorithm:
    """How one named algorithm runs: which kernel, which option bits, memo threshold."""

    name: str
    kernel: int
    options: int
    memo_min: int = 0  # fewest stacks for a state to be memoised

    @property
    def prunes_disconnected(self) -> bool:
        """True when a disconnected compatibility graph ends the search at once."""
        return self.options & kernel.PRUNE_GRAPH != 0

    def deep_gathering(self) -> Algorithm:
        """The same algorithm whose gathering at ``GATHER_AGAIN`` nodes works eight times longer (``GATHER_DEEP``).

        Classify's second search of a deal that looks like an FFUD (``boaf.models.exact_path``) runs it;
        an algorithm without gathering is returned as it is.
        """
        if self.options & kernel.PRUNE_GATHER == 0:
            return self
        return Algorithm(f"{self.name}+deep-gathering", self.kernel, self.options | kernel.GATHER_DEEP, self.memo_min)

    def without(self, options: int, name: str) -> Algorithm:
        """The same algorithm without the option bits ``options``, called ``name`` (for ablations)."""
        return Algorithm(name, self.kernel, self.options & ~options, self.memo_min)


ALGORITHMS: dict[str, Algorithm] = {
    a.name: a
    for a in (
        Algorithm("constrained", kernel.DFS_KERNEL, 0),
        Algorithm("compatible", kernel.DFS_KERNEL, kernel.PRUNE_GRAPH | kernel.SLEEP),
        Algorithm(
            "ordered",
            kernel.DFS_KERNEL,
            kernel.PRUNE_GRAPH
            | kernel.ORDER
            | kernel.ORDER_SQUARES
            | kernel.PRUNE_CELLS
            | kernel.PRUNE_LEAF
            | kernel.PRUNE_ANCHOR
            | kernel.PRUNE_FROZEN
            | kernel.PRUNE_BLOCKS
            | kernel.PRUNE_OPEN
            | kernel.PRUNE_GATHER
            | kernel.SLEEP,
            memo_min=4,
        ),
        Algorithm("best-n", kernel.BEST_N_KERNEL, kernel.PRUNE_GRAPH),
        Algorithm("island-merge", kernel.DFS_KERNEL, kernel.PRUNE_GRAPH | kernel.ISLANDS),
    )
}
ALGORITHM_NAMES = tuple(ALGORITHMS)
ORDERED_SUBSET_H = Algorithm(
    "ordered-subset-h",
    kernel.DFS_KERNEL,
    ALGORITHMS["ordered"].options & ~kernel.ORDER_SQUARES,
    ALGORITHMS["ordered"].memo_min,
)
"""``ordered`` with the paper's order (subset H above the cutoff), for benchmarks and tests; not served."""
DEFAULT_ALGORITHM = "ordered"


def algorithm_named(name: str | Algorithm) -> Algorithm:
    """The algorithm called ``name``; raises ``UnknownAlgorithm`` listing the known names.

    An ``Algorithm`` is returned as it is (benchmarks use variants, such as
    ``ordered`` without one pruning rule, through the same entry points).
    """
    if isinstance(name, Algorithm):
        return name
    try:
        return ALGORITHMS[name]
    except KeyError:
        known = ", ".join(ALGORITHM_NAMES)
        raise UnknownAlgorithm(f"unknown algorithm {name!r}: choose one of {known}") from None
