"""Pieces shared by the metric-privacy accounting modules: the noise-epsilon range, certificates, the
distance and convolution bookkeeping of the certified Geo-Shuffle and SGDL-Shuffle analyses."""

from __future__ import annotations

import math
import numbers
from typing import Any, NamedTuple

import numpy as np

from shuffledp._util.validation import check_positive_int
from shuffledp.accounting import _rounding
from shuffledp.errors import PrivacyParameterError

#: Relative size below which cut-off SGDL terms are neglected (well below float64 resolution).
TAIL_RTOL = 1e-20


#: Distances d over which Theorem 4.1's maximum is taken by default (Conjecture B.3: d = 1 attains it).
DEFAULT_MAX_DISTANCE = 50
#: Largest ``max_distance`` accepted (`shuffledp.accounting._rounding.MAX_DISTANCE`).
MAX_DISTANCE = _rounding.MAX_DISTANCE


#: Largest noise epsilon (Geo-Shuffle's eps_geo, SGDL-Shuffle's eps) accepted
#: (`shuffledp.accounting._rounding.NOISE_EPSILON_MAX`: beyond it the noise e^-eps vanishes).
MAX_EPSILON = _rounding.NOISE_EPSILON_MAX


def check_noise_epsilon(value: Any, name: str) -> float:
    """``value`` (a real number, not a string) as a float in `NOISE_EPSILON_RANGE` = [2^-52, MAX_EPSILON] (a
    metric protocol's noise epsilon), else PrivacyParameterError (`ParameterTypeError` if not a number).

    Examples
    --------
    >>> check_noise_epsilon(0.5, "eps_geo")
    0.5
    >>> check_noise_epsilon(800, "eps_geo")
    Traceback (most recent call last):
    ...
    shuffledp.errors.PrivacyParameterError: eps_geo must be a number in [2^-52, 100]; got 800 (beyond 100 the noise e^-eps_geo vanishes)
    """
    above = isinstance(value, numbers.Real) and value > MAX_EPSILON
    note = f"beyond {MAX_EPSILON:g} the noise e^-{name} vanishes" if above else ""
    return _rounding.NOISE_EPSILON_RANGE.check(value, name, note)


def no_smaller_reason(pmf: np.ndarray, largest_shift: int, bound: str, budget: float) -> str:
    """Why the shift analysis certified nothing below ``bound``: float64 underflow of T's pmf (its lower bound,
    `shift_bounds`, is 0 there, so at the largest shift every outcome facing it counts as infinite loss: said when
    that mass alone exceeds ``budget``), or genuinely none."""
    upper, lower = shift_bounds(pmf)
    nonzero = np.flatnonzero(lower > 0.0)
    if nonzero.size:
        first, last = int(nonzero[0]), int(nonzero[-1])
        lost = float(upper[: first + largest_shift].sum() + upper[last + largest_shift + 1 :].sum())
    else:
        first, last, lost = 0, 0, float(upper.sum())
    if lost > budget:
        return (
            f"no epsilon below {bound} certified: T's pmf underflows float64 beyond |t| = {(last - first) // 2}, so "
            f"at D = n k = {largest_shift} a mass {lost:.3g} above the budget {budget:.3g} counts as infinite loss "
            "(conservative)"
        )
    return f"no epsilon below {bound} meets delta at every sum distance"


class CertifiedEpsilon(NamedTuple):
    """A certified epsilon with where it comes from (returned by `geo_shuffle_certificate`,
    `sgdl_shuffle_certificate` and `rr_shuffle_certificate`).

    ``certified`` is True when the shuffle analysis itself gave ``epsilon``; False when ``epsilon`` is the
    fallback bound (the per-report / local epsilon, valid for every pair of datasets too) and ``reason`` says why
    the shuffle analysis was not used (not attempted, or it certified nothing smaller).
    """

    epsilon: float
    certified: bool
    reason: str


def check_method(method: str, allowed: tuple[str, ...]) -> str:
    if method not in allowed:
        raise PrivacyParameterError(f"method must be one of {', '.join(allowed)}, got {method!r}")
    return method


# --- Geo-Shuffle (§4, Proposition 2, Theorem 4.1, Proposition 5) ----------------------------------------


def tail_share(delta: float, n: int) -> float:
    """1 - (1 - delta)^(1/n), without cancellation."""
    return -math.expm1(math.log1p(-delta) / n)


