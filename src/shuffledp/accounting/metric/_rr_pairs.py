"""The engine of RR-Shuffle's certified epsilon at any n k up to 10^7: exact divergences of the released count
between pairs of sums, in log space, with every truncated tail and every rounding charged.

Notation.  N = n k bits; q0 = p/2 (a 0-bit reads 1), q1 = 1 - p/2 (a 1-bit reads 1).  The released count of a
dataset with sum S (Proposition 1) has the law P_S^N = Bin(S, q1) + Bin(N - S, q0).  ``a1(D, M)`` and
``a2(D, M)`` are the smallest a >= 0 with D_{e^a}(P_D^M || P_0^M) <= delta, resp. D_{e^a}(P_0^M || P_D^M) <= delta
(the pair "sums 0 and D" among M bits, both directions).

What is proven (see `shuffledp.accounting.metric.rr_shuffle` for the argument in full; the lemmas are):

* (L1, threshold sets) P_{S+D}^M / P_S^M is non-decreasing in y (a convolution of a log-concave law with two
  binomials of increasing ratio, Karlin), so D_{e^a}(P_{S+D} || P_S) = max_y SF_{S+D}(y) - e^a SF_S(y) and the
  smallest a is max_y ln((SF_{S+D}(y) - delta)_+ / SF_S(y)); likewise with CDFs for the other direction.
* (L2, blanket removal) the S common one-bits and N - S - D common zero-bits add the same independent noise to
  both laws, so removing them (post-processing in reverse) can only raise a: the up-direction of (S, S + D) among
  N bits is at most a1(D, N - S) and at most a2(D, S + D) (remove the zeros, reflect y -> M - y); so a(D, M) is
  non-increasing in M, and every S is covered by the world M = ceil((N + D) / 2).  More generally (L2', split
  worlds) for any Ma + Mb = N + D + 1 with D <= Ma, Mb <= N every S has N - S >= Ma or S + D >= Mb (if
  S > N - Ma then S + D >= N - Ma + 1 + D = Mb), so the up-direction of every pair at distance D is at most
  max(a1(D, Ma), a2(D, Mb)); the split is free (a1 < a2 at equal worlds away from D = N, so giving a2 the larger
  world lowers the cover), and Ma + Mb = N + D1 + 1 serves every D >= D1 (a larger N + D + 1 only allows more).
* (L3, stochastic order) P_{D+1}^M first-order dominates P_D^M, so with L1 the threshold form gives
  a1(D + 1, M) >= a1(D, M) and a2(D + 1, M) >= a2(D, M): a is non-decreasing in D.
* (L4, reflection) y -> N - y maps P_S^N to P_{N-S}^N, so the down-direction of (S, S + D) is the up-direction of
  (N - S - D, N - S): the maximum over all pairs needs one direction only.
* (L5, a2 / D grows with D) For fixed M and y, S -> ln SF_S^M(y) is concave on 0..M.  Proof: SF_{S-1}, SF_S,
  SF_{S+1} differ in two bits only, both Bern(q0), one Bern(q1) and one Bern(q0), both Bern(q1); with W the sum of
  the other M - 2 bits and G_k = Pr[W >= y - k], expanding the three laws (q1 = 1 - q0) gives
  SF_{S-1} SF_{S+1} - SF_S^2 = (q1^2 - q0^2)^2 (G_0 G_2 - G_1^2) <= 0, since W (a sum of independent bits) is
  log-concave and so is its tail.  Now a2(D, M) = max over y of ln((SF_M^M(y) - delta)_+) - ln SF_{M-D}^M(y)
  (L1, through L4's reflection), the first term free of D and the second convex in D: a maximum of convex
  functions, convex in D on 0..M, with a2(0, M) = 0, so a2(D, M) / D is non-decreasing in D.  Hence a block needs
  a2 only at its end: a2(D, Mb) / D <= a2(D2, Mb) / D2 for D <= D2 (no factor D2 / D1).  (a1 has its varying law
  in the numerator, where the same concavity gives no such bound, so a1 keeps L3's D2 / D1.)

* (L6, one world suffices) Fix S.  The down-direction of (S, S + D) among N bits is a_dn(S, D) = max over y of
  ln((CDF_S(y) - delta)_+) - ln CDF_{S+D}(y) (L1 with lower threshold sets): the law free of D is in the numerator.
  T -> ln CDF_T^N(y) is concave (L5 reflected: CDF_T^N(y) = SF_{N-T}^N(N - y)), so every term is convex in D, and
  so is their maximum with 0, which is 0 at D = 0: a_dn(S, D) / D is non-decreasing in D and at most its value at
  D = N - S, the pair (S, N).  By L4 that pair's down-direction is the up-direction of (0, N - S), a1(N - S, N), and
  every up-direction is the down-direction of another pair.  Hence the exact worst case over every pair of sums is
  max over D = 1..N of a1(D, N) / D: the pairs (0, D) among all N bits, with no blanket removed (a1 / D is not
  known to be monotone: its varying law sits in the numerator, where L5's concavity bounds nothing).

Hence, over all distances (`worst_pair_search`): the distances D in a block [D1, D2] need at most a1(D2, N) / D1
(L6, then L3); D = N is the single pair all-0 vs all-k, computed exactly, and from the top down each evaluation
a1(D2, N) certifies the widest block it can, D1 = ceil(a1(D2, N) / level), so the result equals the all-0 vs
all-k value whenever that pair is the worst (in 15 to 75 evaluations from n k = 200 to 10^6, p in [0.01, 0.99]).
Up to a largest distance below N (`certified_search`, the profile): every pair at sum distance D in [D1, D2] needs
eps <= max(a1(D2, Ma) / D1, a2(D2, Mb) / D2) for any split Ma + Mb = N + D1 + 1 with D2 <= Ma, Mb <= N (L2'; L3
raises a1's D to D2, the 1/D1 bounds 1/D; L5); a finite adaptive family of such blocks covers D = 1..max, and the
search refines blocks until their bounds are below the level, within a work budget.

Numerics: plain binomial log pmfs by the log-gamma formula with ln q and ln(1 - q) taken from the logit (no loss even for
q within 1e-9 of 0 or 1; the rounding of the formula's large terms is charged by `_pmf_slack`); a sum of two binomials by exponential tilting (the tilted law is
again a sum of two binomials, with logits shifted by the tilt) and an FFT of positive terms around each tilt's mean,
keeping only outcomes within 3.5 tilted standard deviations of it (relative error below 1e-10 there, checked
against 50 digits by tests/accounting/test_metric_rr_every_size.py); numerators inflated and denominators deflated
by PMF_SLACK = 1e-9 relative, or by 16 m ln(m + 1) ulps where that is larger (`_pmf_slack`: the terms of size
ln m! carry rounding of that order, 3.3e-8 at m = 10^7); the mass of the numerator above the window is bounded by
Chernoff (at the tilt whose mean is the window's end) or Hoeffding (sum of independent bits), whichever cuts
sooner, and added; below the window the threshold term is at most SF_num / SF_den at its first outcome
(their ratio is non-decreasing in y by L1), which lets a first window start at the numerator's mean + 1 sd; the
denominator is summed over the window only (a lower bound).  Everything errs toward a larger epsilon.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import fft, special

#: Relative slack on every computed pmf value (far above the float error of the methods used).
PMF_SLACK = 1e-9
#: Neglected numerator mass per tail (Chernoff above, Hoeffding below), relative to delta (it is added to the
#: numerator's tail).
_TAIL_SHARE = 1e-9
#: Component windows of the tilted binomials: mean +- this many standard deviations (+ a constant).
_COMPONENT_SDS = 10.0
#: Outcomes kept per tilt: within this many tilted standard deviations of the tilted mean.
_KEEP_SDS = 3.5
#: A tilt's convolution is trusted down to this many nats below its largest value (FFT rounding is ~1e-16 of the
#: largest, so 1e-13 relative there at most).
_TRUST = 7.0
#: The first window of `up_exponent` starts this many standard deviations below the numerator's mean (negative:
#: above it).
_LOW_SDS = -1.0


def _pmf_slack(m: int) -> float:
    """The relative slack on every computed pmf value of a law among ``m`` bits: `PMF_SLACK`, or 16 m ln(m + 1)
    ulps where that is larger.  The terms of the log-gamma formula and of the tilt (ln m!, theta y, ln E e^(theta Y))
    are of size m ln m, each exact to a few ulps, so their sum is off by a few times m ln m ulps: at m = 10^7 the
    log pmfs are off by up to 3.3e-8 against 40 digits (1e-8 for a sum of two binomials), far above 1e-9; the bound
    here is 5.7e-7 there (tests/accounting/test_metric_rr_every_size.py)."""
    return max(PMF_SLACK, 16.0 * m * math.log(m + 1.0) * 2.0**-52)


def _hoeffding_halfwidth(m: int, log_tail: float) -> int:
    """t with exp(-2 t^2 / m) <= e^``log_tail`` (Hoeffding for a sum of m independent bits; the tail in log form,
    since 1 / tail overflows at delta = 1e-300)."""
    return int(math.ceil(math.sqrt(-m * log_tail / 2.0))) + 1


#: `_LogChoose` takes a log-gamma at every this many values and steps between them.
_ANCHOR_EVERY = 256


class _LogChoose:
    """ln j! + ln (m - j)! for j in a growing window of 0..m, each value computed once (the tilts of
    `_log_two_binomials` ask for overlapping windows of the same binomial)."""

    def __init__(self, m: int) -> None:
        self.m, self.lo, self.values = m, 0, np.empty(0)

    def __call__(self, lo: int, hi: int) -> np.ndarray:
        if self.values.size == 0:
            self.lo, self.values = lo, self._compute(lo, hi)
        top = self.lo + self.values.size - 1
        if lo < self.lo:
            self.values, self.lo = np.concatenate([self._compute(lo, self.lo - 1), self.values]), lo
        if hi > top:
            self.values = np.concatenate([self.values, self._compute(top + 1, hi)])
        return self.values[lo - self.lo : hi - self.lo + 1]

    def _compute(self, lo: int, hi: int) -> np.ndarray:
        """By log-gamma at every `_ANCHOR_EVERY`-th j and, between, by the running sum of ln((j + 1) / (m - j)) (the
        step from j to j + 1: one log per value instead of two log-gammas; the sum's rounding stays below 1e-9,
        a run's terms being at most ln m each)."""
        y = np.arange(lo, hi + 1, dtype=np.float64)
        if y.size <= _ANCHOR_EVERY:
            return special.gammaln(y + 1.0) + special.gammaln(self.m - y + 1.0)
        starts = y[::_ANCHOR_EVERY]
        anchors = special.gammaln(starts + 1.0) + special.gammaln(self.m - starts + 1.0)
        rows = starts.size
        steps = np.zeros(rows * _ANCHOR_EVERY)
        steps[: y.size - 1] = np.log((y[:-1] + 1.0) / (self.m - y[:-1]))
        runs = np.cumsum(steps.reshape(rows, _ANCHOR_EVERY), axis=1)
        values = np.empty((rows, _ANCHOR_EVERY))
        values[:, 0] = anchors
        values[:, 1:] = anchors[:, None] + runs[:, :-1]
        return values.reshape(-1)[: y.size]


def _log_binomial(m: int, logit: float, lo: int, hi: int, log_choose: _LogChoose | None = None) -> np.ndarray:
    """ln Pr[Bin(m, q) = y] for y = lo..hi, 0 <= lo <= hi <= m, q = expit(``logit``): term by term
    (ln m! - (ln y! + ln (m - y)!) + y ln q + (m - y) ln(1 - q)), with the factorials from ``log_choose`` and
    ln q, ln(1 - q) taken from the logit (no rounding of 1 - q when q is near 1, as after a strong tilt)."""
    y = np.arange(lo, hi + 1, dtype=np.float64)
    factorials = (log_choose or _LogChoose(m))(lo, hi)
    log_q, log_r = special.log_expit(logit), special.log_expit(-logit)
    return (special.gammaln(m + 1.0) - factorials) + y * log_q + (m - y) * log_r


def _fft_convolve(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The full linear convolution of two 1-d arrays by real FFTs: the computation of ``scipy.signal.fftconvolve``
    (the same transforms, lengths and products, so the same values) without its general-purpose checks."""
    if x.size == 1 or y.size == 1:
        return x * y
    size = x.size + y.size - 1
    length = fft.next_fast_len(size, True)
    return fft.irfft(fft.rfft(x, length) * fft.rfft(y, length), length)[:size]


def _log_two_binomials(a: int, la: float, b: int, lb: float, lo: int, hi: int) -> np.ndarray:
    """ln Pr[Bin(a, qa) + Bin(b, qb) = y] for y = lo..hi (``la``, ``lb``: the logits of qa, qb), each value within a
    relative 1e-10 of the truth (-inf outside the support).  Exponential tilting by e^(theta y) with the tilted mean
    at a grid of centres (the tilted binomials have the logits la + theta, lb + theta: exact, whatever the tilt; each
    centre about `_KEEP_SDS` tilted standard deviations above the first outcome it must serve);
    each tilt's FFT convolution of positive terms is trusted within `_KEEP_SDS` tilted standard deviations of its
    mean and, checked, where it is at least e^-`_TRUST` of its largest value (far above the FFT's rounding; a
    skewed law, as near q0 = 0, can fall below that within 3.5 sds)."""
    if a == 0:
        return _log_binomial(b, lb, lo, hi)
    if b == 0:
        return _log_binomial(a, la, lo, hi)
    out = np.full(hi - lo + 1, -np.inf)
    lo_in, hi_in = max(lo, 0), min(hi, a + b)
    choose_a, choose_b = _LogChoose(a), _LogChoose(b)

    def tilt(centre: float) -> tuple[float, float, float, int]:
        theta = _tilt_for_mean(a, la, b, lb, centre)
        ta, tb = float(special.expit(la + theta)), float(special.expit(lb + theta))
        return theta, ta, tb, max(1, int(_KEEP_SDS * math.sqrt(a * ta * (1.0 - ta) + b * tb * (1.0 - tb))))

    y, ahead_ok = lo_in, True
    while y <= hi_in:
        centre = min(max(y, 0.5), a + b - 0.5)
        theta, ta, tb, keep = tilt(centre)
        ahead, moved = y + (19 * keep) // 20, False  # a centre ahead serves both its sides (half the tilts)
        if ahead_ok and centre == y and keep > 20 and ahead < min(hi_in, a + b - 0.5):
            further = tilt(ahead)
            if ahead - further[3] <= y:  # its trusted range still reaches back to y
                centre, (theta, ta, tb, keep), moved = ahead, further, True
        ahead_ok = True
        start, stop = max(y, int(centre) - keep, lo_in), min(int(centre) + keep, hi_in)
        if start > stop:
            start = stop = y
        windows = []
        for m, q in ((a, ta), (b, tb)):
            s = math.sqrt(m * q * (1.0 - q))
            windows.append((max(0, int(m * q - _COMPONENT_SDS * s - 20)), min(m, int(m * q + _COMPONENT_SDS * s + 20))))
        (wa0, wa1), (wb0, wb1) = windows
        # only the terms that reach an outcome in [start, stop] with the other component inside its window
        cut = ((max(wa0, start - wb1), min(wa1, stop - wb0)), (max(wb0, start - wa1), min(wb1, stop - wa0)))
        if cut[0][0] <= cut[0][1] and cut[1][0] <= cut[1][1]:
            windows = list(cut)
        (a0, a1), (b0, b1) = windows
        pa, pb = _log_binomial(a, la + theta, a0, a1, choose_a), _log_binomial(b, lb + theta, b0, b1, choose_b)
        shift = pa.max() + pb.max()
        conv = _fft_convolve(np.exp(pa - pa.max()), np.exp(pb - pb.max()))
        idx = np.arange(start, stop + 1) - (a0 + b0)
        valid = (idx >= 0) & (idx < conv.size)
        vals = np.full(idx.size, -np.inf)
        with np.errstate(divide="ignore", invalid="ignore"):
            vals[valid] = np.log(np.maximum(conv[idx[valid]], 0.0))
        # trusted: the outcomes from ``start`` on within _TRUST nats of this tilt's largest (a skewed law can fall
        # below that inside _KEEP_SDS tilted sds): the rest waits for the next tilt
        trusted = vals >= math.log(conv.max()) - _TRUST
        run = int(np.argmin(trusted)) if not trusted.all() else trusted.size
        if run == 0 and moved:  # the centre ahead does not reach back to y: this tilt again, centred at y
            ahead_ok = False
            continue
        run = max(run, 1)  # (a tilt centred at y: y is at its mean)
        stop, vals = start + run - 1, vals[:run]
        # ln E e^(theta Y) = sum over bits of ln(1 - q) - ln(1 - q_theta), each from its logit
        k_theta = a * (special.log_expit(-la) - special.log_expit(-(la + theta))) + b * (
            special.log_expit(-lb) - special.log_expit(-(lb + theta))
        )
        ys = np.arange(start, stop + 1, dtype=np.float64)
        out[start - lo : stop - lo + 1] = vals + shift - theta * ys + k_theta
        y = stop + 1
    return out


def _expit(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0.0 else math.exp(x) / (1.0 + math.exp(x))


def _tilt_for_mean(a: int, la: float, b: int, lb: float, centre: float) -> float:
    """The tilt theta at which Bin(a, expit(la + theta)) + Bin(b, expit(lb + theta)) has mean ``centre`` (in
    (0, a + b)): Newton's method on the increasing mean, kept inside a shrinking bracket of [-1e4, 1e4] (bisection
    where a step would leave it), to 1e-12 in theta.  Any theta gives an exact tilted law (its normaliser is computed
    for it); this one only centres the window each tilt trusts."""
    lo, hi = -1e4, 1e4
    theta = math.log(centre / (a + b - centre)) - (a * la + b * lb) / (a + b)  # exact when la == lb
    theta = min(max(theta, lo), hi)
    for _ in range(200):
        ta, tb = _expit(la + theta), _expit(lb + theta)
        gap = a * ta + b * tb - centre
        if gap < 0.0:
            lo = theta
        else:
            hi = theta
        slope = a * ta * (1.0 - ta) + b * tb * (1.0 - tb)
        step = theta - gap / slope if slope > 0.0 else math.nan
        if not lo < step < hi:
            step = 0.5 * (lo + hi)
        if abs(step - theta) <= 1e-12 + 1e-15 * abs(theta):
            return step
        theta = step
    return theta


def _log_law(s: int, m: int, q0: float, lo: int, hi: int) -> np.ndarray:
    """ln P_s^m(y), y = lo..hi: the released count with s ones among m bits (logits -l0 and l0 of 1 - q0 and q0,
    l0 = ln q0 - ln(1 - q0), so 1 - q0 is never rounded)."""
    l0 = math.log(q0) - math.log1p(-q0)
    return _log_two_binomials(s, -l0, m - s, l0, lo, hi)


def _log_sf(log_pmf: np.ndarray) -> np.ndarray:
    """ln sum_{t >= y} over the window (-inf entries allowed).

    In chunks short enough that no term falls more than 600 nats below its chunk's largest (no underflow: e^-600
    is a normal float): within a chunk a plain reversed cumulative sum of positive terms scaled by that largest
    (relative error below 1e-13), across chunks the log-sum of the totals of every later chunk; the same sums as
    ``np.logaddexp.accumulate`` up to rounding, in a few whole-array operations instead of one log and exp per term.
    """
    size = log_pmf.size
    if size < 64 or not np.isfinite(log_pmf).all():  # short, or with -inf terms: the direct recursion
        return np.logaddexp.accumulate(log_pmf[::-1])[::-1]
    steep = float(np.abs(np.diff(log_pmf)).max()) if size > 1 else 0.0
    chunk = int(min(512, max(1, 600.0 // max(steep, 1e-300))))
    if chunk < 8:
        return np.logaddexp.accumulate(log_pmf[::-1])[::-1]
    rows = -(-size // chunk)
    padded = np.full(rows * chunk, -np.inf)
    padded[:size] = log_pmf
    block = padded.reshape(rows, chunk)
    top = block.max(axis=1, keepdims=True)
    inner = np.cumsum(np.exp(block - top)[:, ::-1], axis=1)[:, ::-1]  # within the chunk, scaled by e^top
    later = np.empty((rows, 1))  # ln of the mass of every chunk after this one
    later[-1] = -np.inf
    later[:-1, 0] = np.logaddexp.accumulate(np.log(inner[::-1, 0]) + top[::-1, 0])[::-1][1:]
    # both parts on the scale of the larger of e^top and e^later (one log per term; a part that underflows there is
    # below 1e-300 of the other)
    scale = np.maximum(top, later)
    with np.errstate(divide="ignore", under="ignore"):
        return (np.log(inner * np.exp(top - scale) + np.exp(later - scale)) + scale).reshape(-1)[:size]


def up_exponent(num: tuple[int, int], den: tuple[int, int], q0: float, delta: float) -> float:
    """The smallest a >= 0 (rounded up) with D_{e^a}(P_num || P_den) <= delta, for laws whose likelihood ratio
    P_num / P_den is non-decreasing (``num`` = (s, m) has the larger sum): max_y ln((SF_num(y) - delta)_+ / SF_den(y)).

    ``num``, ``den``: (ones, bits) of each law (the same number of bits)."""
    (s1, m), (s0, m0) = num, den
    assert m == m0 and s1 >= s0
    tail = _TAIL_SHARE * delta  # subnormal at delta = 1e-300 (still above 0): its logarithm is taken directly
    log_tail = math.log(_TAIL_SHARE) + math.log(delta)
    t = _hoeffding_halfwidth(m, log_tail)
    mean = s1 * (1.0 - q0) + (m - s1) * q0
    lo, hi = max(0, int(mean) - t), min(m, int(mean) + t + 1, _chernoff_end(s1, m, q0, log_tail))
    # first only from a little above the numerator's mean: the maximum sits in its upper tail (where SF_num nears
    # delta) and everything below the window is bounded by the tails' ratio at its first outcome (non-decreasing in
    # y, L1); if that bound is not below the window's maximum, the whole Hoeffding window is computed (the value
    # never depends on the narrow try, only the time)
    narrow = max(lo, int(mean - _LOW_SDS * math.sqrt(m * q0 * (1.0 - q0))))
    if narrow > lo:
        best, below = _threshold_maximum(num, den, q0, delta, narrow, hi, tail, below_mass=1.0)
        if below < best:
            return _rounded_up(best)
    best, below = _threshold_maximum(num, den, q0, delta, lo, hi, tail, below_mass=tail)
    return _rounded_up(max(best, below))


def _chernoff_end(s: int, m: int, q0: float, log_tail: float) -> int:
    """An outcome h with Pr[Y >= h] <= e^``log_tail`` for Y ~ P_s^m, by Chernoff: Pr[Y >= h] <= E e^(theta Y) / e^(theta h)
    for every theta >= 0, taken at the tilt whose mean is h (the bound's best theta); h steps up from the normal
    quantile by a quarter sd until the bound holds (m + 1 if it never does below m: nothing to cut).  Tighter than
    Hoeffding's sqrt(m ln(1/tail) / 2) by about 1.5 sd at q0 = 1/4, by more for smaller q0."""
    l0 = math.log(q0) - math.log1p(-q0)
    a, la, b, lb = s, -l0, m - s, l0  # s bits read 1 with 1 - q0, m - s with q0
    mean = a * _expit(la) + b * _expit(lb)
    sd = math.sqrt(m * q0 * (1.0 - q0))
    h, target = mean + math.sqrt(-2.0 * log_tail) * sd, log_tail - 1e-6
    for _ in range(200):
        if not h < m - 0.5:
            return m + 1
        theta = _tilt_for_mean(a, la, b, lb, h)
        if theta > 0.0:
            log_mgf = a * (special.log_expit(-la) - special.log_expit(-(la + theta))) + b * (
                special.log_expit(-lb) - special.log_expit(-(lb + theta))
            )
            if log_mgf - theta * h <= target:
                return math.ceil(h)
        h += 0.25 * sd
    return m + 1


def _rounded_up(best: float) -> float:
    return 0.0 if not math.isfinite(best) else max(best, 0.0) * (1.0 + 1e-12) + 1e-15


def _threshold_maximum(
    num: tuple[int, int], den: tuple[int, int], q0: float, delta: float, lo: int, hi: int, tail: float, below_mass
) -> tuple[float, float]:
    """(max over y in [lo, hi] of ln((SF_num(y) - delta)_+ / SF_den(y)), a bound on the same for every y < lo);
    ``tail`` bounds the numerator's mass above ``hi`` and ``below_mass`` its mass below ``lo``."""
    (s1, m), (s0, _) = num, den
    slack = _pmf_slack(m)
    log_num = _log_law(s1, m, q0, lo, hi) + math.log1p(slack)
    log_den = _log_law(s0, m, q0, lo, hi) + math.log1p(-slack)
    sf_num = np.logaddexp(_log_sf(log_num), math.log(tail))  # + the mass above hi (Hoeffding)
    sf_den = _log_sf(log_den)  # window only: a lower bound
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        excess = np.exp(sf_num) - delta
        a = np.where(excess > 0.0, np.log(np.where(excess > 0.0, excess, 1.0)) - sf_den, -np.inf)
    best, below = (float(a.max()) if a.size else -np.inf), -np.inf
    if lo > 0:  # outcomes below the window: SF_num <= min(1, SF_num(lo) + below_mass), SF_den >= SF_den(lo) ...
        num_lo = math.exp(float(sf_num[0])) + below_mass - delta
        if num_lo > 0.0:
            below = math.log(min(1.0, num_lo)) - float(sf_den[0])
        # ... and SF_num / SF_den is non-decreasing in y (L1: a likelihood ratio order orders the tails' ratio too)
        below = min(below, float(sf_num[0] - sf_den[0]))
    return best, below


def pair_exponents(d: int, m: int, q0: float, delta: float) -> tuple[float, float]:
    """(a1(d, m), a2(d, m)): the pair "sums 0 and d" among m bits, up and down (the down one through L4's
    reflection: D(P_0^m || P_d^m) = D(P_m^m || P_{m-d}^m))."""
    a1 = up_exponent((d, m), (0, m), q0, delta)
    a2 = a1 if d == m else up_exponent((m, m), (m - d, m), q0, delta)
    return a1, a2


@dataclass(frozen=True)
class RRSearch:
    """The outcome of `certified_search`: ``epsilon`` valid for every pair of datasets at sum distance D in
    1..``max_distance``; ``attained`` a value some pair needs (a lower bound on the exact answer);
    ``evaluations`` the number of divergence evaluations; ``complete`` False when the work budget ran out
    (``epsilon`` is then still valid, only possibly looser)."""

    epsilon: float
    attained: float
    evaluations: int
    complete: bool


def certified_search(
    total: int,
    q0: float,
    delta: float,
    *,
    max_distance: int | None = None,
    budget: int = 400,
    progress: Callable[[int, int], None] | None = None,
) -> RRSearch:
    """The certified epsilon of RR-Shuffle over every pair of sums at distance D <= ``max_distance`` (all by
    default) among ``total`` = n k bits.  Every distance: `worst_pair_search` (L6).  Up to ``max_distance`` < N:
    the block covers of L1-L5 (module docstring), refined adaptively.

    The exact value of the largest-distance pair (S = 0, D = max_distance, among all N bits) is attained and
    starts the level; each block [D1, D2] is certified by max(a1(D2, Ma) / D1, a2(D2, Mb) / D2) (Ma + Mb =
    N + D1 + 1, L2', L3, L5) when that is at most the level, else tried again narrower (a single D whose cover
    exceeds the level raises it: still valid).  Where each block ends and how its worlds are split only decide the
    work, never the value's validity: both are predicted from the covers already computed (`_next_block`,
    `_balanced_split`).  ``progress(done, total)`` is called with the distances covered so far."""
    top = total if max_distance is None else min(max_distance, total)
    if top == total:  # every distance: one world suffices (L6)
        return worst_pair_search(total, q0, delta, budget=budget, progress=progress)
    last = top  # (D = N, the one pair S = 0, is worst_pair_search's)
    attained = max(pair_exponents(top, total, q0, delta)) / top
    evaluations, level = 1, attained
    d1, d2, complete, share, step, aim = 1, min(last, 4), True, 0.5, 0.0, _AIM
    covers: list[tuple[int, float, float]] = []  # (D2, max(a1, a2) / D2, a1's shortfall per blanket bit) per try
    while d1 <= last:
        worlds = total + d1 + 1  # Ma + Mb: every pair at a distance D >= D1 has N - S >= Ma or S + D >= Mb
        d2 = max(d1, min(d2, last, worlds // 2))
        if evaluations >= budget:  # out of work: covers as wide as allowed for the rest (valid, looser)
            complete = False
            d2 = min(last, worlds // 2)
        ma = _split_world(d2, worlds, share, total)
        a1, a2 = _split_cover(d2, ma, worlds, q0, delta)
        evaluations += 1
        r1 = ma - d2
        covers.append((d2, max(a1, a2) / d2, (level * d2 - a1) / r1 if r1 > 0 else 0.0))
        share, step = _balanced_split(share, step, a1, a2, d1, d2, r1, worlds - ma - d2, level)
        bound = max(a1 / d1, a2 / d2)  # L3 raises a1 to D2 (1/D1 bounds 1/D); L5: a2(D, Mb) / D grows with D
        equal = _split_world(d2, worlds, 0.5, total)
        if d2 == d1 and bound > level and abs(ma - equal) > 0.1 * (worlds - 2 * d2):
            # a single distance would raise the level on a skewed split: the equal worlds may give less (the
            # smaller is valid)
            bound = min(bound, max(_split_cover(d2, equal, worlds, q0, delta)) / d2)
            evaluations += 1
        if bound <= level or d2 == d1 or not complete:
            level = max(level, bound)
            if progress is not None:
                progress(d2, top)
            d1 = d2 + 1
            aim = min(_AIM, aim * _AIM_UP)
            d2 = _next_block(d1, covers, level, total, share, aim) if d1 <= last else d1
        else:  # too wide: shrink to what this cover's epsilon allows (a cover's epsilon grows with D)
            aim *= _AIM_DOWN
            d2 = min(d2 - 1, int(d1 * (1.0 + _SHRINK * (level * d2 / max(a1, a2) - 1.0))))
    return RRSearch(epsilon=level, attained=attained, evaluations=evaluations, complete=complete)


def worst_pair_search(
    total: int,
    q0: float,
    delta: float,
    *,
    exponent: Callable[[int], float] | None = None,
    budget: int = 400,
    progress: Callable[[int, int], None] | None = None,
) -> RRSearch:
    """The certified epsilon of RR-Shuffle over every pair of sums among ``total`` = N bits: max over D = 1..N of
    a1(D, N) / D (L6), each block [D1, D2] of distances certified by a1(D2, N) / D1 (L3), from the top down.

    The level starts at the exact all-0 vs all-k value a1(N, N) / N (attained); from D2 = N - 1 down, one evaluation
    of a1(D2, N) certifies the widest block it can, D1 = ceil(a1(D2, N) / level) (a1(D2, N) / D2 above the level
    raises it: a single distance, still exact).  ``exponent(d)`` is a1(d, N), rounded up (default: `up_exponent` on
    the tilted laws).  After ``budget`` evaluations the distances left, 1..D2, are one block (valid, looser;
    ``complete`` False).  ``progress(done, total)`` is called with the distances covered so far."""
    a1 = exponent if exponent is not None else (lambda d: up_exponent((d, total), (0, total), q0, delta))
    attained = a1(total) / total
    level, evaluations, complete, d2 = attained, 1, True, total - 1
    while d2 >= 1:
        a = a1(d2)
        evaluations += 1
        if a <= 0.0:  # every smaller distance needs nothing either (L3)
            d1 = 1
        elif evaluations >= budget and d2 > 1:  # out of work: the rest in one block
            d1, complete = 1, False
        elif level <= 0.0:
            d1 = d2
        else:
            d1 = max(1, min(d2, math.ceil(a / level)))
            while d1 < d2 and a / d1 > level:  # the ceiling's round-off
                d1 += 1
        level = max(level, a / d1)
        if progress is not None:
            progress(total - d1 + 1, total)
        d2 = d1 - 1
    return RRSearch(epsilon=level, attained=attained, evaluations=evaluations, complete=complete)


#: Blocks are sized to at most this share of the width the model of `_next_block` predicts (the rest is a margin
#: against a failed try, which costs a whole evaluation); the share is multiplied by `_AIM_DOWN` after each failed
#: try and by `_AIM_UP` after each success (back up to `_AIM`: the models fit a few hundred bits less well), and a
#: failed block is shrunk to `_SHRINK` of the width its cover allows.
_AIM = 0.95
_AIM_DOWN = 0.6
_AIM_UP = 1.2
_SHRINK = 0.95
#: The linear-shortfall model of `_next_block` is used from covers at this share of the level on.
_NEAR = 0.5
#: Largest change of the blanket's split between consecutive covers (`_balanced_split`).
_SPLIT_STEP = 0.03


def _split_world(d2: int, worlds: int, share: float, total: int) -> int:
    """Ma of the split Ma + Mb = ``worlds`` with Ma - D2 about ``share`` of the blanket, both worlds within D2..N."""
    return min(max(d2 + round(share * (worlds - 2 * d2)), d2, worlds - total), total, worlds - d2)


def _split_cover(d2: int, ma: int, worlds: int, q0: float, delta: float) -> tuple[float, float]:
    """(a1(D2, Ma), a2(D2, Mb)), Mb = ``worlds`` - Ma (L2')."""
    mb = worlds - ma
    return up_exponent((d2, ma), (0, ma), q0, delta), up_exponent((mb, mb), (mb - d2, mb), q0, delta)


def _balanced_split(
    share: float, last: float, a1: float, a2: float, d1: int, d2: int, r1: int, r2: int, level: float
) -> tuple[float, float]:
    """(share, step): the share of the blanket bits (Ma + Mb - 2 D2) for the world of a1 in the next cover, and the
    step taken to it from ``share`` (``last``: the step before).  Where the margins level D1 - a1 and level D2 - a2
    of the block's bound would be equal if each of a1, a2 fell short of level D2 in proportion to its own blanket
    (the shape near D = N); with one of them at or above level D2, more blanket to it.  Steps of at most
    `_SPLIT_STEP`, and at most half the last one where the direction turns (the shortfalls are not quite linear in
    the blanket, far from it at a few hundred bits, where an undamped split swings and single distances raise the
    level).  The split only decides how tight a valid cover is."""
    if r1 <= 0 or r2 <= 0:
        return share, last
    top = level * d2
    if max(a1, a2) < _NEAR * top:  # far below the level the shape is another: equal worlds (the plain L2 cover)
        return 0.5, 0.0
    k1, k2 = (top - a1) / r1, (top - a2) / r2
    if k1 <= 0.0 or k2 <= 0.0:  # one at or above level D2: more blanket to it
        step = _SPLIT_STEP if a1 / d1 > a2 / d2 else -_SPLIT_STEP
    else:  # equal margins: k1 r1 - level (D2 - D1) = k2 (R - r1)
        step = 0.5 * ((k2 * (r1 + r2) + level * (d2 - d1)) / ((k1 + k2) * (r1 + r2)) - share)
    cap = abs(last) / 2.0 if step * last < 0.0 else _SPLIT_STEP  # the direction turned: half the last step
    new = min(0.9, max(0.1, share + min(cap, max(-cap, step))))
    return new, new - share


def _next_block(
    d1: int, covers: list[tuple[int, float, float]], level: float, total: int, share: float, aim: float
) -> int:
    """A predicted D2 for the block starting at ``d1``: ``aim`` of the way to where the bound is predicted to
    reach the level, extrapolated from the last two covers (far below the level: the cover's epsilon a power of D,
    both terms of the bound alike; from `_NEAR` of the level on: a1 short of level D2 by its shortfall per blanket
    bit times its share of the blanket)."""
    (dp, hp, k1) = covers[-1]
    beta = 1.0
    if len(covers) > 1:
        (dq, hq, _) = covers[-2]
        if dq != dp and hq > 0.0 and hp > 0.0:
            beta = min(3.0, max(0.3, math.log(hp / hq) / math.log(dp / dq)))
    # far below the level: cover(D) = hp (D / dp)^beta, bound cover(D) D / d1 = level
    far = total if hp <= 0.0 else (level * d1 * dp**beta / hp) ** (1.0 / (1.0 + beta))
    # near it: a1(D) = level D - k (N + d1 + 1 - 2 D), k = k1 share; bound a1 / d1 = level
    if hp >= _NEAR * level and k1 > 0.0:
        k = k1 * share
        far = (k * (total + d1 + 1) + level * d1) / (level + 2.0 * k)
    return d1 + max(0, int(aim * (far - d1)))


def all_zero_all_k_epsilon(total: int, q0: float, delta: float) -> float:
    """The exact epsilon the pair all-0 vs all-k needs: Bin(N, q1) against Bin(N, q0), both directions equal."""
    return up_exponent((total, total), (0, total), q0, delta) / total


__all__ = [
    "PMF_SLACK",
    "RRSearch",
    "all_zero_all_k_epsilon",
    "certified_search",
    "pair_exponents",
    "up_exponent",
    "worst_pair_search",
]
