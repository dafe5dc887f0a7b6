"""Every validator of the accounting, in the bottom layer of ``accounting/`` (DESIGN.md, "Inside accounting/").

One rule for numbers: a parameter is a real number (numpy scalars included), never a bool or a
numeric string, like a count is an integer and never ``'10000'``; the ranges come from
`shuffledp.accounting._rounding`.  Counts of reports (`check_n`), deltas (`check_delta`), one
of eps0 / params (`resolve_params`), the budgets of personalized releases (`check_budgets` and
friends), and the families of an inverse (`parameters_of`).  Nothing here imports another
module of the accounting but `_rounding`, so every layer above may use it.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from shuffledp._util.validation import Interval, check_epsilon, check_real, check_rtol, range_message
from shuffledp.accounting._rounding import DELTA_RANGE, EPS0_MAX, EPS0_MIN, EPS0_RANGE, N_MAX, N_RANGE
from shuffledp.errors import NoCloneBoundError, ParameterTypeError, PrivacyParameterError, ShapeError, ShuffleDPError
from shuffledp.params import BlanketDecomposition, PoissonReport, VariationRatio, check_eps0, check_release_params

# --------------------------------------------------------------------------- counts, deltas, parameters


def resolve_params(
    eps0: float | None, params: VariationRatio | BlanketDecomposition | PoissonReport | None
) -> VariationRatio | BlanketDecomposition | PoissonReport:
    """Exactly one of eps0 / params; eps0 means the generic eps0-LDP parameters.

    Parameters
    ----------
    eps0 : float, in [1e-6, 700], or None
    params : VariationRatio or BlanketDecomposition or PoissonReport or None

    Returns
    -------
    VariationRatio or BlanketDecomposition or PoissonReport
        ``params`` (when a bound is proven for it: `shuffledp.params.check_release_params`), or
        ``VariationRatio.from_ldp(eps0)``.

    Raises
    ------
    UnprovenBoundError
        For a `VariationRatio` with a randomizer's own beta below tanh(eps0/2).
    PrivacyParameterError
        If both or neither are given, or the given one is invalid.

    Examples
    --------
    >>> resolve_params(2.0, None) == VariationRatio.from_ldp(2.0)
    True
    """
    if (eps0 is None) == (params is None):
        raise PrivacyParameterError(
            "give exactly one of eps0 (generic eps0-LDP) or params (VariationRatio, BlanketDecomposition or PoissonReport)"
        )
    if params is not None:
        return check_release_params(params)
    return VariationRatio.from_ldp(check_eps0(eps0))


def check_n(n: int, name: str = "n") -> int:
    """A count of reports in `N_RANGE` = [1, 2^53] (exact in float64).

    Parameters
    ----------
    n : int, in [1, 2^53]
    name : str
        The user's parameter name, for the error message.

    Returns
    -------
    int

    Raises
    ------
    PrivacyParameterError
        If ``n`` is not an integer in range (`ParameterTypeError` if not a number).

    Examples
    --------
    >>> check_n(10)
    10
    """
    return N_RANGE.check(n, name)


def check_delta(delta: float, name: str = "delta") -> float:
    """A delta in `DELTA_RANGE` = [1e-300, 1): below 1e-300 neglected masses can no longer be charged in float64.

    Parameters
    ----------
    delta : float, in [1e-300, 1)
    name : str
        The user's parameter name, for the error message.

    Returns
    -------
    float

    Raises
    ------
    PrivacyParameterError
        If ``delta`` is out of range (`ParameterTypeError` if not a number).

    Examples
    --------
    >>> check_delta(1e-6)
    1e-06
    >>> check_delta(1e-320)
    Traceback (most recent call last):
    ...
    shuffledp.errors.PrivacyParameterError: delta must be a number in [1e-300, 1); got 1e-320
    """
    return DELTA_RANGE.check(delta, name)


def check_n_delta(n: int, delta: float) -> tuple[int, float]:
    """`check_n` and `check_delta` together.

    Examples
    --------
    >>> check_n_delta(100, 0.01)
    (100, 0.01)
    """
    return check_n(n), check_delta(delta)


def ldp_level(vr: VariationRatio | BlanketDecomposition | PoissonReport) -> float | None:
    """log p when ``vr`` describes a population of (log p)-LDP randomizers, else None.

    The generic bounds (clones, closed forms) hold for *any* eps0-LDP randomizers, so a
    release whose randomizer has finite p and q0, q1 <= p (every user's output density
    ratio is within p, as for one randomizer shared by all) is priced by them at
    eps0 = log p: a relaxation of its tighter (p, beta, q), never an optimistic one.
    A `BlanketDecomposition` is its eps0; a `PoissonReport` is not LDP (None).
    """
    if isinstance(vr, BlanketDecomposition):
        return vr.eps0
    if isinstance(vr, PoissonReport):
        return None
    if math.isinf(vr.p) or vr.q > vr.p * (1.0 + 1e-12):
        return None
    return math.log(vr.p)


# --------------------------------------------------------------------------- personalized budgets

#: Randomizer families with a clone capacity.
FAMILIES = ("binary-rr", "k-rr", "laplace")
#: Budgets accepted here: the accounting module's eps0 range.  Below 1e-6 the victim's pair
#: would rest on e^eps - 1 with float64 rounding error above u/eps ~ 2e-10 that the engine does
#: not charge; above 700, e^eps overflows float64 (math.exp raises above ~709.78).
MIN_BUDGET = EPS0_MIN
MAX_BUDGET = EPS0_MAX


def real_array(values: Any, name: str, *, bits: bool = False) -> np.ndarray:
    """``values`` as a float64 array (any shape) of real numbers: strings, and bools unless ``bits``, refused.

    A numpy array is judged by its dtype; anything else element by element (numpy would turn
    ``[1, True]`` into ``[1, 1]`` and ``[1.0, "2"]`` into strings).
    """
    numeric = isinstance(values, np.ndarray) and values.dtype.kind in ("iufb" if bits else "iuf")
    allowed = (numbers.Real, np.bool_) if bits else numbers.Real
    refused = () if bits else (bool, np.bool_)
    try:
        arr = values if numeric else np.asarray(values, dtype=object)
        if not numeric:
            flat = arr.ravel()
            bad = next((i for i, x in enumerate(flat) if not isinstance(x, allowed) or isinstance(x, refused)), None)
            if bad is not None:
                where = f"{name}[{bad}]" if arr.ndim else name
                raise ParameterTypeError(range_message(where, "a number or a bool" if bits else "a number", flat[bad]))
        return np.asarray(arr, dtype=np.float64)
    except (ValueError, TypeError) as exc:
        if isinstance(exc, PrivacyParameterError):
            raise
        raise ShapeError(f"{name} must be an array of numbers, got {values!r:.80}") from None


def check_budgets(values: Any, name: str, *, allow_empty: bool = True) -> np.ndarray:
    """``values`` as a 1-d float array of budgets in [`MIN_BUDGET`, `MAX_BUDGET`] (named errors).

    Parameters
    ----------
    values : float or array_like
        Local budgets eps_i, each a number (no bools or strings) in [1e-6, 700]; a scalar
        becomes a length-1 array.
    name : str
        The parameter name quoted in error messages.
    allow_empty : bool
        Whether an empty array is accepted.

    Returns
    -------
    numpy.ndarray
        1-d float64 array of the budgets.

    Raises
    ------
    ShapeError
        If ``values`` has more than one dimension or is ragged.
    PrivacyParameterError
        If a budget is not a number, not finite or out of range, or ``values`` is empty
        and ``allow_empty`` is False.

    Examples
    --------
    >>> check_budgets(0.5, "budgets").tolist()
    [0.5]
    >>> check_budgets([1.0, 1000.0], "budgets")
    Traceback (most recent call last):
    ...
    shuffledp.errors.PrivacyParameterError: budgets[1] must be a number in [1e-6, 700]; got 1000.0
    """
    arr = real_array(values, name)
    scalar = arr.ndim == 0
    arr = np.atleast_1d(arr)
    if arr.ndim != 1:
        raise ShapeError(f"{name} must be a 1-d array of budgets, got shape {arr.shape}")
    if not allow_empty and arr.size == 0:
        raise PrivacyParameterError(f"{name} must hold at least one budget, got an empty array")
    bad = ~(np.isfinite(arr) & (arr >= MIN_BUDGET) & (arr <= MAX_BUDGET))
    if bad.any():
        i = int(np.argmax(bad))
        raise EPS0_RANGE.error(name if scalar else f"{name}[{i}]", float(arr[i]))
    return arr


def check_victim_budget(victim_eps: Any, plural: str, name: str = "victim_eps") -> float:
    """The victim's one budget; an array is refused with a pointer to ``plural`` (all victims at once)."""
    if real_array(victim_eps, name).ndim != 0:
        raise ShapeError(f"{name} must be one budget, got {victim_eps!r:.80}; for a bound per user use {plural}")
    return float(check_budgets(victim_eps, name)[0])


