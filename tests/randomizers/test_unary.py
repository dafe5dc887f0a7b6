"""SUE / OUE (Wang et al. 2017) and the RR-Shuffle local randomizer (metric paper §3.2)."""

import math

import numpy as np
import pytest

from shuffledp.audit import exact_audit
from shuffledp.errors import DomainError, PrivacyParameterError, ShapeError
from shuffledp.randomizers.categorical import binary_vectors, row_codes
from shuffledp.randomizers.unary import UnaryEncoding, UnaryRR, thermometer_encode

EPSILONS = [0.05, 0.7, 2.0, 6.0]
UE_CASES = [(eps, k, v) for eps in EPSILONS for k in (2, 3, 6) for v in ("symmetric", "optimized")]
RR_CASES = [(eps, k) for eps in EPSILONS for k in (1, 2, 5)]


def _paper_pq(eps, variant):
    """Wang et al. 2017, §4.3."""
    if variant == "symmetric":
        h = math.exp(eps / 2)
        return h / (h + 1), 1 / (h + 1)
    return 0.5, 1 / (math.exp(eps) + 1)


@pytest.mark.parametrize("eps,k,variant", UE_CASES)
def test_unary_encoding_exact_audit_and_beta(eps, k, variant, max_tv, common_ratio):
    R = UnaryEncoding(eps, k, variant)
    p, q = _paper_pq(eps, variant)
    assert (R.p, R.q) == pytest.approx((p, q), rel=1e-12)
    P = R.transition_matrix()
    assert P.shape == (k, 2**k)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-13)
    # Direct product formula for one entry per row.
    B = binary_vectors(k)
    for x in range(k):
        rates = np.where(np.arange(k) == x, p, q)
        np.testing.assert_allclose(P[x], np.prod(np.where(B == 1, rates, 1 - rates), axis=1), rtol=1e-12)
    assert exact_audit(R) == pytest.approx(eps, abs=1e-12)
    params = R.amplification_parameters()
    assert params.beta == pytest.approx(max_tv(P), abs=1e-13)
    assert params.beta == pytest.approx(p - q, rel=1e-12)
    assert math.exp(params.eps0) == pytest.approx(math.exp(eps), rel=1e-12)
    # Outputs with both bits x0, x1 set are common to the two inputs; for k >= 3 a third input
    # gives them e^-eps times the victim's mass (it clears one of the bits): ratio e^eps.
    assert params.common_ratio == pytest.approx(common_ratio(P, eps), rel=1e-8)
    assert params.common_ratio == pytest.approx(math.exp(eps) if k >= 3 else 1.0, rel=1e-8)


@pytest.mark.parametrize("eps,k", RR_CASES)
def test_unary_rr_exact_audit_and_beta(eps, k, max_tv, common_ratio):
    R = UnaryRR(eps, k)
    P = R.transition_matrix()
    assert P.shape == (k + 1, 2**k)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-13)
    assert exact_audit(R) == pytest.approx(eps, abs=1e-12)
    # Metric privacy: adjacent values (distance 1) are eps/k apart.
    ratios = np.abs(R.log_transition_matrix()[1:] - R.log_transition_matrix()[:-1]).max()
    assert ratios == pytest.approx(eps / k, abs=1e-12) and R.epsilon_per_unit == pytest.approx(eps / k)
    params = R.amplification_parameters()
    assert params.beta == pytest.approx(max_tv(P), abs=1e-13)
    assert math.exp(params.eps0) == pytest.approx(math.exp(eps), rel=1e-12)
    # k = 1 is binary RR (no common part); for k >= 2 the common ratio is the LDP bound e^eps
    assert params.common_ratio == pytest.approx(common_ratio(P, eps), rel=1e-8)
    assert params.common_ratio == pytest.approx(math.exp(eps) if k >= 2 else 1.0, rel=1e-8)


def test_unary_rr_matches_paper_rr_parameter():
    """RR(b, p): uniform bit with probability p, else truthful -> flip probability p/2."""
    p, k = 0.3, 4
    R = UnaryRR.from_rr_probability(p, k)
    assert R.flip == pytest.approx(p / 2, rel=1e-12) and R.rr_probability == pytest.approx(p, rel=1e-12)
    assert R.epsilon_per_unit == pytest.approx(math.log((1 - p / 2) / (p / 2)), rel=1e-12)


def test_thermometer_encoding_is_algorithm_1():
    U = thermometer_encode(np.array([0, 2, 5]), 5)
    np.testing.assert_array_equal(U, [[0, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 1, 1]])


