"""Metric-paper accounting (shuffledp.accounting.metric) against 60-digit mpmath and exact laws."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from shuffledp.accounting import metric as M
from shuffledp.accounting.metric import sgdl as SGDL
from shuffledp.errors import PrivacyParameterError, ValidityConditionError

mp.mp.dps = 60


# --- 60-digit references ----------------------------------------------------------------------------------


def mp_series_pmf(r: int, beta, p: float):
    """The paper's defining series (§4.1), summed term by term at 60 digits until the terms are negligible."""
    m, beta, p = abs(r), mp.mpf(beta), mp.mpf(p)
    term = mp.binomial(beta + m - 1, m) * p**m  # k = m
    total, k = mp.mpf(0), m
    while True:
        total += term
        nxt = term * (beta + k) / (k + 1) * (beta + k - m) / (k + 1 - m) * p * p
        if nxt < term and nxt < total * mp.mpf(10) ** -65:
            break
        term, k = nxt, k + 1
    return (1 - p) ** (2 * beta) * total


def mp_pfaff_pmf(r: int, n: int, p: float):
    """The finite positive sum (Pfaff form) at 60 digits, terms by exact ratio recurrence."""
    m, p = abs(r), mp.mpf(p)
    q = p * p / (1 - p * p)
    term, total = mp.binomial(n + m - 1, m), mp.mpf(0)
    for j in range(n):
        total += term
        term = term * (n - 1 - j) * (n + j) * q / ((m + 1 + j) * (j + 1))
    return ((1 - p) / (1 + p)) ** n * p**m * total


def series_terms(r: int, n: int, p: float) -> float:
    """Rough count of terms the defining series needs (peak plus tail)."""
    z = p * p
    return 2 * n * z / (1 - z) + 60 * math.sqrt(2 * n + 1) / (1 - z)


# --- SGDL pmf ------------------------------------------------------------------------------------------------

_RNG = np.random.default_rng(20260311)
_GRID = [
    (1, 0.3, 5),
    (2, 0.999, 0),
    (7, 0.9, -3),
    (50, 0.7, 120),
    (300, 0.95, 40),
    (1000, 0.5, 10_000),
    (4096, 0.99, 500),
    (4097, 0.01, 3),
    (10_000, 0.5, 0),
    (10_000, 0.999, -3),
    (10_000, 0.2, 10_000),
    (10_000, 0.9999, 10_000),
    (10_000, 1e-6, 10_000),
    (9_999, 0.999999, 1),
]
_GRID += [
    (int(n), float(p), int(r))
    for n, p, r in zip(
        np.unique(np.round(10 ** _RNG.uniform(0, 4, 10))).astype(int),
        _RNG.uniform(0.001, 0.999, 10),
        _RNG.integers(-10_000, 10_001, 10),
    )
]


@pytest.mark.parametrize("n, p, r", _GRID)
def test_sgdl_pmf_matches_60_digit_summation(n, p, r):
    ours = M.log_sgdl_pmf([r], n, p)[0]
    ref = mp_pfaff_pmf(r, n, p)
    assert abs(ours - float(mp.log(ref))) <= 1e-10  # relative error of the pmf
    if series_terms(r, n, p) < 20_000:  # the closed form is the paper's series (independent check of the identity)
        assert abs(ref / mp_series_pmf(r, n, p) - 1) < mp.mpf(10) ** -40


@pytest.mark.parametrize(
    "beta, p, r", [(0.01, 0.9, 0), (0.01, 0.9, 7), (1 / 150, 0.905, 1), (0.001, 0.5, 30), (0.5, 0.99, 200)]
)
def test_sgdl_pmf_fractional_beta_matches_series(beta, p, r):
    assert abs(M.log_sgdl_pmf([r], beta, p)[0] - float(mp.log(mp_series_pmf(r, beta, p)))) <= 1e-10


@pytest.mark.parametrize("beta, p", [(1, 0.6), (3, 0.8), (40, 0.5), (0.05, 0.9)])
def test_sgdl_moments(beta, p):
    r = np.arange(-3000, 3001)
    pmf = M.sgdl_pmf(r, beta, p)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
    assert (r * pmf).sum() == pytest.approx(0.0, abs=1e-12)
    assert (r * r * pmf).sum() == pytest.approx(2 * beta * p / (1 - p) ** 2, rel=1e-10)  # twice NB's variance


