"""Algorithms 2 and 3 of the E-APES paper: shuffled personalized average and binary frequency.

Each user i perturbs locally at their own budget eps_i; the shuffler permutes the reports
(and, separately, the budgets: Fig. 1), so the server sees a multiset of reports and the
multiset of budgets, never which budget produced which report.  Each run returns the
estimate and, per distinct budget, the central guarantee: our rigorous upper bound
(binary RR for Algorithm 3; Laplace on the data interval for Algorithm 2) beside the
E-APES approximation of Corollaries 1-2.

References
----------
personalized-shuffle-eapes.txt §4.2 Algorithms 2 and 3, Corollaries 1-2.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from shuffledp._util.validation import check_real, check_rng
from shuffledp.accounting.personalized import personalized_shuffle_epsilons
from shuffledp.errors import DataError, PrivacyParameterError, ShapeError
from shuffledp.protocols.personalized._guarantees import check_population, eapes_by_victim
from shuffledp.randomizers._sampling import bernoulli

__all__ = ["PersonalizedRun", "personalized_average", "personalized_frequency"]


@dataclass(frozen=True)
class PersonalizedRun:
    """Estimate of one run, the shuffled reports, and per distinct budget the central epsilons.

    Parameters
    ----------
    estimate : float
        The server's estimate z.
    reports : numpy.ndarray
        The shuffled reports.
    budgets : numpy.ndarray
        The distinct budgets (sorted).
    upper : numpy.ndarray
        Per distinct budget, the rigorous upper bound on a victim's central epsilon at the
        run's delta (empty when no delta was given).
    eapes : numpy.ndarray
        Per distinct budget, the E-APES approximation (empty when no delta was given).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> run = personalized_frequency(np.tile([0, 1], 500), np.full(1000, 1.0), rng, delta=1e-6)
    >>> run.budgets.tolist(), bool(run.upper[0] < 1.0), run.reports.size
    ([1.0], True, 1000)
    """

    estimate: float
    reports: np.ndarray
    budgets: np.ndarray
    upper: np.ndarray
    eapes: np.ndarray


def _check_data(x: Any, budgets: np.ndarray) -> np.ndarray:
    """``x`` as a 1-d numeric array with one value per budget (strings and objects refused, not parsed)."""
    arr = np.asarray(x)
    if arr.dtype.kind not in "biuf":
        raise DataError(f"data must be numbers, got an array of dtype {arr.dtype}")
    if arr.ndim != 1 or arr.size != budgets.size:
        raise ShapeError(f"data must be a 1-d array with one value per budget ({budgets.size}), got shape {arr.shape}")
    return arr


def _guarantees(budgets: np.ndarray, delta: float | None, family: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if delta is None:
        return np.unique(budgets), np.empty(0), np.empty(0)
    values, upper = personalized_shuffle_epsilons(budgets, delta, family)
    first = np.unique(budgets, return_index=True)[1]  # one victim per distinct budget
    return values, upper, eapes_by_victim(budgets, delta, first)


def personalized_average(
    x: np.ndarray,
    budgets: np.ndarray,
    low: float,
    high: float,
    rng: np.random.Generator | None = None,
    delta: float | None = None,
) -> PersonalizedRun:
    """Algorithm 2: y_i = x_i + Lap((high - low)/eps_i), shuffled, z = mean(y) (unbiased).

    Parameters
    ----------
    x : array of float in [low, high], one per user
    budgets : array of float, > 0, one per user (at least one user)
    low, high : float, low < high
        The data interval; its length is the sensitivity Delta f of one value.
    rng : numpy.random.Generator, optional
        Source of randomness (None: a fresh generator seeded from OS entropy).
    delta : float in (0, 1), optional
        When given, the per-budget central guarantees are computed (Laplace family); ``delta``
        and the number of distinct budgets are checked before any randomizing.

    Returns
    -------
    PersonalizedRun
        z, the shuffled noisy values and (with ``delta``) the per-budget guarantees.

    Raises
    ------
    ShapeError
        If ``x`` is not 1-d with one value per budget, or there is no user.
    DataError
        If ``x`` is not numeric (strings are refused) or a value lies outside [low, high].
    PrivacyParameterError
        For a budget, ``delta`` or the interval out of range, or too many distinct budgets.

    References
    ----------
    personalized-shuffle-eapes.txt §4.2, Algorithm 2; Corollary 1.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> run = personalized_average(np.full(1000, 0.5), np.full(1000, 1.0), 0.0, 1.0, rng)
    >>> abs(run.estimate - 0.5) < 0.2
    True
    """
    budgets = check_population(budgets, "budgets", delta, "laplace")
    rng = check_rng(rng)
    x = _check_data(x, budgets).astype(np.float64)
    low, high = check_real(low, "low"), check_real(high, "high")
    if not (np.isfinite(low) and np.isfinite(high) and low < high):
        raise PrivacyParameterError(f"low < high must be finite, got low={low!r}, high={high!r}")
    outside = ~((x >= low) & (x <= high))
    if outside.any():
        raise DataError(f"data must lie in [{low}, {high}], got {x[outside][0]!r} at index {int(np.argmax(outside))}")
    reports = rng.permutation(x + rng.laplace(0.0, (high - low) / budgets))
    values, upper, eapes = _guarantees(budgets, delta, "laplace")
    return PersonalizedRun(float(reports.mean()), reports, values, upper, eapes)


def personalized_frequency(
    x: np.ndarray, budgets: np.ndarray, rng: np.random.Generator | None = None, delta: float | None = None
) -> PersonalizedRun:
    """Algorithm 3: binary RR at eps_i, shuffled; z = (A - B)/(n - 2B), A = sum y, B = sum 1/(1 + e^eps_i).

    E[A] = B + sum_i x_i (1 - 2/(1 + e^eps_i)), so z is unbiased for the fraction of ones
    when the budgets are assigned independently of the data (the paper's setting: only
    the multiset of budgets reaches the server); with budgets correlated to the data it
    estimates the budget-weighted fraction.

    Parameters
    ----------
    x : array of {0, 1}, one per user
    budgets : array of float, > 0, one per user (at least one user)
    rng : numpy.random.Generator, optional
        Source of randomness (None: a fresh generator seeded from OS entropy).
    delta : float in (0, 1), optional
        When given, the per-budget central guarantees are computed (binary-RR family); ``delta``
        and the number of distinct budgets are checked before any randomizing.

    Returns
    -------
    PersonalizedRun
        z, the shuffled bits and (with ``delta``) the per-budget guarantees.

    Raises
    ------
    ShapeError
        If ``x`` is not 1-d with one value per budget, or there is no user.
    DataError
        If ``x`` holds a value other than 0 and 1.
    PrivacyParameterError
        For a budget or ``delta`` out of range, or too many distinct budgets.

    References
    ----------
    personalized-shuffle-eapes.txt §4.2, Algorithm 3; Corollary 2.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = (rng.random(5000) < 0.3).astype(int)
    >>> abs(personalized_frequency(x, np.full(5000, 2.0), rng).estimate - 0.3) < 0.05
    True
    """
    budgets = check_population(budgets, "budgets", delta)
    rng = check_rng(rng)
    x = _check_data(x, budgets)
    bad = ~((x == 0) | (x == 1))
    if bad.any():
        i = int(np.argmax(bad))
        raise DataError(f"data must contain only 0 and 1, got {x[i].item()!r} at index {i}")
    # The shuffle is drawn first and applied to the (value, budget) pairs: the same law as
    # permuting the reports afterwards, and each report row is the row of its own coin (exact
    # Bernoulli at any budget, and the audit's tilted coins weight the right report).
    order = rng.permutation(x.size)
    x, flip = x[order], 1.0 / (1.0 + np.exp(budgets[order]))
    reports = np.where(bernoulli(flip, x.size, rng), 1 - x, x)
    a, b = float(reports.sum()), float(flip.sum())
    values, upper, eapes = _guarantees(budgets, delta, "binary-rr")
    return PersonalizedRun((a - b) / (x.size - 2.0 * b), reports, values, upper, eapes)
