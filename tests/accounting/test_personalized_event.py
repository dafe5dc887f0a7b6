"""PersonalizedShuffleEvent (issue 10): construction, JSON, and pricing by the accountants.

The accountants' upper delta is checked against the real shuffled outputs of binary RR by
enumeration (every input of the other users), and a deliberately broken pricing (the
weakest budget's homogeneous bound applied to a heterogeneous population) is caught.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from shuffledp.accounting import personalized as P
from shuffledp.accounting.accountants import (
    CloneAccountant,
    ClosedFormAccountant,
    VariationRatioAccountant,
)
from shuffledp.accounting.events import (
    GroupEvent,
    PersonalizedShuffleEvent,
    SelfComposedEvent,
    ShuffleEvent,
    event_from_json,
    event_to_json,
)
from shuffledp.accounting.pld_accountant import PLDAccountant
from shuffledp.errors import NoCloneBoundError, PrivacyParameterError, UnsupportedEventError
from shuffledp.params import VariationRatio


def count_law(victim_bit: int, victim_eps: float, probs: np.ndarray) -> np.ndarray:
    """Law of the number of ones among the shuffled binary-RR bits (victim with input victim_bit)."""
    q_v = 1.0 / (1.0 + math.exp(victim_eps))
    law = np.array([1.0])
    for p in [1.0 - q_v if victim_bit else q_v, *probs]:
        law = np.convolve(law, [1.0 - p, p])
    return law


def worst_real_delta(victim_eps: float, others: list[float], eps: float) -> float:
    """max over every input of the other users, both victim directions, of the shuffled divergence."""
    q = 1.0 / (1.0 + np.exp(np.asarray(others)))
    worst = 0.0
    for bits in itertools.product((0, 1), repeat=len(others)):
        probs = np.where(np.asarray(bits) == 1, 1.0 - q, q)
        a, b = count_law(0, victim_eps, probs), count_law(1, victim_eps, probs)
        e = math.exp(eps)
        worst = max(worst, float(np.maximum(a - e * b, 0).sum()), float(np.maximum(b - e * a, 0).sum()))
    return worst


def test_from_budgets_merges_and_round_trips_json():
    ev = PersonalizedShuffleEvent.from_budgets(1.0, [2.0, 0.5, 0.5, 2.0, 1.0])
    assert ev.others == ((0.5, 2), (1.0, 1), (2.0, 2))
    assert ev.n == 6
    assert ev.others_budgets().tolist() == [0.5, 0.5, 1.0, 2.0, 2.0]
    assert event_from_json(event_to_json(ev)) == ev
    assert hash(ev) == hash(PersonalizedShuffleEvent(1.0, ((2.0, 2), (0.5, 1), (1.0, 1), (0.5, 1))))
    krr = PersonalizedShuffleEvent.from_budgets(0.5, [1.0], family="k-rr", k=4)
    assert event_from_json(event_to_json(krr)) == krr


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"victim_epsilon": 0.0, "others": ()}, r"victim_epsilon must be a number in \[1e-6, 700\]; got 0.0$"),
        ({"victim_epsilon": math.nan, "others": ()}, "victim_epsilon must be a number in"),
        (
            {"victim_epsilon": 1.0, "others": ((-1.0, 2),)},
            r"others budget\[0\] must be a number in \[1e-6, 700\]; got -1.0",
        ),
        ({"victim_epsilon": 1.0, "others": ((1.0, 0),)}, r"others count must be an integer in \[1, inf\); got 0"),
        ({"victim_epsilon": 1.0, "others": ((1.0, 2.5),)}, r"others count must be an integer in \[1, inf\); got 2.5"),
        ({"victim_epsilon": 1.0, "others": 3}, "others must be a sequence of"),
        ({"victim_epsilon": 1.0, "others": ((1.0, 2**53),)}, r"n must be an integer in \[1, 2\^53\]; got"),
    ],
)
def test_bad_events_name_the_value(kwargs, match):
    with pytest.raises(PrivacyParameterError, match=match):
        PersonalizedShuffleEvent(**kwargs)


def test_family_without_clone_bound_is_refused():
    with pytest.raises(NoCloneBoundError, match="gaussian"):
        PersonalizedShuffleEvent(1.0, ((1.0, 3),), family="gaussian")
    with pytest.raises(NoCloneBoundError, match="k-rr"):
        PersonalizedShuffleEvent(1.0, ((1.0, 3),), family="k-rr")


def test_accountant_prices_as_the_personalized_bound():
    rng = np.random.default_rng(3)
    others = rng.uniform(0.05, 2.0, 1999)
    ev = PersonalizedShuffleEvent.from_budgets(0.8, others)
    acc = VariationRatioAccountant(rtol=1e-6).compose(ev)
    eps = acc.get_epsilon(1e-6)
    assert eps == P.personalized_shuffle_epsilon(0.8, np.sort(others), 1e-6, rtol=1e-6)
    assert acc.get_delta(eps) <= 1e-6 < acc.get_delta(eps * 0.99)
    assert 0.0 < acc.get_epsilon_lower(1e-6) <= eps
    assert CloneAccountant(rtol=1e-6).compose(ev).get_epsilon(1e-6) == eps
    assert acc.get_delta(0.8) == 0.0  # the victim's own pure LDP


def test_equal_budgets_price_as_the_homogeneous_stronger_clones():
    ev = PersonalizedShuffleEvent.from_budgets(1.0, [1.0] * 4999)
    homogeneous = ShuffleEvent(VariationRatio.from_ldp(1.0), 5000)
    mine = CloneAccountant(rtol=1e-6).compose(ev).get_epsilon(1e-7)
    ref = CloneAccountant(rtol=1e-6).compose(homogeneous).get_epsilon(1e-7)
    assert abs(mine - ref) <= 2e-6 * ref


def test_groups_and_compositions_use_the_same_rules():
    ev = PersonalizedShuffleEvent.from_budgets(0.5, [0.3] * 300 + [1.5] * 200)
    one = VariationRatioAccountant().compose(ev).get_epsilon(1e-7 / 4)
    composed = VariationRatioAccountant().compose(SelfComposedEvent(ev, 4)).get_epsilon(1e-7)
    assert composed == pytest.approx(4 * one, rel=1e-12)  # basic composition, delta split equally
    group = VariationRatioAccountant().compose(GroupEvent(ev, 2)).get_epsilon(1e-7)
    assert 2 * VariationRatioAccountant().compose(ev).get_epsilon(1e-7) <= group <= 2 * 0.5


@pytest.mark.parametrize("budgets", [[0.3, 1.5, 0.8, 2.2, 0.5, 1.0, 0.2, 1.2], [2.0, 0.1, 2.5, 0.6, 1.8, 3.0, 0.9]])
def test_accountant_delta_covers_the_real_shuffled_outputs(budgets):
    for i, victim in enumerate(budgets):
        others = budgets[:i] + budgets[i + 1 :]
        acc = VariationRatioAccountant().compose(PersonalizedShuffleEvent.from_budgets(victim, others))
        for eps in (0.0, 0.25 * victim, 0.5 * victim, 0.9 * victim):
            assert acc.get_delta(eps) >= worst_real_delta(victim, others, eps) * (1 - 1e-9)


def test_broken_pricing_is_caught_by_the_same_check():
    """The weakest *other* budget's homogeneous bound is not valid for a victim with a larger budget."""
    victim, others = 3.0, [0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2]
    broken = CloneAccountant().compose(ShuffleEvent(VariationRatio.from_ldp(min(others)), len(others) + 1))
    eps = 0.5
    assert broken.get_delta(eps) < worst_real_delta(victim, others, eps)
    honest = VariationRatioAccountant().compose(PersonalizedShuffleEvent.from_budgets(victim, others))
    assert honest.get_delta(eps) >= worst_real_delta(victim, others, eps)


def test_unsupported_accountants_say_what_to_use():
    ev = PersonalizedShuffleEvent.from_budgets(1.0, [1.0, 2.0])
    for acc, match in [
        (CloneAccountant(stronger=False), "stronger-clone"),
        (PLDAccountant(), "personalized"),
        (ClosedFormAccountant("pic-eq1"), "one budget"),
    ]:
        assert not acc.supports(ev)
        with pytest.raises(UnsupportedEventError, match=match):
            acc.compose(ev)
    laplace = PersonalizedShuffleEvent.from_budgets(1.0, [1.0, 2.0], family="laplace")
    with pytest.raises(UnsupportedEventError, match="binary RR only"):
        VariationRatioAccountant().compose(laplace).get_epsilon_lower(1e-3)