def test_sgdl_two_is_convolution_of_discrete_laplace():
    p = 0.7
    u = np.arange(-400, 401)
    dl = (1 - p) / (1 + p) * p ** np.abs(u)
    conv = np.convolve(dl, dl)[400:1201]  # outcomes -400..400
    np.testing.assert_allclose(M.sgdl_pmf(u, 2, p)[200:601], conv[200:601], rtol=1e-12)


@pytest.mark.parametrize("beta", [1.5, 0, -1, "x"])
def test_sgdl_bad_beta(beta):
    with pytest.raises(PrivacyParameterError, match="beta"):
        M.log_sgdl_pmf([0], beta, 0.5)


def test_sgdl_bad_outcome_and_p():
    with pytest.raises(PrivacyParameterError, match="r"):
        M.log_sgdl_pmf([0.5], 3, 0.5)
    with pytest.raises(PrivacyParameterError, match="p"):
        M.log_sgdl_pmf([0], 3, 1.0)


# --- Geo-Shuffle --------------------------------------------------------------------------------------------


def mp_theorem_41(eps_geo: float, delta: float, n: int, distances) -> list:
    """ln g(-alpha, d)/d of Theorem 4.1, every step at 60 digits (pmf by the defining series)."""
    e, delta = mp.mpf(eps_geo), mp.mpf(delta)
    p, t = mp.exp(-e), 2 * e / mp.sqrt(n)
    mgf = ((1 - p) ** 2 / ((1 - p * mp.exp(t)) * (1 - p * mp.exp(-t)))) ** n
    alpha = -mp.log(delta / 4 / mgf) / t
    out = []
    for d in distances:
        a, b = int(mp.floor(-alpha - mp.mpf(d) / 2)), int(mp.floor(-alpha + mp.mpf(d) / 2))
        pa, pb = mp_series_pmf_mp(a, n, p), mp_series_pmf_mp(b, n, p)
        out.append(abs(mp.log(pa / pb)) / d)
    return out


def mp_series_pmf_mp(r: int, n: int, p):
    """Defining series with an mp p (no float rounding of e^-eps_geo)."""
    m = abs(r)
    term, total, k = mp.binomial(n + m - 1, m) * p**m, mp.mpf(0), m
    while True:
        total += term
        nxt = term * (n + k) / (k + 1) * (n + k - m) / (k + 1 - m) * p * p
        if nxt < term and nxt < total * mp.mpf(10) ** -65:
            break
        term, k = nxt, k + 1
    return (1 - p) ** (2 * n) * total


@pytest.mark.parametrize("eps_geo, n", [(0.5, 300), (0.2, 100), (1.0, 50), (2.0, 20), (0.8, 1000)])
def test_geo_shuffle_epsilon_matches_mpmath_theorem(eps_geo, n):
    ref = max(mp_theorem_41(eps_geo, 1e-4, n, range(1, 9)))
    assert M.geo_shuffle_epsilon(eps_geo, 1e-4, n, method="theorem-4.1", max_distance=8) == pytest.approx(
        float(ref), rel=1e-6
    )


@pytest.mark.parametrize("eps_geo, n", [(0.2, 100), (0.8, 100), (0.8, 10_000), (0.5, 300), (2.0, 50)])
def test_conjecture_b3_shape_on_the_papers_settings(eps_geo, n):
    """Figures 9-12 (n = 100, 10^4; eps_geo = 0.2, 0.8): over d = 1..50 the odd-d and the even-d values each
    decrease in d (the two lines of Figure 9), so the maximum is at d = 1 or d = 2, and the two differ little."""
    by_d = M.geo_shuffle_epsilons_by_distance(eps_geo, 1e-4, n, 50)
    assert np.all(np.diff(by_d[0::2]) < 0) and np.all(np.diff(by_d[1::2]) < 0)
    assert int(np.argmax(by_d)) in (0, 1)
    assert by_d.max() <= by_d[0] * (1 + 2e-2)
    if (eps_geo, n) == (0.2, 100):  # Figure 9's own setting: d = 1 is the maximiser
        assert int(np.argmax(by_d)) == 0


