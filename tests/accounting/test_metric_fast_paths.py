"""The fast paths of the certified Geo-/SGDL-Shuffle epsilons (issue 20, speed) against solving everything.

* `_exhaustive.exhaustive_profile` solves the pairs with an extreme multiset first and skips every other pair that
  meets delta at the level its distance already has: the profile and the worst pair must be those of solving every
  pair, with far fewer pairs solved.
* `_common.max_shift_epsilon` / `max_shift_divergence` settle most sum distances by a windowed bound: the epsilon
  must meet delta at every distance and never exceed the all-distances root search; the feasibility check of the
  inverse must agree with the certificate.
* A log-concave T (Geo-Shuffle's): each shift's divergence is a largest difference of CDFs, bounded by the
  cumulative sums of T's bounds; its epsilon must lie between T's own need and the per-outcome bound at every shift,
  its slope search must find the brute-force maximum, its sums must round outward, and a law not known
  log-concave must keep the per-outcome checks.
* The certified Geo-Shuffle inverse checks few points, on the exhaustive path without solving any pair's epsilon
  (`_exhaustive.exhaustive_meets`): what it returns must certify the target, and a point a relative `INVERSE_RTOL`
  above it must not.
* RR-Shuffle: the compromised-shuffler search over every distance at once, and the covers' FFT convolution, give
  the values of the one-at-a-time / scipy computations bit for bit.
"""

from __future__ import annotations

import itertools
import math
import time

import mpmath as mp
import numpy as np
import pytest
from scipy import signal

from shuffledp.accounting import metric as M
from shuffledp.accounting.metric import _common as C
from shuffledp.accounting.metric import _exhaustive as E
from shuffledp.accounting.metric import _rr_pairs as R
from shuffledp.accounting.metric import geo_shuffle as G
from shuffledp.accounting.metric import rr_shuffle as RR
from shuffledp.accounting.metric import sgdl_shuffle as S
from shuffledp.errors import PrivacyParameterError


def _solve_every_pair(laws: np.ndarray, n: int, delta: float) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """The profile with every ordered pair solved (row-major order, first pair of a tie kept)."""
    k = laws.shape[0] - 1
    sets = E.multisets(n, k)
    law = E.sum_laws(laws, sets)
    missing = np.maximum(1.0 - law.sum(axis=1), 0.0) * (1.0 + 1e-6) + 1e-15 * law.shape[1]
    i, j = np.nonzero(~np.eye(sets.shape[0], dtype=bool))
    distance = np.abs(sets[i] - sets[j]).sum(axis=1)
    budget = delta - missing[i]
    upper, lower = C.shift_bounds(law)
    eps = E.pair_epsilons(upper[i], lower[j], distance.astype(np.float64), budget)
    eps = np.where(budget > 0.0, eps, np.inf)
    best = np.zeros(n * k)
    np.maximum.at(best, distance - 1, eps)
    where = int(np.argmax(eps))
    return best * (1.0 + 1e-12), (sets[i[where]], sets[j[where]])


def _assert_same_profile(fast, reference) -> None:
    """The fast path's profile is solving every pair's, but for the solved pairs' window charge (at most 1e-10 delta
    of a numerator's mass outside its window, charged in full: never below, ~1e-12 relative above), and its worst
    pair is the reference's or ties with it within that charge."""
    (profile, (a, b)), (expected, (ref_a, ref_b)) = fast, reference
    assert np.all(profile >= expected) and np.allclose(profile, expected, rtol=1e-9, atol=0.0)
    if list(a) != list(ref_a) or list(b) != list(ref_b):
        assert profile.max() == pytest.approx(expected.max(), rel=1e-9, abs=0.0)


