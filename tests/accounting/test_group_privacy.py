"""Group privacy (segmented Lemma 1) in the pair accountants: delta never rises with epsilon, and
the group epsilon is found (and certified) even where the fixed point is slow.

Lemma 1's bound size e^eps delta_1(eps / size) grows like e^eps once delta_1 reaches its floor,
but a guarantee at some eps' <= eps is one at eps: the accountant reports the smallest.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffledp.accounting.accountants import CloneAccountant, VariationRatioAccountant
from shuffledp.accounting.events import GroupEvent, PersonalizedShuffleEvent, ShuffleEvent
from shuffledp.accounting.segmented import level_constraint_met, user_epsilon, user_event
from shuffledp.params import VariationRatio
from shuffledp.protocols.segmented.optimizer import clear_caches, optimize_parameters

EPSILONS = [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 28.0, 40.0, 100.0, 700.0, 2000.0]


@pytest.mark.parametrize(
    "event",
    [
        user_event(1.0, 128, 5000, 4.48848, 4),
        user_event(0.3, 16, 200, 1.0, 2),
        GroupEvent(ShuffleEvent(VariationRatio.from_ldp(2.0), 1000), 3),
        GroupEvent(PersonalizedShuffleEvent.from_budgets(1.0, [0.5] * 300 + [2.0] * 200), 2),
    ],
)
def test_group_delta_never_rises_with_epsilon(event):
    acc = VariationRatioAccountant().compose(event)
    deltas = [acc.get_delta(e) for e in EPSILONS]
    # up to the neglected tail each evaluation charges (at most 1e-18 after Lemma 1's factor)
    assert all(b <= a + 2e-18 for a, b in zip(deltas, deltas[1:])), deltas


def test_the_liberal_level_of_the_stranger_report_is_met():
    """Eq. 7 read literally fails at E = 28 although it holds at the user's epsilon (the e^E factor on a floor)."""
    eps = user_epsilon(1.0, 128, 5000, 4.48848, 4, 2e-6)  # 2.0006 with the three-count pricing of the items
    assert 1.9 < eps < 2.1
    assert level_constraint_met(1.0, eps * (1 + 1e-6), 2e-6, 128, 5000, 4.48848, 4)
    for level in (28.0, 40.0, 2000.0):
        assert level_constraint_met(1.0, level, 2e-6, 128, 5000, 4.48848, 4)


def test_slow_fixed_point_still_gives_a_certified_group_epsilon():
    event = GroupEvent(ShuffleEvent(VariationRatio(p=math.inf, beta=0.0005012542607294647, q0=1.0, q1=1.0), 6, 1.0), 4)
    acc = VariationRatioAccountant().compose(event)
    assert acc.get_delta(0.01) <= 0.002
    eps = acc.get_epsilon(0.002)
    assert eps <= 0.01 and acc.get_delta(eps) <= 0.002


@pytest.mark.parametrize("accountant", [VariationRatioAccountant(), CloneAccountant()])
def test_group_epsilon_is_certified_by_the_group_delta(accountant):
    for eps0, n, size in [(1.0, 10_000, 2), (4.0, 5000, 3), (0.5, 200, 5)]:
        acc = accountant.fresh().compose(GroupEvent(ShuffleEvent(VariationRatio.from_ldp(eps0), n), size))
        for delta in (1e-3, 1e-8):
            eps = acc.get_epsilon(delta)
            assert acc.get_delta(eps) <= delta
            assert eps <= size * eps0 * (1 + 1e-12)


def test_a_more_liberal_level_never_gets_a_worse_optimum():
    bounds = []
    for liberal in (2.0, 8.0, 28.0, 2000.0):
        clear_caches()
        bounds.append(optimize_parameters([0.5, 1.0, liberal], 1e-5, [250, 500, 250], 16, 2).mse_bound)
    assert all(b <= a * (1 + 1e-4) for a, b in zip(bounds, bounds[1:])), bounds  # the m search stops at 1e-3 in log m
    assert np.isfinite(bounds).all()


def test_huge_levels_and_tiny_deltas_stay_correct_and_fast():
    """Second stranger pass: E_K = 1e8 got a worse optimum than 40 (the ladder stopped at 1e-6 E), deltas
    below 1e-18 were unreachable (the 1e-18 tail charge), and an infeasible delta searched for minutes."""
    import time

    from shuffledp.errors import PrivacyParameterError

    base = optimize_parameters([0.5, 1.0, 40.0], 1e-5, [250, 500, 250], 16, 2).mse_bound
    for top in (1e8, 1e300):
        clear_caches()
        assert optimize_parameters([0.5, 1.0, top], 1e-5, [250, 500, 250], 16, 2).mse_bound <= base * (1 + 2e-3)
    acc = VariationRatioAccountant().compose(user_event(1.0, 128, 5000, 20.0, 4))
    assert acc.get_delta(2.0) < 1e-18  # reachable now
    # m = 40 meets no level 0.5 at 1e-20 (one message among ~1,560 blankets per item leaks at
    # eps' = 0.125 with probability far above 1e-21 even for lambda = 1e-9); m = 200 does
    with pytest.raises(PrivacyParameterError, match="level 0.5 cannot be met at delta=1e-20"):
        optimize_parameters([0.5, 1.0, 2.0], 1e-20, [1250, 2500, 1250], 128, 4, m=40.0)
    p = optimize_parameters([0.5, 1.0, 2.0], 1e-20, [1250, 2500, 1250], 128, 4, m=200.0)
    assert all(e <= level for e, level in zip(p.epsilons, p.levels)) and 0.0 < p.lambdas[0] < 1.0
    start = time.perf_counter()
    with pytest.raises(PrivacyParameterError, match="level 0.5 cannot be met at delta=1e-300"):
        optimize_parameters([0.5, 1.0, 2.0], 1e-300, [1250, 2500, 1250], 128, 4)
    assert time.perf_counter() - start < 30


def test_a_group_that_certifies_epsilon_zero_is_priced():
    """A user event whose release meets delta at epsilon 0 (tiny lambda): the group's delta at epsilon 0 had no
    ladder below it to search (log2(0), a math domain error); it is the group's bound at 0."""
    acc = VariationRatioAccountant().compose(user_event(1e-6, 100, 1250, 0.5, 4))
    assert acc.get_epsilon(8e-6) == 0.0
    assert 0.0 < acc.get_delta(0.0) <= 8e-6


def test_levels_far_below_one_are_optimized():
    """Issue 16: levels 1e-7 and 2e-7 crashed the optimizer (the group above); 1e-6 worked."""
    for level in (1e-7, 2e-7):
        p = optimize_parameters([level], 8e-6, [1250], 100, 4)
        assert 0.0 < p.epsilons[0] <= level and 0.0 < p.lambdas[0] <= 1.0
