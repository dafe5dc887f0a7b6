"""Certified RR-Shuffle and SGDL-Shuffle epsilons (shuffledp.accounting.metric) against brute force.

Every check is the same: over every pair of datasets (or of sums), the smallest eps with both hockey-stick
divergences of the analyst's view <= delta at e^(eps d), d the Manhattan distance (Definition 4).  The certified
value must pass it; a value 1% lower, or the paper's theorem, must not (where the check says it is violated).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from shuffledp.accounting import metric as M
from shuffledp.accounting.metric import rr_shuffle as RR
from shuffledp.errors import PrivacyParameterError
from shuffledp.protocols.metric import RRShuffle, SGDLShuffle


def _hockey(P: np.ndarray, Q: np.ndarray, factor: float) -> float:
    return float(np.maximum(P - factor * Q, 0.0).sum())


def _pair_epsilon(P: np.ndarray, Q: np.ndarray, d: int, delta: float, top: float) -> float:
    """Smallest eps (bisection, returned from above) with both divergences at e^(eps d) <= delta."""
    lo, hi = 0.0, top
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        ok = max(_hockey(P, Q, math.exp(mid * d)), _hockey(Q, P, math.exp(mid * d))) <= delta
        lo, hi = (lo, mid) if ok else (mid, hi)
    return hi


def _violated(laws: dict, distance, eps: float, delta: float) -> bool:
    """Does some pair of ``laws`` break (eps, delta) at e^(eps d)?"""
    keys = list(laws)
    for a, b in itertools.combinations(keys, 2):
        d = distance(a, b)
        if d == 0:
            continue
        factor = math.exp(eps * d)
        if max(_hockey(laws[a], laws[b], factor), _hockey(laws[b], laws[a], factor)) > delta:
            return True
    return False


# --- RR-Shuffle: the released bits, materialised -------------------------------------------------------------


def _rr_view_laws(n: int, k: int, p: float) -> dict[tuple[int, ...], np.ndarray]:
    """Every dataset in {0..k}^n -> law of the shuffled bits (a multiset of bits: its number of ones), by enumerating
    every RR outcome of the n k materialised bits of U(x_i, k) (Algorithm 2: each bit flipped with probability p/2)."""
    q0 = p / 2.0
    flips = np.array(list(itertools.product((0, 1), repeat=n * k)), dtype=np.int64)  # every flip pattern
    weight = np.prod(np.where(flips == 1, q0, 1.0 - q0), axis=1)
    laws = {}
    for x in itertools.product(range(k + 1), repeat=n):
        bits = np.concatenate([(np.arange(k) < xi).astype(np.int64) for xi in x])  # U(x_i, k), concatenated
        out = bits[None, :] ^ flips
        shuffled = np.sort(out, axis=1)  # a uniformly random permutation shows exactly the sorted bits
        ones = shuffled.sum(axis=1)
        assert np.array_equal(shuffled, (np.arange(n * k)[None, :] >= n * k - ones[:, None]).astype(np.int64))
        laws[x] = np.bincount(ones, weights=weight, minlength=n * k + 1)
    return laws


def _manhattan(a, b) -> int:
    return int(np.abs(np.subtract(a, b)).sum())


@pytest.mark.parametrize(
    "n, k, p, delta", [(2, 2, 0.4, 1e-3), (3, 2, 0.7, 1e-2), (2, 3, 0.25, 1e-4), (4, 1, 0.9, 0.05)]
)
def test_rr_certified_is_the_exact_worst_pair_of_materialised_bits(n, k, p, delta):
    laws = _rr_view_laws(n, k, p)
    worst = 0.0
    for a, b in itertools.combinations(laws, 2):
        worst = max(worst, _pair_epsilon(laws[a], laws[b], _manhattan(a, b), delta, 2 * math.log(2 / p)))
    certified = M.rr_shuffle_epsilon(delta, p, k, n)
    assert worst - 1e-9 <= certified <= worst + 1e-7  # exact, rounded upward
    assert not _violated(laws, _manhattan, certified, delta)
    assert _violated(laws, _manhattan, 0.99 * certified, delta)  # a bound 1% too small is caught
    assert certified <= math.log((2 - p) / p)


def _rr_count_laws(total: int, p: float) -> dict[int, np.ndarray]:
    """S -> law of the count, Bin(S, 1 - p/2) + Bin(N - S, p/2) (direct convolution)."""
    y = np.arange(total + 1)
    return {
        s: np.convolve(stats.binom.pmf(y[: s + 1], s, 1 - p / 2), stats.binom.pmf(y[: total - s + 1], total - s, p / 2))
        for s in range(total + 1)
    }


def _rr_full_search(total: int, p: float, delta: float) -> float:
    laws = _rr_count_laws(total, p)
    return max(
        _pair_epsilon(laws[s], laws[s + d], d, delta, min(2 * math.log(2 / p), 700 / d))
        for d in range(1, total + 1)
        for s in range(total - d + 1)
    )


def test_rr_count_law_matches_materialised_bits():
    laws, counts = _rr_view_laws(3, 2, 0.3), _rr_count_laws(6, 0.3)
    for x, law in laws.items():
        np.testing.assert_allclose(law, counts[sum(x)], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(
    "total, p, delta", [(20, 0.5, 1e-2), (40, 0.6, 1e-4), (25, 0.9, 1e-3), (60, 0.05, 1e-5), (50, 0.95, 1e-2)]
)
def test_rr_certified_matches_the_search_over_every_sum(total, p, delta):
    """The cover/refine search (blanket removal, per-S refinement) returns the maximum over every (S, D)."""
    full = _rr_full_search(total, p, delta)
    certified = M.rr_shuffle_certified_epsilon(delta, p, total, 1)
    assert full - 1e-9 <= certified <= full + 1e-7
    assert certified == M.rr_shuffle_certified_epsilon(delta, p, 1, total)  # only n k matters


@pytest.mark.parametrize("method", ["certified", "theorem-3.1"])
@pytest.mark.parametrize("n, k", [(100, 1000), (37, 54), (3, 900)])
def test_rr_results_depend_on_n_and_k_only_through_n_k(n, k, method):
    """Swapping n and k (RR takes ``k, n``, Geo-Shuffle ``n, k``) is harmless: the analyst sees n k bits."""
    assert M.rr_shuffle_epsilon(1e-4, 0.5, k, n, method=method) == M.rr_shuffle_epsilon(1e-4, 0.5, n, k, method=method)
    assert M.rr_shuffle_probability(0.7, 1e-4, k, n, method=method) == M.rr_shuffle_probability(
        0.7, 1e-4, n, k, method=method
    )


@pytest.mark.parametrize("total, p, delta", [(16, 0.5, 1e-2), (24, 0.2, 1e-4), (20, 0.9, 1e-3)])
def test_rr_pair_epsilons_and_blanket_removal(total, p, delta):
    """Fact (a): threshold sets give each pair's exact epsilon, per direction; fact (b): the pair (0, D) among
    ceil((N + D)/2) bits covers every S; and the search started from nothing (every step exercised: cover, refine,
    exact S) still finds the maximum over every (S, D)."""
    laws = _rr_count_laws(total, p)
    top = 2 * math.log(2 / p)
    full = 0.0
    for d in range(1, total + 1):
        half = (total + d + 1) // 2
        cover = max(RR._rr_pair_epsilons(0, d, half, p / 2, delta))
        for s_ in range(total - d + 1):
            up, down = RR._rr_pair_epsilons(s_, d, total, p / 2, delta)
            lo_up, hi_up = 0.0, top
            for _ in range(60):  # the up direction alone, by bisection on the hockey-stick divergence
                mid = 0.5 * (lo_up + hi_up)
                lo_up, hi_up = (
                    (lo_up, mid) if _hockey(laws[s_ + d], laws[s_], math.exp(mid * d)) <= delta else (mid, hi_up)
                )
            assert hi_up - 1e-9 <= up <= hi_up + 1e-7
            both = _pair_epsilon(laws[s_], laws[s_ + d], d, delta, top)
            assert both - 1e-9 <= max(up, down) <= both + 1e-7
            assert max(up, down) <= cover + 1e-12
            full = max(full, both)
    assert full - 1e-9 <= RR._rr_search(total, p / 2, delta, 0.0, range(1, total + 1)) <= full + 1e-7


@pytest.mark.parametrize("total, p, delta", [(20, 0.5, 1e-2), (40, 0.6, 1e-4), (25, 0.9, 1e-3)])
def test_rr_search_finds_each_distance_worst_sum(total, p, delta):
    """Per distance the worst S is often not 0 (discreteness); the search started at the S = 0 pair's value (as the
    certified epsilon starts at all zeros against all k) must still find it: cover, refine and exact steps."""
    laws = _rr_count_laws(total, p)
    top = 2 * math.log(2 / p)
    inner = 0
    for d in range(1, total):
        by_s = [_pair_epsilon(laws[s_], laws[s_ + d], d, delta, top) for s_ in range(total - d + 1)]
        start = max(RR._rr_pair_epsilons(0, d, total, p / 2, delta))
        got = RR._rr_search(total, p / 2, delta, start, range(d, d + 1))
        assert max(by_s) - 1e-9 <= got <= max(by_s) + 1e-7
        inner += max(by_s) > by_s[0] + 1e-6
    assert inner > 0  # some distance has its worst pair inside: the check has teeth


def test_theorem_31_is_caught_by_the_same_check():
    """Theorem 3.1 within its own condition (N = 400 bits, p = 0.3: lambda = 120 >= 14 log(40) = 51.6) gives 1.13;
    all zeros against all ones (S = 0 against S = N) needs 1.29 (divergence 0.92 at the theorem's eps)."""
    total, p, delta = 400, 0.3, 0.1
    paper = M.rr_shuffle_epsilon(delta, p, total, 1, method="theorem-3.1")
    y = np.arange(total + 1)
    far = {0: stats.binom.pmf(y, total, p / 2), total: stats.binom.pmf(y, total, 1 - p / 2)}
    assert _violated(far, lambda a, b: abs(a - b), paper, delta)
    certified = M.rr_shuffle_epsilon(delta, p, total, 1)
    assert paper < certified and not _violated(far, lambda a, b: abs(a - b), certified, delta)


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 4),
    k=st.integers(1, 6),
    p=st.floats(0.02, 0.98),
    delta=st.floats(1e-8, 0.3),
)
def test_rr_certified_property(n, k, p, delta):
    certified = M.rr_shuffle_epsilon(delta, p, k, n)
    assert 0.0 <= certified <= math.log((2 - p) / p)
    full = _rr_full_search(n * k, p, delta)
    assert full - 1e-9 <= certified <= full + 1e-7


