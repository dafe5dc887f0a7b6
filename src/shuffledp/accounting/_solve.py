"""The one bisection of the accounting: the largest x whose non-decreasing cost stays within a target.

`largest_within` is the solver behind `shuffledp.accounting.accountants.calibrate` (every
inverse goes through it); it sits in the bottom layer of ``accounting/`` and imports only
the primitives, so any module above may use it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

from scipy import optimize

from shuffledp.accounting._rounding import ROUND_TRIP_RTOL
from shuffledp.errors import PrivacyParameterError


def largest_within(
    amplified: Callable[[float], float], target: float, lo: float, hi: float, *, context: str = ""
) -> float:
    """Largest eps0 in [lo, hi] with ``amplified(eps0) <= target``, for a non-decreasing ``amplified``.

    The shared solver behind `calibrate`: it
    brackets by halving down from ``hi``, solves by Brent's method in log(eps0), then steps
    down until the target is met.  The result is verified to meet the target and, where
    ``amplified`` is continuous, lies within a relative ``ROUND_TRIP_RTOL`` of reaching it.

    Parameters
    ----------
    amplified : callable float -> float
        Non-decreasing cost (``math.inf`` allowed).
    target : float
    lo, hi : float, 0 < lo < hi
    context : str
        Appended to the error message.

    Returns
    -------
    float
        ``hi`` when even it meets the target.

    Raises
    ------
    PrivacyParameterError
        When even ``lo`` misses the target.

    Examples
    --------
    >>> x = largest_within(lambda x: x * x, 4.0, 0.1, 10.0)
    >>> round(x, 6), x * x <= 4.0
    (2.0, True)
    """
    # the last step asks again for Brent's root: each x is priced once
    amplified = lru_cache(maxsize=None)(amplified)
    if amplified(hi) <= target:
        return hi
    # Bracket by halving down from the top: large eps0 means few blankets, so these
    # evaluations are the cheap ones.
    upper = hi
    while True:
        below = max(upper / 2.0, lo)
        at_below = amplified(below)
        if at_below <= target:
            break
        if below == lo:
            raise PrivacyParameterError(
                f"no local epsilon in [{lo:g}, {hi:g}] reaches target_epsilon={target:g}"
                f"{' ' + context if context else ''}: even eps0={lo:g} amplifies to {at_below:.6g}; "
                f"increase n or delta, or lower the search's low end (min_epsilon, or calibrate's bracket)"
            )
        upper = below

    # Solve in log(eps0), so the tolerance is relative; cap infinite bounds for Brent.  At the bracket's
    # ends Brent gets the costs already known (exp(log(x)) need not give x back, which would price it again).
    ends = {math.log(below): below, math.log(upper): upper}

    def gap(log_eps0: float) -> float:
        return min(amplified(ends.get(log_eps0, math.exp(log_eps0))), 2.0 * target + 1.0) - target

    root = optimize.brentq(gap, math.log(below), math.log(upper), xtol=ROUND_TRIP_RTOL / 8.0, rtol=1e-15)
    eps0 = math.exp(root)
    step = ROUND_TRIP_RTOL / 8.0
    while amplified(eps0) > target:  # Brent's root may sit just above the target
        eps0 = max(below, eps0 * (1.0 - step))
        step *= 2.0
    return eps0


__all__ = ["largest_within"]
