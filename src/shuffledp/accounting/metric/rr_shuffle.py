"""RR-Shuffle (metric paper §3, Theorems 3.1 and 7.1): a certified epsilon (the default: the exact divergence of
the released count over every pair of datasets, see `rr_shuffle_certified_epsilon`) beside Theorem 3.1 as printed
(valid for nearby datasets only), with its inverse; the compromised shuffler likewise (certified, beside Theorem
7.1); the theorems keep their validity conditions (`shuffledp.errors.ValidityConditionError` names the minimum n /
p or maximum eps).  The protocol is `shuffledp.protocols.metric.RRShuffle`.
"""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np
from scipy import special

from shuffledp._util.validation import check_epsilon, check_positive_int
from shuffledp.accounting._checks import check_delta, check_n
from shuffledp.accounting._rounding import N_MAX, RR_MIN_P, RR_P_RANGE
from shuffledp.accounting.metric._common import PMF_SLACK as _PMF_SLACK
from shuffledp.accounting.metric._common import CertifiedEpsilon
from shuffledp.accounting.metric._common import check_method as _check_method
from shuffledp.accounting.metric._rr_pairs import (
    RRSearch,
    all_zero_all_k_epsilon,
    certified_search,
    worst_pair_search,
)
from shuffledp.errors import ValidityConditionError

# --- RR-Shuffle (§3, Theorems 3.1 and 7.1) ---------------------------------------------------------------


def _rr_epsilon(lam: float, delta: float) -> float:
    """sqrt(32 log(4/delta) / (lambda - sqrt(2 lambda log(2/delta)))) (natural logarithms, as in Cheu et al.)."""
    return math.sqrt(32.0 * math.log(4.0 / delta) / (lam - math.sqrt(2.0 * lam * math.log(2.0 / delta))))


def rr_minimum_lambda(delta: float) -> float:
    """14 log(4/delta): the smallest expected number of random bits Theorem 3.1 accepts.

    Parameters
    ----------
    delta : float, in (0, 1)
        Target delta.

    Returns
    -------
    float
        14 log(4/delta).

    Raises
    ------
    PrivacyParameterError
        For ``delta`` out of range.

    References
    ----------
    metric-privacy-shuffler.txt §3, Theorem 3.1 (validity condition).

    Examples
    --------
    >>> round(rr_minimum_lambda(1e-4), 6) == round(14 * math.log(4e4), 6)
    True
    """
    return 14.0 * math.log(4.0 / check_delta(delta))


def rr_shuffle_epsilon_paper(delta: float, p: float, k: int, n: int) -> float:
    """Theorem 3.1 as printed: RR-Shuffle(delta, p, k, n) is (eps, delta)-d_X-private, lambda = p n k.

    NOT a valid bound for datasets far apart (all zeros against all k: the released counts are told apart,
    see `rr_shuffle_certified_epsilon`); kept to reproduce the paper (``method="theorem-3.1"``).  Its
    argument is the binary-summation bound of Cheu et al., which covers one bit changing, i.e. distance 1;
    Definition 4 needs every distance with the same delta.

    Applies when n k >= lambda >= 14 log(4/delta); otherwise `ValidityConditionError`
    naming the minimum n (and the largest epsilon the theorem can give).

    Parameters
    ----------
    delta : float, in (0, 1)
        Target delta.
    p : float, in (0, 1)
        Probability that a user's bit is replaced by a random bit.
    k : int, >= 1
        Largest value (values lie in {0..k}).
    n : int, >= 1
        Number of users.

    Returns
    -------
    float
        sqrt(32 log(4/delta) / (lambda - sqrt(2 lambda log(2/delta)))), lambda = p n k.

    Raises
    ------
    ValidityConditionError
        If lambda < 14 log(4/delta) (the theorem's condition).
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §3, Theorem 3.1.

    Examples
    --------
    >>> round(rr_shuffle_epsilon_paper(1e-4, 0.5, 1000, 100), 6)
    0.083184
    >>> rr_shuffle_epsilon_paper(1e-4, 0.5, 1, 10)
    Traceback (most recent call last):
    ...
    shuffledp.errors.ValidityConditionError: RR-Shuffle needs lambda = p n k >= 14 log(4/delta) = 148.353 (Theorem 3.1), got lambda = 5 at n=10, p=0.5, k=1: use n >= 297 (or a larger p)
    """
    delta = check_delta(delta)
    p = check_rr_p(p)
    k, n = check_positive_int(k, "k (largest value)"), check_n(n)
    lam, lam_min = p * n * k, rr_minimum_lambda(delta)
    if lam < lam_min:
        need = math.ceil(lam_min / (p * k))
        if need > N_MAX:  # beyond the accepted n: only a larger p helps
            p_min = lam_min / (N_MAX * k)
            while p_min * N_MAX * k < lam_min:  # round-off: the suggested p must satisfy the condition
                p_min = math.nextafter(p_min, 1.0)
            raise ValidityConditionError(
                f"RR-Shuffle needs lambda = p n k >= 14 log(4/delta) = {lam_min:.6g} (Theorem 3.1), got "
                f"lambda = {lam:.6g} at n={n}, p={p:g}, k={k}: no n <= 2^53 works at this p; use p >= {p_min:.6g}",
                minimum_p=p_min,
                maximum_epsilon=_rr_epsilon(lam_min, delta),
            )
        raise ValidityConditionError(
            f"RR-Shuffle needs lambda = p n k >= 14 log(4/delta) = {lam_min:.6g} (Theorem 3.1), got "
            f"lambda = {lam:.6g} at n={n}, p={p:g}, k={k}: use n >= {need} (or a larger p)",
            minimum_n=need,
            maximum_epsilon=_rr_epsilon(lam_min, delta),
        )
    return _rr_epsilon(lam, delta)


