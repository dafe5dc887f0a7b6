"""Personalized accountant at the edges of its input: budget range, one victim, huge populations
from (budget, count) groups, degenerate input, no bools or strings, k only for k-RR, and the
monotonicity the CLI's budget rounding relies on (the streamed count laws: test_count_law.py)."""

from __future__ import annotations

import math
import tracemalloc
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffledp.accounting import personalized as P
from shuffledp.accounting.accountants import CloneAccountant, VariationRatioAccountant
from shuffledp.accounting.events import PersonalizedShuffleEvent, event_from_dict
from shuffledp.errors import NoCloneBoundError, PrivacyParameterError, ShapeError


@pytest.fixture(autouse=True)
def _warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# ----------------------------------------------------------------------------- 1. budget range


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda b: P.personalized_shuffle_epsilon(b, [1.0] * 999, 1e-6), "victim_eps"),
        (lambda b: P.personalized_shuffle_epsilon(1.0, [1.0, b], 1e-6), "others_eps"),
        (lambda b: P.personalized_shuffle_epsilon_lower(b, [1.0] * 999, 1e-6), "victim_eps"),
        (lambda b: P.personalized_shuffle_epsilons([1.0, b], 1e-6), "budgets"),
        (lambda b: P.personalized_shuffle_epsilons_lower([1.0, b], 1e-6), "budgets"),
        (lambda b: P.personalized_shuffle_delta(b, [1.0], 0.5), "victim_eps"),
        (lambda b: P.clone_capacity(1.0, b), "other_eps"),
        (lambda b: P.eapes_mu([1.0, b]), "eps"),
        (lambda b: P.eapes_epsilon([1.0, b], 1e-6), "others_eps"),
        (lambda b: P.weakest_budget_epsilon(10, [1.0, b], 1e-6), "budgets"),
        (lambda b: PersonalizedShuffleEvent(b, ()), "victim_epsilon"),
        (lambda b: PersonalizedShuffleEvent.from_budgets(1.0, [b]), "others_epsilon"),
    ],
)
@pytest.mark.parametrize("bad", [700.0 * (1 + 1e-15), 710.0, 1000.0, 1e-6 * (1 - 1e-15), 1e-300, 0.0])
def test_budgets_outside_1e_6_to_700_are_refused_by_name(call, name, bad):
    with pytest.raises(PrivacyParameterError, match=rf"{name}(\[\d\])? must be a number in \[1e-6, 700\]; got {bad!r}"):
        call(bad)


def test_the_budget_message_gives_the_index():
    with pytest.raises(PrivacyParameterError, match=r"^budgets\[1\] must be a number in \[1e-6, 700\]; got 1000.0$"):
        P.check_budgets([1.0, 1000.0], "budgets")
    assert (P.MIN_BUDGET, P.MAX_BUDGET) == (1e-6, 700.0)


@pytest.mark.parametrize("edge", [1e-6, 700.0])
def test_budgets_at_both_ends_work_everywhere_without_warnings(edge):
    for family, k in [("binary-rr", None), ("k-rr", 3), ("laplace", None)]:
        up = P.personalized_shuffle_epsilon(edge, [1.0] * 99, 1e-6, family, k=k)
        assert 0.0 <= up <= edge * (1 + 1e-12)
        assert 0.0 <= P.personalized_shuffle_epsilon(1.0, [edge] * 99, 1e-6, family, k=k) <= 1.0 + 1e-12
        _, eps = P.personalized_shuffle_epsilons([1.0, edge, edge], 1e-6, family, k=k)
        assert np.all(eps <= np.array(sorted([1.0, edge])) * (1 + 1e-12))
        assert 0.0 <= P.personalized_shuffle_delta(edge, [edge] * 9, 0.0, family, k=k) <= 1.0
    _, lo = P.personalized_shuffle_epsilons_lower([1.0, edge, edge], 1e-6)
    assert np.all(lo >= 0.0)
    assert 0.0 <= P.personalized_shuffle_epsilon_lower(edge, [edge] * 99, 1e-6) <= edge


