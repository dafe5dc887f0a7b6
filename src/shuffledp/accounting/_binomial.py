"""Binomial tails and windows shared by the numerical bounds (clones, variation ratio, PLD)."""

from __future__ import annotations

import math

import numpy as np
from scipy import special, stats

#: Largest count the product formula of `binomial_pmf` sums term by term.
_PRODUCT_MAX = 1 << 16


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


def half_binomial_pmf(k: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Pr[Binom(s, 1/2) = k] for integer-valued float arrays with 0 <= k <= s (or NaN): scipy's binomial pmf.

    The bits of ``stats.binom.pmf(k, s, 0.5)``, from the same Boost function without the
    argument checks and support masks that cost ~40 us a call (an evaluation of the engine
    makes one); outside that domain use `binomial_pmf`.

    Examples
    --------
    >>> half_binomial_pmf(np.array([2.0]), np.array([4.0]))
    array([0.375])
    """
    return np.clip(stats.binom._pmf(k, s, 0.5), 0.0, 1.0)


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


def binomial_pmf(k: np.ndarray, trials: float, prob: float) -> np.ndarray:
    """Pr[Binom(trials, prob) = k] for an integer-valued float array ``k`` (0 outside [0, trials]).

    scipy's pmf (Boost, relative error within `shuffledp.accounting._rounding.rel_slack`), except
    where Boost overflows: a probability below about 1e-290 with 10^12 trials (eps0 = 700).  There
    the mass sits on the first counts, and log C(trials, k) is summed term by term,
    sum_{i < k} log((trials - i) / (i + 1)), good to about k unit round-offs; a count beyond
    `_PRODUCT_MAX` in that regime is refused.

    Examples
    --------
    >>> import math
    >>> float(binomial_pmf(np.array([1.0]), 10**12, 2.0 / (math.exp(700.0) + 1.0))[0]) > 0.0
    True
    >>> float(binomial_pmf(np.array([2.0]), 4, 0.5)[0])
    0.375
    """
    k = np.asarray(k, dtype=np.float64)
    try:
        return stats.binom.pmf(k, trials, prob)
    except OverflowError:
        return product_binomial_pmf(k, trials, prob)


def product_binomial_pmf(k: np.ndarray, trials: float, prob: float) -> np.ndarray:
    """`binomial_pmf` by the product formula (its fallback where Boost overflows); counts up to `_PRODUCT_MAX`."""
    k = np.asarray(k, dtype=np.float64)
    inside = (k >= 0) & (k <= trials)
    top = int(k[inside].max()) if inside.any() else 0
    if top > _PRODUCT_MAX:
        raise OverflowError(f"binomial pmf at count {top} of {trials:g} trials with probability {prob:.3g}")
    i = np.arange(top, dtype=np.float64)
    log_choose = np.concatenate([[0.0], np.cumsum(np.log(trials - i) - np.log1p(i))])
    counts = np.where(inside, k, 0.0)
    logs = log_choose[counts.astype(np.int64)] + counts * math.log(prob) + (trials - counts) * math.log1p(-prob)
    return np.where(inside, np.exp(logs), 0.0)
