"""The fast paths of the certified Geo-/SGDL-Shuffle epsilons (issue 20, speed) against solving everything.

* `_exhaustive.exhaustive_profile` solves the pairs with an extreme multiset first and skips every other pair that
  meets delta at the level its distance already has: the profile and the worst pair must be those of solving every
  pair, with far fewer pairs solved.
* `_common.max_shift_epsilon` / `max_shift_divergence` settle most sum distances by a windowed bound: the epsilon
  must meet delta at every distance and never exceed the all-distances root search; the feasibility check of the
  inverse must agree with the certificate.
* RR-Shuffle: the compromised-shuffler search over every distance at once, and the covers' FFT convolution, give
  the values of the one-at-a-time / scipy computations bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import signal

from shuffledp.accounting import metric as M
from shuffledp.accounting.metric import _common as C
from shuffledp.accounting.metric import _exhaustive as E
from shuffledp.accounting.metric import _rr_pairs as R
from shuffledp.accounting.metric import geo_shuffle as G
from shuffledp.accounting.metric import rr_shuffle as RR
from shuffledp.accounting.metric import sgdl_shuffle as S


def _solve_every_pair(laws: np.ndarray, n: int, delta: float) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """The profile with every ordered pair solved (row-major order, first pair of a tie kept)."""
    k = laws.shape[0] - 1
    sets = E.multisets(n, k)
    law = E.sum_laws(laws, sets)
    missing = np.maximum(1.0 - law.sum(axis=1), 0.0) * (1.0 + 1e-6) + 1e-15 * law.shape[1]
    i, j = np.nonzero(~np.eye(sets.shape[0], dtype=bool))
    distance = np.abs(sets[i] - sets[j]).sum(axis=1)
    budget = delta - missing[i]
    upper, lower = C.shift_bounds(law)
    eps = E.pair_epsilons(upper[i], lower[j], distance.astype(np.float64), budget)
    eps = np.where(budget > 0.0, eps, np.inf)
    best = np.zeros(n * k)
    np.maximum.at(best, distance - 1, eps)
    where = int(np.argmax(eps))
    return best * (1.0 + 1e-12), (sets[i[where]], sets[j[where]])


@pytest.mark.parametrize(
    "kind, epsilon, delta, n, k",
    [
        ("geo", 1.0, 1e-4, 4, 4),
        ("geo", 0.5, 1e-2, 5, 3),
        ("geo", 2.0, 1e-2, 6, 3),
        ("geo", 0.3, 1e-6, 3, 5),
        ("sgdl", 1.0, 1e-4, 4, 3),
        ("sgdl", 0.5, 1e-2, 3, 4),
    ],
)
def test_exhaustive_profile_skips_only_pairs_that_cannot_raise_it(kind, epsilon, delta, n, k, monkeypatch):
    c = G.geo_shuffle_c(epsilon, delta, n) if kind == "geo" else S.sgdl_shuffle_c(epsilon, delta, n)
    laws = E.geo_user_laws(epsilon, k, c) if kind == "geo" else E.sgdl_user_laws(epsilon, n, k, c)
    reference, (ref_a, ref_b) = _solve_every_pair(laws, n, delta)
    solved = []
    solve = E.pair_epsilons
    monkeypatch.setattr(E, "pair_epsilons", lambda num, *rest: solved.append(num.shape[0]) or solve(num, *rest))
    profile, (a, b) = E.exhaustive_profile(laws, n, delta)
    assert np.array_equal(profile, reference)
    assert list(a) == list(ref_a) and list(b) == list(ref_b)
    pairs = E.multiset_count(n, k) * (E.multiset_count(n, k) - 1)
    assert sum(solved) < 0.25 * pairs  # the point of the fast path: most pairs are settled by the check


def _conditioned(kind: str, epsilon: float, delta: float, n: int, k: int):
    """(T's bounds as the certificate builds them, the sum distances 1..n k, the budget on the divergence)."""
    if kind == "geo":
        c = G.geo_shuffle_c(epsilon, delta, n)
        law, inside = G._geo_shuffle_noise_law(epsilon, c, n, n * k)
        budget = (delta - (1.0 - inside)) / inside
    else:
        c = S.sgdl_shuffle_c(epsilon, delta, n)
        law, delta_1 = S._sgdl_shuffle_noise_law(epsilon, c, n, n * k)
        budget = delta - delta_1
    return law, np.arange(1, n * k + 1), budget


@pytest.mark.parametrize(
    "kind, epsilon, delta, n, k",
    [
        ("geo", 1.0, 1e-4, 30, 5),
        ("geo", 0.3, 1e-6, 100, 10),
        ("geo", 1.0, 1e-2, 300, 3),
        ("sgdl", 0.3, 1e-2, 100, 10),  # the full search overshoots: (A - budget) / B overflows, B subnormal
        ("sgdl", 1.0, 1e-4, 50, 4),
    ],
)
def test_max_shift_epsilon_meets_delta_everywhere_and_never_exceeds_the_full_search(kind, epsilon, delta, n, k):
    law, shifts, budget = _conditioned(kind, epsilon, delta, n, k)
    fast = C.max_shift_epsilon(law, shifts, budget)
    full = float(C.shift_epsilons(law, shifts, budget).max())
    assert fast <= full
    assert full - fast <= 1e-9 * full  # equal up to rounding
    assert C.shift_divergences(law, shifts, fast * (1.0 + 1e-9)).max() <= budget
    assert C.max_shift_divergence(law, shifts, fast * (1.0 + 1e-9), budget) <= budget


@pytest.mark.parametrize("factor", [0.5, 0.99, 0.999999])
def test_max_shift_divergence_is_above_the_budget_when_delta_is_not_met(factor):
    law, shifts, budget = _conditioned("geo", 1.0, 1e-4, 30, 5)
    low = factor * C.max_shift_epsilon(law, shifts, budget)
    full = float(C.shift_divergences(law, shifts, low).max())
    assert full > budget and C.max_shift_divergence(law, shifts, low, budget) > budget


def test_geo_feasibility_check_agrees_with_the_certificate_where_e_to_the_eps_d_overflows():
    # n k = 300 at eps 2.4: e^(eps D) overflows float64; T's far tails are 0, and 0 times inf made a nan that read
    # as "not certified" although the certificate itself gives 1.855
    certified = M.geo_shuffle_certified_epsilon(3.0, 0.01, 300, 1)
    assert certified < 2.4
    assert G._certifies(3.0, 2.4, 0.01, 300, 1)
    assert not G._certifies(3.0, 0.9 * certified, 0.01, 300, 1)
    assert math.isfinite(certified)


@pytest.mark.parametrize("p, delta, k", [(0.5, 1e-2, 300), (0.1, 1e-4, 120), (0.9, 1e-6, 90), (1e-6, 1e-3, 40)])
def test_positioned_bits_epsilons_are_the_per_distance_pairs_bit_for_bit(p, delta, k):
    one_by_one = np.array([max(RR._rr_pair_epsilons(0, d, d, p / 2, delta)) for d in range(1, k + 1)])
    assert np.array_equal(RR._positioned_bits_epsilons(np.arange(1, k + 1), p / 2, delta), one_by_one)


def test_rr_fft_convolution_is_scipys_bit_for_bit():
    rng = np.random.default_rng(7)
    for _ in range(200):
        x, y = rng.random(rng.integers(1, 3000)), rng.random(rng.integers(1, 3000))
        assert np.array_equal(R._fft_convolve(x, y), signal.fftconvolve(x, y))


def test_exhaustive_profile_checks_both_mirror_pairs_when_the_laws_are_not_symmetric():
    laws = E.geo_user_laws(1.0, 3, 6)
    laws[0] = np.roll(laws[0], 1) * 0.999  # a sub-probability law with no mirror image among the rows
    assert E._mirror_rows(laws, E.multisets(4, 3)) is None
    assert E._mirror_rows(E.geo_user_laws(1.0, 3, 6), E.multisets(4, 3)) is not None
    reference, (ref_a, ref_b) = _solve_every_pair(laws, 4, 1e-4)
    profile, (a, b) = E.exhaustive_profile(laws, 4, 1e-4)
    assert np.array_equal(profile, reference)
    assert list(a) == list(ref_a) and list(b) == list(ref_b)


@pytest.mark.parametrize("kind, epsilon, n", [("geo", 0.2, 50), ("geo", 0.5, 40), ("sgdl", 0.5, 40)])
def test_exhaustive_profile_solves_only_the_extreme_pairs_when_pairs_at_one_distance_nearly_tie(
    kind, epsilon, n, monkeypatch
):
    # k = 1: a dataset is its count of ones and the clamped laws are shifts of each other but for masses below
    # delta / n at the clamps, so every pair at one distance needs nearly the extreme pair's epsilon (within ~1e-5):
    # the skip check must settle them (its window leaves out a negligible mass), not solve them one by one
    delta = 1e-4
    c = G.geo_shuffle_c(epsilon, delta, n) if kind == "geo" else S.sgdl_shuffle_c(epsilon, delta, n)
    laws = E.geo_user_laws(epsilon, 1, c) if kind == "geo" else E.sgdl_user_laws(epsilon, n, 1, c)
    reference, (ref_a, ref_b) = _solve_every_pair(laws, n, delta)
    solved = []
    solve = E.pair_epsilons
    monkeypatch.setattr(E, "pair_epsilons", lambda num, *rest: solved.append(num.shape[0]) or solve(num, *rest))
    profile, (a, b) = E.exhaustive_profile(laws, n, delta)
    assert np.array_equal(profile, reference)
    assert list(a) == list(ref_a) and list(b) == list(ref_b)
    assert sum(solved) <= 4 * n  # the pairs with an extreme multiset (all 0 or all 1) on either side


@pytest.mark.parametrize("kind, epsilon, n, k", [("geo", 1.0, 7, 3), ("geo", 0.5, 30, 1), ("sgdl", 1.0, 6, 2)])
def test_sum_laws_takes_the_mirror_multisets_law_reversed_when_the_user_laws_are_symmetric(kind, epsilon, n, k):
    c = G.geo_shuffle_c(epsilon, 1e-4, n) if kind == "geo" else S.sgdl_shuffle_c(epsilon, 1e-4, n)
    laws = E.geo_user_laws(epsilon, k, c) if kind == "geo" else E.sgdl_user_laws(epsilon, n, k, c)
    sets = E.multisets(n, k)
    law = E.sum_laws(laws, sets)
    mirror = E._mirror_rows(laws, sets)
    pair = mirror != np.arange(len(sets))  # a multiset that is its own mirror is convolved as it is
    assert pair.any() and np.array_equal(law[mirror[pair]], law[pair, ::-1])  # one convolution per mirror pair
    for row in (0, len(sets) // 3, len(sets) - 1):  # each row still the convolution of its users' laws
        direct = np.array([1.0])
        for v in sets[row]:
            direct = np.convolve(direct, laws[v])
        assert np.allclose(law[row], direct, rtol=1e-12, atol=1e-300)
