"""Exhaustive certified search for Geo-Shuffle and SGDL-Shuffle: the exact worst case over every pair of datasets,
on the real clamped per-user laws, wherever the number of pairs allows it.

What the analyst sees is sum_i clip(x_i + N_i + c, 0, K), K = k + 2c (Proposition 1; Eq. 3 / Eq. 6).  Its law
depends on the dataset through the multiset of values only, and is the convolution of the n clamped per-user laws
L_x (x in 0..k).  Definition 4 compares datasets X, X' at Manhattan distance d(X, X') = sum_i |x_i - x'_i|; over
orderings of two multisets the smallest distance is the sorted matching (1-D transport), so the exact uniform
epsilon is

    max over ordered pairs of distinct multisets (A, B) of  eps(A, B) = min{eps : D_{e^(eps d(A, B))}(P_A || P_B) <= delta},

with every outcome set (not only thresholds: the clamped laws are not log-concave, so no likelihood-ratio order is
assumed).  The same enumeration gives the per-distance guarantee: the largest eps(A, B) over pairs with
d(A, B) <= d, for every d.

Numerics: per-user laws in closed form (Geo: the discrete Laplace tails are geometric series) or from the SGDL pmf
summed over [-T, T] with the NB tail beyond T bounded; every per-user law is a sub-probability vector (a mass
that could not be computed is missing, never added), so each computed P_B is pointwise at most the true one; the
numerator's missing mass is charged to delta; numerators inflated and denominators deflated by 1e-9 relative
(convolutions of positive terms round far below that).  The exact epsilon is the root of a piecewise-exponential
function, found per pair by sorting the outcomes by their loss (as `shift_epsilons` does).
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
from scipy import stats

from shuffledp.accounting.metric._common import PMF_SLACK, exp_scaled, shift_bounds
from shuffledp.accounting.metric.sgdl import log_sgdl_pmf

#: Most pair-outcome cells of the exhaustive search (pairs x support): up to 10 s at the limit when every pair was
#: solved, about 1.5 s with the skip test of `exhaustive_profile`, 0.1-0.4 s with its finer windows (`_WINDOW_TAIL`)
#: and the mirror sums (`sum_laws`) (the limit is unchanged, so are the values).
MAX_EXHAUSTIVE_CELLS = 1.2e8


#: Charge per outcome of a released sum's law for the rounding of its total mass (its missing mass is charged to
#: delta, `_pair_setup`): delta at or below it times the number of outcomes leaves no budget to any pair.
_SUM_ROUNDING = 1e-15


def exhaustive_applies(n: int, k: int, c: int, delta: float) -> bool:
    """Whether the certificates use the exhaustive search: within `MAX_EXHAUSTIVE_CELLS`, and delta above the rounding
    charge on the released sum's mass, 1e-15 (n (k + 2c) + 1) (below it no pair meets delta: delta = 1e-100 made every
    certificate solve every pair for nothing; the shift analysis, in log space, certifies there)."""
    return exhaustive_cells(n, k, c) <= MAX_EXHAUSTIVE_CELLS and delta > _SUM_ROUNDING * (n * (k + 2 * c) + 1)


def multiset_count(n: int, k: int) -> int:
    """The number of multisets of n values in 0..k: C(n + k, k)."""
    return math.comb(n + k, k)


def exhaustive_cells(n: int, k: int, c: int) -> float:
    """Pairs x outcomes of the exhaustive search (ordered pairs of distinct multisets x (n (k + 2c) + 1))."""
    if n + k > 1_000:  # C(n + k, k) >= n + k choose 1; avoid huge integers: far beyond any limit
        return math.inf
    m = float(multiset_count(n, k))
    return m * (m - 1.0) * (n * (k + 2 * c) + 1.0)


def geo_user_laws(eps_geo: float, k: int, c: int) -> np.ndarray:
    """(k + 1, K + 1): row x is the law of clip(x + N + c, 0, K), N ~ G(0, eps_geo), K = k + 2c (closed form)."""
    big = k + 2 * c
    a = math.exp(-eps_geo)
    y = np.arange(big + 1)
    x = np.arange(k + 1)[:, None]
    t = np.abs(y[None, :] - x - c).astype(np.float64)
    laws = math.tanh(eps_geo / 2.0) * np.exp(-eps_geo * t)  # (1 - a)/(1 + a) a^|t|
    laws[:, 0] = np.exp(-eps_geo * (x[:, 0] + c)) / (1.0 + a)  # Pr[N <= -(x + c)]
    laws[:, big] = np.exp(-eps_geo * (big - x[:, 0] - c)) / (1.0 + a)  # Pr[N >= K - x - c]
    return laws


def sgdl_user_laws(epsilon: float, n: int, k: int, c: int) -> np.ndarray:
    """(k + 1, K + 1): row x is (a sub-probability lower bound of) the law of clip(x + N + c, 0, K),
    N ~ SGDL(1/n, e^-eps): the pmf summed over |t| <= T, the mass beyond T (at most 2 Pr[NB(1/n, 1 - e^-eps) > T],
    below 1e-40) left out."""
    big = k + 2 * c
    success = -math.expm1(-epsilon)
    far = max(big + c + 1, 64)
    nb = stats.nbinom(1.0 / n, success)
    while 2.0 * float(nb.sf(far)) > 1e-40 and far < 50_000_000:
        far *= 2
    t = np.arange(-far, far + 1)
    pmf = np.exp(log_sgdl_pmf(t, 1.0 / n, math.exp(-epsilon))) * (1.0 - PMF_SLACK)
    laws = np.empty((k + 1, big + 1))
    for x in range(k + 1):
        laws[x] = np.bincount(np.clip(t + x + c, 0, big), weights=pmf, minlength=big + 1)
    return laws


def multisets(n: int, k: int) -> np.ndarray:
    """Every multiset of n values in 0..k, sorted rows, shape (C(n + k, k), n)."""
    return np.array(list(itertools.combinations_with_replacement(range(k + 1), n)), dtype=np.int64)


#: Largest relative asymmetry of the per-user laws (row k - x against row x reversed) at which `sum_laws` takes a
#: multiset's law as its mirror's reversed: n laws deviate by at most n 1e-14 <= 1e-11 (n + k <= 1000 on this path),
#: far inside `PMF_SLACK` (the bounds' relative slack for the convolutions' rounding).
_MIRROR_SUM_RTOL = 1e-14


def sum_laws(laws: np.ndarray, sets: np.ndarray) -> np.ndarray:
    """The released sum's law (sub-probability) for every multiset: the convolution of its per-user laws, built
    value by value along the lexicographic order (one convolution per new element).  When the per-user laws are
    symmetric (`_MIRROR_SUM_RTOL`), the law of k - A is that of A reversed: only the first of each mirror pair is
    convolved (for k = 1 the multisets with at most n/2 ones: a quarter of the convolutions)."""
    n = sets.shape[1]
    size = n * (laws.shape[1] - 1) + 1
    out = np.zeros((sets.shape[0], size))
    mirror = _mirror_rows(laws, sets, _MIRROR_SUM_RTOL)
    cache: dict[tuple[int, ...], np.ndarray] = {(): np.array([1.0])}
    for row, values in enumerate(sets):
        if mirror is not None and mirror[row] < row:
            continue
        key: tuple[int, ...] = ()
        for v in values:
            parent = key
            key = (*key, int(v))
            if key not in cache:
                cache[key] = np.convolve(cache[parent], laws[v])
        out[row, : cache[key].size] = cache[key]
    if mirror is not None:
        later = np.flatnonzero(mirror < np.arange(sets.shape[0]))
        out[later] = out[mirror[later], ::-1]
    return out


def pair_epsilons(num: np.ndarray, den: np.ndarray, distance: np.ndarray, budget: np.ndarray) -> np.ndarray:
    """Row-wise smallest eps >= 0 with sum_y max(0, num(y) - e^(eps d) den(y)) <= budget (+inf if none)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        loss = np.log(num) - np.log(den)
    loss = np.where(num > 0.0, loss, -np.inf)
    order = np.argsort(-loss, axis=1)
    loss = np.take_along_axis(loss, order, axis=1)
    a = np.cumsum(np.take_along_axis(num, order, axis=1), axis=1)
    b = np.cumsum(np.take_along_axis(den, order, axis=1), axis=1)
    below = np.concatenate([loss[:, 1:], np.full((loss.shape[0], 1), -np.inf)], axis=1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        root = np.where(a > budget[:, None], np.log((a - budget[:, None]) / b), -np.inf)
    root = np.where(np.isnan(root), np.inf, root)
    candidate = np.where(root <= loss, np.maximum(root, below), np.inf)
    exponent = np.maximum(np.minimum(candidate.min(axis=1), loss[:, 0]), 0.0)
    return exponent / distance


def pair_divergences(num: np.ndarray, den: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """Row-wise sum_y max(0, num(y) - e^exponent den(y)): the hockey-stick divergence of each pair at one exponent
    (no sort: the feasibility check that lets `exhaustive_profile` skip pairs).  Where e^exponent overflows, the
    products come from logs (`exp_scaled`): an overflow taken as an infinite product would drop a positive term
    and let a pair be skipped that raises the profile."""
    return np.maximum(num - exp_scaled(exponent, den), 0.0).sum(axis=1)


#: Relative margin of the skip test of `exhaustive_profile`: a pair is skipped only if it meets delta at
#: (1 - margin) times the level with (1 - margin) times its budget, far beyond the rounding of either sum.
_SKIP_MARGIN = 1e-9
#: Mass (times delta) the skip test's windows may leave out of a numerator's law (`_windows`); it is added to the
#: windowed divergence, so it must sit well below the margin between a pair and the level.  Pairs at one distance
#: often need nearly one epsilon (k = 1: the clamped laws are shifts of each other but for masses below delta / n,
#: so the needs differ by ~1e-5 relative); at 1e-4 delta the check failed for most of them (n = 100, k = 1: 4500 of
#: 5000 pairs solved, 2.6 s), at 1e-10 delta it settles all but the extreme pairs (0.4 s) for a window a few
#: standard deviations wider.
_WINDOW_TAIL = 1e-10


def _windows(upper: np.ndarray, tail: float) -> tuple[np.ndarray, int, np.ndarray]:
    """One window per row of ``upper``, all of one width, leaving at most about ``tail`` of the row's mass outside:
    (first outcome of each window, the width, the mass outside each window, rounded up).  The skip test sums a
    pair's divergence over the numerator's window and adds that mass: never below the full sum."""
    size = upper.shape[1]
    below = np.cumsum(upper, axis=1)
    above = np.cumsum(upper[:, ::-1], axis=1)[:, ::-1]
    first = np.argmax(below > 0.5 * tail, axis=1)
    last = size - 1 - np.argmax(above[:, ::-1] > 0.5 * tail, axis=1)
    width = int(np.max(last - first)) + 1
    first = np.minimum(first, size - width)
    y = np.arange(size)[None, :]
    out = (y < first[:, None]) | (y >= first[:, None] + width)
    return first, width, np.where(out, upper, 0.0).sum(axis=1) * (1.0 + 1e-9)


def _mirror_rows(laws: np.ndarray, sets: np.ndarray, rtol: float = 1e-12) -> np.ndarray | None:
    """Row of the multiset k - A for every row A of ``sets``, if the per-user laws are symmetric (row k - x equal to
    row x reversed, to a relative ``rtol``); else None."""
    if not np.allclose(laws[::-1, ::-1], laws, rtol=rtol, atol=0.0):
        return None
    k = laws.shape[0] - 1
    where = {tuple(row): index for index, row in enumerate(sets.tolist())}
    return np.array([where[tuple(sorted(k - v for v in row))] for row in sets.tolist()], dtype=np.int64)


def _pair_setup(laws: np.ndarray, n: int):
    """What every pair check works on: (multisets, upper and lower bounds of their released sums' laws (the rule of
    the shift checks: `shift_bounds`), each law's missing mass (charged to delta, rounded up), the sorted distances
    of every ordered pair, the seed pairs, the other pairs (both masks exclude the diagonal)).

    The seeds are the pairs with an extreme multiset (all lowest or all highest) on either side, the worst pair of
    every distance in every setting enumerated: they set the levels that let the other pairs be skipped, and they
    are where a failing check fails first."""
    sets = multisets(n, laws.shape[0] - 1)
    law = sum_laws(laws, sets)
    missing = np.maximum(1.0 - law.sum(axis=1), 0.0) * (1.0 + 1e-6) + _SUM_ROUNDING * law.shape[1]
    upper, lower = shift_bounds(law)
    count = sets.shape[0]
    rows = max(1, int(4e6 // law.shape[1]))
    distances = np.empty((count, count), dtype=np.int64)
    for start in range(0, count, max(1, rows // count)):
        block = sets[start : start + max(1, rows // count)]
        distances[start : start + block.shape[0]] = np.abs(block[:, None, :] - sets[None, :, :]).sum(axis=2)
    seed = np.zeros((count, count), dtype=bool)
    seed[[0, -1], :] = seed[:, [0, -1]] = True
    np.fill_diagonal(seed, False)
    rest = ~seed
    np.fill_diagonal(rest, False)
    return sets, upper, lower, missing, distances, seed, rest


def exhaustive_meets(laws: np.ndarray, n: int, delta: float, epsilon: float) -> bool:
    """Whether every ordered pair of distinct multisets meets delta at ``epsilon``: sum_y max(0, P_A(y) -
    e^(eps d(A, B)) P_B(y)) <= delta less A's missing mass, checked at (1 - `_SKIP_MARGIN`) times ``epsilon`` with
    (1 - `_SKIP_MARGIN`) times the budget (the skip test's rule), so that True means ``exhaustive_profile``'s maximum
    is at most ``epsilon`` (up to its 1e-12 rounding up).  One divergence per pair at one exponent (no sort, no root):
    the feasibility check of an inverse, far cheaper than the profile; the seed pairs first (a failure shows there
    first), stopping at the first block that fails."""
    sets, upper, lower, missing, distances, seed, rest = _pair_setup(laws, n)
    if not (delta - missing).min() > 0.0:
        return False
    rows = max(1, int(4e6 // upper.shape[1]))
    scale = epsilon * (1.0 - _SKIP_MARGIN)
    for mask in (seed, rest):
        pair_i, pair_j = np.nonzero(mask)
        for start in range(0, pair_i.size, rows):
            i, j = pair_i[start : start + rows], pair_j[start : start + rows]
            divergence = pair_divergences(upper[i], lower[j], scale * distances[i, j])
            if not (divergence <= (delta - missing[i]) * (1.0 - _SKIP_MARGIN)).all():
                return False
    return True


def exhaustive_profile(laws: np.ndarray, n: int, delta: float) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """eps_by_distance[d - 1] = the largest eps(A, B) over ordered pairs at sorted distance exactly d (d = 1..n k),
    and the pair (A, B) attaining the overall maximum (the first in row-major pair order on a tie).  Every
    rounding errs upward.

    The pairs with an extreme multiset are solved first; every other pair is solved only if it fails the
    feasibility check at the level already reached at its distance (`pair_divergences`, with `_SKIP_MARGIN`):
    a pair that passes cannot raise that level, so the profile is the one of solving every pair.  Each pair is
    solved over its numerator's window of `_WINDOW_TAIL` delta, the mass outside charged to its budget in full (an
    upper bound of the full solve, ~1e-12 above it; n = 100, k = 1: 0.10 s -> 0.04 s).  When the
    per-user laws are symmetric (row k - x is row x reversed, as for Geo- and SGDL-Shuffle's symmetric noises), the
    pair (k - A, k - B) has the laws of (A, B) reversed, hence the same epsilon up to rounding far below the
    margin: only one pair of each mirror pair is checked, and both are solved when it fails."""
    k = laws.shape[0] - 1
    sets, upper, lower, missing, distances, seed, rest = _pair_setup(laws, n)
    count = sets.shape[0]
    best = np.zeros(n * k)
    top, top_index = -1.0, -1
    rows = max(1, int(4e6 // upper.shape[1]))
    mirror = _mirror_rows(laws, sets)
    if mirror is not None:  # check one pair of each mirror pair (the one first in row-major order)
        rows_i, rows_j = np.nonzero(rest)
        rest[rows_i, rows_j] = rows_i * count + rows_j <= mirror[rows_i] * count + mirror[rows_j]
    lo, width, outside = _windows(upper, _WINDOW_TAIL * delta)
    upper_win = np.take_along_axis(upper, lo[:, None] + np.arange(width)[None, :], axis=1)
    lower_win = np.lib.stride_tricks.sliding_window_view(lower, width, axis=1)  # [j, start] = lower[j, start:+width]

    def solve(i: np.ndarray, j: np.ndarray, check: bool) -> None:
        nonlocal top, top_index
        distance = distances[i, j]
        budget = delta - missing[i]
        if check:
            level = best[distance - 1] * distance * (1.0 - _SKIP_MARGIN)
            divergence = pair_divergences(upper_win[i], lower_win[j, lo[i]], level) + outside[i]
            hard = ~((budget > 0.0) & (divergence <= budget * (1.0 - _SKIP_MARGIN)))
            i, j = i[hard], j[hard]
            if i.size == 0:
                return
            if mirror is not None:  # the mirror of a pair that fails is solved too
                index = np.unique(np.concatenate([i * count + j, mirror[i] * count + mirror[j]]))
                i, j = index // count, index % count
            distance, budget = distances[i, j], delta - missing[i]
        eps = pair_epsilons(upper_win[i], lower_win[j, lo[i]], distance.astype(np.float64), budget - outside[i])
        eps = np.where(budget > 0.0, eps, np.inf)
        np.maximum.at(best, distance - 1, eps)
        tied = np.flatnonzero(eps == eps.max())
        where = int(tied[np.argmin(i[tied] * count + j[tied])])  # the first of a tie in row-major order
        index = int(i[where]) * count + int(j[where])
        if eps[where] > top or (eps[where] == top and index < top_index):
            top, top_index = float(eps[where]), index

    for mask, check in ((seed, False), (rest, True)):
        pair_i, pair_j = np.nonzero(mask)
        for start in range(0, pair_i.size, rows):
            solve(pair_i[start : start + rows], pair_j[start : start + rows], check)
    return best * (1.0 + 1e-12), (sets[top_index // count], sets[top_index % count])


@functools.lru_cache(maxsize=64)
def cached_profile(
    kind: str, epsilon: float, delta: float, n: int, k: int, c: int
) -> tuple[np.ndarray, tuple[tuple[int, ...], tuple[int, ...]]]:
    """`exhaustive_profile` of Geo-Shuffle (``kind="geo"``, epsilon = eps_geo) or SGDL-Shuffle (``kind="sgdl"``),
    cached; the profile is read-only."""
    laws = geo_user_laws(epsilon, k, c) if kind == "geo" else sgdl_user_laws(epsilon, n, k, c)
    profile, (a, b) = exhaustive_profile(laws, n, delta)
    profile.flags.writeable = False
    return profile, (tuple(int(v) for v in a), tuple(int(v) for v in b))


def running_max(values: np.ndarray) -> np.ndarray:
    """max over distances <= d, for every d."""
    return np.maximum.accumulate(values)


def exact_reason(worst_a, worst_b) -> str:
    """The certificate's reason for an exhaustive result, naming the worst pair of datasets: as lists up to 8
    values, beyond as value x count runs (n = 100 printed 200 values)."""

    def text(values) -> str:
        values = [int(v) for v in values]
        if len(values) <= 8:
            return str(values)
        runs = [(v, sum(1 for _ in group)) for v, group in itertools.groupby(values)]
        return "[" + ", ".join(f"{v} x{count}" for v, count in runs) + "]"

    return f"exact: every pair of datasets enumerated on the clamped laws (worst {text(worst_a)} vs {text(worst_b)})"


__all__ = [
    "MAX_EXHAUSTIVE_CELLS",
    "PMF_SLACK",
    "cached_profile",
    "exact_reason",
    "exhaustive_applies",
    "exhaustive_cells",
    "exhaustive_meets",
    "exhaustive_profile",
    "geo_user_laws",
    "multiset_count",
    "multisets",
    "pair_divergences",
    "pair_epsilons",
    "running_max",
    "sgdl_user_laws",
    "sum_laws",
]