def test_capacities_and_eapes_at_700():
    assert 0.0 < P.clone_capacity(1, 700) <= 2 / (1 + math.exp(700))
    assert P.clone_capacity(700, 1, "k-rr", k=3) == pytest.approx(2 / (math.e + 2), rel=1e-14)
    # both at 700: e^eps_v e^eps_o overflowed to a zero capacity before; the exact value is 2/(e^700 + 2) (1 + 1/(e^700 + 1))
    assert P.clone_capacity(700, 700, "k-rr", k=3) == pytest.approx(2 / (math.exp(700) + 2), rel=1e-14)
    mu = P.eapes_mu([700.0] * 3)
    assert mu == pytest.approx(math.sqrt(2 / (3 / (1 + math.exp(700)))), rel=1e-12)
    assert P.eapes_epsilon([700.0] * 3, 1e-6) == math.inf  # delta_mu(eps) ~ 1 for every eps <= 700
    with pytest.raises(PrivacyParameterError, match=r"eps\[0\] must be a number in \[1e-6, 700\]; got"):
        P.eapes_mu([800.0] * 3)


# ----------------------------------------------------------------------------- 2. one victim


@pytest.mark.parametrize(
    "call, pointer",
    [
        (lambda: P.personalized_shuffle_epsilon([1.0, 2.0], [1.0] * 9, 1e-6), "personalized_shuffle_epsilons"),
        (lambda: P.personalized_shuffle_epsilon(np.array([1.0]), [1.0] * 9, 1e-6), "personalized_shuffle_epsilons"),
        (
            lambda: P.personalized_shuffle_epsilon_lower([1.0, 2.0], [1.0] * 9, 1e-6),
            "personalized_shuffle_epsilons_lower",
        ),
        (lambda: P.personalized_shuffle_delta([1.0, 2.0], [1.0] * 9, 0.5), "one call per victim"),
        (lambda: PersonalizedShuffleEvent([1.0, 2.0], ()), "one event per victim"),
    ],
)
def test_victim_budget_must_be_one_number(call, pointer):
    with pytest.raises(
        ShapeError, match=rf"victim_eps(ilon)? must be one budget, got .*; for a bound per user use {pointer}"
    ):
        call()


# ----------------------------------------------------------------------------- 3. huge populations


def test_others_counts_give_the_same_bounds_as_one_budget_per_user():
    values, counts = np.array([0.3, 0.9, 2.0]), np.array([400, 1, 250])
    per_user = np.repeat(values, counts)
    for family, k in [("binary-rr", None), ("k-rr", 4), ("laplace", None)]:
        grouped = P.personalized_shuffle_epsilon(0.9, values, 1e-6, family, k=k, others_counts=counts)
        assert grouped == P.personalized_shuffle_epsilon(0.9, per_user, 1e-6, family, k=k)
        assert P.personalized_shuffle_delta(
            0.9, values, 0.05, family, k=k, others_counts=counts
        ) == P.personalized_shuffle_delta(0.9, per_user, 0.05, family, k=k)
    assert P.personalized_shuffle_epsilon_lower(
        0.9, values, 1e-6, others_counts=counts, others_inputs=[1, 0, 1]
    ) == P.personalized_shuffle_epsilon_lower(0.9, per_user, 1e-6, others_inputs=np.repeat([1, 0, 1], counts))


def test_large_populations_are_priced_from_groups_in_little_memory():
    tracemalloc.start()
    try:
        ev = PersonalizedShuffleEvent(5.0, ((5.0, 10**7), (6.0, 10**7)))
        eps = VariationRatioAccountant().compose(ev).get_epsilon(1e-6)
        weakest = P.weakest_budget_epsilon(10**7, [5.0], 1e-6)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20e6  # one float per user would be 160 MB
    assert 0.0 < eps < 5.0 and 0.0 < weakest < 5.0
    assert weakest == P.personalized_shuffle_epsilon(5.0, [5.0], 1e-6, others_counts=[10**7 - 1])