def test_conjecture_b3_fails_where_alphas_floor_favours_d2():
    """At n = 50, eps_geo = 1, d = 2 gives a larger value than d = 1 (also at 60 digits), and at n = 10^4,
    eps_geo = 0.0177 the maximum over 1..50 is at d = 2 (at 60 digits the odd and the even d each decrease; the
    float values once put it at d = 12 through rounding): so we maximise over d instead of taking d = 1."""
    ours = M.geo_shuffle_epsilons_by_distance(1.0, 1e-4, 50, 50)
    ref = mp_theorem_41(1.0, 1e-4, 50, [1, 2])
    assert ref[1] > ref[0]
    assert ours[1] > ours[0]
    assert M.geo_shuffle_epsilon_paper(1.0, 1e-4, 50) == pytest.approx(float(ref[1]), rel=1e-9)
    assert int(np.argmax(M.geo_shuffle_epsilons_by_distance(0.0177, 1e-4, 10_000, 50))) == 1


def test_geo_shuffle_epsilon_small_n_and_bounds():
    for n in (1, 2, 4):
        assert M.geo_shuffle_epsilon_paper(0.7, 1e-4, n) == 0.7  # Theorem 4.1 undefined: the pure eps_geo
    with pytest.raises(ValidityConditionError, match="n >= 5"):
        M.geo_shuffle_alpha(0.7, 1e-4, 4)
    values = [M.geo_shuffle_epsilon_paper(0.5, 1e-4, n) for n in (5, 50, 500, 5000)]
    assert all(v < 0.5 for v in values) and values == sorted(values, reverse=True)  # amplification grows with n


@pytest.mark.parametrize("target, n", [(0.1, 50), (0.2, 100), (0.5, 23), (0.017, 1000), (1.0, 7)])
def test_geo_shuffle_inverse_round_trips_never_above(target, n):
    eps_geo = M.geo_shuffle_local_epsilon(target, 1e-4, n, method="theorem-4.1")
    reached = M.geo_shuffle_epsilon_paper(eps_geo, 1e-4, n)
    assert reached <= target
    assert reached >= target * (1 - 1e-5) or M.geo_shuffle_epsilon_paper(eps_geo * (1 + 1e-6), 1e-4, n) > target


def test_geo_shuffle_c_covers_delta_half():
    for eps_geo, n, delta in [(0.2, 100, 1e-4), (1.0, 10, 1e-2), (0.017, 1000, 5e-5)]:
        c, a = M.geo_shuffle_c(eps_geo, delta, n), math.exp(-eps_geo)
        outside = 2 * a ** (c + 1) / (1 + a)  # exact Pr[|N| > c] of the geometric noise
        assert -math.expm1(n * math.log1p(-outside)) <= delta / 2
        assert 2 * a ** (c - 1) / (1 + a) > -math.expm1(math.log1p(-delta / 2) / n)  # Prop. 2's bound fails at c - 1


# --- SGDL-Shuffle -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("eps, n, delta", [(0.1, 100, 1e-4), (0.5, 50, 1e-4), (1.0, 1000, 1e-6), (0.2, 10, 1e-2)])
def test_sgdl_shuffle_c_covers_delta(eps, n, delta):
    c = M.sgdl_shuffle_c(eps, delta, n)
    r = np.arange(-(c + 20_000), c + 20_001)
    pmf = M.sgdl_pmf(r, 1.0 / n, math.exp(-eps))
    outside = pmf[np.abs(r) > c].sum() + (1 - pmf.sum())  # exact truncation probability of one user
    assert -math.expm1(n * math.log1p(-outside)) <= delta


def test_sgdl_shuffle_c_of_the_paper_is_too_small():
    """Lemma C.1 as printed gives c = 3 at n = 100, eps = 0.1, delta = 1e-4: truncation is then likely."""
    n, eps, delta = 100, 0.1, 1e-4
    c = M.sgdl_shuffle_c_paper(eps, delta, n)
    r = np.arange(-200_000, 200_001)
    pmf = M.sgdl_pmf(r, 1.0 / n, math.exp(-eps))
    outside = pmf[np.abs(r) > c].sum()
    assert -math.expm1(n * math.log1p(-outside)) > 0.5
    assert M.sgdl_shuffle_c(eps, delta, n) > c


