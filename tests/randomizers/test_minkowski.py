"""Minkowski Response (PIC §6.2 Eq. 2–3, Appendix A)."""

import math
import re
import tracemalloc
import warnings

import mpmath as mp
import numpy as np
import pytest
from scipy import integrate, stats

from shuffledp.audit import audit_continuous
from shuffledp.errors import DomainError, PrivacyParameterError, ShapeError
from shuffledp.randomizers import minkowski
from shuffledp.randomizers.minkowski import (
    MinkowskiResponse,
    cap_probability,
    closed_form_radius,
    optimal_radius,
    worst_case_mse,
)

CORNERS = [(-1.0, -1.0), (1.0, 1.0), (1.0, -1.0), (0.0, 0.0), (0.3, -0.7)]


def _cell_probabilities(R: MinkowskiResponse, x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Exact probability of each grid cell for the l-inf mechanism (axis-aligned boxes)."""
    r, d = R.radius, R.dim
    lo, hi = edges[:-1], edges[1:]

    def overlap(a, b):  # 1-d overlap lengths of the cells with [a, b]
        return np.clip(np.minimum(hi, b) - np.maximum(lo, a), 0, None)

    cap = np.multiply.outer(overlap(x[0] - r, x[0] + r), overlap(x[1] - r, x[1] + r)) / (2 * r) ** d
    out = np.multiply.outer(overlap(-1 - r, 1 + r), overlap(-1 - r, 1 + r)) / (2 + 2 * r) ** d
    return R.cap_probability * cap + (1 - R.cap_probability) * out


def _l2_cell_probabilities(R: MinkowskiResponse, x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Exact probability of each grid cell for the l2 mechanism at d = 2 (cell-disc areas by quadrature)."""

    def disc_fractions(centre, radius):
        def chord_in_cell(u, y0, y1):  # length of the disc's vertical chord at abscissa u inside [y0, y1]
            h = math.sqrt(max(0.0, radius * radius - (u - centre[0]) ** 2))
            return max(0.0, min(y1, centre[1] + h) - max(y0, centre[1] - h))

        area = np.zeros((len(edges) - 1, len(edges) - 1))
        for i, (x0, x1) in enumerate(zip(edges[:-1], edges[1:])):
            lo, hi = max(x0, centre[0] - radius), min(x1, centre[0] + radius)
            for j, (y0, y1) in enumerate(zip(edges[:-1], edges[1:])):
                if lo < hi:
                    area[i, j] = integrate.quad(chord_in_cell, lo, hi, args=(y0, y1), epsabs=1e-12, limit=200)[0]
        return area / (math.pi * radius * radius)

    b = R.cap_probability
    return b * disc_fractions(x, R.radius) + (1 - b) * disc_fractions((0.0, 0.0), 1 + R.radius)


def _grid_pvalue(Y: np.ndarray, probabilities: np.ndarray, edges: np.ndarray) -> float:
    """Chi-square p-value of the 2-d histogram of Y on the grid ``edges`` against exact cell probabilities."""
    expected = probabilities.ravel() * len(Y)
    observed, _, _ = np.histogram2d(Y[:, 0], Y[:, 1], bins=[edges, edges])
    assert observed.sum() == len(Y)  # nothing outside Y_r
    keep = expected > 5
    return stats.chisquare(
        observed.ravel()[keep], expected[keep] * observed.ravel()[keep].sum() / expected[keep].sum()
    ).pvalue


@pytest.mark.parametrize("eps", [0.5, 2.0, 8.0])
@pytest.mark.parametrize("x", [(-1.0, -1.0), (0.4, 0.9)])
def test_linf_output_follows_eq2_density(eps, x):
    R = MinkowskiResponse(eps, dim=2, norm="linf")
    rng = np.random.default_rng(7)
    x = np.array(x)
    Y = R.randomize(np.tile(x, (100_000, 1)), rng)
    edges = np.linspace(-1 - R.radius, 1 + R.radius, 13)
    assert _grid_pvalue(Y, _cell_probabilities(R, x, edges), edges) > 1e-3


#: Two inputs of the l2 disc, interleaved row by row: a report that took another row's or another
#: coordinate's x would follow the wrong law.
_L2_INPUTS = np.array([[0.6, -0.3], [-0.8, 0.55]])


def _l2_grid_pvalues(R: MinkowskiResponse, seed: int) -> list[float]:
    Y = R.randomize(np.tile(_L2_INPUTS, (50_000, 1)), np.random.default_rng(seed))
    edges = np.linspace(-1 - R.radius, 1 + R.radius, 13)
    return [
        _grid_pvalue(Y[j :: len(_L2_INPUTS)], _l2_cell_probabilities(R, x, edges), edges)
        for j, x in enumerate(_L2_INPUTS)
    ]


@pytest.mark.parametrize("eps", [0.5, 3.0, 8.0])
def test_l2_output_follows_eq2_density_at_dim_2(eps):
    """The coordinate-major rejection sampler and the column-wise assembly of the reports: each
    input's reports against the exact probabilities of a 12 x 12 grid (the law in 2-d, direction
    included, not only the radius)."""
    assert min(_l2_grid_pvalues(MinkowskiResponse(eps, dim=2, norm="l2"), seed=13)) > 1e-3


def test_l2_density_test_rejects_a_wrong_ball_sampler(monkeypatch):
    """Power: points uniform in the square [-1,1]^2 (the rejection step forgotten) fail the grid test."""

    def square(out, rng):
        out[...] = rng.random(out.shape) * 2.0 - 1.0

    monkeypatch.setattr(minkowski, "_unit_ball_columns", square)
    assert max(_l2_grid_pvalues(MinkowskiResponse(3.0, dim=2, norm="l2"), seed=13)) < 1e-6


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_l2_radius_distribution_at_origin(dim):
    R = MinkowskiResponse(3.0, dim=dim, norm="l2")
    Y = R.randomize(np.zeros((100_000, dim)), np.random.default_rng(3))
    r, b = R.radius, R.cap_probability

    def cdf(t):
        return b * np.minimum(1.0, (t / r) ** dim) + (1 - b) * np.minimum(1.0, (t / (1 + r)) ** dim)

    assert stats.kstest(np.linalg.norm(Y, axis=1), cdf).pvalue > 1e-3


def test_l2_cap_mass_for_boundary_input():
    R = MinkowskiResponse(2.0, dim=2, norm="l2")
    x = np.array([0.6, 0.8])
    Y = R.randomize(np.tile(x, (100_000, 1)), np.random.default_rng(4))
    in_cap = np.linalg.norm(Y - x, axis=1) <= R.radius
    w = (R.radius / (1 + R.radius)) ** 2
    p = R.cap_probability + (1 - R.cap_probability) * w
    assert stats.binomtest(int(in_cap.sum()), len(Y), p).pvalue > 1e-3
    assert np.all(np.linalg.norm(Y, axis=1) <= 1 + R.radius + 1e-12)


@pytest.mark.parametrize("norm", ["linf", "l2"])
@pytest.mark.parametrize("eps", [0.5, 3.0, 10.0])
@pytest.mark.parametrize("x", CORNERS)
def test_estimate_is_unbiased(norm, eps, x):
    x = np.array(x)
    if norm == "l2" and np.linalg.norm(x) > 1:
        x = x / np.linalg.norm(x)
    R = MinkowskiResponse(eps, dim=2, norm=norm)
    est = R.estimate(R.randomize(np.tile(x, (100_000, 1)), np.random.default_rng(11)))
    se = est.std(axis=0, ddof=1) / math.sqrt(len(est))
    assert np.all(np.abs(est.mean(axis=0) - x) <= 4 * se)


@pytest.mark.parametrize("norm", ["linf", "l2"])
@pytest.mark.parametrize("eps", [1.0, 4.0])
def test_worst_case_mse_formula_matches_simulation(norm, eps):
    R = MinkowskiResponse(eps, dim=2, norm=norm)
    x = np.array([1.0, 1.0]) if norm == "linf" else np.array([1.0, 0.0])
    est = R.estimate(R.randomize(np.tile(x, (200_000, 1)), np.random.default_rng(5)))
    sq = np.sum((est - x) ** 2, axis=1)
    assert abs(sq.mean() - worst_case_mse(eps, R.radius, 2, norm)) <= 4 * sq.std() / math.sqrt(len(sq))


@pytest.mark.parametrize("norm", ["linf", "l2"])
@pytest.mark.parametrize("eps", [0.5, 2.0, 8.0])
def test_optimal_radius_minimises_worst_case_mse(norm, eps):
    R = MinkowskiResponse(eps, dim=2, norm=norm)
    best = worst_case_mse(eps, R.radius, 2, norm)
    for factor in (0.9, 0.99, 1.01, 1.1):
        assert best <= worst_case_mse(eps, R.radius * factor, 2, norm)
    if eps > math.log(2):
        assert best <= worst_case_mse(eps, closed_form_radius(eps, 2), 2, norm)


def test_closed_form_radius_matches_section_6_2_and_rejects_small_eps():
    assert closed_form_radius(3.0, 2) == pytest.approx(1 / ((math.e**3 - 1) ** 0.25 - 1))
    assert MinkowskiResponse(3.0, radius="closed_form").radius == pytest.approx(closed_form_radius(3.0, 2))
    with pytest.raises(PrivacyParameterError, match="ln 2"):
        MinkowskiResponse(0.5, radius="closed_form")


@pytest.mark.parametrize("norm", ["linf", "l2"])
@pytest.mark.parametrize("eps", [0.5, 2.0, 6.0])
def test_beta_is_the_total_variation_of_the_farthest_inputs(norm, eps):
    R = MinkowskiResponse(eps, dim=2, norm=norm)
    x0, x1 = (
        (np.array([-1.0, -1.0]), np.array([1.0, 1.0])) if norm == "linf" else (np.array([-1.0, 0]), np.array([1.0, 0]))
    )
    g = np.linspace(-1 - R.radius, 1 + R.radius, 1201)
    mid = (g[:-1] + g[1:]) / 2
    P = np.stack(np.meshgrid(mid, mid), axis=-1).reshape(-1, 2)
    cell = (g[1] - g[0]) ** 2
    tv = 0.5 * np.sum(np.abs(R.density(P, x0) - R.density(P, x1))) * cell
    params = R.amplification_parameters()
    assert params.beta == pytest.approx(tv, rel=0.01)
    assert params.beta < math.tanh(eps / 2)  # tighter than the generic eps-LDP beta
    # eps0 = eps; of the common part only the eps-LDP guarantee is claimed (ratio e^eps)
    assert math.exp(params.eps0) == pytest.approx(math.exp(eps)) and params.common_ratio == pytest.approx(math.exp(eps))


def test_density_ratio_is_at_most_e_eps():
    R = MinkowskiResponse(2.0, dim=2, norm="linf")
    Y = np.random.default_rng(0).uniform(-1 - R.radius, 1 + R.radius, (10_000, 2))
    f0, f1 = R.density(Y, np.array([-1.0, -1.0])), R.density(Y, np.array([1.0, 0.5]))
    assert np.max(np.log(f0 / f1)) == pytest.approx(2.0)


@pytest.mark.parametrize("norm", ["linf", "l2"])
def test_audit_passes_for_minkowski(norm):
    R = MinkowskiResponse(2.0, dim=2, norm=norm)
    result = audit_continuous(R, n_samples=300_000, rng=np.random.default_rng(1))
    assert result.passed, result
    assert result.epsilon_lower > 0.5 * R.epsilon  # the audit has power: it sees most of the loss


class _BrokenMinkowski(MinkowskiResponse):
    """Cap probability computed for 2*epsilon while claiming epsilon."""

    def __init__(self, epsilon, **kw):
        super().__init__(epsilon, **kw)
        self.cap_probability = cap_probability(2 * epsilon, self.radius, self.dim)


def test_audit_flags_broken_minkowski():
    result = audit_continuous(
        _BrokenMinkowski(2.0, dim=2, norm="linf"), n_samples=300_000, rng=np.random.default_rng(1)
    )
    assert not result.passed, result


def test_outside_domain_raises_and_names_row():
    R = MinkowskiResponse(1.0)
    X = np.array([[0.0, 0.0], [0.5, 1.5], [2.0, 0.0]])
    with pytest.raises(DomainError, match=r"X\[1\].*\[-1, 1\]\^2"):
        R.randomize(X, np.random.default_rng(0))
    Y = R.randomize(X, np.random.default_rng(0), clip=True)
    assert Y.shape == (3, 2)
    with pytest.raises(DomainError, match=r"X\[0\]"):
        MinkowskiResponse(1.0, norm="l2").randomize([[0.8, 0.8]], np.random.default_rng(0))
    with pytest.raises(DomainError):
        R.randomize([[np.nan, 0.0]], np.random.default_rng(0))


@pytest.mark.parametrize("eps", [0, -1, math.nan, math.inf, "x", None])
def test_bad_epsilon(eps):
    with pytest.raises(PrivacyParameterError, match="epsilon"):
        MinkowskiResponse(eps)


def test_bad_shape_and_parameters():
    R = MinkowskiResponse(1.0, dim=2)
    with pytest.raises(ShapeError, match=r"\(n, 2\)"):
        R.randomize(np.zeros((4, 3)))
    with pytest.raises(ShapeError):
        R.randomize(np.zeros(4))
    with pytest.raises(PrivacyParameterError, match="norm"):
        MinkowskiResponse(1.0, norm="l1")
    with pytest.raises(PrivacyParameterError, match="radius"):
        MinkowskiResponse(1.0, radius=-0.5)


# ---------------------------------------------------------------------------------------------
# High dimension (issue 6, deliverable 4): log-space values, exact sampling, unbiased estimates.
# ---------------------------------------------------------------------------------------------


def _mp_volumes(r, d, norm):
    """(V(B_r), V(Y_r)) in mpmath, straight from the definitions of §6.2 / Appendix A."""
    if norm == "linf":
        return (2 * r) ** d, (2 + 2 * r) ** d
    unit = mp.pi ** (mp.mpf(d) / 2) / mp.gamma(mp.mpf(d) / 2 + 1)
    return unit * r**d, unit * (1 + r) ** d


def _mp_cap_probability(eps, r, d, norm):
    vb, vy = _mp_volumes(r, d, norm)
    return vb * mp.expm1(eps) / (vy + vb * mp.expm1(eps))  # Eq. 2


def _mp_worst_case_mse(eps, r, d, norm):
    """Appendix A before its relaxations: (beta E||cap||^2 + (1-beta) E||Y_r||^2 - beta^2 ||x||^2) / beta^2 at the worst x."""
    b = _mp_cap_probability(eps, r, d, norm)
    if norm == "l2":
        x2, cap2, out2 = 1, r**2 * d / (d + 2), (1 + r) ** 2 * d / (d + 2)
    else:
        x2, cap2, out2 = d, d * r**2 / 3, d * (1 + r) ** 2 / 3
    return (b * (x2 + cap2) + (1 - b) * out2 - b**2 * x2) / b**2


def _mp_beta(eps, r, d, norm):
    """TV of the two farthest inputs: beta_c V(B_r(x) minus B_r(x')) / V(B_r)."""
    b = _mp_cap_probability(eps, r, d, norm)
    if r <= 1:
        return b
    if norm == "linf":
        overlap = ((r - 1) / r) ** d
    else:  # two caps of height r-1 of a ball of radius r
        overlap = mp.betainc(mp.mpf(d + 1) / 2, mp.mpf(1) / 2, 0, 1 - 1 / r**2, regularized=True)
    return b * (1 - overlap)


@pytest.mark.parametrize("norm", ["l2", "linf"])
@pytest.mark.parametrize(
    "eps, d", [(3.0, 114), (3.0, 1000), (3.0, 10_000), (0.05, 1000), (40.0, 10_000), (800.0, 1000)]
)
def test_values_at_large_dim_match_mpmath(norm, eps, d):
    mp.mp.dps = 60
    R = MinkowskiResponse(eps, dim=d, norm=norm)
    r = mp.mpf(R.radius)
    b = _mp_cap_probability(eps, r, d, norm)
    assert cap_probability(eps, R.radius, d) == pytest.approx(float(b), rel=1e-12)
    # the drawn probability is b rounded down to the 2^-53 grid (with a margin for float error in log a)
    assert R.cap_probability * 2.0**53 == int(R.cap_probability * 2.0**53)
    assert float(b) * (1 - 1e-12) - 2.0**-53 < R.cap_probability <= float(b)
    assert worst_case_mse(eps, R.radius, d, norm) == pytest.approx(
        float(_mp_worst_case_mse(eps, r, d, norm)), rel=1e-11
    )
    # beta = total_variation_bound() (<= tanh(eps/2)); beyond eps0 = 700 the accountant takes no
    # parameters, so the bound itself is checked there
    beta = R.amplification_parameters().beta if eps <= 700 else R.total_variation_bound()
    assert beta == pytest.approx(float(_mp_beta(eps, r, d, norm) * R.cap_probability / b), rel=1e-10)
    if eps > 700:
        with pytest.raises(PrivacyParameterError, match=r"in \[1e-6, 700\]; got"):
            R.amplification_parameters()
    # the radius is where the exact MSE has zero slope in log r (a minimum: larger on both sides)
    slope = mp.diff(lambda t: _mp_worst_case_mse(eps, mp.exp(t), d, norm), mp.log(r))
    curvature = mp.diff(lambda t: _mp_worst_case_mse(eps, mp.exp(t), d, norm), mp.log(r), 2)
    assert curvature > 0
    assert abs(slope / curvature) < 1e-10  # Newton step to the exact optimum, in log r


@pytest.mark.parametrize("norm", ["l2", "linf"])
@pytest.mark.parametrize("d", [1000, 10_000])
def test_estimate_is_unbiased_at_high_dim(norm, d):
    """Projections of the estimates on fixed directions are unbiased to within 4 standard errors."""
    R = MinkowskiResponse(3.0, dim=d, norm=norm)
    rng = np.random.default_rng(17)
    x = np.full(d, 1.0) if norm == "linf" else np.full(d, 1.0 / math.sqrt(d))
    x[: d // 2] *= -0.5  # not symmetric: a sign error or a missing centring shows
    g = np.random.default_rng(99).standard_normal(d)
    directions = np.stack([x / np.linalg.norm(x), g / np.linalg.norm(g), np.eye(1, d, 3)[0]])
    n, batch = (20_000, 2_000) if d == 1000 else (2_000, 500)
    proj = np.vstack([R.estimate(R.randomize(np.tile(x, (batch, 1)), rng)) @ directions.T for _ in range(n // batch)])
    se = proj.std(axis=0, ddof=1) / math.sqrt(n)
    assert np.all(np.abs(proj.mean(axis=0) - directions @ x) <= 4 * se)
    if d == 1000:  # power: an estimate missing x altogether would fail (at d = 10^4 the noise is too large)
        assert 4 * se[0] < np.linalg.norm(x)


def _linf_distance_cdf(R: MinkowskiResponse):
    """Exact CDF of max_i |y_i - x_i| for x a corner of [-1,1]^d under Eq. 2 (beta_c of the claimed epsilon)."""
    r, d, b = R.radius, R.dim, cap_probability(R.epsilon, R.radius, R.dim)

    def cdf(t):
        t = np.asarray(t, dtype=np.float64)
        cap = np.exp(d * np.log(np.minimum(t / r, 1.0)))
        # uniform on [-1-r, 1+r]^d: each coordinate within t of x_i = 1
        side = np.where(t <= r, t / (1 + r), np.minimum(1.0, (r + t) / (2 + 2 * r)))
        return b * cap + (1 - b) * np.exp(d * np.log(side))

    return cdf


def _l2_norm_cdf(R: MinkowskiResponse):
    """Exact CDF of ||y|| for x = 0 under Eq. 2 (uniform on balls of radius r and 1+r)."""
    r, d, b = R.radius, R.dim, cap_probability(R.epsilon, R.radius, R.dim)

    def cdf(t):
        t = np.asarray(t, dtype=np.float64)
        return b * np.exp(d * np.log(np.minimum(t / r, 1.0))) + (1 - b) * np.exp(
            d * np.log(np.minimum(t / (1 + r), 1.0))
        )

    return cdf


def _gof_pvalue(R: MinkowskiResponse, seed: int, n: int = 4_000) -> float:
    """KS p-value of a 1-d statistic of n outputs against its exact law: max |y - x| for the corner x = 1
    (l-inf), ||y|| for x = 0 (l2)."""
    rng = np.random.default_rng(seed)
    if R.norm == "linf":
        x = np.ones(R.dim)
        Y = R.randomize(np.tile(x, (n, 1)), rng)
        return stats.kstest(np.max(np.abs(Y - x), axis=1), _linf_distance_cdf(R)).pvalue
    Y = R.randomize(np.zeros((n, R.dim)), rng)
    return stats.kstest(np.linalg.norm(Y, axis=1), _l2_norm_cdf(R)).pvalue


@pytest.mark.parametrize("norm", ["l2", "linf"])
def test_goodness_of_fit_at_dim_1000(norm):
    assert _gof_pvalue(MinkowskiResponse(3.0, dim=1000, norm=norm), seed=5) > 1e-3
    assert _gof_pvalue(_BrokenMinkowski(3.0, dim=1000, norm=norm), seed=5) < 1e-6  # the test has power


@pytest.mark.parametrize("norm", ["l2", "linf"])
@pytest.mark.parametrize("eps, d, n", [(40.0, 2, 20_000), (1e-3, 2, 20_000), (40.0, 10_000, 400), (1e-3, 10_000, 400)])
def test_sampler_law_at_the_edges(norm, eps, d, n):
    """At eps0 = 40 (cap probability 1 - 1e-9, tiny cap), eps0 = 1e-3 (cap probability ~4e-4) and
    d = 10,000 the reports follow their exact law, and an input of 1e200 is refused, naming its row."""
    R = MinkowskiResponse(eps, dim=d, norm=norm)
    assert _gof_pvalue(R, seed=17, n=n) > 1e-3
    X = np.zeros((3, d))
    X[1, 0] = 1e200
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # refused by name, not by an overflow warning on the way
        with pytest.raises(DomainError, match=r"X\[1\]"):
            R.randomize(X, np.random.default_rng(0))


@pytest.mark.parametrize("eps", [0.5, 3.0])
def test_inner_cap_mass_for_boundary_input_at_dim_1000(eps):
    """P(||y - x|| <= r) = beta_c + (1 - beta_c) w for ||x|| = 1 (binomial test)."""
    R = MinkowskiResponse(eps, dim=1000, norm="l2")
    x = np.zeros(1000)
    x[[0, 7]] = 0.6, 0.8
    Y = R.randomize(np.tile(x, (8_000, 1)), np.random.default_rng(8))
    in_cap = np.linalg.norm(Y - x, axis=1) <= R.radius
    w = math.exp(-1000 * math.log1p(1 / R.radius))
    p = R.cap_probability + (1 - R.cap_probability) * w  # the cap lies inside Y_r
    assert stats.binomtest(int(in_cap.sum()), len(Y), p).pvalue > 1e-3
    assert np.all(np.linalg.norm(Y, axis=1) <= 1 + R.radius + 1e-9)


@pytest.mark.parametrize("norm", ["l2", "linf"])
def test_beta_matches_monte_carlo_total_variation_at_dim_1000(norm):
    """TV(R(x0), R(x1)) = E_{y ~ R(x0)}[(1 - f1/f0)_+] for the farthest inputs, from log densities."""
    R = MinkowskiResponse(3.0, dim=1000, norm=norm)
    x0 = -np.ones(1000) if norm == "linf" else -np.eye(1, 1000, 0)[0]
    Y = R.randomize(np.tile(x0, (8_000, 1)), np.random.default_rng(21))
    log_ratio = R.log_density(Y, -x0) - R.log_density(Y, x0)
    assert np.max(log_ratio) <= 3.0 + 1e-9 and np.min(log_ratio) >= -3.0 - 1e-9
    gain = np.maximum(0.0, -np.expm1(log_ratio))
    beta = R.amplification_parameters().beta
    assert abs(gain.mean() - beta) <= 4 * gain.std(ddof=1) / math.sqrt(len(gain))
    assert beta < math.tanh(1.5)


@pytest.mark.parametrize("norm", ["l2", "linf"])
@pytest.mark.parametrize("d", [1000, 10_000])
@pytest.mark.parametrize("eps", [0.5, 3.0, 40.0])
def test_optimal_radius_minimises_worst_case_mse_at_high_dim(norm, d, eps):
    r = optimal_radius(eps, d, norm)
    best = worst_case_mse(eps, r, d, norm)
    assert math.isfinite(best)
    for factor in (0.99, 1.01, 0.5, 2.0):
        assert best < worst_case_mse(eps, r * factor, d, norm)
    if eps > math.log(2):
        assert best < worst_case_mse(eps, closed_form_radius(eps, d), d, norm)


@pytest.mark.parametrize("norm", ["l2", "linf"])
def test_l2_optimal_radius_at_high_dim(norm):
    R = MinkowskiResponse(3.0, dim=1000, norm=norm, radius="optimal_l2")
    assert 0.5 < R.radius / optimal_radius(3.0, 1000, norm) < 1.5
    X = R.domain.sample_uniform(2_000, np.random.default_rng(2))
    err = np.linalg.norm(R.estimate(R.randomize(X, np.random.default_rng(3))) - X, axis=1).mean()
    other = MinkowskiResponse(3.0, dim=1000, norm=norm, radius=0.7 * R.radius)
    err_other = np.linalg.norm(other.estimate(other.randomize(X, np.random.default_rng(3))) - X, axis=1).mean()
    assert err < err_other


@pytest.mark.parametrize("norm", ["l2", "linf"])
def test_randomize_memory_is_the_output_plus_bounded_temporaries(monkeypatch, norm):
    monkeypatch.setattr(minkowski, "_CHUNK_ELEMENTS", 1 << 14)
    R = MinkowskiResponse(3.0, dim=1000, norm=norm)
    X = np.zeros((400, 1000))
    R.randomize(X[:1], np.random.default_rng(0))  # one-time allocations (imports, caches) outside the count
    tracemalloc.start()
    Y = R.randomize(X, np.random.default_rng(0))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    if (
        norm == "linf"
    ):  # the output plus per-row vectors: no n*d temporary (the cap rows get x by a masked add at this d)
        assert peak < 1.2 * 400 * 1001 * 8
    else:  # output + a few chunk-sized temporaries (unchunked they would take 4 outputs more)
        assert peak < Y.nbytes + 8 * 8 * (1 << 14)
        assert stats.kstest(np.linalg.norm(Y, axis=1), _l2_norm_cdf(R)).pvalue > 1e-3


@pytest.mark.parametrize("norm", ["l2", "linf"])
def test_tiny_epsilon_works_and_stays_unbiased(norm):
    R = MinkowskiResponse(1e-6, dim=2, norm=norm)
    assert R.cap_probability == pytest.approx(cap_probability(1e-6, R.radius, 2), rel=1e-9)
    x = np.array([0.6, -0.8])
    est = R.estimate(R.randomize(np.tile(x, (200_000, 1)), np.random.default_rng(4)))
    se = est.std(axis=0, ddof=1) / math.sqrt(len(est))
    assert np.all(np.abs(est.mean(axis=0) - x) <= 4 * se)


@pytest.mark.parametrize("eps, d", [(100.0, 2), (800.0, 2), (1e6, 1000), (800.0, 1)])
def test_epsilon_whose_radius_float64_cannot_resolve_is_refused(eps, d):
    with pytest.raises(PrivacyParameterError, match=re.escape(f"epsilon={eps:g} is too large") + ".*epsilon <= "):
        MinkowskiResponse(eps, dim=d)


def test_largest_allowed_epsilon_is_accepted():
    # the message's bound is where the optimal radius reaches 2^-32: just below it works
    with pytest.raises(PrivacyParameterError, match=r"epsilon <= (\S+) here") as info:
        MinkowskiResponse(100.0, dim=2)
    bound = float(info.value.args[0].split("epsilon <= ")[1].split(" ")[0])
    assert MinkowskiResponse(bound * 0.999, dim=2).radius >= minkowski.MIN_RADIUS
    with pytest.raises(PrivacyParameterError, match="radius must be >= 2\\^-32"):
        MinkowskiResponse(3.0, dim=2, radius=1e-12)


@pytest.mark.parametrize("eps", [800.0, 5000.0])
def test_huge_epsilon_at_high_dim_keeps_the_outside_branch(eps):
    R = MinkowskiResponse(eps, dim=1000, norm="linf")
    assert 0.0 < R.cap_probability < 1.0 and (1 - R.cap_probability) * 2.0**53 >= 1
    # beyond eps0 = 700 no shuffle parameters are offered (the shuffled epsilon is eps0 itself)
    assert 0.0 < R.total_variation_bound() <= 1.0
    with pytest.raises(PrivacyParameterError, match=r"eps0 must be a number in \[1e-6, 700\]; got"):
        R.amplification_parameters()


def test_epsilon_with_undrawable_cap_probability_is_refused():
    with pytest.raises(PrivacyParameterError, match=r"epsilon.*(too small|2\^-52)"):
        MinkowskiResponse(1e-300, dim=2)


@pytest.mark.parametrize("dim", [0, -3, 2.5, 3.0, True, "4", None])
def test_bad_dim(dim):
    with pytest.raises(PrivacyParameterError, match=r"dim must be an integer >= 1, got dim="):
        MinkowskiResponse(1.0, dim=dim)


def test_huge_dim_works_with_the_analytic_radius():
    R = MinkowskiResponse(3.0, dim=10**7, norm="linf")
    assert R.radius == pytest.approx(optimal_radius(3.0, 10**7, "linf"))
    Y = R.randomize(np.zeros((1, 10**7)), np.random.default_rng(0))
    assert Y.shape == (1, 10**7) and np.all(np.abs(Y) <= 1 + R.radius)
    with pytest.raises(PrivacyParameterError, match=r"optimal_l2.*dim <= 100000.*dim=10000000"):
        MinkowskiResponse(3.0, dim=10**7, radius="optimal_l2")


@pytest.mark.parametrize("dim", [1, 2, 3, 4])
def test_unit_ball_sampler_is_uniform(dim):
    """The coordinate-major rejection sampler (d <= 3) and the Gaussian one (d >= 4), as randomize picks
    them: radius law t^d, and one coordinate's marginal (uniform at d = 1, density (3/4)(1 - t^2) at
    d = 3, the angle at d = 2)."""
    rng = np.random.default_rng(12)
    if dim <= minkowski._COLUMN_DIM:
        columns = np.empty((dim, 60_000))
        minkowski._unit_ball_columns(columns, rng)
        out = columns.T
    else:
        out = np.empty((60_000, dim))
        minkowski._unit_ball(out, rng)
    radius = np.linalg.norm(out, axis=1)
    assert radius.max() <= 1.0
    assert stats.kstest(radius, lambda t: np.clip(t, 0, 1) ** dim).pvalue > 1e-3
    if dim == 1:
        assert stats.kstest(out[:, 0], stats.uniform(-1, 2).cdf).pvalue > 1e-3
    if dim == 2:
        assert stats.kstest(np.arctan2(out[:, 1], out[:, 0]), stats.uniform(-np.pi, 2 * np.pi).cdf).pvalue > 1e-3
    if dim == 3:
        assert stats.kstest(out[:, 2], lambda t: 0.5 + 0.75 * (t - t**3 / 3)).pvalue > 1e-3


@pytest.mark.parametrize("norm", ["l2", "linf"])
def test_row_chunks_draw_independent_reports(monkeypatch, norm):
    """Many small chunks: every chunk draws afresh, the cap fraction is beta_c and the reports stay in Y_r."""
    monkeypatch.setattr(minkowski, "_CHUNK_ELEMENTS", 64)
    R = MinkowskiResponse(2.0, dim=2, norm=norm)
    x = np.array([0.5, -0.25])
    Y = R.randomize(np.tile(x, (40_000, 1)), np.random.default_rng(6))
    assert len(np.unique(Y, axis=0)) == len(Y)
    dist = np.abs(Y - x).max(axis=1) if norm == "linf" else np.linalg.norm(Y - x, axis=1)
    size = np.abs(Y).max(axis=1) if norm == "linf" else np.linalg.norm(Y, axis=1)
    assert size.max() <= 1 + R.radius
    # P[in the cap] = beta_c + (1 - beta_c) V(B_r)/V(Y_r) when the cap lies inside Y_r (it does for this x)
    w = (R.radius / (1 + R.radius)) ** 2
    p = R.cap_probability + (1 - R.cap_probability) * w
    assert abs((dist <= R.radius).mean() - p) < 4.5 * math.sqrt(p * (1 - p) / len(Y))


def test_long_rows_take_the_masked_add():
    """At d >= _MASKED_ADD_DIM the cap rows get x without a temporary; reports stay unbiased."""
    d = minkowski._MASKED_ADD_DIM
    R = MinkowskiResponse(4.0, dim=d, norm="linf")
    x = np.linspace(-1, 1, d)
    est = R.estimate(R.randomize(np.tile(x, (4_000, 1)), np.random.default_rng(9)))
    z = (est.mean(axis=0) - x) / (est.std(axis=0, ddof=1) / math.sqrt(len(est)))
    assert np.abs(z).max() < 5.0
