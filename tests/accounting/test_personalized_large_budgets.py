"""Binary RR at large budgets (eps >= 37, where 1 - p rounds to 1): both bounds against 400-digit enumeration."""

from __future__ import annotations

import itertools

import mpmath
import pytest

from shuffledp.accounting import personalized as P

DIGITS = 400  # e^-700 ~ 1e-304 must survive 1 - p; set per test, never globally (other modules' mpmath tests)


def _exact_divergence(
    victim: float, others: list[float], inputs: tuple[int, ...], eps: float, victim_bit: int
) -> mpmath.mpf:
    """D_{e^eps}(count | victim input victim_bit || victim input 1 - victim_bit), exactly (400 digits)."""

    def law(bit: int) -> list[mpmath.mpf]:
        pmf = [mpmath.mpf(1)]
        for budget, x in [(victim, bit)] + list(zip(others, inputs)):
            one = mpmath.mpf(1) / (1 + mpmath.exp(-budget)) if x else mpmath.mpf(1) / (1 + mpmath.exp(budget))
            pmf = [
                (pmf[i] if i < len(pmf) else 0) * (1 - one) + (pmf[i - 1] * one if i else 0)
                for i in range(len(pmf) + 1)
            ]
        return pmf

    p, q = law(victim_bit), law(1 - victim_bit)
    e = mpmath.exp(eps)
    return sum(max(a - e * b, 0) for a, b in zip(p, q))


def _worst(victim: float, others: list[float], eps: float) -> mpmath.mpf:
    return max(
        _exact_divergence(victim, others, x, eps, bit)
        for x in itertools.product((0, 1), repeat=len(others))
        for bit in (0, 1)
    )


@pytest.mark.parametrize(
    "victim, others", [(300.0, [300.0]), (40.0, [38.0, 45.0]), (700.0, [650.0, 700.0, 1.0]), (60.0, [2.0, 80.0, 80.0])]
)
@pytest.mark.parametrize("delta", [0.1, 1e-3, 1e-9])
def test_bounds_bracket_the_exact_worst_case(victim, others, delta):
    lower = P.personalized_shuffle_epsilon_lower(victim, others, delta)
    upper = P.personalized_shuffle_epsilon(victim, others, delta)
    assert lower <= upper
    with mpmath.workdps(DIGITS):
        _check_against_enumeration(victim, others, delta, lower, upper)


def _check_against_enumeration(victim, others, delta, lower, upper):
    assert _worst(victim, others, upper) <= delta * (1 + 1e-9)  # upper is a valid epsilon for every input
    assert (
        _exact_divergence(victim, others, (0,) * len(others), lower, 0) >= delta
        or _exact_divergence(victim, others, (0,) * len(others), lower, 1) >= delta
    )  # lower is not one
