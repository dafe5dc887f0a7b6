"""Laplace and planar Laplace randomizers on the cube [-1,1]^d (PIC full version, Appendix B).

* `Laplace` (Dwork et al. 2006): y = x + (L_1, ..., L_d), L_j iid
  Laplace(0, Delta/eps) with Delta the l1 diameter of the domain (Appendix B:
  Delta = 4 on [-1,1]^2, the replacement sensitivity).
* `PlanarLaplace` (Andrés et al., "Geo-indistinguishability", CCS 2013):
  density proportional to exp(-eps' ||y - x||_2) on R^2 with eps' = eps / (2 sqrt 2)
  (Appendix B: the l2 diameter of [-1,1]^2 is 2 sqrt 2), so any two inputs are
  eps-indistinguishable.

Both add zero-mean noise, so reports are already unbiased estimates.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import ClassVar

import numpy as np
from scipy import special

from shuffledp._util.validation import check_positive_int
from shuffledp.errors import PrivacyParameterError
from shuffledp.params import BlanketDecomposition
from shuffledp.randomizers._total_variation import product_total_variation
from shuffledp.randomizers.base import LocalRandomizer
from shuffledp.randomizers.domains import Box

__all__ = ["Laplace", "PlanarLaplace", "laplace_total_variation", "planar_laplace_total_variation"]

#: Grid budget of `laplace_total_variation`: each coordinate's loss range [-a, a] gets
#: K = max(32, _LAPLACE_GRID // d) points per side, so rounding raises the total loss by <= eps / K.
_LAPLACE_GRID = 4096


@lru_cache(maxsize=256)
def laplace_total_variation(epsilon: float, dim: int) -> float:
    """Upper bound on max TV(R(x), R(x')) of `Laplace` (the loss is rounded up by <= eps/K).

    Worst pair: opposite corners.  The Laplace location family has a log-concave
    density, so the experiment with a larger shift is more informative (its
    Neyman–Pearson tests are thresholds) and every coordinate is worst at the
    full shift 2.  With b = 2d/eps and a = 2/b = eps/d, the loss of one coordinate
    under R(x0), L = (|y - x1| - |y - x0|)/b, has the law
    P(L <= l) = exp(-(a - l)/2) / 2 on [-a, a) (atoms e^{-a}/2 at -a, 1/2 at a),
    which is rounded up to a grid and convolved (`._total_variation`).
    For d = 1 the exact value is 1 - e^{-eps/2}.
    """
    a = epsilon / dim
    half = max(32, _LAPLACE_GRID // dim)  # K
    h = a / half
    grid = h * np.arange(-half, half + 1)
    pmf = np.empty(grid.size)
    pmf[0] = 0.5 * math.exp(-a)  # the atom at -a, which lies on the grid
    pmf[1:-1] = 0.5 * np.exp(-(a - grid[1:-1]) / 2.0) * -math.expm1(-h / 2.0)  # F(g_k) - F(g_{k-1})
    pmf[-1] = 1.0 - 0.5 * math.exp(-h / 2.0)  # (a - h, a] including the atom 1/2 at a
    return product_total_variation(pmf, h, dim)


class Laplace(LocalRandomizer):
    """Per-coordinate Laplace noise on [-1,1]^d (Dwork et al. 2006; PIC Appendix B).

    y = x + (L_1, ..., L_d) with L_j iid Laplace(0, b), b = Delta / eps and Delta =
    2d the l1 diameter of the cube, so the density ratio e^(||x - x'||_1 / b) is at
    most e^eps: eps-LDP.  Reports are unbiased.

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
    >>> from shuffledp.randomizers import Laplace
    >>> Laplace(epsilon=1.0, dim=2).scale   # 2d / eps
    4.0

    In one dimension the largest total variation is exactly 1 - e^(-eps/2); the
    amplification parameters bound it from above (rounded up by at most eps/K):

    >>> import math
    >>> beta = Laplace(epsilon=1.0, dim=1).amplification_parameters().beta
    >>> 1 - math.exp(-0.5) <= beta < 1 - math.exp(-0.5) + 1e-4
    True
    """

    max_epsilon = 700.0

    name = "laplace"
    #: Largest size accepted (its amplification_parameters() convolves dim per-coordinate loss laws: about 1.5 s and 1 GiB at this cap, a MemoryError by 10^6).
    MAX_SIZE: ClassVar[int] = 100_000

    def __init__(self, epsilon: float, dim: int = 2) -> None:
        dim = check_positive_int(dim, "dim", maximum=self.MAX_SIZE)
        super().__init__(epsilon, Box(dim))
        self.dim = dim
        self.scale = self.domain.l1_diameter / self.epsilon

    def _randomize(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # Laplace(0, 1) = E * S with E ~ Exp(1) and an independent fair sign S.  numpy's
        # ziggurat exponential plus one random bit per value written into the IEEE sign
        # bit (E >= 0 has it clear) is about twice as fast as Generator.laplace.
        Y = rng.standard_exponential(X.shape)
        signs = np.unpackbits(rng.integers(0, 256, size=(Y.size + 7) // 8, dtype=np.uint8), count=Y.size)
        Y.reshape(-1).view(np.uint64)[:] |= signs.astype(np.uint64) << np.uint64(63)
        Y *= self.scale
        Y += X
        return Y

    def amplification_parameters(self) -> BlanketDecomposition:
        """eps0 = eps (the density ratio e^{||x - x'||_1 / b} reaches e^eps at opposite corners)
        and beta from `laplace_total_variation` (below the generic (e^eps - 1)/(e^eps + 1))."""
        beta = min(laplace_total_variation(self.epsilon, self.dim), math.tanh(self.epsilon / 2.0))
        return BlanketDecomposition(eps0=self.epsilon, beta=beta)


def planar_laplace_total_variation(epsilon: float) -> float:
    """Exact max TV of `PlanarLaplace` over [-1,1]^2 (opposite corners).

    The noise density is radially decreasing, so for inputs t apart the half-plane
    nearer x0 carries all of (f0 - f1)_+ and TV = P(|N_1| <= t/2), N_1 the marginal
    of the noise along x1 - x0: increasing in t, largest at t = 2 sqrt 2.  The
    marginal density is (e'^2/pi) |u| K_1(e'|u|), so with c = e' sqrt 2 = eps/2
    TV = (2/pi) int_0^c s K_1(s) ds = (2/pi) (int_0^c K_0 - c K_0(c)).
    """
    c = epsilon / 2.0
    return 2.0 / math.pi * (float(special.iti0k0(c)[1]) - c * float(special.k0(c)))


class PlanarLaplace(LocalRandomizer):
    """Geo-indistinguishable planar Laplace on [-1,1]^2 (Andrés et al., CCS 2013; PIC Appendix B).

    The noise density is proportional to exp(-eps' ||y - x||_2) with
    eps' = eps / (2 sqrt 2) (2 sqrt 2 is the l2 diameter of the square), so any two
    inputs are eps-indistinguishable.  Exact polar sampling (Andrés et al. §4):
    angle uniform on [0, 2pi), radius Gamma(2, 1/eps') drawn as (E_1 + E_2)/eps'
    with E_i iid Exp(1).  Reports are unbiased.

    Parameters
    ----------
    epsilon : float
        Local privacy budget, in (0, 700].
    dim : int, default 2
        Must be 2 (the mechanism is planar).

    Raises
    ------
    PrivacyParameterError
        For epsilon outside (0, 700] or dim != 2.

    Examples
    --------
    >>> from shuffledp.randomizers import PlanarLaplace
    >>> R = PlanarLaplace(epsilon=2.0)
    >>> R.geo_epsilon   # eps / (2 sqrt 2)
    0.70710678118654...
    """

    max_epsilon = 700.0

    name = "planar_laplace"

    def __init__(self, epsilon: float, dim: int = 2) -> None:
        if dim != 2:
            raise PrivacyParameterError(f"PlanarLaplace is defined on the plane only: dim must be 2, got dim={dim!r}")
        super().__init__(epsilon, Box(2))
        self.dim = 2
        self.geo_epsilon = self.epsilon / self.domain.l2_diameter

    def _randomize(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        n = X.shape[0]
        radius = rng.standard_exponential((n, 2)).sum(axis=1) / self.geo_epsilon
        angle = rng.random(n) * (2.0 * math.pi)
        Y = np.empty((n, 2))
        np.cos(angle, out=Y[:, 0])
        np.sin(angle, out=Y[:, 1])
        Y *= radius[:, None]
        Y += X
        return Y

    def amplification_parameters(self) -> BlanketDecomposition:
        """eps0 = eps (ratio e^{eps' ||x - x'||_2}, e^eps at opposite corners); exact beta
        from `planar_laplace_total_variation`."""
        beta = min(planar_laplace_total_variation(self.epsilon), math.tanh(self.epsilon / 2.0))
        return BlanketDecomposition(eps0=self.epsilon, beta=beta)
