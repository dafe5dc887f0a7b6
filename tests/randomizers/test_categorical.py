"""k-RR, binary RR, PrivSet subset exponential, Poisson randomizer (segmented paper Eq. 2, Lemma 3)."""

import math

import numpy as np
import pytest
from scipy import stats

from shuffledp.audit import exact_audit
from shuffledp.errors import DomainError, PrivacyParameterError, ShapeError
from shuffledp.randomizers.categorical import (
    BinaryRandomizedResponse,
    KRandomizedResponse,
    PoissonRandomizer,
    SubsetExponential,
    binary_vectors,
    optimal_output_size,
    row_codes,
    subset_rows,
)

EPSILONS = [0.05, 0.7, 2.0, 6.0]
KRR_CASES = [(eps, k) for eps in EPSILONS for k in (2, 3, 10)]
SUBSET_CASES = [
    (eps, k, s, m) for eps in EPSILONS for k, s, m in [(5, 1, None), (6, 2, None), (7, 3, 2), (8, 2, 6), (8, 4, 1)]
]
BAD_EPSILONS = [0.0, -1.0, math.nan, math.inf, "x", None]


def _column_of(outputs: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Index of each sampled 0/1 row among the rows of ``outputs``."""
    codes = row_codes(outputs)
    order = np.argsort(codes)
    idx = np.searchsorted(codes[order], row_codes(Y))
    assert np.all(codes[order][np.minimum(idx, len(codes) - 1)] == row_codes(Y)), "sampled an output outside the table"
    return order[idx]


# ----------------------------------------------------------------------------- helpers


def test_enumeration_helpers():
    B = binary_vectors(5)
    assert B.shape == (32, 5) and len({tuple(r) for r in B}) == 32
    np.testing.assert_array_equal(row_codes(B), np.arange(32))
    S = subset_rows(6, 2)
    assert S.shape == (math.comb(6, 2), 6) and np.all(S.sum(axis=1) == 2) and len({tuple(r) for r in S}) == 15


# ----------------------------------------------------------------------------- exact audit


@pytest.mark.parametrize("eps,k", KRR_CASES)
def test_krr_exact_audit_and_beta(eps, k, max_tv, common_ratio):
    R = KRandomizedResponse(eps, k)
    P = R.transition_matrix()
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-14)
    assert exact_audit(R, sample=False) == pytest.approx(eps, abs=1e-12)
    params = R.amplification_parameters()
    assert params.beta == pytest.approx(max_tv(P), abs=1e-14)
    assert params.beta == pytest.approx((math.exp(eps) - 1) / (math.exp(eps) + k - 1), rel=1e-12)
    assert math.exp(params.eps0) == pytest.approx(math.exp(exact_audit(R, sample=False)), rel=1e-12)
    # the common part (the other k - 2 categories) is in every row at the same mass: the blanket covers it
    assert common_ratio(P, eps) == 1.0
    assert params.common_ratio == 1.0


@pytest.mark.parametrize("eps", EPSILONS)
def test_binary_rr_is_krr_with_two_categories(eps, max_tv):
    R = BinaryRandomizedResponse(eps)
    assert exact_audit(R, sample=False) == pytest.approx(eps, abs=1e-12)
    np.testing.assert_allclose(R.transition_matrix(), KRandomizedResponse(eps, 2).transition_matrix(), rtol=1e-15)
    assert R.amplification_parameters().beta == pytest.approx(math.tanh(eps / 2), rel=1e-12)
    assert R.amplification_parameters().beta == pytest.approx(max_tv(R.transition_matrix()), abs=1e-14)


@pytest.mark.parametrize("eps,k,s,m", SUBSET_CASES)
def test_subset_exponential_exact_audit_and_beta(eps, k, s, m, max_tv, common_ratio):
    R = SubsetExponential(eps, k, s, m)
    P = R.transition_matrix()
    assert P.shape == (math.comb(k, s), math.comb(k, R.size_out))
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-13)
    assert exact_audit(R, sample=False) == pytest.approx(eps, abs=1e-12)
    params = R.amplification_parameters()
    assert params.beta == pytest.approx(max_tv(P), abs=1e-13)
    assert math.exp(params.eps0) == pytest.approx(math.exp(eps), rel=1e-12)
    assert params.common_ratio == pytest.approx(common_ratio(P, eps), rel=1e-8)


@pytest.mark.parametrize("eps,k,s,m", SUBSET_CASES)
def test_subset_exponential_matches_definition(eps, k, s, m):
    """Pr[z|x] = e^eps/Omega if z meets x else 1/Omega; t, f are the item marginals."""
    R = SubsetExponential(eps, k, s, m)
    X, Z = R.transition_inputs(), R.transition_outputs()
    m = R.size_out
    omega = math.comb(k - s, m) + (math.comb(k, m) - math.comb(k - s, m)) * math.exp(eps)
    meets = (X.astype(int) @ Z.T.astype(int)) > 0
    np.testing.assert_allclose(R.transition_matrix(), np.where(meets, math.exp(eps), 1.0) / omega, rtol=1e-12)
    marginals = R.transition_matrix() @ Z  # Pr[item j in z | x]
    np.testing.assert_allclose(marginals[X == 1], R.t, rtol=1e-12)
    np.testing.assert_allclose(marginals[X == 0], R.f, rtol=1e-12)


@pytest.mark.parametrize("eps,k", [(1.0, 64), (3.0, 64), (0.5, 100), (2.0, 32)])
def test_subset_exponential_single_item_size_matches_k_subset_optimum(eps, k):
    """For s = 1 PrivSet is the k-subset mechanism, whose optimal size is about k/(e^eps + 1)."""
    assert abs(optimal_output_size(eps, k, 1) - k / (math.exp(eps) + 1)) <= 1


def test_subset_exponential_default_size_minimises_monte_carlo_error():
    """The chosen m has the smallest empirical total squared error among all m."""
    eps, k, s, n = 1.0, 8, 2, 40_000
    rng = np.random.default_rng(11)
    X = SubsetExponential(eps, k, s).domain.sample_uniform(n, rng)
    errors = {}
    for m in range(1, k - s + 1):
        R = SubsetExponential(eps, k, s, m)
        errors[m] = float(((R.estimate(R.randomize(X, rng)) - X) ** 2).sum(axis=1).mean())
    assert optimal_output_size(eps, k, s) == min(errors, key=errors.get)
    assert SubsetExponential(eps, k, s).size_out == optimal_output_size(eps, k, s)


@pytest.mark.parametrize("k,s", [(5, 1), (6, 2), (4, 3)])
@pytest.mark.parametrize("lam", [0.05, 0.5, 1.0])
def test_poisson_transition_matrix_and_parameters(k, s, lam, max_tv):
    R = PoissonRandomizer(lam, k, s)
    P = R.transition_matrix()
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-14)
    assert R.epsilon == math.inf
    assert exact_audit(R) == math.inf  # an item is only ever reported by its holders
    # Number of reported items ~ Binomial(s, lam), all within the input set.
    sizes = R.transition_outputs().sum(axis=1)
    for row, x in zip(P, R.transition_inputs()):
        outside = (R.transition_outputs() & (1 - x)).any(axis=1)
        assert row[outside].sum() == 0
        law = np.bincount(sizes, weights=row, minlength=k + 1)[: s + 1]
        np.testing.assert_allclose(law, stats.binom.pmf(np.arange(s + 1), s, lam), atol=1e-14)
    vr = R.item_amplification_parameters()
    assert vr.p == math.inf and vr.beta == lam
    # Lemma 3 is per item: beta is the TV distance of the one-item randomizer (s = 1).
    assert vr.beta == pytest.approx(max_tv(PoissonRandomizer(lam, k, 1).transition_matrix()), abs=1e-14)
    if s == 1:
        assert R.amplification_parameters() == vr
    else:  # Theorem 3: a user's s items need group composition, which no (p, beta, q) expresses
        with pytest.raises(PrivacyParameterError, match=rf"size_in={s}.*group_composition"):
            R.amplification_parameters()


def test_poisson_tiny_rate_is_sampled_exactly():
    """lam = 1e-20 is below the 2^-53 resolution of rng.random(); the sampler still reports items."""
    from shuffledp.audit import sampler_audit

    result = sampler_audit(PoissonRandomizer(1e-20, 4, 2), n_samples=20_000)
    assert result.passed, result.explain()

    class UniformThreshold(PoissonRandomizer):  # the former sampler: never keeps an item
        def _randomize(self, X, rng):
            return (X.astype(bool) & (rng.random(X.shape) < self.lam)).astype(np.int8)

    assert not sampler_audit(UniformThreshold(1e-20, 4, 2), n_samples=20_000).passed


@pytest.mark.parametrize("k,lam", [(5, 0.5), (10, 0.3), (4, 0.1)])
def test_poisson_q_is_ratio_to_uniform_blanket(k, lam):
    """q of Lemma 3 is max_t Pr[R(x) = t] / Pr[blanket = t] = k * lam (reported >= 1, conservative)."""
    R = PoissonRandomizer(lam, k, 1)
    P = R.transition_matrix()
    singletons = R.transition_outputs().sum(axis=1) == 1
    ratio = P[:, singletons].max() / (1.0 / k)
    assert ratio == pytest.approx(k * lam, rel=1e-12)
    assert R.amplification_parameters().q == pytest.approx(max(1.0, ratio), rel=1e-12)


# ----------------------------------------------------------------------------- sampling


@pytest.mark.parametrize("eps,k", [(0.5, 4), (3.0, 6), (1.0, 2)])
def test_krr_sampling_matches_transition_matrix(eps, k, chi2_pvalue):
    R = KRandomizedResponse(eps, k)
    rng = np.random.default_rng(101)
    for x in range(k):
        Y = R.randomize(np.full(100_000, x), rng)
        assert chi2_pvalue(Y, R.transition_matrix()[x]) > 1e-3


def test_binary_rr_sampling_matches_transition_matrix(chi2_pvalue):
    R = BinaryRandomizedResponse(0.8)
    rng = np.random.default_rng(102)
    for x in (0, 1):
        assert chi2_pvalue(R.randomize(np.full(100_000, x), rng), R.transition_matrix()[x]) > 1e-3


@pytest.mark.parametrize("eps,k,s,m", [(1.0, 6, 2, None), (2.0, 7, 3, 2), (0.3, 6, 1, 4)])
def test_subset_exponential_sampling_matches_transition_matrix(eps, k, s, m, chi2_pvalue):
    R = SubsetExponential(eps, k, s, m)
    rng = np.random.default_rng(103)
    for i in (0, len(R.transition_inputs()) // 2, len(R.transition_inputs()) - 1):
        x = R.transition_inputs()[i]
        Y = R.randomize(np.tile(x, (100_000, 1)), rng)
        assert np.all(Y.sum(axis=1) == R.size_out)
        assert chi2_pvalue(_column_of(R.transition_outputs(), Y), R.transition_matrix()[i]) > 1e-3


@pytest.mark.parametrize("lam,k,s", [(0.3, 5, 1), (0.6, 6, 3)])
def test_poisson_sampling_matches_transition_matrix(lam, k, s, chi2_pvalue):
    R = PoissonRandomizer(lam, k, s)
    rng = np.random.default_rng(104)
    for i in (0, len(R.transition_inputs()) - 1):
        Y = R.randomize(np.tile(R.transition_inputs()[i], (100_000, 1)), rng)
        assert chi2_pvalue(row_codes(Y), R.transition_matrix()[i]) > 1e-3


def test_sampling_is_reproducible_with_seed():
    R = SubsetExponential(1.0, 8, 2)
    X = R.domain.sample_uniform(1000, np.random.default_rng(0))
    np.testing.assert_array_equal(R.randomize(X, np.random.default_rng(5)), R.randomize(X, np.random.default_rng(5)))


# ----------------------------------------------------------------------------- estimates


def _assert_unbiased(estimates: np.ndarray, truth: np.ndarray) -> None:
    """Mean of the estimates within 4 standard errors of the truth, coordinate by coordinate."""
    se = estimates.std(axis=0, ddof=1) / math.sqrt(len(estimates))
    assert np.all(np.abs(estimates.mean(axis=0) - truth) <= 4 * se + 1e-12), (estimates.mean(axis=0), truth, se)


@pytest.mark.parametrize("eps,k", [(0.5, 3), (2.0, 8)])
def test_krr_estimate_unbiased(eps, k):
    R = KRandomizedResponse(eps, k)
    x = k - 1
    est = R.estimate(R.randomize(np.full(200_000, x), np.random.default_rng(201)))
    assert est.shape == (200_000, k)
    _assert_unbiased(est, np.eye(k)[x])


def test_binary_rr_estimate_unbiased():
    R = BinaryRandomizedResponse(1.0)
    X = np.random.default_rng(0).integers(0, 2, 200_000)
    est = R.estimate(R.randomize(X, np.random.default_rng(202)))
    assert est.shape == (200_000,)
    _assert_unbiased(est - X, np.zeros(1))


@pytest.mark.parametrize("eps,k,s,m", [(1.0, 8, 2, None), (3.0, 6, 3, 1)])
def test_subset_exponential_estimate_unbiased(eps, k, s, m):
    R = SubsetExponential(eps, k, s, m)
    x = R.transition_inputs()[3]
    est = R.estimate(R.randomize(np.tile(x, (200_000, 1)), np.random.default_rng(203)))
    _assert_unbiased(est, x)


def test_poisson_estimate_unbiased():
    R = PoissonRandomizer(0.2, 6, 2)
    x = R.transition_inputs()[4]
    _assert_unbiased(R.estimate(R.randomize(np.tile(x, (200_000, 1)), np.random.default_rng(204))), x)


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("bad", BAD_EPSILONS)
def test_bad_epsilon_rejected(bad):
    for make in (
        lambda: KRandomizedResponse(bad, 3),
        lambda: BinaryRandomizedResponse(bad),
        lambda: SubsetExponential(bad, 5, 2),
    ):
        with pytest.raises(PrivacyParameterError, match="epsilon"):
            make()


@pytest.mark.parametrize("lam", [0.0, -0.1, 1.5, math.nan, math.inf, "a"])
def test_bad_lam_rejected(lam):
    with pytest.raises(PrivacyParameterError, match="lam"):
        PoissonRandomizer(lam, 5)


@pytest.mark.parametrize(
    "make",
    [
        lambda: KRandomizedResponse(1.0, 1),
        lambda: KRandomizedResponse(1.0, 2.5),
        lambda: SubsetExponential(1.0, 5, 5),
        lambda: SubsetExponential(1.0, 5, 0),
        lambda: SubsetExponential(1.0, 6, 2, 5),
        lambda: SubsetExponential(1.0, 6, 2, 0),
        lambda: PoissonRandomizer(0.5, 4, 5),
    ],
)
def test_bad_sizes_rejected(make):
    with pytest.raises(PrivacyParameterError):
        make()


def test_inputs_outside_domain_name_the_row():
    with pytest.raises(DomainError, match=r"X\[2\]"):
        KRandomizedResponse(1.0, 3).randomize([0, 2, 3, 1])
    with pytest.raises(DomainError, match=r"X\[1\]"):
        BinaryRandomizedResponse(1.0).randomize([1, -1])
    with pytest.raises(DomainError, match=r"X\[1\]"):
        SubsetExponential(1.0, 4, 2).randomize([[1, 1, 0, 0], [1, 1, 1, 0]])
    with pytest.raises(DomainError, match=r"X\[0\]"):
        PoissonRandomizer(0.5, 4, 1).randomize([[0, 2, 0, 0]])
    with pytest.raises(DomainError, match=r"Y\[1\]"):
        KRandomizedResponse(1.0, 3).estimate([0, 7])
    with pytest.raises(DomainError, match=r"Y\[0\]"):
        SubsetExponential(1.0, 5, 2, 2).estimate([[1, 0, 0, 0, 0]])
    with pytest.raises(DomainError, match=r"Y\[1\]"):
        PoissonRandomizer(0.5, 3).estimate([[0, 0, 1], [0, 3, 0]])


def test_wrong_shapes_rejected():
    with pytest.raises(ShapeError):
        KRandomizedResponse(1.0, 3).randomize(np.zeros((4, 2), dtype=int))
    with pytest.raises(ShapeError):
        KRandomizedResponse(1.0, 3).randomize([0.5, 1.0])
    with pytest.raises(ShapeError):
        SubsetExponential(1.0, 5, 2).randomize(np.zeros((3, 4)))
    with pytest.raises(ShapeError):
        PoissonRandomizer(0.5, 4).estimate(np.zeros(4))
    with pytest.raises(ShapeError, match="k <= 16"):
        PoissonRandomizer(0.5, 20).transition_matrix()
