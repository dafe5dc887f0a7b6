"""Staircase mechanism (Geng & Viswanath; PIC full version, Appendix B and Table 7)."""

import math

import numpy as np
import pytest
from scipy import optimize, stats

from shuffledp.errors import PrivacyParameterError
from shuffledp.randomizers.staircase import Staircase, optimal_gamma, staircase_variance

POINTS = [(-1.0, -1.0), (1.0, 1.0), (1.0, -1.0), (0.0, 0.0), (0.3, -0.7)]


def _cdf_from_density(t: float, eps: float, gamma: float, delta: float, steps: int = 200) -> float:
    """CDF of the staircase noise by summing the rectangles of its density (module docstring)."""
    b = math.exp(-eps)
    a = (1 - b) / (2 * delta * (gamma + (1 - gamma) * b))
    u = abs(t)
    mass = 0.0
    for k in range(steps):
        for lo, hi, height in ((k, k + gamma, a * b**k), (k + gamma, k + 1, a * b ** (k + 1))):
            mass += height * max(0.0, min(u, hi * delta) - lo * delta)
    return 0.5 + mass if t >= 0 else 0.5 - mass


@pytest.mark.parametrize("eps", [0.25, 1.0, 5.0])
def test_noise_cdf_integrates_the_staircase_density(eps):
    R = Staircase(2 * eps)  # coordinate budget eps
    for t in (-7.3, -2.0, -0.31, 0.0, 0.05, 1.0, 2.9, 11.0):
        assert float(R.noise_cdf(t)) == pytest.approx(_cdf_from_density(t, eps, R.gamma, 2.0), abs=1e-12)


@pytest.mark.parametrize("eps", [0.5, 2.0, 10.0])
def test_noise_follows_the_staircase_distribution(eps):
    R = Staircase(eps)
    x = np.array([0.5, -1.0])
    noise = R.randomize(np.tile(x, (100_000, 1)), np.random.default_rng(1)) - x
    for j in range(2):
        assert stats.kstest(noise[:, j], R.noise_cdf).pvalue > 1e-3
    # The steps are not smoothed away: mass on [0, gamma Delta) vs [gamma Delta, Delta) as the density says.
    first = np.mean((noise[:, 0] >= 0) & (noise[:, 0] < R.gamma * 2))
    expected = float(R.noise_cdf(R.gamma * 2) - R.noise_cdf(0.0))
    assert stats.binomtest(int(first * len(noise)), len(noise), expected).pvalue > 1e-3


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.5, 5.0, 10.0])
def test_mse_gamma_minimises_the_variance(eps):
    res = optimize.minimize_scalar(
        lambda g: staircase_variance(eps, g, 2.0), bounds=(0, 1), method="bounded", options={"xatol": 1e-10}
    )
    assert optimal_gamma(eps) == pytest.approx(res.x, abs=1e-6)
    assert staircase_variance(eps, optimal_gamma(eps), 2.0) <= staircase_variance(eps, optimal_gamma(eps, "l1"), 2.0)


def test_variance_formula_matches_samples():
    R = Staircase(3.0)
    noise = R.randomize(np.zeros((200_000, 2)), np.random.default_rng(2)).ravel()
    sq = noise**2
    assert abs(sq.mean() - staircase_variance(1.5, R.gamma, 2.0)) <= 4 * sq.std() / math.sqrt(len(sq))


@pytest.mark.parametrize("gamma", ["mse", "l1", 0.3])
@pytest.mark.parametrize("eps", [0.5, 4.0])
@pytest.mark.parametrize("x", POINTS)
def test_estimate_is_unbiased(gamma, eps, x, assert_unbiased):
    assert_unbiased(Staircase(eps, gamma=gamma), x, seed=5)


def _exact_product_tv(R: Staircase, dim: int) -> float:
    """TV between opposite corners from exact cell probabilities on all breakpoints of both densities."""
    g, delta = R.gamma, R.sensitivity
    k = np.arange(60)
    breaks = np.concatenate([k * delta, (k + g) * delta])
    breaks = np.unique(np.concatenate([breaks, -breaks]))
    edges = np.unique(np.concatenate([breaks - 1.0, breaks + 1.0]))  # outputs for inputs -1 and +1
    cells = lambda x: np.diff(np.concatenate([[0.0], R.noise_cdf(edges - x), [1.0]]))  # noqa: E731
    p0, p1 = cells(-1.0), cells(1.0)
    joint0, joint1 = p0, p1
    for _ in range(dim - 1):
        joint0, joint1 = np.multiply.outer(joint0, p0), np.multiply.outer(joint1, p1)
    return 0.5 * float(np.abs(joint0 - joint1).sum())


@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("eps", [0.5, 2.0, 8.0])
def test_beta_is_the_exact_total_variation_of_opposite_corners(dim, eps):
    R = Staircase(eps, dim=dim)
    params = R.amplification_parameters()
    exact = _exact_product_tv(R, dim)
    assert exact <= params.beta <= exact * (1 + 1e-8) + 1e-12
    assert params.beta < math.tanh(eps / 2)
    # eps0 = eps; of the common part only the eps-LDP guarantee is claimed (ratio e^eps)
    assert math.exp(params.eps0) == pytest.approx(math.exp(eps)) and params.common_ratio == pytest.approx(math.exp(eps))


def test_coordinate_tv_grows_with_the_shift():
    """TV(t) = P(|N| <= t/2): the full width Delta = 2 is the worst shift."""
    R = Staircase(2.0, dim=1)
    tv = [float(R.noise_cdf(t / 2) - R.noise_cdf(-t / 2)) for t in np.linspace(0, 2, 41)]
    assert np.all(np.diff(tv) >= 0) and tv[-1] == pytest.approx(R.coordinate_total_variation())


def test_input_validation(check_box_input_contract):
    check_box_input_contract(Staircase)
    check_box_input_contract(lambda eps: Staircase(eps, dim=3), dim=3)


@pytest.mark.parametrize("gamma", [0.0, 1.0, -0.2, "l2", None, math.nan])
def test_bad_gamma(gamma):
    with pytest.raises(PrivacyParameterError, match="gamma"):
        Staircase(1.0, gamma=gamma)


def test_budget_too_large_for_float64():
    with pytest.raises(PrivacyParameterError, match=r"epsilon must be a number in \[2\^-52, 700\]; got 2000.0"):
        Staircase(2000.0, dim=2)


def _table7_error(eps: float, rng: np.random.Generator, **kw) -> float:
    R = Staircase(eps, **kw)
    X = rng.uniform(-1.0, 1.0, size=(10_000, 2))
    return float(np.linalg.norm(R.estimate(R.randomize(X, rng)) - X, axis=1).mean())


def test_table7_mean_l2_error():
    rng = np.random.default_rng(7)
    for eps, paper in {1.0: 6.40, 5.0: 1.05, 10.0: 0.28}.items():
        error = _table7_error(eps, rng)
        assert abs(error / paper - 1) <= 0.15, (eps, error, paper)


def test_table7_large_epsilon_matches_the_l1_gamma():
    """Finding (see staircase.py): the paper's eps = 8, 10 entries fit gamma = 1/(1 + e^{eps/2})."""
    rng = np.random.default_rng(8)
    for eps, paper in {8.0: 0.46, 10.0: 0.28}.items():
        assert abs(_table7_error(eps, rng, gamma="l1") / paper - 1) <= 0.05
        assert _table7_error(eps, rng) / paper - 1 > 0.05
