"""The geometric (discrete Laplace) mechanism (metric paper §4, Eq. 2; Ghosh et al. [23]).

G(x, eps_geo) outputs y in Z with Pr[y] = (1 - a)/(1 + a) a^|x - y|, a = e^-eps_geo,
i.e. y = x + N with N a two-sided geometric (discrete Laplace) variable.  In the
metric paper's notation N ~ SGDL(1, a): the symmetric generalized discrete
Laplace distribution SGDL(beta, a) is the difference of two independent negative
binomials NB(beta, 1 - a) (§4.1, §5.1), and beta = 1 is the discrete Laplace
law sampled exactly at any eps_geo by `discrete_laplace_noise`.

`Geometric` uses it as an eps-LDP randomizer on {low, ..., high}: the
metric parameter is eps_geo = eps / (high - low), so that the two farthest inputs
are eps apart (and G is eps_geo-d_R-private, Eq. 2).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from shuffledp._util.validation import as_index_array, check_probability
from shuffledp.errors import PrivacyParameterError
from shuffledp.params import BlanketDecomposition
from shuffledp.randomizers._decomposition import decomposition_from_matrix, matrix_is_small
from shuffledp.randomizers._sampling import bernoulli, geometric_tail
from shuffledp.randomizers.base import DiscreteRandomizer
from shuffledp.randomizers.domains import IntegerRange

__all__ = ["Geometric", "discrete_laplace_noise"]


def _two_sided_geometric(rate: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """N with Pr[N = r] = tanh(rate/2) e^(-rate |r|), r in Z, exact at any rate.

    N = 0 unless an exact coin of probability 2a/(1+a) = 2/(1 + e^rate) fires
    (a = e^-rate; at rate 40 that is 8e-18, which ``rng.geometric(1 - a)`` never
    realizes); then a fair sign and |N| = 1 + G with Pr[G >= g] = a^g (untruncated).
    """
    moved = np.flatnonzero(bernoulli(2.0 / (1.0 + math.exp(rate)), size, rng))
    magnitude = geometric_tail(rate, moved.size, rng, rows=moved)
    magnitude += 1
    sign = rng.integers(0, 2, moved.size, dtype=np.int8)
    sign *= -2
    sign += 1  # +1 or -1, each with probability 1/2
    magnitude *= sign
    N = np.zeros(size, dtype=np.int64)
    N[moved] = magnitude
    return N


def discrete_laplace_noise(p: float, size: int | tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Draws of N with Pr[N = r] = (1 - p)/(1 + p) p^|r|, r in Z (SGDL(1, p) of the metric paper).

    ``p`` = e^-eps_geo in (0, 1) is the metric paper's second SGDL parameter.
    Exact for every p (see `_two_sided_geometric`).
    """
    p = check_probability(p, "p (discrete Laplace parameter e^-eps)")
    shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    return _two_sided_geometric(-math.log(p), math.prod(shape), rng).reshape(shape)


