"""Step 2 of Algorithm 2: the blanket rate m and the sampling rates lambda_k (segmented paper §5.2).

* m fixed: each lambda_k is the largest rate in (0, 1] whose user event (Theorem 3) costs at
  most E_k at delta (Eq. 6-7), found by `calibrate`.
* m free: m_k is the least m at which lambda_k = 1 meets level k; the MSE bound (§5.2)
  is minimised over m between the smallest and the largest m_k (the paper writes
  (m_1, m_K]; with E increasing, m_1 is the largest, so the interval is [m_K, m_1]).
  Below every m_k all lambda_k grow with m and the bound falls; above every m_k all
  lambda_k = 1 and it grows, so the optimum lies in between.  The search ranks candidate
  m by Eq. 7 checked directly (one divergence per trial lambda, see
  `_approximate_rate`); the returned lambdas come from ``calibrate`` at the chosen m.

Eq. 7 checks and the m_k are memoised (pure functions of their arguments; `clear_caches`
empties the memos).  Profiled at K = 3, n = 50,000, d = 128, s = 4 (about 1.3 s): about 630 Eq. 7
checks, of which only about 20 repeat; the time is the engine's hockey-stick evaluation of
each distinct (lambda, m), not repeated work here.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import optimize

from shuffledp._util.validation import check_epsilon, check_positive_int
from shuffledp.accounting.accountants import VariationRatioAccountant, calibrate
from shuffledp.accounting.bounds import check_delta
from shuffledp.accounting.segmented import M_MAX, check_blanket_rate, level_constraint_met, user_epsilon, user_event
from shuffledp.errors import PrivacyLevelError, PrivacyParameterError
from shuffledp.protocols.segmented._checks import LEVEL_RANGE, check_lambdas, check_level_counts, check_levels

#: Smallest m the free search considers.
M_MIN = 1e-3
#: Smallest lambda calibrate may return (below it a level is practically silent).
LAMBDA_MIN = 1e-9
#: Relative precision of the rates used to rank candidate m.
_RANK_RTOL = 1e-4
#: Log-spaced grid points of the free search before the local refinement.
_GRID = 9
#: Entries kept by each memo of the search (pure functions of their arguments: results do not change).
_CACHE_SIZE = 16384


@dataclass(frozen=True)
class SegmentedParameters:
    """The optimizer's answer: m, one lambda per level, and what they cost.

    Parameters
    ----------
    levels : tuple of float
        The menu E_1 < ... < E_K.
    level_counts : tuple of float
        The counts n_k the optimizer used.
    n_users : int
        Number of users sending blankets (the accounted population).
    d : int
        Number of items.
    s : int
        Items per user.
    delta : float
        Target delta of every level.
    m : float
        Expected blanket messages per user.
    lambdas : tuple of float
        Sampling rate lambda_k of each level, in (0, 1].
    epsilons : tuple of float
        Each level's user epsilon at ``delta`` (Theorem 3), at most its level.
    mse_bound : float
        §5.2's bound on sum_j E|w_j - W_j|^2 at these parameters.
    m_range : (float, float) or None
        The free search's interval [min m_k, max m_k]; None when m was given.

    Examples
    --------
    >>> p = optimize_parameters([0.5, 1.0], 1e-3, [50, 50], 8, 1, m=1.0)
    >>> sorted(p.to_dict())[:3]
    ['d', 'delta', 'epsilons']
    """

    levels: tuple[float, ...]
    level_counts: tuple[float, ...]
    n_users: int
    d: int
    s: int
    delta: float
    m: float
    lambdas: tuple[float, ...]
    epsilons: tuple[float, ...]  # each level's user epsilon at delta (Theorem 3), <= its level
    mse_bound: float
    m_range: tuple[float, float] | None  # the free search's [min m_k, max m_k]; None when m was given

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (`dataclasses.asdict`), for ledgers and result files."""
        return asdict(self)


def mse_bound(m: float, lambdas: Sequence[float], level_counts: Sequence[float], n_users: int, s: int) -> float:
    """§5.2: sum_j E|w_j - W_j|^2 <= (n m + s sum_k n_k lambda_k) / (sum_k n_k lambda_k)^2.

    Parameters
    ----------
    m : float, in (0, M_MAX]
        Expected blanket messages per user.
    lambdas : sequence of float, each in (0, 1]
        Sampling rate lambda_k of each level.
    level_counts : sequence of float
        The count n_k (> 0) of each level, one per rate.
    n_users : int, >= 1
        Number of users n sending blankets.
    s : int, >= 1
        Items per user.

    Returns
    -------
    float
        The bound on the summed mean squared error of W.

    Raises
    ------
    PrivacyParameterError
        For ``m``, a rate, ``n_users`` or ``s`` out of range.
    PrivacyLevelError
        For counts that are not > 0 or not one per rate.
    ShapeError
        If ``lambdas`` is not a non-empty 1-d array.

    References
    ----------
    segmented-multimessage-shuffle.txt §5.2 (the MSE bound minimised by the optimizer).

    Examples
    --------
    n = 100, m = 2, s = 1, sum_k n_k lambda_k = 50 * 1 + 50 * 0.5 = 75: (200 + 75) / 75^2.

    >>> round(mse_bound(2.0, [1.0, 0.5], [50, 50], 100, 1), 10) == round(275 / 75**2, 10)
    True
    """
    m = check_blanket_rate(m)
    rates = check_lambdas(lambdas)
    counts = check_level_counts(level_counts, rates.size)
    n_users = check_positive_int(n_users, "n_users")
    s = check_positive_int(s, "s")
    return _mse_bound(m, rates, counts, n_users, s)


