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

Log space.  With w = V(B_r)/V(Y_r) = (r/(1+r))^d (both norms), beta_c = a/(1+a)
for the odds a = w (e^eps - 1), and everything below is computed from
log a = log(e^eps - 1) - d log(1 + 1/r), which is finite for every dimension and
epsilon (w alone underflows for d >= ~114 at eps = 3).

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

Sampling.  The branch is drawn as ``rng.random() < beta_c`` with beta_c rounded
*down* to the 2^-53 grid of numpy's uniforms, so the drawn probability is exactly
the one the estimate divides by; a smaller beta_c only lowers the cap/non-cap
density ratio, so the mechanism stays eps-LDP (privacy-conservative rounding).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Literal

import numpy as np
from scipy import optimize, special

from shuffledp.errors import PrivacyParameterError
from shuffledp.params import BlanketDecomposition
from shuffledp.randomizers.base import LocalRandomizer
from shuffledp.randomizers.domains import Box, L2Ball

__all__ = [
    "MinkowskiResponse",
    "Norm",
    "cap_probability",
    "closed_form_radius",
    "drawable_cap_probability",
    "l2_optimal_radius",
    "log_cap_odds",
    "log_worst_case_mse",
    "optimal_radius",
    "worst_case_mse",
]

Norm = Literal["l2", "linf"]

#: numpy's Generator.random() returns k / 2^53, so P[random() < b] = b exactly for b on this grid.
_UNIFORM_GRID = 2.0**53
#: Relative margin for the rounding of beta_c to the grid: covers a few ulp of error in log a and expit.
_ROUNDING_MARGIN = 2.0**-50
#: Largest argument of exp() that does not overflow.
_LOG_MAX = math.log(np.finfo(np.float64).max)
#: Smallest cap radius: below it float64 cannot resolve the cap noise r U around an input of size 1
#: (the cap spans fewer than 2^21 doubles per coordinate), and the outputs would reveal the input.
MIN_RADIUS = 2.0**-32
#: Elements per (rows, dim) chunk of `MinkowskiResponse.randomize` (512 kB of float64): a chunk's
#: temporaries stay in a core's L2 cache and their memory is reused from chunk to chunk (with chunks
#: of 2^22 elements, page faults and cache misses made randomize 1.5-2.3x slower at d = 2).
_CHUNK_ELEMENTS = 1 << 16


def _log_expm1(x: float) -> float:
    """log(e^x - 1) for x > 0, without overflow."""
    return x + math.log1p(-math.exp(-x)) if x > 1.0 else math.log(math.expm1(x))


def _softplus(x: float) -> float:
    """log(1 + e^x) without overflow."""
    return float(np.logaddexp(0.0, x))


def log_cap_odds(epsilon: float, r: float, dim: int) -> float:
    """log a, a = beta_c / (1 - beta_c) = (r/(1+r))^d (e^eps - 1)."""
    return _log_expm1(epsilon) - dim * math.log1p(1.0 / r)


def _log_cap_odds_at(epsilon: float, log_r: float, dim: int) -> float:
    """`log_cap_odds` at r = e^log_r, also where r underflows (log(1 + 1/r) = -log r + O(r))."""
    if log_r > -700.0:
        return log_cap_odds(epsilon, math.exp(log_r), dim)
    return _log_expm1(epsilon) + dim * log_r


def cap_probability(epsilon: float, r: float, dim: int) -> float:
    """beta_c of Eq. 2: the probability of sampling from the cap (exact, not rounded to the grid)."""
    return float(special.expit(log_cap_odds(epsilon, r, dim)))


