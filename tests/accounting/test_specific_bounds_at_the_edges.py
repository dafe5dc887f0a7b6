"""A randomizer's own bound answers at the ends of the accepted range (n up to 2^53, eps0 up to 700), never
above the local eps0 and never above the generic bound; the exact audits refuse what they cannot enumerate."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from shuffledp import local_epsilon, shuffle_epsilon
from shuffledp.accounting._binomial import binomial_pmf, product_binomial_pmf
from shuffledp.errors import PrivacyParameterError, ShapeError, UnprovenBoundError
from shuffledp.params import BlanketDecomposition, VariationRatio
from shuffledp.randomizers import KRandomizedResponse, MinkowskiResponse, UnaryEncoding
from shuffledp.shuffle_audit import exact_shuffle_delta, exact_shuffle_epsilon, iid_shuffle_delta


@pytest.mark.parametrize("n", [2**52, 2**53 - 1, 2**53])
@pytest.mark.parametrize(
    "randomizer",
    [KRandomizedResponse(epsilon=0.5, k=10), KRandomizedResponse(epsilon=2.0, k=10), MinkowskiResponse(epsilon=2.0)],
    ids=["10rr-0.5", "10rr-2", "minkowski-2"],
)
def test_own_parameters_answer_up_to_two_to_the_53(n, randomizer):
    params = randomizer.amplification_parameters()
    value = shuffle_epsilon(n, 1e-6, params=params)
    assert 0.0 <= value <= shuffle_epsilon(n, 1e-6, eps0=params.eps0) <= params.eps0


def test_eps0_700_at_a_trillion_users_is_priced():
    family = lambda e: KRandomizedResponse(epsilon=e, k=10)  # noqa: E731
    assert shuffle_epsilon(10**12, 1e-6, params=family(700.0).amplification_parameters()) == 700.0
    assert 0.0 < local_epsilon(1.0, 10**12, 1e-6, family=family, max_epsilon=700.0) <= 700.0


@pytest.mark.parametrize("eps0", [40.0, 300.0, 700.0])
@pytest.mark.parametrize("n", [1, 100, 10**4, 10**6])
def test_an_upper_bound_is_never_above_the_local_eps0(eps0, n):
    assert shuffle_epsilon(n, 1e-6, eps0=eps0) <= eps0
    assert shuffle_epsilon(n, 1e-6, params=UnaryEncoding(epsilon=eps0, k=4).amplification_parameters()) <= eps0


@pytest.mark.parametrize("n", [2 * 10**4, 10**5, 10**6, 10**7, 10**8])
@pytest.mark.parametrize("eps0", [1.0, 2.0])
def test_binary_rr_own_parameters_are_never_above_the_generic_bound(n, eps0):
    own = KRandomizedResponse(epsilon=eps0, k=2).amplification_parameters()
    assert shuffle_epsilon(n, 1e-6, params=own) <= shuffle_epsilon(n, 1e-6, eps0=eps0)


@pytest.mark.parametrize(("trials", "prob"), [(50, 0.3), (10**12, 1e-10), (2**40, 1e-14), (10**6, 1e-5)])
def test_the_product_formula_matches_scipys_binomial_pmf(trials, prob):
    k = np.arange(0.0, 40.0)
    ours, theirs = product_binomial_pmf(k, trials, prob), stats.binom.pmf(k, trials, prob)
    shown = theirs > 1e-300
    assert shown.any()
    np.testing.assert_allclose(ours[shown], theirs[shown], rtol=1e-12)


def test_the_binomial_pmf_survives_where_boost_overflows():
    rho = 2.0 / (math.exp(700.0) + 1.0)
    with pytest.raises(OverflowError):
        stats.binom.pmf(0.0, 10**12, rho)
    pmf = binomial_pmf(np.array([-1.0, 0.0, 1.0, 2.0]), 10**12, rho)
    assert pmf[0] == 0.0 and pmf[1] == pytest.approx(1.0) and 0.0 < pmf[2] < 1e-280 and pmf[3] < pmf[2]


def test_the_enumeration_refuses_work_of_hours_and_bad_arguments():
    M = KRandomizedResponse(epsilon=1.0, k=10).transition_matrix()
    with pytest.raises(ShapeError, match="more than 5e"):
        exact_shuffle_delta(M, 8, 0.5)
    with pytest.raises(ShapeError, match="lump the outputs"):
        iid_shuffle_delta(M[0], M[1], M[2], 100, 0.5)
    with pytest.raises(PrivacyParameterError, match="n must be"):
        exact_shuffle_epsilon(M, 0, 1e-3)
    with pytest.raises(PrivacyParameterError, match=r"delta must be a number in \(0, 1\)"):
        exact_shuffle_epsilon(M, 2, 0.0)
    with pytest.raises(PrivacyParameterError, match="eps must be a number"):
        exact_shuffle_delta(M, 2, "0.5")


@pytest.mark.parametrize("field", [dict(beta="0.5"), dict(beta=True), dict(beta=0.3, common_ratio="2")])
def test_a_decomposition_refuses_numbers_given_as_text_or_bools(field):
    with pytest.raises(PrivacyParameterError, match="must be a number"):
        BlanketDecomposition(eps0=2.0, **field)


@pytest.mark.parametrize("eps0", [1e-6, 2e-6, 1e-5, 3e-5, 1e-4, 3e-4])
def test_the_generic_pair_is_accepted_down_to_the_smallest_eps0(eps0):
    """p = e^eps0 is stored one ulp up, so tanh(log(p)/2) exceeded beta = tanh(eps0/2) by ~1e-10 relative at
    eps0 = 1e-6 and the generic pair was refused as 'own parameters' (UnprovenBoundError) below eps0 = 3e-4."""
    eps = shuffle_epsilon(1000, 1e-6, eps0=eps0)
    assert 0.0 <= eps <= eps0
    generic = VariationRatio.from_ldp(eps0)
    assert shuffle_epsilon(1000, 1e-6, params=generic) == eps
    with pytest.raises(UnprovenBoundError):  # a randomizer's own smaller beta is still refused there
        shuffle_epsilon(1000, 1e-6, params=VariationRatio(p=generic.p, beta=generic.beta * 0.999, q0=generic.p,
                                                          q1=generic.p))  # fmt: skip
