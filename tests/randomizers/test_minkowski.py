"""Minkowski Response (PIC §6.2 Eq. 2–3, Appendix A)."""

import math

import numpy as np
import pytest
from scipy import stats

from shuffledp.audit import audit_continuous
from shuffledp.errors import DomainError, PrivacyParameterError, ShapeError
from shuffledp.randomizers.minkowski import (
    MinkowskiResponse,
    cap_probability,
    closed_form_radius,
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


@pytest.mark.parametrize("eps", [0.5, 2.0, 8.0])
@pytest.mark.parametrize("x", [(-1.0, -1.0), (0.4, 0.9)])
def test_linf_output_follows_eq2_density(eps, x):
    R = MinkowskiResponse(eps, dim=2, norm="linf")
    rng = np.random.default_rng(7)
    x = np.array(x)
    Y = R.randomize(np.tile(x, (100_000, 1)), rng)
    edges = np.linspace(-1 - R.radius, 1 + R.radius, 13)
    expected = _cell_probabilities(R, x, edges).ravel() * len(Y)
    observed, _, _ = np.histogram2d(Y[:, 0], Y[:, 1], bins=[edges, edges])
    assert observed.sum() == len(Y)  # nothing outside Y_r
    keep = expected > 5
    chi2 = stats.chisquare(observed.ravel()[keep], expected[keep] * observed.ravel()[keep].sum() / expected[keep].sum())
    assert chi2.pvalue > 1e-3


@pytest.mark.parametrize("dim", [2, 3])
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
    x0, x1 = (np.array([-1.0, -1.0]), np.array([1.0, 1.0])) if norm == "linf" else (np.array([-1.0, 0]), np.array([1.0, 0]))
    g = np.linspace(-1 - R.radius, 1 + R.radius, 1201)
    mid = (g[:-1] + g[1:]) / 2
    P = np.stack(np.meshgrid(mid, mid), axis=-1).reshape(-1, 2)
    cell = (g[1] - g[0]) ** 2
    tv = 0.5 * np.sum(np.abs(R.density(P, x0) - R.density(P, x1))) * cell
    vr = R.amplification_parameters()
    assert vr.beta == pytest.approx(tv, rel=0.01)
    assert vr.beta < math.tanh(eps / 2)  # tighter than the generic eps-LDP beta
    assert vr.p == pytest.approx(math.exp(eps)) and vr.q == pytest.approx(math.exp(eps))


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
    result = audit_continuous(_BrokenMinkowski(2.0, dim=2, norm="linf"), n_samples=300_000, rng=np.random.default_rng(1))
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
