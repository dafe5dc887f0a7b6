"""Synthetic location data in [-1,1]^d: uniform, or clustered around hot spots.

Clusters are isotropic Gaussians N(c, spread^2 I) *truncated* to the box (no
point is clipped or dropped): the isotropic Gaussian factorises over
coordinates and the box is a product of intervals, so each coordinate is an
independent truncated normal (``scipy.stats.truncnorm``).
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from scipy import stats

from shuffledp._util.validation import check_rng
from shuffledp.datasets.instance import SpatialInstance
from shuffledp.errors import DomainError

__all__ = ["Layout", "clustered_points", "synthetic_instance", "uniform_points"]

Layout = Literal["uniform", "clustered"]


def _count(value: Any, name: str, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise DomainError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _positive(value: Any, name: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = math.nan
    if not (math.isfinite(v) and v > 0):
        raise DomainError(f"{name} must be a finite number > 0, got {value!r}")
    return v


def uniform_points(n: int, rng: np.random.Generator | None = None, *, dim: int = 2) -> np.ndarray:
    """``n`` points uniform on [-1,1]^dim.

    Parameters
    ----------
    n : int
        Number of points, >= 0.
    rng : numpy.random.Generator or None
        Source of randomness (None: fresh OS entropy).
    dim : int, default 2
        Dimension, >= 1.

    Returns
    -------
    numpy.ndarray, shape (n, dim)
        The points.

    Raises
    ------
    DomainError
        For a negative or non-integer n or dim.

    Examples
    --------
    >>> import numpy as np
    >>> from shuffledp.datasets import uniform_points
    >>> X = uniform_points(1000, np.random.default_rng(0))
    >>> X.shape, bool((abs(X) <= 1).all())
    ((1000, 2), True)
    """
    n, dim = _count(n, "n"), _count(dim, "dim", 1)
    return check_rng(rng).uniform(-1.0, 1.0, size=(n, dim))


def clustered_points(n: int, centres: Any, spread: float, rng: np.random.Generator | None = None) -> np.ndarray:
    """``n`` points from an equal-weight mixture of N(c, spread^2 I) truncated to [-1,1]^d, c in ``centres``.

    Truncation, not clipping: each coordinate is an independent truncated normal.

    Parameters
    ----------
    n : int
        Number of points, >= 0.
    centres : array_like, shape (k, d)
        Hot spots inside [-1,1]^d, k >= 1.
    spread : float
        Standard deviation of each cluster, finite and > 0.
    rng : numpy.random.Generator or None
        Source of randomness (None: fresh OS entropy).

    Returns
    -------
    numpy.ndarray, shape (n, d)
        The points, inside [-1,1]^d.

    Raises
    ------
    DomainError
        For invalid n, spread or centres.

    Examples
    --------
    >>> import numpy as np
    >>> from shuffledp.datasets import clustered_points
    >>> X = clustered_points(2000, [[0.5, 0.5]], spread=0.05, rng=np.random.default_rng(0))
    >>> bool(np.allclose(X.mean(axis=0), 0.5, atol=0.01))
    True
    """
    n, sigma, rng = _count(n, "n"), _positive(spread, "spread"), check_rng(rng)
    C = np.asarray(centres, dtype=np.float64)
    if C.ndim != 2 or len(C) == 0 or not np.all((C >= -1.0) & (C <= 1.0)):
        raise DomainError(f"centres must be a non-empty (k, d) array inside [-1,1]^d, got shape {C.shape}")
    loc = C[rng.integers(len(C), size=n)]
    a, b = (-1.0 - loc) / sigma, (1.0 - loc) / sigma
    points = stats.truncnorm.rvs(a, b, loc=loc, scale=sigma, size=loc.shape, random_state=rng)
    return np.clip(points, -1.0, 1.0)  # guards only float rounding at the bounds of truncnorm's inverse CDF


def synthetic_instance(
    n_users: int,
    n_workers: int,
    rng: np.random.Generator | None = None,
    *,
    layout: Layout = "uniform",
    radius: float = 0.4,
    n_clusters: int = 5,
    spread: float = 0.15,
) -> SpatialInstance:
    """Users and workers in [-1,1]^2 with a common serving radius (default 0.4, as §7.1 after normalisation).

    ``layout="clustered"`` draws ``n_clusters`` hot spots uniformly and places both
    groups around the same hot spots (tasks arise where workers are).

    Parameters
    ----------
    n_users, n_workers : int
        Group sizes, >= 0.
    rng : numpy.random.Generator or None
        Source of randomness (None: fresh OS entropy).
    layout : {"uniform", "clustered"}, default "uniform"
        How points are placed.
    radius : float, default 0.4
        The common serving radius, finite and > 0.
    n_clusters : int, default 5
        Hot spots of the clustered layout, >= 1.
    spread : float, default 0.15
        Standard deviation of each hot spot, > 0.

    Returns
    -------
    SpatialInstance
        The two groups in [-1,1]^2.

    Raises
    ------
    DomainError
        For any parameter outside these ranges or an unknown layout.

    Examples
    --------
    >>> import numpy as np
    >>> from shuffledp.datasets import synthetic_instance
    >>> inst = synthetic_instance(50, 20, np.random.default_rng(0), layout="clustered")
    >>> inst.users.shape, inst.workers.shape, inst.serving_radius
    ((50, 2), (20, 2), 0.4)
    """
    rng = check_rng(rng)
    n_users, n_workers = _count(n_users, "n_users"), _count(n_workers, "n_workers")
    r = _positive(radius, "radius")
    if layout == "uniform":
        users, workers = uniform_points(n_users, rng), uniform_points(n_workers, rng)
        source = "synthetic: uniform on [-1,1]^2"
    elif layout == "clustered":
        centres = uniform_points(_count(n_clusters, "n_clusters", 1), rng)
        users = clustered_points(n_users, centres, spread, rng)
        workers = clustered_points(n_workers, centres, spread, rng)
        source = f"synthetic: {len(centres)} clusters of spread {spread} in [-1,1]^2"
    else:
        raise DomainError(f"layout must be 'uniform' or 'clustered', got {layout!r}")
    return SpatialInstance(
        name=f"synthetic-{layout}",
        users=users,
        workers=workers,
        worker_radii=np.full(n_workers, r),
        domain=(-1.0, 1.0),
        source=source,
    )
