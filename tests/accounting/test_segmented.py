"""Segmented paper §5.1: Lemma 3 parameters, Theorem 3, Eq. 7 and Proposition 1."""

import math

import numpy as np
import pytest
from scipy import special

from shuffledp.accounting import segmented as S
from shuffledp.accounting.variation_ratio import hockey_stick_divergence
from shuffledp.errors import OutsideRegimeError, PrivacyParameterError


def _protocol_divergence(lam, d, n_users, m, eps):
    """D_{e^eps} between the counts (C_t, C_t') of Algorithm 2 for a victim holding t vs t' (s = 1).

    Enumerated from the protocol itself: N = n_users * ceil(m) blanket calls, each landing on t
    (resp. t') with probability gamma / d; the victim's item is reported with probability lam.
    """
    calls = n_users * math.ceil(m)
    r = (m / math.ceil(m)) / d
    a = np.arange(calls + 1)[:, None]
    b = np.arange(calls + 1)[None, :]
    rest = calls - a - b
    with np.errstate(invalid="ignore", divide="ignore"):
        log_pmf = (
            special.gammaln(calls + 1) - special.gammaln(a + 1) - special.gammaln(b + 1) - special.gammaln(np.maximum(rest, 0) + 1)
            + (a + b) * math.log(r) + np.maximum(rest, 0) * math.log1p(-2 * r)
        )
    blank = np.where(rest >= 0, np.exp(log_pmf), 0.0)
    size = calls + 2
    P = np.zeros((size, size))
    Q = np.zeros((size, size))
    P[: calls + 1, : calls + 1] += (1 - lam) * blank
    Q[: calls + 1, : calls + 1] += (1 - lam) * blank
    P[1:, : calls + 1] += lam * blank  # the victim's t on the first count
    Q[: calls + 1, 1:] += lam * blank  # t' on the second
    return float(np.sum(np.maximum(P - math.exp(eps) * Q, 0.0)))


def _protocol_divergence_accurate(lam, d, n_users, m, eps):
    """`_protocol_divergence` summed cell by cell without cancellation (accurate far into the tail).

    For a + b <= N both P and Q are B(a, b) times (1 - lam) + lam (1 - 2r) {a, b} / ((N - a - b + 1) r),
    so P - e^eps Q has one factor B(a, b); on a + b = N + 1 only the victim's message explains
    the counts: P = lam B(a - 1, b), Q = lam B(a, b - 1).  Checked against 80-digit arithmetic.
    """
    calls = n_users * math.ceil(m)
    r = (m / math.ceil(m)) / d
    grow = math.exp(eps)
    a = np.arange(calls + 1, dtype=np.float64)[:, None]
    b = np.arange(calls + 1, dtype=np.float64)[None, :]
    rest = calls - a - b
    inside = rest >= 0
    rest0 = np.where(inside, rest, 0.0)
    log_pmf = (special.gammaln(calls + 1) - special.gammaln(a + 1) - special.gammaln(b + 1) - special.gammaln(rest0 + 1)
               + (a + b) * math.log(r) + special.xlogy(rest0, 1 - 2 * r))
    bracket = (1 - lam) * (1 - grow) + lam * (1 - 2 * r) / ((rest0 + 1) * r) * (a - grow * b)
    total = float(np.sum(np.where(inside, np.exp(log_pmf) * np.maximum(bracket, 0.0), 0.0)))
    log_top = special.gammaln(calls + 1) + calls * math.log(r)
    for top_a in range(1, calls + 2):  # a + b = N + 1 (a = 0 has P = 0)
        top_b = calls + 1 - top_a
        p = lam * math.exp(log_top - special.gammaln(top_a) - special.gammaln(top_b + 1))
        q = lam * math.exp(log_top - special.gammaln(top_a + 1) - special.gammaln(top_b)) if top_b >= 1 else 0.0
        total += max(p - grow * q, 0.0)
    return total