def _pairs_solved_by_the_fast_path(kind, epsilon, delta, n, k, monkeypatch) -> int:
    """How many pairs `exhaustive_profile` solves, after checking its profile and worst pair against solving every
    pair."""
    c = G.geo_shuffle_c(epsilon, delta, n) if kind == "geo" else S.sgdl_shuffle_c(epsilon, delta, n)
    laws = E.geo_user_laws(epsilon, k, c) if kind == "geo" else E.sgdl_user_laws(epsilon, n, k, c)
    reference = _solve_every_pair(laws, n, delta)
    solved = []
    solve = E.pair_epsilons
    monkeypatch.setattr(E, "pair_epsilons", lambda num, *rest: solved.append(num.shape[0]) or solve(num, *rest))
    _assert_same_profile(E.exhaustive_profile(laws, n, delta), reference)
    return sum(solved)


@pytest.mark.parametrize(
    "kind, epsilon, delta, n, k",
    [
        ("geo", 1.0, 1e-4, 4, 4),
        ("geo", 0.5, 1e-2, 5, 3),
        ("geo", 2.0, 1e-2, 6, 3),
        ("geo", 0.3, 1e-6, 3, 5),
        ("sgdl", 1.0, 1e-4, 4, 3),
        ("sgdl", 0.5, 1e-2, 3, 4),
    ],
)
def test_exhaustive_profile_skips_only_pairs_that_cannot_raise_it(kind, epsilon, delta, n, k, monkeypatch):
    solved = _pairs_solved_by_the_fast_path(kind, epsilon, delta, n, k, monkeypatch)
    pairs = E.multiset_count(n, k) * (E.multiset_count(n, k) - 1)
    assert solved < 0.25 * pairs  # the point of the fast path: most pairs are settled by the check


def _conditioned(kind: str, epsilon: float, delta: float, n: int, k: int):
    """(T's bounds as the certificate builds them, the sum distances 1..n k, the budget on the divergence)."""
    if kind == "geo":
        c = G.geo_shuffle_c(epsilon, delta, n)
        law, inside = G._geo_shuffle_noise_law(epsilon, c, n, n * k)
        budget = (delta - (1.0 - inside)) / inside
    else:
        c = S.sgdl_shuffle_c(epsilon, delta, n)
        law, delta_1 = S._sgdl_shuffle_noise_law(epsilon, c, n, n * k)
        budget = delta - delta_1
    return law, np.arange(1, n * k + 1), budget


@pytest.mark.parametrize(
    "kind, epsilon, delta, n, k",
    [
        ("geo", 1.0, 1e-4, 30, 5),
        ("geo", 0.3, 1e-6, 100, 10),
        ("geo", 1.0, 1e-2, 300, 3),
        ("sgdl", 0.3, 1e-2, 100, 10),  # the full search overshoots: (A - budget) / B overflows, B subnormal
        ("sgdl", 1.0, 1e-4, 50, 4),
    ],
)
def test_max_shift_epsilon_meets_delta_everywhere_and_never_exceeds_the_full_search(kind, epsilon, delta, n, k):
    law, shifts, budget = _conditioned(kind, epsilon, delta, n, k)
    fast = C.max_shift_epsilon(law, shifts, budget)
    full = float(C.shift_epsilons(law, shifts, budget).max())
    assert fast <= full * (1.0 + 1e-12)  # the level's solve charges 1e-12 of the budget outside its window
    assert full - fast <= 1e-9 * full  # equal up to rounding
    assert C.shift_divergences(law, shifts, fast * (1.0 + 1e-9)).max() <= budget
    assert C.max_shift_divergence(law, shifts, fast * (1.0 + 1e-9), budget) <= budget


@pytest.mark.parametrize("factor", [0.5, 0.99, 0.999999])
def test_max_shift_divergence_is_above_the_budget_when_delta_is_not_met(factor):
    law, shifts, budget = _conditioned("geo", 1.0, 1e-4, 30, 5)
    low = factor * C.max_shift_epsilon(law, shifts, budget)
    full = float(C.shift_divergences(law, shifts, low).max())
    assert full > budget and C.max_shift_divergence(law, shifts, low, budget) > budget


def test_geo_feasibility_check_agrees_with_the_certificate_where_e_to_the_eps_d_overflows():
    # n k = 300 at eps 2.4: e^(eps D) overflows float64; T's far tails are 0, and 0 times inf made a nan that read
    # as "not certified" although the certificate itself gives 1.855
    certified = M.geo_shuffle_certified_epsilon(3.0, 0.01, 300, 1)
    assert certified < 2.4
    assert G._margin(3.0, 2.4, 0.01, 300, 1) <= 0.0
    assert not G._margin(3.0, 0.9 * certified, 0.01, 300, 1) <= 0.0
    assert math.isfinite(certified)


