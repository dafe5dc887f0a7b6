"""Binomial tails and windows shared by the numerical bounds (clones, variation ratio, PLD)."""

from __future__ import annotations

import math

import numpy as np
from scipy import special


def half_binomial_tail(k: np.ndarray, s: np.ndarray) -> np.ndarray:
    """P[Binom(s, 1/2) >= k] for integer-valued float arrays of one shape (any k).

    1 for k <= 0, 0 for k > s, else I_{1/2}(k, s - k + 1) (regularised incomplete beta).
    Boost's implementation behind `scipy.special.betainc`; its relative error is
    checked against exact integer sums in the tests.

    Parameters
    ----------
    k : ndarray of float
        Thresholds (integer values).
    s : ndarray of float, >= 0
        Trials (integer values), same shape as ``k``.

    Returns
    -------
    ndarray of float

    Examples
    --------
    >>> import numpy as np
    >>> half_binomial_tail(np.array([0.0, 2.0, 5.0]), np.array([4.0, 4.0, 4.0]))
    array([1.    , 0.6875, 0.    ])
    """
    out = (k <= 0).astype(np.float64)
    mid = (k >= 1) & (k <= s)
    out[mid] = special.betainc(k[mid], s[mid] - k[mid] + 1.0, 0.5)
    return out


def binomial_window(trials: int, prob: float, budget: float) -> tuple[int, int]:
    """[lo, hi] holding all but at most ``budget`` of Binom(trials, prob) (Bernstein's inequality).

    P[|X - mu| >= t] <= 2 exp(-t^2 / (2 (sigma^2 + t/3))) <= budget for
    t = L/3 + sqrt(L^2/9 + 2 sigma^2 L), L = log(2 / budget).  (scipy's binom.isf is
    unreliable below ~1e-16, so quantiles are not used.)

    Parameters
    ----------
    trials : int, >= 0
    prob : float, in [0, 1]
    budget : float, in (0, 1)

    Returns
    -------
    (int, int)
        lo, hi within [0, trials].

    Examples
    --------
    >>> binomial_window(10_000, 0.5, 1e-12)
    (4614, 5386)
    """
    mu, var = trials * prob, trials * prob * (1.0 - prob)
    big_l = math.log(2.0 / budget)
    t = big_l / 3.0 + math.sqrt(big_l * big_l / 9.0 + 2.0 * var * big_l)
    return max(0, math.floor(mu - t)), min(trials, math.ceil(mu + t))
