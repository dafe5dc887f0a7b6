"""One rule for numbers across the API (issue 16): a real parameter given as a string or a bool is refused,
as a count given as ``'10000'`` always was; the command line reads its own text first."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffledp import VariationRatio, local_epsilon, shuffle_epsilon
from shuffledp.accounting import composed_shuffle_epsilon, group_composition
from shuffledp.accounting.accountants import VariationRatioAccountant, calibrate
from shuffledp.accounting.events import ShuffleEvent
from shuffledp.accounting.personalized import personalized_shuffle_epsilon
from shuffledp.errors import PrivacyParameterError

CALLS = {
    "eps0": lambda v: shuffle_epsilon(10_000, 1e-6, eps0=v),
    "delta": lambda v: shuffle_epsilon(10_000, v, eps0=2.0),
    "target_epsilon": lambda v: local_epsilon(v, 10_000, 1e-6),
    "epsilon": lambda v: group_composition(v, 1e-6, 2),
    "target_delta": lambda v: calibrate(lambda e: ShuffleEvent(VariationRatio.from_ldp(e), 100), 1.0, v),
    "rtol": lambda v: VariationRatioAccountant(rtol=v),
    "victim_eps": lambda v: personalized_shuffle_epsilon(v, [1.0], 1e-6),
}
TEXT = {
    "eps0": "2",
    "delta": "1e-6",
    "target_epsilon": "1",
    "epsilon": "0.5",
    "target_delta": "1e-6",
    "rtol": "1e-7",
    "victim_eps": "1",
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_numeric_string_is_refused_like_a_count_string(name):
    with pytest.raises(PrivacyParameterError, match=f"{name} must (be a number|contain numbers only)"):
        CALLS[name](TEXT[name])
    with pytest.raises(PrivacyParameterError, match="n must be an integer"):
        shuffle_epsilon("10000", 1e-6, eps0=2.0)


@pytest.mark.parametrize("value", [True, np.bool_(True), b"2"])
def test_bools_and_bytes_are_not_numbers(value):
    with pytest.raises(PrivacyParameterError, match="eps0 must be a number"):
        shuffle_epsilon(10_000, 1e-6, eps0=value)


def test_numpy_scalars_and_ints_are_numbers():
    assert shuffle_epsilon(10_000, np.float64(1e-6), eps0=np.float32(2.0)) == shuffle_epsilon(10_000, 1e-6, eps0=2.0)
    assert composed_shuffle_epsilon(1000, 1e-6, 2, eps0=1, method="basic") > 0


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: shuffle_epsilon("10000", 1e-6, eps0=2.0), "n"),
        (lambda: shuffle_epsilon(10_000, 1e-6, eps0="2"), "eps0"),
        (lambda: shuffle_epsilon(10_000, "1e-6", eps0=2.0), "delta"),
        (lambda: local_epsilon(1.0, "10000", 1e-6), "n"),
    ],
)
def test_a_string_for_a_number_is_one_named_error_class_both_a_type_and_a_parameter_error(call, name):
    """n='10000' and eps0='2' are refused alike: a ParameterTypeError, caught by TypeError and PrivacyParameterError."""
    from shuffledp import ParameterTypeError

    with pytest.raises(ParameterTypeError, match=rf"^{name} must be (a number|an integer) in .*; got '") as info:
        call()
    assert isinstance(info.value, TypeError) and isinstance(info.value, PrivacyParameterError)


@pytest.mark.parametrize("delta", [0.0, 1e-320, 1.0, math.nan])
def test_delta_has_one_wording_below_and_above_its_range(delta):
    """Below 1e-300 it said 'must be at least 1e-300 (and below 1)', at 0 or 1 'must lie in (0, 1)'."""
    with pytest.raises(PrivacyParameterError, match=r"^delta must be a number in \[1e-300, 1\); got "):
        shuffle_epsilon(10_000, delta, eps0=2.0)


def test_range_ends_come_from_where_they_are_defined():
    from shuffledp.accounting._rounding import DELTA_MIN, DELTA_RANGE, EPS0_RANGE, N_MAX, N_RANGE
    from shuffledp.params import EPS0_MAX, EPS0_MIN

    assert (DELTA_RANGE.low, str(DELTA_RANGE)) == (DELTA_MIN, "[1e-300, 1)")
    assert (EPS0_RANGE.low, EPS0_RANGE.high, str(EPS0_RANGE)) == (EPS0_MIN, EPS0_MAX, "[1e-6, 700]")
    assert (N_RANGE.high, N_RANGE.allowed) == (N_MAX, "an integer in [1, 2^53]")
