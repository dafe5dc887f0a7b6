"""One entry point for every amplification bound: `shuffle_epsilon` (and `shuffle_epsilon_lower`).

Thin user-facing functions over the accountants: ``shuffle_epsilon(n, delta, eps0, method=...)``
prices ``ShuffleEvent(params, n)`` with the accountant of ``method``
(`shuffledp.accounting.accountants.accountant_for`).  The methods and what computes them are
the one table of `shuffledp.accounting.registry` (``METHODS``, read through
`available_methods`); the validators (`check_n`, `check_delta`, `resolve_params`, ...) live in
`shuffledp.accounting._checks`.  Both are re-exported here, where they always were.
"""

from __future__ import annotations

import math

from shuffledp.accounting._checks import (
    check_delta,
    check_n,  # noqa: F401 (a validator kept at its old path, not API)
    check_n_delta,
    ldp_level,  # noqa: F401 (likewise)
    resolve_params,
)
from shuffledp.accounting._rounding import DELTA_MIN, N_MAX  # noqa: F401 (re-exported: their old path)
from shuffledp.accounting.accountants import accountant_for
from shuffledp.accounting.events import ShuffleEvent
from shuffledp.accounting.registry import (
    METHODS,
    BoundFunc,
    BoundMethod,
    available_methods,
    lookup_method,
    register_method,
)
from shuffledp.errors import OutsideRegimeError, UnsupportedEventError
from shuffledp.params import BlanketDecomposition, PoissonReport, VariationRatio


def shuffle_epsilon(
    n: int,
    delta: float,
    eps0: float | None = None,
    params: VariationRatio | BlanketDecomposition | PoissonReport | None = None,
    method: str = "variation-ratio",
) -> float:
    """Upper bound on the central epsilon after shuffling ``n`` reports (at ``delta``).

    A thin wrapper: prices ``ShuffleEvent(params, n)`` with the accountant of ``method``
    (`accountant_for`).  For "variation-ratio",
    the smallest eps on the grid exp(k log(1 + 1e-7)) with D_{e^eps}(P || Q) <= delta for
    the dominating pair of Theorem 1.

    Parameters
    ----------
    n : int, in [1, 2^53]
        Reports shuffled together, the victim's included.
    delta : float, in [1e-300, 1)
    eps0 : float, in [1e-6, 700], optional
        Local epsilon of a generic eps0-LDP randomizer (give this or ``params``).
    params : VariationRatio or BlanketDecomposition or PoissonReport, optional
        Parameters of the victim's randomizer (give this or ``eps0``): ``R.amplification_parameters()``
        for a specific randomizer (docs/which-bound.md).
    method : str
        A registered upper bound (`available_methods` ("upper")).

    Returns
    -------
    float
        The shuffled epsilon, never above the local eps0; ``math.inf`` where the method certifies
        nothing (outside its regime).

    Raises
    ------
    PrivacyParameterError
        For an out-of-range argument, both or neither of eps0 / params, or an unknown method.
    UnsupportedEventError
        If the method does not apply to ``params`` (e.g. a generic-only method).

    References
    ----------
    segmented-multimessage-shuffle.txt §3.3 Theorem 1; pic-usenix25.txt §5.2 Eq. (1)
    ("pic-eq1").

    Examples
    --------
    >>> round(shuffle_epsilon(10_000, 1e-6, eps0=2.0), 4)
    0.1144
    >>> round(shuffle_epsilon(10_000, 1e-6, eps0=2.0, method="pic-eq1"), 4)
    0.3982
    """
    n, delta = check_n_delta(n, delta)
    vr = resolve_params(eps0, params)
    lookup_method(method, "upper")
    try:
        value = accountant_for(method).compose(ShuffleEvent(vr, n)).get_epsilon(delta)
    except OutsideRegimeError:
        return math.inf  # documented: a bound outside its regime is math.inf here
    # the local guarantee: an eps0-LDP randomizer's shuffled release is eps0-DP (post-processing), so a
    # bound snapped up past eps0 by its grid is brought back to it
    local = eps0 if eps0 is not None else (vr.eps0 if isinstance(vr, BlanketDecomposition) else math.inf)
    return min(value, local)


def shuffle_epsilon_lower(
    n: int,
    delta: float,
    eps0: float | None = None,
    params: VariationRatio | None = None,
    method: str = "variation-ratio-lower",
) -> float:
    """Lower bound: no valid analysis of these parameters can certify a smaller epsilon.

    Parameters
    ----------
    n : int, in [1, 2^53]
    delta : float, in [1e-300, 1)
    eps0 : float, in [1e-6, 700], optional
    params : VariationRatio, optional
        Exactly one of ``eps0`` / ``params``.
    method : str
        A registered lower bound (`available_methods` ("lower")).

    Returns
    -------
    float

    Raises
    ------
    UnsupportedEventError
        For a randomizer's own `BlanketDecomposition`: no lower bound is offered for it (as
        `VariationRatioAccountant.get_epsilon_lower`).
    PrivacyParameterError
        For an out-of-range argument or an unknown method.

    References
    ----------
    segmented-multimessage-shuffle.txt §5.1.3 Proposition 1.

    Examples
    --------
    >>> shuffle_epsilon_lower(10_000, 1e-6, eps0=2.0) <= shuffle_epsilon(10_000, 1e-6, eps0=2.0)
    True
    """
    n, delta = check_n_delta(n, delta)
    vr = resolve_params(eps0, params)
    lower = lookup_method(method, "lower")
    if not isinstance(vr, VariationRatio):
        raise UnsupportedEventError(
            f"{method}: no lower bound is offered for a randomizer's own parameters (the attainable pair bounds "
            "some randomizer with those parameters from below, not this one); shuffledp.shuffle_audit computes "
            "the exact value for a discrete randomizer at small n"
        )
    return lower.func(vr, n, delta)


__all__ = [
    "METHODS",
    "BoundFunc",
    "BoundMethod",
    "available_methods",
    "check_delta",
    "register_method",
    "shuffle_epsilon",
    "shuffle_epsilon_lower",
]
