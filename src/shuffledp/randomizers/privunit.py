"""PrivUnit (Bhowmick et al. 2018, Alg. 1 "PrivUnit2") and PrivUnitG (Asi, Feldman, Talwar, ICML 2022).

Both randomize a unit vector u in S^{D-1} (a subset of R^D) with a *cap*: draw
from the cap with probability p, else from its complement.

* PrivUnit: V is uniform on the sphere restricted to {<v,u> >= gamma} (prob. p)
  or to {<v,u> < gamma}.  Under the uniform law t = <V,u> has density
  proportional to (1 - t^2)^((D-3)/2), i.e. (1+t)/2 ~ Beta(a, a), a = (D-1)/2;
  we sample t from the truncated law by inverse CDF and add an independent
  uniform direction orthogonal to u.
* PrivUnitG: V = alpha u + V_perp with alpha ~ N(0,1) conditioned on alpha >= gamma
  (prob. p) or alpha < gamma, and V_perp ~ N(0, I - u u^T).  The noise scale sigma of
  the paper is 1 here without loss of generality: the estimate divides by m, so
  sigma cancels.

Privacy (exact, both).  Relative to the reference law (uniform on the sphere,
resp. N(0, I_D)) the output density is p/q on the cap and (1-p)/(1-q) off it,
where q is the cap's reference mass.  The worst ratio over inputs and outputs is
therefore exactly  e^{eps0 + eps1},  eps0 = log(p/(1-p)),  eps1 = log((1-q)/q)
(attained for antipodal inputs): eps0 is spent on the cap probability, eps1 on
the cap size.  PrivUnitG's guarantee is the same density-ratio identity (our
tests recompute it from `density`).

Calibration.  For a split eps1 in [0, eps] the threshold gamma makes the cap's
mass q = 1/(1+e^{eps1}) (``"exact"``), and p uses the rest, eps0 = eps - eps1.
The split minimises the exact worst-case mean squared error of the unbiased
estimate over the input domain (on the sphere: 1/m^2 - 1 for PrivUnit, the
criterion of Feldman & Talwar 2021), found once per (eps, dim, domain) by a grid
and a bounded scipy search, and cached.  ``calibration="bhowmick"`` instead takes
the largest gamma allowed by Bhowmick et al.'s *sufficient* condition (their
Theorem on PrivUnit2, conditions (16a)/(16b)) for the budget eps1, as the code of
Feldman & Talwar (2021) does -- the recipe the PIC paper follows (Appendix B,
ref. [36]); the split is then chosen by the same objective.  The condition
wastes part of eps1 (exact loss 4.31 at eps = 5 on [-1,1]^2) and
reproduces PIC Table 7's PrivUnit row; ``"exact"`` has smaller error at the
same epsilon.

Privacy-conservative rounding: p is rounded *down* to the 2^-53 grid, on which
``rng.random() < p`` has probability exactly p (numpy draws k / 2^53), eps0 keeps
a margin of 1e-12 below its share, and every calibration is checked to have
exact privacy loss eps0 + eps1 <= eps.

Input domains.  ``domain="sphere"``: unit vectors in R^dim (D = dim), renormalised
before use.  ``domain="box"`` (PIC Appendix B, locations in [-1,1]^dim): x is
mapped to the unit ball by x / sqrt(dim) and lifted to S^dim in R^{dim+1} by
appending sqrt(1 - ||x||^2 / dim) (D = dim + 1); opposite corners become
antipodes.  Any map into the sphere keeps eps-LDP, and since E[V] = m u,
sqrt(dim) V[:dim] / m is unbiased for x.

Outputs.  `randomize` returns the raw report V in R^D (a unit vector for
PrivUnit, a Gaussian-type vector for PrivUnitG), unscaled; `estimate`
returns the unbiased estimate (the scaled first dim coordinates).
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from scipy import optimize, special

from shuffledp._util.validation import as_points
from shuffledp.errors import PrivacyParameterError
from shuffledp.params import BlanketDecomposition
from shuffledp.randomizers.base import LocalRandomizer
from shuffledp.randomizers.domains import Box, UnitSphere

__all__ = [
    "Calibration",
    "CapParameters",
    "DomainName",
    "PrivUnit",
    "PrivUnitG",
    "privunit_calibration",
    "privunit_g_calibration",
    "privunit_g_parameters",
    "privunit_parameters",
]

DomainName = Literal["box", "sphere"]
Calibration = Literal["exact", "bhowmick"]

#: Nats of eps0 kept unused, so float rounding cannot push the exact loss above epsilon.
_MARGIN = 1e-12
#: numpy's Generator.random() returns k / 2^53; p on this grid gives P[random() < p] = p exactly.
_UNIFORM_GRID = 2.0**53
#: Grid points over the split eps1 in [0, eps] before the bounded refinement.
_SPLIT_GRID = 64


@dataclass(frozen=True)
class CapParameters:
    """Parameters of a cap mechanism on S^{D-1} (PrivUnit) or R^D (PrivUnitG).

    ``gamma`` is the cap threshold on <V,u>, ``p`` the cap probability,
    ``cap_mass`` (q) the cap's mass under the reference law, ``m = E<V,u>``
    (estimate = V / m), ``second_moment = E<V,u>^2`` and ``orthogonal_moment =
    E<V,w>^2`` for any unit w orthogonal to u.
    """

    sphere_dim: int
    gamma: float
    p: float
    cap_mass: float
    m: float
    second_moment: float
    orthogonal_moment: float

    @property
    def eps0(self) -> float:
        """Budget spent on the cap probability: log(p / (1 - p))."""
        return math.log(self.p) - math.log1p(-self.p)

    @property
    def eps1(self) -> float:
        """Budget spent on the cap size: log((1 - q) / q)."""
        return math.log1p(-self.cap_mass) - math.log(self.cap_mass)

    @property
    def privacy_loss(self) -> float:
        """Exact worst-case privacy loss eps0 + eps1 (the density ratio cap / non-cap)."""
        return self.eps0 + self.eps1

    @property
    def total_variation(self) -> float:
        """Largest TV distance between outputs of two inputs, (p - q) / (1 - q).

        TV(u, u') = (p/q - (1-p)/(1-q)) * mass(cap(u) minus cap(u')), largest when the
        caps are disjoint, as for antipodal inputs when gamma >= 0.
        """
        return (self.p - self.cap_mass) / (1.0 - self.cap_mass)


def _grid_probability(eps0: float) -> float:
    """sigmoid(eps0) rounded down to the 2^-53 grid (privacy-conservative)."""
    return math.floor(special.expit(eps0) * _UNIFORM_GRID) / _UNIFORM_GRID


def _symmetric_beta_ppf(a: float, y: np.ndarray | float) -> np.ndarray | float:
    """Inverse CDF of Beta(a, a), with the closed forms a = 1 (uniform) and a = 1/2 (arcsine)."""
    if a == 1.0:
        return y
    if a == 0.5:
        return np.sin(0.5 * np.pi * y) ** 2
    return special.betaincinv(a, a, y)


# --------------------------------------------------------------------------- PrivUnit


def privunit_parameters(gamma: float, p: float, sphere_dim: int) -> CapParameters:
    """PrivUnit's moments for threshold gamma in (-1, 1) and cap probability p (Bhowmick et al. Eq. 15).

    With z = (1 - gamma)/2 and a = (D-1)/2: q = I_z(a, a);
    E[t 1{t >= gamma}] = (z(1-z))^a / (a B(a, a)), so m = that * (p/q - (1-p)/(1-q));
    E[(1 - t^2) 1{t >= gamma}] = (D-1)/D * I_z(a+1, a+1) (and I_{1-z} below gamma).
    """
    D = sphere_dim
    a = (D - 1) / 2.0
    z = (1.0 - gamma) / 2.0
    q = _privunit_cap_mass(gamma, D)
    c = math.exp(a * math.log(z * (1.0 - z)) - math.log(a) - special.betaln(a, a))
    m = c * (p / q - (1.0 - p) / (1.0 - q))
    r = (D - 1) / D
    above = float(special.betainc(a + 1, a + 1, z)) / q
    below = float(special.betainc(a + 1, a + 1, 1.0 - z)) / (1.0 - q)
    t2 = p * (1.0 - r * above) + (1.0 - p) * (1.0 - r * below)
    return CapParameters(D, float(gamma), float(p), q, m, t2, (1.0 - t2) / (D - 1))


def _privunit_cap_mass(gamma: float, sphere_dim: int) -> float:
    """Uniform mass of the cap {t >= gamma} on S^{D-1}: I_{(1-gamma)/2}(a, a)."""
    a = (sphere_dim - 1) / 2.0
    return float(special.betainc(a, a, (1.0 - gamma) / 2.0))


def _privunit_exact_threshold(eps1: float, sphere_dim: int) -> float:
    """gamma whose cap has uniform mass q = 1 / (1 + e^{eps1})."""
    a = (sphere_dim - 1) / 2.0
    return 1.0 - 2.0 * float(_symmetric_beta_ppf(a, special.expit(-eps1)))


def _privunit_bhowmick_threshold(eps1: float, sphere_dim: int) -> float:
    """Largest gamma satisfying Bhowmick et al.'s sufficient condition for a cap budget eps1.

    (16a) gamma <= (e^eps1 - 1)/(e^eps1 + 1) sqrt(pi / (2(D-1)));  or
    (16b) eps1 >= log(D)/2 + log 6 - (D-1)/2 log(1 - gamma^2) + log gamma  with gamma >= sqrt(2/D).
    """
    D = sphere_dim
    gamma = math.tanh(eps1 / 2.0) * math.sqrt(math.pi / (2.0 * (D - 1)))
    low = math.sqrt(2.0 / D)
    if low < 1.0:

        def slack(g: float) -> float:
            return 0.5 * math.log(D) + math.log(6.0) - 0.5 * (D - 1) * math.log1p(-g * g) + math.log(g) - eps1

        high = math.nextafter(1.0, 0.0)
        if slack(low) <= 0.0 < slack(high):
            gamma = max(gamma, optimize.brentq(slack, low, high, xtol=1e-15))
    return gamma


# --------------------------------------------------------------------------- PrivUnitG


def privunit_g_parameters(gamma: float, p: float, sphere_dim: int) -> CapParameters:
    """PrivUnitG's moments for threshold gamma (on the N(0,1) scale) and cap probability p.

    q = P[N(0,1) >= gamma]; m = E[alpha] = phi(gamma) (p/q - (1-p)/(1-q));
    E[alpha^2] = p (1 + gamma phi/q) + (1-p) (1 - gamma phi/(1-q)); orthogonal variance 1.
    """
    q = _privunit_g_cap_mass(gamma)
    phi = math.exp(-0.5 * gamma * gamma) / math.sqrt(2.0 * math.pi)
    m = phi * (p / q - (1.0 - p) / (1.0 - q))
    a2 = p * (1.0 + gamma * phi / q) + (1.0 - p) * (1.0 - gamma * phi / (1.0 - q))
    return CapParameters(sphere_dim, float(gamma), float(p), q, m, a2, 1.0)


def _privunit_g_cap_mass(gamma: float) -> float:
    """Standard normal mass of the cap {alpha >= gamma}."""
    return float(special.ndtr(-gamma))


def _privunit_g_threshold(eps1: float) -> float:
    """gamma with P[N(0,1) >= gamma] = 1 / (1 + e^{eps1}), in log space."""
    return -float(special.ndtri_exp(special.log_expit(-eps1)))


# --------------------------------------------------------------------------- calibration


def _worst_case_mse(P: CapParameters, input_dim: int, lifted: bool) -> float:
    """max over the input domain of E||estimate - x||^2 (see `_CapRandomizer.mse`).

    The MSE is linear in s = ||u[:dim]||^2, which ranges over [0, 1] on the box
    (origin to corners) and is 1 on the sphere.
    """
    A, B, m2, k = P.second_moment, P.orthogonal_moment, P.m * P.m, input_dim
    if not lifted:
        return (A + B * (P.sphere_dim - 1)) / m2 - 1.0
    return max(k * k * B / m2, k * (A + B * (k - 1)) / m2 - k)


def _optimal_split(
    epsilon: float,
    threshold: Callable[[float], float],
    mass: Callable[[float], float],
    build: Callable[[float, float], CapParameters],
    objective: Callable[[CapParameters], float],
) -> CapParameters:
    """Parameters minimising ``objective`` over the split eps1 in [0, epsilon].

    For each eps1: gamma = threshold(eps1), q its cap mass, and p = sigmoid of
    eps - max(eps1, log((1-q)/q)) - margin on the 2^-53 grid; splits whose exact
    loss exceeds epsilon (possible only when a sufficient condition fails) are
    rejected.
    """

    def candidate(eps1: float) -> CapParameters | None:
        gamma = threshold(eps1)
        if not (math.isfinite(gamma) and gamma >= 0.0):
            return None
        q = mass(gamma)
        if not 0.0 < q < 1.0:
            return None
        eps0 = epsilon - max(eps1, math.log1p(-q) - math.log(q)) - _MARGIN
        p = _grid_probability(eps0)
        if not 0.5 < p < 1.0:
            return None
        P = build(gamma, p)
        if not (math.isfinite(P.m) and P.m > 0.0 and P.privacy_loss <= epsilon):
            return None
        return P

    def log_objective(eps1: float) -> float:
        P = candidate(eps1)
        value = objective(P) if P is not None else math.inf
        return math.log(value) if 0.0 < value < math.inf else 1e300

    grid = np.linspace(0.0, epsilon, _SPLIT_GRID + 1)[:-1]
    values = [log_objective(float(e)) for e in grid]
    i = int(np.argmin(values))
    if values[i] >= 1e300:
        raise PrivacyParameterError(
            f"epsilon={epsilon:g} is too large: no (gamma, p) with exact loss <= epsilon is representable in float64"
        )
    high = float(grid[i + 1]) if i + 1 < len(grid) else epsilon
    bounds = (float(grid[max(i - 1, 0)]), high)
    tol = {"xatol": 1e-10 * max(1.0, epsilon)}
    res = optimize.minimize_scalar(log_objective, bounds=bounds, method="bounded", options=tol)
    best = float(res.x) if res.fun <= values[i] else float(grid[i])
    P = candidate(best)
    assert P is not None  # best scored finite, so it is admissible
    return P


def _geometry(dim: int, domain: str) -> tuple[int, bool]:
    """(sphere dimension D, whether inputs are lifted from the box)."""
    return (dim + 1, True) if domain == "box" else (dim, False)


@lru_cache(maxsize=1024)
def privunit_calibration(epsilon: float, dim: int, domain: DomainName, calibration: Calibration) -> CapParameters:
    """Cached PrivUnit parameters for (epsilon, dim, domain, calibration) (module docstring)."""
    D, lifted = _geometry(dim, domain)
    rule = _privunit_exact_threshold if calibration == "exact" else _privunit_bhowmick_threshold

    def threshold(eps1: float) -> float:
        gamma = rule(eps1, D)
        return gamma if gamma < 1.0 else math.nan  # (16a) can exceed 1 when D = 2

    return _optimal_split(
        epsilon,
        threshold,
        lambda gamma: _privunit_cap_mass(gamma, D),
        lambda gamma, p: privunit_parameters(gamma, p, D),
        lambda P: _worst_case_mse(P, dim, lifted),
    )


@lru_cache(maxsize=1024)
def privunit_g_calibration(epsilon: float, dim: int, domain: DomainName) -> CapParameters:
    """Cached PrivUnitG parameters for (epsilon, dim, domain) (module docstring)."""
    D, lifted = _geometry(dim, domain)
    return _optimal_split(
        epsilon,
        _privunit_g_threshold,
        _privunit_g_cap_mass,
        lambda gamma, p: privunit_g_parameters(gamma, p, D),
        lambda P: _worst_case_mse(P, dim, lifted),
    )


# --------------------------------------------------------------------------- randomizers


class _CapRandomizer(LocalRandomizer):
    """Shared domain handling, sampling frame, estimate and accounting of PrivUnit / PrivUnitG."""

    def __init__(self, epsilon: float, dim: int, domain: DomainName) -> None:
        if domain not in ("box", "sphere"):
            raise PrivacyParameterError(f"domain must be 'box' or 'sphere', got {domain!r}")
        minimum = 1 if domain == "box" else 2
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < minimum:
            raise PrivacyParameterError(f"dim must be an integer >= {minimum} for domain={domain!r}, got {dim!r}")
        dim = int(dim)
        super().__init__(epsilon, Box(dim) if domain == "box" else UnitSphere(dim))
        self.dim = dim
        self.sphere_dim, self.lifted = _geometry(dim, domain)
        self._scale = math.sqrt(dim) if self.lifted else 1.0
        self.params: CapParameters = self._calibrate(domain)

    @abstractmethod
    def _calibrate(self, domain: DomainName) -> CapParameters:
        """The cached parameters for this mechanism."""

    @abstractmethod
    def _sample(self, U: np.ndarray, cap: np.ndarray, v: np.ndarray, G: np.ndarray) -> np.ndarray:
        """Reports given unit inputs U, cap indicators, uniforms v in (0, 1] and Gaussians G orthogonal to U."""

    @abstractmethod
    def _reference_density(self, Y: np.ndarray) -> np.ndarray:
        """Density of the reference law at Y (the cap factor multiplies it)."""

    def to_sphere(self, X: np.ndarray) -> np.ndarray:
        """Validated inputs -> unit vectors u in R^D (box: scale and lift; sphere: renormalise)."""
        if not self.lifted:
            return X / np.linalg.norm(X, axis=1, keepdims=True)
        U = np.empty((X.shape[0], self.sphere_dim))
        np.multiply(X, 1.0 / self._scale, out=U[:, : self.dim])
        U[:, self.dim] = np.sqrt(np.maximum(0.0, 1.0 - np.einsum("ij,ij->i", U[:, : self.dim], U[:, : self.dim])))
        return U

    def _randomize(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        U = self.to_sphere(X)
        n = U.shape[0]
        cap = rng.random(n) < self.params.p
        v = 1.0 - rng.random(n)  # in (0, 1]: keeps inverse CDFs finite
        G = rng.standard_normal((n, self.sphere_dim))
        G -= np.einsum("ij,ij->i", G, U)[:, None] * U
        return self._sample(U, cap, v, G)

    def estimate(self, Y: Any) -> np.ndarray:
        """Unbiased estimates of the inputs: scale * V[:dim] / m (scale = sqrt(dim) on the box, else 1)."""
        Y = as_points(Y, self.sphere_dim, "Y")
        return Y[:, : self.dim] * (self._scale / self.params.m)

    def mse(self, X: Any) -> np.ndarray:
        """Exact E||estimate - x||^2 per input row.

        E[V V^T] = A u u^T + B (I - u u^T) (A, B: second and orthogonal moments), so
        with s = ||u[:dim]||^2 and c = scale: c^2 (A s + B (dim - s)) / m^2 - c^2 s.
        """
        U = self.to_sphere(self.domain.check(X))
        s = np.einsum("ij,ij->i", U[:, : self.dim], U[:, : self.dim])
        P, c2 = self.params, self._scale**2
        return c2 * (P.second_moment * s + P.orthogonal_moment * (self.dim - s)) / P.m**2 - c2 * s

    def density(self, Y: Any, x: Any) -> np.ndarray:
        """Output density at rows of Y for input x: reference density times p/q on the cap, (1-p)/(1-q) off it."""
        Y = as_points(Y, self.sphere_dim, "Y")
        u = self.to_sphere(self.domain.check(np.reshape(np.asarray(x, dtype=np.float64), (1, -1))))[0]
        P = self.params
        factor = np.where(Y @ u >= P.gamma, P.p / P.cap_mass, (1.0 - P.p) / (1.0 - P.cap_mass))
        return factor * self._reference_density(Y)

    def amplification_parameters(self) -> BlanketDecomposition:
        """eps0 = loss (loss = eps0 + eps1 <= eps) and beta = the exact largest TV, (p - q)/(1 - q)."""
        loss = self.params.privacy_loss
        return BlanketDecomposition(eps0=loss, beta=min(self.params.total_variation, math.tanh(loss / 2.0)))


class PrivUnit(_CapRandomizer):
    """PrivUnit (Bhowmick et al. 2018, Alg. 1 "PrivUnit2"), exactly eps-LDP.

    A unit vector u is reported as V uniform on the cap {<v, u> >= gamma} with
    probability p, else uniform on the rest of the sphere.  The worst density ratio
    is e^(eps0 + eps1) with eps0 = log(p/(1-p)) and eps1 = log((1-q)/q), q the cap's
    uniform mass; the split of eps between them minimises the worst-case MSE of the
    unbiased estimate V / m (module docstring).

    Parameters
    ----------
    epsilon : float
        Local privacy budget, finite and > 0.
    dim : int, default 2
        Input dimension: >= 1 for the box, >= 2 for the sphere.  The report lives
        in R^(dim+1) for the box and in R^dim for the sphere.
    domain : {"box", "sphere"}, default "box"
        ``"box"``: [-1,1]^dim, lifted to the sphere (PIC Appendix B);
        ``"sphere"``: unit vectors of R^dim.
    calibration : {"exact", "bhowmick"}, default "exact"
        ``"exact"``: the cap of mass 1/(1 + e^eps1); ``"bhowmick"``: Bhowmick et
        al.'s sufficient condition, the PIC paper's recipe (via its ref. [36]).

    Raises
    ------
    PrivacyParameterError
        For an invalid epsilon, dim, domain or calibration.

    Examples
    --------
    >>> import numpy as np
    >>> from shuffledp.randomizers import PrivUnit
    >>> R = PrivUnit(epsilon=2.0, dim=2)
    >>> R.params.privacy_loss <= 2.0        # exact loss eps0 + eps1
    True
    >>> R.randomize(np.zeros((3, 2)), np.random.default_rng(0)).shape   # reports in R^3
    (3, 3)
    """

    name = "privunit"

    def __init__(
        self, epsilon: float, dim: int = 2, domain: DomainName = "box", calibration: Calibration = "exact"
    ) -> None:
        if calibration not in ("exact", "bhowmick"):
            raise PrivacyParameterError(f"calibration must be 'exact' or 'bhowmick', got {calibration!r}")
        self.calibration = calibration
        super().__init__(epsilon, dim, domain)

    def _calibrate(self, domain: DomainName) -> CapParameters:
        return privunit_calibration(self.epsilon, self.dim, domain, self.calibration)

    def _sample(self, U: np.ndarray, cap: np.ndarray, v: np.ndarray, G: np.ndarray) -> np.ndarray:
        # (1 + t)/2 ~ Beta(a, a) truncated; by symmetry both branches invert a lower tail:
        # cap: (1 - t)/2 = F^{-1}(v q); complement: (1 + t)/2 = F^{-1}(v (1 - q)).
        q = self.params.cap_mass
        z = _symmetric_beta_ppf((self.sphere_dim - 1) / 2.0, v * np.where(cap, q, 1.0 - q))
        t = np.where(cap, 1.0 - 2.0 * z, 2.0 * z - 1.0)
        sine = 2.0 * np.sqrt(z * (1.0 - z))  # sqrt(1 - t^2) without cancellation
        norms = np.maximum(np.linalg.norm(G, axis=1), np.finfo(float).tiny)
        G *= (sine / norms)[:, None]
        G += t[:, None] * U
        return G

    def _reference_density(self, Y: np.ndarray) -> np.ndarray:
        # Density relative to the uniform probability measure on the sphere.
        return np.ones(Y.shape[0])


class PrivUnitG(_CapRandomizer):
    """PrivUnitG (Asi, Feldman, Talwar, ICML 2022), exactly eps-LDP.

    V = alpha u + V_perp with alpha ~ N(0, 1) conditioned on alpha >= gamma
    (probability p) or alpha < gamma, and V_perp ~ N(0, I - u u^T).  The privacy
    loss is eps0 + eps1 as for `PrivUnit`, with q = P[N(0,1) >= gamma].

    Parameters
    ----------
    epsilon : float
        Local privacy budget, finite and > 0.
    dim : int, default 2
        Input dimension: >= 1 for the box, >= 2 for the sphere.
    domain : {"box", "sphere"}, default "box"
        ``"box"``: [-1,1]^dim, lifted to the sphere; ``"sphere"``: unit vectors.

    Raises
    ------
    PrivacyParameterError
        For an invalid epsilon, dim or domain.

    Examples
    --------
    >>> from shuffledp.randomizers import PrivUnitG
    >>> R = PrivUnitG(epsilon=2.0, dim=2)
    >>> R.params.privacy_loss <= 2.0
    True
    """

    name = "privunit_g"

    def __init__(self, epsilon: float, dim: int = 2, domain: DomainName = "box") -> None:
        super().__init__(epsilon, dim, domain)

    def _calibrate(self, domain: DomainName) -> CapParameters:
        return privunit_g_calibration(self.epsilon, self.dim, domain)

    def _sample(self, U: np.ndarray, cap: np.ndarray, v: np.ndarray, G: np.ndarray) -> np.ndarray:
        # cap: -alpha ~ N(0,1) given <= -gamma; complement: alpha ~ N(0,1) given < gamma.
        gamma = self.params.gamma
        log_mass = np.where(cap, special.log_ndtr(-gamma), special.log_ndtr(gamma))
        z = special.ndtri_exp(np.log(v) + log_mass)
        G += np.where(cap, -z, z)[:, None] * U
        return G

    def _reference_density(self, Y: np.ndarray) -> np.ndarray:
        # Standard normal density in R^D.
        return np.exp(-0.5 * np.einsum("ij,ij->i", Y, Y) - 0.5 * self.sphere_dim * math.log(2.0 * math.pi))