def _mse_bound(m: float, lambdas: Sequence[float], level_counts: Sequence[float], n_users: int, s: int) -> float:
    """`mse_bound` without the checks (the search calls it with rates that may be 0)."""
    signal = float(np.dot(level_counts, lambdas))
    return (n_users * m + s * signal) / signal**2


def max_sampling_rate(level: float, delta: float, d: int, n_users: int, m: float, s: int) -> float:
    """Eq. 6-7: the largest lambda in (0, 1] whose user event costs at most ``level`` at ``delta``.

    Through `calibrate`, started from a bracket found by checking Eq. 7 directly.

    Parameters
    ----------
    level : float, > 0
        The level's privacy budget E_k.
    delta : float, in (0, 1)
        Target delta.
    d : int, >= 2
        Number of items.
    n_users : int, >= 1
        Number of users.
    m : float, in (0, M_MAX]
        Expected blanket messages per user.
    s : int, in [1, d]
        Items per user.

    Returns
    -------
    float
        lambda_k in [LAMBDA_MIN, 1].

    Raises
    ------
    PrivacyParameterError
        If an argument is out of range, or no lambda >= LAMBDA_MIN meets the level (with an
        integer m the message count is public and reveals whether the victim sent one, so a
        small delta may need a lambda below LAMBDA_MIN: `shuffledp.accounting.segmented`,
        "Which pair").

    References
    ----------
    segmented-multimessage-shuffle.txt §5.2, Eq. 6-7.

    Examples
    --------
    The rate meets the level, and 1% more would not:

    >>> from shuffledp.accounting.segmented import user_epsilon
    >>> lam = max_sampling_rate(0.5, 1e-3, 8, 100, 1.0, 1)
    >>> eps = user_epsilon(lam, 8, 100, 1.0, 1, 1e-3)
    >>> 0 < lam < 1, 0.4999 < eps <= 0.5, user_epsilon(1.01 * lam, 8, 100, 1.0, 1, 1e-3) > 0.5
    (True, True, True)
    """
    level, delta, d, n_users, s = _check_setting(level, delta, d, n_users, s)
    m = check_blanket_rate(m)
    guess = _approximate_rate(level, delta, d, n_users, m, s, rtol=1e-6)

    def make(lam: float):
        return user_event(lam, d, n_users, m, s)

    context = f"for level {level:g} with m={m:g}, n_users={n_users}, d={d}, s={s}, delta={delta:g}"
    if guess < 1.0:
        # Eq. 7 holds up to a relative 1e-6 above the guess; calibrate's epsilon is rounded up
        # (relative 1e-7), which moves its answer slightly below: bracket around the guess
        hi = min(1.0, guess * (1 + 1e-4))
        try:
            found = calibrate(make, level, delta, bracket=(guess * (1 - 1e-4), hi), context=context)
            if found < hi or hi == 1.0:  # calibrate returns the upper end when it meets the level: not proven maximal
                return found
        except PrivacyParameterError:
            pass  # the bracket's lower end missed the level: search the whole range
    try:
        return calibrate(make, level, delta, bracket=(LAMBDA_MIN, 1.0), context=context)
    except PrivacyParameterError:
        public = " (an integer m makes the message count public: a non-integer m hides it)" if m == math.ceil(m) else ""
        raise PrivacyParameterError(
            f"no sampling rate lambda in [{LAMBDA_MIN:g}, 1] meets level {level:g} (m={m:g}, n_users={n_users}, d={d}, "
            f"s={s}, delta={delta:g}; more users, more blankets, a larger delta or a larger level would){public}"
        ) from None


