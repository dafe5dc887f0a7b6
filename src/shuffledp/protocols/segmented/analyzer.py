"""The analyzer of Algorithm 2 (lines 19-22): unbiased item frequencies from shuffled messages."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from shuffledp._util.validation import check_positive_int
from shuffledp.accounting.segmented import check_blanket_rate
from shuffledp.errors import DomainError, PrivacyLevelError, ShapeError
from shuffledp.protocols.segmented._checks import check_lambdas


def estimate_frequencies(
    messages: np.ndarray, d: int, level_counts: Sequence[float], lambdas: Sequence[float], n_users: int, m: float
) -> np.ndarray:
    """W_j = (C_j - n m / d) / sum_k n_k lambda_k (line 21).

    Unbiased for the lambda-weighted item frequency sum_i lambda_(k_i) [T_j in x_i] / sum_k n_k
    lambda_k when the counts n_k are exact -- hence for the item distribution w when sets are
    drawn independently of levels; with DP-noised counts the denominator is an unbiased
    estimate and W is the ratio estimator (bias of order Var(n_hat) / n^2).

    Parameters
    ----------
    messages : numpy.ndarray
        The shuffled messages: a 1-d integer array of item ids in {0..d-1}, input-dependent
        and blanket alike (possibly empty).
    d : int, >= 2
        Number of items.
    level_counts : sequence of float
        The counts n_k of users per level (exact or DP estimates: finite, possibly negative
        or fractional), one per level.
    lambdas : sequence of float, each in (0, 1]
        The sampling rate lambda_k of each level.
    n_users : int, >= 1
        Number of users sending blankets.
    m : float, in (0, M_MAX]
        Expected blanket messages per user.

    Returns
    -------
    numpy.ndarray
        Length-d float64 estimate W (entries may be negative).

    Raises
    ------
    ShapeError
        If ``messages`` is not a 1-d integer array, or ``lambdas`` is malformed.
    DomainError
        If a message is not an item id in [0, d - 1].
    PrivacyLevelError
        If ``level_counts`` are not finite numbers, one per level, or the denominator
        sum_k n_k lambda_k is not > 0.
    PrivacyParameterError
        For ``d``, ``lambdas``, ``n_users`` or ``m`` out of range.

    References
    ----------
    segmented-multimessage-shuffle.txt §5, Algorithm 2 lines 19-22.

    Examples
    --------
    Two users at lambda = 1 hold {0, 1} and {0}; with m = 1 they add two blankets, 0 and 1,
    so C = (3, 2) and W = (C - 2 * 1 / 2) / 2:

    >>> import numpy as np
    >>> estimate_frequencies(np.array([0, 1, 0, 0, 1]), 2, [2], [1.0], 2, 1.0)
    array([1. , 0.5])
    """
    d = check_positive_int(d, "d", minimum=2)
    n_users = check_positive_int(n_users, "n_users")
    m = check_blanket_rate(m)
    rates = check_lambdas(lambdas)
    try:
        counts_k = np.asarray(level_counts, dtype=np.float64)
    except (TypeError, ValueError):
        raise PrivacyLevelError(f"level_counts must be numbers, got {level_counts!r}") from None
    if counts_k.shape != rates.shape:
        raise PrivacyLevelError(
            f"level_counts must give one count per level ({rates.size}, as lambdas), got shape {counts_k.shape}"
        )
    if not np.all(np.isfinite(counts_k)):
        first = int(np.flatnonzero(~np.isfinite(counts_k))[0])
        raise PrivacyLevelError(f"level_counts[{first}] must be a finite number, got {float(counts_k[first])!r}")
    signal = float(np.dot(counts_k, rates))
    if not (math.isfinite(signal) and signal > 0.0):
        raise PrivacyLevelError(
            f"sum_k level_counts[k] * lambdas[k] (the estimator's denominator) must be > 0, got {signal!r} "
            f"for level_counts={counts_k.tolist()}, lambdas={rates.tolist()}"
        )
    msgs = np.asarray(messages)
    if msgs.ndim != 1:
        raise ShapeError(f"messages must be a 1-d array of item ids, got shape {msgs.shape}")
    if msgs.size and not np.issubdtype(msgs.dtype, np.integer):
        raise ShapeError(f"messages must hold integer item ids in [0, {d - 1}], got dtype {msgs.dtype}")
    if msgs.size:
        lo, hi = int(msgs.min()), int(msgs.max())
        if lo < 0 or hi >= d:
            first = int(np.flatnonzero((msgs < 0) | (msgs >= d))[0])
            raise DomainError(f"messages[{first}]={int(msgs[first])} is outside the item domain [0, {d - 1}]")
    counts = np.bincount(msgs.astype(np.int64, copy=False), minlength=d).astype(np.float64)
    return (counts - n_users * m / d) / signal


__all__ = ["estimate_frequencies"]