@pytest.mark.parametrize("lam,d,n_users,m", [(0.3, 8, 20, 1.0), (0.8, 5, 15, 2.5), (0.5, 10, 30, 0.4)])
def test_event_matches_protocol_enumeration(lam, d, n_users, m):
    event = S.item_event(lam, d, n_users, m)
    for eps in (0.1, 0.5, 1.5):
        exact = _protocol_divergence(lam, d, n_users, m, eps)
        low, high = hockey_stick_divergence(event.params, event.n, eps, gamma=event.gamma)
        assert low - 1e-12 <= exact <= high + 1e-12


def test_accurate_enumeration_against_high_precision():
    # reference values from the same sum in 80-digit arithmetic (mpmath)
    assert _protocol_divergence_accurate(0.05, 8, 20, 1.0, 1.5) == pytest.approx(3.80931e-17, rel=1e-5)
    assert _protocol_divergence_accurate(0.05, 8, 20, 1.0, 3.0) == pytest.approx(4.33681e-20, rel=1e-5)  # lam (1/8)^20
    assert _protocol_divergence_accurate(0.08, 10, 6, 1.5, 1.5) == pytest.approx(9.0079625e-12, rel=1e-7)
    for lam, d, n_users, m in [(0.3, 8, 20, 1.0), (0.05, 8, 20, 1.0)]:
        for eps in (0.0, 0.1):
            assert _protocol_divergence_accurate(lam, d, n_users, m, eps) == pytest.approx(
                _protocol_divergence(lam, d, n_users, m, eps), rel=1e-9)


#: lam >= 1/d (Lemma 3), gamma/d <= lam < 1/d (exact, slot rate gamma/(d lam)), lam < gamma/d (priced at gamma/d)
SMALL_RATES = [(0.3, 8, 20, 1.0, "exact"), (0.08, 10, 6, 1.5, "exact"), (0.06, 16, 8, 0.5, "exact"),
               (0.05, 8, 20, 1.0, "upper"), (0.001, 16, 10, 0.4, "upper"), (0.02, 10, 15, 2.5, "upper")]


@pytest.mark.parametrize("lam,d,n_users,m,kind", SMALL_RATES)
def test_small_rates_dominate_the_protocol_into_the_tail(lam, d, n_users, m, kind):
    # lambda < 1/d with q simply raised to 1 fell below the protocol's divergence for eps >= 1.5 here
    # (the event "all blankets land on the victim's item" has probability lam (gamma/d)^N)
    event = S.item_event(lam, d, n_users, m)
    for eps in (0.0, 0.5, 1.5, 3.0, 8.0):
        exact = _protocol_divergence_accurate(lam, d, n_users, m, eps)
        upper = hockey_stick_divergence(event.params, event.n, eps, gamma=event.gamma)[1]
        assert upper >= exact * (1 - 1e-9), (eps, exact, upper)
        if kind == "exact":
            assert upper <= exact * (1 + 1e-6) + 1e-300, (eps, exact, upper)


def _exact_epsilon(lam, d, n_users, m, delta):
    if _protocol_divergence_accurate(lam, d, n_users, m, 40.0) > delta:
        return math.inf
    lo, hi = 0.0, 40.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if _protocol_divergence_accurate(lam, d, n_users, m, mid) <= delta else (mid, hi)
    return hi


@pytest.mark.parametrize("lam,d,n_users,m", [(0.2, 3, 5, 1.0), (0.15, 2, 2, 1.0), (0.15, 2, 5, 2.0), (0.2, 4, 3, 1.5)])
def test_small_rates_never_undercut_the_exact_epsilon(lam, d, n_users, m):
    # few participants, lambda < 1/d, delta = 0.01/n: the q = 1 reading certified 0.81, 0.94, 0.37, ... here
    delta = 0.01 / n_users
    exact = _exact_epsilon(lam, d, n_users, m, delta)
    try:
        upper = S.user_epsilon(lam, d, n_users, m, 1, delta)
    except OutsideRegimeError:
        upper = math.inf
    assert upper >= exact * (1 - 1e-9), (exact, upper)


