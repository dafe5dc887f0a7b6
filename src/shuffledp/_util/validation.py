"""Validation helpers shared by every public boundary.

One rule for numbers: a real-valued parameter is a real number (numpy scalars included), never a
bool or a numeric string (`check_real`), as a count is an integer and never ``'10000'``
(`check_positive_int`).  The command line parses its own text before calling the API.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from shuffledp.errors import ArgumentTypeError, PrivacyParameterError, ShapeError

#: Smallest epsilon accepted anywhere: below 2^-52, e^epsilon rounds to exactly 1 in
#: float64, so such a guarantee cannot be told apart from epsilon = 0 (p = e^eps0 must be > 1).
EPSILON_MIN = 2.0**-52
#: Largest count (n, rounds, dimension) accepted at the command line: every integer up
#: to 2^53 is exact in float64, larger ones are not.
COUNT_MAX = 2**53
#: Seeds are one unsigned 64-bit word (numpy's SeedSequence takes any such integer).
SEED_MAX = 2**64 - 1


def check_real(value: Any, name: str) -> float:
    """``value`` as a float if it is a real number (numpy scalars included); never a bool or a numeric string.

    Examples
    --------
    >>> check_real(np.float32(0.5), "low")
    0.5
    >>> check_real("0", "low")
    Traceback (most recent call last):
    ...
    shuffledp.errors.PrivacyParameterError: low must be a number, got '0'
    """
    if isinstance(value, (bool, np.bool_, str, bytes)) or not isinstance(value, numbers.Real):
        shown = repr(value)
        raise PrivacyParameterError(f"{name} must be a number, got {shown if len(shown) <= 80 else shown[:77] + '...'}")
    return float(value)


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """Return ``epsilon`` as a float, or raise if it is not a finite number >= `EPSILON_MIN` (`check_real`)."""
    value = check_real(epsilon, name)
    if not (math.isfinite(value) and value > 0.0):
        raise PrivacyParameterError(f"{name} must be a finite number > 0, got {epsilon!r}")
    if value < EPSILON_MIN:
        raise PrivacyParameterError(
            f"{name} must be >= 2^-52 = {EPSILON_MIN:.3g} (below it e^epsilon rounds to 1 in float64), got {epsilon!r}"
        )
    return value


def check_probability(value: Any, name: str, *, open_low: bool = True, open_high: bool = True) -> float:
    """Return ``value`` as a float in the interval (0, 1) (ends as requested); a number (`check_real`)."""
    v = check_real(value, name)
    low_ok = v > 0.0 if open_low else v >= 0.0
    high_ok = v < 1.0 if open_high else v <= 1.0
    if not (math.isfinite(v) and low_ok and high_ok):
        lo = "(0" if open_low else "[0"
        hi = "1)" if open_high else "1]"
        raise PrivacyParameterError(f"{name} must lie in {lo}, {hi}, got {value!r}")
    return v


def check_nonnegative(value: Any, name: str) -> float:
    """Return ``value`` as a float, or raise if it is not a finite number >= 0 (e.g. an epsilon that may be 0)."""
    number = check_real(value, name)
    if not (math.isfinite(number) and number >= 0.0):
        raise PrivacyParameterError(f"{name} must be a finite number >= 0, got {value!r}")
    return number


def check_rtol(value: Any, name: str = "rtol", low: float = 1e-12, high: float = 1e-2) -> float:
    """A relative precision in [low, high] (a number, `check_real`); raises PrivacyParameterError otherwise."""
    rtol = check_real(value, name)
    if not low <= rtol <= high:
        raise PrivacyParameterError(f"{name} must lie in [{low:g}, {high:g}], got {value!r}")
    return rtol


def check_positive_int(value: Any, name: str, minimum: int = 1, maximum: int | None = None) -> int:
    """Return ``value`` as an int in [``minimum``, ``maximum``] (no upper limit if None).

    Integer-valued floats (``1e6``) are accepted.
    """
    allowed = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
    number = value
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if not (isinstance(value, (float, np.floating)) and float(value).is_integer()):
            raise PrivacyParameterError(f"{name} must be an integer {allowed}, got {value!r}")
        number = int(value)
    if number < minimum or (maximum is not None and number > maximum):
        raise PrivacyParameterError(f"{name} must be an integer {allowed}, got {value!r}")
    return int(number)


def check_rng(rng: np.random.Generator | None) -> np.random.Generator:
    """``None`` means a fresh generator seeded from OS entropy (DESIGN.md)."""
    if rng is None:
        return np.random.default_rng()
    if not isinstance(rng, np.random.Generator):
        shown = repr(rng) if len(repr(rng)) <= 40 else repr(rng)[:37] + "..."
        raise ArgumentTypeError(
            f"rng must be a numpy.random.Generator or None (e.g. numpy.random.default_rng(0)), got {type(rng).__name__} {shown}"
        )
    return rng


def as_points(X: Any, dim: int, name: str = "X") -> np.ndarray:
    """Return ``X`` as a float64 array of shape (n, dim).

    A single point of shape (dim,) is accepted only when ``dim > 1`` is ambiguous-free;
    1-d input of length n is accepted for dim == 1 as n points.
    """
    arr = np.asarray(X, dtype=np.float64) if not isinstance(X, np.ndarray) or X.dtype != np.float64 else X
    if arr.ndim == 1 and dim == 1:
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2 or arr.shape[1] != dim:
        raise ShapeError(f"{name} must have shape (n, {dim}), got shape {arr.shape}")
    return arr


def as_index_array(X: Any, name: str = "X") -> np.ndarray:
    """Return ``X`` as a 1-d int64 array (categorical inputs)."""
    arr = np.asarray(X)
    if arr.ndim != 1:
        raise ShapeError(f"{name} must be a 1-d array of category indices, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        if np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise ShapeError(f"{name} must hold integer category indices, got dtype {arr.dtype}")
    return arr.astype(np.int64, copy=False)
