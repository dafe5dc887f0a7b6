"""Clone bounds (FMT FOCS 2021, SODA 2023) and the ordering of every upper bound."""

import math

import numpy as np
import pytest
from scipy import stats

from shuffledp.accounting import clones as cl
from shuffledp.accounting import closed_form as cf
from shuffledp.accounting._binomial import binomial_window
from shuffledp.accounting.bounds import available_methods, shuffle_epsilon
from shuffledp.accounting.dominating_pair import DominatingPair
from shuffledp.accounting.params import VariationRatio
from shuffledp.accounting.variation_ratio import variation_ratio_epsilon, variation_ratio_epsilon_lower
from shuffledp.errors import PrivacyParameterError
from shuffledp.params import BlanketDecomposition


def brute_force_divergence(eps0: float, n: int, eps: float, clone_prob: float) -> float:
    """D_{e^eps}(P || Q) by enumerating every (C, u) of the clone pair."""
    alpha = math.exp(eps0) / (math.exp(eps0) + 1)
    total = 0.0
    for c in range(n):
        b = np.zeros(c + 3)
        b[1 : c + 2] = stats.binom.pmf(np.arange(c + 1), c, 0.5)  # b[u + 1] = Binom(c, 1/2)(u)
        u = np.arange(c + 2)
        p = alpha * b[u] + (1 - alpha) * b[u + 1]  # b(u - 1), b(u)
        q = (1 - alpha) * b[u] + alpha * b[u + 1]
        total += stats.binom.pmf(c, n - 1, clone_prob) * np.sum(np.maximum(p - math.exp(eps) * q, 0.0))
    return total


@pytest.mark.parametrize("stronger", [False, True])
@pytest.mark.parametrize(
    "n,eps0,eps", [(1, 1.0, 0.3), (2, 0.5, 0.0), (9, 2.0, 0.5), (40, 1.0, 0.2), (150, 3.0, 1.1), (200, 0.3, 0.05)]
)
def test_divergence_matches_brute_force(n, eps0, eps, stronger):
    exact = brute_force_divergence(eps0, n, eps, DominatingPair.clones(eps0, 2, stronger=stronger).rho)
    got = cl.clone_divergence(eps0, n, eps, stronger=stronger)
    assert exact <= got <= exact * (1 + 1e-8) + 1e-15


def test_single_user_is_randomized_response():
    """n = 1: no clones, the pair is binary randomized response with eps0."""
    eps0, delta = 1.5, 1e-3
    alpha = math.exp(eps0) / (math.exp(eps0) + 1)
    exact = math.log((alpha - delta) / (1 - alpha))
    for func in (cl.clone_epsilon, cl.stronger_clone_epsilon):
        got = func(eps0, 1, delta)
        assert exact <= got <= exact * (1 + 2e-7)


@pytest.mark.parametrize("eps0,n,delta", [(0.5, 10**4, 1e-6), (2.0, 10**6, 1e-9), (6.0, 3_000, 1e-5)])
def test_returned_epsilon_is_certified(eps0, n, delta):
    for stronger in (False, True):
        func = cl.stronger_clone_epsilon if stronger else cl.clone_epsilon
        eps = func(eps0, n, delta)
        assert cl.clone_divergence(eps0, n, eps, stronger=stronger) <= delta
        assert cl.clone_divergence(eps0, n, eps * (1 - 1e-6), stronger=stronger) > delta


@pytest.mark.parametrize("eps0", [0.1, 1.0, 3.0, 6.0])
@pytest.mark.parametrize("n", [50, 5_000, 200_000])
def test_stronger_clones_equal_the_generic_variation_ratio_bound(eps0, n):
    """For eps0-LDP parameters the variation-ratio pair is the stronger-clone pair."""
    delta = 1e-7
    vr = VariationRatio.from_ldp(eps0)
    upper, lower = variation_ratio_epsilon(vr, n, delta), variation_ratio_epsilon_lower(vr, n, delta)
    strong = cl.stronger_clone_epsilon(eps0, n, delta)
    assert lower <= strong <= upper * (1 + 1e-6)


N_GRID = [100, 1_000, 10_000, 100_000]
EPS0_GRID = [0.1, 0.5, 1.0, 2.0, 4.0, 6.0]


@pytest.mark.parametrize("eps0", EPS0_GRID)
def test_each_numerical_clone_bound_is_below_its_closed_form(eps0):
    for n in N_GRID + [10**6]:
        delta = 0.01 / n
        clones, strong = cl.clone_epsilon(eps0, n, delta), cl.stronger_clone_epsilon(eps0, n, delta)
        assert strong <= clones
        assert clones <= cf.fmt_epsilon(eps0, n, delta)  # inf outside its regime
        assert strong <= cf.pic_eq1_epsilon(eps0, n, delta)