def rr_shuffle_probability_paper(epsilon: float, delta: float, k: int, n: int) -> float:
    """The RR parameter p in (0, 1) at which Theorem 3.1 gives ``epsilon`` (never above it; not a valid bound).

    lambda solves eps^2 (lambda - sqrt(2 lambda log(2/delta))) = 32 log(4/delta); below the validity
    floor 14 log(4/delta) the floor is used (a smaller epsilon).  If lambda >= n k (p would reach 1),
    `ValidityConditionError` names the minimum n.

    Parameters
    ----------
    epsilon : float, > 0
        Target shuffle-model epsilon.
    delta : float, in (0, 1)
        Target delta.
    k : int, >= 1
        Largest value.
    n : int, >= 1
        Number of users.

    Returns
    -------
    float
        p = lambda / (n k).

    Raises
    ------
    ValidityConditionError
        If the needed lambda reaches n k.
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §3, Theorem 3.1 (inverted).

    Examples
    --------
    Round trip through `rr_shuffle_epsilon`, never above the target:

    >>> p = rr_shuffle_probability_paper(0.5, 1e-4, 1000, 100)
    >>> eps = rr_shuffle_epsilon_paper(1e-4, p, 1000, 100)
    >>> 0 < p < 1, 0.4999 < eps <= 0.5
    (True, True)
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    k, n = check_positive_int(k, "k (largest value)"), check_n(n)
    b = math.sqrt(2.0 * math.log(2.0 / delta))
    s = (b + math.sqrt(b * b + 4.0 * 32.0 * math.log(4.0 / delta) / epsilon**2)) / 2.0
    lam = max(s * s, rr_minimum_lambda(delta))
    while _rr_epsilon(lam, delta) > epsilon:  # round-off: err toward more random bits
        lam = math.nextafter(lam, math.inf)
    if lam >= n * k:
        need = math.floor(lam / k) + 1
        if need > N_MAX:
            raise ValidityConditionError(
                f"RR-Shuffle cannot reach epsilon={epsilon:g} at delta={delta:g} with n={n}, k={k}: it needs "
                f"lambda = {lam:.6g} random bits (Theorem 3.1), more than n k for every n <= 2^53; use a larger epsilon"
            )
        raise ValidityConditionError(
            f"RR-Shuffle cannot reach epsilon={epsilon:g} at delta={delta:g} with n={n}, k={k}: it needs "
            f"lambda = {lam:.6g} random bits out of n k = {n * k} (Theorem 3.1); use n >= {need}",
            minimum_n=need,
        )
    return lam / (n * k)


def rr_shuffle_local_epsilon_paper(delta: float, p: float, k: int) -> float:
    """Theorem 7.1 as printed (compromised shuffler): eps_L of Theorem 3.1's formula with lambda_L = p k.
    NOT a valid bound: see `rr_shuffle_certified_local_epsilon`.

    Its proof says seeing one user's k bits is the same as seeing them shuffled; the bits arrive in their
    positions, so moving x by 1 shows one bit that is Bern(1 - p/2) against Bern(p/2) (loss up to
    ln((2 - p)/p), e.g. 1.085 at p = 0.5, delta = 0.01, where this formula gives 0.67 for k = 1000).

    Applies when k >= lambda_L >= 14 log(4/delta); otherwise `ValidityConditionError` naming the
    minimum p (or that k itself is too small).

    Parameters
    ----------
    delta : float, in (0, 1)
        Target delta.
    p : float, in (0, 1)
        Probability that a user's bit is replaced by a random bit.
    k : int, >= 1
        Largest value.

    Returns
    -------
    float
        eps_L of Theorem 3.1's formula at lambda_L = p k.

    Raises
    ------
    ValidityConditionError
        If p k < 14 log(4/delta).
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §7, Theorem 7.1.

    Examples
    --------
    One user's bits are n = 1 of the shuffle-model formula:

    >>> rr_shuffle_local_epsilon_paper(1e-4, 0.5, 1000) == rr_shuffle_epsilon_paper(1e-4, 0.5, 1000, 1)
    True
    """
    delta = check_delta(delta)
    p = check_rr_p(p)
    k = check_positive_int(k, "k (largest value)")
    lam, lam_min = p * k, rr_minimum_lambda(delta)
    if lam < lam_min:
        if lam_min > k:
            raise ValidityConditionError(
                f"Theorem 7.1 needs k >= 14 log(4/delta) = {lam_min:.6g} for any p, got k={k}", minimum_p=None
            )
        raise ValidityConditionError(
            f"Theorem 7.1 needs p k >= 14 log(4/delta) = {lam_min:.6g}, got p k = {lam:.6g} (p={p:g}, k={k}): "
            f"use p >= {lam_min / k:.6g}",
            minimum_p=lam_min / k,
            maximum_epsilon=_rr_epsilon(lam_min, delta),
        )
    return _rr_epsilon(lam, delta)


# --- RR-Shuffle, certified: the exact divergence of the released count, every pair of datasets -----------
#
# What the analyst sees.  Every bit of U(x_i, k) goes through RR(., p): it reads 1 with probability
# q1 = 1 - p/2 if it was 1, q0 = p/2 if it was 0 (Algorithm 2; `shuffledp.protocols.metric.RRShuffle`).  The
# shuffled bits are equivalent to their count (Proposition 1), whose law depends on the dataset only through
# S = sum_i x_i:  P_S = Bin(S, q1) + Bin(N - S, q0), N = n k.  Every S in 0..N is reached and every pair
# (S, S + D) by datasets at Manhattan distance exactly D (Eq. 1); a larger distance only relaxes
# Definition 4.  So the certified epsilon is the smallest eps with both D_{e^(eps D)}(P_{S+D} || P_S) and
# D_{e^(eps D)}(P_S || P_{S+D}) <= delta for all D = 1..N, S = 0..N - D.
#
# Facts used (each checked by tests/accounting/test_metric_certified_bounds.py):
#  (a) Threshold sets.  P_{S+D}(y) / P_S(y) is non-decreasing in y: P_{S+D} = Z + Bin(D, q1) and
#      P_S = Z + Bin(D, q0) with Z = Bin(S, q1) + Bin(N - S - D, q0) independent and log-concave, the two
#      binomials have the increasing ratio (q1/q0)^(2j - D), and convolving with a log-concave (PF2) kernel keeps
#      a monotone likelihood ratio (Karlin's composition formula).  So the hockey-stick divergence is a maximum
#      over threshold sets: D_{e^a}(P_{S+D} || P_S) = max_y SF_{S+D}(y) - e^a SF_S(y) (SF(y) = Pr[Y >= y]),
#      and the smallest a meeting delta is max_y ln((SF_{S+D}(y) - delta)_+ / SF_S(y)); likewise with CDFs
#      for the other direction.  No bisection.
#  (b) Removing blanket bits only helps the adversary.  The S one-bits and the N - S - D zero-bits outside the
#      D that differ add independent noise to both laws (post-processing), so the pair (S, S + D) in a world of
#      N bits is at most as distinguishable as the pair (0, D) in a world of M = N - S bits, and (reflecting
#      y -> M - y, ones <-> zeros) as the pair (M - D, M) in a world of M = S + D bits.  Hence, with
#      a1(D, M) / a2(D, M) the two directions of the pair (0, D) among M bits (both non-increasing in M):
#      direction "up" of (S, S+D) <= min(a1(D, N - S), a2(D, S + D)), direction "down" <= min(a2(D, N - S),
#      a1(D, S + D)); in particular every S is covered by the pair (0, D) among ceil((N + D) / 2) bits.
#  (c) Monotone in D (stochastic order).  P_{D+1}^M first-order dominates P_D^M (one more 1-bit), so
#      SF_{D+1}(y) >= SF_D(y) for every y; with the threshold form of (a) the smallest a meeting delta for the pair
#      (0, D) among M bits, a(D, M), is non-decreasing in D (both directions), and by (b) non-increasing in M.
#  (d) Reflection.  y -> N - y maps P_S^N to P_{N-S}^N, so the down-direction of (S, S + D) is the up-direction
#      of (N - S - D, N - S): the maximum over all pairs needs one direction per pair only.
#  Why all-0 vs all-k is the worst pair, and how it is certified without trusting that.  For a fixed S the
#  down-direction of (S, S + D) has its D-free law in the numerator and ln CDF_T(y) concave in T, so its exponent
#  is convex in D and 0 at D = 0: per unit distance it is largest at D = N - S, the pair (S, N), which (d) turns
#  into the up-direction of (0, N - S) among all N bits (`_rr_pairs`, L6).  So the exact worst case is
#  max over D of a1(D, N) / D, the pairs (0, D) among all N bits; for D in a block [D1, D2] it is at most
#  a1(D2, N) / D1 (c).  The search (`_rr_pairs.worst_pair_search`) starts at the exact value of the single pair at
#  D = N (all zeros against all k, Bin(N, q1) against Bin(N, q0)) and goes down, each evaluation closing the
#  widest block below the level; the result is the largest bound met, so it is valid whatever the blocks give,
#  and it *equals* the all-0 vs all-k value whenever that pair is the worst, which is what happened at every size
#  and p we ran (15 to 75 evaluations from n k = 200 to 10^6, p in [0.01, 0.99]).  Up to `_SMALL_EXACT_BITS` bits,
#  or for p/2 below `_COVER_MIN_Q0`, a1 comes from direct convolutions (`_rr_pair_epsilons`) instead of the tilted
#  laws, within a work limit checked before the search (`_direct_search_work`).
#  (e) Always valid: every bit is ln((2 - p)/p)-LDP and U(x, k) moves |x - x'| bits, so the release is
#      (ln((2 - p)/p), 0)-d_X-private (post-processing); the certified value never exceeds it, and it is
#      returned beyond `MAX_RR_BITS` = 10^7 bits.
#
# Rounding: log pmfs of the binomials come from a table of ln j! (log-gamma; absolute error ~ N ulp of ln N!,
# i.e. ~1e-12 relative on the pmf); a sum of two binomials is a direct convolution of positive terms (relative
# error ~ N ulp), after exponential tilting so that the region of interest is far from underflow; underflowed
# terms are 0, which can only raise the computed epsilon (they sit in denominators, and numerators, whose lost
# mass is below 1e-290, get an absolute 1e-250 added); tails are accumulated in log space.  Numerators are
# inflated and denominators deflated by _PMF_SLACK (1e-9), far above these errors.


def check_rr_p(p: float) -> float:
    """RR's p as a float in `RR_P_RANGE` = [RR_MIN_P, 1) (the range --p states at the command line)."""
    number = p if isinstance(p, numbers.Real) and not isinstance(p, bool) else math.nan
    note = f"local epsilon at most {rr_local(RR_MIN_P):.6g}" if 0.0 <= number < RR_MIN_P else ""
    return RR_P_RANGE.check(p, "p (RR randomization probability)", note)


