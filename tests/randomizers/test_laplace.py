"""Laplace and PlanarLaplace on [-1,1]^d (PIC full version, Appendix B; Table 7)."""

import math
import time

import numpy as np
import pytest
from scipy import integrate, special, stats

from shuffledp.audit import audit_continuous
from shuffledp.errors import PrivacyParameterError
from shuffledp.randomizers import _total_variation
from shuffledp.randomizers.laplace import Laplace, PlanarLaplace, laplace_total_variation

POINTS = [(-1.0, -1.0), (1.0, 1.0), (1.0, -1.0), (0.0, 0.0), (0.3, -0.7)]


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_laplace_noise_is_laplace_with_l1_diameter_scale(dim):
    R = Laplace(2.0, dim=dim)
    assert R.scale == pytest.approx(2 * dim / 2.0)  # l1 diameter of [-1,1]^d over eps (4/eps for d = 2)
    x = np.linspace(-0.9, 0.8, dim)
    noise = R.randomize(np.tile(x, (100_000, 1)), np.random.default_rng(1)) - x
    for j in range(dim):
        assert stats.kstest(noise[:, j], stats.laplace(scale=R.scale).cdf).pvalue > 1e-3
    if dim > 1:  # independent coordinates: the sign pattern is uniform over the 4 quadrants
        quadrant = 2 * (noise[:, 0] > 0) + (noise[:, 1] > 0)
        assert stats.chisquare(np.bincount(quadrant, minlength=4)).pvalue > 1e-3


def test_planar_laplace_radius_and_angle():
    R = PlanarLaplace(1.5)
    assert R.geo_epsilon == pytest.approx(1.5 / (2 * math.sqrt(2)))
    x = np.array([0.4, -1.0])
    noise = R.randomize(np.tile(x, (100_000, 1)), np.random.default_rng(2)) - x
    radius = np.linalg.norm(noise, axis=1)
    angle = np.arctan2(noise[:, 1], noise[:, 0])
    # Radius density e'^2 r exp(-e' r): Gamma(2, 1/e'); angle uniform and independent of it.
    assert stats.kstest(radius, stats.gamma(a=2, scale=1 / R.geo_epsilon).cdf).pvalue > 1e-3
    assert stats.kstest(angle, stats.uniform(-math.pi, 2 * math.pi).cdf).pvalue > 1e-3
    far = radius > np.median(radius)
    assert stats.kstest(angle[far], stats.uniform(-math.pi, 2 * math.pi).cdf).pvalue > 1e-3


@pytest.mark.parametrize("cls", [Laplace, PlanarLaplace])
@pytest.mark.parametrize("eps", [0.5, 4.0])
@pytest.mark.parametrize("x", POINTS)
def test_estimate_is_unbiased(cls, eps, x, assert_unbiased):
    assert_unbiased(cls(eps), x, seed=11)


@pytest.mark.parametrize("eps", [0.3, 1.0, 4.0])
def test_laplace_beta_one_dimension_is_closed_form(eps):
    exact = -math.expm1(-eps / 2)  # TV(Lap(0, b), Lap(2, b)) = 1 - e^{-1/b}, b = 2/eps
    beta = Laplace(eps, dim=1).amplification_parameters().beta
    assert exact <= beta <= exact * (1 + 1e-3)


@pytest.mark.parametrize("eps", [0.5, 2.0, 8.0])
def test_laplace_beta_two_dimensions_matches_quadrature(eps):
    """Independent computation: TV = E_P0[(1 - e^{-(L1 + L2)})_+] by quadrature over the loss law."""
    a = eps / 2  # per-coordinate loss range: shift 2 over scale 4/eps
    atoms = [(a, 0.5), (-a, math.exp(-a) / 2)]

    def dens(t):
        return math.exp(-(a - t) / 2) / 4

    def h(s):
        return max(0.0, -math.expm1(-s))

    tv = sum(p1 * p2 * h(l1 + l2) for l1, p1 in atoms for l2, p2 in atoms)
    tv += sum(2 * p * integrate.quad(lambda t, l=l: dens(t) * h(l + t), -a, a, points=[-l])[0] for l, p in atoms)
    tv += integrate.dblquad(lambda t2, t1: dens(t1) * dens(t2) * h(t1 + t2), -a, a, -a, a)[0]
    params = Laplace(eps).amplification_parameters()
    assert tv <= params.beta <= tv * (1 + 1e-3) + 1e-9
    assert params.beta < math.tanh(eps / 2)  # tighter than the generic eps-LDP beta
    # eps0 = eps; of the common part only the eps-LDP guarantee is claimed (ratio e^eps)
    assert math.exp(params.eps0) == pytest.approx(math.exp(eps)) and params.common_ratio == pytest.approx(math.exp(eps))