def _mechanisms():
    """Non-generic parameters of concrete randomizers: Laplace-like and k-RR (their own
    `BlanketDecomposition`: beta below tanh(eps0/2), common ratio e^eps0 and 1), a Poisson randomizer (p = inf)."""
    out = []
    for eps in (0.5, 2.0, 5.0):
        e = math.exp(eps)
        out.append((f"laplace{eps}", BlanketDecomposition(eps0=eps, beta=1 - math.exp(-eps / 2))))
        out.append((f"krr8-{eps}", BlanketDecomposition(eps0=eps, beta=(e - 1) / (e + 7), common_ratio=1.0)))
    out.append(("poisson", VariationRatio(p=math.inf, beta=0.3, q0=3.0, q1=3.0)))
    return out


@pytest.mark.parametrize("eps0", EPS0_GRID)
def test_variation_ratio_upper_bound_is_the_tightest(eps0):
    """Acceptance ordering: the numerical variation-ratio upper bound is <= every other upper
    bound wherever that bound applies, up to the variation-ratio bound's own UB-LB gap."""
    others = {name: m for name, m in available_methods("upper").items() if name != "variation-ratio"}
    vr = VariationRatio.from_ldp(eps0)
    for n in N_GRID + [10**6]:
        delta = 0.01 / n
        upper, lower = variation_ratio_epsilon(vr, n, delta), variation_ratio_epsilon_lower(vr, n, delta)
        for name in others:
            other = shuffle_epsilon(n, delta, eps0=eps0, method=name)
            assert upper <= other + (upper - lower), (name, n, upper, other)


@pytest.mark.parametrize("label,params", _mechanisms(), ids=[m[0] for m in _mechanisms()])
def test_variation_ratio_is_tightest_for_concrete_mechanisms(label, params):
    """The randomizer-specific bound (method "variation-ratio" on the randomizer's parameters) is
    below every other bound that applies: those taking the parameters, and the generic ones at its
    eps0 -- never above the stronger-clone pair (the smaller of the two is kept), strictly below it for
    k-RR, whose common part the other users cover fully."""
    applicable = [
        name for name, m in available_methods("upper").items() if not m.generic_only and name != "variation-ratio"
    ]
    generic = [name for name, m in available_methods("upper").items() if m.generic_only]
    assert "variation-ratio-closed-form" in applicable and "stronger-clones" in generic
    for n in (1_000, 100_000):
        delta = 0.01 / n
        if isinstance(params, BlanketDecomposition):  # the three-class pair
            specific = shuffle_epsilon(n, delta, params=params)
            stronger = shuffle_epsilon(n, delta, eps0=params.eps0, method="stronger-clones")
            assert specific <= stronger, n
            if params.common_ratio == 1.0:
                assert specific < stronger, n
            for name in applicable:
                assert specific <= shuffle_epsilon(n, delta, params=params, method=name), (name, n)
            for name in generic:
                assert specific <= shuffle_epsilon(n, delta, eps0=params.eps0, method=name), (name, n)
            continue
        upper = variation_ratio_epsilon(params, n, delta)
        lower = variation_ratio_epsilon_lower(params, n, delta)
        for name in applicable:
            assert upper <= shuffle_epsilon(n, delta, params=params, method=name) + (upper - lower), (name, n)


def test_registration_and_bad_input():
    upper = available_methods("upper")
    assert upper["clones"].generic_only and upper["stronger-clones"].generic_only
    assert shuffle_epsilon(10**4, 1e-6, eps0=1.0, method="clones") == cl.clone_epsilon(1.0, 10**4, 1e-6)
    with pytest.raises(PrivacyParameterError):
        cl.clone_epsilon(0.0, 100, 1e-6)
    with pytest.raises(PrivacyParameterError):
        cl.stronger_clone_epsilon(1.0, 100, 1.5)
    with pytest.raises(PrivacyParameterError):
        cl.clone_epsilon(1.0, 0, 1e-6)
    with pytest.raises(PrivacyParameterError):
        cl.clone_epsilon(1.0, 100, 1e-6, rtol=0.5)
    with pytest.raises(PrivacyParameterError):
        cl.clone_divergence(1.0, 100, -0.1)


def test_binomial_window_holds_all_but_the_budget():
    for trials, prob, budget in [(10**6, 0.3, 1e-12), (5_000, 0.01, 1e-6), (10**8, 0.9, 1e-18)]:
        lo, hi = binomial_window(trials, prob, budget)
        outside = stats.binom.cdf(lo - 1, trials, prob) + stats.binom.sf(hi, trials, prob)
        assert outside <= budget
