"""Minkowski Response (PIC paper §6.2, Eq. 2–3; Appendix A).

For an input x in the unit ball X of a norm (l2 ball, or the l-infinity cube
[-1,1]^d), fix a radius r > 0, the *cap* B_r(x) (the ball of that norm around
x) and the output domain Y_r = X + B_r (the l2 ball of radius 1+r, or the cube
[-1-r, 1+r]^d).  Eq. 2 outputs

    y ~ uniform(B_r(x))  with probability  beta_c = V(B_r)(e^eps-1) / (V(Y_r) + V(B_r)(e^eps-1)),
    y ~ uniform(Y_r)     otherwise,

so the density of y is e^eps/Z on B_r(x) and 1/Z elsewhere on Y_r, with
Z = V(Y_r) + V(B_r)(e^eps-1) (Theorem 6.1: eps-LDP).  Since Y_r is centred,
E[y] = beta_c x, and Eq. 3 debiases: x~ = y / beta_c.

Radius.  ``"closed_form"`` is §6.2's r = ((e^eps-1)^{1/(d+2)} - 1)^{-1}, defined
only for e^eps > 2.  ``"optimal"`` (the default, Appendix B's "numerical search
for the best-suited cap radius") minimises the *exact* worst-case mean squared
error of Appendix A,

    max_x E||x~ - x||^2 = ||x||^2 (1/beta_c - 1) + (beta_c m2(r) + (1-beta_c) m2_Y(r)) / beta_c^2,

attained at ||x|| = 1 (l2) or at a corner (l-inf), where m2(r) and m2_Y(r) are the
second moments of the uniform cap and of Y_r about their centres:
l2: r^2 d/(d+2) and (1+r)^2 d/(d+2) (Appendix A bounds the first by r^2);
l-inf: d r^2/3 and d (1+r)^2/3.

``"optimal_l2"`` instead minimises the mean l2 error E||x~ - x||_2 for inputs
uniform on the domain — the metric of Table 7.  The paper's Table 7 values
match this choice, not the MSE-optimal one, at large epsilon (the MSE-optimal
radius is larger: at eps = 10 on [-1,1]^2 it is 0.120 against 0.053).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Literal

import numpy as np
from scipy import optimize, special

from shuffledp.accounting.params import VariationRatio
from shuffledp.errors import PrivacyParameterError
from shuffledp.randomizers.base import LocalRandomizer
from shuffledp.randomizers.domains import Box, L2Ball

Norm = Literal["l2", "linf"]


def _volume_ratio(r: float, dim: int) -> float:
    """w = V(B_r) / V(Y_r) = (r / (1 + r))^d for both norms."""
    return (r / (1.0 + r)) ** dim


def cap_probability(epsilon: float, r: float, dim: int) -> float:
    """beta_c of Eq. 2: the probability of sampling from the cap."""
    a = _volume_ratio(r, dim) * math.expm1(epsilon)
    return a / (1.0 + a)


def _second_moments(r: float, dim: int, norm: Norm) -> tuple[float, float, float]:
    """(max ||x||^2 over X, E||u||^2 for u uniform in B_r(0), same for Y_r)."""
    if norm == "l2":
        c = dim / (dim + 2.0)
        return 1.0, c * r * r, c * (1.0 + r) ** 2
    return float(dim), dim * r * r / 3.0, dim * (1.0 + r) ** 2 / 3.0


def worst_case_mse(epsilon: float, r: float, dim: int, norm: Norm) -> float:
    """Exact max over inputs of E||x~ - x||_2^2 for radius r (Appendix A, without its relaxations)."""
    b = cap_probability(epsilon, r, dim)
    x2, m_cap, m_out = _second_moments(r, dim, norm)
    return x2 * (1.0 / b - 1.0) + (b * m_cap + (1.0 - b) * m_out) / (b * b)


def closed_form_radius(epsilon: float, dim: int) -> float:
    """§6.2: r = ((e^eps - 1)^{1/(d+2)} - 1)^{-1}; needs e^eps > 2 to be positive."""
    base = math.expm1(epsilon) ** (1.0 / (dim + 2))
    if base <= 1.0:
        raise PrivacyParameterError(
            f"the closed-form radius of §6.2 needs epsilon > ln 2 ~ 0.693, got epsilon={epsilon:g}; "
            "use radius='optimal'"
        )
    return 1.0 / (base - 1.0)


@lru_cache(maxsize=1024)
def optimal_radius(epsilon: float, dim: int, norm: Norm) -> float:
    """The r minimising :func:`worst_case_mse` (cached per (epsilon, dim, norm)).

    Searched over log r in a bracket wide enough for every epsilon in use: the
    objective is smooth and unimodal in log r (cap too small: beta_c -> 0; too
    large: the cap covers Y_r).
    """
    res = optimize.minimize_scalar(
        lambda t: math.log(worst_case_mse(epsilon, math.exp(t), dim, norm)),
        bounds=(math.log(1e-6), math.log(1e6)),
        method="bounded",
        options={"xatol": 1e-10},
    )
    return float(math.exp(res.x))


#: Fixed sample size and seed of the common-random-number objective of :func:`l2_optimal_radius`.
_L2_OBJECTIVE_SAMPLES = 1 << 16
_L2_OBJECTIVE_SEED = 20250813


@lru_cache(maxsize=1024)
def l2_optimal_radius(epsilon: float, dim: int, norm: Norm) -> float:
    """The r minimising the mean l2 error for inputs uniform on the domain (cached).

    E||x~ - x|| = beta_c E||(x + rU)/beta_c - x|| + (1 - beta_c) E||(1+r)V/beta_c - x||
    with U, V uniform in the unit ball of the norm; the expectation over a fixed
    sample of (x, U, V) is smooth in r, so a bounded scalar search finds its minimum.
    """
    rng = np.random.default_rng(_L2_OBJECTIVE_SEED)
    domain = L2Ball(dim) if norm == "l2" else Box(dim)
    X, U, V = (domain.sample_uniform(_L2_OBJECTIVE_SAMPLES, rng) for _ in range(3))

    def mean_error(log_r: float) -> float:
        r = math.exp(log_r)
        b = cap_probability(epsilon, r, dim)
        cap = np.linalg.norm((X + r * U) / b - X, axis=1).mean()
        rest = np.linalg.norm((1.0 + r) * V / b - X, axis=1).mean()
        return float(b * cap + (1.0 - b) * rest)

    res = optimize.minimize_scalar(mean_error, bounds=(math.log(1e-4), math.log(1e3)), method="bounded")
    return float(math.exp(res.x))


def _lens_fraction(r: float, dim: int) -> float:
    """V(B_r(x) ∩ B_r(x')) / V(B_r) for l2 balls whose centres are 2 apart.

    The intersection is two caps of height r-1 of a ball of radius r; a cap of
    height h has volume (1/2) V(B_r) I_{(2rh-h^2)/r^2}((d+1)/2, 1/2).
    """
    if r <= 1.0:
        return 0.0
    return float(special.betainc((dim + 1) / 2.0, 0.5, 1.0 - 1.0 / (r * r)))


class MinkowskiResponse(LocalRandomizer):
    """Minkowski Response, eps-LDP on the unit l2 ball or the cube [-1,1]^d.

    Parameters
    ----------
    epsilon: local privacy budget.
    dim: dimension d.
    norm: ``"l2"`` (input: unit l2 ball) or ``"linf"`` (input: [-1,1]^d; the
        paper's choice q = +inf for locations, Appendix B).
    radius: ``"optimal"`` (worst-case MSE), ``"optimal_l2"`` (mean l2 error,
        as in Table 7), ``"closed_form"`` or a positive float r.
    """

    name = "minkowski"

    def __init__(self, epsilon: float, dim: int = 2, norm: Norm = "linf", radius: str | float = "optimal") -> None:
        if norm not in ("l2", "linf"):
            raise PrivacyParameterError(f"norm must be 'l2' or 'linf', got {norm!r}")
        if not isinstance(dim, (int, np.integer)) or dim < 1:
            raise PrivacyParameterError(f"dim must be an integer >= 1, got {dim!r}")
        super().__init__(epsilon, L2Ball(int(dim)) if norm == "l2" else Box(int(dim)))
        self.dim, self.norm = int(dim), norm
        if radius == "optimal":
            r = optimal_radius(self.epsilon, self.dim, norm)
        elif radius == "optimal_l2":
            r = l2_optimal_radius(self.epsilon, self.dim, norm)
        elif radius == "closed_form":
            r = closed_form_radius(self.epsilon, self.dim)
        else:
            try:
                r = float(radius)
            except (TypeError, ValueError):
                r = math.nan
            if not (math.isfinite(r) and r > 0):
                raise PrivacyParameterError(
                    f"radius must be 'optimal', 'optimal_l2', 'closed_form' or a finite float > 0, got {radius!r}"
                )
        self.radius = r
        self.cap_probability = cap_probability(self.epsilon, r, self.dim)

    def _randomize(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        n = X.shape[0]
        if self.norm == "linf":
            # One uniform draw per report: d coordinates for the noise, one for the branch.
            W = rng.random((n, self.dim + 1))
            in_cap = W[:, -1] < self.cap_probability
            Y = W[:, :-1]
            Y -= 0.5
            half_width = 2.0  # U = 2*(W - 1/2) is uniform in [-1, 1]^d
        else:
            Y = L2Ball(self.dim).sample_uniform(n, rng)
            in_cap = rng.random(n) < self.cap_probability
            half_width = 1.0
        # Cap: x + r*U (uniform in B_r(x)); otherwise (1+r)*U (uniform in Y_r).
        Y *= np.where(in_cap, half_width * self.radius, half_width * (1.0 + self.radius))[:, None]
        Y += X * in_cap[:, None]
        return Y

    def estimate(self, Y: np.ndarray) -> np.ndarray:
        """Eq. 3: x~ = y / beta_c (unbiased since E[y | x] = beta_c x)."""
        return np.asarray(Y, dtype=np.float64) / self.cap_probability

    def density(self, Y: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Output density at rows of Y given input x (e^eps/Z on the cap, 1/Z on Y_r \\ cap, 0 outside)."""
        Y = np.asarray(Y, dtype=np.float64)
        r = self.radius
        if self.norm == "linf":
            in_y = np.all(np.abs(Y) <= 1.0 + r, axis=1)
            in_cap = np.all(np.abs(Y - x) <= r, axis=1)
            vol_y = (2.0 + 2.0 * r) ** self.dim
        else:
            in_y = np.linalg.norm(Y, axis=1) <= 1.0 + r
            in_cap = np.linalg.norm(Y - x, axis=1) <= r
            unit_ball = math.pi ** (self.dim / 2) / math.gamma(self.dim / 2 + 1)
            vol_y = unit_ball * (1.0 + r) ** self.dim
        z = vol_y * (1.0 + _volume_ratio(r, self.dim) * math.expm1(self.epsilon))
        return np.where(in_cap, math.exp(self.epsilon), 1.0) * in_y / z

    def total_variation_bound(self) -> float:
        """Largest total-variation distance between R(x) and R(x') over inputs.

        TV(x, x') = integral of (f_x - f_x')_+ = (e^eps - 1) V(B_r(x) \\ B_r(x')) / Z,
        largest for the two farthest inputs: opposite corners of the cube, where
        the caps overlap in a cube of side max(0, 2r-2); antipodes of the l2 ball,
        where they overlap in a lens (:func:`_lens_fraction`).  Dividing by V(Y_r):
        beta = (e^eps - 1) w (1 - overlap/V(B_r)) / (1 + w (e^eps - 1)), w = (r/(1+r))^d,
        which is below the generic (e^eps-1)/(e^eps+1) whenever w < 1/2 or the caps overlap.
        """
        r, d = self.radius, self.dim
        if self.norm == "linf":
            overlap = max(0.0, (r - 1.0) / r) ** d
        else:
            overlap = _lens_fraction(r, d)
        return self.cap_probability * (1.0 - overlap)

    def amplification_parameters(self) -> VariationRatio:
        """(p, beta, q) with p = q = e^eps (the cap/non-cap density ratio, attained
        for any pair of inputs since no cap covers another) and beta from
        :meth:`total_variation_bound`, never above the generic eps-LDP beta."""
        p = math.exp(self.epsilon)
        beta = min(self.total_variation_bound(), math.tanh(self.epsilon / 2.0))
        return VariationRatio(p=p, beta=beta, q0=p, q1=p)