def test_laws_too_wide_to_compute_are_refused_with_the_limit():
    with pytest.raises(PrivacyParameterError, match="MAX_COUNT_WIDTH = 1,048,576"):
        VariationRatioAccountant().compose(PersonalizedShuffleEvent(1.0, ((1.0, 2**40),))).get_epsilon(1e-6)
    with pytest.raises(PrivacyParameterError, match="its law would need about"):
        P.weakest_budget_epsilon(10**12, [1.0], 1e-6)
    with pytest.raises(PrivacyParameterError, match="MAX_COUNT_WIDTH"):
        P.personalized_shuffle_epsilon_lower(1.0, [1.0], 1e-6, others_counts=[2**40])
    # 2^53 users are accepted when the clone count is narrow (tiny capacities)
    ev = PersonalizedShuffleEvent(30.0, ((30.0, 2**53 - 1),))
    assert 0.0 < CloneAccountant().compose(ev).get_epsilon(1e-6) <= 30.0


@pytest.mark.parametrize(
    "counts, match",
    [
        ([1, -1], r"others_counts\[1\] must be an integer in \[0, 2\^53\); got -1.0"),
        ([1, 2.5], r"others_counts\[1\] must be an integer in .*; got 2.5"),
        ([1, True], r"others_counts\[1\] must be a number; got True"),
        ([2**52, 2**52], "must sum to fewer than 2\\^53"),
        ([1], r"others_counts must have one count per budget \(2\), got 1"),
    ],
)
def test_bad_counts(counts, match):
    with pytest.raises((PrivacyParameterError, ShapeError), match=match):
        P.personalized_shuffle_epsilon(1.0, [1.0, 2.0], 1e-6, others_counts=counts)


def test_k_rr_population_uses_groups_and_matches_one_victim_at_a_time():
    budgets = np.repeat([0.4, 1.0, 2.5], [300, 1, 200])
    values, eps = P.personalized_shuffle_epsilons(budgets, 1e-6, "k-rr", k=5)
    for v, e in zip(values, eps):
        others = np.delete(budgets, int(np.flatnonzero(budgets == v)[0]))
        assert e == P.personalized_shuffle_epsilon(v, others, 1e-6, "k-rr", k=5)


# ----------------------------------------------------------------------------- 4. degenerate input


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: P.eapes_mu([]), "eps must hold at least one budget"),
        (lambda: P.eapes_epsilon([], 1e-6), "others_eps must hold at least one budget"),
        (lambda: P.personalized_shuffle_epsilons([], 1e-6), "budgets must hold at least one budget"),
        (lambda: P.personalized_shuffle_epsilons_lower([], 1e-6), "budgets must hold at least one budget"),
        (lambda: P.weakest_budget_epsilon(10, [], 1e-6), "budgets must hold at least one budget"),
        (
            lambda: P.weakest_budget_epsilon(2, [0.5] * 10, 1e-6),
            r"n must be an integer in \[10, 2\^53\]; got 2 \(at least the number of budgets, 10\)",
        ),
        (
            lambda: P.weakest_budget_epsilon(2**53 + 1, [0.5], 1e-6),
            r"n must be an integer in \[1, 2\^53\]; got 9007199254740993",
        ),
        (lambda: P.personalized_shuffle_epsilon("abc", [1.0], 1e-6), "victim_eps must be a number; got 'abc'"),
        (
            lambda: P.personalized_shuffle_epsilon(1.0, [1.0, "abc"], 1e-6),
            r"others_eps\[1\] must be a number; got 'abc'",
        ),
        (
            lambda: P.personalized_shuffle_epsilon(1.0, [1.0, None], 1e-6),
            r"others_eps\[1\] must be a number; got None",
        ),
        (
            lambda: P.personalized_shuffle_epsilon(1.0, [[1.0], [1.0, 2.0]], 1e-6),
            r"others_eps\[0\] must be a number; got \[1.0\]",
        ),
        (lambda: P.eapes_epsilon([1.0] * 9, 1e-6, berry_esseen="1"), "berry_esseen must be a number; got '1'"),
        (lambda: P.eapes_mu([1.0], [0.1, 0.2]), r"deltas must have one entry per entry of eps \(1\), got 2"),
    ],
)
def test_degenerate_input_gets_one_line_named_errors(call, match):
    with pytest.raises((PrivacyParameterError, ShapeError)) as info:
        call()
    assert "\n" not in str(info.value)
    assert info.match(match)


