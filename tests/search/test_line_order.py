"""The line order of wide grids (``ORDER_LINES``): each move's child scored by its moves along rows and columns."""

from __future__ import annotations

import numpy as np
import pytest

from boaf.game import State
from boaf.game.cards import compatible
from boaf.game.deals import random_state, seeded_rng
from boaf.game.graph import line_table
from boaf.search import kernel, solve
from boaf.search.algorithms import ALGORITHMS, Algorithm
from boaf.search.kernel.bundles import KINDS
from boaf.search.kernel.generate import LINES_MIN_CELLS, _sort_into_kinds
from boaf.search.kernel.order import LINE_WEIGHTS, _line_order

ORDERED = ALGORITHMS["ordered"]
LINES = Algorithm("ordered-lines", ORDERED.kernel, ORDERED.options | kernel.ORDER_LINES, ORDERED.memo_min)


def move_graph(state: State) -> tuple[int, int]:
    """``(edges, isolated cells)`` of the move graph: occupied cells in line whose cards may join."""
    occupied = [i for i, c in enumerate(state.cells) if c is not None]
    degree = dict.fromkeys(occupied, 0)
    edges = 0
    for k, i in enumerate(occupied):
        for j in occupied[k + 1 :]:
            if _joins(state, i, j):
                edges += 1
                degree[i] += 1
                degree[j] += 1
    return edges, sum(1 for d in degree.values() if d == 0)


def _joins(state: State, i: int, j: int) -> bool:
    a, b = state.cells[i], state.cells[j]
    assert a is not None and b is not None
    return state.shares_line(i, j) and compatible(a, b)


@pytest.mark.parametrize(("rows", "cols"), [(4, 13), (6, 6), (5, 5), (2, 26)])
def test_the_children_are_sorted_by_their_move_graph_s_edges_and_isolated_cells(rows: int, cols: int) -> None:
    rng = seeded_rng(4_400 + rows)
    line = line_table(rows, cols)
    w_sq, w_m, w_iso = LINE_WEIGHTS
    assert w_sq == 0.0  # (the squares' part is tested with ``_square_scores``)
    for _ in range(30):
        state = random_state(rng, rows, cols, int(rng.integers(8, rows * cols + 1)))
        moves = [(m.source, m.target) for m in state.legal_moves()]
        if len(moves) < 2:
            continue
        cells = np.array([-1 if c is None else c for c in state.cells], dtype=np.int8)
        occupied = np.uint64(sum(1 << i for i, c in enumerate(state.cells) if c is not None))
        kinds = np.zeros(KINDS, dtype=np.uint64)
        _sort_into_kinds(cells, occupied, np.uint64(0), kinds)
        src = np.array([s for s, _ in moves], dtype=np.int8)
        dst = np.array([t for _, t in moves], dtype=np.int8)
        work = np.zeros((2, max(len(moves), 208)), dtype=np.int64)
        _line_order(cells, occupied, line, kinds, np.zeros(53), src, dst, work)
        expected = []
        for s, t in moves:
            child = state.apply(next(m for m in state.legal_moves() if (m.source, m.target) == (s, t)))
            edges, isolated = move_graph(child)
            expected.append(w_m * edges - w_iso * isolated)
        order = sorted(range(len(moves)), key=lambda k: -expected[k])  # stable: ties in generation order
        assert list(zip(src.tolist(), dst.tolist(), strict=True)) == [moves[k] for k in order]


def test_the_line_order_leaves_grids_of_up_to_16_cells_as_they_were() -> None:
    assert LINES_MIN_CELLS == kernel.NARROW_CELLS == 16
    rng = seeded_rng(4_417)
    for rows, cols in ((4, 4), (3, 5), (2, 8)):
        for _ in range(40):
            state = random_state(rng, rows, cols, int(rng.integers(5, rows * cols + 1)))
            plain, lines = solve(state, ORDERED), solve(state, LINES)
            assert (lines.status, lines.nodes, lines.moves) == (plain.status, plain.nodes, plain.moves)