def test_rr_fallback_and_inverse():
    # beyond MAX_RR_BITS: the local epsilon, which is always valid; below it the covers certify far less
    assert M.rr_shuffle_epsilon(1e-4, 0.3, 1, RR.MAX_RR_BITS + 1) == math.log(1.7 / 0.3)
    assert M.rr_shuffle_epsilon(1e-4, 0.3, 1000, 100) < 0.75 * math.log(1.7 / 0.3)
    # the certified epsilon never increases with p (RR(p') is a post-processing of RR(p) for p' > p)
    values = [M.rr_shuffle_epsilon(1e-4, p, 8, 5) for p in (0.1, 0.2, 0.4, 0.8)]
    assert values == sorted(values, reverse=True)
    # the inverse: smallest p reaching the target
    p = M.rr_shuffle_probability(0.7, 1e-4, 8, 5)
    assert M.rr_shuffle_epsilon(1e-4, p, 8, 5) <= 0.7 < M.rr_shuffle_epsilon(1e-4, p * (1 - 1e-5), 8, 5)
    with pytest.raises(PrivacyParameterError, match="method must be one of certified, theorem-3.1"):
        M.rr_shuffle_epsilon(1e-4, 0.5, 3, 3, method="theorem-4.1")
    proto = RRShuffle.for_epsilon(0.7, 1e-4, 8, 5)
    assert proto.p == p and proto.epsilon <= 0.7


