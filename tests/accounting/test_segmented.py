"""Segmented paper §5.1: Lemma 3 parameters, Theorem 3, Eq. 7 and Proposition 1."""

import math

import numpy as np
import pytest
from scipy import special

from shuffledp.accounting import segmented as S
from shuffledp.accounting.release import release_divergence
from shuffledp.errors import OutsideRegimeError, PrivacyParameterError
from shuffledp.shuffle_audit import iid_shuffle_delta


def _protocol_divergence(lam, d, n_users, m, eps):
    """D_{e^eps} of what Algorithm 2 shows of a victim holding t vs t' (s = 1): the counts of
    messages on t, on t' and on the d - 2 other items (by symmetry their split among those items is
    drawn alike under both inputs), from N = n_users * ceil(m) blanket calls, each landing on a given
    item with probability r = gamma / d, and the victim's message (probability lam).  The number of
    calls is public, so unused calls are determined by the three counts.  The others' own reports
    are left out: independent of the victim's input, they are a post-processing of this view.

    Cell by cell in log space (P (1 - e^(eps + log Q - log P)) where P > e^eps Q), so each cell is
    accurate to a few ulps and the sum stays accurate far into the tail (no cancellation).
    """
    calls = n_users * math.ceil(m)
    gamma = m / math.ceil(m)
    r = gamma / d
    counts = np.arange(calls + 2, dtype=np.float64)
    a, b, c = counts[:, None, None], counts[None, :, None], counts[None, None, :]

    def log_blankets(a, b, c):  # log Mult(N; r, r, (d - 2) r, 1 - gamma) at (a, b, c, N - a - b - c)
        rest = calls - a - b - c
        ok = (a >= 0) & (b >= 0) & (c >= 0) & (rest >= 0)
        a0, b0, c0, rest0 = (np.where(ok, v, 0.0) for v in (a, b, c, rest))
        with np.errstate(divide="ignore", invalid="ignore"):
            value = (
                special.gammaln(calls + 1)
                - special.gammaln(a0 + 1)
                - special.gammaln(b0 + 1)
                - special.gammaln(c0 + 1)
                - special.gammaln(rest0 + 1)
                + (a0 + b0) * math.log(r)
                + special.xlogy(c0, (d - 2) * r)
                + special.xlogy(rest0, 1.0 - gamma)
            )
        return np.where(ok & np.isfinite(value), value, -np.inf)

    with np.errstate(divide="ignore"):
        stay, send = math.log1p(-lam) if lam < 1 else -math.inf, math.log(lam)
    here = log_blankets(a, b, c)
    log_p = np.logaddexp(stay + here, send + log_blankets(a - 1, b, c))  # the victim's message on t
    log_q = np.logaddexp(stay + here, send + log_blankets(a, b - 1, c))  # on t'
    with np.errstate(invalid="ignore"):  # -inf - -inf on cells neither input reaches
        gap = eps + log_q - log_p
        wins = np.isfinite(log_p) & (gap < 0)
    return float(np.sum(np.exp(log_p[wins]) * -np.expm1(gap[wins])))


def _certified(event, eps):
    """(lower, upper) of the release's proven pair (the accountant's bounds) at eps."""
    div = release_divergence(event.params, event.n, event.gamma, 1e-18)
    return div.lower(eps), div.upper(eps)


