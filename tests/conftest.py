"""Test-suite settings shared by every test directory.

Hypothesis runs derandomized by default, so a failure reproduces on every run and
on every machine (the examples are derived from each test's source, not from a
random seed), with a bounded time per example and the reproduction blob printed.
``HYPOTHESIS_PROFILE=stress`` selects a larger, randomized exploration for a
manual or nightly run; it still honours a test's own ``max_examples``.
"""

import math
import os
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "repeatable",
    derandomize=True,
    # generous: the accounting examples take up to a few seconds at large n on a busy machine
    deadline=30_000,
    print_blob=True,
    # a derandomized run has nothing to replay from the example database
    database=None,
)
settings.register_profile(
    "stress",
    derandomize=False,
    max_examples=1_000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


def _common_ratio(P: np.ndarray, eps0: float) -> float:
    """Common ratio of a transition matrix, straight from the definition (`BlanketDecomposition`).

    For each pair of inputs (x0, x1), with e = e^eps0, the victim's common part at output y is
    C(y) = min(P[x0, y], P[x1, y]) - |P[x0, y] - P[x1, y]|/(e - 1); every user's row must hold
    |P[x0, y] - P[x1, y]|/(e - 1) + C(y)/ratio at y.  The ratio is the smallest that does so for
    every row, pair and output (1 when there is no common part).  Written with plain loops,
    independently of `shuffledp.randomizers._decomposition`.
    """
    P = np.asarray(P, dtype=np.float64)
    em1 = math.expm1(eps0)
    blanket = [min(P[z, y] for z in range(P.shape[0])) for y in range(P.shape[1])]
    ratio = 1.0
    for i in range(P.shape[0]):
        for j in range(P.shape[0]):
            if i == j or np.array_equal(P[i], P[j]):
                continue
            for y in range(P.shape[1]):
                a, b = P[i, y], P[j, y]
                gap = abs(a - b) / em1
                common = min(a, b) - gap
                if common <= 1e-12 * max(a, b):  # none (k-RR's own columns, up to rounding)
                    continue
                room = blanket[y] - gap
                ratio = max(ratio, math.inf if room <= 0.0 else common / room)
    return ratio


@pytest.fixture
def common_ratio() -> Callable[[np.ndarray, float], float]:
    return _common_ratio