@pytest.mark.parametrize("k, p, delta", [(3, 0.5, 1e-2), (5, 0.3, 1e-3), (6, 0.8, 0.05)])
def test_rr_certified_local_epsilon_is_exact_on_positioned_bits(k, p, delta):
    """Compromised shuffler: one user's k bits arrive in their positions; every x, x' in {0..k} by enumeration."""
    q0 = p / 2.0
    flips = np.array(list(itertools.product((0, 1), repeat=k)), dtype=np.int64)
    weight = np.prod(np.where(flips == 1, q0, 1.0 - q0), axis=1)
    laws = {}
    for x in range(k + 1):
        out = (np.arange(k) < x).astype(np.int64)[None, :] ^ flips  # U(x, k) after RR, positions kept
        laws[x] = np.bincount(out @ (1 << np.arange(k)), weights=weight, minlength=2**k)
    assert all(abs(law.sum() - 1.0) < 1e-12 for law in laws.values())
    worst = max(
        _pair_epsilon(laws[a], laws[b], b - a, delta, 2 * math.log(2 / p)) for a, b in itertools.combinations(laws, 2)
    )
    certified = M.rr_shuffle_local_epsilon(delta, p, k)
    assert worst - 1e-9 <= certified <= worst + 1e-7
    assert _violated(laws, lambda a, b: abs(a - b), 0.99 * certified, delta)