@pytest.mark.parametrize("p, delta, k", [(0.5, 1e-2, 300), (0.1, 1e-4, 120), (0.9, 1e-6, 90), (1e-6, 1e-3, 40)])
def test_positioned_bits_epsilons_are_the_per_distance_pairs_bit_for_bit(p, delta, k):
    one_by_one = np.array([max(RR._rr_pair_epsilons(0, d, d, p / 2, delta)) for d in range(1, k + 1)])
    assert np.array_equal(RR._positioned_bits_epsilons(np.arange(1, k + 1), p / 2, delta), one_by_one)


def test_rr_fft_convolution_is_scipys_bit_for_bit():
    rng = np.random.default_rng(7)
    for _ in range(200):
        x, y = rng.random(rng.integers(1, 3000)), rng.random(rng.integers(1, 3000))
        assert np.array_equal(R._fft_convolve(x, y), signal.fftconvolve(x, y))


def test_exhaustive_profile_checks_both_mirror_pairs_when_the_laws_are_not_symmetric():
    laws = E.geo_user_laws(1.0, 3, 6)
    laws[0] = np.roll(laws[0], 1) * 0.999  # a sub-probability law with no mirror image among the rows
    assert E._mirror_rows(laws, E.multisets(4, 3)) is None
    assert E._mirror_rows(E.geo_user_laws(1.0, 3, 6), E.multisets(4, 3)) is not None
    _assert_same_profile(E.exhaustive_profile(laws, 4, 1e-4), _solve_every_pair(laws, 4, 1e-4))


# --- the cumulative bound of a log-concave T (`_common.cdf_shift_epsilons`, `_max_cdf_slope`) -------------------

_LOG_CONCAVE = [(1.0, 1e-4, 30, 5), (0.5, 1e-2, 40, 3), (2.0, 1e-5, 50, 3), (0.3, 1e-6, 100, 4), (1.0, 1e-4, 300, 3)]


@pytest.mark.parametrize("epsilon, delta, n, k", _LOG_CONCAVE)
def test_cumulative_bound_lies_between_the_true_epsilon_and_the_per_outcome_bound_at_every_shift(epsilon, delta, n, k):
    """Per shift D: the cumulative bound's epsilon is at least the one T's own pmf needs (the lemma: the divergence is
    the largest prefix sum, which F_U and F_L bound), and equal to the per-outcome bound's up to the charged rounding
    of the cumulative sums (1e-10 relative above; the netted negative terms only lower it, by up to the bounds'
    1e-9 slack)."""
    law, shifts, budget = _conditioned("geo", epsilon, delta, n, k)
    pmf = C.convolution_power(G._user_law(epsilon, G.geo_shuffle_c(epsilon, delta, n)), n)
    true = C.shift_epsilons(C.ShiftLaw(pmf, pmf), shifts, budget)
    cumulative = C.cdf_shift_epsilons(law, shifts, budget)
    per_outcome = C.shift_epsilons(law, shifts, budget)
    assert np.all(cumulative >= true)
    assert np.all(cumulative <= per_outcome * (1.0 + 1e-10))
    assert np.all(per_outcome - cumulative <= 1e-9 * per_outcome)


@pytest.mark.parametrize("epsilon, delta, k", [(1.0, 1e-4, 1), (0.5, 1e-4, 3), (2.0, 1e-6, 2)])
def test_cumulative_bound_at_n_1000_stays_within_the_per_outcome_bound_on_the_tilted_law(epsilon, delta, k):
    law, shifts, budget = _conditioned("geo", epsilon, delta, 1000, k)
    assert law.log_lower is not None and law.log_concave  # the tilted path: T beyond the direct convolution
    sample = np.unique(np.linspace(1, shifts[-1], 40).astype(np.int64))
    cumulative = C.cdf_shift_epsilons(law, sample, budget)
    per_outcome = C.shift_epsilons(law, sample, budget)
    assert np.all(cumulative <= per_outcome * (1.0 + 1e-10))
    assert np.all(per_outcome - cumulative <= 1e-9 * per_outcome)


