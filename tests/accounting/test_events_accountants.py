"""Privacy events and accountants (issue "Privacy events and accountants")."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from test_composition import (  # tests/accounting is on sys.path (pytest prepend mode)
    exact_delta,
    theorem1_pair,
    three_class_pair,
)

from shuffledp.accounting import closed_form as cf
from shuffledp.accounting import composition as cp
from shuffledp.accounting import events as E
from shuffledp.accounting.accountants import (
    CloneAccountant,
    ClosedFormAccountant,
    VariationRatioAccountant,
    accountant_for,
    calibrate,
)
from shuffledp.accounting.bounds import shuffle_epsilon
from shuffledp.accounting.clones import clone_epsilon, stronger_clone_epsilon
from shuffledp.accounting.inverse import local_epsilon
from shuffledp.accounting.pld_accountant import PLDAccountant
from shuffledp.accounting.variation_ratio import hockey_stick_divergence, variation_ratio_epsilon
from shuffledp.errors import OutsideRegimeError, PrivacyParameterError, UnsupportedEventError
from shuffledp.params import BlanketDecomposition, VariationRatio
from shuffledp.randomizers import KRandomizedResponse, MinkowskiResponse

GENERIC = VariationRatio.from_ldp


# --- events -----------------------------------------------------------------------------


def test_events_are_hashable_and_round_trip_through_json():
    a = E.ShuffleEvent(GENERIC(2.0), 10_000)
    poisson = E.ShuffleEvent(VariationRatio(math.inf, 0.5, 1e20, 1e20), 100, gamma=0.5)
    tree = E.ComposedEvent([a, E.LinkedEvent(a, 3), E.GroupEvent(poisson, 4), E.SelfComposedEvent(a, 80)])
    assert len({a, E.ShuffleEvent(GENERIC(2.0), 10_000), poisson}) == 2
    assert E.event_from_json(E.event_to_json(tree)) == tree
    assert hash(E.event_from_json(E.event_to_json(tree))) == hash(tree)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: E.ComposedEvent([]), "at least one event"),
        (lambda: E.GroupEvent(E.ShuffleEvent(GENERIC(1.0), 10), 0), "size"),
        (lambda: E.SelfComposedEvent("round", 3), "privacy event"),
        (lambda: E.ShuffleEvent(GENERIC(1.0), 0), "n"),
        (lambda: E.ShuffleEvent(GENERIC(1.0), 10, gamma=1.5), "gamma"),
        (lambda: E.LinkedEvent(E.SelfComposedEvent(E.ShuffleEvent(GENERIC(1.0), 10), 2), 2), "links a ShuffleEvent"),
        (lambda: E.event_from_json('{"type": "magic"}'), "unknown event type"),
        (lambda: E.event_from_json("[1, 2]"), "must be an object"),
        (lambda: E.event_from_json('{"type": "shuffle"}'), "malformed"),
    ],
)
def test_bad_events_are_named_errors(make, match):
    with pytest.raises(PrivacyParameterError, match=match):
        make()


def test_every_randomizer_describes_its_own_event():
    R = MinkowskiResponse(3.0, dim=2)
    assert R.shuffle_event(5_000) == E.ShuffleEvent(R.amplification_parameters(), 5_000)


def test_importing_randomizers_does_not_import_the_accountant():
    code = (
        "import sys, shuffledp.randomizers as r; r.MinkowskiResponse(3.0, dim=2).amplification_parameters(); "
        "bad = [m for m in sys.modules if m.startswith('shuffledp.accounting')]; assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- equivalence with the bound functions (same floats) ----------------------------------


@pytest.mark.parametrize("n", [50, 10_000, 10**6])
@pytest.mark.parametrize("eps0", [0.5, 2.0, 8.0])
@pytest.mark.parametrize("delta", [1e-9, 1e-5])
def test_accountants_equal_the_bound_functions(n, eps0, delta):
    ev = E.ShuffleEvent(GENERIC(eps0), n)
    assert VariationRatioAccountant().compose(ev).get_epsilon(delta) == variation_ratio_epsilon(ev.params, n, delta)
    assert CloneAccountant(stronger=True).compose(ev).get_epsilon(delta) == stronger_clone_epsilon(eps0, n, delta)
    assert CloneAccountant(stronger=False).compose(ev).get_epsilon(delta) == clone_epsilon(eps0, n, delta)
    bennett = cf.blanket_bennett_epsilon(math.log(ev.params.p), n, delta)
    acc = ClosedFormAccountant("blanket-bennett").compose(ev)
    if math.isfinite(bennett):
        assert acc.get_epsilon(delta) == bennett
    else:
        with pytest.raises(OutsideRegimeError, match="outside its regime"):
            acc.get_epsilon(delta)
    for method in ("variation-ratio", "stronger-clones", "pic-eq1"):  # a finite bound is also capped at eps0
        priced = _or_inf(lambda method=method: accountant_for(method).compose(ev).get_epsilon(delta))
        assert shuffle_epsilon(n, delta, eps0=eps0, method=method) == (
            min(eps0, priced) if priced < math.inf else priced
        )


def _or_inf(call):
    try:
        return call()
    except OutsideRegimeError:
        return math.inf


def test_randomizer_parameters_give_the_same_floats():
    R = MinkowskiResponse(3.0, dim=2)
    ev = R.shuffle_event(20_000)
    upper = VariationRatioAccountant().compose(ev).get_epsilon(1e-6)
    assert upper == shuffle_epsilon(20_000, 1e-6, params=ev.params)
    # never above the generic eps0-LDP bound (the smaller of the two pairs is kept; docs/which-bound.md)
    assert upper <= shuffle_epsilon(20_000, 1e-6, eps0=3.0, method="stronger-clones")
    # the attainable pair bounds *some* randomizer with these parameters from below, not this one
    with pytest.raises(UnsupportedEventError, match="no lower bound is offered"):
        VariationRatioAccountant().compose(ev).get_epsilon_lower(1e-6)


def test_get_delta_is_consistent_with_get_epsilon():
    ev = E.ShuffleEvent(GENERIC(2.0), 10_000)
    acc = VariationRatioAccountant().compose(ev)
    eps = acc.get_epsilon(1e-6)
    assert acc.get_delta(eps) <= 1e-6 < acc.get_delta(eps * (1 - 1e-5))
    assert acc.get_delta(eps) == hockey_stick_divergence(ev.params, 10_000, eps)[1]


# --- heterogeneous composition -----------------------------------------------------------


def test_pld_composition_of_different_rounds_is_between_the_largest_round_and_basic():
    a, b, c = GENERIC(1.0), BlanketDecomposition(eps0=2.0, beta=0.5), GENERIC(3.0)
    rounds = [E.ShuffleEvent(a, 10_000), E.ShuffleEvent(b, 5_000), E.ShuffleEvent(c, 20_000)]
    delta = 1e-6
    tight = PLDAccountant().compose(E.ComposedEvent(rounds)).get_epsilon(delta)
    largest = max(VariationRatioAccountant().compose(r).get_epsilon(delta) for r in rounds)
    basic = VariationRatioAccountant().compose(E.ComposedEvent(rounds)).get_epsilon(delta)
    assert largest <= tight <= basic
    # recording the rounds one by one is the same event
    acc = PLDAccountant()
    for r in rounds:
        acc.compose(r)
    assert acc.get_epsilon(delta) == tight


@pytest.mark.parametrize("sizes", [(12, 20), (15, 9, 30)])
def test_pld_composition_equals_brute_force_for_small_n(sizes):
    params = [GENERIC(1.5), BlanketDecomposition(eps0=2.0, beta=0.5), GENERIC(0.7)][: len(sizes)]
    P, Q = np.array([1.0]), np.array([1.0])
    for vr, n in zip(params, sizes):
        p1, q1 = three_class_pair(vr, n) if isinstance(vr, BlanketDecomposition) else theorem1_pair(vr, n)
        keep = (p1 > 0) | (q1 > 0)  # the product of the supports only (memory)
        P, Q = np.outer(P, p1[keep]).ravel(), np.outer(Q, q1[keep]).ravel()
    step = 1e-4
    events = [E.ShuffleEvent(vr, n) for vr, n in zip(params, sizes)]
    acc = PLDAccountant(step=step).compose(E.ComposedEvent(events))
    k = len(sizes)
    for eps in (0.3, 1.0, 2.0):
        exact = exact_delta(P, Q, eps)
        assert exact <= acc.get_delta(eps) <= exact_delta(P, Q, eps - k * step) + 1e-10
    target = 1e-3
    eps_tight = acc.get_epsilon(target)
    assert exact_delta(P, Q, eps_tight) <= target < exact_delta(P, Q, eps_tight - (k + 2) * step)


def test_single_distinct_round_matches_tight_composition():
    ev = E.ShuffleEvent(GENERIC(2.0), 10_000)
    assert PLDAccountant().compose(ev, 80).get_epsilon(2e-7) == cp.tight_composition_epsilon(10_000, 2e-7, 80, eps0=2.0)


# --- group and linked events --------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 2, 4])
def test_group_event_meets_the_group_composition_rule(size):
    ev = E.ShuffleEvent(GENERIC(1.0), 50_000)
    delta = 1e-6
    eps = VariationRatioAccountant().compose(E.GroupEvent(ev, size)).get_epsilon(delta)
    single = VariationRatioAccountant().compose(ev)
    if size == 1:  # a group of one item is the event itself (Lemma 1's e^eps factor does not apply)
        assert eps == single.get_epsilon(delta)
    else:
        per_item_delta = single.get_delta(eps / size)
        assert cp.group_composition(eps / size, per_item_delta, size)[1] <= delta  # Lemma 1 at the answer
    assert eps >= size * single.get_epsilon(delta) * (1 - 1e-9)  # never below s times one item


def test_linked_event_is_the_product_randomizer():
    R = KRandomizedResponse(1.0, 3)
    ev = R.shuffle_event(10_000)
    linked = E.LinkedEvent(ev, 3)
    product = E.ShuffleEvent(ev.params.linked(3), 10_000)
    assert VariationRatioAccountant().compose(linked).get_epsilon(1e-6) == VariationRatioAccountant().compose(
        product
    ).get_epsilon(1e-6)
    # the product of 3 k-RR reports: exact worst ratio e^(3 eps), exact total variation from the product table
    M = np.array(R.transition_matrix()) if hasattr(R, "transition_matrix") else None
    if M is not None:
        P0, P1 = M[0], M[1]
        prod0 = np.einsum("i,j,k->ijk", P0, P0, P0).ravel()
        prod1 = np.einsum("i,j,k->ijk", P1, P1, P1).ravel()
        tv = 0.5 * np.abs(prod0 - prod1).sum()
        assert linked.as_shuffle_event().params.beta >= tv * (1 - 1e-12)
        assert math.exp(linked.as_shuffle_event().params.eps0) >= np.max(prod0 / prod1) * (1 - 1e-12)


# --- unsupported events ---------------------------------------------------------------------


def test_accountants_refuse_what_they_cannot_price():
    minkowski = MinkowskiResponse(3.0, dim=2).shuffle_event(10_000)
    generic = E.ShuffleEvent(GENERIC(2.0), 10_000)
    # a randomizer shared by all users is an eps0-LDP population: the clone bound prices it at log p
    clones = CloneAccountant().compose(minkowski).get_epsilon(1e-6)
    assert clones == stronger_clone_epsilon(minkowski.params.eps0, 10_000, 1e-6)
    assert clones >= VariationRatioAccountant().compose(minkowski).get_epsilon(1e-6)
    poisson_like = E.ShuffleEvent(VariationRatio(p=math.inf, beta=0.5, q0=3.0, q1=3.0), 10_000)
    assert not CloneAccountant().supports(poisson_like)
    with pytest.raises(UnsupportedEventError, match="eps0-LDP populations"):
        CloneAccountant().compose(poisson_like)
    assert not PLDAccountant().supports(E.GroupEvent(generic, 2))
    with pytest.raises(UnsupportedEventError, match="group"):
        PLDAccountant().compose(E.GroupEvent(generic, 2))
    with pytest.raises(UnsupportedEventError, match="one release"):
        ClosedFormAccountant("pic-eq1").compose(E.SelfComposedEvent(generic, 2))
    with pytest.raises(UnsupportedEventError, match="epsilon at a delta"):
        ClosedFormAccountant("pic-eq1").compose(generic).get_delta(0.5)
    with pytest.raises(OutsideRegimeError, match="outside its regime"):
        ClosedFormAccountant("pic-eq1").compose(E.ShuffleEvent(GENERIC(2.0), 100)).get_epsilon(1e-6)
    with pytest.raises(UnsupportedEventError, match="no event"):
        VariationRatioAccountant().get_epsilon(1e-6)
    poisson = E.ShuffleEvent(VariationRatio(p=math.inf, beta=0.5, q0=1.01, q1=1.01), 10)
    with pytest.raises(OutsideRegimeError, match="no finite epsilon"):
        VariationRatioAccountant().compose(poisson).get_epsilon(1e-6)


# --- calibrate ----------------------------------------------------------------------------------


@pytest.mark.parametrize("target", [0.1, 1.0, 3.0])
def test_calibrate_round_trips_every_inverse(target):
    n, delta = 10_000, 1e-6
    eps0 = local_epsilon(target, n, delta)
    reached = shuffle_epsilon(n, delta, eps0=eps0)
    assert reached <= target and reached >= target * (1 - 1e-6)
    for method, accountant in (("tight", PLDAccountant()), ("basic", VariationRatioAccountant())):
        per_round = cp.composed_local_epsilon(target * 4, n, delta, 5, method=method)
        reached = accountant.compose(E.SelfComposedEvent(E.ShuffleEvent(GENERIC(per_round), n), 5)).get_epsilon(delta)
        assert target * 4 * (1 - 1e-6) <= reached <= target * 4
    R = MinkowskiResponse
    budget = calibrate(lambda e: R(e, dim=2).shuffle_event(n), target, delta)
    reached = VariationRatioAccountant().compose(R(budget, dim=2).shuffle_event(n)).get_epsilon(delta)
    assert target * (1 - 1e-6) <= reached <= target


def test_calibrate_bad_input():
    make = lambda e: E.ShuffleEvent(GENERIC(e), 1000)  # noqa: E731
    with pytest.raises(PrivacyParameterError, match="bracket"):
        calibrate(make, 1.0, 1e-6, bracket=(2.0, 1.0))
    with pytest.raises(PrivacyParameterError, match="target_epsilon"):
        calibrate(make, 0.0, 1e-6)
    with pytest.raises(PrivacyParameterError, match="target_delta"):
        calibrate(make, 1.0, 0.0)
    with pytest.raises(PrivacyParameterError, match="no local epsilon"):
        calibrate(make, 1e-4, 1e-6, bracket=(1.0, 2.0))


def test_edge_inputs_of_the_accountants_are_named_errors_or_safe():
    with pytest.raises(PrivacyParameterError, match="privacy event"):
        VariationRatioAccountant().compose("round 1")
    with pytest.raises(PrivacyParameterError, match="rtol"):
        VariationRatioAccountant(rtol=-1.0)
    # k log p beyond the accountant's range (700) is refused; p = inf links to p = inf, q^k
    with pytest.raises(
        PrivacyParameterError,
        match=r"2 \* log\(p\) must be a number in \[1e-6, 700\]; got 1200.0 \(e\^\(2 \* log\(p\)\) must fit",
    ):
        VariationRatio.from_ldp(600.0).linked(2)
    with pytest.raises(PrivacyParameterError, match=r"2 \* eps0 must be a number in \[1e-6, 700\]; got 1200.0"):
        BlanketDecomposition.from_ldp(600.0).linked(2)
    linked = VariationRatio(p=math.inf, beta=0.5, q0=2.0, q1=2.0).linked(2)
    assert linked.p == math.inf and linked.q == 4.0 and linked.beta == 0.75
    poisson = E.ShuffleEvent(VariationRatio(p=math.inf, beta=0.5, q0=2.0, q1=2.0), 3)
    with pytest.raises(OutsideRegimeError):
        PLDAccountant().compose(poisson).get_epsilon(1e-6)


def test_more_edge_inputs_are_named_errors():
    ev = E.ShuffleEvent(GENERIC(2.0), 10_000)
    acc = VariationRatioAccountant().compose(ev)
    assert acc.get_delta(710.0) == 0.0 and acc.get_delta(1e6) == 0.0  # beyond log p: pure DP
    group = VariationRatioAccountant().compose(E.GroupEvent(ev, 2))
    assert group.get_delta(50.0) == 0.0 and group.get_delta(700.0) == 0.0  # beyond 2 log p
    single = PLDAccountant().compose(ev)
    assert single.get_delta(0.1) == acc.get_delta(0.1)  # one round: the pair itself
    for call, match in (
        (lambda: acc.supports("x"), "privacy event"),
        (lambda: E.ComposedEvent(ev), "sequence of events"),
        (lambda: E.event_from_json(5), "must be a string"),
        (lambda: PLDAccountant(step="x"), "step"),
        (lambda: PLDAccountant(step=0.0), "step"),
        (lambda: calibrate(lambda e: ev, 1.0, 1e-6, bracket=(1,)), "bracket"),
        (lambda: calibrate(lambda e: ev, 1.0, 1e-6, accountant=VariationRatioAccountant), "Accountant instance"),
        (lambda: calibrate("not callable", 1.0, 1e-6), "callable"),
    ):
        with pytest.raises(PrivacyParameterError, match=match):
            call()
