"""Tight composition of rounds with a randomizer's own decomposition keeps the better of its two proven pairs.

Both the three-class pair of the randomizer's own decomposition and the generic eps0-LDP pair
dominate such a round (docs/which-bound.md); which one composes better depends on the setting, so
`PLDAccountant` returns the smaller composition, and `pld(pair=...)` hands out either PLD.
"""

import pytest

from shuffledp.accounting import PLDAccountant, composed_local_epsilon, composed_shuffle_epsilon
from shuffledp.accounting.events import SampledEvent, SelfComposedEvent, ShuffleEvent
from shuffledp.errors import PrivacyParameterError
from shuffledp.params import VariationRatio
from shuffledp.randomizers import KRandomizedResponse, MinkowskiResponse

DELTA = 0.01 / 50_000
N = 10_000
ROUNDS = 80
TAIL = 1e-4 * DELTA  # the tail get_epsilon gives its PLDs


def _minkowski(eps0: float):
    return MinkowskiResponse(epsilon=eps0, dim=6, norm="linf").amplification_parameters()


def _composed(params, rounds: int = ROUNDS) -> PLDAccountant:
    return PLDAccountant().compose(ShuffleEvent(params, N), rounds)


@pytest.mark.parametrize("eps0", [2.0, 4.0])
def test_minkowski_rounds_never_compose_worse_than_the_generic_pair(eps0):
    own = _composed(_minkowski(eps0)).get_epsilon(DELTA)
    generic = _composed(VariationRatio.from_ldp(eps0)).get_epsilon(DELTA)
    assert own <= generic


def test_the_result_is_the_smaller_of_the_two_compositions():
    acc = _composed(_minkowski(4.0))
    by_own = float(acc.pld(pair="own", tail_mass=TAIL).epsilon(DELTA))
    by_generic = float(acc.pld(pair="generic", tail_mass=TAIL).epsilon(DELTA))
    assert by_generic < by_own  # at eps0 = 4 the generic pair composes better (4.70 vs 5.29)
    assert acc.get_epsilon(DELTA) == pytest.approx(min(by_own, by_generic), rel=1e-12)
    at = by_generic * 1.02
    assert acc.get_delta(at) <= acc.pld(pair="generic").delta(at) * (1 + 1e-12)
    assert acc.get_delta(at) <= DELTA


def test_the_own_pair_is_kept_where_it_composes_better():
    acc = _composed(_minkowski(2.0))
    by_own = float(acc.pld(pair="own", tail_mass=TAIL).epsilon(DELTA))
    assert by_own < float(acc.pld(pair="generic", tail_mass=TAIL).epsilon(DELTA))
    assert acc.get_epsilon(DELTA) == pytest.approx(by_own, rel=1e-12)


def test_heterogeneous_rounds_take_the_better_candidate():
    mixed = PLDAccountant()
    mixed.compose(ShuffleEvent(_minkowski(4.0), N), 40).compose(
        ShuffleEvent(KRandomizedResponse(1.0, 10).amplification_parameters(), N), 40
    )
    generic = PLDAccountant()
    generic.compose(ShuffleEvent(VariationRatio.from_ldp(4.0), N), 40).compose(
        ShuffleEvent(VariationRatio.from_ldp(1.0), N), 40
    )
    assert mixed.get_epsilon(DELTA) <= generic.get_epsilon(DELTA)


def test_composition_helpers_inherit_it():
    params = _minkowski(4.0)
    assert composed_shuffle_epsilon(N, DELTA, ROUNDS, params=params) <= composed_shuffle_epsilon(
        N, DELTA, ROUNDS, eps0=4.0
    )
    family = lambda eps0: MinkowskiResponse(epsilon=eps0, dim=6, norm="linf")  # noqa: E731
    own_budget = composed_local_epsilon(3.0, N, DELTA, 20, family=family, method="tight")
    generic_budget = composed_local_epsilon(3.0, N, DELTA, 20, method="tight")
    assert own_budget >= generic_budget * (1 - 1e-3)


def test_a_sampled_round_has_one_public_pld():
    sampled = SampledEvent(ShuffleEvent(VariationRatio.from_ldp(4.0), N), N, 50_000)
    acc = PLDAccountant().compose(sampled, ROUNDS)
    pld = acc.pld()
    assert pld.epsilon(DELTA) >= acc.get_epsilon(DELTA) * (1 - 1e-9)
    assert acc.pld(pair="generic").epsilon(DELTA) == pld.epsilon(DELTA)  # no own decomposition: one candidate
    one = PLDAccountant().compose(sampled).pld()
    assert one.epsilon(1e-6) >= PLDAccountant().compose(sampled).get_epsilon(1e-6)


@pytest.mark.parametrize("pair", ["mine", "", None, 1])
def test_pld_refuses_an_unknown_pair(pair):
    acc = _composed(VariationRatio.from_ldp(1.0), 2)
    with pytest.raises(PrivacyParameterError, match=r"pair must be one of own, generic, got"):
        acc.pld(pair=pair)


def test_pld_of_nothing_recorded_is_refused():
    from shuffledp.errors import UnsupportedEventError

    with pytest.raises(UnsupportedEventError, match="recorded no event"):
        PLDAccountant().pld()


def test_self_composed_event_is_the_same_as_count():
    params = _minkowski(4.0)
    a = PLDAccountant().compose(SelfComposedEvent(ShuffleEvent(params, N), ROUNDS)).get_epsilon(DELTA)
    assert a == _composed(params).get_epsilon(DELTA)
