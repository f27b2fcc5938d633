"""Puzzle generation by hill descent with random uphill steps (Neller 2005; Neller & Ziegler).

Each step mutates the current puzzle: 30% of steps swap a random unused card in
for a random card of the puzzle, 70% swap a random card's cell with another
cell's contents (empty or not). A step that raises the energy is kept with
probability 0.005, otherwise undone. The answer is the lowest-energy solvable
puzzle seen. Everything random comes from one seeded generator, and energies do
not depend on time, so a seed always gives the same puzzle.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from boaf.game import Card, State, format_grid, random_state
from boaf.game.cards import DECK_SIZE
from boaf.game.deals import seeded_rng
from boaf.puzzles.analysis import DEFAULT_BUDGET, analyze
from boaf.puzzles.energy import DEFAULT_ENERGY, PuzzleProbe, energy_named
from boaf.puzzles.errors import GenerationFailed, InvalidPuzzleRequest
from boaf.puzzles.limits import SearchLimits, check_stop, deadline_after, seconds_left
from boaf.puzzles.results import PuzzleAnalysis

CARD_SWAP_SHARE = 0.3
UPHILL_ACCEPT = 0.005
GENERATION_BUDGET = 1_000_000  # states enumerated per candidate before ratios are sampled
GENERATION_SAMPLES = 400  # states solved per sampled depth (fewer cannot tell the lowest ratios apart)
EXTRA_STEPS_FACTOR = 20  # after the iterations, at most this many times more steps to reach a solvable puzzle


def ranking_depth(cards: int) -> int:
    """The depth whose ratio ranks candidates: the halfway depth ⌊k/2⌋, but depth 6 past 14 cards.

    A 16-card candidate has millions of distinct states at depth 8, too many to
    enumerate at every step; its depth-6 ratio ranks random solvable 16-card
    deals much as the depth-8 ratio does (rank correlation 0.90 over 24 deals).
    The answer's own halfway ratio is then measured at the halfway depth.
    """
    return cards // 2 if cards <= 14 else 6


def default_iterations(cards: int) -> int:
    """The paper's iterations: 2500 below 10 cards, 800 for 10-12, 50 above 12."""
    if cards < 10:
        return 2500
    return 800 if cards <= 12 else 50


@dataclass(frozen=True)
class GeneratedPuzzle:
    """A generated puzzle with its energy, halfway ratio and one solution.

    ``halfway_exact`` says whether the ratio is exact or sampled (then
    ``halfway_interval`` is its 95% interval); ``steps`` is
    the local steps taken; ``elapsed_ms`` the wall time in milliseconds.
    """

    state: State
    energy: float
    energy_name: str
    halfway_ratio: float
    halfway_exact: bool
    halfway_interval: tuple[float, float]
    solution: tuple[str, ...]
    seed: int
    steps: int
    elapsed_ms: float

    def to_json(self) -> dict[str, Any]:
        """The CLI's JSON form (see ``boaf puzzle generate --json``)."""
        return {
            "grid": format_grid(self.state),
            "cards": self.state.n_stacks,
            "energy": self.energy,
            "energy_name": self.energy_name,
            "halfway_ratio": self.halfway_ratio,
            "halfway_exact": self.halfway_exact,
            "halfway_interval": list(self.halfway_interval),
            "solution": list(self.solution),
            "seed": self.seed,
            "steps": self.steps,
            "elapsed_ms": self.elapsed_ms,
        }


