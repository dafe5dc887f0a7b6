"""Upper bounds never below the truth, at any accepted parameter (issue "Foundation hardening").

The reference is computed independently of the engine: binary randomized response with
the other n - 1 users all holding 0 is an eps0-LDP randomizer whose shuffled output is
a count of ones, so its exact divergence is a sum over counts, evaluated here in
60-digit mpmath.  Its epsilon is a *lower* bound on the worst case that every upper
bound must respect.  Neglected counts are dropped, so the reference errs low.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffledp.accounting import composition as cp
from shuffledp.accounting import dominating_pair as dp
from shuffledp.accounting import shuffle_epsilon, shuffle_epsilon_lower
from shuffledp.accounting.bounds import available_methods
from shuffledp.accounting.dominating_pair import DominatingPair, PairDivergence
from shuffledp.accounting.params import VariationRatio
from shuffledp.errors import ShuffleDPError

mpmath.mp.dps = 60


def _binary_rr_counts(eps0: float, n: int, max_terms: int = 400) -> tuple[list, mpmath.mpf, mpmath.mpf] | None:
    """Binom(n - 1, f) pmf (mpmath) over the counts that matter, f = 1/(e^eps0 + 1); None if too many."""
    f = 1 / (mpmath.exp(eps0) + 1)
    mean = (n - 1) * f
    hi = int(mpmath.ceil(mean + 40 * mpmath.sqrt(mean + 1) + 60))
    lo = max(0, int(mpmath.floor(mean - 40 * mpmath.sqrt(mean + 1) - 60)))
    hi = min(hi, n - 1)
    if hi - lo > max_terms:
        return None
    logs = [mpmath.loggamma(n) - mpmath.loggamma(k + 1) - mpmath.loggamma(n - k) for k in range(lo, hi + 1)]
    pmf = {
        k: mpmath.exp(lg + k * mpmath.log(f) + (n - 1 - k) * mpmath.log1p(-f)) for k, lg in zip(range(lo, hi + 1), logs)
    }
    return [(k, pmf) for k in range(lo, hi + 2)], f, 1 - f


def binary_rr_divergence(eps0: float, n: int, eps: float, counts) -> mpmath.mpf:
    """max of D_{e^eps}(P || Q) and D_{e^eps}(Q || P) for the count of ones: victim input 1 (P) or 0 (Q), others 0."""
    rows, f, a = counts
    e = mpmath.exp(eps)
    forward, backward = mpmath.mpf(0), mpmath.mpf(0)
    for k, pmf in rows:
        b_prev, b_here = pmf.get(k - 1, 0), pmf.get(k, 0)
        p_k, q_k = a * b_prev + f * b_here, f * b_prev + a * b_here
        forward += max(p_k - e * q_k, 0)
        backward += max(q_k - e * p_k, 0)
    return max(forward, backward)


def binary_rr_epsilon(eps0: float, n: int, delta: float) -> float | None:
    """The exact epsilon of this concrete mechanism (bisection to 1e-12 relative); None if too costly."""
    counts = _binary_rr_counts(eps0, n)
    if counts is None:
        return None
    if binary_rr_divergence(eps0, n, 0.0, counts) <= delta:
        return 0.0
    lo, hi = mpmath.mpf(0), mpmath.mpf(eps0)
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if binary_rr_divergence(eps0, n, mid, counts) > delta else (lo, mid)
        if hi - lo < 1e-13 * hi:
            break
    return float(lo)


UPPER_METHODS = sorted(available_methods("upper"))


@pytest.mark.parametrize("eps0", [8.0, 23.35, 26.0, 30.0, 40.0, 50.0])
def test_every_upper_bound_is_above_exact_binary_rr(eps0):
    n, delta = 10_000, 1e-6
    exact = binary_rr_epsilon(eps0, n, delta)
    assert exact is not None and exact > 0.0
    for method in UPPER_METHODS:
        value = shuffle_epsilon(n, delta, eps0=eps0, method=method)
        assert value >= exact, (method, value, exact)
    # the all-zeros dataset is the worst case here (k = 0 has no cover), so the lower bound meets it
    assert shuffle_epsilon_lower(n, delta, eps0=eps0) <= exact * (1 + 1e-12) or eps0 == 8.0


def test_the_old_optimistic_values_are_gone():
    # the seen defects: 29.99935 at eps0 = 30, 37.68 at 40, 36.90 at 50 (n = 1e4, delta = 1e-6)
    for eps0 in (30.0, 40.0, 50.0):
        assert shuffle_epsilon(10_000, 1e-6, eps0=eps0) >= eps0 - 2e-6
    poisson = VariationRatio(p=math.inf, beta=0.5, q0=1e20, q1=1e20)
    assert shuffle_epsilon(100, 1e-6, params=poisson) >= 42.149  # exact 42.15


@pytest.mark.parametrize("eps0", [30.0, 40.0, 50.0])
def test_engine_brackets_an_mpmath_evaluation_of_the_pair_at_large_eps0(eps0):
    # stronger-clone pair: C ~ Binom(n - 1, 2/(e^eps0 + 1)), one message on the victim's side w.p. alpha
    n = 10_000
    pair = DominatingPair.clones(eps0, n, stronger=True)
    div = PairDivergence(pair, 1e-30)
    alpha = mpmath.exp(eps0) / (mpmath.exp(eps0) + 1)
    rho = 2 / (mpmath.exp(eps0) + 1)
    for gap in (1e-9, 1e-6, 1e-3, 0.5):
        eps = eps0 - gap
        e = mpmath.exp(eps)
        ref = mpmath.mpf(0)
        for c in range(4):  # E[C] ~ 1e-9: later counts are below 1e-30
            weight = mpmath.binomial(n - 1, c) * rho**c * (1 - rho) ** (n - 1 - c)
            for u in range(c + 2):
                b_prev = mpmath.binomial(c, u - 1) / 2**c if u >= 1 else 0
                b_here = mpmath.binomial(c, u) / 2**c if u <= c else 0
                ref += weight * max(
                    alpha * b_prev + (1 - alpha) * b_here - e * ((1 - alpha) * b_prev + alpha * b_here), 0
                )
        lower, upper = div(eps)
        assert lower <= float(ref) * (1 + 1e-12) and float(ref) <= upper * (1 + 1e-12), (gap, lower, float(ref), upper)
        assert upper <= float(ref) * (1 + 1e-9 + eps0 * 3e-15 / gap) + 1e-29  # log p is rounded outward


def test_blocks_bracket_the_exact_sum(monkeypatch):
    params, n = VariationRatio(p=math.exp(2.0), beta=0.5, q0=5.0, q1=5.0), 2_000_000
    exact = PairDivergence(DominatingPair.from_params(params, n), 1e-20)
    assert exact.exact
    monkeypatch.setattr(dp, "MAX_BLOCKS", 40)
    coarse = PairDivergence(DominatingPair.from_params(params, n), 1e-20)
    assert not coarse.exact
    for eps in (0.0, 1e-3, 4e-3, 8e-3):
        (lo, hi), (c_lo, c_hi) = exact(eps), coarse(eps)
        assert c_lo <= lo <= hi <= c_hi
        assert c_hi <= hi * 1.05 + 1e-15  # coarse but not useless


def _n_values():
    return st.builds(lambda e, m: max(1, min(10**12, int(m * 10**e))), st.integers(0, 12), st.floats(1.0, 9.99))


@settings(max_examples=40, deadline=None)
@given(
    eps0=st.floats(1e-3, 100.0),
    n=_n_values(),
    log10_delta=st.floats(-300.0, math.log10(0.49)),
)
def test_bounds_are_ordered_monotone_and_above_the_exact_mechanism(eps0, n, log10_delta):
    delta = 10.0**log10_delta
    ub = shuffle_epsilon(n, delta, eps0=eps0)
    lb = shuffle_epsilon_lower(n, delta, eps0=eps0)
    assert 0.0 <= lb <= ub <= eps0 * (1 + 1e-12)  # log(e^eps0) may round a few ulps up
    assert shuffle_epsilon(n, delta, eps0=min(1.25 * eps0, 100.0)) >= ub  # monotone in eps0
    assert shuffle_epsilon(min(2 * n, 2 * 10**12), delta, eps0=eps0) <= ub  # monotone in n
    exact = binary_rr_epsilon(eps0, n, delta) if n <= 10**6 else None
    if exact is not None:
        assert ub >= exact  # (lb bounds the worst randomizer with these parameters, not binary RR)
    for method in UPPER_METHODS:
        try:
            value = shuffle_epsilon(n, delta, eps0=eps0, method=method)
        except ShuffleDPError:
            continue
        assert value >= lb * (1 - 1e-9) or value == 0.0 == lb, (method, value, lb)
        if exact is not None:
            assert value >= exact, (method, value, exact)


@pytest.mark.parametrize(
    "kwargs",
    [dict(eps0=800.0), dict(eps0=1e-300), dict(eps0=math.nan), dict(eps0=-1.0), dict(eps0=math.inf)],
)
def test_out_of_range_eps0_is_a_named_error(kwargs):
    with pytest.raises(ShuffleDPError, match="eps0"):
        shuffle_epsilon(10_000, 1e-6, **kwargs)


@pytest.mark.parametrize("delta", [5e-324, 1e-301, 0.0, 1.0, math.nan])
def test_out_of_range_delta_is_a_named_error(delta):
    with pytest.raises(ShuffleDPError, match="delta"):
        shuffle_epsilon(10_000, delta, eps0=2.0)


def test_huge_n_is_fast_and_valid():
    ub = shuffle_epsilon(10**12, 1e-6, eps0=2.0)
    lb = shuffle_epsilon_lower(10**12, 1e-6, eps0=2.0)
    assert 0 < lb <= ub <= lb * (1 + 1e-4)
    with pytest.raises(ShuffleDPError, match="2\\^53"):
        shuffle_epsilon(2**53 + 2, 1e-6, eps0=2.0)


def test_composition_at_the_edges_gives_a_number_or_a_reason():
    best = cp.best_composed_epsilon(10_000, 1e-6, 30_000, eps0=2.0)
    assert math.isfinite(best.epsilon) and best.epsilon <= best.candidates["basic"]
    assert np.isfinite(cp.composed_shuffle_epsilon(10_000, 1e-13, 5, eps0=2.0, method="best"))


@pytest.mark.parametrize("eps0", [354.0, 355.0, 400.0, 700.0])
def test_closed_forms_at_huge_eps0_are_inf_not_a_crash(eps0):
    for method in UPPER_METHODS:
        value = shuffle_epsilon(10_000, 1e-6, eps0=eps0, method=method)
        assert value == math.inf or value >= eps0 * (1 - 1e-9), (method, value)


def test_huge_round_counts_are_refused_by_tight_and_answered_by_best():
    with pytest.raises(cp.CompositionError, match="rounds"):
        cp.tight_composition_epsilon(10_000, 1e-6, 10**6, eps0=2.0)
    best = cp.best_composed_epsilon(10_000, 1e-6, 10**6, eps0=2.0)
    assert best.method in ("advanced", "basic") and "tight" in best.reasons
    # tiny delta: the PLD's round-off allowance exceeds it; tight says so instead of returning its cap
    tiny = cp.best_composed_epsilon(10_000, 1e-13, 5, eps0=2.0)
    assert tiny.candidates["tight"] == math.inf and "round-off" in tiny.reasons["tight"]
    from shuffledp.accounting import best_composed_epsilon  # exported where the README says

    assert best_composed_epsilon is cp.best_composed_epsilon