def test_lemma3_parameters():
    vr = S.poisson_item_parameters(0.25, 128)
    assert math.isinf(vr.p) and vr.beta == 0.25 and vr.q == 32.0
    assert S.poisson_item_parameters(0.001, 128).q == 1.0  # q >= 1 (conservative, see module docstring)


@pytest.mark.parametrize("d", [17, 128])
@pytest.mark.parametrize("n_users", [500, 5000])
@pytest.mark.parametrize("m", [0.3, 1.0, 2.5])
@pytest.mark.parametrize("lam", [0.1, 0.5, 1.0])
def test_s1_upper_and_lower_coincide(d, n_users, m, lam):
    delta = 1e-6
    lower = S.proposition1_lower(lam, d, n_users, m, delta)
    if math.isinf(lower):  # no epsilon at all (e.g. lam = 1, few blankets): the upper bound agrees
        with pytest.raises(OutsideRegimeError):
            S.user_epsilon(lam, d, n_users, m, 1, delta)
        return
    upper = S.user_epsilon(lam, d, n_users, m, 1, delta)
    assert lower <= upper <= lower * (1 + 1e-6)
    # the literal n' = n ceil(m) of Theorem 3 (one slot fewer) is never smaller
    literal = S.VariationRatioAccountant().compose(S.user_event(lam, d, n_users, m, 1, slots="theorem3"))
    assert literal.get_epsilon(delta) >= upper


@pytest.mark.parametrize("s", [2, 4, 8])
def test_group_event_agrees_with_theorem3(s):
    lam, d, n_users, m, delta = 0.4, 128, 5000, 2.0, 1e-6
    total = S.user_epsilon(lam, d, n_users, m, s, delta)
    eps, dlt = S.theorem3_guarantee(lam, d, n_users, m, s, total / s)
    assert eps == pytest.approx(total) and dlt <= delta
    # and the accountant does not give away much: a slightly smaller epsilon fails the theorem's delta
    assert S.theorem3_guarantee(lam, d, n_users, m, s, total / s * (1 - 1e-4))[1] > delta
    assert S.level_constraint_met(lam, total, delta, d, n_users, m, s)
    assert not S.level_constraint_met(lam, total * (1 - 1e-4), delta, d, n_users, m, s)


def test_more_blankets_or_smaller_lambda_help():
    base = S.user_epsilon(0.5, 128, 5000, 1.0, 4, 1e-6)
    assert S.user_epsilon(0.5, 128, 5000, 2.0, 4, 1e-6) < base
    assert S.user_epsilon(0.25, 128, 5000, 1.0, 4, 1e-6) < base


@pytest.mark.parametrize(
    "kwargs,name",
    [({"lam": 0.0}, "lam"), ({"lam": 1.5}, "lam"), ({"m": 0.0}, "m"), ({"m": math.inf}, "m"), ({"m": -1}, "m"), ({"s": 200}, "s")],
)
def test_bad_input_named(kwargs, name):
    args = {"lam": 0.5, "d": 128, "n_users": 100, "m": 1.0, "s": 2} | kwargs
    with pytest.raises(PrivacyParameterError, match=rf"^{name}\b"):
        S.user_event(**args)


@pytest.mark.parametrize("level", [math.nan, -1.0, math.inf])
def test_level_constraint_names_the_level(level):
    with pytest.raises(PrivacyParameterError, match=r"^level must be a finite number >= 0, got"):
        S.level_constraint_met(0.5, level, 1e-6, 10, 1000, 2.5, 2)


@pytest.mark.parametrize("m", [1e-300, 1e-305, 5e-7, 0.0])
def test_blanket_rates_below_the_floor_are_named_errors(m):
    """Stranger pass: m ~ 1e-305 overflowed scipy inside the engine (a traceback)."""
    from shuffledp.accounting.segmented import M_FLOOR, check_blanket_rate
    from shuffledp.protocols.segmented import optimize_parameters

    with pytest.raises(PrivacyParameterError, match=r"must lie in \[1e-06, 10000\]"):
        optimize_parameters([0.5, 1.0, 2.0], 1e-6, [1250, 2500, 1250], 128, 4, m=m)
    assert check_blanket_rate(M_FLOOR) == 1e-6
