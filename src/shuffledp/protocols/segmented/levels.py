"""Step 1 of Algorithms 1-2: the histogram of privacy levels, through a shuffle (segmented paper §4.3).

Users send their level (an index of the menu E) to the shuffler; the server counts the
shuffled levels.  With ``epsilon_p`` the levels are first randomized by k-ary randomized
response whose local epsilon is calibrated so that the *shuffled* histogram is
(epsilon_p, delta_p)-DP (variation-ratio accounting), and the server debiases the counts
(unbiased estimates, possibly negative or fractional).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from shuffledp._util.validation import check_epsilon, check_rng
from shuffledp.errors import PrivacyLevelError


@dataclass(frozen=True)
class LevelHistogram:
    """The server's view of step 1: counts per level (exact or DP estimates) and the number of users."""

    counts: np.ndarray
    n_users: int
    epsilon_p: float | None = None
    delta_p: float | None = None
    local_epsilon: float | None = None  # the k-RR budget behind a DP histogram


def level_indices(user_levels: Any, levels: Sequence[float]) -> np.ndarray:
    """Each user's level as an index of the menu ``levels``; a value not on the menu is a named error."""
    menu = np.asarray(levels, dtype=np.float64)
    chosen = np.asarray(user_levels, dtype=np.float64).reshape(-1)
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
    """The k-RR local epsilon whose shuffled histogram of ``n`` users is (epsilon_p, delta_p)-DP (calibrate)."""
    from shuffledp.accounting.accountants import calibrate
    from shuffledp.accounting.events import ShuffleEvent
    from shuffledp.randomizers.categorical import KRandomizedResponse

    return calibrate(
        lambda e: ShuffleEvent(KRandomizedResponse(e, k).amplification_parameters(), n),
        epsilon_p,
        delta_p,
        bracket=(epsilon_p / 2.0, 50.0),  # shuffling costs at most the local epsilon (log p)
        context=f"for the level histogram of n={n} users over k={k} levels",
    )


def aggregate_levels(
    level_index: np.ndarray,
    k: int,
    *,
    epsilon_p: float | None = None,
    delta_p: float | None = None,
    rng: np.random.Generator | None = None,
) -> LevelHistogram:
    """Shuffle the users' levels (indices in {0..k-1}) and count them; a DP histogram if ``epsilon_p`` is given."""
    rng = check_rng(rng)
    level_index = np.asarray(level_index, dtype=np.int64)
    n = int(level_index.size)
    if epsilon_p is None:
        shuffled = rng.permutation(level_index)
        return LevelHistogram(np.bincount(shuffled, minlength=k).astype(np.float64), n)
    from shuffledp.accounting.bounds import check_delta
    from shuffledp.randomizers.categorical import KRandomizedResponse

    epsilon_p = check_epsilon(epsilon_p, "epsilon_p")
    delta_p = check_delta(delta_p if delta_p is not None else 0.01 / n, "delta_p")
    if k == 1:  # one level: the histogram is n itself, no privacy cost
        return LevelHistogram(np.array([float(n)]), n, epsilon_p, delta_p, math.inf)
    local = level_local_epsilon(n, k, epsilon_p, delta_p)
    krr = KRandomizedResponse(local, k)
    reports = rng.permutation(krr.randomize(level_index, rng))
    observed = np.bincount(reports, minlength=k).astype(np.float64)
    counts = (observed - n * krr.p_other) / (krr.p_true - krr.p_other)
    return LevelHistogram(counts, n, epsilon_p, delta_p, local)


__all__ = ["LevelHistogram", "aggregate_levels", "level_indices", "level_local_epsilon"]
