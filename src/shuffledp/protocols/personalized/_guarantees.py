"""Shared checks and per-victim E-APES of the personalized protocols and the ``personalized`` command.

All the checks run *before* any randomizing, so that a refusal loses no work.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from shuffledp._util.validation import check_real
from shuffledp.accounting.bounds import check_delta
from shuffledp.accounting.personalized import check_budgets, check_distinct_budgets, eapes_epsilon
from shuffledp.errors import ShapeError


def check_target_delta(delta: Any, name: str) -> float:
    """A central delta as the accountant takes it (a number in [1e-300, 1)), checked up front."""
    return check_delta(check_real(delta, name), name)


def check_population(budgets: Any, name: str, delta: float | None = None, family: str = "binary-rr") -> np.ndarray:
    """``budgets`` as a non-empty 1-d array of budgets; with ``delta``, also ``delta`` as the accountant
    takes it and at most `MAX_DISTINCT_BUDGETS` distinct budgets (the accountant's limits, checked up front)."""
    budgets = check_budgets(budgets, name)
    if budgets.size == 0:
        raise ShapeError(f"{name} must hold at least one user, got an empty array")
    if delta is not None:
        check_target_delta(delta, "delta")
        check_distinct_budgets(budgets, name, family)
    return budgets


def eapes_by_victim(eps: np.ndarray, delta: float, victims: np.ndarray, deltas: np.ndarray | None = None) -> np.ndarray:
    """E-APES epsilon at ``delta`` of the user at each index of ``victims``, the others being every other user.

    The victim's own budget does not enter (E-APES Theorem 3); a lone user has no others and gets inf.
    ``deltas``: the users' own deltas (Algorithm 1), or None for pure-DP users.
    """
    out = np.full(victims.size, np.inf)
    for j, i in enumerate(victims.tolist()):  # one call per distinct victim, not per user
        others = np.delete(eps, i)
        if others.size:
            out[j] = eapes_epsilon(others, delta, others_deltas=None if deltas is None else np.delete(deltas, i))
    return out