#: One multiplicity of `check_counts`.
_COUNT_RANGE = Interval(0, N_MAX, high_open=True, integer=True)


def check_counts(counts: Any, size: int, name: str) -> np.ndarray:
    """Multiplicities: ``size`` integers >= 0 summing to at most 2^53 - 1 (float64-exact user counts)."""
    arr = real_array(counts, name).ravel()
    if arr.size != size:
        raise ShapeError(f"{name} must have one count per budget ({size}), got {arr.size}")
    bad = ~(np.isfinite(arr) & (arr >= 0.0) & (arr == np.round(arr)) & (arr < N_MAX))
    if bad.any():
        i = int(np.argmax(bad))
        raise _COUNT_RANGE.error(f"{name}[{i}]", float(arr[i]))
    if math.fsum(arr) >= N_MAX:
        raise PrivacyParameterError(
            f"{name} must sum to fewer than 2^53 users (with the victim at most 2^53), got {math.fsum(arr):.6g}"
        )
    return arr.astype(np.int64)


def check_others(others_eps: Any, others_counts: Any) -> tuple[np.ndarray, np.ndarray]:
    """The other users as (budgets, counts): one user per entry of ``others_eps`` unless counts are given."""
    o = check_budgets(others_eps, "others_eps")
    if others_counts is None:
        return o, np.ones(o.size, dtype=np.int64)
    return o, check_counts(others_counts, o.size, "others_counts")