def drawable_cap_probability(epsilon: float, r: float, dim: int) -> float:
    """beta_c rounded down to the 2^-53 grid on which ``rng.random() < beta_c`` is exact.

    Rounded from log a minus a bound on its float error (a few ulp of each of its
    two terms), so the result never exceeds the exact beta_c.
    """
    log_e, log_w = _log_expm1(epsilon), dim * math.log1p(1.0 / r)
    la = log_e - log_w - _ROUNDING_MARGIN * (abs(log_e) + log_w + 1.0)
    if la < 0.0:
        return math.floor(special.expit(la) * (1.0 - _ROUNDING_MARGIN) * _UNIFORM_GRID) / _UNIFORM_GRID
    # Near 1, round the complement 1 - beta_c (computed without cancellation) up instead.
    return 1.0 - math.ceil(special.expit(-la) * (1.0 + _ROUNDING_MARGIN) * _UNIFORM_GRID) / _UNIFORM_GRID


def _moment_coefficients(dim: int, norm: Norm) -> tuple[float, float]:
    """(max ||x||^2 over X, c) with second moments m2 = c r^2 (cap) and m2_Y = c (1+r)^2 (Y_r)."""
    if norm == "l2":
        return 1.0, dim / (dim + 2.0)
    return float(dim), dim / 3.0


def log_worst_case_mse(epsilon: float, r: float, dim: int, norm: Norm) -> float:
    """log of `worst_case_mse`, finite for every dimension.

    With A = 1/a = 1/beta_c - 1 the MSE is x2 A + m2 (1 + A) + m2_Y A (1 + A).
    """
    x2, c = _moment_coefficients(dim, norm)
    la = log_cap_odds(epsilon, r, dim)
    log_1_plus_a_inv = _softplus(-la)
    terms = (
        math.log(x2) - la,
        math.log(c) + 2.0 * math.log(r) + log_1_plus_a_inv,
        math.log(c) + 2.0 * math.log1p(r) - la + log_1_plus_a_inv,
    )
    top = max(terms)
    return top + math.log(sum(math.exp(t - top) for t in terms))


def worst_case_mse(epsilon: float, r: float, dim: int, norm: Norm) -> float:
    """Exact max over inputs of E||x~ - x||_2^2 for radius r (Appendix A, without its relaxations).

    ``math.inf`` only when the value itself exceeds the float64 range.
    """
    v = log_worst_case_mse(epsilon, r, dim, norm)
    return math.exp(v) if v < _LOG_MAX else math.inf


def _mse_slope_sign(epsilon: float, log_r: float, dim: int, norm: Norm) -> float:
    """d(worst-case MSE)/d(log r) divided by A(1+A) > 0 (same sign, no overflow).

    Differentiating x2 A + c r^2 (1+A) + c (1+r)^2 A (1+A) with dA/dlog r = -A d/(1+r):
    2 c r (1+r) + 2 c r^2 a - c (1+r) d (2 - beta_c) - beta_c d (x2 + c r^2)/(1+r).
    """
    r = math.exp(log_r)
    x2, c = _moment_coefficients(dim, norm)
    la = _log_cap_odds_at(epsilon, log_r, dim)
    b = float(special.expit(la))
    grow = math.exp(min(math.log(2.0 * c) + 2.0 * log_r + la, _LOG_MAX - 1.0))
    return 2.0 * c * r * (1.0 + r) + grow - c * (1.0 + r) * dim * (2.0 - b) - b * dim * (x2 + c * r * r) / (1.0 + r)


def _mse_bracket(epsilon: float, dim: int, norm: Norm) -> tuple[float, float]:
    """(log lo, log hi) with the MSE slope negative at lo and positive at hi.

    hi = 2(d+1): for r >= d every term of the MSE but x2 A increases, and
    x2 A + c r^2 A increases once r^2 (2r + 2 - d) c >= x2 d, true at r = 2(d+1).
    lo: as r -> 0 the slope tends to -2 c d < 0; search down from where beta_c = 1/2.
    """
    t_hi = math.log(2.0 * (dim + 1))
    while _mse_slope_sign(epsilon, t_hi, dim, norm) <= 0.0:  # not reached (see above); kept as a guard
        t_hi += 1.0
    log_e = _log_expm1(epsilon)
    t_lo = t_hi - 1.0 if log_e <= 0.0 else min(t_hi - 1.0, -_log_expm1(log_e / dim))
    step = 1.0
    while _mse_slope_sign(epsilon, t_lo, dim, norm) >= 0.0:
        t_lo -= step
        step *= 2.0
    return t_lo, t_hi


