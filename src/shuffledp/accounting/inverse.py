"""The inverse of amplification: the local budget that reaches a central target.

PIC (§3.2, Amplify) and every shuffle protocol need the largest local epsilon
eps0 whose amplified guarantee after shuffling n reports stays within a target
(eps, delta).  `local_epsilon` solves ``shuffle_epsilon(eps0) = target`` for
eps0 and returns a value that is verified to satisfy ``shuffle_epsilon(eps0) <= target``.
"""

from __future__ import annotations

import math
from typing import Callable, Literal, Union

from scipy import optimize

from shuffledp._util.validation import check_epsilon
from shuffledp.accounting.bounds import check_n_delta
from shuffledp.params import BlanketDecomposition, VariationRatio
from shuffledp.errors import PrivacyParameterError

#: A family of local randomizers indexed by their local epsilon: "generic" (any
#: eps0-LDP randomizer) or a callable eps0 -> LocalRandomizer (its
#: ``amplification_parameters()`` are used) or eps0 -> VariationRatio / BlanketDecomposition.
Family = Union[Literal["generic"], Callable[[float], object]]

#: Relative accuracy of the inverse: the returned eps0 amplifies to within this
#: fraction below the target (for families whose amplified epsilon is continuous in eps0).
ROUND_TRIP_RTOL = 1e-7


def parameters_of(family: Family) -> Callable[[float], VariationRatio | BlanketDecomposition]:
    """The map eps0 -> parameters of a `Family`.

    Parameters
    ----------
    family : "generic" or callable
        "generic" (any eps0-LDP randomizer, `VariationRatio.from_ldp`), or a callable
        eps0 -> LocalRandomizer (its ``amplification_parameters()``) or eps0 -> VariationRatio
        or BlanketDecomposition.

    Returns
    -------
    callable float -> VariationRatio or BlanketDecomposition

    Raises
    ------
    PrivacyParameterError
        If ``family`` is neither; from the returned map, if the callable returns something else.

    Examples
    --------
    >>> parameters_of("generic")(1.0) == VariationRatio.from_ldp(1.0)
    True
    >>> parameters_of(lambda e: VariationRatio.from_pq(3.0, 0.4, 3.0))(1.0).beta
    0.4
    >>> parameters_of(lambda e: BlanketDecomposition(eps0=e, beta=0.3))(1.0).beta
    0.3
    """
    if isinstance(family, str):
        if family != "generic":
            raise PrivacyParameterError(f"family must be 'generic' or a callable eps0 -> LocalRandomizer, got {family!r}")
        return VariationRatio.from_ldp
    if not callable(family):
        raise PrivacyParameterError(f"family must be 'generic' or a callable eps0 -> LocalRandomizer, got {family!r}")

    def params(eps0: float) -> VariationRatio | BlanketDecomposition:
        member = family(eps0)
        if isinstance(member, (VariationRatio, BlanketDecomposition)):
            return member
        get = getattr(member, "amplification_parameters", None)
        if get is None:
            raise PrivacyParameterError(
                f"family({eps0:g}) returned {type(member).__name__}; "
                "expected a LocalRandomizer or a VariationRatio or BlanketDecomposition"
            )
        return get()

    return params


def check_inverse_problem(
    target_epsilon: float, n: int, delta: float, min_epsilon: float, max_epsilon: float
) -> tuple[float, int, float, float, float]:
    """Validated (target, n, delta, min_epsilon, max_epsilon) of an inverse problem.

    Parameters
    ----------
    target_epsilon : float, > 0
    n : int, in [1, 2^53]
    delta : float, in [1e-300, 1)
    min_epsilon, max_epsilon : float, > 0, min_epsilon < max_epsilon

    Returns
    -------
    tuple (float, int, float, float, float)

    Raises
    ------
    PrivacyParameterError
        If an argument is out of range or min_epsilon >= max_epsilon.

    Examples
    --------
    >>> check_inverse_problem(1, 100, 1e-6, 1e-3, 50)
    (1.0, 100, 1e-06, 0.001, 50.0)
    """
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

    Solves shuffle_epsilon(n, delta, params=family(eps0), method=method) <= target_epsilon
    through `calibrate` (the amplified epsilon is
    assumed non-decreasing in eps0, as it is for the generic family).  The result is
    checked to meet the target and, for families whose amplified epsilon is continuous in
    eps0, is within a relative ``ROUND_TRIP_RTOL`` of reaching it.

    Parameters
    ----------
    target_epsilon : float, > 0
        Central epsilon to reach.
    n : int, in [1, 2^53]
        Reports shuffled together (n' of PIC §5.2).
    delta : float, in [1e-300, 1)
    family : "generic" or callable
        See `parameters_of`.
    method : str
        A registered upper bound (``shuffle_epsilon``'s method).
    min_epsilon, max_epsilon : float, 0 < min_epsilon < max_epsilon
        Search bracket (evaluated eps0 must lie in [1e-6, 700]).

    Returns
    -------
    float
        ``max_epsilon`` when even it meets the target (e.g. a huge n).

    Raises
    ------
    PrivacyParameterError
        For an argument out of range, or when even ``min_epsilon`` misses the target
        (n or delta too small for it).

    References
    ----------
    pic-usenix25.txt §3.2 (Amplify) and §5.2 Theorem 5.2.

    Examples
    --------
    >>> eps0 = local_epsilon(1.0, 10_000, 1e-6)
    >>> round(eps0, 3)
    5.47
    >>> round(local_epsilon(1.0, 10_000, 1e-6, method="pic-eq1"), 3)
    4.126
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

    The shared solver behind `calibrate`: it
    brackets by halving down from ``hi``, solves by Brent's method in log(eps0), then steps
    down until the target is met.  The result is verified to meet the target and, where
    ``amplified`` is continuous, lies within a relative ``ROUND_TRIP_RTOL`` of reaching it.

    Parameters
    ----------
    amplified : callable float -> float
        Non-decreasing cost (``math.inf`` allowed).
    target : float
    lo, hi : float, 0 < lo < hi
    context : str
        Appended to the error message.

    Returns
    -------
    float
        ``hi`` when even it meets the target.

    Raises
    ------
    PrivacyParameterError
        When even ``lo`` misses the target.

    Examples
    --------
    >>> x = largest_within(lambda x: x * x, 4.0, 0.1, 10.0)
    >>> round(x, 6), x * x <= 4.0
    (2.0, True)
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
                f"no local epsilon in [{lo:g}, {hi:g}] reaches target_epsilon={target:g}"
                f"{' ' + context if context else ''}: even eps0={lo:g} amplifies to {at_below:.6g}; "
                f"increase n or delta, or lower the search's low end (min_epsilon, or calibrate's bracket)"
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