def _check_setting(level: float, delta: float, d: int, n_users: int, s: int) -> tuple[float, float, int, int, int]:
    """The arguments every per-level search shares, checked (the level as a finite epsilon > 0)."""
    level = check_epsilon(level, "level")
    delta = check_delta(delta)
    d = check_positive_int(d, "d", minimum=2)
    n_users = check_positive_int(n_users, "n_users")
    s = check_positive_int(s, "s")
    if s > d:
        raise PrivacyParameterError(f"s (items per user) must be at most d={d}, got s={s}")
    return level, delta, d, n_users, s


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _constraint_met(lam: float, level: float, delta: float, d: int, n_users: int, m: float, s: int) -> bool:
    """`level_constraint_met`, memoised: a pure function of its arguments, asked again for identical
    arguments by the search (e.g. the final rtol=1e-6 bisection replays the ranking bisection at the chosen m)."""
    return level_constraint_met(lam, level, delta, d, n_users, m, s)


def clear_caches() -> None:
    """Forget the memoised constraint checks and m_k (e.g. to time the optimizer from a cold start).

    Examples
    --------
    >>> clear_caches()
    """
    _constraint_met.cache_clear()
    _full_rate_blankets.cache_clear()


def _approximate_rate(
    level: float, delta: float, d: int, n_users: int, m: float, s: int, *, rtol: float = _RANK_RTOL
) -> float:
    """Largest lambda meeting Eq. 7 to a relative ``rtol``, by bisection in log lambda (a feasible lower end)."""
    ok = lambda lam: _constraint_met(lam, level, delta, d, n_users, m, s)  # noqa: E731
    if ok(1.0):
        return 1.0
    lo, hi = 0.5, 1.0
    while not ok(lo):
        lo, hi = lo / 8.0, lo
        if lo < LAMBDA_MIN:
            return 0.0
    while hi / lo > 1.0 + rtol:
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


def full_rate_blankets(level: float, delta: float, d: int, n_users: int, s: int) -> float:
    """m_k of §5.2: the least m (to a relative 1e-3) at which lambda = 1 meets ``level``; the largest m if none does.

    Parameters
    ----------
    level : float, > 0
        The level's privacy budget E_k.
    delta : float, in (0, 1)
        Target delta.
    d : int, >= 2
        Number of items.
    n_users : int, >= 1
        Number of users.
    s : int, in [1, d]
        Items per user.

    Returns
    -------
    float
        m_k in [M_MIN, `largest_blanket_rate`] (rounded up, so Eq. 7 holds at it).

    Raises
    ------
    PrivacyParameterError
        If an argument is out of range.

    References
    ----------
    segmented-multimessage-shuffle.txt §5.2 (m_k) and Eq. 7.

    Examples
    --------
    >>> from shuffledp.accounting.segmented import level_constraint_met
    >>> mk = full_rate_blankets(0.5, 1e-3, 8, 100, 1)
    >>> level_constraint_met(1.0, 0.5, 1e-3, 8, 100, mk, 1), level_constraint_met(1.0, 0.5, 1e-3, 8, 100, mk / 1.01, 1)
    (True, False)
    """
    return _full_rate_blankets(*_check_setting(level, delta, d, n_users, s))


