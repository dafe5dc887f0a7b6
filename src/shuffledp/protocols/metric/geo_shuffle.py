"""Geo-Shuffle(eps_geo, delta, n) of the metric paper (§4.1, Algorithm 3; privacy: Theorem 4.1, or the certified bound).

Each user adds geometric noise N ~ G(0, eps_geo) (Eq. 2; sampled exactly by
`shuffledp.randomizers.geometric.discrete_laplace_noise`), shifts by c (Proposition 2),
truncates to [0, k + 2c] and sends the unary encoding; the analyst returns sum B - n c.
"""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np

from shuffledp._util.validation import check_positive_int
from shuffledp.accounting.bounds import check_delta
from shuffledp.accounting.metric import (
    GEO_SHUFFLE_METHODS,
    check_noise_epsilon,
    geo_shuffle_c,
    geo_shuffle_compromised_epsilon,
    geo_shuffle_epsilon,
    geo_shuffle_local_epsilon,
)
from shuffledp.errors import PrivacyParameterError
from shuffledp.protocols.metric._base import not_analysed
from shuffledp.protocols.metric._padded import PaddedUnaryProtocol
from shuffledp.randomizers.geometric import discrete_laplace_noise

__all__ = ["GeoShuffle"]


class GeoShuffle(PaddedUnaryProtocol):
    """Geo-Shuffle(eps_geo, delta, n) on values in {0, ..., k}.

    ``epsilon`` is the certified guarantee (valid for every pair of datasets; see
    `shuffledp.accounting.metric.geo_shuffle_certified_epsilon`); ``method="theorem-4.1"`` makes it
    the paper's Theorem 4.1, which is not a valid bound in general (kept to reproduce the paper).

    Parameters
    ----------
    eps_geo : float, in (0, MAX_EPSILON = 100]
        Each user's geometric-noise budget (a number; strings are refused).
    delta : float, in (0, 1)
        Target delta (sets c, Proposition 2).
    n : int, >= 1
        Number of users.
    k : int, >= 1
        Largest value.
    method : {"certified", "theorem-4.1"}
        Which analysis gives ``epsilon``.
    granularity : int, >= 1
        Appendix G's Q: users send U_Q(x', ceil((k + 2c)/Q)) (Algorithm 8), the analyst returns Q sum B - n c
        (unbiased for sum x').  The paper does not analyse its privacy: with Q > 1 ``epsilon`` is the per-report
        bound eps_geo (each message is still post-processing of x + N, so the release is (eps_geo, 0)-d_X-private)
        and ``method="theorem-4.1"`` raises `shuffledp.errors.OutsideRegimeError` when asked.

    Raises
    ------
    PrivacyParameterError
        For an unknown ``method`` or an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §4.1, Algorithm 3, Proposition 2, Theorem 4.1; §7, Proposition 5.

    Examples
    --------
    >>> import numpy as np
    >>> proto = GeoShuffle.for_epsilon(0.1, 1e-4, n=300, k=1000, method="theorem-4.1")
    >>> proto.epsilon <= 0.1, proto.c, proto.width
    (True, 33, 1066)
    >>> x = np.random.default_rng(0).integers(0, 1001, 300)
    >>> bits = proto.shuffle(proto.randomize(x, np.random.default_rng(1)), np.random.default_rng(2))
    >>> bits.shape, bool(abs(proto.analyze(bits) - x.sum()) < 200)
    ((319800,), True)
    """

    def __init__(
        self, eps_geo: float, delta: float, n: int, k: int, *, method: str = "certified", granularity: int = 1
    ) -> None:
        super().__init__(n, k)
        self.granularity = check_positive_int(granularity, "granularity (Q, Appendix G)")
        self.eps_geo = check_noise_epsilon(eps_geo, "eps_geo")
        self.delta = check_delta(delta)
        if method not in GEO_SHUFFLE_METHODS:
            raise PrivacyParameterError(f"method must be one of {', '.join(GEO_SHUFFLE_METHODS)}, got {method!r}")
        self.method = method
        self.c = geo_shuffle_c(self.eps_geo, self.delta, self.n)

    @classmethod
    def for_epsilon(cls, epsilon: float, delta: float, n: int, k: int, *, method: str = "certified") -> GeoShuffle:
        """The protocol whose ``method`` guarantee is at most ``epsilon`` (largest such eps_geo)."""
        return cls(geo_shuffle_local_epsilon(epsilon, delta, n, k, method=method), delta, n, k, method=method)

    @cached_property
    def epsilon(self) -> float:
        """The shuffle-model epsilon of ``method`` (certified by default; eps_geo with granularity Q > 1)."""
        if self.granularity > 1:
            if self.method != "certified":
                raise not_analysed("Theorem 4.1", self.granularity)
            return self.eps_geo
        return geo_shuffle_epsilon(self.eps_geo, self.delta, self.n, self.k, method=self.method)

    def local_epsilon(self) -> float:
        """Proposition 5: eps_L = eps_geo (pure) if the shuffler is compromised."""
        return geo_shuffle_compromised_epsilon(self.eps_geo)

    def noise(self, size, rng: np.random.Generator) -> np.ndarray:
        """Draws of the geometric noise G(0, eps_geo) (discrete Laplace, p = e^-eps_geo)."""
        return discrete_laplace_noise(math.exp(-self.eps_geo), size, rng)

    def __repr__(self) -> str:
        q = f", granularity={self.granularity}" if self.granularity > 1 else ""
        return f"GeoShuffle(eps_geo={self.eps_geo:g}, delta={self.delta:g}, n={self.n}, k={self.k}, method={self.method!r}{q})"
