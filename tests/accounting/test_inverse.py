"""local_epsilon: the inverse of shuffle_epsilon (largest local budget meeting a target)."""

import math

import numpy as np
import pytest

from shuffledp.accounting import VariationRatio, local_epsilon, shuffle_epsilon
from shuffledp.accounting._solve import feasible_edge, largest_within
from shuffledp.accounting.variation_ratio import variation_ratio_epsilon
from shuffledp.errors import PrivacyParameterError
from shuffledp.params import BlanketDecomposition
from shuffledp.randomizers.base import LocalRandomizer
from shuffledp.randomizers.categorical import KRandomizedResponse
from shuffledp.randomizers.domains import Box
from shuffledp.randomizers.minkowski import MinkowskiResponse


class HalfVariation(LocalRandomizer):
    """Stub randomizer whose total-variation parameter is half the generic one and whose common part is
    fully known (common_ratio 1, as for k-RR): with the unknown common part of the default
    (common_ratio e^eps0) a smaller beta alone buys almost nothing (docs/which-bound.md)."""

    def _randomize(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return X

    def amplification_parameters(self) -> BlanketDecomposition:
        generic = BlanketDecomposition.from_ldp(self.epsilon)
        return BlanketDecomposition(eps0=generic.eps0, beta=generic.beta / 2, common_ratio=1.0)


def _assert_round_trip(eps0: float, target: float, amplified) -> None:
    achieved = amplified(eps0)
    assert achieved <= target
    assert achieved >= target * (1 - 1e-6)
    # maximality: a slightly larger local budget overshoots the target
    assert amplified(eps0 * (1 + 1e-5)) > target


@pytest.mark.parametrize("target", [0.05, 0.3, 1.0, 3.0])
@pytest.mark.parametrize("n, delta", [(100, 1e-3), (10**4, 1e-6), (10**6, 1e-8)])
def test_generic_round_trip(target, n, delta):
    eps0 = local_epsilon(target, n, delta)
    _assert_round_trip(eps0, target, lambda e: shuffle_epsilon(n, delta, eps0=e))
    assert eps0 >= target  # shuffling never hurts: eps0 = target is always feasible


def test_randomizer_family_uses_amplification_parameters():
    n, delta, target = 10**4, 1e-6, 1.0
    family = lambda e: MinkowskiResponse(e, dim=2, norm="linf")  # noqa: E731
    eps0 = local_epsilon(target, n, delta, family=family)
    _assert_round_trip(eps0, target, lambda e: shuffle_epsilon(n, delta, params=family(e).amplification_parameters()))


def test_tighter_parameters_allow_a_larger_budget():
    n, delta, target = 10**4, 1e-6, 0.5
    stub = local_epsilon(target, n, delta, family=lambda e: HalfVariation(e, Box(1)))
    generic = local_epsilon(target, n, delta)
    assert stub > generic * 1.05
    _assert_round_trip(
        stub, target, lambda e: shuffle_epsilon(n, delta, params=HalfVariation(e, Box(1)).amplification_parameters())
    )


def test_family_may_return_parameters():
    args = (0.7, 5000, 1e-6)
    assert local_epsilon(*args, family=VariationRatio.from_ldp) == local_epsilon(*args)
    # a randomizer's own parameters, given directly, are the randomizer's budget
    half = lambda e: HalfVariation(e, Box(1)).amplification_parameters()  # noqa: E731
    assert local_epsilon(*args, family=half) == local_epsilon(*args, family=lambda e: HalfVariation(e, Box(1)))
    assert local_epsilon(*args, family=half) > local_epsilon(*args)


def test_cap_returned_when_every_budget_meets_the_target():
    # with n = 1e6, even eps0 = 2 amplifies far below 1: the caller's cap is the answer
    assert shuffle_epsilon(10**6, 1e-6, eps0=2.0) < 1.0
    assert local_epsilon(1.0, 10**6, 1e-6, max_epsilon=2.0) == 2.0


def test_unreachable_target_raises():
    # a single user gets no amplification: eps0 = 1e-3 stays ~1e-3 > 1e-4
    with pytest.raises(PrivacyParameterError, match="no local epsilon in"):
        local_epsilon(1e-4, 1, 1e-6)


def test_poisson_family_with_infinite_bounds():
    # p = infinity with few users: small budgets give finite, large ones infinite bounds
    n, delta, target = 50, 1e-4, 2.0
    family = lambda lam: VariationRatio.from_pq(math.inf, min(lam, 1.0), 10.0)  # noqa: E731
    lam = local_epsilon(target, n, delta, family=family, max_epsilon=1.0)
    _assert_round_trip(lam, target, lambda x: shuffle_epsilon(n, delta, params=family(x)))


def test_a_family_that_fails_when_called_is_a_named_error_saying_what_a_family_is():
    """Passing the class (KRandomizedResponse needs k) gave a raw TypeError from deep inside the search."""
    with pytest.raises(PrivacyParameterError) as info:
        local_epsilon(1.0, 1000, 1e-6, family=KRandomizedResponse)
    message = str(info.value)
    assert "family must be a callable eps0 -> randomizer" in message
    assert "lambda e: KRandomizedResponse(epsilon=e, k=10)" in message
    assert "KRandomizedResponse'>" in message and "'k'" in message  # what was given, and why it failed
    assert isinstance(info.value.__cause__, TypeError)
    with pytest.raises(PrivacyParameterError, match="epsilon"):  # the family's own named errors pass through
        local_epsilon(1.0, 1000, 1e-6, family=lambda e: KRandomizedResponse(epsilon=-e, k=10))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(target_epsilon=0.0), r"target_epsilon must be a number in \[2\^-52, inf\); got 0.0"),
        (dict(target_epsilon=-1.0), r"target_epsilon must be a number in \[2\^-52, inf\); got -1.0"),
        (dict(delta=1.0), r"delta must be a number in \[1e-300, 1\); got 1.0"),
        (dict(n=0), r"n must be an integer in \[1, 2\^53\]; got 0"),
        (dict(family="laplace"), "family must be 'generic' or a callable"),
        (dict(family=3), "family must be 'generic' or a callable"),
        (dict(family=lambda e: e), "expected a LocalRandomizer or a VariationRatio"),
        (dict(min_epsilon=2.0, max_epsilon=1.0), "min_epsilon must be < max_epsilon"),
        (dict(method="variation-ratio-lower"), "is a lower bound, not an upper bound"),
        (dict(method="no-such-bound"), "unknown bound method"),
    ],
)
def test_bad_input(kwargs, message):
    args = dict(target_epsilon=1.0, n=1000, delta=1e-6) | kwargs
    with pytest.raises(PrivacyParameterError, match=message):
        local_epsilon(**args)


