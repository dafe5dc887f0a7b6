"""Numerical variation-ratio bounds against brute-force enumeration of the dominating pair.

The brute force builds P and Q straight from Theorem 1 of the segmented paper
(C ~ Binom(n-1, 2 beta p/((p-1) q)), A ~ Binom(C, 1/2), D1 ~ Bernoulli(beta p/(p-1)),
D2 ~ Bernoulli(1 - D1, beta/(p-1-beta p))) by summing over every (C, A, D1, D2).
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

from shuffledp.accounting import VariationRatio, available_methods, shuffle_epsilon, shuffle_epsilon_lower
from shuffledp.accounting import _binomial as binomial
from shuffledp.accounting import dominating_pair as dp
from shuffledp.accounting import variation_ratio as vr
from shuffledp.accounting._rounding import rel_slack
from shuffledp.accounting.blanket import blanket_epsilon
from shuffledp.accounting.dominating_pair import DominatingPair
from shuffledp.accounting.variation_ratio import (
    hockey_stick_divergence,
    variation_ratio_epsilon,
    variation_ratio_epsilon_lower,
)
from shuffledp.errors import PrivacyParameterError, UnprovenBoundError, UnsupportedEventError
from shuffledp.params import BlanketDecomposition


def _victim(p: float, beta: float) -> list[tuple[int, int, float]]:
    """(D1, D2, probability) of Theorem 1, or its p = infinity limit (Lemma 3)."""
    if math.isinf(p):
        return [(1, 0, beta), (0, 0, 1.0 - beta)]
    pr_d1 = beta * p / (p - 1.0)
    pr_d2 = beta / (p - 1.0 - beta * p) if pr_d1 < 1.0 else 0.0
    # (float rounding can push pr_d2 an ulp above 1 at beta = (p-1)/(p+1))
    return [(1, 0, pr_d1), (0, 1, (1.0 - pr_d1) * pr_d2), (0, 0, max(0.0, (1.0 - pr_d1) * (1.0 - pr_d2)))]


def _blanket_count_pmf(trials: int, ratio: float, gamma: float) -> np.ndarray:
    """pmf of C: N ~ Binom(trials, gamma) blankets, each on {o0, o1} with prob `ratio` (Theorem 2)."""
    pmf = np.zeros(trials + 1)
    for count in range(trials + 1):
        pmf[: count + 1] += stats.binom.pmf(count, trials, gamma) * stats.binom.pmf(np.arange(count + 1), count, ratio)
    return pmf


def brute_force_pair(params: VariationRatio, n: int, gamma: float = 1.0, beta: float | None = None):
    """Arrays P[x, y], Q[x, y] of the dominating pair by full enumeration."""
    p, q = params.p, params.q
    beta = params.beta if beta is None else beta
    ratio = 2.0 * beta / q if math.isinf(p) else 2.0 * beta * p / ((p - 1.0) * q)
    pmf_c = _blanket_count_pmf(n - 1, ratio, gamma) if gamma < 1.0 else stats.binom.pmf(np.arange(n), n - 1, ratio)
    P, Q = np.zeros((n + 1, n + 1)), np.zeros((n + 1, n + 1))
    for c in range(n):
        a = np.arange(c + 1)
        mass = pmf_c[c] * stats.binom.pmf(a, c, 0.5)
        for d1, d2, w in _victim(p, beta):
            np.add.at(P, (a + d1, c - a + d2), w * mass)
            np.add.at(Q, (a + d2, c - a + d1), w * mass)
    return P, Q


def brute_divergence(P: np.ndarray, Q: np.ndarray, eps: float) -> float:
    """max(D_{e^eps}(P||Q), D_{e^eps}(Q||P))."""
    e = math.exp(eps)
    return max(np.maximum(P - e * Q, 0.0).sum(), np.maximum(Q - e * P, 0.0).sum())


def brute_epsilon(P: np.ndarray, Q: np.ndarray, delta: float) -> float:
    if brute_divergence(P, Q, 0.0) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while brute_divergence(P, Q, hi) > delta:
        lo, hi = hi, 2.0 * hi
        if hi > 600:
            return math.inf
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if brute_divergence(P, Q, mid) > delta else (lo, mid)
    return hi


CASES = [
    pytest.param(VariationRatio.from_ldp(0.5), 1.0, id="ldp-0.5"),
    pytest.param(VariationRatio.from_ldp(2.0), 1.0, id="ldp-2"),
    pytest.param(VariationRatio.from_ldp(5.0), 1.0, id="ldp-5"),
    pytest.param(VariationRatio.from_pq(4.0, 0.3, 6.0), 1.0, id="p4-b0.3-q6"),
    pytest.param(VariationRatio.from_pq(math.inf, 0.3, 3.0), 1.0, id="poisson-b0.3-q3"),
    pytest.param(VariationRatio.from_pq(math.inf, 0.8, 2.0), 0.35, id="poisson-random-count"),
    pytest.param(VariationRatio.from_pq(3.0, 0.25, 3.0), 0.6, id="random-count-gamma0.6"),
]


@pytest.mark.parametrize("params, gamma", CASES)
@pytest.mark.parametrize("n", [1, 2, 17, 200])
def test_matches_brute_force(params, gamma, n):
    P, Q = brute_force_pair(params, n, gamma)
    for eps in (0.0, 0.05, 0.3, 1.0, 2.5):
        exact = brute_divergence(P, Q, eps)
        lower, upper = hockey_stick_divergence(params, n, eps, gamma=gamma)
        assert lower <= exact * (1 + 1e-12) + 1e-300 and upper >= exact * (1 - 1e-12)
        if exact > 1e-12:
            assert upper - lower <= 1e-9 * exact
    for delta in (1e-2, 1e-4, 1e-7):
        exact = brute_epsilon(P, Q, delta)
        ub = variation_ratio_epsilon(params, n, delta, gamma=gamma, rtol=1e-10)
        lb = variation_ratio_epsilon_lower(params, n, delta, gamma=gamma, rtol=1e-10)
        if math.isinf(exact):
            assert ub == math.inf and lb == math.inf
            continue
        assert lb <= exact * (1 + 1e-12) and ub >= exact * (1 - 1e-12)
        assert ub - lb <= 1e-9 * max(exact, 1e-300)


def test_generic_single_user_closed_form():
    # n = 1: P = (D1, D2), Q swapped, so D = max(0, w_same - e^eps w_other).
    eps0, delta = 1.3, 1e-3
    p = math.exp(eps0)
    w_other = math.tanh(eps0 / 2) / (p - 1)
    exact = math.log(p - delta / w_other)
    ub = variation_ratio_epsilon(VariationRatio.from_ldp(eps0), 1, delta, rtol=1e-10)
    assert exact <= ub <= exact * (1 + 2e-10)


def test_lower_bound_uses_attainable_beta_when_q_is_small():
    # q < 1 + beta: no randomizer has total variation beta; the lower bound uses beta' = q - 1.
    params, n, delta = VariationRatio.from_pq(9.0, 0.7, 1.6), 60, 1e-4
    P, Q = brute_force_pair(params, n, beta=0.6)
    exact = brute_epsilon(P, Q, delta)
    lb = variation_ratio_epsilon_lower(params, n, delta, rtol=1e-10)
    assert exact * (1 - 1e-9) <= lb <= exact
    assert variation_ratio_epsilon(params, n, delta) > 1.01 * lb


def test_poisson_limit_is_continuous():
    # Lemma 3's p = infinity pair is the limit of Theorem 1's as p grows.
    n, delta = 5000, 1e-6
    at_inf = variation_ratio_epsilon(VariationRatio.from_pq(math.inf, 0.4, 8.0), n, delta)
    near = variation_ratio_epsilon(VariationRatio.from_pq(1e9, 0.4, 8.0), n, delta)
    assert near == pytest.approx(at_inf, rel=1e-6)


def test_poisson_without_cover_is_infinite():
    # p = infinity: Q = 0 where everything sits on the victim's symbol; mass beta (rho/2)^(n-1).
    params = VariationRatio.from_pq(math.inf, 0.5, 1.5)  # rho = 2/3, attainable (q >= 1 + beta)
    n = 10
    limit = 0.5 * (1 / 3) ** (n - 1)
    P, Q = brute_force_pair(params, n)
    assert brute_divergence(P, Q, 60.0) == pytest.approx(limit, rel=1e-9)
    assert variation_ratio_epsilon(params, n, 0.5 * limit) == math.inf
    assert variation_ratio_epsilon_lower(params, n, 0.5 * limit) == math.inf
    assert math.isfinite(variation_ratio_epsilon(params, n, 2.0 * limit))


def test_truncated_sum_agrees_with_full_sum(monkeypatch):
    params, n = VariationRatio.from_ldp(1.0), 300_000
    eps = variation_ratio_epsilon(params, n, 1e-8)
    pair = DominatingPair.from_params(params, n)
    truncated = dp.PairDivergence(pair, 1e-18)
    monkeypatch.setattr(dp, "_FULL_RANGE", 10**9)
    monkeypatch.setattr(dp, "MAX_BLOCKS", 10**9)  # every total on its own: exact
    full = dp.PairDivergence(pair, 1e-18)
    assert full.exact
    assert truncated._upper.clones.size < full._upper.clones.size and truncated.tail > 0 == full.tail
    (t_lo, t_hi), (f_lo, f_hi) = truncated(eps), full(eps)
    assert t_lo <= f_hi and f_lo <= t_hi
    assert t_hi == pytest.approx(f_hi, rel=1e-9) and f_hi == pytest.approx(1e-8, rel=1e-5)


def _exact_half_tail(s: int, k: int) -> float:
    """P[Binom(s, 1/2) >= k] in exact integer arithmetic."""
    total, term = 0, math.comb(s, k)
    for x in range(k, s + 1):
        total += term
        term = term * (s - x) // (x + 1)
    return float(Fraction(total, 2**s))


@pytest.mark.parametrize("s, k", [(150, 90), (20_000, 10_150), (100_000, 50_700)])
def test_special_functions_within_the_slack(s, k):
    # The rigour of the bounds rests on betainc / binom.pmf being this accurate.
    allowed = rel_slack(s) / 50
    assert special.betainc(k, s - k + 1, 0.5) == pytest.approx(_exact_half_tail(s, k), rel=allowed)
    assert stats.binom.pmf(k, s, 0.5) == pytest.approx(float(Fraction(math.comb(s, k), 2**s)), rel=allowed)


def test_binomial_pmf_within_the_slack():
    trials, rho = 20_000, 0.3
    r = Fraction(rho)
    for j in (5_500, 6_050, 6_600):
        exact = float(math.comb(trials, j) * r**j * (1 - r) ** (trials - j))
        assert stats.binom.pmf(j, trials, rho) == pytest.approx(exact, rel=rel_slack(trials) / 50)


def test_engine_half_pmf_has_the_bits_of_scipys_binomial_pmf():
    """The engine's pmf skips scipy's argument checks; on its domain (0 <= k <= s, integers) it must be the very
    value the slack above was measured for: counts 0 to 2^53, k at both ends, the middle and in between."""
    rng = np.random.default_rng(7)
    s = np.concatenate([np.arange(0.0, 60.0), np.round(10.0 ** rng.uniform(2, 15.9, 4_000)), [2.0**53]])
    for k in (np.zeros_like(s), s, np.floor(s / 2), np.floor(s * rng.uniform(0, 1, s.size)), np.floor(s * 0.51)):
        assert np.array_equal(binomial.half_binomial_pmf(k, s), stats.binom.pmf(k, s, 0.5))
    assert np.isnan(binomial.half_binomial_pmf(np.array([math.nan]), np.array([4.0]))[0])


@pytest.mark.parametrize("eps0", [0.5, 1.0, 4.0])
@pytest.mark.parametrize("n", [10**4, 10**6])
def test_large_n_bounds_are_ordered_and_tight(eps0, n):
    ub = shuffle_epsilon(n, 1e-6, eps0=eps0)
    lb = shuffle_epsilon_lower(n, 1e-6, eps0=eps0)
    assert 0 < lb < ub <= lb * (1 + 3 * vr.DEFAULT_RTOL)
    assert ub < eps0


def test_registered_in_dispatch():
    methods = available_methods()
    assert methods["variation-ratio"].kind == "upper" and not methods["variation-ratio"].generic_only
    assert methods["variation-ratio-lower"].kind == "lower"
    params = VariationRatio.from_pq(4.0, 0.6, 6.0)  # generic beta = tanh(log(4)/2), others' blanket thinner (q > p)
    assert shuffle_epsilon(5000, 1e-6, params=params) == variation_ratio_epsilon(params, 5000, 1e-6)
    assert shuffle_epsilon_lower(5000, 1e-6, eps0=2.0) == variation_ratio_epsilon_lower(
        VariationRatio.from_ldp(2.0), 5000, 1e-6
    )
    # a randomizer's own beta: the three-class pair, not the variation-ratio pair (refused, unproven)
    own = BlanketDecomposition(eps0=math.log(4.0), beta=0.3)
    assert shuffle_epsilon(5000, 1e-6, params=own) == blanket_epsilon(own, 5000, 1e-6)
    with pytest.raises(UnprovenBoundError, match="BlanketDecomposition"):
        shuffle_epsilon(5000, 1e-6, params=VariationRatio.from_pq(4.0, 0.3, 6.0))
    # no lower bound for a randomizer's own parameters (the attainable pair is some other randomizer's)
    with pytest.raises(UnsupportedEventError, match="no lower bound is offered"):
        shuffle_epsilon_lower(5000, 1e-6, params=own)


DELTAS = st.sampled_from([1e-3, 1e-6, 1e-9])


@settings(max_examples=40, deadline=None)
@given(eps0=st.floats(0.05, 8.0), n=st.integers(1, 200_000), extra=st.integers(1, 50_000), delta=DELTAS)
def test_upper_bound_non_increasing_in_n(eps0, n, extra, delta):
    assert shuffle_epsilon(n + extra, delta, eps0=eps0) <= shuffle_epsilon(n, delta, eps0=eps0)
    assert shuffle_epsilon(n + 1, delta, eps0=eps0) <= shuffle_epsilon(n, delta, eps0=eps0)


@settings(max_examples=40, deadline=None)
@given(eps0=st.floats(0.05, 8.0), factor=st.floats(1.0, 3.0), n=st.integers(1, 200_000), delta=DELTAS)
def test_upper_bound_non_decreasing_in_eps0(eps0, factor, n, delta):
    assert shuffle_epsilon(n, delta, eps0=eps0) <= shuffle_epsilon(n, delta, eps0=eps0 * factor)
    assert shuffle_epsilon(n, delta, eps0=eps0) <= shuffle_epsilon(n, delta, eps0=eps0 * (1 + 1e-9))


@settings(max_examples=40, deadline=None)
@given(
    p=st.one_of(st.just(math.inf), st.floats(1.05, 200.0)),
    beta_frac=st.floats(0.01, 1.0),
    q_extra=st.floats(0.0, 50.0),
    n=st.integers(1, 100_000),
    delta=DELTAS,
)
def test_upper_at_least_lower(p, beta_frac, q_extra, n, delta):
    beta = beta_frac * (1.0 if math.isinf(p) else (p - 1) / (p + 1))
    q_min = 2 * beta if math.isinf(p) else 2 * beta * p / (p - 1)
    params = VariationRatio.from_pq(p, beta, max(1.0, q_min) + q_extra)
    assert variation_ratio_epsilon(params, n, delta) >= variation_ratio_epsilon_lower(params, n, delta)


@pytest.mark.parametrize("delta", [0.0, 1.0, -0.1, 1.5, math.nan])
def test_bad_delta(delta):
    with pytest.raises(PrivacyParameterError, match=r"delta must be a number in \[1e-300, 1\); got"):
        shuffle_epsilon(100, delta, eps0=1.0)
    with pytest.raises(PrivacyParameterError, match=r"delta must be a number in \[1e-300, 1\); got"):
        variation_ratio_epsilon(VariationRatio.from_ldp(1.0), 100, delta)


@pytest.mark.parametrize("n", [0, -3, 2.5, "10"])
def test_bad_n(n):
    with pytest.raises(PrivacyParameterError, match=r"n must be an integer in \[1, 2\^53\]; got"):
        shuffle_epsilon(n, 1e-6, eps0=1.0)
    with pytest.raises(PrivacyParameterError, match=r"n must be an integer in \[1, 2\^53\]; got"):
        shuffle_epsilon_lower(n, 1e-6, eps0=1.0)


@pytest.mark.parametrize("eps0", [0.0, -1.0, math.nan, math.inf])
def test_bad_eps0(eps0):
    with pytest.raises(PrivacyParameterError, match=r"eps0 must be a number in \[1e-6, 700\]; got"):
        shuffle_epsilon(100, 1e-6, eps0=eps0)


def test_inconsistent_parameters():
    with pytest.raises(PrivacyParameterError, match=r"beta must lie in \[0, \(p-1\)/\(p\+1\)\]"):
        VariationRatio.from_pq(3.0, 0.9, 3.0)
    # rho = 2 beta p / ((p-1) q) = 4/3 > 1: no randomizers have these parameters (the engine says so;
    # shuffle_epsilon refuses them earlier, as an own beta below tanh(log(p)/2))
    with pytest.raises(PrivacyParameterError, match=r"needs q >= 1\.33"):
        variation_ratio_epsilon(VariationRatio.from_pq(4.0, 0.5, 1.0), 100, 1e-6)
    with pytest.raises(UnprovenBoundError):
        shuffle_epsilon(100, 1e-6, params=VariationRatio.from_pq(4.0, 0.5, 1.0))
    # p = infinity, rho = 2 beta / q = 1.5 > 1: accepted by shuffle_epsilon, refused by the pair
    with pytest.raises(PrivacyParameterError, match=r"needs q >= 1\.8"):
        shuffle_epsilon(100, 1e-6, params=VariationRatio(p=math.inf, beta=0.9, q0=1.2, q1=1.2))
    with pytest.raises(PrivacyParameterError, match=r"gamma must be a number in \[0, 1\]; got 1.5"):
        variation_ratio_epsilon(VariationRatio.from_ldp(1.0), 100, 1e-6, gamma=1.5)
    with pytest.raises(PrivacyParameterError, match=r"rtol must be a number in \[1e-12, 0\.01\]; got 0.5"):
        variation_ratio_epsilon(VariationRatio.from_ldp(1.0), 100, 1e-6, rtol=0.5)


@pytest.mark.parametrize("eps0", [0.1, 1.0])
def test_zero_when_the_total_variation_is_already_below_delta(eps0):
    """delta above TV(P, Q): eps = 0 is certified (and found without a long halving search)."""
    vr, n, delta = VariationRatio.from_ldp(eps0), 10**6, 1e-2
    assert hockey_stick_divergence(vr, n, 0.0)[1] <= delta
    assert variation_ratio_epsilon(vr, n, delta) == 0.0 == variation_ratio_epsilon_lower(vr, n, delta)
    # just below the total variation, eps must be positive again
    tv_low = hockey_stick_divergence(vr, n, 0.0)[0]
    assert variation_ratio_epsilon(vr, n, tv_low * 0.9) > 0.0


WIDE_CASES = [
    pytest.param(VariationRatio.from_ldp(12.0), id="ldp-12"),
    pytest.param(VariationRatio.from_ldp(20.0), id="ldp-20"),
    pytest.param(VariationRatio.from_ldp(30.0), id="ldp-30"),
    pytest.param(VariationRatio.from_pq(1e6, 0.9, 2e6), id="p1e6-b0.9"),
    pytest.param(VariationRatio.from_pq(math.inf, 0.9, 1e9), id="poisson-b0.9-q1e9"),
]


def mp_brute_divergence(params: VariationRatio, n: int, eps: float) -> float:
    """max of both directions of the Theorem 1 pair in 50-digit arithmetic (float64 loses ~1e-8 near log p)."""
    import mpmath

    mpmath.mp.dps = 50
    p, beta, q = (mpmath.mpf(v) if math.isfinite(v) else mpmath.inf for v in (params.p, params.beta, params.q))
    w1 = beta if mpmath.isinf(p) else beta * p / (p - 1)
    w0 = mpmath.mpf(0) if mpmath.isinf(p) else beta / (p - 1)
    w00 = max(mpmath.mpf(0), 1 - w1 - w0)
    rho, e = 2 * w1 / q, mpmath.exp(eps)
    P, Q = {}, {}
    for c in range(n):
        weight = mpmath.binomial(n - 1, c) * rho**c * (1 - rho) ** (n - 1 - c)
        for a in range(c + 1):
            m = weight * mpmath.binomial(c, a) / mpmath.mpf(2) ** c
            for d1, d2, w in ((1, 0, w1), (0, 1, w0), (0, 0, w00)):
                P[(a + d1, c - a + d2)] = P.get((a + d1, c - a + d2), 0) + w * m
                Q[(a + d2, c - a + d1)] = Q.get((a + d2, c - a + d1), 0) + w * m
    keys = set(P) | set(Q)
    forward = sum(max(P.get(k, 0) - e * Q.get(k, 0), 0) for k in keys)
    backward = sum(max(Q.get(k, 0) - e * P.get(k, 0), 0) for k in keys)
    return float(max(forward, backward))


@pytest.mark.parametrize("params", WIDE_CASES)
@pytest.mark.parametrize("n", [2, 17, 40])
def test_matches_brute_force_at_large_eps0(params, n):
    # Near log p almost all the divergence sits on the victim's own message: the term the old
    # engine dropped.  Reference: exact enumeration in mpmath.
    cap = math.log(params.p) if math.isfinite(params.p) else 60.0
    for gap in (3.0, 1.0, 0.1, 1e-3, 1e-7):
        eps = cap - gap
        exact = mp_brute_divergence(params, n, eps)
        lower, upper = hockey_stick_divergence(params, n, eps)
        assert lower <= exact * (1 + 1e-10) + 1e-300 and upper >= exact * (1 - 1e-10) - 1e-300, (
            eps,
            lower,
            exact,
            upper,
        )
        # and tight, up to the outward rounding of log p (relative ~ L * 1e-15 / gap)
        assert upper <= exact * (1 + 1e-9 + cap * 3e-15 / gap) + 1e-290


# The fast paths of the engine against its plain scalar path: the remembered Boost values of a
# search must be the bits a fresh evaluation gives, and the bound found from the estimated root
# must be the grid point the full bracketing search finds.
ENGINE_SIZES = [1, 2, 30, 1_001, 10**4, 10**6, 10**8, 10**10, 10**12]
ENGINE_EPS0 = [1e-3, 0.05, 0.7, 3.0, 12.0, 40.0]
ENGINE_DELTAS = [0.3, 1e-6, 1e-40, 1e-300]


def _fresh(div: dp.PairDivergence, kind: str, eps: float):
    """``div.<kind>(eps)`` with every remembered value forgotten first: the plain scalar path."""
    div._remembered = None
    for mix in {id(m): m for m in (div._upper, div._lower)}.values():
        mix.memo.clear()
    return getattr(div, kind)(eps)


def _full_search(pair: DominatingPair, delta: float, rtol: float) -> float:
    """`pair_epsilon`'s upper bound by the bracketing search alone (no estimate, no remembered values)."""
    if pair.w_diff <= 0.0:
        return 0.0
    div = dp.PairDivergence(pair, dp.tail_budget(delta, rtol))
    cap = pair.eps_cap
    if math.isinf(cap) and dp.infinite_divergence(pair) * (1.0 + div.slack) >= delta:
        return math.inf
    upper = lambda eps: _fresh(div, "upper", eps)  # noqa: E731
    with_slope = lambda eps: _fresh(div, "upper_and_slope", eps)  # noqa: E731
    guess = dp._normal_guess(pair, delta)
    return dp.solve_epsilon(upper, delta, min(cap, dp.EPS_CEILING), guess, rtol, True, cap=cap, with_slope=with_slope)


