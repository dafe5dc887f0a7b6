"""The exact privacy curve of shuffled binary randomized response, worst case over the other users' inputs.

Every one of n users reports a bit by binary RR at eps0 (the truth with probability p = e^eps0 / (1 + e^eps0));
the shuffler releases the multiset of bits, that is their count of ones K.  With the victim on input 0 or 1
and j of the other m = n - 1 users on input 1, K = V + S_j with S_j = Binom(j, p) + Binom(m - j, 1 - p)
independent of the victim's bit V.  The shuffled mechanism's privacy curve is

    delta(eps) = max_j max( D_{e^eps}(K_j | victim 0 || K_j | victim 1), the reverse ),

and flipping every bit maps (victim 1 against 0, j) to (victim 0 against 1, m - j), so one direction over every
j covers both.  This is the truth, not a bound on it: the blanket and clone decompositions reveal how many reports
were blankets, which the count of ones hides, and stay 14-36% above it at n = 10^4 (issue "Sound accounting for
every randomizer", deliverable 2: an exact accountant where an exact computation is feasible).

Each S_j is a direct convolution of two binomial pmfs (sums of positive terms), so the computation is exact up to
floating-point round-off, which is charged: every probability is widened by `rel_slack` of the pmfs plus the
round-off of its sum, and by an absolute allowance for underflow.  The returned upper epsilon is therefore never
below the truth and the lower epsilon never above it; they differ by the grid step ``rtol``.  The S_j cost
O(n^3 / 6) flops once and every epsilon O(n^2), hence the limit `MAX_EXACT_N`.

For k-RR with k >= 3 the worst case runs over every multiset of the others' inputs and the law of the full
histogram, C(n + k - 2, k - 1) laws of C(n + k - 1, k - 1) states each: exact enumeration stays at small n
(`shuffledp.shuffle_audit.exact_shuffle_epsilon`), and the randomizer-specific blanket bound prices larger n.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from scipy import special, stats

from shuffledp._util.validation import check_real, check_rtol
from shuffledp.accounting._checks import check_delta, check_n
from shuffledp.accounting._rounding import DEFAULT_RTOL, EPS_RANGE, UNIT_ROUNDOFF, rel_slack
from shuffledp.accounting.dominating_pair import solve_epsilon
from shuffledp.errors import OutsideRegimeError
from shuffledp.params import check_eps0

__all__ = ["ExactCurve", "MAX_EXACT_N", "binary_rr_exact_delta", "binary_rr_exact_epsilon", "exact_curve"]

#: Largest n computed exactly: the laws S_j take n^2 doubles (32 MB) and about n^3 / 6 flops (1-2 s at 2,000).
MAX_EXACT_N = 2_000
#: Largest error of one float64 product or pmf value that underflows (below the smallest normal double).
_UNDERFLOW = 2.0**-1021


@dataclass(frozen=True)
class ExactCurve:
    """The laws of the count of ones of the other users, one row per number j of them on input 1."""

    eps0: float
    n: int
    others: np.ndarray  # shape (n, n + 1): row j is the law of S_j on 0..n (entry n is 0)
    relative: float  # charged relative error of every computed probability
    absolute: float  # charged absolute error of every computed probability
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def _widened(self, upper: bool) -> tuple[np.ndarray, np.ndarray]:
        """The count's law with the victim on 0 rounded up and on 1 rounded down (``upper``), or the reverse."""
        cached = self._cache.get(upper)
        if cached is None:
            p, q = special.expit(self.eps0), special.expit(-self.eps0)
            S = self.others
            shifted = np.zeros_like(S)
            shifted[:, 1:] = S[:, :-1]
            sign = 1.0 if upper else -1.0
            victim0 = (p * S + q * shifted) * (1.0 + sign * self.relative) + sign * self.absolute  # sends 1 w.p. q
            victim1 = (q * S + p * shifted) * (1.0 - sign * self.relative) - sign * self.absolute
            cached = self._cache[upper] = (np.maximum(victim0, 0.0), np.maximum(victim1, 0.0))
        return cached

    def divergences(self, epsilon: float, upper: bool = True) -> np.ndarray:
        """D_{e^eps}(K | victim 0 || K | victim 1) for every j, rounded up (``upper``) or down."""
        victim0, victim1 = self._widened(upper)
        return np.maximum(victim0 - math.exp(epsilon) * victim1, 0.0).sum(axis=1)

    def delta(self, epsilon: float, upper: bool = True) -> float:
        """The mechanism's delta at ``epsilon``: the largest divergence over every j (one direction suffices)."""
        return min(1.0, float(self.divergences(epsilon, upper).max()))