@pytest.mark.parametrize("target, n", [(0.1, 10**6), (1.0, 10**4), (0.5, 1_000)])
def test_the_search_prices_each_local_epsilon_once(target, n):
    """Every bound the inverse asks for costs a full accounting: the shared solver must not price the same eps0
    twice (Brent's method asks again for the bracket's ends, exp(log(x)) may come back an ulp off x, and the
    last check asks again for Brent's root)."""
    asked: list[float] = []

    def amplified(eps0: float) -> float:
        asked.append(eps0)
        return variation_ratio_epsilon(VariationRatio.from_ldp(eps0), n, 1e-6)

    eps0 = largest_within(amplified, target, 1e-3, 50.0)
    assert amplified(eps0) <= target
    distinct = sorted(set(asked[:-1]))
    assert len(distinct) == len(asked) - 1
    assert all(b > math.nextafter(a, math.inf) for a, b in zip(distinct, distinct[1:]))


def test_a_method_that_certifies_nothing_says_why_not_increase_n():
    from shuffledp.accounting import composed_local_epsilon
    from shuffledp.errors import OutsideRegimeError

    with pytest.raises(OutsideRegimeError) as caught:
        composed_local_epsilon(1.0, 10_000, 2e-7, 100_000, population=50_000)
    message = str(caught.value)
    assert "pld certifies nothing even at eps0=0.001" in message and "16777 rounds" in message
    assert "increase n" not in message and "amplifies to inf" not in message


@pytest.mark.parametrize(
    "margin, guess",
    [
        (lambda x: math.log(x / 3.7), None),  # smooth, monotone
        (lambda x: math.log(x / 3.7), 90.0),  # the guess far above the edge
        (lambda x: math.inf if x > 3.7 else -math.inf, 1.5),  # signs only: bisection
        (lambda x: -1.0 if x <= 2.0 or 5.0 <= x <= 6.0 else 1.0, 8.0),  # not monotone: some edge, not the largest
    ],
)
def test_feasible_edge_returns_a_feasible_point_with_an_infeasible_one_within_rtol_above(margin, guess):
    edge = feasible_edge(margin, 1.0, 100.0, rtol=1e-4, max_steps=60, guess=guess)
    assert edge.complete and margin(edge.value) <= 0.0 < margin(edge.above)
    assert edge.value < edge.above <= edge.value * (1.0 + 1e-4)


def test_feasible_edge_aimed_by_a_smooth_margin_takes_few_steps():
    # bisection from [1, 100] to 1e-4 takes ~16 steps; the secant on a smooth margin, from the infeasible side, ~6
    edge = feasible_edge(
        lambda x: 1.4 * math.log(x / 3.7) + 0.1 * math.log(x / 3.7) ** 2, 1.0, 100.0, rtol=1e-4, max_steps=60, guess=9.0
    )
    assert edge.value <= 3.7 < edge.above and edge.steps <= 8


def test_feasible_edge_at_its_step_limit_stops_with_a_feasible_point_and_says_so():
    calls = []
    edge = feasible_edge(
        lambda x: math.inf if x > 3.7 else -math.inf,
        1.0,
        100.0,
        rtol=1e-9,
        max_steps=5,
        progress=lambda *a: calls.append(a),
    )
    assert not edge.complete and edge.steps == 5 and edge.value <= 3.7 < edge.above
    assert calls == [(i, 5) for i in range(1, 6)]


def test_feasible_edge_returns_the_top_when_it_is_feasible_and_the_bottom_when_just_above_it_is_not():
    assert feasible_edge(lambda x: -1.0, 1.0, 100.0, rtol=1e-4, max_steps=60, guess=3.0).value == 100.0
    edge = feasible_edge(lambda x: 1.0, 1.0, 100.0, rtol=1e-4, max_steps=60)
    assert (edge.value, edge.above, edge.steps) == (1.0, 1.0001, 1)
