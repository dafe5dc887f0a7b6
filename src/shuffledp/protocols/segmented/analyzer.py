"""The analyzer of Algorithm 2 (lines 19-22): unbiased item frequencies from shuffled messages."""

from __future__ import annotations

from typing import Sequence

import numpy as np


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
        The shuffled messages: item ids in {0..d-1}, input-dependent and blanket alike.
    d : int, >= 2
        Number of items.
    level_counts : sequence of float
        The counts n_k of users per level (exact or DP estimates).
    lambdas : sequence of float, each in (0, 1]
        The sampling rate lambda_k of each level.
    n_users : int, >= 1
        Number of users sending blankets.
    m : float, > 0
        Expected blanket messages per user.

    Returns
    -------
    numpy.ndarray
        Length-d float64 estimate W (entries may be negative).

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
    counts = np.bincount(np.asarray(messages, dtype=np.int64), minlength=d).astype(np.float64)
    signal = float(np.dot(np.asarray(level_counts, dtype=np.float64), np.asarray(lambdas, dtype=np.float64)))
    return (counts - n_users * m / d) / signal


__all__ = ["estimate_frequencies"]