def test_victim_alone_is_still_priced():
    # n = 1: no other users, the victim's own randomized response
    a = math.exp(0.5) / (1 + math.exp(0.5))
    assert P.personalized_shuffle_epsilon(0.5, [], 1e-6) == pytest.approx(math.log((a - 1e-6) / (1 - a)), rel=2e-6)
    assert P.personalized_shuffle_epsilons([0.5], 1e-6)[1][0] == P.personalized_shuffle_epsilon(0.5, [], 1e-6)


# ----------------------------------------------------------------------------- 5. no bools or strings


_STRING_AND_BOOL_CALLS = [
    (lambda x: P.personalized_shuffle_epsilon(x, [1.0], 1e-6), "victim_eps"),
    (lambda x: P.personalized_shuffle_epsilon(1.0, [x], 1e-6), "others_eps"),
    (lambda x: P.personalized_shuffle_epsilon(1.0, [1.0], x), "delta"),
    (lambda x: P.personalized_shuffle_epsilon(1.0, [1.0], 1e-6, rtol=x), "rtol"),
    (lambda x: P.personalized_shuffle_epsilon(1.0, [1.0], 1e-6, others_counts=[x]), "others_counts"),
    (lambda x: P.personalized_shuffle_epsilons([1.0, x], 1e-6), "budgets"),
    (lambda x: P.personalized_shuffle_epsilons([1.0], x), "delta"),
    (lambda x: P.personalized_shuffle_epsilons_lower([x], 1e-6), "budgets"),
    (lambda x: P.personalized_shuffle_epsilon_lower(1.0, [1.0], x), "delta"),
    (lambda x: P.personalized_shuffle_delta(1.0, [1.0], x), "epsilon"),
    (lambda x: P.personalized_shuffle_delta(1.0, [1.0], 0.5, tail_mass=x), "tail_mass"),
    (lambda x: P.personalized_divergence(x, [1.0]), "victim_eps"),
    (lambda x: P.clone_capacity(x, 1.0), "victim_eps"),
    (lambda x: P.clone_capacity(1.0, x), "other_eps"),
    (lambda x: P.eapes_mu([x]), "eps"),
    (lambda x: P.eapes_mu([1.0], [x]), "deltas"),
    (lambda x: P.eapes_epsilon([1.0], x), "delta"),
    (lambda x: P.eapes_epsilon([1.0], 1e-6, berry_esseen=x), "berry_esseen"),
    (lambda x: P.gdp_delta(x, 1.0), "eps"),
    (lambda x: P.gdp_delta(0.5, x), "mu"),
    (lambda x: P.weakest_budget_epsilon(x, [1.0], 1e-6), "n"),
    (lambda x: P.weakest_budget_epsilon(10, [x], 1e-6), "budgets"),
    (lambda x: P.poisson_binomial([x]), "probs"),
    (lambda x: P.poisson_binomial([0.5], cut=x), "cut"),
    (lambda x: P.check_budgets(x, "budgets"), "budgets"),
    (lambda x: PersonalizedShuffleEvent(x, ()), "victim_epsilon"),
    (lambda x: PersonalizedShuffleEvent(1.0, ((x, 2),)), "others budget"),
    (lambda x: PersonalizedShuffleEvent(1.0, ((1.0, x),)), "others count"),
    (lambda x: PersonalizedShuffleEvent.from_budgets(1.0, [x]), "others_epsilon"),
]


@pytest.mark.parametrize("value", ["1", "1e-6", "0.5", True, np.bool_(True), np.str_("1.0")])
@pytest.mark.parametrize("call, name", _STRING_AND_BOOL_CALLS)
def test_strings_and_bools_are_refused_by_name(call, name, value):
    with pytest.raises(PrivacyParameterError, match=name):
        call(value)


@pytest.mark.parametrize("array", [np.array([True, True]), np.array(["1.0", "2.0"])])
def test_bool_and_string_arrays_are_refused(array):
    with pytest.raises(PrivacyParameterError, match=r"budgets\[0\] must be a number; got"):
        P.personalized_shuffle_epsilons(array, 1e-6)
    with pytest.raises(PrivacyParameterError, match=r"others_eps\[0\] must be a number; got"):
        P.personalized_shuffle_epsilon(1.0, array, 1e-6)


