"""Compatibility-graph features, computed plainly with igraph (the reference).

G has one node per stack (its top card) and an edge for each compatible pair,
whatever the positions. Every function here takes an ``igraph.Graph`` so that
tests can hand it any graph, not only ones that cards can make.

Edge cases (decided here, matched by the compiled kernel):

- a single node: connected, 1 component, 1 island, diameter 0, node
  connectivity 0, 1 spanning tree, determinant 0, and *no* odd bird (a lone
  stack is the goal, not a card that can never be flocked);
- articulation points are the cut vertices of any component, so they are
  defined for disconnected graphs too;
- islands are the components left when every bridge is removed; an isolated
  node is an island touching no bridge (not exterior).
"""

from __future__ import annotations

from typing import Any

import igraph
import numpy as np

from boaf.features.determinants import adjacency_determinant, spanning_tree_count
from boaf.game.cards import Card, compatible


def compatibility_graph(cards: list[Card]) -> igraph.Graph:
    """G for these top cards: node i is ``cards[i]``, an edge per compatible pair."""
    edges = [(i, j) for i in range(len(cards)) for j in range(i + 1, len(cards)) if compatible(cards[i], cards[j])]
    return igraph.Graph(n=len(cards), edges=edges)


def degree_features(g: igraph.Graph) -> dict[str, Any]:
    """flockability (edges), avg_flockability, degree_min/max/median/mean, odd_birds."""
    n = g.vcount()
    degrees = np.array(g.degree(), dtype=np.int64)
    return {
        "flockability": g.ecount(),
        "avg_flockability": g.ecount() / n,
        "degree_min": int(degrees.min()),
        "degree_max": int(degrees.max()),
        "degree_median": float(np.median(degrees)),
        "degree_mean": float(degrees.mean()),
        "odd_birds": int((degrees == 0).sum()) if n > 1 else 0,
    }


def connectivity_features(g: igraph.Graph) -> dict[str, Any]:
    """components, is_connected, node_connectivity and diameter."""
    components = len(g.connected_components())
    return {
        "components": components,
        "is_connected": int(components == 1),
        "node_connectivity": node_connectivity(g),
        "diameter": diameter(g),
    }


def node_connectivity(g: igraph.Graph) -> int:
    """Vertex connectivity: 0 when disconnected or n <= 1, n-1 for a complete graph."""
    if g.vcount() <= 1 or not g.is_connected():
        return 0
    return int(g.vertex_connectivity(checks=True))


def diameter(g: igraph.Graph) -> int:
    """The longest finite shortest path, in edges (0 without edges)."""
    if g.ecount() == 0:
        return 0
    return int(g.diameter(directed=False, unconn=True))


def critical_features(g: igraph.Graph) -> dict[str, Any]:
    """Araki's articulation_points, critical_nodes and critical_edges."""
    cut = set(g.articulation_points())
    critical = cut | {v for v, d in enumerate(g.degree()) if d == 1}
    edges = sum(1 for a, b in g.get_edgelist() if a in critical and b in critical)
    return {"articulation_points": len(cut), "critical_nodes": len(critical), "critical_edges": edges}


def island_features(g: igraph.Graph) -> dict[str, Any]:
    """islands (2-edge-connected components) and exterior_islands (touching one bridge)."""
    bridges = g.bridges()
    without = g.copy()
    without.delete_edges(bridges)
    membership = without.connected_components().membership
    touching = np.zeros(max(membership) + 1, dtype=np.int64)
    for edge in bridges:
        a, b = g.es[edge].tuple
        touching[membership[a]] += 1
        touching[membership[b]] += 1
    return {"islands": len(touching), "exterior_islands": int((touching == 1).sum())}


def matrix_features(g: igraph.Graph) -> dict[str, Any]:
    """Kahn's spanning_trees (0 if disconnected), adjacency_det = abs(det A), a2_zeros of A·A."""
    adjacency = np.array(g.get_adjacency().data, dtype=np.int64).reshape(g.vcount(), g.vcount())
    rows = adjacency.tolist()
    return {
        "spanning_trees": spanning_tree_count(rows) if g.is_connected() else 0,
        "adjacency_det": adjacency_determinant(rows),
        "a2_zeros": int(((adjacency @ adjacency) == 0).sum()),
    }


def graph_features(g: igraph.Graph) -> dict[str, Any]:
    """Every graph feature of SPEC §3 for ``g`` (at least one node), by name."""
    if g.vcount() == 0:
        raise ValueError("graph features need at least one node")
    return {
        "n_stacks": g.vcount(),
        **degree_features(g),
        **connectivity_features(g),
        **critical_features(g),
        **island_features(g),
        **matrix_features(g),
    }