@pytest.mark.parametrize("lam,d,n_users,m", [(0.3, 8, 20, 1.0), (0.2, 5, 12, 2.5), (0.5, 2, 30, 0.4)])
def test_three_counts_match_the_histogram_enumeration(lam, d, n_users, m):
    # the same view as one more participant among N blanket calls with law (none, t, t', other)
    calls, gamma = n_users * math.ceil(m), m / math.ceil(m)
    blanket = [1 - gamma, gamma / d, gamma / d, (d - 2) * gamma / d]
    for eps in (0.0, 0.3, 1.0):
        reference = iid_shuffle_delta([1 - lam, lam, 0, 0], [1 - lam, 0, lam, 0], blanket, calls + 1, eps)
        assert _protocol_divergence(lam, d, n_users, m, eps) == pytest.approx(reference, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("lam,d,n_users,m", [(0.3, 8, 20, 1.0), (0.8, 5, 15, 2.5), (0.5, 10, 30, 0.4)])
def test_event_matches_protocol_enumeration(lam, d, n_users, m):
    event = S.item_event(lam, d, n_users, m)
    for eps in (0.1, 0.5, 1.5):
        exact = _protocol_divergence(lam, d, n_users, m, eps)
        low, high = _certified(event, eps)
        assert low - 1e-12 <= exact <= high + 1e-12
        assert high <= exact * (1 + 1e-6) + 1e-15  # unblocked common counts: the pair is the view itself


#: lam >= 1/d (Lemma 3), gamma/d <= lam < 1/d (exact, slot rate gamma/(d lam)), lam < gamma/d (priced at gamma/d)
SMALL_RATES = [
    (0.3, 8, 20, 1.0, "exact"),
    (0.08, 10, 6, 1.5, "exact"),
    (0.06, 16, 8, 0.5, "exact"),
    (0.05, 8, 20, 1.0, "upper"),
    (0.001, 16, 10, 0.4, "upper"),
    (0.02, 10, 15, 2.5, "upper"),
]


@pytest.mark.parametrize("lam,d,n_users,m,kind", SMALL_RATES)
def test_small_rates_dominate_the_protocol_into_the_tail(lam, d, n_users, m, kind):
    # lambda < 1/d with q simply raised to 1 fell below the protocol's divergence for eps >= 1.5 here
    # (the event "all blankets land on the victim's item" has probability lam (gamma/d)^N)
    event = S.item_event(lam, d, n_users, m)
    for eps in (0.0, 0.5, 1.5, 3.0, 8.0):
        exact = _protocol_divergence(lam, d, n_users, m, eps)
        upper = _certified(event, eps)[1]
        assert upper >= exact * (1 - 1e-9), (eps, exact, upper)
        if kind == "exact":
            assert upper <= exact * (1 + 1e-6) + 1e-300, (eps, exact, upper)


def _exact_epsilon(lam, d, n_users, m, delta):
    if _protocol_divergence(lam, d, n_users, m, 40.0) > delta:
        return math.inf
    lo, hi = 0.0, 40.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if _protocol_divergence(lam, d, n_users, m, mid) <= delta else (mid, hi)
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
def test_s1_upper_is_above_proposition1_and_close_when_the_message_count_is_hidden(d, n_users, m, lam):
    delta = 1e-6
    lower = S.proposition1_lower(lam, d, n_users, m, delta)
    try:
        upper = S.user_epsilon(lam, d, n_users, m, 1, delta)
    except OutsideRegimeError:
        upper = math.inf
    assert lower <= upper
    if math.isinf(upper):
        return
    if m != math.ceil(m):  # gamma < 1: the number of messages is random and hides the victim's; the pairs nearly agree
        assert upper <= lower * 1.03
    elif lam < 1:  # gamma = 1: the message count is public and tells whether the victim sent (Proposition 1 misses it)
        assert upper > lower * 1.5
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
    [
        ({"lam": 0.0}, "lam"),
        ({"lam": 1.5}, "lam"),
        ({"m": 0.0}, "m"),
        ({"m": math.inf}, "m"),
        ({"m": -1}, "m"),
        ({"s": 200}, "s"),
    ],
)
def test_bad_input_named(kwargs, name):
    args = {"lam": 0.5, "d": 128, "n_users": 100, "m": 1.0, "s": 2} | kwargs
    with pytest.raises(PrivacyParameterError, match=rf"^{name}\b"):
        S.user_event(**args)


@pytest.mark.parametrize("level", [math.nan, -1.0, math.inf])
def test_level_constraint_names_the_level(level):
    with pytest.raises(PrivacyParameterError, match=r"^level must be a number in \[0, inf\); got"):
        S.level_constraint_met(0.5, level, 1e-6, 10, 1000, 2.5, 2)


@pytest.mark.parametrize("m", [1e-300, 1e-305, 5e-7, 0.0])
def test_blanket_rates_below_the_floor_are_named_errors(m):
    """Stranger pass: m ~ 1e-305 overflowed scipy inside the engine (a traceback)."""
    from shuffledp.accounting.segmented import M_FLOOR, check_blanket_rate
    from shuffledp.protocols.segmented import optimize_parameters

    with pytest.raises(PrivacyParameterError, match=r"must be a number in \[1e-6, 10000\]; got"):
        optimize_parameters([0.5, 1.0, 2.0], 1e-6, [1250, 2500, 1250], 128, 4, m=m)
    assert check_blanket_rate(M_FLOOR) == 1e-6


@pytest.mark.parametrize(
    "lam,d,n_users,m", [(1e-9, 128, 2000, 40.0), (1e-4, 128, 5000, 40.0), (0.01, 16, 3000, 2.0), (1e-6, 64, 4000, 2.5)]
)
def test_the_divergence_never_exceeds_the_reporting_rate(lam, d, n_users, m):
    # D_{e^eps} <= TV <= lam: the victim differs only when it sends.  With an integer m every remaining
    # blanket lands on the two items (rho = 1), and a block that joined the top total (only the victim's
    # message explains it) to the one below gave 0.02 for lam = 1e-9
    event = S.item_event(lam, d, n_users, m)
    div = release_divergence(event.params, event.n, event.gamma, 1e-18)
    for eps in (0.0, 0.01, 0.1, 1.0):
        assert div.upper(eps) <= lam * (1 + 1e-9) + 1e-17, eps
