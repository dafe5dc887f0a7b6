"""The contract every task obeys (DESIGN.md, "Tasks"; PIC §4.2, Figure 2).

A task is a function ``f(L)`` of the server's list ``L`` of shuffled reports,
one array of shape ``(n_g, d)`` per group, returning one output per report:
output ``i`` of group ``g`` belongs to report ``i`` of group ``g`` and is what
the PIC server encrypts to that report's pseudonym.  Indices inside an output
(a matched partner, a neighbour) are positions in ``L``, which the server
translates to pseudonyms.

Permutation equivariance.  F_PIC hands ``f`` an order chosen by the shuffler,
so ``f`` must not depend on it: permuting the reports of a group permutes that
group's outputs the same way (and relabels indices pointing into it).  Every
task here first sorts each group into a *canonical order* (lexicographic on the
coordinates), computes there, and maps back.  The result is then a function of
the multiset of reports alone, so equivariance is exact even when the
optimisation has ties (several optimal matchings, equidistant neighbours);
only *identical* reports may swap outputs, which no observer can tell apart.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from shuffledp.errors import DomainError, ShapeError

__all__ = [
    "NO_MATCH",
    "PAIR_DTYPE",
    "as_reports",
    "canonical_order",
    "check_radius",
    "inverse_permutation",
    "overflow_exponent",
    "overflow_safe",
]

#: Partner index of a report left unmatched.
NO_MATCH = -1

#: Wire record of one (partner or neighbour, reported distance) pair: 16 bytes,
#: little-endian int64 index into the other group (or NO_MATCH) and float64
#: distance (NaN when there is no partner).  ``np.frombuffer(b, PAIR_DTYPE)`` decodes.
PAIR_DTYPE = np.dtype([("index", "<i8"), ("distance", "<f8")])


def as_reports(X: Any, name: str, dim: int | None = None) -> np.ndarray:
    """Return the reports ``X`` as a finite float64 array of shape (n, d).

    Raises ShapeError (not a 2-d numeric array, or ``d != dim``) or DomainError
    (a NaN or infinite coordinate, naming the first offending row).  Reports
    may lie anywhere in R^d: randomizer outputs leave the input domain.
    """
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise ShapeError(f"{name} must be a numeric array of shape (n, d), got {type(X).__name__}") from None
    if arr.ndim != 2 or arr.shape[1] < 1:
        raise ShapeError(f"{name} must have shape (n, d) with d >= 1, got shape {arr.shape}")
    if dim is not None and arr.shape[1] != dim:
        raise ShapeError(f"{name} must have shape (n, {dim}) like the other group, got shape {arr.shape}")
    finite = np.isfinite(arr).all(axis=1)
    if not finite.all():
        row = int(np.flatnonzero(~finite)[0])
        raise DomainError(
            f"{name}[{row}] = {arr[row]} is not finite ({int((~finite).sum())} of {len(arr)} rows have "
            "NaN or infinite coordinates); reports must be finite"
        )
    return arr


#: Largest coordinate a task computes with unscaled.  Squared differences of coordinates up to
#: 2^256 (about 1.2e77) stay far below float64's overflow (1.8e308) in any dimension d < 2^250.
SAFE_MAGNITUDE = 2.0**256


def overflow_exponent(*groups: np.ndarray) -> int:
    """The power of two ``e`` to scale points by (``X * 2^-e``) so no distance overflows; 0 if none is needed.

    Distances, matchings and neighbour lists are invariant under a common scaling of all
    points and radii, and a power of two scales float64 exactly (until values underflow to
    subnormals, which only merges points that were 2^-1000 apart relative to the largest).
    Reports no larger than `SAFE_MAGNITUDE` get ``e = 0``, so honest reports compute exactly
    as before; a huge finite report (up to 1.8e308) no longer overflows a distance to
    infinity (min-weight's "cost matrix is infeasible", the k-d tree's overflow).
    """
    peak = max((float(np.max(np.abs(g))) for g in groups if g.size), default=0.0)
    return 0 if peak <= SAFE_MAGNITUDE else math.frexp(peak)[1]


def overflow_safe(*groups: np.ndarray, radius: float | None = None) -> tuple[list[np.ndarray], float | None]:
    """The groups (and radius) scaled by ``2^-overflow_exponent(*groups)``; unchanged when safe."""
    e = overflow_exponent(*groups)
    if e == 0:
        return list(groups), radius
    return [np.ldexp(g, -e) for g in groups], None if radius is None else math.ldexp(radius, -e)


def check_radius(radius: Any, name: str = "radius") -> float:
    """Return ``radius`` as a float, or raise DomainError unless it is finite and >= 0."""
    try:
        value = float(radius)
    except (TypeError, ValueError):
        value = math.nan
    if not (math.isfinite(value) and value >= 0.0):
        raise DomainError(f"{name} must be a finite number >= 0, got {radius!r}")
    return value


def canonical_order(X: np.ndarray) -> np.ndarray:
    """The permutation sorting the rows of ``X`` lexicographically (first coordinate first).

    Stable, so identical rows keep their input order.
    """
    return np.lexsort(X.T[::-1]) if X.shape[0] else np.zeros(0, dtype=np.intp)


def inverse_permutation(order: np.ndarray) -> np.ndarray:
    """``rank`` with ``rank[order[k]] = k``."""
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size, dtype=order.dtype)
    return rank
