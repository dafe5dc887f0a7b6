"""The inverse of amplification: the local budget that reaches a central target.

PIC (§3.2, Amplify) and every shuffle protocol need the largest local epsilon
eps0 whose amplified guarantee after shuffling n reports stays within a target
(eps, delta).  :func:`local_epsilon` solves ``shuffle_epsilon(eps0) = target`` for
eps0 and returns a value that is verified to satisfy ``shuffle_epsilon(eps0) <= target``.
"""

from __future__ import annotations

import math
from typing import Callable, Literal, Union

from scipy import optimize

from shuffledp._util.validation import check_epsilon
from shuffledp.accounting.bounds import check_n_delta
from shuffledp.params import VariationRatio
from shuffledp.errors import PrivacyParameterError

#: A family of local randomizers indexed by their local epsilon: "generic" (any
#: eps0-LDP randomizer) or a callable eps0 -> LocalRandomizer (its
#: ``amplification_parameters()`` are used) or eps0 -> VariationRatio.
Family = Union[Literal["generic"], Callable[[float], object]]

#: Relative accuracy of the inverse: the returned eps0 amplifies to within this
#: fraction below the target (for families whose amplified epsilon is continuous in eps0).
ROUND_TRIP_RTOL = 1e-7


def parameters_of(family: Family) -> Callable[[float], VariationRatio]:
    """The map eps0 -> VariationRatio of a :data:`Family`."""
    if isinstance(family, str):
        if family != "generic":
            raise PrivacyParameterError(f"family must be 'generic' or a callable eps0 -> LocalRandomizer, got {family!r}")
        return VariationRatio.from_ldp
    if not callable(family):
        raise PrivacyParameterError(f"family must be 'generic' or a callable eps0 -> LocalRandomizer, got {family!r}")

    def params(eps0: float) -> VariationRatio:
        member = family(eps0)
        if isinstance(member, VariationRatio):
            return member
        get = getattr(member, "amplification_parameters", None)
        if get is None:
            raise PrivacyParameterError(
                f"family({eps0:g}) returned {type(member).__name__}; expected a LocalRandomizer or a VariationRatio"
            )
        return get()

    return params


def check_inverse_problem(
    target_epsilon: float, n: int, delta: float, min_epsilon: float, max_epsilon: float
) -> tuple[float, int, float, float, float]:
    """Validated (target, n, delta, min_epsilon, max_epsilon) of an inverse problem."""
    target = check_epsilon(target_epsilon, "target_epsilon")
    n, delta = check_n_delta(n, delta)
    lo, hi = check_epsilon(min_epsilon, "min_epsilon"), check_epsilon(max_epsilon, "max_epsilon")
    if lo >= hi:
        raise PrivacyParameterError(f"min_epsilon must be < max_epsilon, got [{lo!r}, {hi!r}]")
    return target, n, delta, lo, hi


def local_epsilon(
    target_epsilon: float,
    n: int,
    delta: float,
    family: Family = "generic",
    method: str = "variation-ratio",
    *,
    min_epsilon: float = 1e-3,
    max_epsilon: float = 50.0,
) -> float:
    """Largest local eps0 in [min_epsilon, max_epsilon] whose amplified epsilon is <= the target.

    The amplified epsilon is ``shuffle_epsilon(n, delta, params=..., method=method)`` with
    the family's parameters at eps0 (assumed non-decreasing in eps0, as it is for the
    generic family).  The result satisfies ``shuffle_epsilon(result) <= target_epsilon``
    (checked) and, for families whose amplified epsilon is continuous in eps0, is within
    a relative ``ROUND_TRIP_RTOL`` of reaching it.

    Returns ``max_epsilon`` when even it meets the target (e.g. a huge n); raises
    :class:`PrivacyParameterError` when even ``min_epsilon`` does not (n or delta too
    small for the target).
    """
    from shuffledp.accounting.accountants import accountant_for, calibrate
    from shuffledp.accounting.bounds import _method
    from shuffledp.accounting.events import ShuffleEvent

    target, n, delta, lo, hi = check_inverse_problem(target_epsilon, n, delta, min_epsilon, max_epsilon)
    params_of = parameters_of(family)
    _method(method, "upper")
    return calibrate(
        lambda eps0: ShuffleEvent(params_of(eps0), n),
        target,
        delta,
        accountant=accountant_for(method),
        bracket=(lo, hi),
        context=f"with n={n}, delta={delta:g}",
    )


def largest_within(amplified: Callable[[float], float], target: float, lo: float, hi: float, *, context: str = "") -> float:
    """Largest eps0 in [lo, hi] with ``amplified(eps0) <= target``, for a non-decreasing ``amplified``.

    The shared solver behind :func:`local_epsilon` and the composed inverse
    (:func:`~shuffledp.accounting.composition.composed_local_epsilon`): the result is
    verified to meet the target and, where ``amplified`` is continuous, lies within a
    relative ``ROUND_TRIP_RTOL`` of reaching it.  Returns ``hi`` when even it meets the
    target; raises :class:`PrivacyParameterError` (mentioning ``context``) when ``lo`` does not.
    """
    if amplified(hi) <= target:
        return hi
    # Bracket by halving down from the top: large eps0 means few blankets, so these
    # evaluations are the cheap ones.
    upper = hi
    while True:
        below = max(upper / 2.0, lo)
        at_below = amplified(below)
        if at_below <= target:
            break
        if below == lo:
            raise PrivacyParameterError(
                f"no local epsilon in [{lo:g}, {hi:g}] reaches target_epsilon={target:g} {context}: "
                f"even eps0={lo:g} amplifies to {at_below:.6g}; increase n or delta, or lower min_epsilon"
            )
        upper = below

    # Solve in log(eps0), so the tolerance is relative; cap infinite bounds for Brent.
    def gap(log_eps0: float) -> float:
        return min(amplified(math.exp(log_eps0)), 2.0 * target + 1.0) - target

    root = optimize.brentq(gap, math.log(below), math.log(upper), xtol=ROUND_TRIP_RTOL / 8.0, rtol=1e-15)
    eps0 = math.exp(root)
    step = ROUND_TRIP_RTOL / 8.0
    while amplified(eps0) > target:  # Brent's root may sit just above the target
        eps0 = max(below, eps0 * (1.0 - step))
        step *= 2.0
    return eps0


__all__ = ["Family", "ROUND_TRIP_RTOL", "check_inverse_problem", "largest_within", "local_epsilon", "parameters_of"]
