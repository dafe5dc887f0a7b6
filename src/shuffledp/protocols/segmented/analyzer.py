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
    """
    counts = np.bincount(np.asarray(messages, dtype=np.int64), minlength=d).astype(np.float64)
    signal = float(np.dot(np.asarray(level_counts, dtype=np.float64), np.asarray(lambdas, dtype=np.float64)))
    return (counts - n_users * m / d) / signal


__all__ = ["estimate_frequencies"]
