"""Step 1 of Algorithms 1-2: the histogram of privacy levels, through a shuffle (segmented paper §4.3).

Users send their level (an index of the menu E) to the shuffler; the server counts the
shuffled levels.  With ``epsilon_p`` the levels are first randomized by k-ary randomized
response whose local epsilon is calibrated so that the *shuffled* histogram is
(epsilon_p, delta_p)-DP (variation-ratio accounting), and the server debiases the counts
(unbiased estimates, possibly negative or fractional).  Steps 2-3 need positive counts, so
they use `LevelHistogram.usable_counts`: the DP estimates projected onto {counts >= 1,
sum = n} (`project_counts`), a post-processing of the DP release that costs no privacy.
The paper (§4.3) feeds the noisy counts on without saying what to do with a non-positive
one; exact counts are used as they are.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from shuffledp._util.validation import check_positive_int, check_rng
from shuffledp.accounting.accountants import calibrate
from shuffledp.accounting.bounds import check_delta
from shuffledp.accounting.events import ShuffleEvent
from shuffledp.errors import PrivacyLevelError, PrivacyParameterError, ShapeError
from shuffledp.protocols.segmented._checks import EPSILON_P_MAX, check_epsilon_p, check_level_index, check_levels
from shuffledp.randomizers.categorical import KRandomizedResponse

#: Top of the local-epsilon search of `level_local_epsilon`.
_LOCAL_EPSILON_MAX = 50.0


@dataclass(frozen=True)
class LevelHistogram:
    """The server's view of step 1: counts per level (exact or DP estimates) and the number of users.

    Parameters
    ----------
    counts : numpy.ndarray
        Length-K float64 count of users per level (exact, or unbiased DP estimates that may be
        negative or fractional).
    n_users : int
        Number of users.
    epsilon_p, delta_p : float or None
        The histogram's DP guarantee; None for the exact histogram.
    local_epsilon : float or None
        The k-RR budget behind a DP histogram (inf when K = 1: nothing is randomized).

    Examples
    --------
    >>> import numpy as np
    >>> float(LevelHistogram(np.array([1.0, 2.0]), 3).counts.sum())
    3.0
    """

    counts: np.ndarray
    n_users: int
    epsilon_p: float | None = None
    delta_p: float | None = None
    local_epsilon: float | None = None  # the k-RR budget behind a DP histogram

    @property
    def usable_counts(self) -> np.ndarray:
        """The counts steps 2-3 use: exact counts as they are; DP estimates projected by `project_counts`.

        The projection is post-processing of the (epsilon_p, delta_p)-DP release, so it costs
        no privacy; it makes every level's count >= 1 (the optimizer needs positive counts, and
        a noisy count of a non-empty level can be negative) while keeping the total n.
        """
        if self.epsilon_p is None:
            return self.counts
        return project_counts(self.counts, self.n_users)


def project_counts(counts: Any, n: int) -> np.ndarray:
    """Euclidean projection of ``counts`` onto {x : x_k >= 1 for every k, sum_k x = n}.

    Used on the DP level histogram's unbiased (possibly negative) estimates: post-processing,
    so the histogram's (epsilon_p, delta_p) guarantee is kept.  Counts that already lie in the
    set are returned unchanged (up to rounding of the total).

    Parameters
    ----------
    counts : array_like
        Length-K finite counts (any sign).
    n : int, >= K
        Number of users (the total the projection keeps).

    Returns
    -------
    numpy.ndarray
        Length-K float64 counts, each >= 1, summing to n.

    Raises
    ------
    ShapeError
        If ``counts`` is not a non-empty 1-d array of finite numbers.
    PrivacyLevelError
        If n < K (K levels of at least one user each cannot sum to n).

    Examples
    --------
    >>> project_counts([-10.0, 40.0, 30.0], 60).tolist()
    [1.0, 34.5, 24.5]
    >>> project_counts([20.0, 40.0], 60).tolist()
    [20.0, 40.0]
    """
    n = check_positive_int(n, "n")
    c = np.asarray(counts, dtype=np.float64)
    if c.ndim != 1 or c.size == 0 or not np.all(np.isfinite(c)):
        raise ShapeError(f"counts must be a non-empty 1-d array of finite numbers, got {np.asarray(counts).tolist()!r}")
    k = c.size
    if n < k:
        raise PrivacyLevelError(f"n={n} users cannot give each of the {k} levels at least one user")
    total = float(n - k)  # project y = c - 1 onto the simplex {y >= 0, sum y = total}
    y = c - 1.0
    if total == 0.0:
        return np.ones(k)
    u = np.sort(y)[::-1]
    excess = np.cumsum(u) - total
    rank = np.arange(1, k + 1)
    last = int(np.flatnonzero(u - excess / rank > 0)[-1])
    theta = excess[last] / (last + 1)
    return np.maximum(y - theta, 0.0) + 1.0


def level_indices(user_levels: Any, levels: Sequence[float]) -> np.ndarray:
    """Each user's level as an index of the menu ``levels``; a value not on the menu is a named error.

    Parameters
    ----------
    user_levels : array_like
        One privacy level per user, each a value of ``levels``.
    levels : sequence of float
        The menu E_1 < ... < E_K (increasing, as `check_levels` requires).

    Returns
    -------
    numpy.ndarray
        Each user's index in {0..K-1} (int64).

    Raises
    ------
    PrivacyLevelError
        If ``user_levels`` is empty or holds a value not on the menu (NaN included), or the
        menu is malformed (see `check_levels`).
    ShapeError
        If ``user_levels`` is not one-dimensional or not numeric.

    References
    ----------
    segmented-multimessage-shuffle.txt §4.3 (step 1: users choose a level of the menu).

    Examples
    --------
    >>> level_indices([1.0, 2.0, 1.0], [1.0, 2.0]).tolist()
    [0, 1, 0]
    >>> level_indices([1.5], [1.0, 2.0])
    Traceback (most recent call last):
    ...
    shuffledp.errors.PrivacyLevelError: user_levels[0]=1.5 is not a privacy level on the menu; allowed: [1.0, 2.0]
    """
    menu = np.asarray(check_levels(levels), dtype=np.float64)
    raw = np.asarray(user_levels)
    if raw.ndim != 1:
        raise ShapeError(f"user_levels must be a 1-d array with one level per user, got shape {raw.shape}")
    if raw.size and not (np.issubdtype(raw.dtype, np.integer) or np.issubdtype(raw.dtype, np.floating)):
        raise ShapeError(f"user_levels must hold numeric privacy levels, got dtype {raw.dtype}")
    chosen = raw.astype(np.float64, copy=False)
    if chosen.size == 0:
        raise PrivacyLevelError("user_levels must hold one level per user, got none")
    idx = np.clip(np.searchsorted(menu, chosen), 0, menu.size - 1)
    unknown = menu[idx] != chosen
    if np.any(unknown):
        first = int(np.flatnonzero(unknown)[0])
        raise PrivacyLevelError(
            f"user_levels[{first}]={float(chosen[first])!r} is not a privacy level on the menu; allowed: {menu.tolist()}"
        )
    return idx


@functools.lru_cache(maxsize=64)
def level_local_epsilon(n: int, k: int, epsilon_p: float, delta_p: float) -> float:
    """The k-RR local epsilon whose shuffled histogram of ``n`` users is (epsilon_p, delta_p)-DP (calibrate).

    Parameters
    ----------
    n : int, >= 1
        Number of users.
    k : int, >= 2
        Number of levels (the k-RR domain).
    epsilon_p : float, in (0, EPSILON_P_MAX]
        Target epsilon of the shuffled histogram.
    delta_p : float, in (0, 1)
        Target delta.

    Returns
    -------
    float
        The largest local epsilon (within `calibrate`'s safe-side tolerance) whose shuffled
        k-RR reports meet (epsilon_p, delta_p) under the variation-ratio accountant.

    Raises
    ------
    PrivacyParameterError
        If ``epsilon_p`` is outside (0, `EPSILON_P_MAX`], no local epsilon in
        [epsilon_p / 2, 50] meets the target, or even 50 stays below it (the answer would be
        capped at 50: refused, never capped silently).

    References
    ----------
    segmented-multimessage-shuffle.txt §4.3 (step 1 with a DP level histogram).

    Examples
    --------
    >>> from shuffledp.accounting import ShuffleEvent, VariationRatioAccountant
    >>> from shuffledp.randomizers.categorical import KRandomizedResponse
    >>> local = level_local_epsilon(10_000, 3, 1.0, 1e-6)
    >>> event = ShuffleEvent(KRandomizedResponse(local, 3).amplification_parameters(), 10_000)
    >>> eps = VariationRatioAccountant().compose(event).get_epsilon(1e-6)
    >>> local > 1.0, 0.999 < eps <= 1.0
    (True, True)
    """

    epsilon_p = check_epsilon_p(epsilon_p)
    local = calibrate(
        lambda e: ShuffleEvent(KRandomizedResponse(e, k).amplification_parameters(), n),
        epsilon_p,
        delta_p,
        bracket=(epsilon_p / 2.0, _LOCAL_EPSILON_MAX),  # shuffling costs at most the local epsilon (log p)
        context=f"for the level histogram of n={n} users over k={k} levels",
    )
    if local >= _LOCAL_EPSILON_MAX:  # calibrate returns the top when even it meets the target
        raise PrivacyParameterError(
            f"epsilon_p={epsilon_p!r} is not reached by any local epsilon up to {_LOCAL_EPSILON_MAX:g} for the level "
            f"histogram of n={n} users over k={k} levels; pass a smaller epsilon_p or epsilon_p=None (exact counts)"
        )
    return local


def aggregate_levels(
    level_index: np.ndarray,
    k: int,
    *,
    epsilon_p: float | None = None,
    delta_p: float | None = None,
    rng: np.random.Generator | None = None,
) -> LevelHistogram:
    """Shuffle the users' levels (indices in {0..k-1}) and count them; a DP histogram if ``epsilon_p`` is given.

    With ``epsilon_p`` each level is randomized by k-RR at `level_local_epsilon` and the
    server debiases the shuffled counts: n_hat_j = (c_j - n p_other) / (p_true - p_other).

    Parameters
    ----------
    level_index : array_like
        Each user's level index in {0..k-1} (see `check_level_index`).
    k : int, >= 1
        Number of levels.
    epsilon_p : float or None, in (0, EPSILON_P_MAX]
        Target epsilon of the histogram; None counts the levels exactly.
    delta_p : float or None, in (0, 1)
        Target delta; defaults to 0.01 / n.
    rng : numpy.random.Generator or None
        Source of randomness.

    Returns
    -------
    LevelHistogram
        The counts (exact, or unbiased DP estimates that may be negative) and the guarantee
        behind them; `LevelHistogram.usable_counts` gives the counts steps 2-3 use.

    Raises
    ------
    PrivacyParameterError
        For ``k``, ``epsilon_p`` or ``delta_p`` out of range, or ``delta_p`` without ``epsilon_p``.
    ShapeError, DomainError
        For a malformed ``level_index`` (see `check_level_index`).

    References
    ----------
    segmented-multimessage-shuffle.txt §4.3 (step 1).

    Examples
    --------
    >>> import numpy as np
    >>> levels = np.repeat([0, 1, 2], [2000, 3000, 5000])
    >>> aggregate_levels(levels, 3).counts.tolist()
    [2000.0, 3000.0, 5000.0]
    >>> dp = aggregate_levels(levels, 3, epsilon_p=1.0, delta_p=1e-6, rng=np.random.default_rng(0))
    >>> bool(abs(dp.counts - [2000, 3000, 5000]).max() < 100), round(float(dp.counts.sum()), 6)
    (True, 10000.0)
    """
    rng = check_rng(rng)
    k = check_positive_int(k, "k")
    level_index = check_level_index(level_index, k)
    n = int(level_index.size)
    if epsilon_p is None:
        if delta_p is not None:
            raise PrivacyParameterError(
                f"delta_p={delta_p!r} was given without epsilon_p: pass epsilon_p for a DP histogram, or neither"
            )
        shuffled = rng.permutation(level_index)
        return LevelHistogram(np.bincount(shuffled, minlength=k).astype(np.float64), n)

    epsilon_p = check_epsilon_p(epsilon_p)
    delta_p = check_delta(delta_p if delta_p is not None else 0.01 / n, "delta_p")
    if k == 1:  # one level: the histogram is n itself, no privacy cost
        return LevelHistogram(np.array([float(n)]), n, epsilon_p, delta_p, math.inf)
    local = level_local_epsilon(n, k, epsilon_p, delta_p)
    krr = KRandomizedResponse(local, k)
    reports = rng.permutation(krr.randomize(level_index, rng))
    observed = np.bincount(reports, minlength=k).astype(np.float64)
    counts = (observed - n * krr.p_other) / (krr.p_true - krr.p_other)
    return LevelHistogram(counts, n, epsilon_p, delta_p, local)


__all__ = [
    "EPSILON_P_MAX",
    "LevelHistogram",
    "aggregate_levels",
    "project_counts",
    "level_indices",
    "level_local_epsilon",
]