def rr_local(p: float) -> float:
    """ln((2 - p)/p), the local epsilon of one RR bit (no overflow for p >= RR_MIN_P)."""
    return math.log((2.0 - p) / p)


#: Most multiply-adds of the exact RR-Shuffle search (beyond it the local epsilon ln((2-p)/p) is returned).
_MAX_RR_WORK = 6e8
#: The methods of `rr_shuffle_epsilon`.
RR_SHUFFLE_METHODS = ("certified", "theorem-3.1")


@functools.lru_cache(maxsize=4)
def _log_factorials(size: int) -> np.ndarray:
    """ln j! for j = 0..size (read-only)."""
    out = special.gammaln(np.arange(size + 1, dtype=np.float64) + 1.0)
    out.flags.writeable = False
    return out


def _log_binomial_pmf(m: int, log_q: float, log_r: float) -> np.ndarray:
    """ln Pr[Bin(m, q) = j], j = 0..m, from log_q = ln q and log_r = ln(1 - q) (each computed directly, so that
    q near 1 keeps its ln(1 - q); log-gamma form; absolute error ~ m ulp of ln m!)."""
    lf = _log_factorials(max(m, 64))
    j = np.arange(m + 1)
    return lf[m] - lf[j] - lf[m - j] + j * log_q + (m - j) * log_r