@lru_cache(maxsize=2)  # a curve at n = 2,000 holds ~160 MB with its widened copies; a search reuses one
def exact_curve(eps0: float, n: int) -> ExactCurve:
    """The laws S_j (j = 0..n-1) of the other users' count of ones, by direct convolution.

    Parameters
    ----------
    eps0 : float, in [1e-6, 700]
    n : int, in [1, `MAX_EXACT_N`]

    Returns
    -------
    ExactCurve
    """
    m = n - 1
    p = special.expit(eps0)
    others = np.zeros((n, n + 1))
    for j in range(n):  # one convolution per assignment of the others (not per report): n of them
        ones_of_ones = stats.binom.pmf(np.arange(j + 1), j, p)
        ones_of_zeros = stats.binom.pmf(np.arange(m - j + 1), m - j, 1.0 - p)
        others[j, : m + 1] = np.convolve(ones_of_ones, ones_of_zeros)
    # pmf values good to rel_slack(m); a sum of at most n positive products adds n unit round-offs;
    # every product or pmf value below the smallest normal double may be off by _UNDERFLOW, n of them per entry
    relative = 2.0 * rel_slack(m) + (n + 2) * UNIT_ROUNDOFF
    absolute = 2.0 * (n + 1) * _UNDERFLOW
    return ExactCurve(eps0=eps0, n=n, others=others, relative=relative, absolute=absolute)


def _checked(eps0: float, n: int) -> tuple[float, int]:
    eps0 = check_eps0(check_real(eps0, "eps0"))
    n = check_n(n)
    if n > MAX_EXACT_N:
        raise OutsideRegimeError(
            f"the exact binary-RR curve is computed up to n = {MAX_EXACT_N} (O(n^3) flops), got n={n}; "
            f"for larger n use shuffle_epsilon(n, delta, params=BinaryRandomizedResponse(eps0).amplification_parameters())"
        )
    return eps0, n


def binary_rr_exact_delta(eps0: float, n: int, epsilon: float, *, upper: bool = True) -> float:
    """delta(epsilon) of n shuffled binary-RR reports at eps0, worst case over the others' inputs.

    Exact up to charged floating-point round-off: ``upper=True`` is never below the truth,
    ``upper=False`` never above it.

    Parameters
    ----------
    eps0 : float, in [1e-6, 700]
        Every user's local epsilon.
    n : int, in [1, `MAX_EXACT_N`]
    epsilon : float, in [0, 700]
    upper : bool

    Returns
    -------
    float

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.
    OutsideRegimeError
        For n above `MAX_EXACT_N`.

    Examples
    --------
    >>> round(binary_rr_exact_delta(math.log(3.0), 1, 0.0), 9)  # one user: the total variation 3/4 - 1/4
    0.5
    """
    eps0, n = _checked(eps0, n)
    return exact_curve(eps0, n).delta(EPS_RANGE.check(epsilon, "epsilon"), upper)


def binary_rr_exact_epsilon(
    eps0: float, n: int, delta: float, *, rtol: float = DEFAULT_RTOL, upper: bool = True
) -> float:
    """The smallest epsilon with delta(epsilon) <= ``delta`` for n shuffled binary-RR reports at eps0.

    The exact worst case over the other users' inputs, snapped up (``upper=True``: never below the
    truth) or down (``upper=False``: never above it) to the grid exp(k log(1 + rtol)), and never
    above eps0 (the local guarantee).

    Parameters
    ----------
    eps0 : float, in [1e-6, 700]
    n : int, in [1, `MAX_EXACT_N`]
    delta : float, in [1e-300, 1)
    rtol : float, in [1e-12, 1e-2]
    upper : bool

    Returns
    -------
    float

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.
    OutsideRegimeError
        For n above `MAX_EXACT_N`.

    Examples
    --------
    >>> from shuffledp import shuffle_epsilon
    >>> exact = binary_rr_exact_epsilon(1.0, 1_000, 1e-5)
    >>> lower = binary_rr_exact_epsilon(1.0, 1_000, 1e-5, upper=False)
    >>> round(exact, 4), bool(lower <= exact < shuffle_epsilon(1_000, 1e-5, eps0=1.0))
    (0.1054, True)
    """
    eps0, n = _checked(eps0, n)
    delta = check_delta(check_real(delta, "delta"))
    rtol = check_rtol(check_real(rtol, "rtol"))
    curve = exact_curve(eps0, n)
    value = solve_epsilon(lambda e: curve.delta(e, upper), delta, eps0, eps0 / 4.0, rtol, upper, cap=eps0)
    return min(value, eps0)