class Geometric(DiscreteRandomizer):
    """Geometric mechanism y = x + N on the integers {low, ..., high}, eps-LDP (metric paper §4, Eq. 2).

    N is discrete Laplace, Pr[N = r] = (1 - a)/(1 + a) a^|r| with
    a = e^(-eps_geo), eps_geo = eps / (high - low), so the two farthest inputs are
    eps apart and G is eps_geo-d_R-private.  Outputs are unbounded integers and
    unbiased (E[y] = x).

    Parameters
    ----------
    epsilon : float
        Local privacy budget, in (0, 700].
    low, high : int
        The input range, low < high.

    Raises
    ------
    PrivacyParameterError
        For epsilon outside (0, 700], non-integer bounds or low >= high.

    Examples
    --------
    >>> import math
    >>> from shuffledp.randomizers import Geometric
    >>> from shuffledp.audit import exact_epsilon
    >>> R = Geometric(epsilon=2.0, low=0, high=4)
    >>> R.epsilon_geo, abs(R.p - math.exp(-0.5)) < 1e-15
    (0.5, True)
    >>> exact_epsilon(R.transition_matrix())
    2.0
    """

    name = "geometric"

    def __init__(self, epsilon: float, low: int, high: int) -> None:
        for label, v in (("low", low), ("high", high)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise PrivacyParameterError(f"{label} must be an integer, got {v!r}")
        if not low < high:
            raise PrivacyParameterError(f"need low < high for the input range, got low={low!r}, high={high!r}")
        super().__init__(epsilon, IntegerRange(int(low), int(high)))
        self.low, self.high = int(low), int(high)
        self.sensitivity = self.high - self.low
        self.epsilon_geo = self.epsilon / self.sensitivity
        #: a = e^-eps_geo, the discrete Laplace parameter.
        self.p = math.exp(-self.epsilon_geo)

    def _randomize(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return X + _two_sided_geometric(self.epsilon_geo, X.shape[0], rng)

    def estimate(self, Y: Any) -> np.ndarray:
        """The report itself (already unbiased), as float64 of shape (n,)."""
        return as_index_array(Y, "Y").astype(np.float64)

    def _window(self, truncate: int | None) -> int:
        if truncate is None:
            return 0
        if isinstance(truncate, bool) or not isinstance(truncate, (int, np.integer)) or truncate < 0:
            raise PrivacyParameterError(f"truncate must be an integer >= 0, got {truncate!r}")
        return int(truncate)

    def transition_outputs(self, truncate: int | None = None) -> np.ndarray:
        """Column labels of `transition_matrix`: low-T-1, ..., high+T+1.

        The first and last label stand for "at most" and "at least" that value.
        """
        t = self._window(truncate)
        return np.arange(self.low - t - 1, self.high + t + 2)

    def transition_inputs(self) -> np.ndarray:
        """The integers low, ..., high."""
        return np.arange(self.low, self.high + 1)

    def output_index(self, Y: np.ndarray) -> np.ndarray:
        """Column of each report in the default table (T = 0): the end columns lump the tails."""
        labels = self.transition_outputs()
        return np.clip(np.asarray(Y, dtype=np.int64), labels[0], labels[-1]) - labels[0]

    def transition_matrix(self, truncate: int | None = None) -> np.ndarray:
        """Exact law of clip(y, low - T - 1, high + T + 1) for each input low, ..., high.

        Columns low-T, ..., high+T hold (1-a)/(1+a) a^|y-x|; the two end columns
        hold the exact tail masses Pr[y <= low-T-1] = a^(x-low+T+1)/(1+a) and
        Pr[y >= high+T+1] = a^(high+T+1-x)/(1+a).  Clipping is post-processing,
        and the largest ratio, e^eps, is attained in every column outside
        (low, high), so the exact audit of this matrix is the mechanism's epsilon.
        ``truncate=None`` means T = 0: the smallest table on which the exact audit is
        exact, and one whose every cell a sampling audit can observe.
        """
        return np.exp(self.log_transition_matrix(truncate))

    def log_transition_matrix(self, truncate: int | None = None) -> np.ndarray:
        """log of `transition_matrix`, computed in log space (no underflow at any epsilon)."""
        t = self._window(truncate)
        x = np.arange(self.low, self.high + 1)[:, None]
        y = self.transition_outputs(t)[None, :]
        e = self.epsilon_geo
        L = math.log(math.tanh(e / 2.0)) - e * np.abs(y - x)  # (1-a)/(1+a) = tanh(eps_geo/2)
        L[:, 0] = -e * (x[:, 0] - self.low + t + 1) - math.log1p(self.p)
        L[:, -1] = -e * (self.high + t + 1 - x[:, 0]) - math.log1p(self.p)
        return L

    def amplification_parameters(self) -> BlanketDecomposition:
        """beta = the exact TV distance of the inputs low and high; the common ratio read off the matrix
        when it is small (else e^eps, the LDP guarantee).

        TV(x, x + D) = Pr[-D/2 <= N < D/2], i.e. 1 - a^(D/2) for even D and
        1 - 2 a^((D+1)/2)/(1 + a) for odd D; it grows with D, so the range's end
        points attain the maximum (D = high - low).
        """
        a, d, e_geo = self.p, self.sensitivity, self.epsilon_geo
        if d % 2 == 0:
            beta = -math.expm1(-(d // 2) * e_geo)
        else:  # (1 - a^c + a - a^c)/(1 + a) with c = (D+1)/2, via expm1 (no cancellation)
            c = (d + 1) // 2
            beta = (-math.expm1(-c * e_geo) - a * math.expm1(-(c - 1) * e_geo)) / (1.0 + a)
        if matrix_is_small(self.high - self.low + 1, self.high - self.low + 3):
            # the clipped table is exact here: its end columns lump tail outputs whose columns are
            # proportional across inputs, which changes neither TV, common part nor blanket
            return decomposition_from_matrix(self.transition_matrix(), self.epsilon, beta)
        return BlanketDecomposition(eps0=self.epsilon, beta=beta)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(epsilon={self.epsilon:g}, low={self.low}, high={self.high})"