@pytest.mark.parametrize("eps_s, n", [(0.1, 150), (0.5, 20), (1.0, 1000)])
def test_sgdl_local_epsilon_matches_mpmath(eps_s, n):
    p = mp.exp(-mp.mpf(eps_s))
    ref = max(
        abs(
            mp.log(
                mp_series_pmf(int(math.floor(-d / 2)), mp.mpf(1) / n, float(p))
                / mp_series_pmf(int(math.floor(d / 2)), mp.mpf(1) / n, float(p))
            )
        )
        / d
        for d in range(1, 6)
    )
    assert M.sgdl_shuffle_local_epsilon(eps_s, n, max_distance=5) == pytest.approx(float(ref), rel=1e-8)


def test_figure_6_geo_keeps_far_stronger_local_privacy():
    for n in (50, 150, 500):
        for method in ("theorem-4.1", "certified"):
            eps = M.compromised_local_epsilons(0.1, 0.01, n, 1000, geo_method=method)
            assert eps["sgdl-shuffle"] > 3 * eps["geo-shuffle"]


# --- RR-Shuffle ---------------------------------------------------------------------------------------------


def test_rr_shuffle_epsilon_formula_and_validity():
    delta, p, k = 1e-4, 0.5, 100
    lam_min = 14 * math.log(4 / delta)
    n_min = math.ceil(lam_min / (p * k))
    lam = p * n_min * k
    expected = math.sqrt(32 * math.log(4 / delta) / (lam - math.sqrt(2 * lam * math.log(2 / delta))))
    assert M.rr_shuffle_epsilon(delta, p, k, n_min, method="theorem-3.1") == pytest.approx(expected, rel=1e-14)
    with pytest.raises(ValidityConditionError, match=f"n >= {n_min}") as info:
        M.rr_shuffle_epsilon(delta, p, k, n_min - 1, method="theorem-3.1")
    assert info.value.minimum_n == n_min
    assert info.value.maximum_epsilon == pytest.approx(
        math.sqrt(32 * math.log(4 / delta) / (lam_min - math.sqrt(2 * lam_min * math.log(2 / delta))))
    )


@pytest.mark.parametrize("eps, n, k", [(0.1, 100, 1000), (0.5, 50, 1000), (1.0, 10, 100), (3.0, 1000, 10)])
def test_rr_shuffle_probability_round_trip(eps, n, k):
    p = M.rr_shuffle_probability(eps, 1e-4, k, n, method="theorem-3.1")
    got = M.rr_shuffle_epsilon(1e-4, p, k, n, method="theorem-3.1")
    assert got <= eps
    assert got >= eps * (1 - 1e-9) or p * n * k == pytest.approx(M.rr_minimum_lambda(1e-4))


def test_rr_shuffle_probability_names_minimum_n():
    with pytest.raises(ValidityConditionError, match="n >= 35") as info:
        M.rr_shuffle_probability(0.1, 1e-4, 1000, 20, method="theorem-3.1")
    assert info.value.minimum_n == 35
    M.rr_shuffle_probability(0.1, 1e-4, 1000, 35, method="theorem-3.1")  # works there


def test_rr_local_epsilon_validity():
    delta, k = 0.01, 1000
    lam_min = 14 * math.log(4 / delta)
    assert M.rr_shuffle_local_epsilon(delta, 0.5, k, method="theorem-7.1") == pytest.approx(
        math.sqrt(32 * math.log(4 / delta) / (500 - math.sqrt(1000 * math.log(2 / delta))))
    )
    with pytest.raises(ValidityConditionError, match="p >=") as info:
        M.rr_shuffle_local_epsilon(delta, 0.05, k, method="theorem-7.1")
    assert info.value.minimum_p == pytest.approx(lam_min / k)


# --- two dimensions ------------------------------------------------------------------------------------------


def test_axis_budget_and_planar_guarantee_invert():
    eps_axis, delta_axis = M.axis_budget(0.15, 1e-4)
    assert eps_axis == pytest.approx(0.15 / math.sqrt(2)) and delta_axis == 5e-5
    assert M.planar_guarantee(eps_axis, delta_axis) == pytest.approx((0.15, 1e-4))


# --- exact divergence of the shifted SGDL sum (where Theorem 4.1 holds, and where not) ----------------------