#: Tilts tried by `_log_two_binomials` (interpolated to put a centre at the tilted mean).
_TILT_GRID = np.linspace(-60.0, 60.0, 481)


def _log_two_binomials(
    a: int, qa: tuple[float, float], b: int, qb: tuple[float, float], centers: tuple[float, ...]
) -> np.ndarray:
    """log pmf of Bin(a, qa) + Bin(b, qb) on 0..a+b: direct convolutions of positive terms, exponentially tilted
    (by e^(theta y), then undone) so that each of ``centers`` is near the tilted mean once, plus the untilted one;
    the largest (least underflowed) value is kept.  ``qa``, ``qb``: (ln q, ln(1 - q)) of each binomial.  Any tilt gives the same exact value up to rounding: the tilt
    only decides where values fall below the float range (they are then 0)."""
    la, lb = _log_binomial_pmf(a, *qa), _log_binomial_pmf(b, *qb)
    if a == 0 or b == 0:
        return la if b == 0 else lb
    ya, yb, y = np.arange(a + 1.0), np.arange(b + 1.0), np.arange(a + b + 1.0)
    means = a * special.expit(qa[0] - qa[1] + _TILT_GRID) + b * special.expit(
        qb[0] - qb[1] + _TILT_GRID
    )  # the tilted mean, increasing in theta
    out = np.full(a + b + 1, -np.inf)
    for theta in (0.0, *np.interp(centers, means, _TILT_GRID)):
        ta, tb = la + theta * ya, lb + theta * yb
        ma, mb = ta.max(), tb.max()
        with np.errstate(divide="ignore"):
            conv = np.log(np.convolve(np.exp(ta - ma), np.exp(tb - mb))) + ma + mb - theta * y
        out = np.maximum(out, conv)
    return out


def _rr_pair_epsilons(s: int, d: int, total: int, q0: float, delta: float) -> tuple[float, float]:
    """(a_up, a_down) / d: the smallest eps with D_{e^(eps d)}(P_{s+d} || P_s) <= delta, resp. the other direction,
    P_S = Bin(S, 1 - q0) + Bin(total - S, q0) (fact (a) of the comment above; rounded upward)."""
    q1 = 1.0 - q0  # only for the centres: the logs below never take ln(1 - q1) (1 - q1 rounds to 0 for tiny q0)
    l0 = (math.log(q0), math.log1p(-q0))
    l1 = (l0[1], l0[0])  # Bin(., 1 - q0)
    centers = (s * q1 + (total - s) * q0, (s + d) * q1 + (total - s - d) * q0)
    log_p = _log_two_binomials(s, l1, total - s, l0, centers)
    log_q = _log_two_binomials(s + d, l1, total - s - d, l0, centers)
    a_up, a_down = _threshold_exponents(log_p, log_q, delta, np.ones(log_p.size, dtype=bool))
    return max(float(a_up), 0.0) / d, max(float(a_down), 0.0) / d