# --- Geo-Shuffle, certified: the privacy-conservative reading of Theorem 4.1 ------------------------------
#
# Definition 4 compares *every* pair of datasets, with one delta for every distance d = sum_i |x_i - x'_i|,
# and values lie in {0..k}, so sums differ by D = 1..n k.  Theorem 4.1 bounds the loss only on a window
# around the midpoint of the two sums; SGDL(n, e^-eps_geo) has tails of rate eps_geo, so at large D the
# needed eps tends to eps_geo (n = 100, eps_geo = 0.2: 0.032 at D = 1, 0.104 at D = 1000, 0.171 at
# D = 10^4 for the untruncated sum).  And Proposition 3 needs the mechanism *conditioned* on nobody
# truncating: there the noise is T = the sum of n discrete Laplace draws conditioned on [-c, c], whose
# support [-nc, nc] makes the release distinguishable outright once D > 2 n c.  What holds:
#   * always: (eps_geo, 0) (every report is post-processing of eps_geo-d_R-private noise; Proposition 5);
#   * at sum distance D: (eps, delta_1 + Pr[H] D_{e^(eps D)}(T + D || T)), delta_1 = 1 - Pr[H]
#     (Proposition 3 with the conditioned mechanism; H = every |N_i| <= c, independent of the data).
# The certified epsilon is the smallest eps <= eps_geo meeting delta at every D = 1..n k, else eps_geo.

#: Most multiply-adds spent convolving T (beyond it the certificate is not attempted: eps_geo is returned, and
#: `geo_shuffle_conditioned_noise` / `sgdl_shuffle_conditioned_noise` refuse).
MAX_CONVOLUTION_WORK = 4e8


def convolution_work(c: int, n: int) -> float:
    """Multiply-adds (an upper estimate) of convolving n copies of a pmf on [-c, c]: 2 (c + 1)^2 n^2."""
    return 2.0 * (c + 1) ** 2 * float(n) * float(n)


#: Most (shift, outcome) cells of the divergence search over D = 1..n k (n k (2 n c + 1); about 3 s).
MAX_SHIFT_CELLS = 3e7


def too_costly(c: int, n: int, k: int, fallback: str) -> str | None:
    """Why the certificate is not attempted (convolution or shift search beyond its limit), or None."""
    work = convolution_work(c, n)
    if work > MAX_CONVOLUTION_WORK:
        return (
            f"not attempted: convolving the conditioned noise of n={n} users (c={c}) takes 2 (c+1)^2 n^2 = {work:.3g} "
            f"multiply-adds, above the limit {MAX_CONVOLUTION_WORK:.3g}: {fallback}"
        )
    cells = float(n) * k * (2.0 * n * c + 1.0)
    if cells > MAX_SHIFT_CELLS:
        return (
            f"not attempted: the divergence search over D = 1..n k takes n k (2 n c + 1) = {cells:.3g} cells (n={n}, k={k}, "
            f"c={c}), above the limit {MAX_SHIFT_CELLS:.3g}: {fallback}"
        )
    return None


def check_convolution_size(c: int, n: int) -> None:
    work = convolution_work(c, n)
    if work > MAX_CONVOLUTION_WORK:
        raise PrivacyParameterError(
            f"the conditioned noise of n={n} users on [-c, c], c={c}, costs 2 (c+1)^2 n^2 = {work:.3g} multiply-adds, "
            f"above the limit {MAX_CONVOLUTION_WORK:.3g}: use a smaller n or c"
        )


#: Relative slack on T's pmf (direct convolution of positive terms; rounding is far below this).
PMF_SLACK = 1e-9