@pytest.mark.parametrize("seed", range(6))
def test_largest_cdf_slope_is_the_brute_force_maximum_on_arbitrary_monotone_curves(seed):
    """`_max_cdf_slope`'s branch and bound drops a rectangle only by a valid bound: on non-decreasing but otherwise
    arbitrary curves (many local maxima) it returns the brute-force largest slope, rounded up by a few ulps, and the
    cell it names attains it."""
    rng = np.random.default_rng(seed)
    b = np.cumsum(rng.exponential(1.0, 400)) - 300.0
    b[:5] = -np.inf  # F_L = 0 on the first outcomes: slopes from there are infinite
    a = np.maximum.accumulate(b + rng.normal(0.0, 5.0, b.size) + 3.0)
    a[:80] = -np.inf  # F_U <= budget there
    smallest, largest = 3, 70
    brute = max(
        max(0.0, a[t] - b[t - d]) / d for d in range(smallest, largest + 1) for t in range(80, a.size) if t - d >= 0
    )
    bound, t, d = C._max_cdf_slope(a, b, smallest, largest)
    assert brute <= bound <= brute * (1.0 + 1e-14)
    assert smallest <= d <= largest and (a[t] - b[t - d]) / d == pytest.approx(brute, rel=1e-15)


@mp.workdps(40)  # not mp.mp.dps = 40: that stayed set for every later test (the 60-digit SGDL pmf ones then failed)
def test_cumulative_sums_are_rounded_outward_by_their_charges_only():
    """`_upper_cdf` is never below the exact running sum (40 digits) and within its (block + blocks + 2) u charge;
    `_log_lower_cdf` is never above the exact log running sum over a range of 10^5 and within 1e-13 of its size
    (a plain running sum rounds both ways)."""
    rng = np.random.default_rng(7)
    values = np.exp(rng.uniform(-690.0, 0.0, 5000))
    exact = np.array([float(x) for x in itertools.accumulate(mp.mpf(float(v)) for v in values)])
    upper = C._upper_cdf(values)
    assert np.all(upper >= exact) and np.all(upper <= exact * (1.0 + 2e-13))
    steps = rng.normal(0.0, 3.0, 3000) + 30.0
    logs = np.cumsum(steps) - steps.sum()
    logs[rng.random(logs.size) < 0.05] = -np.inf
    exact_sums = itertools.accumulate(mp.exp(mp.mpf(float(x))) if np.isfinite(x) else mp.mpf(0) for x in logs)
    exact_logs = [mp.log(x) if x > 0 else -mp.inf for x in exact_sums]
    lower = C._log_lower_cdf(logs)
    for got, want in zip(lower, exact_logs, strict=True):
        assert mp.mpf(float(got)) <= want
        assert want - mp.mpf(float(got)) <= 1e-13 * (1.0 + abs(want)) if got > -np.inf else want == -mp.inf


def test_log_lower_cdf_runs_of_uncovered_outcomes_cost_no_charge():
    """The tilted laws' log lower bounds are -inf over long runs either side of the tilts' outcomes: the log running
    sum with such runs around it is the one without them (charges and all), -inf before and constant after."""
    rng = np.random.default_rng(11)
    steps = rng.normal(0.0, 3.0, 2000) + 30.0
    logs = np.cumsum(steps) - steps.sum()
    logs[rng.random(logs.size) < 0.05] = -np.inf
    logs[0] = logs[-1] = -5.0  # the span ends at finite logs
    padded = np.concatenate([np.full(700, -np.inf), logs, np.full(10**5, -np.inf)])
    bare, got = C._log_lower_cdf(logs), C._log_lower_cdf(padded)
    assert np.all(got[:700] == -np.inf)
    assert np.array_equal(got[700 : 700 + logs.size], bare)
    assert np.all(got[700 + logs.size :] == bare[-1])


