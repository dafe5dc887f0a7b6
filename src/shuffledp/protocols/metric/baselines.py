"""Geo-Local and Geo-Central (metric paper §4): the geometric mechanism in the local and central models.

Geo-Local: every user reports x + N, N ~ G(0, eps_geo) (eps_geo-d_R-private each, Eq. 2); the analyst sums.
Geo-Central: a trusted curator releases sum x + N, N ~ G(0, eps): the sum has sensitivity 1 for the
Manhattan distance (Theorem 2.2), so the release is eps-d_X-private; an average divides by n.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from shuffledp._util.validation import check_positive_int, check_rng
from shuffledp.accounting.metric import check_noise_epsilon
from shuffledp.errors import ShapeError
from shuffledp.protocols.metric._base import check_draws, check_values
from shuffledp.randomizers.geometric import discrete_laplace_noise

__all__ = ["GeoCentral", "GeoLocal"]


def _nonempty(x: np.ndarray) -> np.ndarray:
    if x.size == 0:
        raise ShapeError("x (the users' values) must hold at least one value, got an empty array")
    return x


class GeoLocal:
    """Geo-Local(eps_geo) on values in {0, ..., k}: (eps_geo, 0)-d_X-private, unbiased sum.

    Parameters
    ----------
    eps_geo : float, in (0, 100]
        Each user's geometric-noise budget (`shuffledp.accounting.metric.MAX_EPSILON` at most).
    k : int, >= 1
        Largest value.

    Raises
    ------
    PrivacyParameterError
        For ``eps_geo`` or ``k`` out of range.

    References
    ----------
    metric-privacy-shuffler.txt §4 (Eq. 2) and §6.1 (Geo-Local).

    Examples
    --------
    The sum of n discrete Laplace draws has variance n 2 p / (1 - p)^2, p = e^-eps_geo:

    >>> import numpy as np
    >>> x = np.arange(100) % 11
    >>> sums = GeoLocal(0.5, 10).estimate_sum(x, np.random.default_rng(1), 4000)
    >>> p = np.exp(-0.5); sd = np.sqrt(100 * 2 * p / (1 - p) ** 2)
    >>> bool(abs(sums.mean() - x.sum()) < 4 * sd / np.sqrt(4000)), bool(abs(sums.std() / sd - 1) < 0.05)
    (True, True)
    """

    def __init__(self, eps_geo: float, k: int) -> None:
        self.eps_geo = self.epsilon = check_noise_epsilon(eps_geo, "eps_geo")
        self.k = check_positive_int(k, "k (largest value)")
        self.delta = 0.0

    def randomize(self, x: Any, rng: np.random.Generator | None = None) -> np.ndarray:
        """Every user's report x + N (int64)."""
        x = _nonempty(check_values(x, self.k))
        return x + discrete_laplace_noise(math.exp(-self.eps_geo), x.size, check_rng(rng))

    def estimate_sum(self, x: Any, rng: np.random.Generator | None = None, repetitions: int = 1) -> np.ndarray:
        """``repetitions`` independent sums of the reports (float64)."""
        x = _nonempty(check_values(x, self.k))
        reps = check_positive_int(repetitions, "repetitions")
        check_draws(reps * x.size, f"repetitions={reps:,}")
        noise = discrete_laplace_noise(math.exp(-self.eps_geo), (reps, x.size), check_rng(rng))
        return (int(x.sum()) + noise.sum(axis=1)).astype(np.float64)


class GeoCentral:
    """Geo-Central(eps): sum x + N, N ~ G(0, eps), released by a trusted curator: (eps, 0)-d_X-private.

    Parameters
    ----------
    epsilon : float, in (0, 100]
        The central budget (`shuffledp.accounting.metric.MAX_EPSILON` at most).
    k : int, >= 1
        Largest value.

    Raises
    ------
    PrivacyParameterError
        For ``epsilon`` or ``k`` out of range.

    References
    ----------
    metric-privacy-shuffler.txt §2.3 (Theorem 2.2) and §6.1 (Geo-Central).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.arange(100) % 11
    >>> sums = GeoCentral(0.5, 10).estimate_sum(x, np.random.default_rng(1), 4000)
    >>> p = np.exp(-0.5); sd = np.sqrt(2 * p / (1 - p) ** 2)
    >>> bool(abs(sums.mean() - x.sum()) < 4 * sd / np.sqrt(4000)), bool(abs(sums.std() / sd - 1) < 0.05)
    (True, True)
    """

    def __init__(self, epsilon: float, k: int) -> None:
        self.epsilon = check_noise_epsilon(epsilon, "epsilon")
        self.k = check_positive_int(k, "k (largest value)")
        self.delta = 0.0

    def estimate_sum(self, x: Any, rng: np.random.Generator | None = None, repetitions: int = 1) -> np.ndarray:
        """``repetitions`` independent releases sum x + N (float64)."""
        x = _nonempty(check_values(x, self.k))
        reps = check_positive_int(repetitions, "repetitions")
        check_draws(reps, f"repetitions={reps:,}")
        return (int(x.sum()) + discrete_laplace_noise(math.exp(-self.epsilon), reps, check_rng(rng))).astype(np.float64)