@pytest.mark.parametrize("k", ["3", True, 2.5])
def test_k_must_be_an_integer(k):
    with pytest.raises(NoCloneBoundError, match="k"):
        P.personalized_shuffle_epsilon(1.0, [1.0], 1e-6, "k-rr", k=k)


@pytest.mark.parametrize("value", ["1", "0", np.str_("1")])
def test_others_inputs_are_bits_or_bools_never_strings(value):
    with pytest.raises(PrivacyParameterError, match=r"others_inputs\[0\] must be a number or a bool; got"):
        P.personalized_shuffle_epsilon_lower(1.0, [1.0], 1e-6, others_inputs=[value])
    bits = np.array([True, False, True])
    assert P.personalized_shuffle_epsilon_lower(
        1.0, [0.5, 1.0, 2.0], 1e-6, others_inputs=bits
    ) == P.personalized_shuffle_epsilon_lower(1.0, [0.5, 1.0, 2.0], 1e-6, others_inputs=[1, 0, 1])


def test_numpy_numbers_are_accepted():
    ref = P.personalized_shuffle_epsilon(1.0, [1.0] * 9, 1e-6)
    assert P.personalized_shuffle_epsilon(np.float64(1.0), np.ones(9, dtype=np.float32), np.float64(1e-6)) == ref
    assert (
        P.personalized_shuffle_epsilon(1, np.ones(9, dtype=np.int64), 1e-6, others_counts=np.ones(9, np.int32)) == ref
    )


def test_event_json_with_string_budgets_is_refused():
    with pytest.raises(PrivacyParameterError, match="victim_epsilon must be a number"):
        event_from_dict({"type": "personalized", "victim_epsilon": "1.0", "others": [[1.0, 2]]})


# ----------------------------------------------------------------------------- 6. k only for k-RR


@pytest.mark.parametrize("family", ["binary-rr", "laplace"])
def test_k_is_only_for_k_rr(family):
    with pytest.raises(PrivacyParameterError, match=f"k is only for family 'k-rr', got k=3 with family '{family}'"):
        PersonalizedShuffleEvent.from_budgets(1.0, [1.0], family, 3)
    with pytest.raises(PrivacyParameterError, match="k is only for family 'k-rr'"):
        P.personalized_shuffle_epsilon(1.0, [1.0], 1e-6, family, k=3)
    assert PersonalizedShuffleEvent.from_budgets(1.0, [1.0], family).k is None


# ----------------------------------------------------------------------------- 7. monotonicity (budget rounding)


_BUDGET = st.floats(1e-6, 700.0, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(v=_BUDGET, o1=_BUDGET, o2=_BUDGET, family=st.sampled_from([("binary-rr", None), ("k-rr", 3), ("k-rr", 10)]))
def test_clone_capacity_is_nonincreasing_in_the_other_budget(v, o1, o2, family):
    lo, hi = sorted((o1, o2))
    assert P.clone_capacity(v, hi, *family) <= P.clone_capacity(v, lo, *family)


def test_laplace_clone_capacity_is_not_monotone_in_the_other_budget():
    # (eps_o / eps_v) e^-eps_o grows for eps_o < 1, and drops to 0 once eps_o > eps_v
    assert P.clone_capacity(2.0, 0.5, "laplace") > P.clone_capacity(2.0, 0.1, "laplace")
    assert P.clone_capacity(2.0, 2.5, "laplace") == 0.0 < P.clone_capacity(2.0, 1.5, "laplace")


@settings(max_examples=25, deadline=None)
@given(
    v1=st.floats(0.01, 5.0),
    v2=st.floats(0.01, 5.0),
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 400),
    family=st.sampled_from([("binary-rr", None), ("k-rr", 3), ("k-rr", 10)]),
)
def test_upper_bound_is_nondecreasing_in_the_victim_budget(v1, v2, seed, n, family):
    others = np.random.default_rng(seed).uniform(0.05, 3.0, n - 1)
    lo, hi = sorted((v1, v2))
    fam, k = family
    assert P.personalized_shuffle_epsilon(lo, others, 1e-5, fam, k=k) <= P.personalized_shuffle_epsilon(
        hi, others, 1e-5, fam, k=k
    )