def _bimodal_law(n: int) -> C.ShiftLaw:
    """T of n users each uniform on {-c, c} with a small weight between: far from log-concave (T dips between its
    modes), so a shift's positive terms do not form one prefix."""
    one = np.array([1.0, 1e-2, 1e-2, 1e-2, 1.0])
    upper, lower = C.shift_bounds(C.convolution_power(one / one.sum(), n))
    return C.ShiftLaw(upper, lower)


def test_a_law_not_known_log_concave_keeps_the_per_outcome_checks():
    law, shifts, budget = _bimodal_law(4), np.arange(1, 4), 0.1
    with pytest.raises(PrivacyParameterError, match="log_concave=False"):
        C.cdf_shift_epsilons(law, shifts, budget)
    certified = C.certified_shift_epsilon(law, budget, shifts)
    assert C.shift_divergences(law, shifts, certified).max() <= budget
    # the cumulative bound, forced on this law, certifies an eps that misses delta: the flag is what makes it sound
    forced = C.certified_shift_epsilon(law._replace(log_concave=True), budget, shifts)
    assert forced < certified and C.shift_divergences(law, shifts, forced).max() > budget


_CERTIFICATE_GRID = [
    (eps, delta, n, k) for eps in (0.5, 1.0, 2.0) for delta in (1e-3, 1e-6) for n, k in ((40, 2), (150, 4), (1000, 1))
]


@pytest.mark.parametrize("eps, delta, n, k", _CERTIFICATE_GRID)
def test_geo_certificate_by_the_cumulative_bound_is_never_above_the_per_outcome_one(eps, delta, n, k):
    """The certificate's epsilon (now the cumulative bound's largest slope) against the per-outcome search on the same
    law: never above it (but for 1e-12), below it by rounding only; and T's own pmf meets delta at it."""
    law, shifts, budget = _conditioned("geo", eps, delta, n, k)
    if k > 2 * G.geo_shuffle_c(eps, delta, n) or not budget > 0.0:
        pytest.skip("no shift analysis here")
    new = C.certified_shift_epsilon(law, budget, shifts)
    old = C.certified_shift_epsilon(law._replace(log_concave=False), budget, shifts)
    assert math.isfinite(old)
    assert new <= old + 1e-12 and new >= old * (1.0 - 1e-9)
    if law.log_lower is None:  # the direct path: T's pmf itself, exact to ~1e-13, meets the budget at ``new``
        pmf = C.convolution_power(G._user_law(eps, G.geo_shuffle_c(eps, delta, n)), n)
        assert C.shift_divergences(C.ShiftLaw(pmf, pmf), shifts, new).max() <= budget


@pytest.mark.parametrize("kind, epsilon, n", [("geo", 0.2, 50), ("geo", 0.5, 40), ("sgdl", 0.5, 40)])
def test_exhaustive_profile_solves_only_the_extreme_pairs_when_pairs_at_one_distance_nearly_tie(
    kind, epsilon, n, monkeypatch
):
    # k = 1: a dataset is its count of ones and the clamped laws are shifts of each other but for masses below
    # delta / n at the clamps, so every pair at one distance needs nearly the extreme pair's epsilon (within ~1e-5):
    # the skip check must settle them (its window leaves out a negligible mass), not solve them one by one
    solved = _pairs_solved_by_the_fast_path(kind, epsilon, 1e-4, n, 1, monkeypatch)
    assert solved <= 4 * n  # the pairs with an extreme multiset (all 0 or all 1) on either side


