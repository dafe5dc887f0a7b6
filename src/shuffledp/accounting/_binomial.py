"""Binomial tails and windows shared by the numerical bounds (clones, variation ratio, PLD)."""

from __future__ import annotations

import math

import numpy as np
from scipy import special


def half_binomial_tail(k: np.ndarray, s: np.ndarray) -> np.ndarray:
    """P[Binom(s, 1/2) >= k] for integer-valued float arrays of one shape (any k).

    Boost's regularised incomplete beta behind :func:`scipy.special.betainc`; its
    relative error is checked against exact integer sums in the tests.
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
    """
    mu, var = trials * prob, trials * prob * (1.0 - prob)
    big_l = math.log(2.0 / budget)
    t = big_l / 3.0 + math.sqrt(big_l * big_l / 9.0 + 2.0 * var * big_l)
    return max(0, math.floor(mu - t)), min(trials, math.ceil(mu + t))