def _threshold_exponents(
    log_p: np.ndarray, log_q: np.ndarray, delta: float, valid: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Along the last axis (outcomes; ``valid`` marks the real ones): the largest over thresholds of
    ln((SF_q - delta)_+ / SF_p) and ln((CDF_p - delta)_+ / CDF_q), numerators inflated and denominators deflated by
    _PMF_SLACK (-inf where no threshold leaves mass above delta)."""
    cdf_p, sf_p = np.logaddexp.accumulate(log_p, axis=-1), np.logaddexp.accumulate(log_p[..., ::-1], axis=-1)[..., ::-1]
    cdf_q, sf_q = np.logaddexp.accumulate(log_q, axis=-1), np.logaddexp.accumulate(log_q[..., ::-1], axis=-1)[..., ::-1]
    up_slack = math.log1p(_PMF_SLACK)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        num_up = np.exp(sf_q + up_slack) + 1e-250 - delta
        a_up = np.where(num_up > 0.0, np.log(np.where(num_up > 0.0, num_up, 1.0)) - (sf_p - up_slack), -np.inf)
        num_down = np.exp(cdf_p + up_slack) + 1e-250 - delta
        a_down = np.where(num_down > 0.0, np.log(np.where(num_down > 0.0, num_down, 1.0)) - (cdf_q - up_slack), -np.inf)
    return np.where(valid, a_up, -np.inf).max(axis=-1), np.where(valid, a_down, -np.inf).max(axis=-1)


def _positioned_bits_epsilons(distances: np.ndarray, q0: float, delta: float) -> np.ndarray:
    """max(a_up, a_down) / d of Bin(d, 1 - q0) against Bin(d, q0) for every d in ``distances`` (the pairs
    ``_rr_pair_epsilons(0, d, d, q0, delta)``, the same terms in the same order, so the same values), a block of
    distances at a time (``distances`` increasing)."""
    log_q0, log_r0 = math.log(q0), math.log1p(-q0)
    lf = _log_factorials(max(int(distances.max()), 64))
    out = np.empty(distances.size)
    rows = max(1, min(64, 2_000_000 // (int(distances.max()) + 1)))  # few rows: little padding in each block
    for start in range(0, distances.size, rows):
        m = distances[start : start + rows, None].astype(np.int64)
        j = np.arange(int(m.max()) + 1)[None, :]
        valid = j <= m
        jj, mj = np.where(valid, j, 0), np.where(valid, m - j, 0)
        with np.errstate(invalid="ignore"):
            log_p = np.where(valid, lf[m] - lf[jj] - lf[mj] + jj * log_q0 + mj * log_r0, -np.inf)  # Bin(d, q0)
            log_q = np.where(valid, lf[m] - lf[jj] - lf[mj] + jj * log_r0 + mj * log_q0, -np.inf)  # Bin(d, 1 - q0)
        a_up, a_down = _threshold_exponents(log_p, log_q, delta, valid)
        out[start : start + m.shape[0]] = np.maximum(np.maximum(a_up, 0.0), np.maximum(a_down, 0.0)) / m[:, 0]
    return out


def rr_shuffle_certified_epsilon(delta: float, p: float, k: int, n: int) -> float:
    """The privacy-conservative RR-Shuffle epsilon: (eps, delta)-d_X-private for *every* pair of datasets.

    The exact smallest eps with D_{e^(eps D)} <= delta in both directions between the laws of the released count
    at every pair of sums (S, S + D), D = 1..n k (see the comment above this function in the source: threshold
    sets, monotonicity in D, reflection, one world suffices), certified by blocks of distances that close on the
    exact value of the worst pair, all zeros against all k, at every size and p run; at most the local epsilon
    ln((2 - p)/p), which is returned beyond n k = MAX_RR_BITS = 10^7.  It depends on n and k only through n k
    (swapping them is harmless).  Log
    space throughout; every truncated tail and rounding errs upward.  About 0.005 s at n k = 2,000, 0.01 s at
    10^5 and 0.05 s at 10^7 on a core (p = 0.5) (cached per (n k, p, delta); benchmarks/bench_metric.py).

    Parameters
    ----------
    delta : float, in (0, 1)
        Target delta.
    p : float, in (0, 1)
        Probability that a user's bit is replaced by a random bit.
    k : int, >= 1
        Largest value (values in {0..k}).
    n : int, >= 1
        Number of users.

    Returns
    -------
    float
        The certified epsilon, at most ln((2 - p)/p).

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §2.3 Definition 4 and Eq. 1, §3.2 Algorithm 2, §4 Proposition 1 (a conservative
    replacement of Theorem 3.1, which is not valid for datasets far apart).

    Examples
    --------
    Theorem 3.1's 0.083 at n = 100, k = 1000 does not survive all zeros against all thousands; the exact need of
    that pair, 0.5605, is what holds for every pair (half of the local ln 3 = 1.0986):

    >>> round(rr_shuffle_certified_epsilon(1e-4, 0.5, 1000, 100), 4)
    0.5605
    >>> round(rr_shuffle_certified_epsilon(1e-4, 0.5, 4, 50), 4)  # 200 bits: some gain over ln 3 = 1.0986
    0.7798
    """
    delta = check_delta(delta)
    p = check_rr_p(p)
    k, n = check_positive_int(k, "k (largest value)"), check_n(n)
    return rr_shuffle_certificate(delta, p, k, n).epsilon


def rr_shuffle_certificate(delta: float, p: float, k: int, n: int) -> CertifiedEpsilon:
    """`rr_shuffle_certified_epsilon` with where it comes from: ``(epsilon, certified, reason)``.

    ``certified`` is False when ``epsilon`` is the local ln((2 - p)/p) because n k is beyond MAX_RR_BITS
    (not attempted) or the search found nothing smaller.

    Parameters
    ----------
    delta : float, in (0, 1)
        Target delta.
    p : float, in (0, 1)
        Probability that a user's bit is replaced by a random bit.
    k : int, >= 1
        Largest value.
    n : int, >= 1
        Number of users.

    Returns
    -------
    CertifiedEpsilon
        ``(epsilon, certified, reason)``.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §3.2 Algorithm 2, Definition 4.

    Examples
    --------
    >>> rr_shuffle_certificate(1e-4, 0.5, 4, 50).certified, rr_shuffle_certificate(1e-4, 0.5, 1, 10**8).certified
    (True, False)
    """
    delta = check_delta(delta)
    p = check_rr_p(p)
    k, n = check_positive_int(k, "k (largest value)"), check_n(n)
    q0, total = p / 2.0, n * k
    local = rr_local(p)
    fallback = "the local bound ln((2 - p)/p)"
    refusal = rr_search_refusal(p, total, exhaustive_ok=True)
    if refusal is not None:
        return CertifiedEpsilon(local, False, f"not attempted: {refusal}: {fallback}")
    direct = total <= _SMALL_EXACT_BITS or q0 < _COVER_MIN_Q0  # (the one that handles 1 - p/2 == 1.0)
    search = _direct_search(total, q0, delta) if direct else rr_certified_search(delta, p, total)
    eps = search.epsilon
    how = (
        f"every pair of sums among n k = {total} bits through the pairs (0, D) among all of them (all-0 vs all-k "
        f"needs {search.attained:.6g}; {search.evaluations} divergence evaluations"
        f"{', direct convolutions' if direct else ''})"
    )
    if not eps < local:
        return CertifiedEpsilon(local, False, f"no epsilon below the local one meets delta for every pair: {fallback}")
    return CertifiedEpsilon(eps, True, f"certified: {how}")


def rr_search_refusal(p: float, total: int, *, exhaustive_ok: bool) -> str | None:
    """Why RR-Shuffle's certified search is not run at n k = ``total`` bits (None: it is): beyond `MAX_RR_BITS`, or
    p/2 below `_COVER_MIN_Q0` (1 - p/2 within 1e-9 of 1 on the tilted laws) unless ``exhaustive_ok`` and the search
    on direct convolutions fits its work limit (`_direct_search_work`).  The one rule of `rr_shuffle_certificate`
    and `metric_profile`."""
    if total > MAX_RR_BITS:
        return f"n k = {total} bits is above MAX_RR_BITS = {MAX_RR_BITS:,}"
    if p / 2.0 < _COVER_MIN_Q0 and not (exhaustive_ok and _direct_search_work(total) <= _MAX_RR_WORK):
        beyond = (
            f" and n k = {total} beyond the search on direct convolutions (n k <= {_DIRECT_MAX_BITS:,})"
            if exhaustive_ok
            else ""
        )
        return f"p={p:g} below {2 * _COVER_MIN_Q0:g} (1 - p/2 rounds to 1 on the tilted laws){beyond}"
    return None


#: Largest n k of the certified search (beyond it the local ln((2 - p)/p) is returned): 10^7 bits take about
#: 0.05 s on a core at p = 0.5 (29 evaluations).
MAX_RR_BITS = 10_000_000
#: Up to this many bits the search takes a1 from direct convolutions (exact, and cheap at this size).
_SMALL_EXACT_BITS = 400
#: Smallest p/2 of the tilted laws (below it 1 - p/2 is within 1e-9 of 1 and they lose precision).
_COVER_MIN_Q0 = 1e-9


def _direct_search_work(total: int) -> float:
    """Most multiply-adds of `_direct_search` at n k = ``total`` bits, known before it runs: every a1(D, N) evaluated
    once at most (where a1(D, N) / D stays close to the level, as for p/2 near 0, the blocks are single distances),
    each three direct convolutions of Bin(D, .) with Bin(N - D, .) (untilted and two tilts): the sum over D of
    3 (D + 1)(N - D + 1), about N^3 / 2.  Not more than this:  the search never enumerates S (L6)."""
    n = float(total)
    return 3.0 * ((n + 2.0) * n * (n + 1.0) / 2.0 - n * (n + 1.0) * (2.0 * n + 1.0) / 6.0)  # sum (d+1)(n-d+1), d=1..n


#: Largest n k within the work limit of `_direct_search`.
_DIRECT_MAX_BITS = max(m for m in range(1, 2_000) if _direct_search_work(m) <= _MAX_RR_WORK)


def _direct_search(total: int, q0: float, delta: float) -> RRSearch:
    """`_rr_pairs.worst_pair_search` with a1(D, N) from the direct convolutions of `_rr_pair_epsilons` (exact at any
    p/2, including 1 - p/2 == 1.0), every distance evaluated at most once (`_direct_search_work`)."""
    return worst_pair_search(
        total, q0, delta, exponent=lambda d: _rr_pair_epsilons(0, d, total, q0, delta)[0] * d, budget=total + 1
    )


@functools.lru_cache(maxsize=256)
def _cached_search(total: int, q0: float, delta: float, max_distance: int | None) -> RRSearch:
    return certified_search(total, q0, delta, max_distance=max_distance)


def rr_certified_search(delta: float, p: float, total: int, max_distance: int | None = None) -> RRSearch:
    """The block-cover search of `shuffledp.accounting.metric._rr_pairs` (cached): the certified epsilon over
    every pair of sums at distance <= ``max_distance`` among ``total`` = n k bits, with the value the farthest
    pair attains (all-0 vs all-k when ``max_distance`` is None)."""
    return _cached_search(int(total), float(p) / 2.0, float(delta), None if max_distance is None else int(max_distance))


def _rr_search(total: int, q0: float, delta: float, level: float, distances: range) -> float:
    """max(level, the largest pair epsilon over every (S, S + D), D in ``distances``) (``level``: a value attained
    by some pair, or 0): the cover / refine / exact steps of fact (b) in the comment above.  A reference for the
    tests, free of L6: its cost has no bound known in advance, since every S its covers leave open costs a direct
    convolution among N bits (at p = 0.95, delta = 1e-6: 16,616 such pairs at N = 400, 28,309 at N = 800, where
    the cover step alone is 1.3e8 multiply-adds and the whole 7.2e9)."""
    cover_cache: dict[tuple[int, int], tuple[float, float]] = {}

    def cover(d: int, m: int) -> tuple[float, float]:  # (a1, a2) of the pair (0, d) among m bits
        if (d, m) not in cover_cache:
            cover_cache[(d, m)] = _rr_pair_epsilons(0, d, m, q0, delta)
        return cover_cache[(d, m)]

    def smallest_world(d: int, which: int, lo: int, level: float) -> int:
        """Smallest m in [lo, total] with cover(d, m)[which] <= level (total + 1 if none): non-increasing in m."""
        if cover(d, total)[which] > level:
            return total + 1
        hi = total
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if cover(d, mid)[which] <= level else (mid + 1, hi)
        return lo

    for d in distances:
        half = (total + d + 1) // 2
        if max(cover(d, half)) <= level:
            continue
        m1, m2 = smallest_world(d, 0, d, level), smallest_world(d, 1, d, level)
        s = np.arange(total - d + 1)
        ones, zeros = total - s, s + d  # world sizes after removing the one-bits, resp. the zero-bits
        up_ok = (ones >= m1) | (zeros >= m2)
        down_ok = (ones >= m2) | (zeros >= m1)
        for s_left in s[~(up_ok & down_ok)]:
            level = max(level, *_rr_pair_epsilons(int(s_left), d, total, q0, delta))
        cover_cache.clear()
    return level


def rr_shuffle_epsilon(delta: float, p: float, k: int, n: int, *, method: str = "certified") -> float:
    """Shuffle-model epsilon of RR-Shuffle(delta, p, k, n) on values in {0..k}.

    ``method="certified"`` (default): `rr_shuffle_certified_epsilon`, valid for every pair of datasets
    (Definition 4), never above the local ln((2 - p)/p), no validity condition.  ``method="theorem-3.1"``: the
    paper's formula (`rr_shuffle_epsilon_paper`), not a valid bound for datasets far apart, with its
    `ValidityConditionError`.  Both depend on n and k only through n k (the analyst sees a count of n k bits), so
    swapping them (the order is ``k, n`` here, ``n, k`` in `geo_shuffle_epsilon`) gives the same value; only the
    minimum n a `ValidityConditionError` suggests reads ``n`` as the number of users.

    Parameters
    ----------
    delta : float, in (0, 1)
        Target delta.
    p : float, in (0, 1)
        Probability that a user's bit is replaced by a random bit.
    k : int, >= 1
        Largest value (values in {0..k}).
    n : int, >= 1
        Number of users.
    method : {"certified", "theorem-3.1"}
        Which analysis (see above).

    Returns
    -------
    float
        The shuffle-model epsilon.

    Raises
    ------
    ValidityConditionError
        With ``method="theorem-3.1"`` outside Theorem 3.1's condition.
    PrivacyParameterError
        For an unknown ``method`` or an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §3, Algorithm 2, Theorem 3.1.

    Examples
    --------
    >>> round(rr_shuffle_epsilon(1e-4, 0.5, 4, 50), 4), round(rr_shuffle_epsilon(1e-4, 0.5, 1000, 100, method="theorem-3.1"), 6)
    (0.7798, 0.083184)
    """
    if _check_method(method, RR_SHUFFLE_METHODS) == "certified":
        return rr_shuffle_certified_epsilon(delta, p, k, n)
    return rr_shuffle_epsilon_paper(delta, p, k, n)


def rr_shuffle_probability(epsilon: float, delta: float, k: int, n: int, *, method: str = "certified") -> float:
    """The RR parameter p in (0, 1) at which `rr_shuffle_epsilon` (``method``) is at most ``epsilon``.

    ``method="certified"`` (default): the smallest such p up to a relative 1e-6 in p or 1e-7 in epsilon (regula
    falsi on log p; the certified epsilon does not increase with p, since RR(p') is a post-processing of RR(p)
    for p' > p), never
    failing: p = 2 / (1 + e^eps) always qualifies (local epsilon), and is the answer beyond MAX_RR_BITS.
    Beyond a few hundred bits the search runs on the all-0 vs all-k value (one binomial pair per step) and the
    answer is then certified once (about 0.03 s at n = 100, k = 1000, 0.1 s at n = 10^4).
    ``method="theorem-3.1"``: `rr_shuffle_probability_paper` (may raise `ValidityConditionError`).  Like
    `rr_shuffle_epsilon`, it depends on n and k only through n k (swapping them gives the same p; only the minimum n
    an error suggests reads ``n`` as the number of users).

    Parameters
    ----------
    epsilon : float, > 0
        Target shuffle-model epsilon.
    delta : float, in (0, 1)
        Target delta.
    k : int, >= 1
        Largest value.
    n : int, >= 1
        Number of users.
    method : {"certified", "theorem-3.1"}
        Which analysis.

    Returns
    -------
    float
        p in (0, 1).

    Raises
    ------
    ValidityConditionError
        With ``method="theorem-3.1"`` if the needed lambda reaches n k.
    PrivacyParameterError
        For an unknown ``method`` or an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §3, Algorithm 2, Theorem 3.1 (inverted).

    Examples
    --------
    >>> p = rr_shuffle_probability(0.9, 1e-4, 4, 50)
    >>> rr_shuffle_epsilon(1e-4, p, 4, 50) <= 0.9 < rr_shuffle_epsilon(1e-4, p * (1 - 1e-5), 4, 50)
    True
    >>> p = rr_shuffle_probability(0.5, 1e-4, 1000, 100)  # less randomization than the local bound needs
    >>> rr_shuffle_epsilon(1e-4, p, 1000, 100) <= 0.5, p < 2 / (1 + math.exp(0.5))
    (True, True)
    """
    if _check_method(method, RR_SHUFFLE_METHODS) == "theorem-3.1":
        return rr_shuffle_probability_paper(epsilon, delta, k, n)
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    k, n = check_positive_int(k, "k (largest value)"), check_n(n)
    if epsilon >= rr_local(RR_MIN_P):  # the smallest p allowed already meets it
        return RR_MIN_P
    hi = 2.0 * special.expit(-epsilon)  # ln((2 - hi)/hi) = eps
    while rr_local(hi) > epsilon:  # round-off: err toward more randomization
        hi = math.nextafter(hi, 1.0)
    total = n * k
    if total > MAX_RR_BITS:
        return hi
    if total <= _SMALL_EXACT_BITS:
        return _solve_log_p(lambda p_: rr_shuffle_certified_epsilon(delta, p_, k, n), epsilon, hi)

    # the all-0 vs all-k value is the certified one wherever the covers close (they do beyond a few hundred bits):
    # solve on it (one binomial pair per step), then certify the answer, nudging p up if a cover did not close
    def worst_pair(p_: float) -> float:
        if p_ / 2.0 < _COVER_MIN_Q0:
            return rr_shuffle_certified_epsilon(delta, p_, k, n)
        return all_zero_all_k_epsilon(total, p_ / 2.0, delta)

    p_star = _solve_log_p(worst_pair, epsilon, hi)
    for _ in range(8):
        if p_star >= hi or rr_shuffle_certified_epsilon(delta, p_star, k, n) <= epsilon:
            return min(p_star, hi)
        p_star = min(hi, p_star * 1.001)
    return hi


def _solve_log_p(epsilon_at, epsilon: float, hi: float) -> float:
    """The smallest p (up to a relative 1e-6 in p or 1e-7 in epsilon) with epsilon_at(p) <= epsilon, given
    epsilon_at(hi) <= epsilon and epsilon_at non-increasing in p: Illinois regula falsi on log p, the answer
    checked (else ``hi``)."""
    gap = lambda log_p: epsilon_at(max(math.exp(log_p), RR_MIN_P)) - epsilon  # noqa: E731
    x_hi, f_hi = math.log(hi), gap(math.log(hi))
    x_floor = math.log(RR_MIN_P)
    x_lo = max(x_hi - math.log(2.0), x_floor)
    f_lo = gap(x_lo)
    while f_lo <= 0.0 and x_lo > x_floor:  # bracket: f_lo > 0 (too little randomization) >= f_hi
        x_hi, f_hi, x_lo = x_lo, f_lo, max(x_lo - math.log(2.0), x_floor)
        f_lo = gap(x_lo)
    if f_lo <= 0.0:  # even the smallest p allowed meets the target
        return RR_MIN_P
    side = 0
    while x_hi - x_lo > 1e-6 and f_hi < -1e-7 * epsilon:  # Illinois regula falsi on log p
        x = (x_lo * f_hi - x_hi * f_lo) / (f_hi - f_lo)
        if not x_lo < x < x_hi:
            x = 0.5 * (x_lo + x_hi)
        f = gap(x)
        if f <= 0.0:
            x_hi, f_hi = x, f
            f_lo, side = (f_lo / 2.0, side) if side == -1 else (f_lo, -1)
        else:
            x_lo, f_lo = x, f
            f_hi, side = (f_hi / 2.0, side) if side == 1 else (f_hi, 1)
    return max(math.exp(x_hi), RR_MIN_P) if gap(x_hi) <= 0.0 else hi  # checked: never above the target


#: The methods of `rr_shuffle_local_epsilon`.
RR_LOCAL_METHODS = ("certified", "theorem-7.1")


def rr_shuffle_certified_local_epsilon(delta: float, p: float, k: int) -> float:
    """RR-Shuffle's local-model epsilon when the shuffler is compromised, exactly: max over d = 1..k of the
    smallest eps with D_{e^(eps d)} <= delta between Bin(d, 1 - p/2) and Bin(d, p/2) (both directions).

    The analyst then sees each user's k bits in their positions; x and x' at distance d differ in d positions of
    U(., k), each Bern(1 - p/2) against Bern(p/2), the others equal in law, so the count of ones among those d
    bits is sufficient (threshold sets as in `rr_shuffle_certified_epsilon`).  Not monotone in d.  At most
    ln((2 - p)/p), which is returned when k is too large for the search (k above about 10^4).

    Parameters
    ----------
    delta : float, in (0, 1)
        Target delta.
    p : float, in (0, 1)
        Probability that a user's bit is replaced by a random bit.
    k : int, >= 1
        Largest value.

    Returns
    -------
    float
        eps_L, at most ln((2 - p)/p).

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §7, Theorem 7.1 (replaced), Algorithm 2.

    Examples
    --------
    >>> round(rr_shuffle_certified_local_epsilon(0.01, 0.5, 1000), 4), round(rr_shuffle_local_epsilon_paper(0.01, 0.5, 1000), 4)
    (1.0906, 0.6699)
    """
    delta = check_delta(delta)
    p = check_rr_p(p)
    k = check_positive_int(k, "k (largest value)")
    local = rr_local(p)
    if 5.0 * k * k > _MAX_RR_WORK:
        return local
    worst = float(_positioned_bits_epsilons(np.arange(1, k + 1), p / 2.0, delta).max())
    return min(worst, local)


def rr_shuffle_local_epsilon(delta: float, p: float, k: int, *, method: str = "certified") -> float:
    """RR-Shuffle's local-model epsilon if the shuffler is compromised.

    ``method="certified"`` (default): `rr_shuffle_certified_local_epsilon` (exact, no condition);
    ``method="theorem-7.1"``: `rr_shuffle_local_epsilon_paper` (not a valid bound; may raise
    `ValidityConditionError`).

    Parameters
    ----------
    delta : float, in (0, 1)
        Target delta.
    p : float, in (0, 1)
        Probability that a user's bit is replaced by a random bit.
    k : int, >= 1
        Largest value.
    method : {"certified", "theorem-7.1"}
        Which analysis.

    Returns
    -------
    float
        eps_L.

    Raises
    ------
    ValidityConditionError
        With ``method="theorem-7.1"`` outside Theorem 7.1's condition.
    PrivacyParameterError
        For an unknown ``method`` or an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §7, Theorem 7.1.

    Examples
    --------
    >>> rr_shuffle_local_epsilon(0.01, 0.5, 1000) > rr_shuffle_local_epsilon(0.01, 0.5, 1000, method="theorem-7.1")
    True
    """
    if _check_method(method, RR_LOCAL_METHODS) == "theorem-7.1":
        return rr_shuffle_local_epsilon_paper(delta, p, k)
    return rr_shuffle_certified_local_epsilon(delta, p, k)


__all__ = [
    "RR_MIN_P",
    "rr_shuffle_certificate",
    "rr_minimum_lambda",
    "RR_SHUFFLE_METHODS",
    "rr_shuffle_certified_epsilon",
    "rr_shuffle_epsilon",
    "rr_shuffle_epsilon_paper",
    "RR_LOCAL_METHODS",
    "rr_shuffle_certified_local_epsilon",
    "rr_shuffle_local_epsilon",
    "rr_shuffle_local_epsilon_paper",
    "rr_shuffle_probability",
    "rr_shuffle_probability_paper",
    "rr_search_refusal",
]