def test_sgdl_shift_divergence_matches_brute_force():
    p = math.exp(-0.3)
    u = np.arange(-4000, 4001)
    pmf = M.sgdl_pmf(u, 3, p)
    for eps, d in [(0.1, 1), (0.05, 4), (0.2, 30)]:
        brute = np.maximum(pmf[d:] - math.exp(eps * d) * pmf[:-d], 0).sum()
        assert M.sgdl_shift_divergence(eps, d, 3, p) == pytest.approx(brute, rel=1e-9, abs=1e-17)
    # the discrete Laplace is eps_geo-d_R-private: no divergence at eps = eps_geo, for every d
    assert M.sgdl_shift_divergence(0.3, 17, 1, p) <= 1e-14  # float round-off of equal terms only


def test_theorem_41_holds_at_small_distances_only():
    """Theorem 4.1's eps (n = 100, eps_geo = 0.2, delta = 1e-4) meets delta/2 on the untruncated sum at d = 1,
    but not at d = 500: Definition 4 has one delta for every distance, and the proof's window moves with d."""
    n, eps_geo, delta = 100, 0.2, 1e-4
    eps = M.geo_shuffle_epsilon_paper(eps_geo, delta, n)
    p = math.exp(-eps_geo)
    assert M.sgdl_shift_divergence(eps, 1, n, p) <= delta / 2
    assert M.sgdl_shift_divergence(eps, 500, n, p) > 100 * delta


def test_variation_ratio_beside_theorem_41():
    """The variation-ratio analysis (q = e^(eps_geo k)) is tighter for small eps_geo k, Theorem 4.1 otherwise."""
    assert M.geo_shuffle_variation_ratio_epsilon(0.2, 1e-4, 10_000, 1) < M.geo_shuffle_epsilon_paper(0.2, 1e-4, 10_000)
    assert M.geo_shuffle_variation_ratio_epsilon(0.2, 1e-4, 1000, 1000) > 5 * M.geo_shuffle_epsilon_paper(
        0.2, 1e-4, 1000
    )
    # more blankets never hurt; the pair's epsilon never exceeds eps_geo d
    values = [M.geo_shuffle_variation_ratio_epsilon(1.0, 1e-4, n, 3, distance=2) for n in (100, 1000, 10_000)]
    assert values == sorted(values, reverse=True) and values[0] <= 2.0
    with pytest.raises(PrivacyParameterError, match="distance must be at most k=3"):
        M.geo_shuffle_variation_ratio_epsilon(1.0, 1e-4, 100, 3, distance=4)


# --- Geo-Shuffle, certified: every pair of datasets of the truncated protocol, by brute force ----------------


def _user_pmf(x: int, eps_geo: float, c: int, k: int) -> np.ndarray:
    """Law of x' = clip(x + N + c, 0, k + 2c), N ~ G(0, eps_geo) (Eq. 3), in closed form."""
    p, w = math.exp(-eps_geo), k + 2 * c
    pmf = (1 - p) / (1 + p) * p ** np.abs(np.arange(w + 1) - x - c)
    pmf[0], pmf[w] = p ** (x + c) / (1 + p), p ** (w - x - c) / (1 + p)
    return pmf


def _hockey(P: np.ndarray, Q: np.ndarray, factor: float) -> float:
    return float(np.maximum(P - factor * Q, 0.0).sum())


def _exact_worst_by_distance(eps_geo: float, delta: float, n: int, k: int) -> dict[int, float]:
    """Over every pair of datasets in {0..k}^n: the smallest eps with both hockey-stick divergences of the released
    count (Proposition 1) <= delta at e^(eps d), d the Manhattan distance; the worst pair per d (bisection, from below)."""
    import itertools

    c = M.geo_shuffle_c(eps_geo, delta, n)
    sets = list(itertools.combinations_with_replacement(range(k + 1), n))  # the count depends on the multiset only
    law = {}
    for s in sets:
        law[s] = np.ones(1)
        for x in s:
            law[s] = np.convolve(law[s], _user_pmf(x, eps_geo, c, k))
    worst: dict[int, float] = {}
    for s, t in itertools.combinations(sets, 2):
        d = int(np.abs(np.array(s) - np.array(t)).sum())  # sorted tuples: the closest orderings
        P, Q = law[s], law[t]
        lo, hi = 0.0, 2 * eps_geo
        for _ in range(50):
            mid = (lo + hi) / 2
            ok = max(_hockey(P, Q, math.exp(mid * d)), _hockey(Q, P, math.exp(mid * d))) <= delta
            lo, hi = (lo, mid) if ok else (mid, hi)
        worst[d] = max(worst.get(d, 0.0), lo)
    return worst