@pytest.mark.parametrize("kind, epsilon, n, k", [("geo", 1.0, 7, 3), ("geo", 0.5, 30, 1), ("sgdl", 1.0, 6, 2)])
def test_sum_laws_takes_the_mirror_multisets_law_reversed_when_the_user_laws_are_symmetric(kind, epsilon, n, k):
    c = G.geo_shuffle_c(epsilon, 1e-4, n) if kind == "geo" else S.sgdl_shuffle_c(epsilon, 1e-4, n)
    laws = E.geo_user_laws(epsilon, k, c) if kind == "geo" else E.sgdl_user_laws(epsilon, n, k, c)
    sets = E.multisets(n, k)
    law = E.sum_laws(laws, sets)
    mirror = E._mirror_rows(laws, sets)
    pair = mirror != np.arange(len(sets))  # a multiset that is its own mirror is convolved as it is
    assert pair.any() and np.array_equal(law[mirror[pair]], law[pair, ::-1])  # one convolution per mirror pair
    for row in (0, len(sets) // 3, len(sets) - 1):  # each row still the convolution of its users' laws
        direct = np.array([1.0])
        for v in sets[row]:
            direct = np.convolve(direct, laws[v])
        assert np.allclose(law[row], direct, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize(
    "epsilon, delta, n, k", [(1.0, 1e-4, 5, 3), (2.0, 1e-4, 4, 2), (1.5, 1e-3, 6, 2), (0.7, 1e-4, 3, 4)]
)
def test_exhaustive_feasibility_check_agrees_with_the_profile(epsilon, delta, n, k):
    laws = E.geo_user_laws(epsilon, k, M.geo_shuffle_c(epsilon, delta, n))
    exact = float(E.exhaustive_profile(laws, n, delta)[0].max())
    assert E.exhaustive_meets(laws, n, delta, exact * (1.0 + 1e-6))
    assert not E.exhaustive_meets(laws, n, delta, exact * (1.0 - 1e-6))


@pytest.mark.parametrize(
    "target, delta, n, k",
    [
        (0.8, 1e-4, 20, 3),
        (0.3, 1e-4, 300, 5),
        (0.5, 1e-4, 1000, 1),
        (2.0, 0.01, 300, 1),
        (0.5, 1e-4, 10_000, 1),
        (0.5, 1e-4, 10_000, 10),
    ],
)
def test_geo_inverse_returns_an_edge_of_the_certified_set(target, delta, n, k):
    """The returned eps_geo's certificate meets the target; eps_geo (1 + INVERSE_RTOL) does not (the certified epsilon
    is non-decreasing there, see below, so nothing above does).  n = 10^4, k = 10 gave the target itself: the
    inverse's own check still refused the windowed-search cell limit the certificate no longer has (log-concave T)."""
    eps_geo = M.geo_shuffle_local_epsilon(target, delta, n, k)
    assert target < eps_geo
    assert M.geo_shuffle_certified_epsilon(eps_geo, delta, n, k) <= target
    assert M.geo_shuffle_certified_epsilon(eps_geo * (1.0 + G.INVERSE_RTOL), delta, n, k) > target


@pytest.mark.parametrize("delta, n, k", [(1e-4, 300, 5), (1e-4, 1000, 1)])
def test_geo_certified_epsilon_is_non_decreasing_in_eps_geo_across_c_steps(delta, n, k):
    grid = np.geomspace(0.4, 2.0, 25)
    values = [M.geo_shuffle_certified_epsilon(float(e), delta, n, k) for e in grid]
    steps = {M.geo_shuffle_c(float(e), delta, n) for e in grid}
    assert len(steps) > 5 and values == sorted(values)


def test_geo_inverse_with_a_tiny_delta_answers_in_seconds_and_reports_progress():
    """(2.4, 1e-100, 5, 5) took 55-112 s and gave 2.4: each bisection step solved every pair of datasets exactly (about
    3 s at c = 98) although no pair could meet delta (the enumeration's rounding charge, 1e-15 per outcome, exceeds
    1e-100); the shift analysis, in log space, certifies there."""
    calls = []
    start = time.perf_counter()
    found = M.geo_shuffle_local_epsilon(2.4, 1e-100, 5, 5, progress=lambda done, most: calls.append((done, most)))
    assert time.perf_counter() - start < 10.0
    assert found > 2.4 and M.geo_shuffle_certified_epsilon(found, 1e-100, 5, 5) <= 2.4
    assert calls and calls == [(i + 1, G.MAX_INVERSE_STEPS) for i in range(len(calls))]


@pytest.mark.parametrize("kind, n, k", [("geo", 5, 5), ("sgdl", 3, 2)])
def test_certificates_below_the_exhaustive_rounding_charge_use_the_shift_analysis(kind, n, k):
    """delta = 1e-100 is below the exhaustive search's rounding charge on every law (1e-15 per outcome): it solved every
    pair (6 s for Geo at c = 97) to find none meeting delta and fell back to the per-report epsilon."""
    certificate = M.geo_shuffle_certificate if kind == "geo" else M.sgdl_shuffle_certificate
    start = time.perf_counter()
    found = certificate(2.41, 1e-100, n, k)
    assert time.perf_counter() - start < 3.0
    assert found.certified and found.reason.startswith("certified: delta met at every sum distance")


@pytest.mark.parametrize("target, delta, n, k", [(0.5, 1e-4, 300, 5), (0.5, 1e-4, 10_000, 1), (0.5, 1e-4, 20, 3)])
def test_sgdl_inverse_returns_an_edge_of_the_certified_set(target, delta, n, k):
    """SGDL-Shuffle had only Theorem 5.1's reading (the noise epsilon is the guarantee); the certified inverse's noise
    epsilon certifies the target and one a relative INVERSE_RTOL above it does not (it lies below the target: the
    truncation costs)."""
    epsilon = M.sgdl_shuffle_noise_epsilon(target, delta, n, k)
    assert epsilon < target
    assert M.sgdl_shuffle_certified_epsilon(epsilon, delta, n, k) <= target
    assert M.sgdl_shuffle_certified_epsilon(epsilon * (1.0 + C.INVERSE_RTOL), delta, n, k) > target


@pytest.mark.slow
def test_sgdl_inverse_finds_the_band_between_the_analysis_limit_and_the_target():
    """At n = 10^4, k = 10, delta = 1e-6 the noise epsilons certifying 0.1 lie in a narrow band (about 0.0599-0.0605:
    below it c >= 200 puts T beyond its size limit and the certificate is the fallback): halving from 0.1 stepped
    from 0.1 (certified above the target) to 0.05 (the fallback) and on down, and said that nothing certifies."""
    epsilon = M.sgdl_shuffle_noise_epsilon(0.1, 1e-6, 10_000, 10)
    found = M.sgdl_shuffle_certificate(epsilon, 1e-6, 10_000, 10)
    assert found.certified and found.epsilon <= 0.1
    assert 0.05 < epsilon < 0.1


def test_sgdl_inverse_names_the_target_when_it_is_below_the_noises_range():
    with pytest.raises(PrivacyParameterError, match=r"target_epsilon=1e-06 is below what SGDL-Shuffle's noise can"):
        M.sgdl_shuffle_noise_epsilon(1e-6, 1e-6, 100, 10)


def test_sgdl_inverse_says_when_no_noise_epsilon_certifies_the_target():
    with pytest.raises(PrivacyParameterError, match=r"no SGDL-Shuffle noise epsilon certifies target_epsilon=0.05 "):
        M.sgdl_shuffle_noise_epsilon(0.05, 1e-4, 10_000, 1)


# --- Blocks of shifts settled at once by a sliding minimum (any law, no log-concavity) ---------------------------


@pytest.mark.parametrize("seed", range(4))
def test_sliding_minimum_is_the_brute_force_window_minimum(seed):
    rng = np.random.default_rng(seed)
    values = rng.normal(size=int(rng.integers(1, 300)))
    values[rng.random(values.size) < 0.1] = -np.inf
    for width in range(1, values.size + 1):
        brute = np.array([values[i : i + width].min() for i in range(values.size - width + 1)])
        assert np.array_equal(C._sliding_min(values, width), brute)


def _block_laws():
    """(name, law, the largest shift) of the three kinds of law the blocks meet: SGDL-Shuffle's on the direct path
    (linear) and on the tilted one (log path), and Geo-Shuffle's read as not log-concave."""
    eps, delta, n, k = 0.5, 1e-4, 200, 5
    c = S.sgdl_shuffle_c(eps, delta, n)
    one = S._user_law(eps, c, n)
    geo, _ = G._geo_shuffle_noise_law(1.0, G.geo_shuffle_c(1.0, 1e-4, 100), 100, 300)
    return [
        ("sgdl direct", C.shift_law(one, n, n * k, "direct"), n * k),
        ("sgdl tilted", C.shift_law(one, n, n * k, "tilted"), n * k),
        ("geo not log-concave", geo._replace(log_concave=False), 300),
    ]


@pytest.mark.parametrize("name, law, largest", _block_laws(), ids=lambda v: v if isinstance(v, str) else "")
def test_block_bound_is_above_the_divergence_of_every_shift_it_holds(name, law, largest):
    shifts = np.arange(1, largest + 1)
    level = C.max_shift_epsilon(law, shifts, 1e-5)
    window = C._shift_window(law.upper, 1e-11)
    rng = np.random.default_rng(len(name))
    for epsilon in (0.3 * level, 0.9 * level, level, 1.5 * level):
        inside, outside = C._windowed_divergences(law, shifts, epsilon, window)
        windowed = inside + outside
        assert np.all(windowed >= C.shift_divergences(law, shifts, epsilon) * (1.0 - 1e-12))
        lo = np.concatenate([shifts, rng.integers(1, largest + 1, 200)])
        width = np.concatenate([np.ones(largest, dtype=np.int64), rng.integers(1, largest // 4, 200)])
        hi = np.minimum(lo + width - 1, largest)
        bound = C._block_bounder(law, epsilon, window, 1, largest)(lo, hi)
        held = np.array([windowed[a - 1 : b].max() for a, b in zip(lo, hi)])
        assert np.all(bound >= held)
        # a single shift's block is its windowed sum but for the charges (far below any margin)
        assert np.all(bound[:largest] <= windowed * (1.0 + 1e-9) + 1e-300)


@pytest.mark.parametrize(
    "epsilon, delta, n, k",
    [
        (0.3, 1e-2, 30, 10),
        (1.0, 1e-4, 30, 3),
        (0.5, 1e-6, 300, 1),
        (0.3, 1e-4, 300, 10),
        (0.5, 1e-2, 3000, 5),
        (0.3, 1e-6, 3000, 2),
        (0.3, 1e-4, 10**4, 1),
        (0.3, 1e-4, 10**4, 10),
        (0.5, 1e-6, 10**4, 5),
    ],
)
def test_sgdl_certified_epsilon_by_blocks_is_the_per_shift_paths(epsilon, delta, n, k, monkeypatch):
    law, shifts, budget = _conditioned("sgdl", epsilon, delta, n, k)
    if k > 2 * S.sgdl_shuffle_c(epsilon, delta, n) or not budget > 0.0:
        pytest.skip("no shift analysis here")
    blocked = C.certified_shift_epsilon(law, budget, shifts)
    settled, _ = C._settle_by_blocks(
        law, shifts, blocked, budget * (1.0 - 1e-9), C._shift_window(law.upper, 1e-6 * budget)
    )
    assert settled.size < max(C._FEWEST_BLOCKED, shifts.size // 10)  # the blocks did settle most shifts
    monkeypatch.setattr(C, "_settle_by_blocks", lambda law, shifts, *_: (np.unique(shifts), 0.0))
    per_shift = C.certified_shift_epsilon(law, budget, shifts)
    assert math.isfinite(per_shift)
    assert per_shift <= blocked <= per_shift * (1.0 + 1e-12)


def test_a_shift_beyond_the_support_ends_the_search_without_solving_every_shift(monkeypatch):
    # k = 30 > c = 26: at D > n c T's mass faces outcomes below T's support, so the epsilon is inf; the search used to
    # solve all n k shifts on all 2 n c + 1 outcomes to learn that (minutes at n = 10^4)
    law, shifts, budget = _conditioned("sgdl", 0.3, 1e-4, 300, 30)
    solved = []
    full = C.shift_epsilons
    monkeypatch.setattr(C, "shift_epsilons", lambda law, d, *rest: solved.append(d.size) or full(law, d, *rest))
    assert C.certified_shift_epsilon(law, budget, shifts) == math.inf
    assert sum(solved) <= 20
    assert M.sgdl_shuffle_certificate(0.3, 1e-4, 300, 30).certified is False