def test_laplace_beta_is_largest_at_opposite_corners():
    """Monte-Carlo TV for a non-corner pair (estimated with the known densities) stays below beta."""
    eps = 1.0
    R = Laplace(eps)
    x0, x1 = np.array([-1.0, 0.2]), np.array([1.0, -0.5])
    Y = R.randomize(np.tile(x0, (200_000, 1)), np.random.default_rng(3))
    loss = (np.abs(Y - x1).sum(axis=1) - np.abs(Y - x0).sum(axis=1)) / R.scale
    values = np.maximum(0.0, -np.expm1(-loss))
    assert values.mean() + 4 * values.std() / math.sqrt(len(values)) < laplace_total_variation(eps, 2)


def test_laplace_beta_in_ten_thousand_dimensions_takes_well_under_a_second():
    """Users pass dim = 10,000: the d-fold convolution summed directly took about a minute (d^2)."""
    laplace_total_variation.cache_clear()
    start = time.perf_counter()
    beta = Laplace(2.0, dim=10_000).amplification_parameters().beta
    assert time.perf_counter() - start < 1.0
    assert 0.0 < beta < 0.01  # about 2 eps / sqrt(2 pi d Var) for the nearly Gaussian loss sum


@pytest.mark.parametrize("dim", [129, 400])
@pytest.mark.parametrize("eps", [1e-3, 0.5, 2.0, 20.0])
def test_laplace_beta_by_characteristic_function_matches_the_direct_convolution(dim, eps, monkeypatch):
    """The fast path (characteristic function) agrees with the d-fold convolution summed directly."""
    laplace_total_variation.cache_clear()
    monkeypatch.setattr(_total_variation, "_DIRECT_CONVOLUTION_WORK", math.inf)
    direct = laplace_total_variation(eps, dim)
    laplace_total_variation.cache_clear()
    monkeypatch.setattr(_total_variation, "_DIRECT_CONVOLUTION_WORK", 0.0)
    fast = laplace_total_variation(eps, dim)
    laplace_total_variation.cache_clear()
    assert fast == pytest.approx(direct, rel=1e-12)


@pytest.mark.parametrize("eps", [0.5, 2.0, 8.0])
def test_planar_laplace_beta_is_exact(eps):
    c = eps / 2
    by_quadrature = 2 / math.pi * integrate.quad(lambda s: s * special.k1(s), 0, c)[0]
    vr = PlanarLaplace(eps).amplification_parameters()
    assert vr.beta == pytest.approx(by_quadrature, rel=1e-9)
    assert vr.beta < math.tanh(eps / 2)
    # Sampled: the TV between opposite corners is P(|N_1| <= sqrt 2) for N_1 the noise along the diagonal.
    R = PlanarLaplace(eps)
    noise = R.randomize(np.zeros((100_000, 2)), np.random.default_rng(4))
    hits = int(np.sum(np.abs(noise.sum(axis=1) / math.sqrt(2)) <= math.sqrt(2)))
    assert stats.binomtest(hits, len(noise), vr.beta).pvalue > 1e-3


@pytest.mark.parametrize("cls", [Laplace, PlanarLaplace])
def test_audit_passes(cls):
    R = cls(2.0)
    result = audit_continuous(R, n_samples=300_000, rng=np.random.default_rng(1))
    assert result.passed, result
    assert result.epsilon_lower > 0.5 * R.epsilon  # the audit has power


class _HalfScaleLaplace(Laplace):
    """Claims eps but adds Laplace noise of half the required scale (really 2 eps)."""

    def __init__(self, epsilon, dim=2):
        super().__init__(epsilon, dim)
        self.scale /= 2


class _HalfScalePlanarLaplace(PlanarLaplace):
    def __init__(self, epsilon, dim=2):
        super().__init__(epsilon, dim)
        self.geo_epsilon *= 2


@pytest.mark.parametrize("cls", [_HalfScaleLaplace, _HalfScalePlanarLaplace])
def test_audit_catches_half_noise(cls):
    result = audit_continuous(cls(2.0), n_samples=300_000, rng=np.random.default_rng(1))
    assert not result.passed, result


@pytest.mark.parametrize("cls", [Laplace, PlanarLaplace])
def test_input_validation(cls, check_box_input_contract):
    check_box_input_contract(cls)


def test_bad_dimension():
    with pytest.raises(PrivacyParameterError, match="dim must be 2"):
        PlanarLaplace(1.0, dim=3)
    with pytest.raises(PrivacyParameterError, match="dim"):
        Laplace(1.0, dim=0)


@pytest.mark.parametrize(
    "cls, paper",
    [(Laplace, {1.0: 6.56, 5.0: 1.30, 10.0: 0.64}), (PlanarLaplace, {1.0: 5.63, 5.0: 1.14, 10.0: 0.56})],
)
def test_table7_mean_l2_error(cls, paper):
    rng = np.random.default_rng(7)
    for eps, value in paper.items():
        R = cls(eps)
        X = rng.uniform(-1.0, 1.0, size=(10_000, 2))
        error = np.linalg.norm(R.estimate(R.randomize(X, rng)) - X, axis=1).mean()
        assert abs(error / value - 1) <= 0.15, (eps, error, value)
