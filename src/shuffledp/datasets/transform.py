"""Affine normalisation of locations to [-1,1]^d (PIC §7.1 and §7.2 normalise every data set so)."""

from __future__ import annotations

from typing import Any

import numpy as np

from shuffledp.errors import DomainError, ShapeError

__all__ = ["bounding_box", "scale_length", "to_unit_box"]


def _box(points: np.ndarray, low: Any, high: Any) -> tuple[np.ndarray, np.ndarray]:
    lo = np.broadcast_to(np.asarray(low, dtype=np.float64), points.shape[1:])
    hi = np.broadcast_to(np.asarray(high, dtype=np.float64), points.shape[1:])
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(lo < hi)):
        raise DomainError(f"the box needs finite low < high in every coordinate, got low={low!r}, high={high!r}")
    return lo, hi


def to_unit_box(points: Any, low: Any, high: Any, name: str = "points") -> np.ndarray:
    """Map the box [low, high] (scalars or one bound per column) affinely onto [-1,1]^d.

    A point outside the box raises DomainError naming its row: nothing is clipped.
    x maps to 2 (x - low) / (high - low) - 1.

    Parameters
    ----------
    points : array_like, shape (n, d)
        The points.
    low, high : float or array_like of shape (d,)
        The box, finite with low < high in every coordinate.
    name : str, default "points"
        Name used in error messages.

    Returns
    -------
    numpy.ndarray, shape (n, d)
        The points in [-1,1]^d.

    Raises
    ------
    ShapeError
        When ``points`` is not 2-d.
    DomainError
        For an invalid box or a point outside it.

    Examples
    --------
    >>> from shuffledp.datasets import to_unit_box
    >>> to_unit_box([[0.0, 5.0], [2.5, 2.5]], 0.0, 5.0)
    array([[-1.,  1.],
           [ 0.,  0.]])
    """
    X = np.asarray(points, dtype=np.float64)
    if X.ndim != 2:
        raise ShapeError(f"{name} must have shape (n, d), got shape {X.shape}")
    lo, hi = _box(X, low, high)
    inside = np.all((lo <= X) & (hi >= X), axis=1)
    if not inside.all():
        row = int(np.flatnonzero(~inside)[0])
        raise DomainError(
            f"{name}[{row}] = {X[row]} lies outside the box [{lo}, {hi}] "
            f"({int((~inside).sum())} of {len(X)} rows outside)"
        )
    return 2.0 * (X - lo) / (hi - lo) - 1.0


def bounding_box(points: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per-column (low, high) of a non-empty (n, d) array: the box for ``to_unit_box``.

    Parameters
    ----------
    points : array_like, shape (n, d)
        The points, n >= 1.

    Returns
    -------
    tuple of numpy.ndarray
        ``(low, high)``, each of shape (d,).

    Raises
    ------
    ShapeError
        When ``points`` is not a non-empty 2-d array.

    Examples
    --------
    >>> from shuffledp.datasets import bounding_box
    >>> bounding_box([[0, 1], [2, 3]])
    (array([0., 1.]), array([2., 3.]))
    """
    X = np.asarray(points, dtype=np.float64)
    if X.ndim != 2 or len(X) == 0:
        raise ShapeError(f"points must be a non-empty array of shape (n, d), got shape {X.shape}")
    return X.min(axis=0), X.max(axis=0)


def scale_length(length: Any, low: float, high: float) -> float | np.ndarray:
    """A length (e.g. a serving radius) in the units of a square box [low, high]^d, measured in [-1,1]^d.

    §7.1: radius 1.0 in [0, 5]^2 becomes 1.0 * 2 / 5 = 0.4.

    Parameters
    ----------
    length : float or array_like
        Length(s) in the box's units.
    low, high : float
        The box [low, high]^d, finite with low < high.

    Returns
    -------
    float or numpy.ndarray
        ``length * 2 / (high - low)``.

    Raises
    ------
    DomainError
        For an invalid box.

    Examples
    --------
    >>> from shuffledp.datasets import scale_length
    >>> scale_length(1.0, 0.0, 5.0)
    0.4
    """
    if not (np.isfinite(low) and np.isfinite(high) and low < high):
        raise DomainError(f"the box needs finite low < high, got low={low!r}, high={high!r}")
    scaled = np.asarray(length, dtype=np.float64) * (2.0 / (high - low))
    return float(scaled) if scaled.ndim == 0 else scaled