def shift_epsilons(upper: np.ndarray, lower: np.ndarray, shifts: np.ndarray, budget: float) -> np.ndarray:
    """For each D in ``shifts``: the smallest eps with sum_t max(0, upper(t) - e^(eps D) lower(t - D)) <= budget.

    ``upper``/``lower`` bound one pmf on the same support from above/below.  Sorting the outcomes by their
    loss ln(upper(t) / lower(t - D)) / D makes the divergence A_i - e^(eps D) B_i on each stretch between
    two losses; the root is taken on the stretch where the divergence crosses the budget.  +inf when even
    the outcomes with lower(t - D) = 0 carry more than the budget.
    """
    size = upper.size
    padded = np.concatenate([np.zeros(int(shifts.max())), lower])
    windows = np.lib.stride_tricks.sliding_window_view(padded, size)
    out = np.empty(shifts.size)
    rows = max(1, 2_000_000 // size)
    for start in range(0, shifts.size, rows):
        d = shifts[start : start + rows]
        shifted = windows[padded.size - size - d]  # lower(t - D) aligned with upper(t)
        with np.errstate(divide="ignore", invalid="ignore"):
            loss = (np.log(upper)[None, :] - np.log(shifted)) / d[:, None]
        loss = np.where(upper[None, :] > 0.0, loss, -np.inf)
        order = np.argsort(-loss, axis=1)
        loss = np.take_along_axis(loss, order, axis=1)
        a = np.cumsum(np.take_along_axis(np.broadcast_to(upper, shifted.shape), order, axis=1), axis=1)
        b = np.cumsum(np.take_along_axis(shifted, order, axis=1), axis=1)
        below = np.concatenate([loss[:, 1:], np.full((d.size, 1), -np.inf)], axis=1)  # next loss down
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            root = np.where(a > budget, np.log((a - budget) / b) / d[:, None], -np.inf)
        root = np.where(np.isnan(root), np.inf, root)
        # on stretch i (eps between below_i and loss_i) the divergence is within budget iff eps >= root_i
        feasible = root <= loss
        candidate = np.where(feasible, np.maximum(root, below), np.inf)
        out[start : start + d.size] = np.maximum(np.minimum(candidate.min(axis=1), loss[:, 0]), 0.0)
    return out


def exp_scaled(exponent: np.ndarray, values: np.ndarray) -> np.ndarray:
    """e^exponent[i] values[i, :], row by row, with 0 where a value is 0 (no nan).

    Where e^exponent overflows float64 (exponent > ~709.78) the product may still be small (a subnormal value),
    so those rows are exp(exponent + ln value) (ln 0 = -inf gives 0; a product beyond the float range is inf,
    rightly, as it is then above every probability); the other rows keep the plain product.  Either way the
    relative rounding is below 1e-12 wherever the product is at most 1 (exp's argument is then below ~745), far
    inside the 1e-9 deflation of a lower law (`shift_bounds`)."""
    with np.errstate(over="ignore", invalid="ignore"):
        scale = np.exp(exponent)
        out = np.where(values > 0.0, scale[:, None] * values, 0.0)
    huge = np.isinf(scale)
    if huge.any():
        below = values[huge]
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            out[huge] = np.where(below > 0.0, np.exp(exponent[huge, None] + np.log(below)), 0.0)
    return out


def shift_divergences(upper: np.ndarray, lower: np.ndarray, shifts: np.ndarray, epsilon: float) -> np.ndarray:
    """sum_t max(0, upper(t) - e^(eps D) lower(t - D)) for each D in ``shifts`` (the check of `shift_epsilons`)."""
    size = upper.size
    padded = np.concatenate([np.zeros(int(shifts.max())), lower])
    windows = np.lib.stride_tricks.sliding_window_view(padded, size)
    out = np.empty(shifts.size)
    rows = max(1, 2_000_000 // size)
    for start in range(0, shifts.size, rows):
        d = shifts[start : start + rows]
        out[start : start + d.size] = np.maximum(
            upper[None, :] - exp_scaled(epsilon * d, windows[padded.size - size - d]), 0.0
        ).sum(axis=1)
    return out


#: Relative margin of the fast paths below: a shift is settled by its window only if it meets the budget with
#: (1 - margin) to spare (at (1 - margin) times the level), far beyond the rounding of either sum.
_WINDOW_MARGIN = 1e-9


def _shift_window(upper: np.ndarray, tail: float) -> tuple[int, int, float]:
    """(first, last, outside): a window of outcomes leaving at most about ``tail`` of ``upper``'s mass outside, and
    that mass (summed directly, rounded up)."""
    below, above = np.cumsum(upper), np.cumsum(upper[::-1])[::-1]
    first = int(np.argmax(below > 0.5 * tail))
    last = upper.size - 1 - int(np.argmax(above[::-1] > 0.5 * tail))
    outside = (float(upper[:first].sum()) + float(upper[last + 1 :].sum())) * (1.0 + 1e-9)
    return first, last, outside


def _windowed_divergences(
    upper: np.ndarray, lower: np.ndarray, shifts: np.ndarray, epsilon: float, tail: float
) -> tuple[np.ndarray, float]:
    """Bounds of `shift_divergences`: each sum over a window of ``upper``'s outcomes (a lower bound: every term is
    nonnegative) and the mass outside the window (added, an upper bound)."""
    first, last, outside = _shift_window(upper, tail)
    size = upper.size
    padded = np.concatenate([np.zeros(int(shifts.max())), lower])
    windows = np.lib.stride_tricks.sliding_window_view(padded, size)[:, first : last + 1]
    window = upper[first : last + 1]
    out = np.empty(shifts.size)
    rows = max(1, 2_000_000 // window.size)
    for start in range(0, shifts.size, rows):
        d = shifts[start : start + rows]
        scaled = exp_scaled(epsilon * d, windows[padded.size - size - d])
        out[start : start + d.size] = np.maximum(window[None, :] - scaled, 0.0).sum(axis=1)
    return out, outside


def max_shift_divergence(
    upper: np.ndarray, lower: np.ndarray, shifts: np.ndarray, epsilon: float, budget: float
) -> float:
    """A stand-in for ``shift_divergences(upper, lower, shifts, epsilon).max()`` in a comparison with ``budget``:
    above the budget exactly when that maximum is.  The sum over a window of ``upper``'s mass settles a shift when it
    alone exceeds the budget (a window sum above it answers at once) or when, with the mass outside the window
    added, it meets the budget with room to spare; the full sums run only for the shifts in between."""
    if not budget > 0.0:
        return float(shift_divergences(upper, lower, shifts, epsilon).max())
    parts = []
    for stop in range(shifts.size, 0, -256):  # the largest shifts first: where delta is missed, if anywhere
        inside, outside = _windowed_divergences(upper, lower, shifts[max(0, stop - 256) : stop], epsilon, 1e-6 * budget)
        if inside.max() > budget * (1.0 + _WINDOW_MARGIN):
            return float(inside.max())
        parts.append(inside)
    inside = np.concatenate(parts[::-1])
    easy = inside + outside <= budget * (1.0 - _WINDOW_MARGIN)
    if easy.all():
        return float((inside + outside).max())
    return float(shift_divergences(upper, lower, shifts[~easy], epsilon).max())


def max_shift_epsilon(upper: np.ndarray, lower: np.ndarray, shifts: np.ndarray, budget: float) -> float:
    """``shift_epsilons(upper, lower, shifts, budget).max()``, solving few shifts: the largest one (and eight spread
    over the range) set a level; a shift is then solved only if its windowed divergence at the level (less
    `_WINDOW_MARGIN`) exceeds the budget: the others need no more than the level."""
    seeds = np.unique(shifts[np.linspace(0, shifts.size - 1, 9).astype(np.int64)])
    level = float(shift_epsilons(upper, lower, seeds, budget).max())
    if not (budget > 0.0 and math.isfinite(level)):
        return float(shift_epsilons(upper, lower, shifts, budget).max())
    inside, outside = _windowed_divergences(upper, lower, shifts, level * (1.0 - _WINDOW_MARGIN), 1e-6 * budget)
    hard = shifts[~(inside + outside <= budget * (1.0 - _WINDOW_MARGIN)) & ~np.isin(shifts, seeds)]
    if hard.size:
        level = max(level, float(shift_epsilons(upper, lower, hard, budget).max()))
    return level


def shift_bounds(pmf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(upper, lower): bounds of T's true pmf from the computed one (`geo_shuffle_conditioned_noise`,
    `sgdl_shuffle_conditioned_noise`: n per-user laws on [-c, c] convolved), the bounds every shift analysis works on.

    Rounded up, ``upper`` = pmf (1 + `PMF_SLACK`) + 1e-300.  Rounded down, ``lower`` = pmf (1 - `PMF_SLACK`) less
    `subnormal_charge`, floored at 0: the relative slack covers the convolution's relative rounding (~n c ulp), the
    charge its absolute rounding below the smallest normal double, where a product or a per-user value is rounded
    to a multiple of 2^-1074 (relative error up to 100% on the smallest values), so a lower value is never above
    the true one.  The charge changes no value above ~1e-290 (it is below half an ulp there)."""
    return pmf * (1.0 + PMF_SLACK) + 1e-300, np.maximum(pmf * (1.0 - PMF_SLACK) - subnormal_charge(pmf.size), 0.0)


def subnormal_charge(size: int) -> float:
    """Absolute rounding bound of a value of T's computed pmf on ``size`` = 2 n c + 1 outcomes: each of its at most
    n (2 c + 1) products and n per-user values errs by at most 2^-1075 below the normal range (subnormal sums are
    exact) and earlier errors carry weight at most 1, so (n (2 c + 2)) 2^-1075 <= 2 size 2^-1074 (n <= size)."""
    return 2.0 * size * 2.0**-1074


def _rounded_up(epsilon):
    """The margin every certified shift epsilon gets over its root: relative 1e-12, then one ulp up."""
    return np.nextafter(np.asarray(epsilon, dtype=np.float64) * (1.0 + 1e-12), np.inf)


def certified_shift_epsilon(pmf: np.ndarray, budget: float, shifts: np.ndarray) -> float:
    """The smallest eps (rounded up) with D_{e^(eps D)}(T + D || T) <= ``budget`` at every D in ``shifts``, T with
    pmf ``pmf``: `max_shift_epsilon` on `shift_bounds` with 1e-9 of the budget kept back, then checked by
    `max_shift_divergence` (inf when none, or when the check fails: never an unmet eps).  The one rule of the
    certified Geo-/SGDL-Shuffle epsilons and of their per-distance profile (`certified_shift_profile`)."""
    upper, lower = shift_bounds(pmf)
    eps = max_shift_epsilon(upper, lower, shifts, budget * (1.0 - 1e-9))
    if not math.isfinite(eps):
        return math.inf
    eps = float(_rounded_up(eps))
    return eps if max_shift_divergence(upper, lower, shifts, eps, budget) <= budget else math.inf


def certified_shift_profile(pmf: np.ndarray, budget: float, top: int) -> np.ndarray:
    """For d = 1..top: an eps meeting ``budget`` at every D <= d (non-decreasing; inf where none).

    Each D solved by `shift_epsilons` with `certified_shift_epsilon`'s margins, the running maximum taken, and capped
    by `certified_shift_epsilon` over all of 1..top (which holds at every D, so the cap keeps validity): the curve
    ends on the single certified value, never above it."""
    upper, lower = shift_bounds(pmf)
    shifts = np.arange(1, top + 1)
    per_shift = shift_epsilons(upper, lower, shifts, budget * (1.0 - 1e-9))
    per_shift = np.where(np.isfinite(per_shift), _rounded_up(per_shift), np.inf)
    return np.minimum(np.maximum.accumulate(per_shift), certified_shift_epsilon(pmf, budget, shifts))


def distance_epsilons(log_pmf_at, center: float, distances: np.ndarray) -> np.ndarray:
    """ln g(center, d) / d: g = max(h, 1/h), h = pmf(floor(center - d/2)) / pmf(floor(center + d/2)) (Eq. 45-48)."""
    a = np.abs(np.floor(center - distances / 2.0)).astype(np.int64)
    b = np.abs(np.floor(center + distances / 2.0)).astype(np.int64)
    logs = log_pmf_at(np.concatenate([a, b]))
    return np.abs(logs[: a.size] - logs[a.size :]) / distances


def check_max_distance(max_distance: int) -> int:
    """``max_distance`` in [1, `MAX_DISTANCE`] (about 2 s at the costliest n, 4096; Conjecture B.3 puts the
    maximum at d = 1 and the exceptions found sit at single-digit d)."""
    return check_positive_int(max_distance, "max_distance", maximum=MAX_DISTANCE)


def distances(max_distance: int) -> np.ndarray:
    """d = 1..max_distance (`check_max_distance`)."""
    return np.arange(1, check_max_distance(max_distance) + 1, dtype=np.float64)


__all__ = [
    "CertifiedEpsilon",
    "check_max_distance",
    "DEFAULT_MAX_DISTANCE",
    "MAX_CONVOLUTION_WORK",
    "MAX_DISTANCE",
    "MAX_EPSILON",
    "MAX_SHIFT_CELLS",
    "PMF_SLACK",
    "TAIL_RTOL",
    "check_convolution_size",
    "check_method",
    "check_noise_epsilon",
    "certified_shift_epsilon",
    "certified_shift_profile",
    "convolution_work",
    "distance_epsilons",
    "distances",
    "exp_scaled",
    "no_smaller_reason",
    "max_shift_divergence",
    "max_shift_epsilon",
    "shift_bounds",
    "shift_divergences",
    "shift_epsilons",
    "subnormal_charge",
    "tail_share",
    "too_costly",
]
