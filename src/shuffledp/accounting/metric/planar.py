"""Two dimensions (metric paper Appendix D, Theorem D.1 and Proposition 7)."""

from __future__ import annotations

import math

from shuffledp._util.validation import check_epsilon
from shuffledp.accounting._checks import check_delta

# --- two dimensions (Appendix D) --------------------------------------------------------------------------


def planar_guarantee(axis_epsilon: float, axis_delta: float) -> tuple[float, float]:
    """Theorem D.1 + Proposition 7: two (eps, delta)-d_R-private axes give (sqrt(2) eps, 2 delta)-||.||_2-privacy.

    Parameters
    ----------
    axis_epsilon : float, > 0
        Epsilon of each axis.
    axis_delta : float, in (0, 1)
        Delta of each axis.

    Returns
    -------
    (float, float)
        (sqrt(2) axis_epsilon, 2 axis_delta).

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt Appendix D, Theorem D.1 and Proposition 7.

    Examples
    --------
    >>> eps, delta = planar_guarantee(*axis_budget(1.0, 1e-6))  # the two are inverse
    >>> round(eps, 12), round(delta, 18)
    (1.0, 1e-06)
    """
    return math.sqrt(2.0) * check_epsilon(axis_epsilon, "axis_epsilon"), 2.0 * check_delta(axis_delta, "axis_delta")


def axis_budget(epsilon: float, delta: float) -> tuple[float, float]:
    """Per-axis (eps / sqrt(2), delta / 2) for an (eps, delta)-||.||_2-private planar release (Appendix D).

    Parameters
    ----------
    epsilon : float, > 0
        Target planar epsilon.
    delta : float, in (0, 1)
        Target planar delta.

    Returns
    -------
    (float, float)
        (epsilon / sqrt(2), delta / 2).

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt Appendix D.

    Examples
    --------
    >>> eps, delta = axis_budget(1.0, 1e-6)
    >>> round(eps, 6), delta
    (0.707107, 5e-07)
    """
    return check_epsilon(epsilon) / math.sqrt(2.0), check_delta(delta) / 2.0


__all__ = [
    "axis_budget",
    "planar_guarantee",
]
