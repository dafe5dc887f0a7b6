"""Every validator of the segmented protocol (levels, counts, level indices, sampling rates, epsilon_p).

One module below `levels`, `messages`, `optimizer` and `analyzer`, which all take their
checks from here (they used to import each other's, a cycle).  The users' item sets are
checked by `shuffledp.datasets.setvalued.check_item_sets` (set-valued data), re-exported
by `shuffledp.protocols.segmented`.  The public names stay importable from their old modules.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from shuffledp._util.validation import EPSILON_MIN, Interval, check_positive_int, range_message
from shuffledp.accounting.segmented import check_sampling_rate
from shuffledp.errors import DomainError, PrivacyLevelError, PrivacyParameterError, ShapeError

__all__ = [
    "EPSILON_P_MAX",
    "LEVEL_RANGE",
    "check_epsilon_p",
    "check_lambdas",
    "check_level_counts",
    "check_level_index",
    "check_levels",
]

#: Largest epsilon_p of a DP level histogram.  Shuffled k-RR at a local epsilon e costs about e
#: once e is large (no amplification left), and at local epsilon 40 a report is wrong with
#: probability < (k - 1) e^-40 ~ 4e-18 per other level: a larger budget buys nothing over
#: exact counting (epsilon_p=None), and calibration near the search's top (50) would cap.
EPSILON_P_MAX = 40.0
#: The privacy levels accepted, [2^-52, inf): a level is a user's epsilon, and the optimizer meets any finite
#: one (a level far above the others, even 1e300, is met at the smallest blanket rate: the group-privacy
#: tests pin that it is as good as 40 and fast), so no cap is put on it.
LEVEL_RANGE = Interval(EPSILON_MIN)


def check_epsilon_p(epsilon_p: Any) -> float:
    """``epsilon_p`` as a float in (0, `EPSILON_P_MAX`]; a larger value is refused, never capped.

    Parameters
    ----------
    epsilon_p : float
        Budget of the DP level histogram.

    Returns
    -------
    float

    Raises
    ------
    PrivacyParameterError
        If ``epsilon_p`` is not a number in [2^-52, 40].

    Examples
    --------
    >>> check_epsilon_p(1)
    1.0
    >>> check_epsilon_p(51)
    Traceback (most recent call last):
    ...
    shuffledp.errors.PrivacyParameterError: epsilon_p must be a number in [2^-52, 40]; got 51 (beyond 40 the level reports are exact to within e^-40; pass epsilon_p=None to count the levels exactly)
    """
    above = isinstance(epsilon_p, numbers.Real) and epsilon_p > EPSILON_P_MAX
    note = (
        f"beyond {EPSILON_P_MAX:g} the level reports are exact to within e^-{EPSILON_P_MAX:g}; "
        "pass epsilon_p=None to count the levels exactly"
    )
    return Interval(EPSILON_MIN, EPSILON_P_MAX).check(epsilon_p, "epsilon_p", note if above else "")


def check_levels(levels: Sequence[float]) -> tuple[float, ...]:
    """The menu E_1 < ... < E_K of privacy levels (each a finite epsilon > 0).

    Parameters
    ----------
    levels : sequence of float
        At least one number in `LEVEL_RANGE` = [2^-52, inf), strictly increasing.

    Returns
    -------
    tuple of float
        The levels as floats.

    Raises
    ------
    PrivacyLevelError
        If ``levels`` is empty, holds a level that is not a number in `LEVEL_RANGE`, or is not strictly increasing.

    References
    ----------
    segmented-multimessage-shuffle.txt §4.3 (the menu of privacy levels).

    Examples
    --------
    >>> check_levels([0.5, 1, 2])
    (0.5, 1.0, 2.0)
    >>> check_levels([1.0, 0.5])
    Traceback (most recent call last):
    ...
    shuffledp.errors.PrivacyLevelError: levels must be strictly increasing, got [1.0, 0.5]
    >>> check_levels([0.5, 0])
    Traceback (most recent call last):
    ...
    shuffledp.errors.PrivacyLevelError: levels[1] must be a number in [2^-52, inf); got 0
    """
    if isinstance(levels, (str, bytes)) or not isinstance(levels, Iterable):
        raise PrivacyLevelError(range_message("levels", "a sequence of numbers", levels))
    values = []
    for i, e in enumerate(levels):
        try:
            values.append(LEVEL_RANGE.check(e, f"levels[{i}]"))
        except PrivacyParameterError as exc:  # a range or type error, as the menu's own error
            raise PrivacyLevelError(str(exc)) from None
    values = tuple(values)
    if not values:
        raise PrivacyLevelError("levels must name at least one privacy level, got none")
    if any(b <= a for a, b in zip(values, values[1:])):
        raise PrivacyLevelError(f"levels must be strictly increasing, got {list(values)}")
    return values


def check_level_counts(level_counts: Sequence[float], k: int) -> tuple[float, ...]:
    """One count (> 0; exact or a DP estimate) per level.

    Parameters
    ----------
    level_counts : sequence of float
        The count n_k of each level, finite and > 0.
    k : int
        Number of levels.

    Returns
    -------
    tuple of float
        The counts as floats.

    Raises
    ------
    PrivacyLevelError
        If a count is not numeric, not finite and positive, or there are not ``k`` of them.

    Examples
    --------
    >>> check_level_counts([10, 2.5], 2)
    (10.0, 2.5)
    >>> check_level_counts([10, 0], 2)
    Traceback (most recent call last):
    ...
    shuffledp.errors.PrivacyLevelError: level_counts[1] must be > 0 (an empty level: leave it off the menu), got 0
    """
    try:
        counts = tuple(float(c) for c in level_counts)
    except (TypeError, ValueError):
        raise PrivacyLevelError(f"level_counts must be numbers, got {level_counts!r}") from None
    if len(counts) != k:
        raise PrivacyLevelError(f"level_counts must have one count per level ({k}), got {len(counts)}")
    for i, c in enumerate(counts):
        if not (math.isfinite(c) and c > 0.0):
            raise PrivacyLevelError(f"level_counts[{i}] must be > 0 (an empty level: leave it off the menu), got {c:g}")
    return counts


def check_level_index(level_index: Any, k: int, name: str = "level_index") -> np.ndarray:
    """Each user's level as an index in {0..k-1}: a non-empty 1-d integer array (nothing is rounded or clipped).

    Parameters
    ----------
    level_index : array_like
        One level index per user.
    k : int, >= 1
        Number of levels.
    name : str
        The parameter name quoted in error messages.

    Returns
    -------
    numpy.ndarray
        ``level_index`` as a 1-d int64 array.

    Raises
    ------
    ShapeError
        If ``level_index`` is not 1-d, is empty, or does not hold integers.
    DomainError
        If an index lies outside [0, k - 1].
    PrivacyParameterError
        If ``k`` is not a positive integer.

    Examples
    --------
    >>> check_level_index([0, 2, 1], 3).tolist()
    [0, 2, 1]
    >>> check_level_index([0, 3], 3)
    Traceback (most recent call last):
    ...
    shuffledp.errors.DomainError: level_index[1]=3 is outside the level indices [0, 2]
    """
    k = check_positive_int(k, "k")
    arr = np.asarray(level_index)
    if arr.ndim != 1:
        raise ShapeError(f"{name} must be a 1-d array with one level index per user, got shape {arr.shape}")
    if arr.size == 0:
        raise ShapeError(f"{name} must hold at least one user, got none")
    if not np.issubdtype(arr.dtype, np.integer):
        raise ShapeError(f"{name} must hold integer level indices in [0, {k - 1}], got dtype {arr.dtype}")
    bad = (arr < 0) | (arr >= k)
    if np.any(bad):
        first = int(np.flatnonzero(bad)[0])
        raise DomainError(f"{name}[{first}]={int(arr[first])} is outside the level indices [0, {k - 1}]")
    return arr.astype(np.int64, copy=False)


def check_lambdas(lambdas: Any, name: str = "lambdas") -> np.ndarray:
    """The sampling rates lambda_1..lambda_K: a non-empty 1-d float array, each finite in (0, 1].

    Parameters
    ----------
    lambdas : array_like
        One Poisson sampling rate per level.
    name : str
        The parameter name quoted in error messages.

    Returns
    -------
    numpy.ndarray
        ``lambdas`` as a 1-d float64 array.

    Raises
    ------
    ShapeError
        If ``lambdas`` is not a non-empty 1-d numeric array.
    PrivacyParameterError
        If a rate is not in (0, 1] (NaN included).

    Examples
    --------
    >>> check_lambdas([0.5, 1]).tolist()
    [0.5, 1.0]
    >>> check_lambdas([0.5, 0.0])
    Traceback (most recent call last):
    ...
    shuffledp.errors.PrivacyParameterError: lambdas[1] (Poisson sampling rate) must be a number in (0, 1]; got 0.0
    """
    try:
        arr = np.asarray(lambdas, dtype=np.float64)
    except (TypeError, ValueError):
        raise ShapeError(f"{name} must be a 1-d array of numbers, got {lambdas!r}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ShapeError(f"{name} must be a non-empty 1-d array with one rate per level, got shape {arr.shape}")
    ok = (arr > 0.0) & (arr <= 1.0)  # False for NaN
    if not np.all(ok):
        first = int(np.flatnonzero(~ok)[0])
        check_sampling_rate(float(arr[first]), f"{name}[{first}]")  # raises with the value
    return arr