def closed_form_radius(epsilon: float, dim: int) -> float:
    """§6.2: r = ((e^eps - 1)^{1/(d+2)} - 1)^{-1}; needs e^eps > 2 to be positive."""
    log_e = _log_expm1(epsilon)
    r = math.exp(-_log_expm1(log_e / (dim + 2))) if log_e > 0.0 else math.inf
    if not math.isfinite(r):
        raise PrivacyParameterError(
            f"the closed-form radius of §6.2 needs epsilon > ln 2 ~ 0.693 (and finite at dim={dim}), "
            f"got epsilon={epsilon:g}; use radius='optimal'"
        )
    return r


@lru_cache(maxsize=1024)
def _optimal_log_radius(epsilon: float, dim: int, norm: Norm) -> float:
    t_lo, t_hi = _mse_bracket(epsilon, dim, norm)
    return optimize.brentq(lambda t: _mse_slope_sign(epsilon, t, dim, norm), t_lo, t_hi, xtol=1e-15, rtol=1e-15)


def optimal_radius(epsilon: float, dim: int, norm: Norm) -> float:
    """The r minimising `worst_case_mse` (cached per (epsilon, dim, norm); 0.0 if it underflows).

    The root of the MSE's slope in log r, bracketed by `_mse_bracket` (the
    objective is unimodal in log r: cap too small, beta_c -> 0; too large, the cap
    covers Y_r).  Root-finding on the slope locates r to ~1e-15, where minimising
    the MSE itself only locates it to ~1e-8 (the MSE is flat at its minimum).
    """
    return math.exp(_optimal_log_radius(epsilon, dim, norm))


#: Sample size and seed of the common-random-number objective of `l2_optimal_radius`:
#: 2^16 rows up to d = 64, then 2^22 / d rows (at least 2^8): the per-row error concentrates
#: (relative spread O(d^-1/2)), so the Monte-Carlo accuracy of the mean stays as at d = 64.
_L2_OBJECTIVE_SAMPLES = 1 << 16
_L2_OBJECTIVE_MIN_SAMPLES = 1 << 8
_L2_OBJECTIVE_ELEMENTS = 1 << 22
_L2_OBJECTIVE_SEED = 20250813
#: Elements per array of a row chunk of that sample (fixed: the chunks decide the sample drawn).
_L2_OBJECTIVE_CHUNK_ELEMENTS = 1 << 22
#: Largest dimension for ``radius="optimal_l2"`` (its objective draws >= 2^8 * 3 * dim numbers).
L2_OPTIMAL_MAX_DIM = 100_000