def generate(
    cards: int,
    *,
    seed: int = 0,
    iterations: int | None = None,
    energy: str = DEFAULT_ENERGY,
    rows: int = 4,
    cols: int = 4,
    budget: int = GENERATION_BUDGET,
    samples: int = GENERATION_SAMPLES,
    analysis_budget: int = DEFAULT_BUDGET,
    time_limit: float | None = None,
    cancel: np.ndarray | None = None,
    max_nodes: int | None = None,
) -> GeneratedPuzzle:
    """A solvable puzzle of ``cards`` cards on a ``rows × cols`` grid, minimising the named energy.

    ``iterations`` defaults to ``default_iterations(cards)``. Candidates are
    measured within ``budget`` states (``samples`` per sampled depth) and
    ranked at ``ranking_depth(cards)``; the answer's halfway ratio comes from
    ``analyze`` within ``analysis_budget``. ``time_limit``
    (seconds) and ``cancel`` (an ``int64[1]`` flag) stop the search with
    ``AnalysisStopped``; ``GenerationFailed`` when no solvable puzzle turns up.
    ``max_nodes`` is the node budget of each exact search (which bounds its
    memory; a candidate undecided within it counts as unsolvable).
    """
    _check_request(cards, rows, cols, iterations)
    score = energy_named(energy)
    steps = default_iterations(cards) if iterations is None else iterations
    deadline = deadline_after(time_limit)
    limits = SearchLimits(deadline, cancel, max_nodes)
    start = time.perf_counter()
    rng = seeded_rng(seed)
    energies: dict[tuple[Card | None, ...], tuple[float, PuzzleProbe]] = {}

    def measure(state: State) -> tuple[float, PuzzleProbe]:
        # Energies are pure functions of the cells, so revisited puzzles cost nothing.
        if state.cells not in energies:
            probe = PuzzleProbe(
                state, budget, samples, seed, cancel=cancel, ranking_depth=ranking_depth(cards), limits=limits
            )
            energies[state.cells] = (score(probe), probe)
            probe.forget_states()  # every candidate is remembered: keep its energy, not its states
        return energies[state.cells]

    current = random_state(rng, rows, cols, cards)
    current_energy, best_probe = measure(current)
    best_energy = current_energy if best_probe.solvable else None
    taken = 0
    while taken < steps or (best_energy is None and taken < steps * EXTRA_STEPS_FACTOR):
        check_stop(deadline, cancel, task="generation", doing="generating")
        candidate = local_step(current, rng)
        candidate_energy, probe = measure(candidate)
        if candidate_energy <= current_energy or rng.random() < UPHILL_ACCEPT:
            current, current_energy = candidate, candidate_energy
        if probe.solvable and (best_energy is None or candidate_energy < best_energy):
            best_energy, best_probe = candidate_energy, probe
        taken += 1
    if best_energy is None:
        raise GenerationFailed(f"no solvable {cards}-card puzzle found in {taken} steps (seed {seed})")
    final = _final_analysis(
        best_probe, analysis_budget, samples=samples, seed=seed, deadline=deadline, cancel=cancel, max_nodes=max_nodes
    )
    return GeneratedPuzzle(
        state=best_probe.state,
        energy=best_energy,
        energy_name=energy,
        halfway_ratio=final.halfway_ratio,
        halfway_exact=final.halfway.method == "exact",
        halfway_interval=(final.halfway.ratio_low, final.halfway.ratio_high),
        solution=tuple(best_probe.solution),
        seed=seed,
        steps=taken,
        elapsed_ms=(time.perf_counter() - start) * 1e3,
    )


def _final_analysis(
    probe: PuzzleProbe,
    analysis_budget: int,
    *,
    samples: int,
    seed: int,
    deadline: float | None,
    cancel: np.ndarray | None,
    max_nodes: int | None,
) -> PuzzleAnalysis:
    """The chosen puzzle's analysis: the probe's own when it was exact, else ``analyze`` within ``analysis_budget``
    states and the seconds left before ``deadline``."""
    if probe.exact is not None:  # already exact when the candidate fitted its budget
        return probe.exact
    return analyze(
        probe.state,
        analysis_budget,
        samples=samples,
        seed=seed,
        time_limit=seconds_left(deadline),
        cancel=cancel,
        max_nodes=max_nodes,
    )


def local_step(state: State, rng: np.random.Generator) -> State:
    """One random neighbour of ``state``: a card swapped in (30%) or two cells swapped (70%)."""
    cells = list(state.cells)
    occupied = [i for i, c in enumerate(cells) if c is not None]
    chosen = occupied[rng.integers(len(occupied))]
    if rng.random() < CARD_SWAP_SHARE and state.n_stacks < DECK_SIZE:  # with the whole deck out, no card is left
        used = set(state.top_cards())
        unused = [c for c in range(DECK_SIZE) if c not in used]
        cells[chosen] = unused[rng.integers(len(unused))]
    else:
        other = int(rng.integers(len(cells) - 1))
        other += other >= chosen  # any other cell, empty or not
        cells[chosen], cells[other] = cells[other], cells[chosen]
    return State.from_cells(state.rows, state.cols, cells)


def _check_request(cards: int, rows: int, cols: int, iterations: int | None) -> None:
    if isinstance(cards, bool) or not isinstance(cards, int) or not 2 <= cards <= rows * cols:
        raise InvalidPuzzleRequest(f"cards must be 2..{rows * cols} for a {rows}x{cols} grid, got {cards!r}")
    if iterations is not None and (isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 0):
        raise InvalidPuzzleRequest(f"iterations must be a non-negative integer, got {iterations!r}")
