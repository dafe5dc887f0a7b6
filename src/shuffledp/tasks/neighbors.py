"""Nearest-neighbour search of location-based social systems (PIC §4.1; §7.2).

``radius_neighbors``: for each report, every *other* report within Euclidean
distance tau (§7.2, tau = 0.2).  ``k_nearest_neighbors``: the k closest other
reports.  Both run on one group with k-d trees (``scipy.spatial.cKDTree``) and
return a `Neighbors` table in CSR layout; report ``i``'s output is its row.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.spatial import cKDTree

from shuffledp.errors import DomainError, ShapeError
from shuffledp.tasks.base import (
    PAIR_DTYPE,
    as_reports,
    canonical_order,
    check_radius,
    inverse_permutation,
    overflow_exponent,
    overflow_safe,
)

__all__ = ["Neighbors", "k_nearest_neighbors", "radius_neighbors"]


@dataclass(frozen=True)
class Neighbors:
    """Neighbour lists of ``n`` reports in CSR layout.

    Row ``i`` is ``indices[indptr[i]:indptr[i+1]]`` (indices of other reports of
    the same group) with their reported ``distances``, by increasing distance.

    Attributes
    ----------
    indptr : numpy.ndarray of int64, shape (n + 1,)
        Row offsets.
    indices : numpy.ndarray of int64, shape (nnz,)
        Neighbour indices, row by row.
    distances : numpy.ndarray of float64, shape (nnz,)
        Distances between the reports, aligned with ``indices``.

    Examples
    --------
    >>> from shuffledp.tasks import radius_neighbors
    >>> nb = radius_neighbors([[0.0, 0.0], [0.1, 0.0], [1.0, 0.0]], radius=0.5)
    >>> len(nb), nb.counts, nb.row(0)
    (3, array([1, 1, 0]), array([1]))
    """

    indptr: np.ndarray
    indices: np.ndarray
    distances: np.ndarray

    def __len__(self) -> int:
        return self.indptr.size - 1

    @property
    def counts(self) -> np.ndarray:
        """Number of neighbours of each report."""
        return np.diff(self.indptr)

    def row(self, i: int) -> np.ndarray:
        """Neighbour indices of report ``i``."""
        return self.indices[self._slice(i)]

    def pairs(self) -> np.ndarray:
        """Every (report, neighbour) pair as an int64 array of shape (nnz, 2)."""
        rows = np.repeat(np.arange(len(self), dtype=np.int64), self.counts)
        return np.column_stack([rows, self.indices]).astype(np.int64)

    def user_output(self, i: int) -> bytes:
        """Report ``i``'s output: its neighbours as consecutive PAIR_DTYPE records (16 bytes each)."""
        s = self._slice(i)
        out = np.empty(s.stop - s.start, dtype=PAIR_DTYPE)
        out["index"], out["distance"] = self.indices[s], self.distances[s]
        return out.tobytes()

    def _slice(self, i: int) -> slice:
        if not 0 <= i < len(self):
            raise ShapeError(f"i must be a report index in [0, {len(self)}), got {i!r}")
        return slice(int(self.indptr[i]), int(self.indptr[i + 1]))


def _table(rows: np.ndarray, cols: np.ndarray, X: np.ndarray, rank: np.ndarray) -> Neighbors:
    """CSR table of the directed pairs ``(rows, cols)``; each row by (distance, canonical rank).

    Distances are ordered on overflow-safe coordinates; a reported distance beyond float64 is inf.
    """
    e = overflow_exponent(X)
    Xs = np.ldexp(X, -e) if e else X
    scaled = np.linalg.norm(Xs[rows] - Xs[cols], axis=1)
    order = np.lexsort((rank[cols], scaled, rows))
    with np.errstate(over="ignore"):
        dist = np.ldexp(scaled, e) if e else scaled
    indptr = np.zeros(len(X) + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=len(X)), out=indptr[1:])
    return Neighbors(indptr, cols[order].astype(np.int64), dist[order])


def radius_neighbors(reports: Any, radius: float) -> Neighbors:
    """For each report, the other reports at Euclidean distance <= ``radius`` (PIC §7.2).

    Parameters
    ----------
    reports : array_like, shape (n, d)
        The reports of one group (finite coordinates).
    radius : float
        The radius tau (§7.2 uses 0.2), finite and >= 0.

    Returns
    -------
    Neighbors
        Row ``i``: the other reports within ``radius`` of report ``i``, nearest
        first (ties by canonical order, so the result is permutation-equivariant).

    Raises
    ------
    ShapeError
        When ``reports`` is not an (n, d) numeric array.
    DomainError
        For a non-finite report or a negative or non-finite radius.

    Examples
    --------
    >>> from shuffledp.tasks import radius_neighbors
    >>> radius_neighbors([[0.0, 0.0], [0.1, 0.0], [1.0, 0.0]], radius=0.5).pairs()
    array([[0, 1],
           [1, 0]])
    """
    X = as_reports(reports, "reports")
    r = check_radius(radius, "radius")
    order = canonical_order(X)
    if len(X) < 2:
        empty = np.zeros(0, dtype=np.int64)
        return _table(empty, empty, X, order)
    (Xs,), r = overflow_safe(X, radius=r)  # any finite report: distances never overflow to inf
    p = order[cKDTree(Xs[order]).query_pairs(r, output_type="ndarray")]
    rows = np.concatenate([p[:, 0], p[:, 1]])
    cols = np.concatenate([p[:, 1], p[:, 0]])
    return _table(rows, cols, X, inverse_permutation(order))


def k_nearest_neighbors(reports: Any, k: int) -> Neighbors:
    """For each report, the ``k`` closest other reports (1 <= k <= n - 1).

    Ties at the k-th distance are resolved by the k-d tree built on the
    canonical order, so the result does not depend on the input order.

    Parameters
    ----------
    reports : array_like, shape (n, d)
        The reports of one group (finite coordinates), n >= 2.
    k : int
        Neighbours per report, in [1, n - 1].

    Returns
    -------
    Neighbors
        Row ``i``: the ``k`` reports nearest to report ``i``, nearest first.

    Raises
    ------
    ShapeError
        When ``reports`` is not an (n, d) numeric array.
    DomainError
        For a non-finite report or k outside [1, n - 1].

    Examples
    --------
    >>> from shuffledp.tasks import k_nearest_neighbors
    >>> nb = k_nearest_neighbors([[0.0, 0.0], [0.1, 0.0], [1.0, 0.0]], k=1)
    >>> nb.row(2), nb.distances
    (array([1]), array([0.1, 0.1, 0.9]))
    """
    X = as_reports(reports, "reports")
    n = len(X)
    try:
        k = operator.index(k)
    except TypeError:
        raise DomainError(f"k must be an integer in [1, {n - 1}] (n - 1 other reports), got {k!r}") from None
    if not 1 <= k <= n - 1:
        raise DomainError(f"k must be an integer in [1, {n - 1}] (n - 1 other reports), got {k!r}")
    order = canonical_order(X)
    (Xs,), _ = overflow_safe(X)  # any finite report: distances never overflow to inf
    _, idx = cKDTree(Xs[order]).query(Xs[order], k=k + 1)
    # Drop each point itself; a point with more than k identical copies may not
    # find itself among the k+1, and then loses its farthest candidate instead.
    keep = idx != np.arange(n)[:, None]
    keep[keep.all(axis=1), -1] = False
    rows = np.repeat(order, k)
    cols = order[idx[keep]]
    return _table(rows, cols, X, inverse_permutation(order))
