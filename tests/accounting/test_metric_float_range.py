"""The certified Geo-/SGDL-Shuffle shift analysis (`shuffledp.accounting.metric._common`) where float64 runs out
(issue 20, soundness): e^(eps D) beyond the float range (eps D > ~709.78) and T's pmf below the smallest normal
double.  Every value is checked against an evaluation that does not share the float64 shortcut: mpmath at 50 digits
on the same inputs, or T's pmf convolved in log space."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy.special import logsumexp

from shuffledp.accounting.metric import _common as C


def _exact_divergences(upper: np.ndarray, lower: np.ndarray, shifts: np.ndarray, epsilon: float) -> list:
    """sum_t max(0, upper(t) - e^(eps D) lower(t - D)) at 50 digits, from the exact values of the float inputs."""
    with mpmath.workdps(50):
        out = []
        for d in shifts:
            scale = mpmath.exp(mpmath.mpf(epsilon) * int(d))
            total = mpmath.mpf(0)
            for t in range(upper.size):
                below = mpmath.mpf(float(lower[t - d])) if t - d >= 0 else mpmath.mpf(0)
                total += max(mpmath.mpf(0), mpmath.mpf(float(upper[t])) - scale * below)
            out.append(total)
        return out


def _overflowing_laws(epsilon: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """An upper law and a lower law whose values are about upper e^(-eps 8) (subnormal at eps = 90: e^(eps 8) is
    beyond float64, yet e^(eps 8) lower(t - 8) is comparable to upper(t))."""
    rng = np.random.default_rng(seed)
    upper = rng.uniform(0.0, 1.0, 40)
    upper /= upper.sum()
    lower = np.exp(np.log(upper) - 8 * epsilon + rng.normal(0.0, 1.5, upper.size))
    return upper, lower


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_shift_divergences_never_drop_terms_where_e_to_the_eps_d_overflows(seed):
    epsilon = 90.0  # eps D > 709.78 from D = 8 on
    upper, lower = _overflowing_laws(epsilon, seed)
    assert 0.0 < lower.max() < np.finfo(np.float64).tiny and epsilon * 8 > math.log(np.finfo(np.float64).max)
    shifts = np.arange(1, 12)
    computed = C.shift_divergences(upper, lower, shifts, epsilon)
    exact = _exact_divergences(upper, lower, shifts, epsilon)
    assert float(exact[7]) > 0.01  # D = 8: terms that only the overflowing rows see
    for value, truth in zip(computed, exact, strict=True):
        assert value >= float(truth) * (1.0 - 1e-12)
        assert value <= float(truth) * (1.0 + 1e-9) + 1e-300
    budget = 0.5 * float(exact[7])
    assert C.max_shift_divergence(upper, lower, shifts, epsilon, budget) > budget
