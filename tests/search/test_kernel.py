"""Kernel pieces against plain definitions: graph measures, deals, the ordering model."""

from __future__ import annotations

import json
from pathlib import Path

import igraph
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boaf import search
from boaf.game import compatible
from boaf.game.graph import graph_scratch
from boaf.search import kernel
from boaf.search.ordering import read_ordering, subset_h

card_sets = st.lists(st.integers(0, 51), min_size=0, max_size=20, unique=True)


def graph(cards: list[int]) -> igraph.Graph:
    edges = [(i, j) for i in range(len(cards)) for j in range(i + 1, len(cards)) if compatible(cards[i], cards[j])]
    return igraph.Graph(n=len(cards), edges=edges)


def mask(cards: list[int]) -> np.uint64:
    return np.uint64(sum(1 << c for c in cards))


@given(cards=card_sets)
@settings(max_examples=300, deadline=None)
def test_subset_h_matches_igraph(cards: list[int]) -> None:
    g = graph(cards)
    n = len(cards)
    connected = n > 1 and g.is_connected()
    kappa = 0 if not connected else (n - 1 if g.ecount() == n * (n - 1) // 2 else g.vertex_connectivity())
    degrees = g.degree() or [0]
    assert subset_h(cards) == (min(degrees), max(degrees), kappa)


@given(cards=card_sets)
@settings(max_examples=300, deadline=None)
def test_cut_vertices_are_the_articulation_points(cards: list[int]) -> None:
    g = graph(cards)
    cuts, connected = kernel.cut_vertices(mask(cards), kernel.compat_table(), graph_scratch())
    assert connected == (len(cards) <= 1 or g.is_connected())
    if connected:
        assert cuts == mask([cards[v] for v in g.articulation_points()])


def child_connectivities(present: int, compat: np.ndarray) -> dict[int, tuple[int, int]]:
    """Each card y's ``(from the parent's pair flows, node_connectivity)`` of G − y (floors 0 and G's less one)."""
    scratch = kernel.new_scratch(256, 2653)
    v, pairs, own = kernel.order._pair_flows(np.uint64(present), compat, scratch)
    assert own == kernel.node_connectivity(np.uint64(present), compat, graph_scratch(), 0)
    out = {}
    for y in range(64):
        if not present >> y & 1:
            continue
        child = np.uint64(present & ~(1 << y))
        lo = min((bin(int(compat[c]) & int(child)).count("1") for c in range(64) if int(child) >> c & 1), default=0)
        plain = kernel.node_connectivity(child, compat, graph_scratch(), 0)
        for floor in {0, max(own - 1, 0)}:
            if lo > floor:
                got = kernel.order._child_connectivity(y, child, lo, floor, v, pairs, compat, scratch)
                out[y] = (got, plain)
    return out


@given(cards=st.lists(st.integers(0, 51), min_size=2, max_size=16, unique=True))
@settings(max_examples=400, deadline=None)
def test_a_childs_connectivity_from_its_parents_flows_is_exact(cards: list[int]) -> None:
    for y, (got, plain) in child_connectivities(int(mask(cards)), kernel.compat_table()).items():
        assert got == plain, y


def test_a_childs_connectivity_is_exact_on_random_graphs() -> None:
    # graphs of every density on 16 vertices, where flows and repairs are many
    rng = np.random.default_rng(7)
    for _ in range(600):
        n = int(rng.integers(2, 17))
        upper = np.triu(rng.random((n, n)) < rng.uniform(0.15, 0.9), 1)
        adjacent = upper | upper.T
        compat = np.zeros(64, dtype=np.uint64)
        for i in range(n):
            compat[i] = np.uint64(sum(1 << j for j in range(n) if adjacent[i, j]))
        for y, (got, plain) in child_connectivities((1 << n) - 1, compat).items():
            assert got == plain, (adjacent.astype(int).tolist(), y)


def test_the_committed_ordering_model_reads(tmp_path: Path) -> None:
    model = search.default_ordering()
    assert 2 <= model.cutoff <= 16 and len(model.coefficients) == 3
    bad = tmp_path / "ordering.json"
    bad.write_text(json.dumps({"features": ["degree_min"], "intercept": 0, "coefficients": [1], "cutoff": 3}))
    with pytest.raises(search.InvalidOrderingModel, match="features must be"):
        read_ordering(bad)
    with pytest.raises(search.InvalidOrderingModel, match="ordering model"):
        read_ordering(tmp_path / "missing.json")


def _walk_states(seed: int, rows: int, cols: int, walks: int) -> list[tuple[np.ndarray, np.uint64]]:
    """States met on random walks from deal ``seed``, each with its packed labels kept up move by move."""
    from boaf.game import deal

    rng = np.random.default_rng(seed)
    root = np.array([-1 if c is None else c for c in deal(seed, rows=rows, cols=cols).cells], dtype=np.int8)
    labels = np.empty(52, dtype=np.int64)
    kernel.root_labels(root, labels)
    line = kernel.line_table(rows, cols)
    compat = kernel.compat_table()
    out = []
    for _ in range(walks):
        cells = root.copy()
        packed = np.uint64(kernel.keys._packed_labels(cells, labels))  # (numba hands a uint64 back as a Python int)
        while True:
            occupied = sum(1 << i for i in range(cells.shape[0]) if cells[i] >= 0)
            out.append((cells.copy(), packed))
            moves = [
                (s, t)
                for s in range(cells.shape[0])
                for t in range(cells.shape[0])
                if cells[s] >= 0
                and cells[t] >= 0
                and int(line[s]) >> t & 1
                and int(compat[cells[s]]) >> int(cells[t]) & 1
            ]
            if not moves:
                break
            s, t = moves[rng.integers(len(moves))]
            packed = np.uint64(kernel.keys._packed_child(packed, np.uint64(occupied), s, t, labels[cells[s]]))
            cells[t], cells[s] = cells[s], -1
    return out


@pytest.mark.parametrize(("rows", "cols"), [(4, 4), (3, 5), (2, 3)])
def test_one_word_memo_keys_are_exact(rows: int, cols: int) -> None:
    # Distinct states get distinct keys (packed up to narrow_max_stacks stacks, ranked above), and the
    # packed labels kept up move by move equal those recomputed from the cells.
    ncells = rows * cols
    keys: dict[int, bytes] = {}
    for seed in range(1, 41):
        states = _walk_states(seed, rows, cols, walks=25)
        labels = np.empty(52, dtype=np.int64)
        kernel.root_labels(states[0][0], labels)
        for cells, packed in states:
            assert packed == kernel.keys._packed_labels(cells, labels)
            occupied = np.uint64(sum(1 << i for i in range(ncells) if cells[i] >= 0))
            stacks = int((cells >= 0).sum())
            if stacks <= kernel.narrow_max_stacks(ncells):
                key = int(kernel.keys._narrow_key(packed, occupied, ncells))
            else:
                key = int(kernel.keys._ranked_key(cells, labels, occupied, ncells))
            assert key != 0
            # keys of states of different deals may meet: key on the state relative to its own root's labels
            state = bytes(labels[c] if c >= 0 else 255 for c in cells)
            assert keys.setdefault(key, state) == state


@pytest.mark.parametrize(("rows", "cols"), [(4, 4), (3, 5), (2, 2)])
def test_the_cell_cut_table_holds_the_cut_vertices_of_every_cell_set(rows: int, cols: int) -> None:
    from boaf.search.tables import cell_cut_table, line_table

    table, line = cell_cut_table(rows, cols), line_table(rows, cols)
    assert table.shape == (1 << (rows * cols),)
    scratch = graph_scratch()
    for m in np.random.default_rng(rows * cols).integers(1, 1 << (rows * cols), size=3000):
        cuts, _ = kernel.cut_vertices(np.uint64(m), line, scratch)
        assert int(table[m]) == int(cuts)
    assert cell_cut_table(5, 5).shape == (0,)  # past 16 cells the kernel finds them itself


@pytest.mark.parametrize(("rows", "cols"), [(2, 2), (3, 3), (4, 4), (2, 5), (5, 5), (6, 6), (4, 13), (13, 4)])
def test_cut_cells_are_the_articulation_points_of_the_cells(rows: int, cols: int) -> None:
    """``cut_cells`` (bridges of the rows-and-columns graph) against igraph on the cells' own graph, every
    component; and against ``all_cut_vertices``, on every cell set of grids up to 16 cells."""
    from boaf.game.graph import all_cut_vertices, cut_cells
    from boaf.search.tables import line_table

    ncells, line, scratch = rows * cols, line_table(rows, cols), graph_scratch()
    rng = np.random.default_rng(ncells)
    sets = range(1, 1 << ncells) if ncells <= 16 else (rng.random(ncells) < rng.uniform(0.1, 1) for _ in range(400))
    for m in sets:
        cells = [c for c in range(ncells) if m >> c & 1] if isinstance(m, int) else list(np.flatnonzero(m))
        occupied = np.uint64(sum(1 << int(c) for c in cells))
        got = int(cut_cells(occupied, rows, cols, scratch))
        assert got == int(all_cut_vertices(occupied, line, scratch))
        if ncells > 16 or m % 97 == 0:
            g = igraph.Graph(n=len(cells), edges=[
                (i, j) for i in range(len(cells)) for j in range(i) if int(line[cells[i]]) >> int(cells[j]) & 1
            ])  # fmt: skip
            assert got == sum(1 << int(cells[v]) for v in g.articulation_points())


@pytest.mark.parametrize("values", [4, 0])  # 4 score values: many ties; 0: a distinct float a card
@pytest.mark.parametrize("count", [5, 24, 25, 130, 360])
def test_children_sort_stably_by_descending_target_score(count: int, values: int) -> None:
    rng = np.random.default_rng(count)
    cells = rng.permutation(52)[:36].astype(np.int8)
    scores = rng.integers(0, values, size=52).astype(np.float64) if values else -rng.random(52)
    src = rng.integers(0, 36, size=count).astype(np.int8)
    dst = rng.integers(0, 36, size=count).astype(np.int8)
    expected = sorted(zip(src.tolist(), dst.tolist(), strict=True), key=lambda m: -scores[cells[m[1]]])
    scratch = kernel.new_scratch(256, 2653)
    targets = np.uint64(sum(1 << int(c) for c in set(cells[dst].tolist())))
    kernel.order._sort_children(cells, scores, src, dst, count, targets, scratch.sort_work)
    assert list(zip(src.tolist(), dst.tolist(), strict=True)) == expected


def test_the_kinds_masks_give_the_cells_whose_cards_join() -> None:
    """``generate`` walks ``_compatible_cells`` of the suit and rank masks instead of testing every pair in line
    against ``compat_table``: they agree on every card of random boards, and the bad cards' cells are found."""
    from boaf.search.kernel.bundles import KINDS
    from boaf.search.kernel.generate import _compatible_cells, _sort_into_kinds

    rng = np.random.default_rng(7)
    kinds = np.zeros(KINDS, dtype=np.uint64)
    for ncells in (16, 36, 52):
        for _ in range(30):
            cells = rng.permutation(52)[:ncells].astype(np.int8)
            cells[rng.random(ncells) < 0.3] = -1  # empty cells
            occupied = np.uint64(sum(1 << i for i in range(ncells) if cells[i] >= 0))
            bad = np.uint64(sum(1 << int(c) for c in rng.permutation(52)[:5]))
            bad_cells = _sort_into_kinds(cells, occupied, bad, kinds)
            assert int(bad_cells) == sum(
                1 << i for i in range(ncells) if cells[i] >= 0 and int(bad) >> int(cells[i]) & 1
            )
            for s in range(ncells):
                if cells[s] < 0:
                    continue
                joins = sum(
                    1 << t for t in range(ncells) if cells[t] >= 0 and (t == s or compatible(cells[s], cells[t]))
                )
                assert int(_compatible_cells(cells[s], kinds)) == joins


@pytest.mark.parametrize("values", [3, 0])
def test_children_placed_one_at_a_time_come_in_the_stable_sorted_order(values: int) -> None:
    """``dfs._place_next`` (``ORDER_LATER``): selection for the first children, one sort for the rest, gives the
    order of the stable sort by descending target score that ``generate`` would have made."""
    from boaf.search.kernel.bundles import BEST_SCORE
    from boaf.search.kernel.dfs import MemoPlan, _place_next, new_stack

    rng = np.random.default_rng(values)
    plan = MemoPlan(False, False, 0, np.empty(0, np.int64), np.empty(0, np.int64), 0, 1)
    scratch = kernel.new_scratch(256, 2653)
    for count in (1, 2, 3, 30, 160, 300):
        stack = new_stack(36, 361, 36, plan, 4, None)
        cells = rng.permutation(52)[:36].astype(np.int8)
        scores = rng.integers(0, values, size=52).astype(np.float64) if values else rng.random(52)
        src = rng.integers(0, 36, size=count).astype(np.int8)
        dst = rng.integers(0, 36, size=count).astype(np.int8)
        expected = sorted(zip(src.tolist(), dst.tolist(), strict=True), key=lambda m: -scores[cells[m[1]]])
        depth = 3
        stack.src[depth, :count], stack.dst[depth, :count] = src, dst
        stack.keys[depth, :52] = scores
        stack.keys[depth, BEST_SCORE] = max(scores[cells[dst]])  # as ``generate._order`` leaves it
        stack.children[depth], stack.nxt[depth], stack.later[depth] = count, 0, 1
        placed = []
        while stack.nxt[depth] < count:
            if stack.later[depth]:
                _place_next(cells, stack, np.int64(depth), scratch.sort_work)
            i = stack.nxt[depth]
            placed.append((int(stack.src[depth, i]), int(stack.dst[depth, i])))
            stack.nxt[depth] += 1
        assert placed == expected


def test_children_left_for_placement_sort_to_generates_own_order() -> None:
    """With ``ORDER_LATER`` (set by ``dfs`` past 16 cells), ``generate`` leaves the children in generation order,
    their targets' scores in ``scratch.scores`` and the highest at ``BEST_SCORE``: sorted stably by those scores
    they are the children ``generate`` sorts itself without it, on 5x5, 6x6 and 4x13 states deep in play."""
    from boaf.game import deal
    from boaf.game.arrays import state_to_array
    from boaf.search.algorithms import ALGORITHMS
    from boaf.search.kernel.bundles import BEST_SCORE, Board, board_of
    from boaf.search.kernel.generate import SQUARES_CUTOFF, generate
    from boaf.search.kernel.prune import ORDER_LATER
    from boaf.search.tables import grid_tables

    rng = np.random.default_rng(7)
    options = ALGORITHMS["ordered"].options
    checked = 0
    for rows, cols in ((5, 5), (6, 6), (4, 13)):
        tables, ncells = grid_tables(rows, cols), rows * cols
        width = ncells * min(ncells - 1, rows + cols - 2) + 1
        for seed in range(1, 13):
            state = deal(seed, rows=rows, cols=cols)
            for _ in range(int(rng.integers(0, ncells // 2))):
                moves = list(state.legal_moves())
                if not moves:
                    break
                state = state.apply(moves[int(rng.integers(len(moves)))])
            cells = state_to_array(state)
            sleep = np.zeros(ncells, dtype=np.uint64)
            masks = board_of(cells)  # numba hands named tuples back as Python ints: typed again as the search has them
            board = Board(np.uint64(masks.occupied), np.uint64(masks.present), np.int64(masks.n_stacks))
            runs = {}
            for later in (0, ORDER_LATER):
                config = kernel.Config(options | later, None, 0, 4, 1, None)
                scratch = kernel.new_scratch(256, width)
                src, dst = np.zeros(width, np.int8), np.zeros(width, np.int8)
                count = generate(cells, board, tables, config, src, dst, sleep, scratch)
                children = list(zip(src[:count].tolist(), dst[:count].tolist(), strict=True))
                runs[later] = (children, scratch.scores.copy())
            (sorted_by_generate, _), (left, scores) = runs[0], runs[ORDER_LATER]
            if len(left) > 1 and state.n_stacks > SQUARES_CUTOFF:  # the state's children are ordered
                assert scores[BEST_SCORE] == max(scores[cells[t]] for _, t in left)
                assert sorted(left, key=lambda m: -scores[cells[m[1]]]) == sorted_by_generate
                checked += 1
    assert checked > 20
