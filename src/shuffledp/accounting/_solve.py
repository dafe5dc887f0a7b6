"""The searches of the accounting: the largest x whose non-decreasing cost stays within a target, and the
grid point where a non-increasing divergence crosses delta.

`largest_within` is the solver behind `shuffledp.accounting.accountants.calibrate` (every
inverse goes through it); `solve_epsilon` certifies the epsilon of every numerical bound on
the grid exp(k log(1 + rtol)) (its Newton steps, `bracket_root` and `newton_root`, also
serve the engine's estimate).  The module sits in the bottom layer of ``accounting/`` and
imports only the primitives, so any module above may use it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import NamedTuple

from scipy import optimize

from shuffledp.accounting._rounding import ROUND_TRIP_RTOL, floor_positive, grid_step
from shuffledp.errors import PrivacyParameterError


def largest_within(
    amplified: Callable[[float], float], target: float, lo: float, hi: float, *, context: str = ""
) -> float:
    """Largest eps0 in [lo, hi] with ``amplified(eps0) <= target``, for a non-decreasing ``amplified``.

    The shared solver behind `calibrate`: it
    brackets by halving down from ``hi``, solves by Brent's method in log(eps0), then steps
    down until the target is met.  The result is verified to meet the target and, where
    ``amplified`` is continuous, lies within a relative ``ROUND_TRIP_RTOL`` of reaching it.

    Parameters
    ----------
    amplified : callable float -> float
        Non-decreasing cost (``math.inf`` allowed).
    target : float
    lo, hi : float, 0 < lo < hi
    context : str
        Appended to the error message.

    Returns
    -------
    float
        ``hi`` when even it meets the target.

    Raises
    ------
    PrivacyParameterError
        When even ``lo`` misses the target.

    Examples
    --------
    >>> x = largest_within(lambda x: x * x, 4.0, 0.1, 10.0)
    >>> round(x, 6), x * x <= 4.0
    (2.0, True)
    """
    # the last step asks again for Brent's root: each x is priced once
    amplified = lru_cache(maxsize=None)(amplified)
    if amplified(hi) <= target:
        return hi
    # Bracket by halving down from the top: large eps0 means few blankets, so these
    # evaluations are the cheap ones.
    upper = hi
    while True:
        below = max(upper / 2.0, lo)
        at_below = amplified(below)
        if at_below <= target:
            break
        if below == lo:
            raise PrivacyParameterError(
                f"no local epsilon in [{lo:g}, {hi:g}] reaches target_epsilon={target:g}"
                f"{' ' + context if context else ''}: even eps0={lo:g} amplifies to {at_below:.6g}; "
                f"increase n or delta, or lower the search's low end (min_epsilon, or calibrate's bracket)"
            )
        upper = below

    # Solve in log(eps0), so the tolerance is relative; cap infinite bounds for Brent.  At the bracket's
    # ends Brent gets the costs already known (exp(log(x)) need not give x back, which would price it again).
    ends = {math.log(below): below, math.log(upper): upper}

    def gap(log_eps0: float) -> float:
        return min(amplified(ends.get(log_eps0, math.exp(log_eps0))), 2.0 * target + 1.0) - target

    root = optimize.brentq(gap, math.log(below), math.log(upper), xtol=ROUND_TRIP_RTOL / 8.0, rtol=1e-15)
    eps0 = math.exp(root)
    step = ROUND_TRIP_RTOL / 8.0
    while amplified(eps0) > target:  # Brent's root may sit just above the target
        eps0 = max(below, eps0 * (1.0 - step))
        step *= 2.0
    return eps0


#: Newton steps from an estimated root before `solve_epsilon` falls back to its full search.
_NEAR_STEPS = 3


def solve_epsilon(
    divergence: Callable[[float], float],
    delta: float,
    ceiling: float,
    guess: float,
    rtol: float,
    upper: bool,
    *,
    cap: float = math.inf,
    with_slope: Callable[[float], tuple[float, float]] | None = None,
    near: float | None = None,
) -> float:
    """Grid point bracketing the root of a non-increasing ``divergence(eps) = delta`` on [0, ceiling].

    Upper: the smallest grid point with divergence <= delta (``cap`` if none below
    ``ceiling`` is, ``cap`` being an epsilon known to be valid); lower: the largest grid
    point with divergence > delta (0 if even eps = 0 is certified).  The root is located
    by Brent's method on log(divergence) and the grid boundary then verified by bisection
    on the grid index, so the result is certified whatever Brent returns.

    Parameters
    ----------
    divergence : callable float -> float
        Non-increasing in eps.
    delta : float, in (0, 1)
    ceiling : float, > 0
        Largest eps searched.
    guess : float
        Starting point.
    rtol : float, in [1e-12, 1e-2]
        Grid spacing log(1 + rtol).
    upper : bool
    cap : float
        Returned (upper) when no grid point below ``ceiling`` is certified.
    with_slope : callable float -> (float, float), optional
        ``divergence`` and its approximate derivative, for Newton steps.
    near : float, optional
        A close estimate of the root (with ``with_slope``): Newton steps from it, each checked
        on the grid, replace the bracketing when they find the boundary (the same one).

    Returns
    -------
    float

    Examples
    --------
    >>> import math
    >>> eps = solve_epsilon(lambda e: math.exp(-e), 0.5, 10.0, 1.0, 1e-7, upper=True)
    >>> math.log(2.0) <= eps <= math.log(2.0) * (1 + 1e-7)
    True
    """
    step = grid_step(rtol)

    def above(k: int) -> bool:
        return divergence(math.exp(k * step)) > delta

    def result(kb: int) -> float:
        return min(math.exp(kb * step), cap) if upper else math.exp((kb - 1) * step)

    if near is not None and with_slope is not None:
        kb = _boundary_near(above, with_slope, delta, near, ceiling, step)
        if kb is not None:
            return result(kb)
    lo, hi = bracket_root(divergence, delta, ceiling, guess)
    if lo == hi:  # even the ceiling is above delta, or eps = 0 is not
        return 0.0 if hi == 0.0 else cap if upper else _snap(ceiling, rtol, up=False)

    def phi(eps: float) -> float:
        return math.log(floor_positive(divergence(eps), delta)) - math.log(delta)

    if with_slope is not None:
        root = newton_root(with_slope, delta, lo, hi, max(rtol / 4.0, 1e-14))
    else:
        root = (
            optimize.brentq(phi, lo, hi, xtol=1e-300, rtol=max(rtol / 4.0, 1e-14)) if phi(lo) > 0.0 >= phi(hi) else hi
        )

    # The boundary index kb: above(kb - 1) and not above(kb).  Verify around Brent's root,
    # and fall back to bisection on the grid index between the bracket's ends.
    k = math.ceil(math.log(max(root, 1e-300)) / step)
    if not above(k) and above(k - 1):
        kb = k
    elif not above(k + 1) and above(k):
        kb = k + 1
    else:
        # exp(k_lo h) <= lo is above, exp(k_hi h) >= hi is not (the divergence is non-increasing)
        k_lo = math.floor(math.log(max(lo, 1e-300)) / step)
        k_hi = math.ceil(math.log(hi) / step)
        while k_hi - k_lo > 1:
            mid = (k_lo + k_hi) // 2
            k_lo, k_hi = (mid, k_hi) if above(mid) else (k_lo, mid)
        kb = k_hi
    return result(kb)


def bracket_root(
    divergence: Callable[[float], float], delta: float, ceiling: float, guess: float
) -> tuple[float, float]:
    """(lo, hi) with divergence(lo) > delta >= divergence(hi), probing out from the guess by factors of 2.

    The ends (eps = 0, the ceiling) are tested only when the probes reach them:
    (ceiling, ceiling) when even the ceiling is above delta, (0, 0) when eps = 0 is not.
    """
    guess = min(max(guess, 1e-12), ceiling)
    if divergence(guess) > delta:
        lo, probe = guess, min(2.0 * guess, ceiling)
        while divergence(probe) > delta:
            if probe >= ceiling:
                return ceiling, ceiling
            lo, probe = probe, min(2.0 * probe, ceiling)
        return lo, probe
    hi, probe = guess, guess / 2.0
    while probe > guess / 16.0 and divergence(probe) <= delta:
        hi, probe = probe, probe / 2.0
    if divergence(probe) > delta:
        return probe, hi
    return (0.0, 0.0) if divergence(0.0) <= delta else (0.0, hi)


def _boundary_near(
    above: Callable[[int], bool],
    with_slope: Callable[[float], tuple[float, float]],
    delta: float,
    near: float,
    ceiling: float,
    step: float,
) -> int | None:
    """Grid index kb with above(kb - 1) and not above(kb), by Newton steps from ``near``; None if they miss it.

    ``near`` is a close estimate of the root, so each step is checked at once on the grid
    (whose evaluations, close together, cost little after the first).  What it returns is
    the boundary the full search of `solve_epsilon` finds (the one boundary of a
    non-increasing divergence); None sends the caller to that search.
    """
    x = near
    for _ in range(_NEAR_STEPS):
        if not 0.0 < x <= ceiling:
            return None
        value, slope = with_slope(x)
        if not (value > 0.0 and slope < 0.0):
            return None
        x -= (math.log(value) - math.log(delta)) * value / slope
        if not 0.0 < x <= ceiling:
            return None
        k = math.ceil(math.log(x) / step)
        if math.exp(k * step) > ceiling:
            return None
        if not above(k):
            if above(k - 1):
                return k
        elif not above(k + 1):
            return k + 1
    return None


def newton_root(
    with_slope: Callable[[float], tuple[float, float]], delta: float, lo: float, hi: float, tol: float
) -> float:
    """Root of log D(eps) = log delta in (lo, hi) by Newton steps, kept inside the bracket (bisection otherwise).

    Only locates the root: the caller certifies the grid point next to it.
    """
    x = math.sqrt(lo * hi) if lo > 0.0 else hi / 2.0
    secant = False
    for _ in range(60):
        value, slope = with_slope(x)
        if value > delta:
            lo = x
        else:
            hi = x
        if value > 0.0 and slope < 0.0:
            step = (math.log(value) - math.log(delta)) * value / slope
            new = x - step
            if abs(step) <= tol * x:  # converged, even if the step crosses the bracket's end by a hair
                return new
        else:
            new = math.nan
        secant = new >= hi and value > delta and not secant
        if secant:
            # past the bracket from its lower side: log D may fall off a cliff ahead (D vanishing at
            # eps = log p), so try the secant of D to zero at the upper end (bisection after it, never twice)
            new = hi - (hi - x) * (delta / value)
        if not (lo < new < hi):
            new = math.sqrt(lo * hi) if lo > 0.0 else hi / 2.0
        if abs(new - x) <= tol * x or hi - lo <= tol * hi:
            return new
        x = new
    return hi


def _snap(eps: float, rtol: float, up: bool) -> float:
    """``eps`` snapped to the grid exp(k h), up or down."""
    step = grid_step(rtol)
    k = math.log(eps) / step
    return math.exp((math.ceil(k) if up else math.floor(k)) * step)


class Edge(NamedTuple):
    """The end of `feasible_edge`: ``value`` is feasible; ``above`` is infeasible and at most ``value`` (1 + rtol)
    (``value`` itself when ``value`` is the search's top); ``complete`` is False when the step limit stopped the
    search first (then ``above`` may lie further up)."""

    value: float
    above: float
    steps: int
    complete: bool


def feasible_edge(
    margin: Callable[[float], float],
    lo: float,
    hi: float,
    *,
    rtol: float,
    max_steps: int,
    guess: float | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Edge:
    """A feasible x in [lo, hi] (``margin(x) <= 0``) with an infeasible point within a factor (1 + rtol) above it,
    given that ``lo`` is feasible (not evaluated); ``hi`` if it is feasible.

    Only the sign of ``margin`` decides; its size, where finite, aims the steps, in log x.  First ``guess``
    (default lo (1 + rtol): an edge at ``lo`` then answers in one step), doubling up from it while feasible, up to
    ``hi`` (not evaluated when the guess is infeasible); then, while only the infeasible end has a finite margin, steps
    down from it by 0.97 of the secant step through its last two margins (0.8 of it when they lie over 20% apart, of
    a step of slope 2 at first; at most halving); with both ends finite by the Illinois variant of the secant (the
    end kept twice in a row has its margin halved); bisection otherwise, and when the bracket did not halve in three
    steps.  The root estimates are approached from the infeasible side, a quarter rtol above them, until the
    infeasible end is within half an rtol of one; then one point a factor (1 + rtol) below that end closes the
    bracket: few feasible points are checked, which matters where they cost more (a full certificate).
    No monotonicity is assumed: the result is an edge of the feasible set (the only one when the feasible set is an
    interval).  ``progress(steps, max_steps)`` after every evaluation; at ``max_steps`` the search stops with its
    feasible end (``complete`` False).

    Examples
    --------
    >>> edge = feasible_edge(lambda x: x * x - 2.0, 1.0, 100.0, rtol=1e-6, max_steps=60)
    >>> edge.value * edge.value <= 2.0 < edge.above * edge.above, edge.above <= edge.value * (1 + 1e-6), edge.complete
    (True, True, True)
    """
    steps = 0

    def probe(x: float) -> float:
        nonlocal steps
        steps += 1
        value = margin(x)
        if progress is not None:
            progress(steps, max_steps)
        return value

    step, m_lo, m_hi, previous = math.log1p(rtol), -math.inf, math.inf, None  # previous: the infeasible end before
    x = lo * (1.0 + rtol) if guess is None else guess
    x = min(max(x, lo * (1.0 + rtol)), hi)
    while steps < max_steps:  # from the guess: up by doubling while feasible, to hi
        m_x = probe(x)
        if m_x > 0.0:
            hi, m_hi = x, m_x
            break
        lo, m_lo = x, m_x
        if x >= hi:
            return Edge(hi, hi, steps, True)
        x = min(2.0 * x, hi)
    last, widths = 0, [math.inf] * 3  # the end that moved last; bracket widths at the start of each step
    g_lo, g_hi = m_lo, m_hi
    while hi > lo * (1.0 + rtol):
        if steps >= max_steps:
            return Edge(lo, hi, steps, False)
        a, b = math.log(lo), math.log(hi)
        root = math.nan  # an estimate of the edge (log), if the margins give one
        if math.isfinite(g_lo) and math.isfinite(g_hi) and widths[-3] > 2.0 * (b - a):
            root = a + (b - a) * -g_lo / (g_hi - g_lo)
        elif math.isinf(g_lo) and math.isfinite(m_hi):
            slope, short = 2.0, 0.8  # a guessed slope, or one from far apart: stop well short of its root
            if previous is not None and math.isfinite(previous[1]) and previous[1] > m_hi:
                span = math.log(previous[0] / hi)
                slope, short = (previous[1] - m_hi) / span, 0.8 if span > 0.2 else 0.97
            root = max(b - short * m_hi / slope, b + math.log(0.5))
        if math.isnan(root):
            x = math.exp(0.5 * (a + b))
        elif b - root > 0.5 * step:  # closing in from the infeasible side, a quarter step above the estimate
            x = math.exp(min(max(root + 0.25 * step, a + 0.25 * step), b - 0.25 * step))
        else:  # the infeasible end is near the estimate: the point a factor (1 + rtol) below it closes the bracket
            x = hi / (1.0 + rtol)
            while x * (1.0 + rtol) < hi:
                x = math.nextafter(x, math.inf)
        m_x = probe(x)
        if m_x <= 0.0:
            lo, m_lo, g_lo = x, m_x, m_x
            g_hi *= 0.5 if last == 1 else 1.0
            last = 1
        else:
            previous, hi, m_hi, g_hi = (hi, m_hi), x, m_x, m_x
            g_lo *= 0.5 if last == -1 else 1.0
            last = -1
        widths.append(b - a)
    return Edge(lo, hi, steps, True)


__all__ = ["Edge", "bracket_root", "feasible_edge", "largest_within", "newton_root", "solve_epsilon"]
