"""Square Wave mechanism on [-1,1]^d (Li, Wang, Lopuhaä-Zwakenberg, Li, Škorić, Li,
"Estimating numerical distributions under local differential privacy", SIGMOD 2020, §4).

For one value v in [0, 1] and budget eps, the report y in [-b, 1+b] has density

    p = e^eps / (2b e^eps + 1)  on [v - b, v + b],     q = 1 / (2b e^eps + 1)  elsewhere,
    b = (eps e^eps - e^eps + 1) / (2 e^eps (e^eps - 1 - eps)),

so p/q = e^eps (eps-LDP) whatever b.  PIC Appendix B gives each of the d
coordinates of [-1,1]^d the budget eps/d; coordinate x maps to v = (x + 1)/2.

Reports are the raw y (on SW's own scale [-b, 1+b]).  `SquareWave.estimate`
debiases each report: the density is q on [-b, 1+b] plus (p - q) on the window, so

    E[y | v] = q (1 + 2b)/2 + 2b (p - q) v,

affine in v with slope 2b(p - q) = 2b(e^eps - 1)/(2b e^eps + 1) in (0, 1); hence
v~ = (y - q(1 + 2b)/2) / (2b(p - q)) is unbiased for v and x~ = 2 v~ - 1 for x.
(The SW paper itself estimates the input *distribution* with EM instead.)
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from shuffledp._util.validation import check_positive_int
from shuffledp.params import BlanketDecomposition
from shuffledp.randomizers._total_variation import ternary_product_total_variation
from shuffledp.randomizers.base import LocalRandomizer
from shuffledp.randomizers.domains import Box

__all__ = ["SquareWave", "square_wave_half_width"]


def square_wave_half_width(epsilon: float) -> float:
    """SW's b (SIGMOD 2020, §4.2), written with expm1 to limit cancellation at small eps."""
    e = math.exp(epsilon)
    return (epsilon * e - math.expm1(epsilon)) / (2.0 * e * (math.expm1(epsilon) - epsilon))


class SquareWave(LocalRandomizer):
    """Square Wave per coordinate with budget eps/d (Li et al., SIGMOD 2020, §4; PIC Appendix B).

    Coordinate x in [-1, 1] maps to v = (x + 1)/2; the report has density
    p = e^e / (2b e^e + 1) on [v - b, v + b] and q = 1 / (2b e^e + 1) elsewhere on
    [-b, 1 + b], with e = eps/d and b = (e e^e - e^e + 1) / (2 e^e (e^e - 1 - e)),
    so p/q = e^(eps/d) per coordinate and the product is eps-LDP.  Reports are on
    SW's scale [-b, 1+b]^d; `estimate` maps them to unbiased estimates on
    [-1,1]^d.

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
    >>> from shuffledp.randomizers import SquareWave
    >>> R = SquareWave(epsilon=2.0, dim=2)
    >>> abs(R.p / R.q - math.e) < 1e-12   # e^(eps/d)
    True
    """

    max_epsilon = 700.0

    name = "square_wave"
    #: Largest size accepted (its amplification_parameters() convolves dim per-coordinate loss laws: about 1.5 s at this cap, a MemoryError by 10^8).
    MAX_SIZE: ClassVar[int] = 10_000_000

    def __init__(self, epsilon: float, dim: int = 2) -> None:
        dim = check_positive_int(dim, "dim", maximum=self.MAX_SIZE)
        super().__init__(epsilon, Box(dim))
        self.dim = dim
        self.coordinate_epsilon = self.epsilon / dim
        e = math.exp(self.coordinate_epsilon)
        self.half_width = b = square_wave_half_width(self.coordinate_epsilon)
        self.p = e / (2.0 * b * e + 1.0)
        self.q = 1.0 / (2.0 * b * e + 1.0)
        self.window_probability = 2.0 * b * self.p
        self.slope = 2.0 * b * (self.p - self.q)  # dE[y]/dv
        self.intercept = self.q * (1.0 + 2.0 * b) / 2.0  # E[y | v = 0]

    def _randomize(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        b = self.half_width
        V = (X + 1.0) / 2.0
        U = rng.random(X.shape)
        in_window = rng.random(X.shape) < self.window_probability
        # Window: v + b(2U - 1), uniform on [v-b, v+b].  Outside: U in [0, 1) maps to
        # [-b, v-b) for U < v and to [v+b, 1+b) otherwise (total length 1), uniformly.
        outside = U - b + 2.0 * b * (U >= V)
        return np.where(in_window, V + b * (2.0 * U - 1.0), outside)

    def estimate(self, Y: Any) -> np.ndarray:
        """x~ = 2 (y - q(1+2b)/2) / (2b(p - q)) - 1, unbiased per report (module docstring)."""
        return 2.0 * (np.asarray(Y, dtype=np.float64) - self.intercept) / self.slope - 1.0

    def density(self, y: np.ndarray, x: float) -> np.ndarray:
        """Density of one coordinate's report at ``y`` for the input coordinate ``x`` in [-1, 1]."""
        y = np.asarray(y, dtype=np.float64)
        b, v = self.half_width, (x + 1.0) / 2.0
        inside = (y >= -b) & (y <= 1.0 + b)
        return np.where(np.abs(y - v) <= b, self.p, self.q) * inside

    def amplification_parameters(self) -> BlanketDecomposition:
        """eps0 = eps and beta = exact max TV of the d-coordinate product.

        On one coordinate the density ratio is e^{eps/d}, 1 or e^{-eps/d}, and
        TV(v, v') = (p - q) |[v-b, v+b] \\ [v'-b, v'+b]| = (p - q) min(|v - v'|, 2b),
        largest at v, v' = 0, 1.  The product is handled by
        `._total_variation.ternary_product_total_variation` (opposite corners are worst).
        """
        coordinate_tv = (self.p - self.q) * min(1.0, 2.0 * self.half_width)
        tv = ternary_product_total_variation(self.coordinate_epsilon, coordinate_tv, self.dim)
        return BlanketDecomposition(eps0=self.epsilon, beta=min(tv, math.tanh(self.epsilon / 2.0)))