@pytest.mark.parametrize("n", ENGINE_SIZES)
@pytest.mark.parametrize("eps0", [0.05, 0.7, 12.0])
def test_remembered_boost_values_give_the_bits_of_a_fresh_evaluation(n, eps0):
    """A search-like walk of epsilons (far apart, then a grid step apart) on one divergence, which reuses the
    Boost values of blocks whose threshold did not move, gives exactly the values of fresh evaluations."""
    pair = DominatingPair.from_params(VariationRatio.from_ldp(eps0), n)
    div, fresh = dp.PairDivergence(pair, 1e-15), dp.PairDivergence(pair, 1e-15)
    root = variation_ratio_epsilon(VariationRatio.from_ldp(eps0), n, 1e-6)
    walk = [0.0, root / 2.0, 2.0 * root, root, root * (1.0 + 1e-7), root * (1.0 - 1e-7), root, 3.0, eps0]
    for eps in walk:
        assert div.upper_and_slope(eps) == _fresh(fresh, "upper_and_slope", eps)
        assert div.lower(eps) == _fresh(fresh, "lower", eps)
    grid = np.array(walk)
    assert np.array_equal(div.upper_many(grid), [_fresh(fresh, "upper", e) for e in walk])


@pytest.mark.parametrize("n", ENGINE_SIZES)
@pytest.mark.parametrize("eps0", ENGINE_EPS0)
@pytest.mark.parametrize("delta", ENGINE_DELTAS)
def test_bound_from_the_estimated_root_is_the_full_search_bound(n, eps0, delta):
    """`pair_epsilon` (estimate, Newton steps checked on the grid, remembered values) returns the very float of
    the full bracketing search on fresh evaluations: n from 1 to 10^12, eps0 up to 40, delta down to 1e-300."""
    pair = DominatingPair.from_params(VariationRatio.from_ldp(eps0), n)
    rtol = vr.DEFAULT_RTOL
    assert dp.pair_epsilon(pair, delta, rtol, upper=True) == _full_search(pair, delta, rtol)


@settings(max_examples=25, deadline=None)
@given(
    log_n=st.floats(0.0, 12.0),
    eps0=st.floats(1e-3, 40.0),
    log_delta=st.floats(-300.0, -1.0),
    rtol=st.sampled_from([1e-12, 1e-7, 1e-3]),
)
def test_fast_bound_equals_the_full_search_anywhere(log_n, eps0, log_delta, rtol):
    """The same pin at random points of the whole range, at fine and coarse grids (rtol 1e-12 to 1e-3)."""
    pair = DominatingPair.from_params(VariationRatio.from_ldp(eps0), round(10.0**log_n))
    delta = 10.0**log_delta
    assert dp.pair_epsilon(pair, delta, rtol, upper=True) == _full_search(pair, delta, rtol)
