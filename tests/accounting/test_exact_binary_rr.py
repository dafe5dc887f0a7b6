"""The exact binary-RR accountant is the truth: it matches enumeration of every input assignment and sits
below every upper bound offered for binary RR and above every lower bound (issue "Sound accounting for every
randomizer", deliverable 2)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffledp import shuffle_epsilon
from shuffledp.accounting.exact_rr import (
    MAX_EXACT_N,
    binary_rr_exact_delta,
    binary_rr_exact_epsilon,
    exact_curve,
)
from shuffledp.accounting.personalized import personalized_shuffle_epsilon_lower
from shuffledp.errors import OutsideRegimeError, PrivacyParameterError
from shuffledp.randomizers import KRandomizedResponse
from shuffledp.shuffle_audit import exact_shuffle_delta, exact_shuffle_epsilon


def _rr(eps0: float) -> np.ndarray:
    return KRandomizedResponse(epsilon=eps0, k=2).transition_matrix()


@pytest.mark.parametrize("n", [1, 2, 5, 9])
@pytest.mark.parametrize("eps0", [0.3, 1.0, 2.5])
@pytest.mark.parametrize("epsilon", [0.0, 0.1, 0.4, 1.2])
def test_the_curve_brackets_enumeration_of_every_input_assignment(n, eps0, epsilon):
    truth = exact_shuffle_delta(_rr(eps0), n, epsilon).delta
    upper = binary_rr_exact_delta(eps0, n, epsilon)
    lower = binary_rr_exact_delta(eps0, n, epsilon, upper=False)
    assert lower <= truth <= upper
    assert upper - lower <= 1e-9 * max(truth, 1e-300) + 1e-300 * n


@pytest.mark.parametrize("n", [3, 7])
@pytest.mark.parametrize("eps0", [0.5, 2.0])
def test_the_epsilon_brackets_enumeration(n, eps0):
    truth = exact_shuffle_epsilon(_rr(eps0), n, 1e-3, rtol=1e-10)
    upper = binary_rr_exact_epsilon(eps0, n, 1e-3, rtol=1e-8)
    lower = binary_rr_exact_epsilon(eps0, n, 1e-3, rtol=1e-8, upper=False)
    assert lower <= truth * (1 + 1e-9) and truth <= upper * (1 + 1e-9)
    assert upper <= lower * (1 + 3e-8)


def test_every_assignment_of_the_others_is_searched_not_only_all_zeros():
    """At n = 10, eps0 = 1, eps = 0.5 one other user on input 1 leaks 19% more than all on 0."""
    divergences = exact_curve(1.0, 10).divergences(0.5)
    assert divergences.argmax() == 1 and divergences[1] > 1.15 * divergences[0]
    all_zeros = personalized_shuffle_epsilon_lower(1.0, [1.0] * 9, 0.02, rtol=1e-9)
    worst = binary_rr_exact_epsilon(1.0, 10, 0.02, rtol=1e-9, upper=False)
    assert worst > all_zeros * 1.01


@pytest.mark.parametrize("n", [100, 1_000])
@pytest.mark.parametrize("eps0", [0.5, 1.0, 4.0])
def test_every_upper_bound_for_binary_rr_is_above_the_truth_and_every_lower_bound_below(n, eps0):
    delta = 0.01 / n
    exact_low = binary_rr_exact_epsilon(eps0, n, delta, upper=False)
    exact_high = binary_rr_exact_epsilon(eps0, n, delta)
    specific = shuffle_epsilon(n, delta, params=KRandomizedResponse(epsilon=eps0, k=2).amplification_parameters())
    generic = shuffle_epsilon(n, delta, eps0=eps0)
    assert exact_low <= specific <= generic
    assert personalized_shuffle_epsilon_lower(eps0, [eps0] * (n - 1), delta) <= exact_high
    assert exact_high <= eps0


def test_the_decompositions_stay_well_above_the_truth_at_moderate_n():
    """What the exact curve buys: the blanket bound reveals the blanket count, the count of ones hides it."""
    exact = binary_rr_exact_epsilon(1.0, 1_000, 1e-5)
    blanket = shuffle_epsilon(1_000, 1e-5, params=KRandomizedResponse(epsilon=1.0, k=2).amplification_parameters())
    assert blanket > 1.15 * exact


def test_one_user_is_the_local_randomizer():
    assert binary_rr_exact_delta(math.log(3.0), 1, 0.0) == pytest.approx(0.5, abs=1e-10)
    assert binary_rr_exact_epsilon(math.log(3.0), 1, 1e-9) == pytest.approx(math.log(3.0), rel=1e-6)


@pytest.mark.parametrize(("eps0", "delta"), [(40.0, 1e-6), (0.001, 0.5), (2.0, 1e-300), (700.0, 1e-300)])
def test_edges_give_a_valid_epsilon(eps0, delta):
    upper = binary_rr_exact_epsilon(eps0, 50, delta)
    lower = binary_rr_exact_epsilon(eps0, 50, delta, upper=False)
    assert 0.0 <= lower <= upper <= eps0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(eps0=1.0, n=MAX_EXACT_N + 1, delta=1e-6), "computed up to n = 2000"),
        (dict(eps0=1.0, n=0, delta=1e-6), "n"),
        (dict(eps0="1", n=10, delta=1e-6), "eps0"),
        (dict(eps0=1.0, n=10, delta=1e-320), "delta"),
        (dict(eps0=1.0, n=10, delta=True), "delta"),
        (dict(eps0=1e3, n=10, delta=1e-6), "eps0"),
    ],
)
def test_bad_input_is_a_named_error_quoting_the_value(kwargs, message):
    error = OutsideRegimeError if kwargs["n"] > MAX_EXACT_N else PrivacyParameterError
    with pytest.raises(error, match=message):
        binary_rr_exact_epsilon(**kwargs)


@pytest.mark.parametrize("epsilon", [-0.1, 701.0, math.nan, "0.5"])
def test_a_bad_epsilon_is_refused(epsilon):
    with pytest.raises(PrivacyParameterError, match="epsilon"):
        binary_rr_exact_delta(1.0, 10, epsilon)
