"""Pieces shared by the metric-privacy accounting modules: the noise-epsilon range, certificates, the
distance and convolution bookkeeping of the certified Geo-Shuffle and SGDL-Shuffle analyses."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from shuffledp._util.validation import check_positive_int
from shuffledp.accounting import _rounding
from shuffledp.accounting.metric._tilted_law import tilted_log_bounds, tilted_user_law
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


def no_smaller_reason(law: ShiftLaw, largest_shift: int, bound: str, budget: float) -> str:
    """Why the shift analysis certified nothing below ``bound``: T's lower law is 0 below some outcome, so at the
    largest shift every outcome facing it counts as infinite loss (said when that mass alone exceeds ``budget``),
    either because T's support ends there (-n c: the conditioned noise cannot certify that shift) or because its pmf
    underflows float64 beyond the reach of `shift_law`'s log-space tail; or genuinely none."""
    upper = law.upper
    known = law.lower > 0.0 if law.log_lower is None else np.isfinite(law.log_lower)
    nonzero = np.flatnonzero(known)
    if nonzero.size:
        first, last = int(nonzero[0]), int(nonzero[-1])
        lost = float(upper[: first + largest_shift].sum() + upper[last + largest_shift + 1 :].sum())
    else:
        first, last, lost = 0, 0, float(upper.sum())
    if lost > budget:
        center = (upper.size - 1) // 2
        cause = (
            f"T's support ends at -n c = {-center}"
            if first == 0
            else f"T's pmf underflows float64 below t = {first - center} (beyond the reach of its log-space tail)"
        )
        return (
            f"no epsilon below {bound} certified: {cause}, so at D = n k = {largest_shift} a mass {lost:.3g} above the "
            f"budget {budget:.3g} counts as infinite loss{' (conservative)' if first else ''}"
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


#: Relative tolerance of the certified inverses (Geo-Shuffle's eps_geo, SGDL-Shuffle's noise epsilon): the value
#: returned certifies the target, and a point at most this much above it does not (`_solve.feasible_edge`).
INVERSE_RTOL = 1e-4
#: Most certificates a certified inverse computes (each ~0.05-0.2 s at n = 10^4); at the limit it returns the largest
#: value found to certify the target (valid, possibly short of the edge).
MAX_INVERSE_STEPS = 40


def certificate_margin(found: CertifiedEpsilon, target: float) -> float:
    """The margin of a certified inverse's step: ln(epsilon / target) (at most 0 exactly when the certificate meets
    the target; its size aims the next step), +inf when the shuffle analysis certified nothing (``found`` is the
    fallback)."""
    return math.log(found.epsilon / target) if found.certified else math.inf


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

#: Most multiply-adds of T's direct convolution, 2 (c + 1)^2 n^2 (`convolution_work`): the exact path, used up to
#: this cost (`shift_law`); `geo_shuffle_conditioned_noise` / `sgdl_shuffle_conditioned_noise` refuse beyond it.
MAX_CONVOLUTION_WORK = 4e8
#: `shift_law`'s automatic choice: the direct convolution up to this many multiply-adds (~10 ms), tilted FFT powers
#: beyond (each as valid; the tilted law costs O(n c log(n c)), so at n = 1000, c = 13 it takes ~10 ms where the
#: direct one takes ~0.25 s, which the certified inverse pays at each of its steps).
AUTO_DIRECT_WORK = 2e7


def convolution_work(c: int, n: int) -> float:
    """Multiply-adds (an upper estimate) of convolving n copies of a pmf on [-c, c]: 2 (c + 1)^2 n^2."""
    return 2.0 * (c + 1) ** 2 * float(n) * float(n)


#: Most (shift, outcome) cells of a search over every outcome of T, n k (2 n c + 1) (the per-distance profile's
#: `certified_shift_profile`; about 3 s).
MAX_SHIFT_CELLS = 3e7
#: Most outcomes 2 n c + 1 of T on the tilted path (`_tilted_shift_law`: a few arrays of that size, ~0.1 s per 4e5).
MAX_TILTED_SUPPORT = 4e6
#: Most (shift, outcome) cells of the certificate's windowed search (laws not known log-concave, e.g. SGDL-Shuffle's;
#: `too_costly`), n k w with w = min(2 n c + 1, 16 sd(T) + 1)
#: about the window of T's mass it looks at (`_shift_window`; about 2.5 s at 2.2e8, n = 10^4, k = 10).
MAX_WINDOW_CELLS = 3e8


def too_costly(
    c: int, n: int, k: int, fallback: str, user_law: Callable[[], np.ndarray], *, log_concave: bool = False
) -> str | None:
    """Why the certificate (T = the sum of n draws from ``user_law()``, a law on [-c, c]; sum distances 1..n k) is
    not attempted, or None: T beyond the direct convolution's limit and beyond the tilted path's, or the windowed
    shift search beyond its limit (the law is built only once T's size is known to be within the limits).  A
    ``log_concave`` T (`ShiftLaw.log_concave`) needs no windowed search (the cumulative bound costs O(n c) for all
    shifts at once), so only T's limits apply to it."""
    size = 2 * n * c + 1
    work = convolution_work(c, n)
    if work > MAX_CONVOLUTION_WORK and size > MAX_TILTED_SUPPORT:
        return (
            f"not attempted: the conditioned noise of n={n} users (c={c}) has 2 n c + 1 = {size} outcomes, above the "
            f"limit {MAX_TILTED_SUPPORT:.3g} (and its direct convolution 2 (c+1)^2 n^2 = {work:.3g} multiply-adds "
            f"above {MAX_CONVOLUTION_WORK:.3g}): {fallback}"
        )
    if log_concave:
        return None
    one, x = user_law(), np.arange(-c, c + 1, dtype=np.float64)
    sd = math.sqrt(n * max(0.0, float((one * x * x).sum() - (one * x).sum() ** 2)))
    cells = float(n) * k * min(size, 16.0 * sd + 1.0)
    if cells > MAX_WINDOW_CELLS:
        return (
            f"not attempted: the divergence search over D = 1..n k takes n k min(2 n c + 1, 16 sd(T) + 1) = {cells:.3g} "
            f"cells (n={n}, k={k}, c={c}), above the limit {MAX_WINDOW_CELLS:.3g}: {fallback}"
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
#: Smallest normal double: below it a computed value of T's pmf has lost relative precision (`shift_law` then
#: takes the lower law's left tail from log space).
_TINY = float(np.finfo(np.float64).tiny)
#: Most tilted convolutions `shift_law` spends on T's left tail (each costs as much as T itself).
MAX_TAIL_TILTS = 6
#: Mass of T below the outcomes whose lower law `shift_law` makes sure of (far below any budget's window).
_FOCUS_TAIL = 1e-30


class ShiftLaw(NamedTuple):
    """Bounds of T's true pmf on -n c .. n c, the input of every shift check (`shift_law`).

    ``upper`` is rounded up (never below the true pmf, and positive); ``lower`` rounded down (never above it; 0
    where it underflows).  ``log_lower`` is None when ``lower`` keeps its relative precision everywhere the checks
    look (the linear path), else the natural log of a lower bound, rounded down, finite also where ``lower``
    underflows: the checks then work on log ratios ln upper(t) - log_lower(t - D) (`_log_ratios`), which no float
    range limits however far apart the two values lie.

    ``log_concave`` is True only when the builder knows T's TRUE pmf to be log-concave on its support -n c .. n c
    (every value there positive): then the checks bound each shift's divergence by the cumulative sums of the bounds
    (`_cdf_logs`, `_max_cdf_slope`), in O(n c) work for all shifts at once.  It is a fact about the noise, never
    inferred from the (rounded) bounds; False keeps the per-outcome checks, valid for any law."""

    upper: np.ndarray
    lower: np.ndarray
    log_lower: np.ndarray | None = None
    log_concave: bool = False


def _shifted_rows(law: ShiftLaw, d: np.ndarray, largest: int, first: int = 0, last: int | None = None) -> np.ndarray:
    """rows[i, j] = lower(t - d_i) (0 for t < d_i; on the log path log_lower(t - d_i), -inf there), t = first + j
    over T's outcomes first..last (default all)."""
    size = law.upper.size
    last = size - 1 if last is None else last
    base = law.lower if law.log_lower is None else law.log_lower
    padded = np.concatenate([np.full(largest, 0.0 if law.log_lower is None else -np.inf), base])
    return np.lib.stride_tricks.sliding_window_view(padded, size)[:, first : last + 1][padded.size - size - d]


def _log_ratios(law: ShiftLaw, d: np.ndarray, largest: int, first: int = 0, last: int | None = None) -> np.ndarray:
    """The log path's rows: ln upper(t) - log_lower(t - d_i) (+inf where the lower law is 0), t = first..last."""
    last = law.upper.size - 1 if last is None else last
    return np.log(law.upper[first : last + 1])[None, :] - _shifted_rows(law, d, largest, first, last)


def _divergence_rows(law: ShiftLaw, d: np.ndarray, largest: int, epsilon: float, first: int, last: int) -> np.ndarray:
    """sum over t = first..last of max(0, upper(t) - e^(eps D) lower(t - D)) for each D in ``d``: on the linear path
    the products (`exp_scaled`), on the log path upper(t) (1 - e^(eps D - ratio))^+ (relative rounding a few ulps)."""
    window = law.upper[first : last + 1]
    if law.log_lower is None:
        shifted = _shifted_rows(law, d, largest, first, last)
        return np.maximum(window[None, :] - exp_scaled(epsilon * d.astype(np.float64), shifted), 0.0).sum(axis=1)
    gap = np.minimum(epsilon * d[:, None] - _log_ratios(law, d, largest, first, last), 0.0)
    return (window[None, :] * -np.expm1(gap)).sum(axis=1)


def shift_epsilons(
    law: ShiftLaw, shifts: np.ndarray, budget: float, window: tuple[int, int, float] | None = None
) -> np.ndarray:
    """For each D in ``shifts``: the smallest eps with sum_t max(0, upper(t) - e^(eps D) lower(t - D)) <= budget.

    Sorting the outcomes by their loss ln(upper(t) / lower(t - D)) / D makes the divergence A_i - e^(eps D) B_i on
    each stretch between two losses; the root is taken on the stretch where the divergence crosses the budget.  +inf
    when even the outcomes with lower(t - D) = 0 carry more than the budget.  On the log path B_i is summed in log
    space (`_log_ratios`: no underflow however small lower(t - D)).

    With a ``window`` (first, last, outside) from `_shift_window`: only the outcomes first..last are sorted and the
    budget left to them is budget - outside (every term outside is at most upper(t), whose sum is ``outside``): an
    eps meeting that meets the full sum, at a cost of the window's width instead of T's whole support."""
    first, last, outside = (0, law.upper.size - 1, 0.0) if window is None else window
    if window is not None and not outside < budget:
        return shift_epsilons(law, shifts, budget)
    budget -= outside
    upper = law.upper[first : last + 1]
    size = upper.size
    largest = int(shifts.max())
    out = np.empty(shifts.size)
    rows = max(1, 2_000_000 // size)
    for start in range(0, shifts.size, rows):
        d = shifts[start : start + rows]
        with np.errstate(divide="ignore", invalid="ignore"):
            if law.log_lower is None:
                shifted = _shifted_rows(law, d, largest, first, last)  # lower(t - D) aligned with upper(t)
                loss = (np.log(upper)[None, :] - np.log(shifted)) / d[:, None]
            else:
                logs = _shifted_rows(law, d, largest, first, last)
                loss = (np.log(upper)[None, :] - logs) / d[:, None]
        loss = np.where(upper[None, :] > 0.0, loss, -np.inf)
        order = np.argsort(-loss, axis=1)
        loss = np.take_along_axis(loss, order, axis=1)
        a = np.cumsum(np.take_along_axis(np.broadcast_to(upper, loss.shape), order, axis=1), axis=1)
        below = np.concatenate([loss[:, 1:], np.full((d.size, 1), -np.inf)], axis=1)  # next loss down
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if law.log_lower is None:
                b = np.cumsum(np.take_along_axis(shifted, order, axis=1), axis=1)
                root = np.where(a > budget, np.log((a - budget) / b) / d[:, None], -np.inf)
            else:
                log_b = np.logaddexp.accumulate(np.take_along_axis(logs, order, axis=1), axis=1)
                root = np.where(a > budget, (np.log(a - budget) - log_b) / d[:, None], -np.inf)
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


def shift_divergences(law: ShiftLaw, shifts: np.ndarray, epsilon: float) -> np.ndarray:
    """sum_t max(0, upper(t) - e^(eps D) lower(t - D)) for each D in ``shifts`` (the check of `shift_epsilons`)."""
    size = law.upper.size
    largest = int(shifts.max())
    out = np.empty(shifts.size)
    rows = max(1, 2_000_000 // size)
    for start in range(0, shifts.size, rows):
        d = shifts[start : start + rows]
        out[start : start + d.size] = _divergence_rows(law, d, largest, epsilon, 0, size - 1)
    return out


#: Relative margin of the fast paths below: a shift is settled by its window only if it meets the budget with
#: (1 - margin) to spare (at (1 - margin) times the level), far beyond the rounding of either sum.
_WINDOW_MARGIN = 1e-9


#: Share of the budget the per-shift solve of `_level_and_unsettled` leaves outside its window of outcomes (charged
#: in full): it moves an epsilon by far less than the 1e-9 of the budget `certified_shift_epsilon` keeps back.
_SOLVE_TAIL = 1e-12


def _shift_window(upper: np.ndarray, tail: float) -> tuple[int, int, float]:
    """(first, last, outside): a window of outcomes leaving at most about ``tail`` of ``upper``'s mass outside, and
    that mass (summed directly, rounded up)."""
    below, above = np.cumsum(upper), np.cumsum(upper[::-1])[::-1]
    first = int(np.argmax(below > 0.5 * tail))
    last = upper.size - 1 - int(np.argmax(above[::-1] > 0.5 * tail))
    outside = (float(upper[:first].sum()) + float(upper[last + 1 :].sum())) * (1.0 + 1e-9)
    return first, last, outside


def _windowed_divergences(
    law: ShiftLaw, shifts: np.ndarray, epsilon: float, window: tuple[int, int, float]
) -> tuple[np.ndarray, float]:
    """Bounds of `shift_divergences`: each sum over a window of ``upper``'s outcomes (``window`` from `_shift_window`;
    a lower bound: every term is nonnegative) and the mass outside the window (added, an upper bound)."""
    first, last, outside = window
    largest = int(shifts.max())
    out = np.empty(shifts.size)
    rows = max(1, 2_000_000 // (last - first + 1))
    for start in range(0, shifts.size, rows):
        d = shifts[start : start + rows]
        out[start : start + d.size] = _divergence_rows(law, d, largest, epsilon, first, last)
    return out, outside


#: Unit roundoff of float64 (half an ulp of 1).
_U = 2.0**-53


def _sliding_min(values: np.ndarray, width: int) -> np.ndarray:
    """out[i] = min(values[i : i + width]) for i = 0..values.size - width, in O(values.size) for any ``width`` (van
    Herk / Gil-Werman: running minima from each end of consecutive pieces of ``width``; a window meets at most two
    pieces, the end of one and the start of the next)."""
    pieces = -(-values.size // width)
    padded = np.full(pieces * width, np.inf)
    padded[: values.size] = values
    rows = padded.reshape(pieces, width)
    from_start = np.minimum.accumulate(rows, axis=1).ravel()
    from_end = np.minimum.accumulate(rows[:, ::-1], axis=1)[:, ::-1].ravel()
    count = values.size - width + 1
    return np.minimum(from_end[:count], from_start[width - 1 : width - 1 + count])


def _log_lower_base(law: ShiftLaw) -> np.ndarray:
    """ln of T's lower law, rounded down: ``log_lower`` on the log path, else ln lower less 4 u (|ln| + 1) for the
    log's rounding (-inf where lower is 0)."""
    if law.log_lower is not None:
        return law.log_lower
    with np.errstate(divide="ignore"):
        base = np.log(law.lower)
    return base - 4.0 * _U * (np.abs(np.where(np.isfinite(base), base, 0.0)) + 1.0)


def _block_bounder(
    law: ShiftLaw, epsilon: float, window: tuple[int, int, float], dmin: int, dmax: int
) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """bounds(lo, hi): for each block of shifts D = lo_b..hi_b (within ``dmin``..``dmax``) an upper bound of
    sum_t max(0, upper(t) - e^(eps D) lower(t - D)) at every D of the block at once.

    With s = t - D, e^(eps D) lower(t - D) = exp(eps (t - s) + ln lower(s)) >= exp(m_b(t)),
    m_b(t) = min over s in [t - hi_b, t - lo_b] of ln lower(s) + eps (t - s), so each term is at most
    upper(t) (1 - exp(m_b(t) - ln upper(t)))^+ (no shape of the law is assumed).  The minimum is a sliding one
    (`_sliding_min`) of h(s) = ln lower(s) - eps (s - first) (-inf left of T's support; ln lower rounded down,
    `_log_lower_base`), shared by the blocks of one width: O(span of their windows) per width, then O(window) per
    block.  Outcomes outside the window (first, last, outside) from `_shift_window` add at most ``outside``.

    Rounding (every charge lowers the exponent, which only raises the bound): with the origin at the window's first
    outcome, |s - first| <= dmax + window, so h(s) and the exponent x = eps (t - first) + m - ln upper(t) err by at
    most a few u (eps (dmax + window) + |m| + |ln upper| + |x|), where eps D and ln lower(t - D) may each be ~10^4
    and cancel; x is lowered by 4 u times that sum plus 4 u.  The window's sum of positive terms (each -expm1 and
    product to an ulp) is raised by (window + 8) u, then one ulp, and so is its sum with ``outside``."""
    first, last, outside = window
    upper = law.upper[first : last + 1]
    size = upper.size
    t = np.arange(size, dtype=np.float64)  # t - first
    log_upper = np.log(upper)
    near = epsilon * t - log_upper
    scale = epsilon * float(dmax + size) + np.abs(log_upper) + epsilon * t + 1.0
    s0 = first - dmax  # h over s = s0 .. last - dmin
    s = np.arange(s0, last - dmin + 1)
    h = np.full(s.size, -np.inf)
    inside_support = s >= 0
    h[inside_support] = _log_lower_base(law)[s[inside_support]] - epsilon * (s[inside_support] - first)
    rows = max(1, 2_000_000 // size)

    def bounds(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        widths = hi - lo + 1
        out = np.empty(lo.size)
        for width in np.unique(widths):
            chosen = np.flatnonzero(widths == width)
            starts = (first - s0) - hi[chosen]  # index in h of s = first - hi_b
            low = int(starts.min())
            smallest = _sliding_min(h[low : int(starts.max()) + size + int(width) - 1], int(width))
            for begin in range(0, chosen.size, rows):
                pick = slice(begin, begin + rows)
                m = smallest[(starts[pick] - low)[:, None] + np.arange(size)[None, :]]
                x = near[None, :] + m
                charge = 4.0 * _U * (scale[None, :] + np.abs(m) + np.abs(x))
                with np.errstate(invalid="ignore"):
                    gap = np.minimum(x - charge, 0.0)
                out[chosen[pick]] = (upper[None, :] * -np.expm1(gap)).sum(axis=1)
        inside = np.nextafter(out * (1.0 + (size + 8) * _U), np.inf)
        return np.nextafter((inside + outside) * (1.0 + _U), np.inf)

    return bounds


#: Fewest shifts `_settle_by_blocks` builds blocks for: fewer are cheaper one by one (a level of blocks costs about
#: as much as the span of the shifts).
_FEWEST_BLOCKED = 64


def _settle_by_blocks(
    law: ShiftLaw, shifts: np.ndarray, epsilon: float, bar: float, window: tuple[int, int, float]
) -> tuple[np.ndarray, float]:
    """(the members of ``shifts`` no block settled, sorted; the largest bound of a settled block, 0 if none).

    Blocks of consecutive D, from one covering every shift down to pairs: a block whose bound (`_block_bounder`) is
    at most ``bar`` settles each member shift (its divergence at ``epsilon`` is at most that bound); the others are
    halved (blocks holding no member dropped), one level of the hierarchy at a time, every block of a level at once.
    A block costs about one shift's windowed sum, so shifts far from the budget are settled by a few dozen sums
    rather than one each; the members of unsettled pairs are left to the per-shift checks, and so are all shifts
    when there are fewer than `_FEWEST_BLOCKED`."""
    increasing = shifts.size > 1 and bool((shifts[1:] > shifts[:-1]).all())
    members = shifts if increasing else np.unique(shifts)  # the certificates' 1..n k need no sort
    if members.size < _FEWEST_BLOCKED:
        return members, 0.0
    dmin, dmax = int(members[0]), int(members[-1])
    bounds = _block_bounder(law, epsilon, window, dmin, dmax)
    width = 1 << (dmax - dmin).bit_length()
    lo = np.array([dmin], dtype=np.int64)
    settled = 0.0
    while width > 1 and lo.size:
        hi = np.minimum(lo + width - 1, dmax)
        held = np.searchsorted(members, hi, side="right") > np.searchsorted(members, lo, side="left")
        lo, hi = lo[held], hi[held]
        bound = bounds(lo, hi)
        done = bound <= bar
        settled = max(settled, float(bound[done].max(initial=0.0)))
        width //= 2
        lo = np.sort(np.concatenate([lo[~done], lo[~done] + width]))
        lo = lo[lo <= dmax]
    return members[np.isin(members, lo)], settled


def max_shift_divergence(law: ShiftLaw, shifts: np.ndarray, epsilon: float, budget: float) -> float:
    """A stand-in for ``shift_divergences(law, shifts, epsilon).max()`` in a comparison with ``budget``: above the
    budget exactly when that maximum is.  The sum over a window of ``upper``'s mass settles a shift when it alone
    exceeds the budget (a window sum above it answers at once) or when, with the mass outside the window added, it
    meets the budget with room to spare; the full sums run only for the shifts in between.  Blocks of shifts are
    settled first, many at once (`_settle_by_blocks`): only the shifts they leave get a window sum each.  For a
    log-concave T (``law.log_concave``) the cumulative bound answers first (`_max_cdf_slope` over D from the
    smallest to the largest of ``shifts``): the budget itself when ``epsilon`` is at least its slope bound, the
    cumulative bound at the cell of its largest slope when ``epsilon`` is below that slope (then above the budget);
    the per-outcome path runs only for an ``epsilon`` within the bound's 1e-13 gap."""
    if not budget > 0.0:
        return float(shift_divergences(law, shifts, epsilon).max())
    if law.log_concave:
        a, b = _cdf_logs(law, budget)
        bound, t, d = _max_cdf_slope(a, b, int(shifts.min()), int(shifts.max()))
        if epsilon >= bound:
            return budget
        rise = float(a[t] - b[t - d]) if t >= d else math.inf  # F_L = 0 left of T's support
        if epsilon * d < rise:  # the cumulative bound F_U(t) - e^(eps D) F_L(t - D) exceeds the budget
            excess = math.exp(a[t]) * -math.expm1(epsilon * d - rise)
            return max(math.nextafter(budget, math.inf), budget + excess)
    window = _shift_window(law.upper, 1e-6 * budget)
    shifts, settled = _settle_by_blocks(law, shifts, epsilon, budget * (1.0 - _WINDOW_MARGIN), window)
    if shifts.size == 0:
        return settled
    parts = []
    for stop in range(shifts.size, 0, -256):  # the largest shifts first: where delta is missed, if anywhere
        inside, outside = _windowed_divergences(law, shifts[max(0, stop - 256) : stop], epsilon, window)
        if inside.max() > budget * (1.0 + _WINDOW_MARGIN):
            return float(inside.max())
        parts.append(inside)
    inside = np.concatenate(parts[::-1])
    easy = inside + outside <= budget * (1.0 - _WINDOW_MARGIN)
    if easy.all():
        return max(settled, float((inside + outside).max()))
    return float(shift_divergences(law, shifts[~easy], epsilon).max())


def max_shift_epsilon(law: ShiftLaw, shifts: np.ndarray, budget: float) -> float:
    """``shift_epsilons(law, shifts, budget).max()``, solving few shifts: the largest one (and eight spread over the
    range) set a level; a shift is then solved only if its windowed divergence at the level (less `_WINDOW_MARGIN`)
    exceeds the budget: the others need no more than the level."""
    return _level_and_unsettled(law, shifts, budget)[0]


def _level_and_unsettled(law: ShiftLaw, shifts: np.ndarray, budget: float) -> tuple[float, np.ndarray]:
    """(`max_shift_epsilon`, the shifts it solved or could not settle): every other shift meets ``budget`` (less
    `_WINDOW_MARGIN`) at the level less `_WINDOW_MARGIN`, hence at any larger eps (the divergence falls as eps
    grows), so a check at an eps at least the level needs to look at the returned shifts only.  The windowed sums
    run only on the shifts that blocks (`_settle_by_blocks`) leave unsettled.  A seed its window cannot certify is
    solved on every outcome; still inf, the answer is inf without solving the other shifts."""
    seeds = np.unique(shifts[np.linspace(0, shifts.size - 1, 9).astype(np.int64)])
    solving = _shift_window(law.upper, _SOLVE_TAIL * budget) if budget > 0.0 else None
    per_seed = shift_epsilons(law, seeds, budget, solving)
    level = float(per_seed.max())
    if budget > 0.0 and not math.isfinite(level):  # a seed the window cannot certify: solve it on every outcome
        stuck = seeds[~np.isfinite(per_seed)]
        if not np.isfinite(shift_epsilons(law, stuck, budget)).all():
            return math.inf, shifts  # the maximum is inf already: no need to solve the other n k shifts
    if not (budget > 0.0 and math.isfinite(level)):
        return float(shift_epsilons(law, shifts, budget).max()), shifts
    at, bar, window = (
        level * (1.0 - _WINDOW_MARGIN),
        budget * (1.0 - _WINDOW_MARGIN),
        _shift_window(law.upper, 1e-6 * budget),
    )
    singles = _settle_by_blocks(law, shifts, at, bar, window)[0]
    if singles.size:
        inside, outside = _windowed_divergences(law, singles, at, window)
        singles = singles[~(inside + outside <= bar)]
    unsettled = np.isin(shifts, singles)
    hard = shifts[unsettled & ~np.isin(shifts, seeds)]
    if hard.size:
        level = max(level, float(shift_epsilons(law, hard, budget, solving).max()))
    return level, shifts[unsettled | np.isin(shifts, seeds)]


# --- Log-concave T: each shift's divergence as a largest cumulative sum ------------------------------------------
#
# Lemma.  Let T's pmf be log-concave on its support, an interval on which every value is positive.  For D >= 1 the
# ratio T(t) / T(t - D) is then non-increasing in t (+inf while t - D is left of the support, 0 once t is right of
# it), so the terms T(t) - e^(eps D) T(t - D) are nonnegative up to some t and nonpositive beyond, and the sum of
# their positive parts is their largest prefix sum:
#     D_{e^(eps D)}(T + D || T) = max_t [F(t) - e^(eps D) F(t - D)]      (F = T's CDF; the empty prefix gives 0).
# With F_U >= F >= F_L, the cumulative sums of the upper and lower laws, this is at most
# max_t [F_U(t) - e^(eps D) F_L(t - D)], itself never above the per-outcome bound (a prefix sum of its terms).  So
# the budget is met at D iff eps D >= A(t) - B(t - D) wherever F_U(t) > budget, A = ln(F_U - budget), B = ln F_L,
# and the smallest eps meeting it at every D in a range is the largest slope (A(t) - B(s)) / (t - s) with t - s in
# it (`_max_cdf_slope`).  t beyond T's last outcome need no look: there F_U stays put while F_L(t - D) grows.
# A convolution of log-concave pmfs on Z without internal zeros is log-concave, so T is whenever each user's law
# is; the law builder says so in `ShiftLaw.log_concave`.

#: Outcomes per block of the blocked cumulative sum `_upper_cdf`: its relative rounding is
#: about (block + number of blocks) u, ~3e-13 at 4e6 outcomes, where one running sum would give ~4e-10.
_CDF_BLOCK = 1024
#: Relative gap at which `_max_cdf_slope` stops refining, and the most rectangles it examines before it answers with
#: the bound it has (still an upper bound, only looser; never met on the laws of the tests).
_SLOPE_RTOL = 1e-13
_MAX_SLOPE_RECTANGLES = 2_000_000


def _blocks(values: np.ndarray, fill: float) -> np.ndarray:
    """``values`` padded with ``fill`` to whole blocks of `_CDF_BLOCK`, one block a row."""
    rows = -(-values.size // _CDF_BLOCK)
    out = np.full(rows * _CDF_BLOCK, fill)
    out[: values.size] = values
    return out.reshape(rows, _CDF_BLOCK)


def _upper_cdf(upper: np.ndarray) -> np.ndarray:
    """F_U(t), the sum of ``upper`` (positive, normal) up to t, rounded up: running sums within blocks, then over the
    block totals, then one addition, each a recursive sum of positive terms, so relative error at most
    (block + blocks + 1) u; charged with 1% to spare and 4 u more, which covers the rounding of the factor (u) and of
    the product (u), so the product is above the charged sum (the sums are normal: no ulp step needed)."""
    rows = _blocks(upper, 0.0)
    within = np.cumsum(rows, axis=1)
    before = np.concatenate([[0.0], np.cumsum(within[:, -1])[:-1]])
    total = (before[:, None] + within).ravel()[: upper.size]
    return total * (1.0 + (1.01 * (_CDF_BLOCK + rows.shape[0] + 2) + 4.0) * _U)


def _log_lower_cdf(log_values: np.ndarray) -> np.ndarray:
    """ln F_L(s), F_L(s) = sum over r <= s of e^log_values[r] (-inf while all are 0), rounded down, non-decreasing.

    One logaddexp running sum, out(s) = logaddexp(out(s - 1), log_values[s]).  Step r errs by at most
    e_r = u |out(r)| + 3 u (the final addition, exp and log1p to an ulp), and an error in out(s - 1) reaches out(s)
    times e^(out(s - 1) - out(s)) <= 1, so along the steps the weights multiply to e^(out(r) - out(s)): out(s) is
    charged sum over r <= s of e_r e^(out(r) - out(s)) (itself summed by logaddexp; with 1% to spare, which covers
    that sum's own rounding and the weights' being taken at the computed values).  In the far left tail, where the
    logs are large, the weights fall geometrically, so the charge stays a few ulps of each value rather than the
    step count times the largest.  The running minimum from the right then keeps it non-decreasing (still a lower
    bound).  Only the span from the first to the last finite log is summed: before it the sum is 0 (-inf) and after
    it adding e^-inf = 0 leaves it exactly as it was (no step, nothing to charge), so the tilted laws' long runs of
    uncovered outcomes cost nothing."""
    span = _finite_span(log_values)
    result = np.full(log_values.size, -np.inf)
    if span.stop:
        result[span] = _log_lower_running_sum(log_values[span])
        result[span.stop :] = result[span.stop - 1]
    return result


def _finite_span(log_values: np.ndarray) -> slice:
    """The indices from the first to the last finite entry of ``log_values`` (an empty slice when none is)."""
    finite = np.isfinite(log_values)
    if not finite.any():
        return slice(0, 0)
    return slice(int(np.argmax(finite)), log_values.size - int(np.argmax(finite[::-1])))


def _log_lower_running_sum(log_values: np.ndarray) -> np.ndarray:
    """`_log_lower_cdf` on its span of finite logs (see there)."""
    out = np.logaddexp.accumulate(log_values)
    finite = np.isfinite(out)
    steps = _U * np.abs(np.where(finite, out, 0.0)) + 3.0 * _U
    with np.errstate(divide="ignore", invalid="ignore"):
        weighted = np.logaddexp.accumulate(np.where(finite, np.log(steps) + out, -np.inf))
        charge = np.where(finite, np.exp(weighted - out), 0.0)
    return np.minimum.accumulate((out - 1.01 * charge)[::-1])[::-1]


def _cdf_logs(law: ShiftLaw, budget: float) -> tuple[np.ndarray, np.ndarray]:
    """(A, B) of the lemma above on T's outcomes: A = ln(F_U - budget) rounded up (-inf where F_U <= budget), made
    non-decreasing (a running maximum: still an upper bound); B = ln F_L rounded down (`_log_lower_cdf`; on the
    linear path from ln lower, each log less 4 u (|log| + 1) for its rounding)."""
    if law.log_lower is None:
        with np.errstate(divide="ignore"):
            base = np.log(law.lower)
        base = base - 4.0 * _U * (np.abs(base) + 1.0)
    else:
        base = law.log_lower
    above = _upper_cdf(law.upper) - budget
    a = np.full(above.size, -np.inf)
    start = int(np.argmax(above > 0.0))  # before the first F_U above the budget A is -inf: only the rest is worked
    if above[start] > 0.0:
        rest = above[start:]
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.log(np.where(rest > 0.0, np.nextafter(rest * (1.0 + _U), np.inf), 0.0))
        a[start:] = np.maximum.accumulate(logs + 4.0 * _U * (np.abs(np.where(np.isfinite(logs), logs, 0.0)) + 1.0))
    return a, _log_lower_cdf(base)


def _slopes(a: np.ndarray, b: np.ndarray, t: np.ndarray, s: np.ndarray, d: np.ndarray) -> np.ndarray:
    """max(0, a[t] - b[s]) / d, +inf where s < 0 (F_L = 0 left of T's support) or b[s] = -inf; a[t] finite."""
    ok = s >= 0
    with np.errstate(invalid="ignore"):
        rise = np.where(ok, a[t] - b[np.where(ok, s, 0)], np.inf)
    return np.maximum(rise, 0.0) / d


def _max_cdf_slope(a: np.ndarray, b: np.ndarray, smallest: int, largest: int) -> tuple[float, int, int]:
    """(bound, t, D): an upper bound, rounded up, of max (a[t] - b[t - D])^+ / D over every outcome t and D in
    ``smallest`` .. ``largest`` (b = -inf left of index 0), and the cell (t, D) of the largest slope met.

    Branch and bound over rectangles [t1, t2] x [D1, D2]: as a and b are non-decreasing, every slope in one is at most
    (a[t2] - b[t1 - D2])^+ / D1; a rectangle is dropped once that is within `_SLOPE_RTOL` of the largest slope met at
    a cell (a[t2] - b[t2 - D1]) / D1, else halved along its longer side.  The answer is the largest bound dropped or
    met (a single cell's bound is its slope), times 1 + 4 u for the subtraction and division, one ulp up."""
    first = int(np.argmax(np.isfinite(a)))
    if not np.isfinite(a[first]):
        return 0.0, 0, smallest  # F_U <= budget everywhere: every shift meets it at eps = 0
    t_edges = np.unique(np.linspace(first, a.size, 33).astype(np.int64))
    d_edges = np.unique(np.linspace(smallest, largest + 1, 33).astype(np.int64))
    t1, d1 = (g.ravel() for g in np.meshgrid(t_edges[:-1], d_edges[:-1], indexing="ij"))
    t2, d2 = (g.ravel() for g in np.meshgrid(t_edges[1:] - 1, d_edges[1:] - 1, indexing="ij"))
    best, cell, dropped, seen = 0.0, (int(a.size - 1), smallest), 0.0, 0
    while t1.size:
        seen += t1.size
        bound = _slopes(a, b, t2, t1 - d2, d1)
        met = _slopes(a, b, t2, t2 - d1, d1)
        top = int(np.argmax(met))
        if met[top] > best:
            best, cell = float(met[top]), (int(t2[top]), int(d1[top]))
        if math.isinf(best):
            return math.inf, cell[0], cell[1]
        keep = bound > best * (1.0 + _SLOPE_RTOL)
        dropped = max(dropped, float(bound[~keep].max(initial=0.0)))
        if seen > _MAX_SLOPE_RECTANGLES:
            dropped = max(dropped, float(bound.max()))
            break
        t1, t2, d1, d2 = t1[keep], t2[keep], d1[keep], d2[keep]
        along_t = t2 - t1 >= d2 - d1
        tm, dm = (t1 + t2) // 2, (d1 + d2) // 2
        t1, t2 = np.concatenate([t1, np.where(along_t, tm + 1, t1)]), np.concatenate([np.where(along_t, tm, t2), t2])
        d1, d2 = np.concatenate([d1, np.where(along_t, d1, dm + 1)]), np.concatenate([np.where(along_t, d2, dm), d2])
    return float(np.nextafter(max(best, dropped) * (1.0 + 4.0 * _U), np.inf)), cell[0], cell[1]


def cdf_shift_epsilons(law: ShiftLaw, shifts: np.ndarray, budget: float) -> np.ndarray:
    """For a log-concave T (``law.log_concave``), each D's smallest eps meeting ``budget`` by the cumulative bound of
    the lemma above, max over t of (A(t) - B(t - D))^+ / D, rounded up (inf where F_L = 0 faces F_U > budget): never
    above `shift_epsilons` (the per-outcome bound) but for that rounding.  O(n c) work per shift."""
    if not law.log_concave:
        raise PrivacyParameterError(
            f"cdf_shift_epsilons needs a law whose true pmf is known log-concave, got log_concave={law.log_concave!r}"
        )
    return _cdf_shift_slopes(*_cdf_logs(law, budget), shifts)


def _cdf_shift_slopes(a: np.ndarray, b: np.ndarray, shifts: np.ndarray) -> np.ndarray:
    """`cdf_shift_epsilons` from the lemma's (A, B) (`_cdf_logs`)."""
    t = np.flatnonzero(np.isfinite(a))
    out = np.zeros(shifts.size)
    if t.size:
        for i, shift in enumerate(np.asarray(shifts, dtype=np.int64)):
            out[i] = _slopes(a, b, t, t - shift, np.float64(shift)).max()
    return np.nextafter(out * (1.0 + 4.0 * _U), np.inf)


def shift_bounds(pmf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(upper, lower): bounds of a true pmf from the computed one (T's: n per-user laws on [-c, c] convolved, see
    `shift_law`; the exhaustive search's sums of clamped laws), the linear bounds every shift or pair check works on.

    Rounded up, ``upper`` = pmf (1 + `PMF_SLACK`) + 1e-300.  Rounded down, ``lower`` = pmf (1 - `PMF_SLACK`) less
    `subnormal_charge`, floored at 0: the relative slack covers the convolution's relative rounding (~n c ulp), the
    charge its absolute rounding below the smallest normal double, where a product or a per-user value is rounded
    to a multiple of 2^-1074 (relative error up to 100% on the smallest values), so a lower value is never above
    the true one.  The charge changes no value above ~1e-290 (it is below half an ulp there)."""
    return pmf * (1.0 + PMF_SLACK) + 1e-300, np.maximum(pmf * (1.0 - PMF_SLACK) - subnormal_charge(pmf.shape[-1]), 0.0)


def subnormal_charge(size: int) -> float:
    """Absolute rounding bound of a value of T's computed pmf on ``size`` = 2 n c + 1 outcomes: each of its at most
    n (2 c + 1) products and n per-user values errs by at most 2^-1075 below the normal range (subnormal sums are
    exact) and earlier errors carry weight at most 1, so (n (2 c + 2)) 2^-1075 <= 2 size 2^-1074 (n <= size)."""
    return 2.0 * size * 2.0**-1074


def convolution_power(one: np.ndarray, n: int) -> np.ndarray:
    """The law of the sum of n independent draws from the law ``one``: n - 1 direct convolutions of positive terms
    (relative rounding ~n c ulp, inside `PMF_SLACK`; values below the normal range are charged by `shift_bounds`)."""
    pmf = one
    for _ in range(n - 1):
        pmf = np.convolve(pmf, one)
    return pmf


def _tilt(log_one: np.ndarray, x: np.ndarray, mean: float) -> float:
    """A theta <= 0 whose tilted law one(x) e^(theta x) / M(theta) has mean about ``mean`` (bisection; any theta
    gives valid bounds in `_left_tail_log_lower`, a good one only covers more outcomes per convolution)."""

    def tilted_mean(theta: float) -> float:
        w = log_one + theta * x
        weights = np.exp(w - w.max())
        return float((weights * x).sum() / weights.sum())

    lo, hi = -1.0, 0.0
    while tilted_mean(lo) > mean and lo > -1e6:
        lo, hi = 2.0 * lo, lo
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if tilted_mean(mid) < mean else (lo, mid)
    return hi


def _left_tail_log_lower(one: np.ndarray, n: int, log_lower: np.ndarray, lowest: int) -> np.ndarray:
    """``log_lower`` raised on T's left tail (outcomes ``lowest`` up to where T's computed pmf is normal) by
    exponential tilting: for any theta, T's pmf is pmf_theta(t) e^(-theta t) M^n, pmf_theta the n-fold convolution of
    one(x) e^(theta x) / M, which is in the normal range around its mean n mu(theta); each tilt is aimed at the
    outcome where the previous coverage ends, up to `MAX_TAIL_TILTS` of them.

    Each bound is rounded down: pmf_theta deflated and charged as in `shift_bounds`; the per-user tilted law's
    rounding (relative e1 <= 2^-50 (|ln one| + |theta x| + |w - max w| + 1)) raised to the n-th power (n e1); and
    1e-12 (1 + |theta t| + n (|ln M| + 1)) for the float sum of the logs.  The max over the tilts and ``log_lower``
    is a lower bound as each one is."""
    c = (one.size - 1) // 2
    size = log_lower.size
    x = np.arange(-c, c + 1, dtype=np.float64)
    t = np.arange(size, dtype=np.float64) - n * c
    with np.errstate(divide="ignore"):
        log_one = np.log(one)
    best = log_lower.copy()
    target = int(np.argmax(np.isfinite(best) & (best >= math.log(_TINY))))
    for _ in range(MAX_TAIL_TILTS):
        if target <= lowest:
            break
        theta = _tilt(log_one, x, max(float(t[target]) / n, -c + 1e-6))
        tilted, log_m, e1, _, _ = tilted_user_law(log_one, x, theta)
        low_t = np.maximum(convolution_power(tilted, n) * (1.0 - PMF_SLACK) - subnormal_charge(size), 0.0)
        with np.errstate(divide="ignore"):
            bound = np.log(low_t) - theta * t + n * log_m
        bound -= n * e1 * 1.01 + 1e-12 * (1.0 + np.abs(theta * t) + n * (abs(log_m) + 1.0))
        best = np.maximum(best, bound)
        reached = int(np.argmax(low_t >= _TINY))
        if reached >= target:
            break
        target = reached
    return best


def shift_law(one: np.ndarray, n: int, largest_shift: int, method: str = "auto") -> ShiftLaw:
    """The bounds every shift check works on for T, the sum of n draws from ``one`` (a law on -c..c).

    ``method="direct"``: `shift_bounds` of its direct convolution (upper rounded up, lower rounded down), plus, where
    the lower law underflows on the outcomes the checks meet (down to ``largest_shift`` below where T keeps all but
    1e-30 of its mass), its log from `_left_tail_log_lower`, every entry less 1e-12 (1 + |log|) for the rounding of
    rescaling the rows from logs.  Only the left tail is needed: the checks compare T + D with T for D > 0, so
    lower(t - D) sits left of upper(t).  When nothing there underflows, ``log_lower`` is None: the linear path.

    ``method="tilted"``: `_tilted_law.tilted_log_bounds` (tilted short FFT powers, every rounding charged, relative
    error about 1e-9; O(n c log(n c)) work), always on the log path.  ``"auto"``: direct while it costs at most
    `AUTO_DIRECT_WORK`, else tilted."""
    check_method(method, SHIFT_LAW_METHODS)
    c = (one.size - 1) // 2
    if method == "tilted" or (method == "auto" and convolution_work(c, n) > AUTO_DIRECT_WORK):
        return _tilted_shift_law(one, n, largest_shift)
    pmf = convolution_power(one, n)
    upper, lower = shift_bounds(pmf)
    first, _, _ = _shift_window(upper, _FOCUS_TAIL)
    lowest = max(0, first - int(largest_shift))
    if not (pmf[lowest : first + 1] < _TINY).any():
        return ShiftLaw(upper, lower, None)
    with np.errstate(divide="ignore"):
        log_lower = _left_tail_log_lower(one, n, np.log(lower), lowest)
    return ShiftLaw(upper, lower, log_lower - 1e-12 * (1.0 + np.abs(log_lower)))


#: The methods of `shift_law`.
SHIFT_LAW_METHODS = ("auto", "direct", "tilted")
#: Standard deviations of T left of its centre that the tilted law covers beyond the largest shift (the checks'
#: window of T's mass ends well inside; outcomes left uncovered get lower bound 0, which errs toward loss).
_TILT_REACH_SDS = 60.0


def _tilted_shift_law(one: np.ndarray, n: int, largest_shift: int) -> ShiftLaw:
    """`shift_law` by `_tilted_law.tilted_log_bounds`: upper = e^log_upper (1 + 1e-12) + 1e-300 (exp's rounding;
    the floor keeps it above a true value that underflows), lower = e^log_lower (1 - 1e-12), log_lower less
    1e-12 (1 + |log|) as on the direct path.  Covered: from ``largest_shift`` plus `_TILT_REACH_SDS` of T's sds
    left of its centre to as far right (every outcome, by symmetry, for a symmetric ``one``)."""
    c = (one.size - 1) // 2
    x = np.arange(-c, c + 1, dtype=np.float64)
    sd = math.sqrt(n * float((one * x * x).sum() - (one * x).sum() ** 2))
    reach = int(largest_shift + _TILT_REACH_SDS * sd + 1)
    log_upper, log_lower = tilted_log_bounds(one, n, n * c - reach, n * c + reach)
    span = _finite_span(log_lower)  # outside it lower = 0 and log_lower = -inf as they are
    lower = np.zeros(log_lower.size)
    with np.errstate(under="ignore"):
        upper = np.exp(log_upper) * (1.0 + 1e-12) + 1e-300
        lower[span] = np.exp(log_lower[span]) * (1.0 - 1e-12)
    inside = log_lower[span]
    log_lower[span] = inside - 1e-12 * (1.0 + np.abs(np.where(np.isfinite(inside), inside, 0.0)))
    return ShiftLaw(upper, lower, log_lower)


def _rounded_up(epsilon):
    """The margin every certified shift epsilon gets over its root: relative 1e-12, then one ulp up."""
    return np.nextafter(np.asarray(epsilon, dtype=np.float64) * (1.0 + 1e-12), np.inf)


def certified_shift_epsilon(law: ShiftLaw, budget: float, shifts: np.ndarray) -> float:
    """The smallest eps (rounded up) with D_{e^(eps D)}(T + D || T) <= ``budget`` at every D in ``shifts``, T bounded
    by ``law`` (`shift_law`).  For a log-concave T (``law.log_concave``): the largest slope of the cumulative bound
    (`_max_cdf_slope`, every rounding charged) over D from the smallest to the largest of ``shifts``.  Otherwise:
    `max_shift_epsilon` with 1e-9 of the budget kept back, then checked by
    `max_shift_divergence` on the shifts its windowed bound did not settle (the others meet the budget at any eps
    above its level: `_level_and_unsettled`; inf when none, or when the check fails: never an unmet eps).  The one rule of the
    certified Geo-/SGDL-Shuffle epsilons, their inverse's feasibility check and their per-distance profile
    (`certified_shift_profile`)."""
    if law.log_concave:
        a, b = _cdf_logs(law, budget)
        eps = _max_cdf_slope(a, b, int(shifts.min()), int(shifts.max()))[0]
        return float(_rounded_up(eps)) if math.isfinite(eps) else math.inf
    eps, unsettled = _level_and_unsettled(law, shifts, budget * (1.0 - 1e-9))
    if not math.isfinite(eps):
        return math.inf
    eps = float(_rounded_up(eps))
    return eps if unsettled.size == 0 or max_shift_divergence(law, unsettled, eps, budget) <= budget else math.inf


#: Points of the geometric grid a log-concave T's profile lists beyond the distances it solves one by one.
_PROFILE_GRID_POINTS = 200


def certified_shift_profile(law: ShiftLaw, budget: float, top: int) -> tuple[np.ndarray, np.ndarray]:
    """(distances, epsilons): for each listed d, an eps meeting ``budget`` at every D <= d (non-decreasing; inf
    where none); the listed distances end at ``top``.

    Every d = 1..dense, dense = min(top, `MAX_SHIFT_CELLS` / T's outcomes) (at least 64): each D solved with
    `certified_shift_epsilon`'s margins (`cdf_shift_epsilons` for a log-concave T, else `shift_epsilons` on the
    level's window), the running maximum taken.  Beyond, for a log-concave T only (``law.log_concave``), a geometric
    grid up to ``top``: at each grid distance d the largest slope of the cumulative bound over the D since the
    previous one (`_max_cdf_slope`, a few ms however large ``top``), the running maximum again; between two listed
    distances the larger one's value holds.  The curve is capped by `certified_shift_epsilon` over 1..top (which
    holds at every D, so the cap keeps validity): it ends on the single certified value, never above it."""
    dense = int(min(top, max(64, MAX_SHIFT_CELLS // law.upper.size)))
    shifts = np.arange(1, dense + 1)
    if law.log_concave:
        a, b = _cdf_logs(law, budget)
        per_shift = _cdf_shift_slopes(a, b, shifts)
        grid = np.unique(np.geomspace(dense, top, _PROFILE_GRID_POINTS).round().astype(np.int64))[1:]
        edges = np.concatenate([[dense], grid])
        beyond = [_max_cdf_slope(a, b, int(lo) + 1, int(hi))[0] for lo, hi in zip(edges[:-1], edges[1:])]
        distances, per_shift = np.concatenate([shifts, grid]), np.concatenate([per_shift, beyond])
    else:
        kept = budget * (1.0 - 1e-9)
        distances, per_shift = shifts, shift_epsilons(law, shifts, kept, _shift_window(law.upper, _SOLVE_TAIL * kept))
    per_shift = np.where(np.isfinite(per_shift), _rounded_up(per_shift), np.inf)
    cap = certified_shift_epsilon(law, budget, np.arange(1, int(distances[-1]) + 1))
    return distances, np.minimum(np.maximum.accumulate(per_shift), cap)


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
    "INVERSE_RTOL",
    "MAX_INVERSE_STEPS",
    "AUTO_DIRECT_WORK",
    "MAX_CONVOLUTION_WORK",
    "MAX_DISTANCE",
    "MAX_EPSILON",
    "MAX_SHIFT_CELLS",
    "MAX_TILTED_SUPPORT",
    "MAX_WINDOW_CELLS",
    "MAX_TAIL_TILTS",
    "PMF_SLACK",
    "TAIL_RTOL",
    "check_convolution_size",
    "check_method",
    "check_noise_epsilon",
    "cdf_shift_epsilons",
    "certificate_margin",
    "certified_shift_epsilon",
    "convolution_power",
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
    "shift_law",
    "ShiftLaw",
    "shift_epsilons",
    "subnormal_charge",
    "tail_share",
    "too_costly",
]
