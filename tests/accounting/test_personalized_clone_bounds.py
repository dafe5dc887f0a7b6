"""Personalized amplification (issue 10): rigour by brute force, exactness, homogeneous limit, errors."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

import numpy as np
import pytest
from scipy import stats

from shuffledp.accounting import personalized as P
from shuffledp.accounting.bounds import shuffle_epsilon
from shuffledp.accounting.dominating_pair import DominatingPair, PairDivergence, pair_epsilon
from shuffledp.errors import NoCloneBoundError, PrivacyParameterError, ShapeError
from shuffledp.params import VariationRatio

# ----------------------------------------------------------------------------- brute force


def krr_row(eps: float, k: int, x: int) -> np.ndarray:
    row = np.full(k, 1.0 / (math.exp(eps) + k - 1))
    row[x] = math.exp(eps) / (math.exp(eps) + k - 1)
    return row


def multiset_law(rows: list[np.ndarray]) -> dict[tuple[int, ...], float]:
    """Law of the shuffled output (the multiset = vector of symbol counts), by enumeration."""
    k = rows[0].size
    law = {(0,) * k: 1.0}
    for row in rows:
        nxt: dict[tuple[int, ...], float] = defaultdict(float)
        for counts, mass in law.items():
            for y in range(k):
                key = list(counts)
                key[y] += 1
                nxt[tuple(key)] += mass * row[y]
        law = nxt
    return law


def hockey(p: dict, q: dict, eps: float) -> float:
    e = math.exp(eps)
    return sum(max(0.0, m - e * q.get(key, 0.0)) for key, m in p.items())


def worst_divergence(victim: float, others: list[float], k: int, eps: float) -> float:
    """max over every input of the others and every ordered victim pair (x0, x1) of the shuffled divergence."""
    worst = 0.0
    for xs in itertools.product(range(k), repeat=len(others)):
        base = [krr_row(e, k, x) for e, x in zip(others, xs)]
        for x0, x1 in itertools.permutations(range(k), 2):
            p = multiset_law(base + [krr_row(victim, k, x0)])
            q = multiset_law(base + [krr_row(victim, k, x1)])
            worst = max(worst, hockey(p, q, eps))
    return worst


@pytest.mark.parametrize(
    "k,budgets,delta",
    [
        (2, [0.3, 0.8, 1.5, 0.5, 2.0, 1.0, 0.2, 1.2, 0.7, 0.4], 0.05),
        (2, [2.5, 0.1, 0.9, 3.0, 0.6, 1.8, 0.25, 1.1], 0.1),
        (3, [0.4, 1.2, 2.0, 0.8, 1.5, 0.6], 0.1),
    ],
)
def test_upper_and_lower_bracket_the_real_shuffled_outputs(k, budgets, delta):
    family = "binary-rr" if k == 2 else "k-rr"
    checked = 0
    for i, victim in enumerate(budgets):
        others = budgets[:i] + budgets[i + 1 :]
        upper = P.personalized_shuffle_epsilon(victim, others, delta, family, k=k if k > 2 else None, rtol=1e-6)
        assert upper <= victim * (1 + 1e-12)
        # the real divergence at the certified epsilon is <= delta for every input assignment
        assert worst_divergence(victim, others, k, upper) <= delta * (1 + 1e-9)
        if upper < victim:  # the bound is not vacuous: just below it the *pair* exceeds delta
            checked += 1
        if k == 2:
            lower = P.personalized_shuffle_epsilon_lower(victim, others, delta)
            assert lower <= upper
            if lower > 0.0:  # some real neighbouring pair still exceeds delta at the lower bound
                assert worst_divergence(victim, others, k, lower) > delta
    assert checked >= len(budgets) // 2  # amplification happened for most victims


def test_lower_bound_is_the_exact_divergence_of_its_pair():
    victim, others, delta = 1.0, [0.5, 1.5, 0.8, 1.1, 2.0, 0.3, 0.9], 0.08
    lower = P.personalized_shuffle_epsilon_lower(victim, others, delta, rtol=1e-6)
    base = [krr_row(e, 2, 0) for e in others]

    def div(eps):
        return max(
            hockey(multiset_law(base + [krr_row(victim, 2, a)]), multiset_law(base + [krr_row(victim, 2, 1 - a)]), eps)
            for a in (0, 1)
        )

    assert div(lower) > delta >= div(lower * (1 + 3e-6))  # the largest grid point above delta


# ----------------------------------------------------------------------------- the engine on a Poisson-binomial count


def brute_pair_divergence(w_same: float, count_pmf: np.ndarray, eps: float) -> float:
    """D_{e^eps}(P || Q) of the clone pair, summed over every cell (x, y) with C from ``count_pmf``."""
    e, total = math.exp(eps), 0.0
    for c, mass in enumerate(count_pmf):
        s = c + 1
        x = np.arange(s + 1)
        b_prev = stats.binom.pmf(x - 1, c, 0.5)
        b_here = stats.binom.pmf(x, c, 0.5)
        p = mass * (w_same * b_prev + (1 - w_same) * b_here)
        q = mass * ((1 - w_same) * b_prev + w_same * b_here)
        total += float(np.sum(np.maximum(p - e * q, 0.0)))
    return total


def exact_poisson_binomial(probs: np.ndarray) -> np.ndarray:
    pmf = np.ones(1)
    for p in probs:
        pmf = np.convolve(pmf, [1 - p, p])
    return pmf


@pytest.mark.parametrize("n", [5, 23, 60])
def test_count_divergence_equals_brute_force(n):
    rng = np.random.default_rng(n)
    victim = 0.9
    others = rng.uniform(0.05, 2.0, n - 1)
    caps = P.clone_capacity(victim, others)
    exact = exact_poisson_binomial(caps)
    count = P.poisson_binomial(caps, cut=1e-30)
    np.testing.assert_allclose(count.pmf, exact[count.offset : count.offset + count.pmf.size], rtol=0, atol=1e-15)
    pair = DominatingPair.clones(victim, 1, stronger=True)
    div = PairDivergence.from_count_pmf(pair, count.pmf, count.err, count.offset, count.missing)
    for eps in (0.0, 0.1, 0.4, 0.85):
        ref = brute_pair_divergence(pair.w_same, exact, eps)
        assert abs(div.upper(eps) - ref) < 1e-9 and div.lower(eps) <= ref <= div.upper(eps)


def test_poisson_binomial_batched_tree_matches_exact():
    probs = np.random.default_rng(3).uniform(0.0, 1.0, 3000)
    count = P.poisson_binomial(probs, cut=1e-30)
    exact = exact_poisson_binomial(probs)
    window = exact[count.offset : count.offset + count.pmf.size]
    assert np.all(np.abs(count.pmf - window) <= count.err)
    assert 1.0 - window.sum() <= count.missing + 1e-13


def test_from_count_pmf_with_binomial_count_equals_engine():
    pair = DominatingPair.clones(1.5, 400, stronger=True)
    c = np.arange(400.0)
    pmf = stats.binom.pmf(c, 399, pair.rho)
    div = PairDivergence.from_count_pmf(pair, pmf, 1e-13 * pmf, 0, 0.0)
    engine = PairDivergence(pair, 1e-300)
    for eps in (0.0, 0.2, 0.7):
        assert abs(div.upper(eps) - engine.upper(eps)) < 1e-12


# ----------------------------------------------------------------------------- homogeneous limit, monotonicity


@pytest.mark.parametrize("eps0,n", [(0.5, 1000), (1.0, 20_000), (2.0, 5000)])
def test_equal_budgets_give_the_homogeneous_bound(eps0, n):
    mine = P.personalized_shuffle_epsilon(eps0, np.full(n - 1, eps0), 1e-6, rtol=1e-6)
    clones = pair_epsilon(DominatingPair.clones(eps0, n, stronger=True), 1e-6, 1e-6, upper=True)
    library = shuffle_epsilon(n, 1e-6, eps0=eps0)  # binary RR = VariationRatio.from_ldp: the same pair
    assert abs(mine - clones) <= 2.1e-6 * clones
    assert abs(mine - library) <= 2.1e-6 * library
    _, vec = P.personalized_shuffle_epsilons(np.full(n, eps0), 1e-6, rtol=1e-6)
    assert abs(vec[0] - mine) <= 2.1e-6 * mine


def test_k_rr_equal_budgets_give_stronger_clones():
    mine = P.personalized_shuffle_epsilon(1.0, np.full(2999, 1.0), 1e-6, "k-rr", k=3)
    ref = pair_epsilon(DominatingPair.clones(1.0, 3000, stronger=True), 1e-6, 1e-6, upper=True)
    assert abs(mine - ref) <= 2.1e-6 * ref


def test_vectorised_matches_one_victim_at_a_time():
    rng = np.random.default_rng(7)
    budgets = np.round(rng.uniform(0.05, 1.0, 4000), 1)
    values, eps = P.personalized_shuffle_epsilons(budgets, 1e-5)
    values_lo, lo = P.personalized_shuffle_epsilons_lower(budgets, 1e-5)
    for v, e, l in zip(values, eps, lo):
        i = int(np.flatnonzero(budgets == v)[0])
        others = np.delete(budgets, i)
        assert abs(e - P.personalized_shuffle_epsilon(v, others, 1e-5)) <= 2.1e-6 * e
        assert abs(l - P.personalized_shuffle_epsilon_lower(v, others, 1e-5)) <= 2.1e-6 * l
        assert l <= e
    assert np.all(np.diff(eps) > 0)  # a weaker victim budget never gets a smaller bound


def test_capacities():
    e = np.array([0.1, 1.0, 3.0])
    np.testing.assert_allclose(P.clone_capacity(0.7, e), 2 / (1 + np.exp(e)), rtol=1e-14)
    # k-RR: R_o(x)(y) >= c/2 (R_v(x0) + R_v(x1))(y) for all x, y, x0 != x1, and c is the largest such
    for ev, eo, k in [(0.5, 2.0, 3), (2.0, 0.5, 4), (1.0, 1.0, 5)]:
        c = P.clone_capacity(ev, eo, "k-rr", k=k)
        ratios = [
            krr_row(eo, k, x)[y] / (0.5 * (krr_row(ev, k, x0)[y] + krr_row(ev, k, x1)[y]))
            for x in range(k)
            for y in range(k)
            for x0, x1 in itertools.permutations(range(k), 2)
        ]
        assert c <= min(ratios) and c >= min(ratios) * (1 - 1e-14)
    # Laplace on [0, 1]: density check on a fine grid, and zero for a more liberal other user
    ev, eo = 1.5, 0.8
    c = P.clone_capacity(ev, eo, "laplace")
    y = np.linspace(-5, 6, 4001)

    def lap(eps, x):
        return eps / 2 * np.exp(-eps * np.abs(y - x))

    worst = min(np.min(lap(eo, x) / lap(ev, x0)) for x in (0.0, 1.0) for x0 in (0.0, 1.0))
    assert c <= worst * (1 + 1e-12) and c >= worst * (1 - 1e-3)
    assert P.clone_capacity(0.5, 0.8, "laplace") == 0.0
    # no clones: the victim's own RR pair, D = a - e^eps (1 - a) = delta at eps = log((a - delta)/(1 - a))
    a = math.exp(0.5) / (1 + math.exp(0.5))
    alone = math.log((a - 1e-6) / (1 - a))
    assert alone <= P.personalized_shuffle_epsilon(0.5, [0.8] * 100, 1e-6, "laplace") <= alone * (1 + 2e-6)


# ----------------------------------------------------------------------------- competitors


def test_eapes_closed_forms():
    others = np.linspace(0.1, 1.0, 999)
    mu = P.eapes_mu(others)
    assert mu == pytest.approx(math.sqrt(2 / np.sum(1 / (1 + np.exp(others)))), rel=1e-14)
    eps = P.eapes_epsilon(others, 1e-6)
    assert P.gdp_delta(eps, mu) == pytest.approx(1e-6, rel=1e-8)
    # a Berry-Esseen constant adds g (1 + e^eps) to delta: epsilon grows, or is infinite when g alone is too big
    assert P.eapes_epsilon(others, 1e-3, berry_esseen=1e-3) > P.eapes_epsilon(others, 1e-3)
    assert P.eapes_epsilon(others, 1e-6, berry_esseen=1.0) == math.inf
    # delta_i > 0: mu uses (1 - delta_i), and the mixture with delta_max lowers what is left
    assert P.eapes_mu(others, np.full(999, 0.5)) == pytest.approx(mu * math.sqrt(2), rel=1e-14)


def test_weakest_budget_baseline_dominates():
    budgets = np.random.default_rng(1).uniform(0.05, 1.0, 2000)
    base = P.weakest_budget_epsilon(2000, budgets, 1e-6)
    _, eps = P.personalized_shuffle_epsilons(np.round(budgets, 2), 1e-6)
    assert np.max(eps) <= base * (1 + 1e-2)  # rounding to 2 decimals may raise the top budget by 0.005


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("bad", [0.0, -1.0, math.inf, math.nan])
def test_bad_budgets(bad):
    with pytest.raises(PrivacyParameterError, match="others_eps"):
        P.personalized_shuffle_epsilon(1.0, [1.0, bad], 1e-6)
    with pytest.raises(PrivacyParameterError, match="victim_eps"):
        P.personalized_shuffle_epsilon(bad, [1.0], 1e-6)
    with pytest.raises(PrivacyParameterError, match="budgets"):
        P.personalized_shuffle_epsilons([1.0, bad], 1e-6)


@pytest.mark.parametrize("delta", [0.0, 1.0, -0.1, math.nan])
def test_bad_delta(delta):
    with pytest.raises(PrivacyParameterError, match="delta"):
        P.personalized_shuffle_epsilon(1.0, [1.0], delta)
    with pytest.raises(PrivacyParameterError, match="delta"):
        P.eapes_epsilon([1.0], delta)


def test_bad_family_and_shapes():
    with pytest.raises(NoCloneBoundError, match="family"):
        P.personalized_shuffle_epsilon(1.0, [1.0], 1e-6, "gaussian")
    with pytest.raises(NoCloneBoundError, match="k"):
        P.personalized_shuffle_epsilon(1.0, [1.0], 1e-6, "k-rr")
    with pytest.raises(ShapeError, match="others_inputs"):
        P.personalized_shuffle_epsilon_lower(1.0, [1.0, 2.0], 1e-6, others_inputs=[0])
    with pytest.raises(ShapeError, match="deltas"):
        P.eapes_mu([1.0, 2.0], [0.0])


def test_from_count_pmf_with_none_weight_equals_engine():
    # a victim with w_none > 0 (the engine's pair at 5-RR's own beta -- engine mechanics only: that pair
    # is no bound for 5-RR, docs/which-bound.md): the h_s path of from_count_pmf
    e = math.e
    pair = DominatingPair.from_params(VariationRatio(p=e, beta=(e - 1) / (e + 4), q0=e, q1=e), 300)
    c = np.arange(300.0)
    pmf = stats.binom.pmf(c, 299, pair.rho)
    div = PairDivergence.from_count_pmf(pair, pmf, 1e-13 * pmf, 0, 0.0)
    engine = PairDivergence(pair, 1e-300)
    assert pair.w_none > 0
    for eps in (0.0, 0.1, 0.5):
        assert abs(div.upper(eps) - engine.upper(eps)) < 1e-11
        assert div.lower(eps) <= engine.upper(eps) and abs(div.lower(eps) - engine.lower(eps)) < 1e-11


def test_all_zero_inputs_are_not_always_the_worst_pair():
    """Why the lower bound is only a bound (summary of personalized-bounds): with n = 4 and equal
    budgets, mixed inputs of the others give a larger divergence than all zeros."""
    victim, others, eps = 0.5, [1.0, 1.0, 1.0], 0.05
    base = [krr_row(e, 2, 0) for e in others]
    all_zero = max(
        hockey(multiset_law(base + [krr_row(victim, 2, a)]), multiset_law(base + [krr_row(victim, 2, b)]), eps)
        for a, b in ((0, 1), (1, 0))
    )
    assert worst_divergence(victim, others, 2, eps) > 1.15 * all_zero


def test_too_many_distinct_budgets_are_refused_before_any_work():
    budgets = np.linspace(0.1, 1.0, P.MAX_DISTINCT_BUDGETS + 1)
    with pytest.raises(PrivacyParameterError, match="20,001 distinct values"):
        P.personalized_shuffle_epsilons(budgets, 1e-6)
    with pytest.raises(PrivacyParameterError, match="round them up"):
        P.personalized_shuffle_epsilons_lower(budgets, 1e-6)
    values, counts = P.check_distinct_budgets(np.ceil(budgets / 0.01) * 0.01)
    assert values.size == 91 and counts.sum() == budgets.size
