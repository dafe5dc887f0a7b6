"""SGDL-Shuffle(eps, delta, n) of the metric paper (§5.2, Algorithm 4; privacy Theorem 5.1).

Each user adds N ~ SGDL(1/n, e^-eps) = NB(1/n, 1 - e^-eps) - NB(1/n, 1 - e^-eps), so that without
truncation the n noises sum to SGDL(1, e^-eps), the geometric noise of Geo-Central (infinite
divisibility); shift by c, truncate, unary-encode.  c is `shuffledp.accounting.metric.sgdl_shuffle_c`
(the exact negative-binomial tail; the paper's Lemma C.1 value is too small to cover delta).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from shuffledp._util.validation import check_positive_int, check_probability, check_rng
from shuffledp.accounting.bounds import check_delta
from shuffledp.accounting.metric import (
    SGDL_SHUFFLE_METHODS,
    check_noise_epsilon,
    sgdl_shuffle_c,
    sgdl_shuffle_epsilon,
    sgdl_shuffle_local_epsilon,
    sgdl_shuffle_report_epsilon,
)
from shuffledp.errors import PrivacyParameterError
from shuffledp.protocols.metric._base import check_draws, not_analysed
from shuffledp.protocols.metric._padded import PaddedUnaryProtocol

__all__ = ["SGDLShuffle", "sgdl_noise"]


def sgdl_noise(beta: float, p: float, size, rng: np.random.Generator) -> np.ndarray:
    """Draws of SGDL(beta, p): the difference of two independent NB(beta, 1 - p) (failures before beta successes).

    Parameters
    ----------
    beta : float, > 0
        Shape of the two negative binomials.
    p : float, in (0, 1)
        The SGDL parameter e^-eps.
    size : int >= 0 or tuple of int >= 0
        Output shape.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        int64 draws.

    Raises
    ------
    PrivacyParameterError
        For ``beta`` not a finite number > 0, ``p`` outside (0, 1) or a negative ``size``.
    ShapeError
        If ``rng`` is not a numpy Generator, or ``size`` holds more than `MAX_DRAWS` draws.

    References
    ----------
    metric-privacy-shuffler.txt §5.1-5.2.

    Examples
    --------
    Mean 0 and variance 2 beta p / (1 - p)^2:

    >>> import numpy as np
    >>> draws = sgdl_noise(0.5, 0.6, 100_000, np.random.default_rng(0))
    >>> var = 2 * 0.5 * 0.6 / 0.4**2
    >>> bool(abs(draws.mean()) < 4 * np.sqrt(var / 1e5)), bool(abs(draws.var() / var - 1) < 0.05)
    (True, True)
    """
    if isinstance(beta, (bool, str, bytes)) or not (
        isinstance(beta, numbers.Real) and math.isfinite(beta) and beta > 0
    ):
        raise PrivacyParameterError(f"beta (SGDL shape) must be a finite number > 0, got {beta!r}")
    p = check_probability(p, "p (SGDL parameter e^-eps)")
    dims = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    for dim in dims:
        check_positive_int(dim, "size (output shape)", minimum=0)
    check_draws(math.prod(dims), f"sgdl_noise(size={size!r})")
    rng = check_rng(rng)
    success = -math.expm1(math.log(p))
    return rng.negative_binomial(beta, success, size).astype(np.int64) - rng.negative_binomial(beta, success, size)


class SGDLShuffle(PaddedUnaryProtocol):
    """SGDL-Shuffle(eps, delta, n) on values in {0, ..., k}; Theorem 5.1 claims (eps, delta)-d_X-privacy.

    ``epsilon`` is the noise parameter eps (Theorem 5.1's claim, not a valid bound for datasets far apart);
    ``shuffle_epsilon`` is the guarantee of ``method``: certified by default (valid for every pair of
    datasets, `shuffledp.accounting.metric.sgdl_shuffle_certified_epsilon`), or ``"theorem-5.1"`` (= eps).

    Parameters
    ----------
    epsilon : float, > 0
        The protocol's epsilon (Theorem 5.1).
    delta : float, in (0, 1)
        Target delta (sets c).
    n : int, >= 1
        Number of users.
    k : int, >= 1
        Largest value.
    method : {"certified", "theorem-5.1"}
        Which analysis gives ``shuffle_epsilon``.
    c : int >= 0, optional
        The padding; default `shuffledp.accounting.metric.sgdl_shuffle_c` (Algorithm 4 with the exact tail).  A
        c >= k/2 with room left in delta is what lets the certified analysis go below the per-report epsilon.
    granularity : int, >= 1
        Appendix G's Q (Algorithm 8; the analyst returns Q sum B - n c).  Its privacy is not analysed by the paper:
        with Q > 1 ``shuffle_epsilon`` is the per-report pure bound `sgdl_shuffle_report_epsilon` and
        ``method="theorem-5.1"`` raises `shuffledp.errors.OutsideRegimeError` when asked.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §5.2, Algorithm 4, Theorem 5.1; §7, Theorem 7.2.

    Examples
    --------
    Untruncated, the n noises add up to SGDL(1, e^-eps): variance 2 p / (1 - p)^2, p = e^-eps:

    >>> import numpy as np
    >>> proto = SGDLShuffle(0.5, 1e-4, 100, 10)
    >>> x = np.arange(100) % 11
    >>> sums = proto.estimate_sum(x, np.random.default_rng(1), 4000)
    >>> p = np.exp(-0.5); sd = np.sqrt(2 * p / (1 - p) ** 2)
    >>> bool(abs(sums.mean() - x.sum()) < 4 * sd / np.sqrt(4000)), bool(abs(sums.std() / sd - 1) < 0.05)
    (True, True)
    """

    def __init__(
        self,
        epsilon: float,
        delta: float,
        n: int,
        k: int,
        *,
        method: str = "certified",
        c: int | None = None,
        granularity: int = 1,
    ) -> None:
        super().__init__(n, k)
        self.granularity = check_positive_int(granularity, "granularity (Q, Appendix G)")
        if method not in SGDL_SHUFFLE_METHODS:
            raise PrivacyParameterError(f"method must be one of {', '.join(SGDL_SHUFFLE_METHODS)}, got {method!r}")
        self.method = method
        self.epsilon = check_noise_epsilon(epsilon, "epsilon")
        self.delta = check_delta(delta)
        self.c = (
            sgdl_shuffle_c(self.epsilon, self.delta, self.n) if c is None else check_positive_int(c, "c", minimum=0)
        )

    @property
    def shuffle_epsilon(self) -> float:
        """The shuffle-model epsilon of ``method`` at this padding (certified by default; the per-report bound
        with granularity Q > 1)."""
        if self.granularity > 1:
            if self.method != "certified":
                raise not_analysed("Theorem 5.1", self.granularity)
            return sgdl_shuffle_report_epsilon(self.epsilon, self.n)
        return sgdl_shuffle_epsilon(self.epsilon, self.delta, self.n, self.k, method=self.method, c=self.c)

    def local_epsilon(self) -> float:
        """Theorem 7.2: eps_L if the shuffler is compromised."""
        return sgdl_shuffle_local_epsilon(self.epsilon, self.n)

    def noise(self, size, rng: np.random.Generator) -> np.ndarray:
        """Draws of SGDL(1/n, e^-eps) (`sgdl_noise`)."""
        return sgdl_noise(1.0 / self.n, math.exp(-self.epsilon), size, rng)

    def __repr__(self) -> str:
        return (
            f"SGDLShuffle(epsilon={self.epsilon:g}, delta={self.delta:g}, n={self.n}, k={self.k}, "
            f"method={self.method!r}, c={self.c}"
            + (f", granularity={self.granularity})" if self.granularity > 1 else ")")
        )
