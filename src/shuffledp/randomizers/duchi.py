"""PrivHS: Duchi, Jordan & Wainwright's mechanism for the l-infinity ball [-1,1]^d
("Local privacy and statistical minimax rates", FOCS 2013; JASA 2018, §4.2.3),
the "PrivHS" baseline of the PIC paper (Appendix B).

1. Randomized rounding: v_j = +1 with probability (1 + x_j)/2, else -1, so E[v] = x.
2. Output z = B s, s in {-1, 1}^d, uniform on the half {<s, v> > 0} with
   probability pi, otherwise uniform on the other half.

For odd d no s is orthogonal to v, the halves have 2^{d-1} elements each,
pi = e^eps/(e^eps + 1), and the sum of (2k - d) C(d, k) over k > d/2 equals
d C(d-1, floor(d/2)) (k = coordinates where s agrees with v), so
E[z | v] = B (2 pi - 1) C(d-1, floor(d/2)) / 2^{d-1} v and Duchi et al.'s
B = C_d (e^eps + 1)/(e^eps - 1), C_d = 2^{d-1} / C(d-1, (d-1)/2), is unbiased.

Even d (deviation, privacy-conservative).  The papers put the ties <s, v> = 0
in *both* halves, C_d = (2^{d-1} + C(d, d/2)/2) / C(d-1, d/2).  That mechanism is
not eps-LDP: for d = 2, v = (1, 1), v' = (1, -1) and s = (-1, 1), s is a tie for v
(probability 1/3) but in the negative half for v' ((1 - pi)/3), a ratio of
1 + e^eps.  We keep the construction and put the ties in the negative half only,
with the positive half chosen with probability e^eps M / (e^eps M + 2^d - M),
M = #{s : <s, v> > 0} = 2^{d-1} - C(d, d/2)/2: every output then has probability
A = e^eps D (positive half) or D = 1 / (e^eps M + 2^d - M) (the rest), exactly
eps-LDP, and among such rules it maximises A - D.  Ties contribute nothing to
E[s | v], so E[z | v] = B (A - D) C(d-1, d/2) v and B = 1 / ((A - D) C(d-1, floor(d/2))).
For odd d this is Duchi et al.'s mechanism unchanged.  Reports z are unbiased.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import ClassVar

import numpy as np
from scipy import special

from shuffledp._util.validation import check_positive_int
from shuffledp.params import BlanketDecomposition
from shuffledp.randomizers._total_variation import _FLOAT_SLACK
from shuffledp.randomizers.base import LocalRandomizer
from shuffledp.randomizers.domains import Box

__all__ = ["PrivHS", "output_bound", "positive_count"]


def positive_count(dim: int) -> int:
    """M = #{s in {-1, 1}^d : <s, v> > 0} (the same for every vertex v)."""
    return (2**dim - (math.comb(dim, dim // 2) if dim % 2 == 0 else 0)) // 2


@lru_cache(maxsize=256)
def _output_probabilities(epsilon: float, dim: int) -> np.ndarray:
    """w[k] = P(s | v) for s agreeing with v on k coordinates (k = 0..d): A if 2k > d, else D."""
    m = positive_count(dim)
    low = 1.0 / (math.exp(epsilon) * m + (2**dim - m))
    k = np.arange(dim + 1)
    return np.where(2 * k > dim, math.exp(epsilon) * low, low)


def output_bound(epsilon: float, dim: int) -> float:
    """B = 1 / ((A - D) C(d-1, floor(d/2))): makes the reports unbiased."""
    m = positive_count(dim)
    # (A - D) = (e^eps - 1) D, written with expm1 for small eps.
    return (math.exp(epsilon) * m + (2**dim - m)) / (math.expm1(epsilon) * math.comb(dim - 1, dim // 2))


@lru_cache(maxsize=256)
def _total_variation(epsilon: float, dim: int) -> float:
    """Exact max TV(R(x), R(x')) over [-1,1]^d.

    P(z | x) is affine in each x_j, so |P(z | x) - P(z | x')| summed over z is convex in
    each coordinate and its maximum over the cube is reached at vertices x = v, x' = v'.
    For v, v' differing on h coordinates, an output agreeing with v on k1 of the d - h
    common coordinates and on k2 of the h others agrees with v' on k1 + h - k2; there
    are C(d-h, k1) C(h, k2) such outputs.  Returns the maximum over h of
    (1/2) sum C(d-h, k1) C(h, k2) |w[k1 + k2] - w[k1 + h - k2]|.
    """
    w = _output_probabilities(epsilon, dim)
    best = 0.0
    for h in range(1, dim + 1):
        k1 = np.arange(dim - h + 1)[:, None]
        k2 = np.arange(h + 1)[None, :]
        counts = special.comb(dim - h, k1) * special.comb(h, k2)
        best = max(best, 0.5 * float(np.sum(counts * np.abs(w[k1 + k2] - w[k1 + h - k2]))))
    return min(1.0, best * (1.0 + _FLOAT_SLACK))  # float sums err upward


class PrivHS(LocalRandomizer):
    """Duchi et al.'s l-infinity (hypercube sampling) mechanism on [-1,1]^d (JASA 2018, §4.2.3; PIC Appendix B).

    Randomized rounding of x to a vertex v, then a report z = B s with s in
    {-1, 1}^d from the half {<s, v> > 0} with the larger probability; reports lie in
    {-B, B}^d and are unbiased.  For odd d this is Duchi et al.'s mechanism with
    B = C_d (e^eps + 1)/(e^eps - 1), C_d = 2^(d-1) / C(d-1, (d-1)/2); for even d the
    ties are put in the negative half only (the papers' rule is not eps-LDP; module
    docstring), which is exactly eps-LDP.

    Parameters
    ----------
    epsilon : float
        Local privacy budget, in (0, 700].
    dim : int, default 2
        Dimension d >= 1.

    Raises
    ------
    PrivacyParameterError
        For epsilon outside (0, 700] or dim < 1.

    Examples
    --------
    >>> import math
    >>> from shuffledp.randomizers import PrivHS
    >>> R = PrivHS(epsilon=1.0, dim=3)   # C_3 = 4 / 2 = 2
    >>> abs(R.bound - 2 * (math.e + 1) / (math.e - 1)) < 1e-12
    True
    """

    max_epsilon = 700.0

    name = "privhs"
    #: Largest size accepted (its amplification_parameters() takes about 2 s at this cap; above it, it overflows float64 (by dim 2,000 at epsilon 3) or runs for minutes).
    MAX_SIZE: ClassVar[int] = 1_000

    def __init__(self, epsilon: float, dim: int = 2) -> None:
        dim = check_positive_int(dim, "dim", maximum=self.MAX_SIZE)
        super().__init__(epsilon, Box(dim))
        self.dim = dim
        self.bound = output_bound(self.epsilon, dim)
        binom = special.comb(dim, np.arange(dim + 1))
        self._agreement_cdf = np.cumsum(binom * _output_probabilities(self.epsilon, dim))

    def agreement_probabilities(self) -> np.ndarray:
        """P(K = k), k = 0..d, for K the number of coordinates where z agrees with v."""
        return np.diff(self._agreement_cdf, prepend=0.0)

    def output_probability(self, agreements: np.ndarray) -> np.ndarray:
        """P(R outputs z | v) as a function of the number of coordinates where z agrees with v."""
        return _output_probabilities(self.epsilon, self.dim)[np.asarray(agreements)]

    def _randomize(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        n, d = X.shape
        V = np.where(rng.random((n, d)) * 2.0 < 1.0 + X, 1.0, -1.0)
        # P(s | v) depends on s only through K, its number of agreements with v, so s is
        # uniform given K: draw K from its law, then a uniformly random K-subset of
        # coordinates on which s agrees with v.
        K = np.searchsorted(self._agreement_cdf, rng.random(n) * self._agreement_cdf[-1], side="right")
        ranks = np.argsort(np.argsort(rng.random((n, d)), axis=1), axis=1)
        agree = ranks < K[:, None]
        return np.where(agree, self.bound, -self.bound) * V

    def amplification_parameters(self) -> BlanketDecomposition:
        """eps0 = eps (the output probabilities A and D = e^{-eps} A are both reachable)
        and beta = the exact max TV of `_total_variation`."""
        beta = min(_total_variation(self.epsilon, self.dim), math.tanh(self.epsilon / 2.0))
        return BlanketDecomposition(eps0=self.epsilon, beta=beta)
