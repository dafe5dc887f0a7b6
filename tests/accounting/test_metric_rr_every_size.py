"""RR-Shuffle's certified epsilon at any n k up to 10^7 (issue 20, item 1): the block covers of
`shuffledp.accounting.metric._rr_pairs` certify every pair of sums, never below the exhaustive search where that
runs, never below a 50-digit evaluation of the all-0 vs all-k pair, and equal to it (within 1%) at the issue's
sizes: 0.598 at n k = 2,000 (delta = 1e-2) and 0.5605 at n = 100, k = 1,000 (delta = 1e-4), p = 0.5."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy import stats

from shuffledp.accounting import metric as M
from shuffledp.accounting.metric import _rr_pairs as E
from shuffledp.accounting.metric import rr_shuffle as RR


def _all_zero_all_k_mp(total: int, p: float, delta: float, dps: int = 50) -> float:
    """The smallest a/N with max_y SF_{Bin(N, q1)}(y) - e^a SF_{Bin(N, q0)}(y) <= delta, at ``dps`` digits.

    The pmfs from y = N downward by the ratio of consecutive terms, (y / (N - y + 1)) (q0 / q1) for Bin(N, q1) and
    its inverse for Bin(N, q0) (a few multiplications per outcome, so n k = 10^5 takes well under a second)."""
    with mpmath.workdps(dps):
        q0 = mpmath.mpf(p) / 2
        q1 = 1 - q0
        term_q, term_p = q1**total, q0**total  # Pr[Bin(N, q1) = N], Pr[Bin(N, q0) = N]
        sf_q = sf_p = mpmath.mpf(0)
        best = mpmath.mpf(0)
        ratio, stop = q0 / q1, 1 - mpmath.mpf(10) ** -30
        for y in range(total, -1, -1):
            sf_q += term_q
            sf_p += term_p
            if sf_q > delta:
                best = max(best, mpmath.log((sf_q - delta) / sf_p))
            if sf_q > stop or y == 0:
                break
            step = mpmath.mpf(y) / (total - y + 1)
            term_q *= step * ratio
            term_p *= step / ratio
        return float(best / total)


def _two_binomials_mp(ones: int, bits: int, q0: str) -> list[float]:
    """ln P_s^m(y) for every y (Bin(ones, 1 - q0) + Bin(bits - ones, q0)) by direct convolution at 40 digits."""
    with mpmath.workdps(40):
        q0_mp = mpmath.mpf(q0)
        q1 = 1 - q0_mp
        a = [mpmath.binomial(ones, j) * q1**j * q0_mp ** (ones - j) for j in range(ones + 1)]
        b = [mpmath.binomial(bits - ones, j) * q0_mp**j * q1 ** (bits - ones - j) for j in range(bits - ones + 1)]
        out = [mpmath.mpf(0)] * (bits + 1)
        for i, x in enumerate(a):
            for j, z in enumerate(b):
                out[i + j] += x * z
        return [float(mpmath.log(v)) for v in out]


@pytest.mark.parametrize(
    "delta, k, n, issue_value", [(1e-2, 20, 100, 0.598), (1e-4, 1000, 100, 0.5605)], ids=["nk2000", "n100k1000"]
)
def test_issue_values_reproduced_and_certified_within_one_percent(delta, k, n, issue_value):
    exact = _all_zero_all_k_mp(n * k, 0.5, delta)
    assert abs(exact - issue_value) < 6e-4
    cert = M.rr_shuffle_certificate(delta, 0.5, k, n)
    assert cert.certified
    assert exact <= cert.epsilon <= exact * 1.01


@pytest.mark.parametrize(
    "total, p, delta", [(500, 0.5, 1e-4), (800, 0.3, 1e-2), (600, 0.9, 1e-6), (753, 0.02, 1e-2), (534, 0.95, 1e-6)]
)
def test_certified_search_is_the_exhaustive_search(total, p, delta):
    """The search over every (S, D) and the one-world search (L6) agree to the engines' rounding (the covers were
    up to 0.3% above, 7% where single distances raised the level, p = 0.95, delta = 1e-6)."""
    q0 = p / 2
    level = max(RR._rr_pair_epsilons(0, total, total, q0, delta))
    exhaustive = RR._rr_search(total, q0, delta, level, range(1, total))
    searched = E.certified_search(total, q0, delta)
    assert searched.complete
    assert exhaustive - 1e-9 <= searched.epsilon <= exhaustive * (1 + 1e-7)


@pytest.mark.parametrize("total, p, delta", [(2_000, 0.5, 1e-4), (20_000, 0.2, 1e-3)])
def test_engine_matches_fifty_digits_on_the_worst_pair(total, p, delta):
    exact = _all_zero_all_k_mp(total, p, delta)
    ours = E.all_zero_all_k_epsilon(total, p / 2, delta)
    assert exact <= ours <= exact * (1 + 1e-8) + 1e-12


def test_the_lemmas_the_covers_rest_on():
    q0, delta = 0.25, 1e-4
    # L3: non-decreasing in D; L2: non-increasing in M
    by_d = [max(E.pair_exponents(d, 300, q0, delta)) for d in (10, 50, 100, 200, 300)]
    assert by_d == sorted(by_d)
    by_m = [max(E.pair_exponents(40, m, q0, delta)) for m in (40, 80, 160, 320)]
    assert by_m == sorted(by_m, reverse=True)
    # the engine agrees with the direct convolution of the exhaustive search on a pair among m bits
    for d, m in ((3, 50), (25, 120), (120, 120)):
        direct = RR._rr_pair_epsilons(0, d, m, q0, delta)
        ours = E.pair_exponents(d, m, q0, delta)
        for a, b in zip(direct, ours):
            assert a * d <= b * (1 + 1e-9) + 1e-12 and b <= a * d * (1 + 1e-6) + 1e-9


def test_ten_million_bits_is_the_paper_scale_and_closes_on_the_worst_pair():
    search = RR.rr_certified_search(1e-4, 0.5, 10_000 * 1_000)
    assert search.complete and search.epsilon == search.attained
    assert 0.549 < search.epsilon < 0.552  # (1 - p) ln 3 = 0.5493 is the limit as n k grows


@pytest.mark.parametrize("total, p, delta", [(60, 0.5, 1e-4), (75, 0.9, 1e-2), (48, 0.1, 1e-6)])
def test_split_worlds_cover_every_pair_at_every_distance(total, p, delta):
    """L2' (`_rr_pairs` docstring): for every split Ma + Mb = N + D + 1 (D <= Ma, Mb <= N), max(a1(D, Ma),
    a2(D, Mb)) bounds both directions of every pair (S, S + D) among N bits: checked over every S, D and split."""
    q0 = p / 2
    for d in range(1, total + 1):
        worst = d * max(max(RR._rr_pair_epsilons(s, d, total, q0, delta)) for s in range(total - d + 1))
        for ma in range(d, total + 1):
            mb = total + d + 1 - ma
            if not d <= mb <= total:
                continue
            a1 = E.up_exponent((d, ma), (0, ma), q0, delta)
            a2 = E.up_exponent((mb, mb), (mb - d, mb), q0, delta)
            assert worst <= max(a1, a2) * (1 + 1e-9) + 1e-12


@pytest.mark.parametrize("total, p, delta", [(44, 0.5, 1e-4), (50, 0.9, 1e-2), (36, 0.1, 1e-6)])
def test_a_block_needs_a2_only_at_its_end(total, p, delta):
    """L5 (`_rr_pairs` docstring): every pair at a distance D in [D1, D2] needs at most
    max(a1(D2, Ma) / D1, a2(D2, Mb) / D2), Ma + Mb = N + D1 + 1: checked for every block, two splits each."""
    q0 = p / 2
    worst = [0.0] + [
        max(max(RR._rr_pair_epsilons(s, d, total, q0, delta)) for s in range(total - d + 1))
        for d in range(1, total + 1)
    ]
    for d1 in range(1, total):
        worlds = total + d1 + 1
        for d2 in range(d1, min(total, worlds // 2) + 1):
            for share in (0.5, 0.8):
                ma = E._split_world(d2, worlds, share, total)
                a1, a2 = E._split_cover(d2, ma, worlds, q0, delta)
                bound = max(a1 / d1, a2 / d2)
                assert max(worst[d1 : d2 + 1]) <= bound * (1 + 1e-9) + 1e-12


def test_a2_per_unit_distance_grows_with_the_distance():
    """L5: a2(D, M) is convex in D with a2(0, M) = 0, so a2(D, M) / D never falls (every D, two worlds)."""
    for m, q0, delta in ((200, 0.25, 1e-4), (150, 0.05, 1e-2)):
        per_unit = [E.up_exponent((m, m), (m - d, m), q0, delta) / d for d in range(1, m + 1)]
        assert all(b >= a * (1 - 1e-9) for a, b in zip(per_unit, per_unit[1:]))


def test_ten_million_bits_close_in_under_sixty_evaluations():
    """One world (L6) and blocks closed from the top (122 evaluations with the first covers, 55 with split worlds, 29 now): the work, not the
    value."""
    search = RR.rr_certified_search(1e-4, 0.5, 10_000 * 1_000)
    assert search.complete and search.epsilon == search.attained and search.evaluations <= 60


def test_small_p_closes_on_the_worst_pair_within_the_work_budget():
    """At p = 0.1, n k = 10^6, delta = 1e-6 the covers ran out of their 400 evaluations (a looser value); the
    split worlds close every block below the all-0 vs all-k value."""
    search = E.certified_search(10**6, 0.05, 1e-6)
    assert search.complete and search.epsilon == search.attained


def _every_pair(total: int, q0: float, delta: float) -> tuple[float, list[list[float]], list[list[float]]]:
    """(the largest epsilon over every pair of sums, a_up[S][D], a_dn[S][D] with a[S][0] = 0): every (S, D) among
    ``total`` bits in both directions, from the direct convolutions of `_rr_pair_epsilons`."""
    up, down = [], []
    for s in range(total):
        pairs = [RR._rr_pair_epsilons(s, d, total, q0, delta) for d in range(1, total - s + 1)]
        up.append([0.0] + [a * d for d, (a, _) in enumerate(pairs, 1)])
        down.append([0.0] + [b * d for d, (_, b) in enumerate(pairs, 1)])
    worst = max(max(row[d] / d for d in range(1, len(row))) for row in up + down)
    return worst, up, down


def _convex_breaks(rows: list[list[float]]) -> int:
    """How many (S, D) break D -> rows[S][D] being convex (to rounding)."""
    return sum(
        row[d] > 0.5 * (row[d - 1] + row[d + 1]) * (1 + 1e-9) + 1e-12 for row in rows for d in range(1, len(row) - 1)
    )


@pytest.mark.parametrize("total, p, delta", [(60, 0.5, 1e-4), (75, 0.95, 1e-6), (48, 0.1, 1e-6), (75, 0.99, 1e-2)])
def test_one_world_suffices(total, p, delta):
    """L6 (`_rr_pairs` docstring): for every S the down-direction exponent of (S, S + D) is convex in D (its D-free
    law is the numerator), so the worst pair over every (S, D) is one of (0, D) among all N bits, max over D of
    a1(D, N) / D; checked on every (S, D).  The same check on the up-direction (the varying law in the numerator)
    finds it not convex: the check has teeth, and a1 / D needs its blocks (D2 / D1)."""
    q0 = p / 2
    worst, up, down = _every_pair(total, q0, delta)
    assert _convex_breaks(down) == 0
    assert _convex_breaks(up) > 0
    one_world = max(RR._rr_pair_epsilons(0, d, total, q0, delta)[0] for d in range(1, total + 1))
    assert worst - 1e-12 <= one_world <= worst + 1e-12
    # both engines' searches find it (the tilted laws' only where 1 - p/2 is not within 1e-9 of 1)
    assert worst - 1e-12 <= RR._direct_search(total, q0, delta).epsilon <= worst * (1 + 1e-12) + 1e-12
    assert worst - 1e-9 <= E.certified_search(total, q0, delta).epsilon <= worst * (1 + 1e-7) + 1e-9


@pytest.mark.parametrize("p", [0.9, 0.95, 0.99])
@pytest.mark.parametrize("n, k", [(200, 1), (100, 20), (10, 1000)], ids=["nk200", "nk2000", "nk10^4"])
def test_p_near_one_is_certified_at_the_worst_pair(n, k, p):
    """At p = 0.95, n k = 2,000, delta = 1e-6 the covers stayed above the all-0 vs all-k value and ran out of work
    (0.01709 against 0.01526), at p = 0.99, n k = 10^4 ten times above it; one world (L6) closes on the pair within
    a hundred evaluations."""
    delta = 1e-6
    exact = _all_zero_all_k_mp(n * k, p, delta)
    cert = M.rr_shuffle_certificate(delta, p, k, n)
    assert cert.certified
    assert exact <= cert.epsilon <= exact * (1 + 1e-8) + 1e-12
    search = RR.rr_certified_search(delta, p, n * k)
    assert search.complete and search.evaluations <= 100 and search.epsilon == search.attained


def test_direct_search_work_is_bounded_before_it_runs(monkeypatch):
    """The search on direct convolutions evaluates each pair (0, D) at most once, never a pair (S, S + D) with S > 0
    (L6): at p = 0.95, n k = 400 the search over every S made 21,000 direct convolutions (16,616 pairs its covers
    left open, 4 s; 20 s at n k = 800), against a work estimate of 1.6e7.  The estimate is checked before the search
    runs; beyond it, at p/2 below 1e-9, the reason names the limit."""
    calls = []
    real = RR._rr_pair_epsilons
    monkeypatch.setattr(RR, "_rr_pair_epsilons", lambda *args: calls.append(args) or real(*args))
    assert M.rr_shuffle_certificate(1e-6, 0.95, 1, 400).certified
    assert calls and all(s == 0 for s, *_ in calls) and len(calls) <= 400
    assert (
        RR._direct_search_work(RR._DIRECT_MAX_BITS) <= RR._MAX_RR_WORK < RR._direct_search_work(RR._DIRECT_MAX_BITS + 1)
    )
    beyond = M.rr_shuffle_certificate(1e-6, 1e-10, 1, RR._DIRECT_MAX_BITS + 1)
    assert not beyond.certified
    assert f"n k = {RR._DIRECT_MAX_BITS + 1} beyond the search on direct convolutions" in beyond.reason


def test_inverse_reaches_the_target_at_the_issue_size():
    p = M.rr_shuffle_probability(0.3, 1e-4, 1000, 100)
    assert M.rr_shuffle_epsilon(1e-4, p, 1000, 100) <= 0.3
    assert M.rr_shuffle_epsilon(1e-4, p * 0.99, 1000, 100) > 0.3
    assert math.log((2 - p) / p) > 0.3


@pytest.mark.parametrize(
    "ones, bits, q0",
    [(159, 242, "0.025"), (150, 300, "1e-6"), (399, 400, "0.001"), (200, 260, "0.45"), (30, 400, "0.25")],
)
def test_two_binomial_laws_match_forty_digits_at_strong_tilts(ones, bits, q0):
    """The engine's law of the released count, on the windows the covers ask for, within 1e-10 (in ln) of a
    40-digit convolution: far below PMF_SLACK = 1e-9, the slack every bound takes.  Near q0 = 0 the tilt pushes a
    binomial's q to within 1e-9 of 1, where 1 - q in floating point lost the digits the slack relies on."""
    exact = _two_binomials_mp(ones, bits, q0)
    for lo in (0, bits // 2, int(0.9 * bits)):
        ours = E._log_law(ones, bits, float(q0), lo, bits)
        assert max(abs(o - x) for o, x in zip(ours, exact[lo:])) <= 1e-10


@pytest.mark.parametrize(
    "n, k, p, delta",
    [(100, 20, 0.5, 1e-2), (250, 40, 0.3, 1e-4), (1000, 100, 0.9, 1e-6), (99, 1010, 0.5, 1e-4), (500, 200, 0.05, 1e-3)],
)
def test_certified_epsilon_never_below_fifty_digits_of_the_worst_pair_up_to_n_k_1e5(n, k, p, delta):
    exact = _all_zero_all_k_mp(n * k, p, delta)
    cert = M.rr_shuffle_certificate(delta, p, k, n)
    assert cert.epsilon >= exact
    if cert.certified:  # the covers close on the worst pair wherever they run to the end
        assert cert.epsilon <= exact * 1.01


@pytest.mark.parametrize("n, k, p", [(10_000, 10, 0.5), (1_000, 100, 0.2)])
def test_smallest_delta_is_certified_within_one_percent_of_fifty_digits(n, k, p):
    """delta = 1e-300, the smallest accepted: the covers' tail share 1e-9 delta is subnormal there (1 / tail
    overflowed, an OverflowError); the answer is certified and closes on the worst pair."""
    exact = _all_zero_all_k_mp(n * k, p, 1e-300)
    cert = M.rr_shuffle_certificate(1e-300, p, k, n)
    assert cert.certified
    assert exact <= cert.epsilon <= exact * 1.01


def test_every_rr_entry_point_answers_at_the_smallest_delta():
    """n = 100, k = 10, p = 0.5 at delta = 1e-300 (the stranger's case): 1,000 bits are too few for any gain (the
    all-k outcome has mass 0.75^1000, far above delta), so every entry point gives the local ln 3, not a traceback;
    the inverse's p meets its target."""
    local = math.log(3.0)
    assert M.rr_shuffle_epsilon(1e-300, 0.5, 10, 100) == pytest.approx(local, rel=1e-12)
    assert M.metric_profile("rr-shuffle", 1e-300, 100, 10, p=0.5).uniform == pytest.approx(local, rel=1e-12)
    p = M.rr_shuffle_probability(0.8, 1e-300, 10, 100)
    assert M.rr_shuffle_epsilon(1e-300, p, 10, 100) <= 0.8 < M.rr_shuffle_epsilon(1e-300, p * 0.99, 10, 100)


@pytest.mark.parametrize("total, p, delta", [(2_000, 0.5, 1e-4), (50_000, 0.3, 1e-6), (600, 0.999, 1e-2)])
def test_narrow_first_window_gives_the_whole_windows_value(total, p, delta, monkeypatch):
    """`up_exponent` first reads outcomes from 1 sd above the numerator's mean, bounding everything below by the
    tails' ratio there: the covers' values must be those of the whole Hoeffding window (up to the rounding of the
    laws)."""
    pairs = [((d, m), (0, m)) for d, m in ((total // 7, total // 2), (total // 2, total), (total, total))]
    pairs += [((m, m), (m - d, m)) for d, m in ((total // 7, total // 2), (total // 3, total))]
    narrow = [E.up_exponent(num, den, p / 2, delta) for num, den in pairs]
    monkeypatch.setattr(E, "_LOW_SDS", 1e9)
    whole = [E.up_exponent(num, den, p / 2, delta) for num, den in pairs]
    for a, b in zip(narrow, whole):
        assert a == pytest.approx(b, rel=1e-11, abs=1e-12)


@pytest.mark.parametrize("ones, bits, q0", [(150, 300, "1e-6"), (200, 400, "1e-5"), (100, 250, "1e-4")])
def test_skewed_laws_match_forty_digits_from_every_window_start(ones, bits, q0):
    """Near q0 = 0 the law of the count is sharply skewed around ``ones`` (the q0 bits almost never read 1), and a
    tilt trusted on its full 3.5 tilted sds read FFT rounding there: up to 3 nats off (or -inf) depending on where
    the window started.  Each tilt is now trusted only within e^-7 of its largest value."""
    exact = np.array(_two_binomials_mp(ones, bits, q0))
    for lo in range(0, bits, 7):
        assert np.abs(E._log_law(ones, bits, float(q0), lo, bits) - exact[lo:]).max() <= 1e-10


def test_slack_charged_covers_the_log_gamma_rounding_at_ten_million_bits():
    """At m = 10^7 the log-gamma formula's terms (ln m! ~ 1.5e8) carry rounding of 3e-8 in the log pmf, far above
    the 1e-9 slack once charged at every size: the slack `up_exponent` charges at m bits must cover it."""
    m, q = 10**7, 0.25
    slack = getattr(E, "_pmf_slack", lambda _: E.PMF_SLACK)(m)
    ys = list(range(2_500_000 - 8_000, 2_500_000 + 8_001, 1_999))
    ours = E._log_binomial(m, math.log(q) - math.log1p(-q), ys[0], ys[-1])
    with mpmath.workdps(40):
        exact = [
            mpmath.log(mpmath.binomial(m, y))
            + y * mpmath.log(mpmath.mpf(1) / 4)
            + (m - y) * mpmath.log(mpmath.mpf(3) / 4)
            for y in ys
        ]
    worst = max(abs(float(ours[y - ys[0]] - x)) for y, x in zip(ys, exact))
    assert worst > 1e-9  # the rounding is real at this size ...
    assert worst <= math.log1p(slack) / 4  # ... and charged, with room


@pytest.mark.parametrize("m, lo, hi", [(10**6, 1_000, 40_000), (10**5, 0, 100_000), (3_000, 0, 3_000)])
def test_stepped_log_factorials_stay_within_the_slack(m, lo, hi):
    """`_LogChoose` steps from a log-gamma anchor by ln((j + 1) / (m - j)): at 40 digits, every value (anchors,
    the steps just before the next anchor, the ends) within a quarter of the slack charged at m bits."""
    values = E._LogChoose(m)(lo, hi)
    every = E._ANCHOR_EVERY
    js = sorted(
        {lo, hi, lo + every - 1, lo + every, (lo + hi) // 2, hi - 1} | set(range(lo + every - 1, hi, 7 * every))
    )
    with mpmath.workdps(40):
        worst = max(abs(float(values[j - lo] - (mpmath.loggamma(j + 1) + mpmath.loggamma(m - j + 1)))) for j in js)
    assert worst <= math.log1p(E._pmf_slack(m)) / 4


@pytest.mark.parametrize(
    "ones, bits, q0", [(700, 2_000, 0.25), (0, 3_000, 0.05), (2_500, 2_500, 0.45), (10, 900, 1e-3)]
)
def test_chernoff_end_leaves_at_most_the_tail_above_it(ones, bits, q0):
    """The window's end from Chernoff: the exact mass above it (a float convolution, exact to ~1e-300 there) is at
    most the tail it stands for, and at small q0 it cuts far sooner than Hoeffding's sqrt(m ln(1/tail) / 2)."""
    tail = 1e-13
    end = E._chernoff_end(ones, bits, q0, math.log(tail))
    law = np.convolve(
        stats.binom.pmf(np.arange(ones + 1), ones, 1 - q0), stats.binom.pmf(np.arange(bits - ones + 1), bits - ones, q0)
    )
    assert law[end:].sum() <= tail
    mean = ones * (1 - q0) + (bits - ones) * q0
    if q0 <= 0.05:
        assert end < mean + 0.6 * E._hoeffding_halfwidth(bits, math.log(tail))


def test_tilt_centres_the_mean_where_asked():
    """`_tilt_for_mean` (Newton in a bracket, replacing a bracketed root finder): the tilted mean is the centre,
    from the edges of the support to its middle, for logits from near 0 to beyond +-20."""
    for a, b in ((10**7 - 3, 3), (5_000_000, 2_500_000), (1, 400), (150, 150)):
        for q0 in (0.25, 1e-6, 0.45, 1e-9):
            l0 = math.log(q0) - math.log1p(-q0)
            for centre in (0.5, 1.5, (a + b) / 3, (a + b) / 2 + 0.25, a + b - 1.5, a + b - 0.5):
                theta = E._tilt_for_mean(a, -l0, b, l0, centre)
                mean = a * E._expit(-l0 + theta) + b * E._expit(l0 + theta)
                assert mean == pytest.approx(centre, rel=1e-9, abs=1e-9)


def test_one_window_from_above_the_mean_suffices(monkeypatch):
    """Below its first window `up_exponent` bounds the threshold term by SF_num / SF_den at the window's first
    outcome (non-decreasing, L1), not by 1 / SF_den: a window from 1 sd above the numerator's mean then settles
    every pair the covers ask for at 10^5 bits without reading the whole Hoeffding window."""
    windows = []
    read = E._threshold_maximum
    monkeypatch.setattr(E, "_threshold_maximum", lambda *args, **kw: windows.append(args[4]) or read(*args, **kw))
    monkeypatch.setattr(E, "_LOW_SDS", -1.0)
    total, q0, delta = 100_000, 0.25, 1e-4
    for d, m in ((3, total // 2), (300, total // 2), (total // 3, total * 2 // 3), (total - 10, total)):
        windows.clear()
        E.pair_exponents(d, m, q0, delta)
        assert len(windows) == 2  # one window per direction


def test_chunked_log_survival_is_the_log_sum_recursion():
    rng = np.random.default_rng(5)
    for slope in (1e-3, 0.5, 2.2, 40.0, 900.0):
        for size in (1, 63, 64, 1000, 20_000):
            x = -np.cumsum(rng.random(size) * slope * rng.choice([-1.0, 1.0], size=size, p=[0.3, 0.7])) + 50.0
            ref = np.logaddexp.accumulate(x[::-1])[::-1]
            assert np.allclose(E._log_sf(x), ref, rtol=1e-13, atol=1e-12)
    x = np.array([-np.inf] * 10 + list(-np.arange(100.0)) + [-np.inf])
    assert np.array_equal(E._log_sf(x), np.logaddexp.accumulate(x[::-1])[::-1])