@pytest.mark.parametrize("eps_geo, delta, n, k", [(2.0, 1e-4, 5, 4), (1.0, 1e-4, 4, 3)])
def test_certified_epsilon_covers_every_pair_and_theorem_41_does_not(eps_geo, delta, n, k):
    worst = _exact_worst_by_distance(eps_geo, delta, n, k)
    assert sorted(worst) == list(range(1, n * k + 1))
    certified = M.geo_shuffle_epsilon(eps_geo, delta, n, k)
    assert all(certified >= e for e in worst.values())
    assert certified < eps_geo  # and it is not the trivial bound here
    assert worst[1] < worst[n * k]  # the exact epsilon grows with the distance: one window cannot serve all d
    if n >= 5:  # Theorem 4.1 as printed fails on the far pairs of the real protocol
        paper = M.geo_shuffle_epsilon(eps_geo, delta, n, k, method="theorem-4.1")
        assert paper < max(worst.values())
        assert paper > worst[1]  # ... while it does hold at d = 1


def test_certified_epsilon_is_eps_geo_when_the_domain_outgrows_the_padding():
    """k > 2c: T's supports part at D > 2nc, so nothing below eps_geo is certified (the paper's settings)."""
    c = M.geo_shuffle_c(0.2, 1e-4, 100)
    assert 2 * c < 1000
    assert M.geo_shuffle_epsilon(0.2, 1e-4, 100, 1000) == 0.2
    assert M.geo_shuffle_epsilon(0.2, 1e-4, 100) == 0.2  # k unknown: values unbounded
    # the exact untruncated sum needs nearly eps_geo at D = 10^4 already (Theorem 4.1 gives 0.0665)
    assert M.sgdl_shift_divergence(0.15, 10_000, 100, math.exp(-0.2)) > 1e-4


def test_conditioned_noise_is_the_truncated_convolution():
    pmf, inside = M.geo_shuffle_conditioned_noise(1.0, 3, 2)
    p = math.exp(-1.0)
    one = p ** np.abs(np.arange(-3, 4))
    np.testing.assert_allclose(pmf, np.convolve(one, one) / one.sum() ** 2, rtol=1e-14)
    assert inside == pytest.approx((one.sum() * (1 - p) / (1 + p)) ** 2, rel=1e-14)


def test_certified_inverse_and_bad_method():
    eps_geo = M.geo_shuffle_local_epsilon(0.8, 1e-4, 20, 3)
    assert M.geo_shuffle_epsilon(eps_geo, 1e-4, 20, 3) <= 0.8 < eps_geo
    assert M.geo_shuffle_local_epsilon(0.1, 1e-4, 300, 1000) == 0.1
    with pytest.raises(PrivacyParameterError, match="method must be one of certified, theorem-4.1"):
        M.geo_shuffle_epsilon(0.5, 1e-4, 10, 3, method="thm")


# --- the same flaw elsewhere: Theorems 5.1 and 3.1 compared with the released count of far-apart datasets ------


def test_theorem_51_fails_for_far_datasets_through_truncation():
    """SGDL-Shuffle(eps = 1, delta = 1e-4, n = 5) on {0..20}: all-zeros vs all-20 (d = 100).  Without truncation the
    count would be Geo-Central (pure eps); with each user clipped to [0, k + 2c] it is not (eps, delta) at e^(eps d)."""
    eps, delta, n, k = 1.0, 1e-4, 5, 20
    c, w = M.sgdl_shuffle_c(eps, delta, n), k + 2 * M.sgdl_shuffle_c(eps, delta, n)
    r = np.arange(-(w + 3000), w + 3001)
    noise = M.sgdl_pmf(r, 1.0 / n, math.exp(-eps))
    P, Q = np.ones(1), np.ones(1)
    for _ in range(n):
        P = np.convolve(P, np.bincount(np.clip(0 + r + c, 0, w), weights=noise, minlength=w + 1))
        Q = np.convolve(Q, np.bincount(np.clip(k + r + c, 0, w), weights=noise, minlength=w + 1))
    factor = math.exp(eps * n * k)
    assert max(_hockey(P, Q, factor), _hockey(Q, P, factor)) > 0.5


