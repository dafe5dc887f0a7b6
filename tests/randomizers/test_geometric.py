"""Geometric / discrete Laplace mechanism (metric paper §4, Eq. 2)."""

import math

import numpy as np
import pytest
from scipy import stats

from shuffledp.audit import exact_audit, exact_epsilon
from shuffledp.errors import DomainError, PrivacyParameterError, ShapeError
from shuffledp.randomizers.geometric import Geometric, discrete_laplace_noise

CASES = [(eps, low, high) for eps in (0.05, 0.7, 2.0, 6.0) for low, high in [(0, 1), (-3, -1), (0, 4), (2, 9)]]


def _eq2(y, x, eps_geo):
    """Eq. 2 of the metric paper: (1 - e^-eps)/(1 + e^-eps) e^{-eps |x - y|}."""
    a = math.exp(-eps_geo)
    return (1 - a) / (1 + a) * np.exp(-eps_geo * np.abs(np.asarray(y) - x))


@pytest.mark.parametrize("eps,low,high", CASES)
def test_exact_audit_equals_epsilon(eps, low, high):
    R = Geometric(eps, low, high)
    for t in (None, 0, 3):
        P = R.transition_matrix(truncate=t)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    assert exact_audit(R) == pytest.approx(eps, abs=1e-12)
    assert exact_epsilon(R.transition_matrix(truncate=0)) == pytest.approx(eps, abs=1e-12)


@pytest.mark.parametrize("eps,low,high", CASES)
def test_beta_is_max_tv_and_common_ratio(eps, low, high, max_tv, common_ratio):
    R = Geometric(eps, low, high)
    params = R.amplification_parameters()
    # A wide window makes the lumped tails negligible (lumping can only lower TV), and the
    # exact TV comes from the untruncated pmf over a window holding all but 1e-15.
    width = int(math.ceil(40 / R.epsilon_geo)) + (high - low)
    assert params.beta == pytest.approx(max_tv(R.transition_matrix(truncate=width)), abs=1e-12)
    assert max_tv(R.transition_matrix()) <= params.beta + 1e-12
    x0, x1 = low, high
    y = np.arange(low - width, high + width + 1)
    tv = 0.5 * np.abs(_eq2(y, x0, R.epsilon_geo) - _eq2(y, x1, R.epsilon_geo)).sum()
    assert params.beta == pytest.approx(tv, abs=1e-12)
    assert math.exp(params.eps0) == pytest.approx(math.exp(eps), rel=1e-12)
    # read off the clipped table by the library; here off the wide window (lumping the tails must not change it)
    assert params.common_ratio == pytest.approx(common_ratio(R.transition_matrix(truncate=width), eps), rel=1e-8)


def test_transition_matrix_matches_eq2_and_tails():
    R = Geometric(1.5, 0, 3)
    t = 4
    P = R.transition_matrix(truncate=t)
    labels = R.transition_outputs(truncate=t)
    assert labels[0] == -t - 1 and labels[-1] == 3 + t + 1 and len(labels) == P.shape[1]
    for i, x in enumerate(range(0, 4)):
        np.testing.assert_allclose(P[i, 1:-1], _eq2(labels[1:-1], x, R.epsilon_geo), rtol=1e-13)
        far = np.arange(1, 4000)
        np.testing.assert_allclose(P[i, 0], _eq2(labels[0] - far + 1, x, R.epsilon_geo).sum(), rtol=1e-12)
        np.testing.assert_allclose(P[i, -1], _eq2(labels[-1] + far - 1, x, R.epsilon_geo).sum(), rtol=1e-12)


@pytest.mark.parametrize("eps,low,high,x", [(1.0, 0, 4, 0), (1.0, 0, 4, 3), (3.0, -2, 0, -1), (0.3, 0, 1, 1)])
def test_sampling_matches_transition_matrix(eps, low, high, x, chi2_pvalue):
    R = Geometric(eps, low, high)
    t = 10
    labels = R.transition_outputs(truncate=t)
    Y = R.randomize(np.full(100_000, x), np.random.default_rng(301))
    columns = np.clip(Y, labels[0], labels[-1]) - labels[0]
    assert chi2_pvalue(columns, R.transition_matrix(truncate=t)[x - low]) > 1e-3