@pytest.mark.parametrize("eps,k,variant", [(1.0, 4, "symmetric"), (3.0, 5, "optimized"), (0.2, 3, "optimized")])
def test_unary_encoding_sampling_matches_transition_matrix(eps, k, variant, chi2_pvalue):
    R = UnaryEncoding(eps, k, variant)
    rng = np.random.default_rng(401)
    for x in (0, k - 1):
        Y = R.randomize(np.full(100_000, x), rng)
        assert Y.dtype == np.int8 and Y.shape == (100_000, k)
        assert chi2_pvalue(row_codes(Y), R.transition_matrix()[x]) > 1e-3


@pytest.mark.parametrize("eps,k", [(1.0, 4), (4.0, 6)])
def test_unary_rr_sampling_matches_transition_matrix(eps, k, chi2_pvalue):
    R = UnaryRR(eps, k)
    rng = np.random.default_rng(402)
    for x in (0, k // 2, k):
        assert chi2_pvalue(row_codes(R.randomize(np.full(100_000, x), rng)), R.transition_matrix()[x]) > 1e-3


@pytest.mark.parametrize("eps,variant", [(0.5, "symmetric"), (2.0, "optimized")])
def test_unary_encoding_estimate_unbiased(eps, variant):
    k = 5
    R = UnaryEncoding(eps, k, variant)
    est = R.estimate(R.randomize(np.full(200_000, 2), np.random.default_rng(403)))
    se = est.std(axis=0, ddof=1) / math.sqrt(len(est))
    assert np.all(np.abs(est.mean(axis=0) - np.eye(k)[2]) <= 4 * se)


@pytest.mark.parametrize("x", [0, 3, 6])
def test_unary_rr_estimate_unbiased(x):
    R = UnaryRR(2.0, 6)
    err = R.estimate(R.randomize(np.full(200_000, x), np.random.default_rng(404))) - x
    assert abs(err.mean()) <= 4 * err.std(ddof=1) / math.sqrt(len(err))
    # Variance of the per-report estimate: k f (1 - f) / (1 - 2f)^2.
    f = R.flip
    assert err.var(ddof=1) == pytest.approx(6 * f * (1 - f) / (1 - 2 * f) ** 2, rel=0.02)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf, "x"])
def test_bad_epsilon_rejected(bad):
    with pytest.raises(PrivacyParameterError, match="epsilon"):
        UnaryEncoding(bad, 4)
    with pytest.raises(PrivacyParameterError, match="epsilon"):
        UnaryRR(bad, 4)


def test_bad_parameters_rejected():
    with pytest.raises(PrivacyParameterError, match="variant"):
        UnaryEncoding(1.0, 4, "rappor")
    with pytest.raises(PrivacyParameterError, match="k"):
        UnaryEncoding(1.0, 1)
    with pytest.raises(PrivacyParameterError, match="k"):
        UnaryRR(1.0, 0)
    for p in (0.0, 1.0, 1.2, math.nan):
        with pytest.raises(PrivacyParameterError, match="p"):
            UnaryRR.from_rr_probability(p, 3)
    with pytest.raises(
        PrivacyParameterError, match=r"p \(RR randomization probability\) must be at least .* got 1e-300"
    ):
        UnaryRR.from_rr_probability(1e-300, 3)
    assert UnaryRR.from_rr_probability(2.0 / (1.0 + math.exp(700.0 / 3)), 3).epsilon == pytest.approx(700.0)


def test_bad_inputs():
    R = UnaryEncoding(1.0, 4)
    with pytest.raises(DomainError, match=r"X\[1\]"):
        R.randomize([0, 4])
    with pytest.raises(ShapeError):
        R.randomize(np.zeros((3, 4), dtype=int))
    with pytest.raises(ShapeError):
        R.estimate(np.zeros((3, 5)))
    with pytest.raises(DomainError, match=r"Y\[2\]"):
        R.estimate([[0, 1, 0, 0], [1, 1, 1, 1], [0, 2, 0, 0]])
    with pytest.raises(DomainError, match=r"X\[0\]"):
        UnaryRR(1.0, 3).randomize([-1])
    with pytest.raises(ShapeError, match="k <= 16"):
        UnaryEncoding(1.0, 17).transition_matrix()
    with pytest.raises(ShapeError, match="k <= 16"):
        UnaryRR(1.0, 20).transition_matrix()


@pytest.mark.parametrize("eps", [80.0, 700.0])
def test_log_transition_matrix_has_no_underflow(eps):
    """Cells like q^4 underflow in the matrix at eps = 700; the log matrix keeps them (and the audit exact)."""
    for R in (UnaryEncoding(eps, 5), UnaryEncoding(eps, 5, "optimized"), UnaryRR(eps, 2)):
        L = R.log_transition_matrix()
        assert np.all(np.isfinite(L))
        np.testing.assert_allclose(np.logaddexp.reduce(L, axis=1), 0.0, atol=1e-12)
        assert exact_audit(R, sample=False) == pytest.approx(eps, rel=1e-12)