#: Most distinct budgets priced in one call: each needs its own clone-count law and search (~3 ms).
MAX_DISTINCT_BUDGETS = 20_000


def check_distinct_budgets(
    budgets: np.ndarray, name: str = "budgets", family: str = "binary-rr"
) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values and counts of ``budgets``, refusing more than `MAX_DISTINCT_BUDGETS` values.

    Call it before any work whose result would be lost to the refusal (e.g. before randomizing).

    Raises
    ------
    PrivacyParameterError
        Naming the number of distinct budgets and what to do: round them up to a grid for
        binary-rr and k-rr (a larger budget never lowers a bound); for laplace, where rounding
        is not sound, have users pick their budgets from a grid.

    Examples
    --------
    >>> check_distinct_budgets(np.array([0.5, 1.0, 0.5]))[1].tolist()
    [2, 1]
    """
    values, counts = np.unique(budgets, return_counts=True)
    if values.size > MAX_DISTINCT_BUDGETS:
        raise PrivacyParameterError(
            f"{name} has {values.size:,} distinct values; at most {MAX_DISTINCT_BUDGETS:,} are priced in one call "
            "(each needs its own clone-count law): "
            + (
                "have the users pick their budgets from a grid (rounding given laplace budgets is not sound: "
                "a more conservative laplace user can get a worse guarantee)"
                if family == "laplace"
                else "round them up to a grid first, e.g. np.ceil(budgets / 0.01) * 0.01 "
                "(for binary-rr and k-rr a larger budget never lowers a bound)"
            )
        )
    return values, counts


def check_family(family: str, k: int | None) -> None:
    """Raise NoCloneBoundError unless ``family`` has a clone bound (and "k-rr" an integer k >= 2).

    Parameters
    ----------
    family : str
        One of `FAMILIES`.
    k : int or None
        The alphabet size: an integer >= 2 for "k-rr", None for the other families.

    Raises
    ------
    NoCloneBoundError
        For a family without a clone bound, or "k-rr" without a valid k.
    PrivacyParameterError
        For a k given with another family.

    Examples
    --------
    >>> check_family("k-rr", 3)
    >>> check_family("gaussian", None)
    Traceback (most recent call last):
    ...
    shuffledp.errors.NoCloneBoundError: family must be one of binary-rr, k-rr, laplace (the families with a clone bound), got 'gaussian'
    >>> check_family("binary-rr", 3)
    Traceback (most recent call last):
    ...
    shuffledp.errors.PrivacyParameterError: k is only for family 'k-rr', got k=3 with family 'binary-rr'
    """
    if not isinstance(family, str) or family not in FAMILIES:
        raise NoCloneBoundError(
            f"family must be one of {', '.join(FAMILIES)} (the families with a clone bound), got {family!r}"
        )
    if family != "k-rr":
        if k is not None:
            raise PrivacyParameterError(f"k is only for family 'k-rr', got k={k!r} with family {family!r}")
        return
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (numbers.Integral, float)) or int(k) != k or k < 2:
        raise NoCloneBoundError(f"family 'k-rr' needs the alphabet size k, an integer >= 2, got k={k!r}")


def check_delta_rtol(delta: Any, rtol: Any) -> tuple[float, float]:
    """delta in [1e-300, 1) and rtol in [1e-12, 1e-2], both numbers (no bools or strings)."""
    return check_delta(check_real(delta, "delta")), check_rtol(check_real(rtol, "rtol"))


# --------------------------------------------------------------------------- families of an inverse

#: A family of local randomizers indexed by their local epsilon: "generic" (any
#: eps0-LDP randomizer) or a callable eps0 -> LocalRandomizer (its
#: ``amplification_parameters()`` are used) or eps0 -> VariationRatio.
Family = Literal["generic"] | Callable[[float], object]


def parameters_of(family: Family) -> Callable[[float], VariationRatio | BlanketDecomposition | PoissonReport]:
    """The map eps0 -> parameters of a `Family`.

    Parameters
    ----------
    family : "generic" or callable
        "generic" (any eps0-LDP randomizer, `VariationRatio.from_ldp`), or a callable
        eps0 -> LocalRandomizer (its ``amplification_parameters()``) or eps0 -> VariationRatio,
        BlanketDecomposition or PoissonReport.

    Returns
    -------
    callable float -> VariationRatio or BlanketDecomposition or PoissonReport

    Raises
    ------
    PrivacyParameterError
        If ``family`` is neither; from the returned map, if the callable returns something else,
        or fails other than with a `ShuffleDPError` (e.g. a class that needs more arguments than
        eps0; the failure is its cause).

    Examples
    --------
    >>> parameters_of("generic")(1.0) == VariationRatio.from_ldp(1.0)
    True
    >>> parameters_of(lambda e: BlanketDecomposition(eps0=e, beta=0.3))(1.0).beta
    0.3
    """
    if isinstance(family, str):
        if family != "generic":
            raise PrivacyParameterError(
                f"family must be 'generic' or a callable eps0 -> LocalRandomizer, got {family!r}"
            )
        return VariationRatio.from_ldp
    if not callable(family):
        raise PrivacyParameterError(f"family must be 'generic' or a callable eps0 -> LocalRandomizer, got {family!r}")

    def params(eps0: float) -> VariationRatio | BlanketDecomposition | PoissonReport:
        try:
            member = family(eps0)
        except ShuffleDPError:  # the family's own named error (e.g. eps0 outside its range)
            raise
        except Exception as exc:  # e.g. a class passed as the family: KRandomizedResponse needs k
            raise PrivacyParameterError(
                f"family must be a callable eps0 -> randomizer (or its parameters), e.g. "
                f"lambda e: KRandomizedResponse(epsilon=e, k=10); calling the given family {family!r} at "
                f"eps0={eps0:g} failed: {type(exc).__name__}: {exc}"
            ) from exc
        if isinstance(member, (VariationRatio, BlanketDecomposition, PoissonReport)):
            return member
        get = getattr(member, "amplification_parameters", None)
        if get is None:
            raise PrivacyParameterError(
                f"family({eps0:g}) returned {type(member).__name__}; expected a LocalRandomizer or a VariationRatio "
                "or BlanketDecomposition"
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


__all__ = [
    "FAMILIES",
    "Family",
    "MAX_BUDGET",
    "MAX_DISTINCT_BUDGETS",
    "MIN_BUDGET",
    "check_budgets",
    "check_counts",
    "check_delta",
    "check_delta_rtol",
    "check_distinct_budgets",
    "check_family",
    "check_inverse_problem",
    "check_n",
    "check_n_delta",
    "check_others",
    "check_victim_budget",
    "ldp_level",
    "parameters_of",
    "real_array",
    "resolve_params",
]