def test_theorem_31_fails_for_far_datasets():
    """RR-Shuffle at Table 2's n = 100, eps = 0.1, k = 1000: all-zeros vs all-1000 bits (d = n k) are told apart."""
    from scipy import stats

    eps, delta, n, k = 0.1, 1e-4, 100, 1000
    p = M.rr_shuffle_probability(eps, delta, k, n, method="theorem-3.1")
    y = np.arange(n * k + 1)
    log_p, log_q = stats.binom.logpmf(y, n * k, p / 2), stats.binom.logpmf(y, n * k, 1 - p / 2)
    gap = eps * n * k + log_q - log_p  # log of e^(eps d) Q / P
    divergence = np.where(gap < 0, np.exp(log_p) * -np.expm1(np.minimum(gap, 0)), 0).sum()
    assert divergence > 0.5


# --- Theorem 4.1 at large n (pmf ratios without cancellation) ------------------------------------------------


def mp_fourier_pmf(m: int, n: int, p):
    """SGDL(n, p) pmf at 60 digits by inverting its (real, positive) characteristic function
    ((1-p)^2 / (1 - 2 p cos t + p^2))^n: an independent route from the series (cost independent of n)."""
    n, m = mp.mpf(n), mp.mpf(m)
    log_c = 2 * mp.log(1 - p)
    f = lambda t: mp.exp(n * (log_c - mp.log(1 - 2 * p * mp.cos(t) + p * p))) * mp.cos(m * t)  # noqa: E731
    width = 1 / mp.sqrt(n * 2 * p / (1 - p) ** 2)  # one standard deviation of the characteristic function's peak
    points = [width * i for i in range(40) if width * i < mp.pi] + [mp.pi]  # beyond 40 widths: below e^-800
    return mp.quad(f, points) / mp.pi


@pytest.mark.parametrize("n", [10, 1000, 4096, 4097, 10**5, 10**8, 10**10, 10**12])
def test_sgdl_log_ratios_match_mpmath_at_large_n(n):
    """ln pmf(m+1)/pmf(m) at Theorem 4.1's alpha and at alpha/5, to 1e-8 relative (the old differencing of two
    log pmfs was off in the 5th digit at n = 10^8 and had the wrong sign at 10^10)."""
    p = mp.exp(mp.mpf(-0.2))
    alpha = M.geo_shuffle_alpha(0.2, 1e-4, n)
    ms = np.array([int(alpha), int(alpha / 5)])
    ours = SGDL._log_ratios_integer(ms, n, float(p))
    for m, value in zip(ms, ours):
        ref = mp.log(mp_fourier_pmf(int(m) + 1, n, p) / mp_fourier_pmf(int(m), n, p))
        assert value == pytest.approx(float(ref), rel=1e-8)


@pytest.mark.parametrize("n", [10**8, 10**10, 10**12])
def test_theorem_41_matches_mpmath_at_large_n(n):
    """Every step of Theorem 4.1 (alpha by the mgf, the floors, the d = 1 pmf ratio) at 60 digits."""
    e = mp.mpf(0.2)
    p, t = mp.exp(-e), 2 * e / mp.sqrt(n)
    log_mgf = n * (2 * mp.log(1 - p) - mp.log(1 - p * mp.exp(t)) - mp.log(1 - p * mp.exp(-t)))
    alpha = (mp.log(4 / mp.mpf(1e-4)) + log_mgf) / t
    assert M.geo_shuffle_alpha(0.2, 1e-4, n) == pytest.approx(float(alpha), rel=1e-12)
    a, b = int(mp.floor(-alpha - mp.mpf(1) / 2)), int(mp.floor(-alpha + mp.mpf(1) / 2))
    ref = abs(mp.log(mp_fourier_pmf(abs(a), n, p) / mp_fourier_pmf(abs(b), n, p)))
    assert M.geo_shuffle_epsilons_by_distance(0.2, 1e-4, n, 1)[0] == pytest.approx(float(ref), rel=1e-8)


def test_theorem_41_decays_like_one_over_sqrt_n_up_to_2_53():
    """sqrt(n) times Theorem 4.1's epsilon settles (decreasing, to a few 1e-6) instead of rising from n = 10^9 on."""
    scaled = [
        M.geo_shuffle_epsilon_paper(0.2, 1e-4, n) * math.sqrt(n)
        for n in (10**8, 10**9, 10**10, 10**11, 10**12, 10**14, 2**53)
    ]
    assert scaled == sorted(scaled, reverse=True)
    assert all(v == pytest.approx(0.7316002, rel=3e-6) for v in scaled)


