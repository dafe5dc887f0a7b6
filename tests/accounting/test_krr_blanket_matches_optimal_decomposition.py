"""For k-RR the library's specific bound is the optimal decomposition bound (the privacy blanket).

Su, Cheng and Wang (arXiv 2504.07414) show the blanket decomposition optimal among
decomposition-based bounds.  Here its value for k-RR is computed independently of the
library's engine: with the n-draw identity P(H) = Mult_n(H) (1/n) sum_v w(v) H_v / g_v, the
divergence is (1/n) E[(lambda . H)_+] over H ~ Mult(n; r, r, kappa, rest), summed over
(h0 + h1, h0) with the common count in closed form (binomial partial expectations).  The
library's bound must lie above it (soundness) and within 2% of it in epsilon (the
acceptance grid of the issue: k in {2, 10, 100}, n in {10^3, 10^4}, eps0 in {1, 2, 4},
delta = 0.01/n).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from shuffledp import shuffle_epsilon
from shuffledp.randomizers import KRandomizedResponse


def blanket_delta(k: int, eps0: float, n: int, eps: float, sigmas: float = 12.0) -> float:
    """The blanket divergence of k-RR at eps, by direct summation (module docstring)."""
    e, E = math.exp(eps0), math.exp(eps)
    r = 1.0 / (e + k - 1.0)
    kappa = (k - 2) * r  # the others' mass on the victim's common part, all of it (ratio 1)
    lam0, lam1, lamc = e - E, 1.0 - e * E, 1.0 - E
    rate = 2.0 * r
    sd = math.sqrt(n * rate * (1.0 - rate))
    T = np.arange(max(0, int(n * rate - sigmas * sd - 10)), min(n, int(n * rate + sigmas * sd + 10)) + 1)
    half = int(sigmas * math.sqrt(T.max() / 4.0)) + 10
    h0 = np.floor(T[:, None] / 2.0) + np.arange(-half, half + 1)[None, :]
    T2 = np.broadcast_to(T[:, None], h0.shape).astype(float)
    ok = (h0 >= 0) & (h0 <= T2)
    h0, T2 = h0[ok], T2[ok]
    weight = stats.binom.pmf(T2, n, rate) * stats.binom.pmf(h0, T2, 0.5)
    K = lam0 * h0 + lam1 * (T2 - h0)
    if kappa == 0.0:
        term = np.maximum(K, 0.0)
    else:
        N, p = n - T2, kappa / (1.0 - rate)
        t = np.floor(np.maximum(K, 0.0) / -lamc)
        # E[(K + lamc Hc)_+] = K P[Hc <= t] + lamc E[Hc; Hc <= t], E[Hc; Hc <= t] = N p P[Bin(N - 1, p) <= t - 1]
        partial = np.where(N >= 1, N * p * stats.binom.cdf(t - 1, np.maximum(N - 1, 0), p), 0.0)
        term = np.where(K > 0.0, K * stats.binom.cdf(t, N, p) + lamc * partial, 0.0)
    return float(np.sum(weight * term)) / n


@pytest.mark.parametrize("k", [2, 10, 100])
@pytest.mark.parametrize("n", [1_000, 10_000])
def test_krr_bound_is_within_two_percent_of_the_optimal_decomposition(k, n):
    delta = 0.01 / n
    for eps0 in (1.0, 2.0, 4.0):
        ours = shuffle_epsilon(n, delta, params=KRandomizedResponse(epsilon=eps0, k=k).amplification_parameters())
        assert blanket_delta(k, eps0, n, ours) <= delta * (1 + 1e-6)  # never below the blanket bound
        assert blanket_delta(k, eps0, n, ours / 1.02) > delta  # at most 2% above it


def test_direct_summation_matches_exact_enumeration_for_two_users():
    """The independent formula is itself right: for n = 2 the blanket bound of k-RR is exact."""
    from shuffledp.shuffle_audit import exact_shuffle_delta

    R = KRandomizedResponse(epsilon=1.0, k=6)
    exact = exact_shuffle_delta(R.transition_matrix(), 2, 0.8).delta
    assert blanket_delta(6, 1.0, 2, 0.8) == pytest.approx(exact, rel=1e-9)