def test_theorem_71_is_caught():
    """Theorem 7.1 at p = 0.5, k = 1000, delta = 0.01 gives 0.67; x = 0 against x = 1 shows one bit, Bern(3/4) against
    Bern(1/4), which needs ln(0.74 / 0.25) = 1.085."""
    paper = M.rr_shuffle_local_epsilon(0.01, 0.5, 1000, method="theorem-7.1")
    one_bit = {0: np.array([0.75, 0.25]), 1: np.array([0.25, 0.75])}
    assert _violated(one_bit, lambda a, b: abs(a - b), paper, 0.01)
    certified = M.rr_shuffle_local_epsilon(0.01, 0.5, 1000)
    assert certified >= math.log(0.74 / 0.25) - 1e-12 and not _violated(
        one_bit, lambda a, b: abs(a - b), certified, 0.01
    )
    out = M.compromised_local_epsilons(0.2, 0.01, 150, 1000)  # certified defaults: RR always has a value
    assert out["rr-shuffle"] == M.rr_shuffle_local_epsilon(0.01, M.rr_shuffle_probability(0.2, 0.01, 1000, 150), 1000)


# --- SGDL-Shuffle: the exact law of the sum of truncated reports ---------------------------------------------


def _sgdl_view_laws(eps: float, n: int, k: int, c: int) -> dict[tuple[int, ...], np.ndarray]:
    """Every dataset in {0..k}^n -> law of sum_i clip(x_i + N_i + c, 0, k + 2c), N_i ~ SGDL(1/n, e^-eps)
    (Eq. 6), the noise tabulated on [-R, R] with the far tails (< 1e-15) dropped."""
    w, p = k + 2 * c, math.exp(-eps)
    r = np.arange(-(w + 400), w + 401)
    noise = M.sgdl_pmf(r, 1.0 / n, p)
    assert 1 - noise.sum() < 1e-14
    users = {x: np.bincount(np.clip(x + r + c, 0, w), weights=noise, minlength=w + 1) for x in range(k + 1)}
    laws = {}
    for xs in itertools.combinations_with_replacement(range(k + 1), n):  # the law depends on the multiset
        law = np.ones(1)
        for x in xs:
            law = np.convolve(law, users[x])
        laws[xs] = law
    return laws


def _sorted_manhattan(a, b) -> int:
    return int(np.abs(np.array(a) - np.array(b)).sum())  # sorted tuples: the closest orderings


@pytest.mark.parametrize(
    "eps, n, k, delta, c", [(1.0, 3, 2, 1e-3, None), (0.7, 2, 3, 1e-2, 10), (1.5, 3, 4, 1e-3, None)]
)
def test_sgdl_certified_covers_every_pair_and_theorem_51_does_not(eps, n, k, delta, c):
    c_used = M.sgdl_shuffle_c(eps, delta, n) if c is None else c
    laws = _sgdl_view_laws(eps, n, k, c_used)
    certified = M.sgdl_shuffle_epsilon(eps, delta, n, k, c=c)
    assert not _violated(laws, _sorted_manhattan, certified, delta)
    assert certified <= M.sgdl_shuffle_report_epsilon(eps, n)
    worst = max(
        _pair_epsilon(laws[a], laws[b], _sorted_manhattan(a, b), delta, 50.0)
        for a, b in itertools.combinations(laws, 2)
    )
    assert worst <= certified
    if k <= 2 * c_used:
        assert certified < M.sgdl_shuffle_report_epsilon(eps, n)  # the conditioned analysis bites


