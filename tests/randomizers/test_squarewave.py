"""Square Wave (Li et al., SIGMOD 2020; PIC full version, Appendix B and Table 7)."""

import math

import numpy as np
import pytest
from scipy import stats

from shuffledp.randomizers.squarewave import SquareWave

POINTS = [(-1.0, -1.0), (1.0, 1.0), (1.0, -1.0), (0.0, 0.0), (0.3, -0.7)]


@pytest.mark.parametrize("eps", [0.01, 0.5, 2.0, 10.0])
def test_parameters_follow_the_paper(eps):
    R = SquareWave(2 * eps)  # coordinate budget eps
    e = math.exp(eps)
    b = (eps * e - e + 1) / (2 * e * (e - 1 - eps))  # SW paper, as printed
    assert R.half_width == pytest.approx(b, rel=1e-6)
    assert R.p == pytest.approx(e / (2 * b * e + 1), rel=1e-6)
    assert R.q == pytest.approx(1 / (2 * b * e + 1), rel=1e-6)
    assert R.p / R.q == pytest.approx(e, rel=1e-12)  # eps-LDP per coordinate
    assert 2 * R.half_width * R.p + R.q == pytest.approx(1.0, rel=1e-12)  # total mass on [-b, 1+b]


@pytest.mark.parametrize("eps", [0.5, 3.0, 10.0])
@pytest.mark.parametrize("x", [-1.0, 0.37])
def test_reports_follow_the_piecewise_uniform_density(eps, x):
    R = SquareWave(eps)
    xs = np.array([x, -x])
    Y = R.randomize(np.tile(xs, (100_000, 1)), np.random.default_rng(3))
    b, v = R.half_width, (x + 1) / 2
    assert Y.min() >= -b and Y.max() <= 1 + b
    edges = np.unique(np.concatenate([np.linspace(-b, 1 + b, 41), [v - b, v + b]]))
    edges = edges[(edges >= -b) & (edges <= 1 + b)]
    lo, hi = edges[:-1], edges[1:]
    window = np.clip(np.minimum(hi, v + b) - np.maximum(lo, v - b), 0, None)
    expected = (R.q * (hi - lo) + (R.p - R.q) * window) * len(Y)
    observed, _ = np.histogram(Y[:, 0], bins=edges)
    keep = expected > 5
    assert expected.sum() == pytest.approx(len(Y))
    chi2 = stats.chisquare(observed[keep], expected[keep] * observed[keep].sum() / expected[keep].sum())
    assert chi2.pvalue > 1e-3


@pytest.mark.parametrize("eps", [0.5, 2.0, 10.0])
@pytest.mark.parametrize("x", POINTS)
def test_estimate_is_unbiased(eps, x, assert_unbiased):
    assert_unbiased(SquareWave(eps), x, seed=9)


def test_conditional_mean_is_affine_as_documented():
    R = SquareWave(3.0)
    for x in (-1.0, 0.0, 0.6):
        Y = R.randomize(np.full((200_000, 2), x), np.random.default_rng(4))
        v = (x + 1) / 2
        mean = R.q * (1 + 2 * R.half_width) / 2 + 2 * R.half_width * (R.p - R.q) * v
        assert np.all(np.abs(Y.mean(axis=0) - mean) <= 4 * Y.std(axis=0) / math.sqrt(len(Y)))


def _exact_product_tv(R: SquareWave) -> float:
    """TV between opposite corners from exact cell probabilities on the breakpoints of both densities."""
    b = R.half_width
    edges = np.unique([-b, b, 1 - b, 1 + b])  # b <= 1/2, so all lie in the support [-b, 1+b]
    lo, hi = edges[:-1], edges[1:]

    def cells(v):
        return R.q * (hi - lo) + (R.p - R.q) * np.clip(np.minimum(hi, v + b) - np.maximum(lo, v - b), 0, None)

    p0, p1 = cells(0.0), cells(1.0)
    joint0, joint1 = p0, p1
    for _ in range(R.dim - 1):
        joint0, joint1 = np.multiply.outer(joint0, p0), np.multiply.outer(joint1, p1)
    return 0.5 * float(np.abs(joint0 - joint1).sum())


@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("eps", [0.5, 2.0, 8.0])
def test_beta_is_the_exact_total_variation_of_opposite_corners(dim, eps):
    R = SquareWave(eps, dim=dim)
    params = R.amplification_parameters()
    exact = _exact_product_tv(R)
    assert exact <= params.beta <= exact * (1 + 1e-8) + 1e-12
    assert params.beta < math.tanh(eps / 2)
    # eps0 = eps; of the common part only the eps-LDP guarantee is claimed (ratio e^eps)
    assert math.exp(params.eps0) == pytest.approx(math.exp(eps)) and params.common_ratio == pytest.approx(math.exp(eps))


def test_input_validation(check_box_input_contract):
    check_box_input_contract(SquareWave)
    check_box_input_contract(lambda eps: SquareWave(eps, dim=1), dim=1)


def test_table7_mean_l2_error():
    """The per-report debiased estimate reproduces Table 7 (the raw reports, mapped back by
    2y - 1 without debiasing, would be several times more accurate than the table at eps <= 2)."""
    rng = np.random.default_rng(7)
    for eps, paper in {1.0: 5.72, 5.0: 0.92, 10.0: 0.42}.items():
        R = SquareWave(eps)
        X = rng.uniform(-1.0, 1.0, size=(10_000, 2))
        Y = R.randomize(X, rng)
        error = np.linalg.norm(R.estimate(Y) - X, axis=1).mean()
        assert abs(error / paper - 1) <= 0.15, (eps, error, paper)
        if eps == 1.0:
            assert np.linalg.norm(2 * Y - 1 - X, axis=1).mean() < 0.5 * paper
