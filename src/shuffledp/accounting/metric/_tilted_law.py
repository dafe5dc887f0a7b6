"""Bounds of T's pmf (the sum of n draws from a per-user law on -c..c) in O(n c log(n c)) work: exponential tilting
and a short circular FFT power per tilt, every rounding charged.

For any theta, T's pmf is P_theta(t) e^(-theta t) M(theta)^n, P_theta the law of the sum of n draws from the tilted
law one(x) e^(theta x) / M(theta), which is concentrated around its mean n mu(theta).  Each tilt computes P_theta on a
circular grid of length L (Bernstein puts at most `_ALIAS` of its mass beyond the half-width read, so the wrap-around
adds at most that much), by one real FFT, an n-th power by repeated squaring and one inverse FFT.  Charges (absolute,
on P_theta, so valid at every outcome; `_one_tilt`):
  * the forward FFT: each coefficient off by at most g = 16 u (log2 L + 1) (u = 2^-53; a radix-r FFT of a law of
    total mass 1 keeps every intermediate of modulus <= 1 and errs by a few u per stage, so this is a generous
    multiple of the classical per-stage bound);
  * the power: |X^n - Xc^n| <= n g (|Xc| + g)^(n-1), plus the rounding of the squarings, 4 u n |Xc|^n;
  * the inverse FFT: (2/L) sum over the half spectrum of the above, plus g (2/L) sum |Zc| for its own rounding;
  * the wrap-around `_ALIAS` (lower bound only: wrapped mass only adds).
A tilt's lower bound P_theta - charge is used only where the charge is below `_REL` of the value or the value is
within e^-`_TRUST` of the tilt's largest (so its relative error is at most max(`_REL`, e^`_TRUST` charge / largest));
the next tilt is aimed `_AHEAD` tilted sds beyond the last outcome covered, so their coverages overlap (else it is
re-aimed at the first outcome not covered).  Each tilt writes only the outcomes from the first to the last it uses.
Upper bounds: P_theta + charge where used, else Chernoff's
e^(-theta t) M^n (P_theta <= 1), the least over the tilts, and beyond every tilt the extreme tilts' Chernoff bounds;
lower bounds 0 where no tilt covers (errs toward loss).  The per-user tilted law's rounding is charged as in
`_common._left_tail_log_lower` (n e1), the float sum of the logs by `_LOG_SUM`.  For a symmetric per-user law only
the left half is swept and mirrored.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import fft

_U = 2.0**-53
#: Largest mass of a tilted sum beyond the half-width read (Bernstein), the wrap-around charge.
_ALIAS = 1e-20
#: Relative error aimed at: a tilt's values are used down to where the charge is this fraction of them...
_REL = 1e-10
#: ... or down to e^-_TRUST of the tilt's largest value, whichever reaches further (then the charge is larger
#: relative to the value, and it is charged as it is).
_TRUST = 3.0
#: Tilted sds beyond the last outcome covered that the next tilt is aimed at: a tilt covers about
#: sqrt(2 `_TRUST`) ~ 2.45 of its sds either side of its mean, so the coverages still overlap.
_AHEAD = 2.0
#: Charge per unit of size of the logs summed into a bound (-theta t + n ln M + ln P_theta: each exact to an ulp or
#: two, summed in a few steps; 64 u is far above it).
_LOG_SUM = 64.0 * _U


def tilted_user_law(log_one: np.ndarray, x: np.ndarray, theta: float) -> tuple[np.ndarray, float, float, float, float]:
    """(tilted law, ln M(theta), per-user relative rounding e1, mean, variance) of one(x) e^(theta x) / M."""
    w, top, tilted, norm, mean, var = _tilted_moments(log_one, x, theta)
    finite = np.isfinite(w)
    e1 = 2.0**-50 * float(np.max(np.where(finite, np.abs(log_one) + np.abs(theta * x) + np.abs(w - top), 0)) + 1)
    return tilted, top + math.log(norm), e1, mean, var


def _tilted_moments(
    log_one: np.ndarray, x: np.ndarray, theta: float
) -> tuple[np.ndarray, float, np.ndarray, float, float, float]:
    """(log_one + theta x, its largest, tilted law, its normaliser, mean, variance): `tilted_user_law` without the
    rounding charge, all the Newton search of `_theta_for_mean` needs (the max ignores -inf, which never wins while
    some weight is positive)."""
    w = log_one + theta * x
    top = float(w.max())
    tilted = np.exp(w - top)
    norm = float(tilted.sum())
    tilted /= norm
    mean = float((tilted * x).sum())
    var = float((tilted * (x - mean) ** 2).sum())
    return w, top, tilted, norm, mean, var


def _theta_for_mean(log_one: np.ndarray, x: np.ndarray, mean: float) -> float:
    """theta whose tilted per-user mean is about ``mean`` (Newton kept inside a bracket, else doubling or bisection;
    any theta gives valid bounds, a good one only covers the outcomes wanted)."""
    lo, hi, theta = -math.inf, math.inf, 0.0
    for _ in range(200):
        m, v = _tilted_moments(log_one, x, theta)[4:]
        if abs(m - mean) <= 1e-9 * (1.0 + abs(mean)):
            break
        lo, hi = (theta, hi) if m < mean else (lo, theta)
        step = theta + max(-1.0, min(1.0, (mean - m) / v)) if v > 0.0 else math.nan  # Newton, at most 1 a step
        if lo < step < hi:
            theta = step
        elif math.isinf(lo) or math.isinf(hi):
            theta = 2.0 * theta + (1.0 if m < mean else -1.0)
        else:
            theta = 0.5 * (lo + hi)
        if hi - lo <= 1e-15 * (1.0 + abs(theta)):
            break
    return theta


def _power(z: np.ndarray, n: int) -> np.ndarray:
    """z^n by repeated squaring (relative rounding <= 4 u n, charged by `_fft_error`)."""
    out, base = None, z.copy()
    while n:
        if n & 1:
            out = base.copy() if out is None else np.multiply(out, base, out=out)
        n >>= 1
        if n:
            np.multiply(base, base, out=base)
    return np.ones_like(z) if out is None else out


def _one_tilt(tilted: np.ndarray, n: int, c: int, mean: float, var: float) -> tuple[int, np.ndarray, float, float]:
    """(first outcome, P_theta on first.., charge for the upper bound, charge for the lower bound) on the outcomes
    within Bernstein's half-width of the tilted mean n ``mean`` (clipped to the support)."""
    spread = 2.0 * c
    k = 2.0 * math.log(2.0 / _ALIAS)
    half = (k * spread / 3.0 + math.sqrt((k * spread / 3.0) ** 2 + 4.0 * k * n * var)) / 2.0
    centre = n * mean
    first = max(-n * c, math.floor(centre - half))
    last = min(n * c, math.ceil(centre + half))
    support = 2 * n * c + 1
    length = fft.next_fast_len(min(support, 2 * (last - first) + 3), True)
    alias = 0.0 if length >= support else _ALIAS
    grid = np.zeros(length)
    np.add.at(grid, np.arange(-c, c + 1) % length, tilted)
    spectrum = fft.rfft(grid)
    powered = _power(spectrum, n)
    circular = fft.irfft(powered, length)
    g = 16.0 * _U * (math.log2(length) + 1.0)
    mod = np.abs(spectrum)
    weights = np.full(mod.size, 2.0)
    weights[0] = 1.0
    if length % 2 == 0:
        weights[-1] = 1.0
    with np.errstate(under="ignore"):
        err = n * g * np.exp((n - 1) * np.log(mod + g)) + 4.0 * _U * n * np.exp(n * np.log(np.maximum(mod, 1e-300)))
    charge = float((weights * (err + g * np.abs(powered))).sum()) / length * (1.0 + 1e-6)
    values = circular[np.arange(first, last + 1) % length]
    return first, values, charge, charge + alias