@lru_cache(maxsize=4)
def _l2_objective_statistics(dim: int, norm: Norm) -> tuple[np.ndarray, ...]:
    """(|X|^2, |U|^2, |V|^2, <X,U>, <X,V>) for a fixed sample of X, U, V uniform on the domain.

    Drawn in row chunks of at most 2^22 numbers per array; up to d = 64 there is
    one chunk, i.e. X, then U, then V, each of 2^16 rows.
    """
    n = min(_L2_OBJECTIVE_SAMPLES, max(_L2_OBJECTIVE_MIN_SAMPLES, _L2_OBJECTIVE_ELEMENTS // dim))
    rows = max(1, _L2_OBJECTIVE_CHUNK_ELEMENTS // dim)
    rng = np.random.default_rng(_L2_OBJECTIVE_SEED)
    domain = L2Ball(dim) if norm == "l2" else Box(dim)
    stats = np.empty((5, n))
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        X = domain.sample_uniform(stop - start, rng)
        stats[0, start:stop] = np.einsum("ij,ij->i", X, X)
        for sq, dot in ((1, 3), (2, 4)):
            W = domain.sample_uniform(stop - start, rng)
            stats[sq, start:stop] = np.einsum("ij,ij->i", W, W)
            stats[dot, start:stop] = np.einsum("ij,ij->i", X, W)
    return tuple(stats)


@lru_cache(maxsize=1024)
def l2_optimal_radius(epsilon: float, dim: int, norm: Norm) -> float:
    """The r minimising the mean l2 error for inputs uniform on the domain (cached).

    E||x~ - x|| = E||r U + (1 - beta_c) x|| + (1/beta_c - 1) E||(1+r) V - beta_c x||
    with U, V uniform in the unit ball of the norm; each norm is a function of
    |x|^2, |U|^2, |V|^2, <x,U>, <x,V>, so the expectation over a fixed sample of
    those is smooth in r and a bounded scalar search finds its minimum.  The
    search interval is [1e-4, 1e3], widened to [r*/100, 2(d+1)] around the
    MSE-optimal r* (the mean-l2 optimum lies below it; further below at large
    epsilon, where the search widens again while its minimum sits at the lower
    end) and cut where beta_c < e^-700 (the error there exceeds e^700).
    """
    if dim > L2_OPTIMAL_MAX_DIM:
        raise PrivacyParameterError(
            f"radius='optimal_l2' is available for dim <= {L2_OPTIMAL_MAX_DIM} (its Monte-Carlo objective "
            f"draws >= 768*dim numbers), got dim={dim}; use radius='optimal' or a float"
        )
    xx, uu, vv, xu, xv = _l2_objective_statistics(dim, norm)
    log_e = _log_expm1(epsilon)

    def mean_error(log_r: float) -> float:
        r = math.exp(log_r)
        la = _log_cap_odds_at(epsilon, log_r, dim)
        b = float(special.expit(la))
        cap = np.sqrt(np.maximum(0.0, r * r * uu + 2.0 * r * (1.0 - b) * xu + (1.0 - b) ** 2 * xx)).mean()
        rest = np.sqrt(np.maximum(0.0, (1.0 + r) ** 2 * vv - 2.0 * (1.0 + r) * b * xv + b * b * xx)).mean()
        return float(cap + math.exp(-la) * rest)

    t_floor = -_log_expm1((log_e + 700.0) / dim)  # log r where log a = -700
    t_lo = max(t_floor, min(math.log(1e-4), _optimal_log_radius(epsilon, dim, norm) - math.log(100.0)))
    t_hi = max(math.log(1e3), math.log(2.0 * (dim + 1)))
    while True:
        res = optimize.minimize_scalar(mean_error, bounds=(t_lo, t_hi), method="bounded")
        if res.x > t_lo + 1e-3 or t_lo <= t_floor:
            return float(math.exp(res.x))
        t_lo = max(t_floor, t_lo - math.log(100.0))  # the minimum is at (or below) the lower end: widen


def _lens_complement(r: float, dim: int) -> float:
    """1 - V(B_r(x) ∩ B_r(x')) / V(B_r) for l2 balls whose centres are 2 apart.

    The intersection is two caps of height r-1 of a ball of radius r; a cap of
    height h has volume (1/2) V(B_r) I_{(2rh-h^2)/r^2}((d+1)/2, 1/2), so the
    overlap fraction is I_{1-1/r^2}((d+1)/2, 1/2) and its complement
    I_{1/r^2}(1/2, (d+1)/2), evaluated directly (no cancellation when it is small).
    """
    if r <= 1.0:
        return 1.0
    return float(special.betainc(0.5, (dim + 1) / 2.0, 1.0 / (r * r)))


def _cube_complement(r: float, dim: int) -> float:
    """1 - V(B_r(x) ∩ B_r(x')) / V(B_r) for opposite corners of [-1,1]^d: overlap ((r-1)/r)^d."""
    if r <= 1.0:
        return 1.0
    return -math.expm1(dim * math.log1p(-1.0 / r))


def _log_radius(epsilon: float, dim: int, norm: Norm, rule: str) -> float:
    """log r of a named radius rule (-inf where r underflows)."""
    if rule == "optimal":
        return _optimal_log_radius(epsilon, dim, norm)
    if rule == "closed_form":
        return -_log_expm1(_log_expm1(epsilon) / (dim + 2))
    r = l2_optimal_radius(epsilon, dim, norm)
    return math.log(r) if r > 0.0 else -math.inf


def _largest_epsilon(dim: int, norm: Norm, rule: str) -> float:
    """The epsilon at which the radius of ``rule`` falls to `MIN_RADIUS` (it decreases in epsilon)."""

    def excess(log_eps: float) -> float:
        return _log_radius(math.exp(log_eps), dim, norm, rule) - math.log(MIN_RADIUS)

    hi = math.log(50.0)
    while excess(hi) > 0.0:
        hi += 1.0
    lo = hi - 1.0
    while excess(lo) <= 0.0:
        lo -= 1.0
    return math.exp(optimize.brentq(excess, lo, hi, xtol=1e-4))


def _check_dim(dim: object) -> int:
    if isinstance(dim, (bool, np.bool_)) or not isinstance(dim, (int, np.integer)) or dim < 1:
        raise PrivacyParameterError(f"dim must be an integer >= 1, got dim={dim!r}")
    return int(dim)


#: From this dimension on, the cap rows get x by a masked add (no temporary; faster when rows are long).
_MASKED_ADD_DIM = 256
#: Up to this dimension the work is coordinate-major: the per-row scale and the cap rows' x are
#: applied column by column (numpy broadcasts a per-row factor over rows this short with an inner
#: loop of d elements, 1.3x slower in all at d = 2; from d = 6 on the broadcast is faster), and the
#: unit l2 ball is sampled by rejection from the cube [-1,1]^d (a few uniforms per point instead of
#: d Gaussians, each ~5x a uniform, and a radius power).
_COLUMN_DIM = 3


def _add_where(Y: np.ndarray, X: np.ndarray, cap: np.ndarray) -> None:
    """Y[i] += X[i] for the rows with cap[i] = 1.0 (cap is 0.0 / 1.0).

    Short rows: ``Y += X * cap`` (a chunk-sized temporary, the fastest at small d).  Long rows: a
    masked add, which allocates nothing, so a single row of d = 10^7 costs no second d-vector.
    """
    if Y.shape[1] >= _MASKED_ADD_DIM:
        np.add(Y, X, out=Y, where=(cap > 0.0)[:, None])
    else:
        Y += X * cap[:, None]


def _scale_and_shift(Y: np.ndarray, U: np.ndarray, scale: np.ndarray, X: np.ndarray, cap: np.ndarray) -> None:
    """Y[i] <- U[i] * scale[i], plus X[i] for the rows with cap[i] = 1.0 (cap is 0.0 / 1.0).

    ``U`` is coordinate-major, shape (d, m): a separate array, or ``Y.T`` to work in place.  Up to
    `_COLUMN_DIM` columns one column at a time (1-d loops over the rows, with one row-length
    temporary); beyond, a broadcast multiply and `_add_where`.  Both give the same floats.
    """
    if Y.shape[1] <= _COLUMN_DIM:
        tmp = np.empty(len(Y))
        for k in range(Y.shape[1]):
            np.multiply(U[k], scale, out=Y[:, k])
            np.multiply(X[:, k], cap, out=tmp)
            Y[:, k] += tmp
    else:
        np.multiply(U.T, scale[:, None], out=Y)
        _add_where(Y, X, cap)


#: P[a uniform point of [-1,1]^d lies in the unit l2 ball] = V(B_1)/2^d, for the rejection sampler.
_BALL_IN_CUBE = {1: 1.0, 2: math.pi / 4.0, 3: math.pi / 6.0}


def _unit_ball_columns(out: np.ndarray, rng: np.random.Generator) -> None:
    """Fill the (d, m) array ``out`` with m points uniform in the unit l2 ball, one per column (exact).

    For d <= `_COLUMN_DIM`: rejection from the cube [-1,1]^d, coordinate-major so that every
    step is a contiguous 1-d pass; each batch of candidates covers the points still needed with
    overwhelming probability (mean plus 4 standard deviations), its first accepted ones are kept
    in order, and the loop repeats while any are missing.
    """
    d, m = out.shape
    accept = _BALL_IN_CUBE[d]
    filled = 0
    while filled < m:
        need = m - filled
        C = rng.random((d, int(need / accept + 4.0 * math.sqrt(need) + 16.0)))
        C *= 2.0
        C -= 1.0
        sq = C[0] * C[0]
        for k in range(1, d):
            sq += C[k] * C[k]
        inside = sq <= 1.0
        got = int(np.count_nonzero(inside))
        if got > need:  # keep the first `need` accepted candidates
            inside = inside[: np.flatnonzero(inside)[need - 1] + 1]
            got = need
        for k in range(d):
            np.compress(inside, C[k, : len(inside)], out=out[k, filled : filled + got])
        filled += got


def _unit_ball(out: np.ndarray, rng: np.random.Generator) -> None:
    """Fill the (m, d) array ``out`` with points uniform in the unit l2 ball (exact; any d, used above
    `_COLUMN_DIM`): a Gaussian direction (normalised with one einsum, not ``linalg.norm``) times U^(1/d)."""
    m, d = out.shape
    rng.standard_normal(out=out)
    norms = np.sqrt(np.einsum("ij,ij->i", out, out))
    radius = rng.random(m) ** (1.0 / d)
    radius /= norms
    out *= radius[:, None]


class MinkowskiResponse(LocalRandomizer):
    """Minkowski Response, eps-LDP on the unit l2 ball or the cube [-1,1]^d (PIC §6.2, Eq. 2-3).

    With cap radius r, the report y is uniform on the cap B_r(x) with probability
    beta_c = a / (1 + a), a = (r/(1+r))^d (e^eps - 1), and uniform on the output
    domain Y_r = X + B_r otherwise, so its density is e^eps/Z on the cap and 1/Z
    elsewhere (Theorem 6.1: exactly eps-LDP).  The estimate y / beta_c is
    unbiased (Eq. 3).  The module docstring gives the radius rules and the
    privacy-conservative rounding of beta_c.

    Parameters
    ----------
    epsilon : float
        Local privacy budget, finite and > 0; too large a value for the chosen
        radius rule (cap radius below 2^-32) raises.
    dim : int, default 2
        Dimension d >= 1.
    norm : {"linf", "l2"}, default "linf"
        ``"linf"``: inputs in the cube [-1,1]^d (the paper's choice q = +inf for
        locations, Appendix B); ``"l2"``: inputs in the unit l2 ball.
    radius : {"optimal", "optimal_l2", "closed_form"} or float, default "optimal"
        ``"optimal"`` minimises the exact worst-case MSE (Appendix A),
        ``"optimal_l2"`` the mean l2 error for uniform inputs (Table 7, dim <=
        100000), ``"closed_form"`` is §6.2's r = ((e^eps-1)^(1/(d+2)) - 1)^-1
        (needs eps > ln 2); a float is used as r (>= 2^-32).

    Raises
    ------
    PrivacyParameterError
        For an invalid epsilon, dim, norm or radius, or a combination whose cap
        probability or radius float64 cannot represent.

    Examples
    --------
    >>> import numpy as np
    >>> from shuffledp.randomizers import MinkowskiResponse
    >>> R = MinkowskiResponse(epsilon=3.0, dim=2)
    >>> Y = R.randomize(np.array([[0.5, -0.5]]), np.random.default_rng(0))
    >>> Y.shape
    (1, 2)

    The cap probability is a / (1 + a) (Eq. 2), here for r = 1/2 in three dimensions:

    >>> import math
    >>> R = MinkowskiResponse(epsilon=1.0, dim=3, norm="l2", radius=0.5)
    >>> a = (1 / 3) ** 3 * math.expm1(1.0)
    >>> abs(R.cap_probability - a / (1 + a)) < 1e-15
    True
    """

    name = "minkowski"

    def __init__(self, epsilon: float, dim: int = 2, norm: Norm = "linf", radius: str | float = "optimal") -> None:
        if norm not in ("l2", "linf"):
            raise PrivacyParameterError(f"norm must be 'l2' or 'linf', got {norm!r}")
        dim = _check_dim(dim)
        super().__init__(epsilon, L2Ball(dim) if norm == "l2" else Box(dim))
        self.dim, self.norm = dim, norm
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
        if not r >= MIN_RADIUS:
            if radius in ("optimal", "optimal_l2", "closed_form"):
                raise PrivacyParameterError(
                    f"epsilon={self.epsilon:g} is too large for MinkowskiResponse(dim={dim}, norm={norm!r}): its "
                    f"{radius} cap radius {r:.3g} is below 2^-32, where float64 cannot resolve the cap noise; allowed: "
                    f"epsilon <= {_largest_epsilon(dim, norm, radius):.4g} here, or a float radius >= 2^-32"
                )
            raise PrivacyParameterError(
                f"radius must be >= 2^-32 ~ {MIN_RADIUS:.3g} (float64 resolution), got {radius!r}"
            )
        self.radius = r
        self.cap_probability = drawable_cap_probability(self.epsilon, r, self.dim)
        if self.cap_probability <= 0.0:
            raise PrivacyParameterError(
                f"epsilon={self.epsilon:g} is too small for MinkowskiResponse(dim={self.dim}, radius={r:g}): its cap "
                f"probability {cap_probability(self.epsilon, r, self.dim):.3g} is below 2^-53, the resolution of the "
                "sampler; allowed: an epsilon (or radius) giving a cap probability >= 2^-53"
            )

    def _randomize(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # Row chunks bound the temporaries (one chunk when n * d <= _CHUNK_ELEMENTS); the
        # output is allocated once and each chunk is drawn straight into it.
        n = X.shape[0]
        Y = np.empty((n, self.dim))
        rows = max(1, _CHUNK_ELEMENTS // self.dim)
        fill = self._fill_linf if self.norm == "linf" else self._fill_l2
        for start in range(0, n, rows):
            stop = min(n, start + rows)
            fill(Y[start:stop], X[start:stop], rng)
        return Y

    def _branch(self, m: int, rng: np.random.Generator) -> np.ndarray:
        """1.0 for a report drawn from the cap (probability exactly ``cap_probability``), else 0.0."""
        return (rng.random(m) < self.cap_probability).astype(np.float64)

    def _fill_linf(self, Y: np.ndarray, X: np.ndarray, rng: np.random.Generator) -> None:
        """Y <- reports of the rows X (cube): x + 2r(U - 1/2) in the cap, 2(1+r)(U - 1/2) otherwise.

        Arithmetic on the 0/1 branch instead of ``np.where`` / masked ufuncs: every step is one
        contiguous pass (the masked add alone cost as much as the uniform draw).
        """
        rng.random(out=Y)  # U, uniform on [0,1)^d, drawn into the output
        cap = self._branch(len(Y), rng)
        scale = cap * (-2.0) + 2.0 * (1.0 + self.radius)  # 2r in the cap, 2(1+r) outside
        Y -= 0.5
        _scale_and_shift(Y, Y.T, scale, X, cap)

    def _fill_l2(self, Y: np.ndarray, X: np.ndarray, rng: np.random.Generator) -> None:
        """Y <- reports of the rows X (l2 ball): x + r U in the cap, (1+r) U otherwise, U uniform in the unit ball.

        Up to `_COLUMN_DIM` the ball points come coordinate-major (`_unit_ball_columns`).
        """
        m, d = Y.shape
        if d > _COLUMN_DIM:
            _unit_ball(Y, rng)
            U = Y.T
        else:
            U = np.empty((d, m))
            _unit_ball_columns(U, rng)
        cap = self._branch(m, rng)
        _scale_and_shift(Y, U, cap * (-1.0) + (1.0 + self.radius), X, cap)  # r in the cap, 1+r outside

    def estimate(self, Y: np.ndarray) -> np.ndarray:
        """Eq. 3: x~ = y / beta_c (unbiased since E[y | x] = beta_c x)."""
        return np.asarray(Y, dtype=np.float64) / self.cap_probability

    def _log_volumes(self) -> tuple[float, float]:
        """(log V(B_r), log V(Y_r))."""
        r, d = self.radius, self.dim
        if self.norm == "linf":
            return d * math.log(2.0 * r), d * math.log(2.0 + 2.0 * r)
        log_unit_ball = 0.5 * d * math.log(math.pi) - math.lgamma(0.5 * d + 1.0)
        return log_unit_ball + d * math.log(r), log_unit_ball + d * math.log1p(r)

    def log_density(self, Y: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Log output density at rows of Y given input x (-inf outside Y_r).

        beta_c/V(B_r) + (1-beta_c)/V(Y_r) on the cap and (1-beta_c)/V(Y_r) on the
        rest of Y_r, with the drawn (grid-rounded) beta_c: e^eps/Z and 1/Z of Eq. 2
        up to that rounding.
        """
        Y = np.asarray(Y, dtype=np.float64)
        r = self.radius
        if self.norm == "linf":
            in_y = np.all(np.abs(Y) <= 1.0 + r, axis=1)
            in_cap = np.all(np.abs(Y - x) <= r, axis=1)
        else:
            in_y = np.linalg.norm(Y, axis=1) <= 1.0 + r
            in_cap = np.linalg.norm(Y - x, axis=1) <= r
        log_vb, log_vy = self._log_volumes()
        b = self.cap_probability
        log_rest = math.log1p(-b) - log_vy if b < 1.0 else -math.inf
        log_cap = float(np.logaddexp(math.log(b) - log_vb, log_rest))
        return np.where(in_y, np.where(in_cap, log_cap, log_rest), -math.inf)

    def density(self, Y: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Output density at rows of Y given input x (0 outside Y_r; under/overflows at large d, see `log_density`)."""
        return np.exp(self.log_density(Y, x))

    def total_variation_bound(self) -> float:
        """Largest total-variation distance between R(x) and R(x') over inputs.

        TV(x, x') = integral of (f_x - f_x')_+ = beta_c V(B_r(x) \\ B_r(x')) / V(B_r),
        largest for the two farthest inputs: opposite corners of the cube, where
        the caps overlap in a cube of side max(0, 2r-2); antipodes of the l2 ball,
        where they overlap in a lens (`_lens_complement`).  Below the generic
        (e^eps-1)/(e^eps+1) whenever w < 1/2 or the caps overlap.
        """
        complement = _cube_complement if self.norm == "linf" else _lens_complement
        return self.cap_probability * complement(self.radius, self.dim)

    def amplification_parameters(self) -> BlanketDecomposition:
        """eps0 = eps and beta from `total_variation_bound` (never above tanh(eps/2)); of the common
        part only the LDP guarantee is used (common ratio e^eps: where two caps overlap, the victim's
        density is e^eps times the floor every input shares).

        Raises
        ------
        PrivacyParameterError
            For eps > 700 (beyond the accountant's range).
        """
        beta = min(self.total_variation_bound(), math.tanh(self.epsilon / 2.0))
        return BlanketDecomposition(eps0=self.epsilon, beta=beta)