def test_theorem_41_answers_fast_and_caps_max_distance():
    import time

    start = time.perf_counter()
    for n in (10**10, 10**12, 2**53):
        M.geo_shuffle_epsilon(0.2, 1e-4, n)  # the certified default
        M.geo_shuffle_epsilon(0.2, 1e-4, n, method="theorem-4.1")
        M.geo_shuffle_local_epsilon(1e-5, 1e-4, n, method="theorem-4.1")
    assert time.perf_counter() - start < 5.0  # was 8.7 s for one n = 10^10 and hung at 10^12
    with pytest.raises(PrivacyParameterError, match=r"max_distance must be an integer in \[1, 10000\]; got"):
        M.geo_shuffle_epsilon_paper(0.2, 1e-4, 100, max_distance=10**9)
    assert M.MAX_DISTANCE == 10_000


def test_theorem_41_inverse_is_monotone_in_n_at_large_n():
    values = [M.geo_shuffle_local_epsilon(1e-5, 1e-4, n, method="theorem-4.1") for n in (10**8, 10**9, 10**10, 10**11)]
    assert values == sorted(values)
    for n, eps_geo in zip((10**8, 10**9, 10**10, 10**11), values):
        assert M.geo_shuffle_epsilon_paper(eps_geo, 1e-4, n) <= 1e-5


def test_noise_epsilon_maximum_is_a_named_error():
    """eps_geo = 800 made e^-eps_geo 0 (a math domain error deep in Theorem 4.1); now every entry point names the maximum."""
    for call in (
        lambda: M.geo_shuffle_epsilon(800, 1e-4, 100, method="theorem-4.1"),
        lambda: M.geo_shuffle_epsilon(800, 1e-4, 100, 10),
        lambda: M.geo_shuffle_c(800, 1e-4, 100),
        lambda: M.sgdl_shuffle_epsilon(800, 1e-4, 100, 10),
        lambda: M.sgdl_shuffle_local_epsilon(800, 100),
    ):
        with pytest.raises(
            PrivacyParameterError, match=r"must be a number in \[2\^-52, 100\]; got 800 \(beyond 100 the noise"
        ):
            call()
    assert M.geo_shuffle_epsilon(100, 1e-4, 100, method="theorem-4.1") <= 100
    assert M.geo_shuffle_epsilon(100, 1e-4, 10**6, method="theorem-4.1") <= 100
    assert M.sgdl_shuffle_epsilon(100, 1e-4, 100, 5) >= 100


@pytest.mark.parametrize("n", [1, 2, 4])
def test_theorem_41_inverse_below_five_users_is_the_target(n):
    assert M.geo_shuffle_local_epsilon(0.1, 1e-4, n, 1000, method="theorem-4.1") == 0.1
    assert M.geo_shuffle_local_epsilon(0.1, 1e-4, n, method="theorem-4.1") == 0.1


def test_rr_certificate_at_huge_n_k_does_not_allocate():
    """n k = 10^9 summed n k work terms (21 GB, a hang); 10^15 was a MemoryError traceback."""
    for n in (10**6, 10**12, 2**53):
        cert = M.rr_shuffle_certificate(1e-4, 0.5, 1000, n)
        assert cert.epsilon == math.log(3.0) and not cert.certified and cert.reason.startswith("not attempted")
    assert M.rr_shuffle_probability(0.5, 1e-4, 1000, 10**12) == pytest.approx(2 / (1 + math.exp(0.5)), rel=1e-15)


def test_sgdl_shift_divergence_refuses_sums_beyond_its_limit():
    """beta = 10^5 took 41 s, p near 1 or a huge distance did not finish: a named error instead."""
    for beta, p, distance in ((10**5, math.exp(-0.2), 1), (0.5, math.exp(-0.001), 1), (3, 0.5, 10**9)):
        with pytest.raises(
            PrivacyParameterError, match=r"sgdl_shift_divergence would sum about .* above the limit 1e\+08"
        ):
            M.sgdl_shift_divergence(0.01, distance, beta, p)
    assert M.sgdl_shift_divergence(0.01, 1, 10**4, math.exp(-0.2)) < 1e-15  # at the edge: still answered
