"""The inverse of amplification: the local budget that reaches a central target.

PIC (§3.2, Amplify) and every shuffle protocol need the largest local epsilon
eps0 whose amplified guarantee after shuffling n reports stays within a target
(eps, delta).  `local_epsilon` solves ``shuffle_epsilon(eps0) = target`` for
eps0 and returns a value that is verified to satisfy ``shuffle_epsilon(eps0) <= target``.
"""

from __future__ import annotations

from shuffledp.accounting._checks import Family, check_inverse_problem, parameters_of
from shuffledp.accounting._rounding import ROUND_TRIP_RTOL, SEARCH_MAX_EPSILON, SEARCH_MIN_EPSILON
from shuffledp.accounting._solve import largest_within
from shuffledp.accounting.accountants import accountant_for, calibrate
from shuffledp.accounting.events import ShuffleEvent
from shuffledp.accounting.registry import lookup_method


def local_epsilon(
    target_epsilon: float,
    n: int,
    delta: float,
    family: Family = "generic",
    method: str = "variation-ratio",
    *,
    min_epsilon: float = SEARCH_MIN_EPSILON,
    max_epsilon: float = SEARCH_MAX_EPSILON,
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
    target, n, delta, lo, hi = check_inverse_problem(target_epsilon, n, delta, min_epsilon, max_epsilon)
    params_of = parameters_of(family)
    lookup_method(method, "upper")
    return calibrate(
        lambda eps0: ShuffleEvent(params_of(eps0), n),
        target,
        delta,
        accountant=accountant_for(method),
        bracket=(lo, hi),
        context=f"with n={n}, delta={delta:g}",
    )


__all__ = ["Family", "ROUND_TRIP_RTOL", "largest_within", "local_epsilon"]