@pytest.mark.parametrize("p", [0.1, 0.5, 0.95])
def test_discrete_laplace_noise_law(p, chi2_pvalue):
    N = discrete_laplace_noise(p, 100_000, np.random.default_rng(302))
    assert N.dtype.kind == "i"
    r = np.arange(-200, 201)
    pmf = (1 - p) / (1 + p) * p ** np.abs(r)
    pmf[0] += (1 - pmf.sum()) / 2  # the mass beyond +-200 is below 1e-4 for p = 0.95
    pmf[-1] += 1 - pmf.sum()
    assert chi2_pvalue(np.clip(N, -200, 200) + 200, pmf) > 1e-3


@pytest.mark.parametrize("eps,low,high", [(0.5, 0, 10), (2.0, -5, 5)])
def test_estimate_unbiased(eps, low, high):
    R = Geometric(eps, low, high)
    X = np.random.default_rng(0).integers(low, high + 1, 200_000)
    err = R.estimate(R.randomize(X, np.random.default_rng(303))) - X
    assert abs(err.mean()) <= 4 * err.std(ddof=1) / math.sqrt(len(err))


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf, "x"])
def test_bad_epsilon_rejected(bad):
    with pytest.raises(PrivacyParameterError, match="epsilon"):
        Geometric(bad, 0, 3)


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.2, math.nan])
def test_bad_noise_parameter_rejected(bad):
    with pytest.raises(PrivacyParameterError, match="p"):
        discrete_laplace_noise(bad, 3, np.random.default_rng())


@pytest.mark.parametrize("low,high", [(3, 3), (4, 1), (0.5, 2), (0, "3")])
def test_bad_range_rejected(low, high):
    with pytest.raises(PrivacyParameterError):
        Geometric(1.0, low, high)


def test_bad_truncate_rejected():
    with pytest.raises(PrivacyParameterError, match="truncate"):
        Geometric(1.0, 0, 3).transition_matrix(truncate=-1)


def test_bad_inputs():
    R = Geometric(1.0, 0, 3)
    with pytest.raises(DomainError, match=r"X\[2\]"):
        R.randomize([0, 3, 4])
    with pytest.raises(ShapeError):
        R.randomize(np.zeros((2, 2), dtype=int))
    with pytest.raises(ShapeError):
        R.randomize([0.5, 1.0])
    with pytest.raises(ShapeError):
        R.estimate(np.zeros((2, 2)))


@pytest.mark.parametrize("eps,low,high", [(40.0, 0, 1), (74.0, 0, 3), (700.0, -1, 1)])
def test_large_epsilon_still_adds_noise(eps, low, high):
    """Pr[N != 0] = 2/(1 + e^eps_geo) ~ 1e-17 at eps 40: the audit sees it (rng.geometric(1 - a) never did)."""
    R = Geometric(eps, low, high)
    assert exact_audit(R) == pytest.approx(eps, rel=1e-12)
    assert np.all(np.isfinite(R.log_transition_matrix()))


def test_tilted_noise_records_its_likelihood_ratio():
    """Conditioned on moving (probability 2a/(1+a)), |N| - 1 is geometric with ratio a, even for a = e^-40."""
    from shuffledp.randomizers._sampling import TiltedGenerator

    rng = TiltedGenerator(7, 200_000, floor=0.25)
    N = discrete_laplace_noise(math.exp(-40.0), 200_000, rng)
    moved = N != 0
    # Under tilting every coin of probability e^-40 fires w.p. 1/4: |N| - 1 ~ Geometric(3/4) on the moved rows,
    # with a fair sign; the recorded weights undo the tilt exactly.
    mags = np.abs(N[moved]) - 1
    pmf = 0.75 * 0.25 ** np.arange(12)
    pmf[-1] += 1 - pmf.sum()
    assert stats.chisquare(np.bincount(np.minimum(mags, 11), minlength=12), pmf * mags.size).pvalue > 1e-3
    assert abs(np.mean(N[moved] > 0) - 0.5) < 4 * 0.5 / math.sqrt(moved.sum())
    weight = np.exp(rng.log_weight[moved] - np.log(2 * math.exp(-40.0) / (1 + math.exp(-40.0))))
    np.testing.assert_allclose(
        weight, (1 - math.exp(-40.0)) * math.exp(-40.0) ** mags / pmf[0] / 0.25**mags / 0.25, rtol=1e-9
    )