def largest_blanket_rate(n_users: int) -> float:
    """M_MAX, or less where n_users ceil(m) blanket slots would pass 2^53 (float64-exact counts).

    Examples
    --------
    >>> largest_blanket_rate(1000), largest_blanket_rate(3 * 10**12)
    (10000.0, 3002.0)
    """
    return float(min(M_MAX, (2**53 - 1) // n_users))


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _full_rate_blankets(level: float, delta: float, d: int, n_users: int, s: int) -> float:
    """`full_rate_blankets` on checked arguments, memoised (the m_k do not depend on the level counts,
    so every setting of an experiment, and balls-into-bins at the same level, share them)."""
    ok = lambda m: _constraint_met(1.0, level, delta, d, n_users, m, s)  # noqa: E731
    top = largest_blanket_rate(n_users)
    if not ok(top):
        return top
    if ok(M_MIN):
        return M_MIN
    lo, hi = M_MIN, top
    while hi / lo > 1.0 + 1e-3:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def optimize_parameters(
    E: Sequence[float],
    delta: float,
    level_counts: Sequence[float],
    d: int,
    s: int,
    m: float | None = None,
    *,
    n_users: int | None = None,
) -> SegmentedParameters:
    """Algorithm 2 line 6: m and lambda_1..lambda_K for the levels ``E`` (§5.2, Eq. 6-7).

    ``level_counts`` are the observed counts n_k (exact, or DP estimates); ``n_users`` is the
    number of users who send blankets.  The privacy of every level is accounted with
    ``n_users``: it defaults to the sum of the counts, which must then be integers (a
    noisy sum could overstate the blankets, so with DP counts pass the true n).

    Parameters
    ----------
    E : sequence of float
        The menu E_1 < ... < E_K (see `check_levels`).
    delta : float, in (0, 1)
        Target delta of every level.
    level_counts : sequence of float
        The count n_k (> 0) of each level.
    d : int, >= 2
        Number of items.
    s : int, in [1, d]
        Items per user.
    m : float or None, in (0, M_MAX]
        Fixed blanket rate; None searches the m minimising `mse_bound`.
    n_users : int or None, >= 1
        Number of users sending blankets; defaults to the sum of integer ``level_counts``.

    Returns
    -------
    SegmentedParameters
        m, the lambdas, each level's epsilon and the MSE bound.

    Raises
    ------
    PrivacyLevelError
        For a malformed menu or counts.
    PrivacyParameterError
        For another argument out of range, non-integer counts without ``n_users``, or a
        level no lambda can meet.

    References
    ----------
    segmented-multimessage-shuffle.txt §5.2, Eq. 6-7; Algorithm 2 line 6.

    Examples
    --------
    >>> p = optimize_parameters([0.5, 1.0], 1e-3, [50, 50], 8, 1, m=1.0)
    >>> p.n_users, all(0 < lam <= 1 for lam in p.lambdas), all(e <= E for e, E in zip(p.epsilons, p.levels))
    (100, True, True)
    >>> p.lambdas[0] < p.lambdas[1]  # the stricter level samples less
    True
    """
    levels = check_levels(E)
    counts = check_level_counts(level_counts, len(levels))
    delta = check_delta(delta)
    d = check_positive_int(d, "d", minimum=2)
    s = check_positive_int(s, "s")
    if s > d:
        raise PrivacyParameterError(f"s (items per user) must be at most d={d}, got s={s}")
    if n_users is None:
        if not all(c.is_integer() for c in counts):
            raise PrivacyParameterError(
                f"level_counts are not integers ({list(counts)}): pass n_users, the number of users"
            )
        n_users = int(sum(counts))
    n_users = check_positive_int(n_users, "n_users")
    if max(counts) > n_users:
        i = counts.index(max(counts))
        raise PrivacyLevelError(
            f"level_counts[{i}]={counts[i]:g} exceeds n_users={n_users}: a level cannot hold more users than there are"
        )
    most = largest_blanket_rate(n_users) if m is None else check_blanket_rate(m)
    if not _constraint_met(LAMBDA_MIN, levels[0], delta, d, n_users, most, s):  # fail fast: nothing below can meet it
        raise PrivacyParameterError(
            f"level {levels[0]:g} cannot be met at delta={delta:g} with n_users={n_users}, d={d}, s={s}: not even "
            f"lambda={LAMBDA_MIN:g} with m={most:g} blankets per user"
            + (" (the most the search may use)" if m is None else "")
            + "; more users, a larger delta or a larger level would"
        )
    m_range = None
    if m is None:
        m, m_range = _search_blanket_rate(levels, counts, delta, d, n_users, s)
    m = check_blanket_rate(m)
    lambdas = tuple(max_sampling_rate(e, delta, d, n_users, m, s) for e in levels)
    accountant = VariationRatioAccountant()
    epsilons = tuple(user_epsilon(lam, d, n_users, m, s, delta, accountant=accountant) for lam in lambdas)
    return SegmentedParameters(
        levels, counts, n_users, d, s, delta, m, lambdas, epsilons, _mse_bound(m, lambdas, counts, n_users, s), m_range
    )


def _search_blanket_rate(
    levels: tuple[float, ...], counts: tuple[float, ...], delta: float, d: int, n_users: int, s: int
) -> tuple[float, tuple[float, float]]:
    """The m in [min m_k, max m_k] minimising the MSE bound (log grid, then bounded Brent in log m)."""
    full = [full_rate_blankets(e, delta, d, n_users, s) for e in levels]
    lo, hi = min(full), max(full)
    if hi / lo <= 1.0 + 1e-9:
        return hi, (lo, hi)

    def objective(log_m: float) -> float:
        m = min(max(math.exp(log_m), lo), hi)
        rates = [_approximate_rate(e, delta, d, n_users, m, s) for e in levels]
        return _mse_bound(m, rates, counts, n_users, s) if any(rates) else math.inf

    grid = np.linspace(math.log(lo), math.log(hi), _GRID)
    values = [objective(x) for x in grid]
    best = int(np.argmin(values))
    a, b = grid[max(best - 1, 0)], grid[min(best + 1, _GRID - 1)]
    found = optimize.minimize_scalar(objective, bounds=(a, b), method="bounded", options={"xatol": 1e-3})
    log_m = float(found.x) if found.fun < values[best] else float(grid[best])
    return min(max(math.exp(log_m), lo), hi), (lo, hi)


__all__ = [
    "LAMBDA_MIN",
    "LEVEL_RANGE",
    "M_MIN",
    "SegmentedParameters",
    "clear_caches",
    "full_rate_blankets",
    "largest_blanket_rate",
    "max_sampling_rate",
    "mse_bound",
    "optimize_parameters",
]