@settings(max_examples=15, deadline=None)
@given(
    eps=st.floats(0.3, 3.0),
    n=st.integers(1, 3),
    k=st.integers(1, 3),
    delta=st.floats(1e-5, 0.1),
    extra=st.integers(0, 6),
)
def test_sgdl_certified_property(eps, n, k, delta, extra):
    """Over a small box (padding from the protocol's c up): no pair of datasets breaks the certified epsilon, which
    never exceeds the per-report epsilon."""
    c = M.sgdl_shuffle_c(eps, delta, n) + extra
    certified = M.sgdl_shuffle_epsilon(eps, delta, n, k, c=c)
    assert certified <= M.sgdl_shuffle_report_epsilon(eps, n)
    assert not _violated(_sgdl_view_laws(eps, n, k, c), _sorted_manhattan, certified, delta)


def test_theorem_51_is_caught_by_the_same_check():
    """SGDL-Shuffle(eps = 1, delta = 1e-4, n = 3) on {0..6}: the paper's eps is not enough for the far pairs."""
    eps, delta, n, k = 1.0, 1e-4, 3, 6
    c = M.sgdl_shuffle_c(eps, delta, n)
    laws = _sgdl_view_laws(eps, n, k, c)
    assert _violated(laws, _sorted_manhattan, M.sgdl_shuffle_epsilon(eps, delta, n, k, method="theorem-5.1"), delta)
    assert not _violated(laws, _sorted_manhattan, M.sgdl_shuffle_epsilon(eps, delta, n, k), delta)


def test_sgdl_report_epsilon_is_the_largest_unit_step():
    """Log-convexity on m >= 0: the unit-step loss ln(pmf(m)/pmf(m+1)) is largest at m = 0 (checked on a range),
    tends to eps, and equals Theorem 7.2's value (its d = 1 term)."""
    for eps, n in [(0.1, 100), (0.5, 10), (2.0, 3), (1.0, 1)]:
        logs = M.log_sgdl_pmf(np.arange(0, 3000), 1.0 / n, math.exp(-eps))
        steps = logs[:-1] - logs[1:]
        assert np.all(np.diff(steps) <= 1e-9) and steps[-1] == pytest.approx(eps, rel=0.05)
        assert steps[0] <= M.sgdl_shuffle_report_epsilon(eps, n) == pytest.approx(steps[0], rel=1e-8)
        assert M.sgdl_shuffle_report_epsilon(eps, n) == pytest.approx(M.sgdl_shuffle_local_epsilon(eps, n), rel=1e-8)


def test_sgdl_fallbacks_and_protocol():
    eps, delta = 0.3, 1e-4
    report = M.sgdl_shuffle_report_epsilon(eps, 100)
    assert M.sgdl_shuffle_epsilon(eps, delta, 100) == report  # unbounded values
    assert M.sgdl_shuffle_epsilon(eps, delta, 100, 1000) == report  # k > 2c: supports of T + D and T part
    assert M.sgdl_shuffle_epsilon(eps, delta, 100, 1000, method="theorem-5.1") == eps
    assert M.sgdl_shuffle_epsilon(1.0, 1e-4, 10, 4, c=0) <= M.sgdl_shuffle_report_epsilon(
        1.0, 10
    )  # no padding: exhaustive
    with pytest.raises(PrivacyParameterError, match="method must be one of certified, theorem-5.1"):
        M.sgdl_shuffle_epsilon(eps, delta, 10, 3, method="theorem-3.1")
    proto = SGDLShuffle(1.0, 1e-4, 10, 4, c=20)
    assert proto.width == 4 + 40 and proto.shuffle_epsilon == M.sgdl_shuffle_epsilon(1.0, 1e-4, 10, 4, c=20) < 1.1
    assert SGDLShuffle(1.0, 1e-4, 10, 4, method="theorem-5.1").shuffle_epsilon == 1.0


def test_sgdl_conditioned_noise_is_the_truncated_convolution():
    pmf, delta_1 = M.sgdl_shuffle_conditioned_noise(0.8, 4, 3)
    one = M.sgdl_pmf(np.arange(-4, 5), 1 / 3, math.exp(-0.8))
    inside = one.sum()
    one = one / inside
    np.testing.assert_allclose(pmf, np.convolve(np.convolve(one, one), one), rtol=1e-12)
    assert 1 - inside**3 <= delta_1 <= 1  # an upper bound on Pr[some |N_i| > c]
