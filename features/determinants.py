"""Exact integer determinants for Kahn's matrix features.

Floating-point determinants lose exactness past 2^53, and spanning-tree counts
of 16-card deals reach about 7e16, so these work on Python integers throughout
(fraction-free Bareiss elimination: every intermediate is itself a minor, and
every division is exact).
"""

from __future__ import annotations

from collections.abc import Sequence


def integer_determinant(matrix: Sequence[Sequence[int]]) -> int:
    """The exact determinant of a square integer matrix (1 for the 0×0 matrix)."""
    a = [[int(x) for x in row] for row in matrix]
    n = len(a)
    if any(len(row) != n for row in a):
        raise ValueError("integer_determinant needs a square matrix")
    sign, previous = 1, 1
    for k in range(n - 1):
        if a[k][k] == 0:
            swap = next((r for r in range(k + 1, n) if a[r][k] != 0), None)
            if swap is None:
                return 0
            a[k], a[swap] = a[swap], a[k]
            sign = -sign
        pivot = a[k][k]
        for i in range(k + 1, n):
            for j in range(k + 1, n):
                a[i][j] = (a[i][j] * pivot - a[i][k] * a[k][j]) // previous
        previous = pivot
    return sign * a[n - 1][n - 1] if n else 1


def spanning_tree_count(adjacency: Sequence[Sequence[int]]) -> int:
    """Spanning trees of a simple graph by Kirchhoff's matrix-tree theorem.

    ``adjacency`` is the n×n 0/1 matrix. The count is 1 for a single node and 0
    for a disconnected graph.
    """
    n = len(adjacency)
    if n == 0:
        return 0
    laplacian = [[sum(adjacency[i]) if i == j else -int(adjacency[i][j]) for j in range(n - 1)] for i in range(n - 1)]
    return integer_determinant(laplacian)


def adjacency_determinant(adjacency: Sequence[Sequence[int]]) -> int:
    """abs(det(A)) for the adjacency matrix ``A``, exact (Kahn's "determinant")."""
    return abs(integer_determinant(adjacency))