def tilted_log_bounds(one: np.ndarray, n: int, lowest: int, highest: int) -> tuple[np.ndarray, np.ndarray]:
    """(log upper, log lower) of T's pmf on -n c .. n c (natural logs, rounded out; lower -inf where not covered),
    covering at least the outcomes ``lowest`` .. ``highest`` (indices 0 .. 2 n c) by tilts (see the module doc)."""
    c = (one.size - 1) // 2
    size = 2 * n * c + 1
    x = np.arange(-c, c + 1, dtype=np.float64)
    t = np.arange(size, dtype=np.float64) - n * c
    with np.errstate(divide="ignore"):
        log_one = np.log(one)
    log_up = np.full(size, np.inf)
    log_lo = np.full(size, -np.inf)
    covered_lo, covered_hi = size, -1

    extremes: dict[str, tuple[float, float, float]] = {}  # the smallest and the largest theta applied

    def chernoff(theta: float, log_m: float, e1: float, at: np.ndarray | slice) -> tuple[np.ndarray, np.ndarray]:
        """ln of e^(-theta t) M^n (P_theta <= 1) at the outcomes ``at``, rounded up, and the fuzz charged there."""
        fuzz = n * e1 * 1.01 + _LOG_SUM * (1.0 + np.abs(theta * t[at]) + n * (abs(log_m) + 1.0))
        return -theta * t[at] + n * log_m + fuzz, fuzz

    def apply(theta: float) -> tuple[int, int]:
        tilted, log_m, e1, mean, var = tilted_user_law(log_one, x, theta)
        for side, better in (
            ("low", theta < extremes.get("low", (math.inf,))[0]),
            ("high", theta > extremes.get("high", (-math.inf,))[0]),
        ):
            if better:
                extremes[side] = (theta, log_m, e1)
        first, values, up_charge, lo_charge = _one_tilt(tilted, n, c, mean, var)
        peak = float(values.max())
        keep = (values - lo_charge >= values * (1.0 - _REL)) | (values >= peak * math.exp(-_TRUST))
        keep &= values > lo_charge
        kept = np.flatnonzero(keep)
        if not kept.size:
            return -1, -1
        # Only the outcomes from the first to the last kept are written: elsewhere the tilt's bounds are far looser
        # than those of the tilt that keeps them (or the extreme tilts' Chernoff bounds beyond every tilt).
        span = slice(int(kept[0]), int(kept[-1]) + 1)
        values, keep = values[span], keep[span]
        at = slice(first + n * c + span.start, first + n * c + span.stop)
        bound, fuzz = chernoff(theta, log_m, e1, at)
        with np.errstate(divide="ignore", invalid="ignore"):
            upper = np.log(values + up_charge) - theta * t[at] + n * log_m + fuzz
            lower = np.log(np.where(keep, values - lo_charge, 0.0)) - theta * t[at] + n * log_m - fuzz
        log_up[at] = np.minimum(log_up[at], np.where(keep, np.minimum(upper, bound), bound))
        log_lo[at] = np.maximum(log_lo[at], lower)
        return at.start, at.stop - 1

    def sweep(start: int, stop: int, step: int) -> None:
        """Tilts from ``start`` towards ``stop`` (step -1: leftwards, +1: rightwards) until covered."""
        edge = start
        while (edge >= stop) if step < 0 else (edge <= stop):
            target = edge - n * c  # the outcome to reach
            if abs(target) >= n * c:  # the support's end: a single atom, one(+-c)^n
                theta = _theta_for_mean(log_one, x, (target - 0.5 * step) / n)
            else:
                var = _tilted_moments(log_one, x, _theta_for_mean(log_one, x, target / n))[5]
                ahead = target + step * _AHEAD * math.sqrt(n * var)
                theta = _theta_for_mean(log_one, x, min(max(ahead, -n * c + 0.5), n * c - 0.5) / n)
            lo, hi = apply(theta)
            reach = lo if step < 0 else hi
            if lo < 0 or not lo <= edge <= hi:  # the look-ahead missed the edge (or left a gap): aim at the edge
                lo, hi = apply(_theta_for_mean(log_one, x, min(max(target, -n * c + 0.5), n * c - 0.5) / n))
                reach = lo if step < 0 else hi
                if lo < 0 or (lo > edge if step < 0 else hi < edge):
                    return  # not coverable (the rest stays at Chernoff / 0: conservative)
            edge = reach + step

    centre_lo, centre_hi = apply(0.0)
    covered_lo, covered_hi = (centre_lo, centre_hi) if centre_lo >= 0 else (n * c, n * c)
    sweep(covered_lo - 1, max(lowest, 0), -1)
    symmetric = np.array_equal(one, one[::-1])
    if not symmetric:
        sweep(covered_hi + 1, min(highest, size - 1), 1)
    # Outside every tilt's outcomes: the extreme tilts' Chernoff bounds (for a symmetric law on the left half only,
    # where the sweep went: the right half takes them from the mirror below).
    beyond = np.flatnonzero(np.isinf(log_up[: n * c + 1] if symmetric else log_up))
    if beyond.size:  # on the hull of those outcomes as one slice (contiguous passes), written only where beyond
        hull = slice(int(beyond[0]), int(beyond[-1]) + 1)
        part, where = log_up[hull], np.isinf(log_up[hull])
        for theta, log_m, e1 in extremes.values():
            np.minimum(part, chernoff(theta, log_m, e1, hull)[0], out=part, where=where)
    if symmetric:
        log_up = np.minimum(log_up, log_up[::-1])
        log_lo = np.maximum(log_lo, log_lo[::-1])
    return log_up, log_lo
