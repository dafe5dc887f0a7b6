"""One entry point for every amplification bound: `shuffle_epsilon`.

``METHODS`` maps a method name to a `BoundMethod`: whether it is an
upper or a lower bound, whether it needs only eps0 (generic epsilon-LDP) or
accepts full `VariationRatio` parameters, and the function computing it.
Functions have the signature ``func(params: VariationRatio, n: int, delta: float) -> float``
and return ``math.inf`` where their parameter regime is not met.

Registration is import-cycle safe: each bound module imports this one and calls
`register_method` at import time, and this module imports those modules
lazily (`_load_methods`, on the first lookup), never at its own import.  A new
bound module only needs adding to ``_METHOD_MODULES``; modules not yet written are
skipped.  Read the registry through `available_methods` (``METHODS`` itself is
filled lazily).
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass
from typing import Callable, Literal

from shuffledp._util.validation import check_positive_int, check_probability
from shuffledp.accounting._rounding import DELTA_MIN, N_MAX
from shuffledp.errors import OutsideRegimeError, PrivacyParameterError, UnsupportedEventError
from shuffledp.params import BlanketDecomposition, VariationRatio, check_eps0, check_release_params

BoundFunc = Callable[[VariationRatio, int, float], float]


@dataclass(frozen=True)
class BoundMethod:
    """A registered amplification bound: name, kind, regime and the function computing it.

    Parameters
    ----------
    name : str
        The ``method`` name accepted by `shuffle_epsilon`.
    kind : {"upper", "lower"}
    generic_only : bool
        True when valid only for generic eps0-LDP parameters (p = q = e^eps0).
    func : callable (VariationRatio, int, float) -> float
        ``func(params, n, delta)``; ``math.inf`` outside the bound's regime.
    reference : str
        Paper and theorem.

    Examples
    --------
    >>> available_methods()["pic-eq1"].generic_only
    True
    """
    name: str
    kind: Literal["upper", "lower"]
    generic_only: bool  # True: valid only for generic eps0-LDP parameters (p = q = e^eps0)
    func: BoundFunc
    reference: str


METHODS: dict[str, BoundMethod] = {}

#: Modules (under shuffledp.accounting) that register bound methods when imported.
_METHOD_MODULES = ("variation_ratio", "closed_form", "clones")


def register_method(method: BoundMethod) -> None:
    """Add ``method`` to the registry (called by each bound module at import time).

    Parameters
    ----------
    method : BoundMethod

    Raises
    ------
    ValueError
        If a method of that name is already registered.

    Examples
    --------
    >>> register_method(available_methods()["pic-eq1"])
    Traceback (most recent call last):
    ...
    ValueError: bound method 'pic-eq1' registered twice
    """
    if method.name in METHODS:
        raise ValueError(f"bound method {method.name!r} registered twice")
    METHODS[method.name] = method


def _load_methods() -> None:
    """Import every bound module (each registers its methods; imports are cached)."""
    for module in _METHOD_MODULES:
        name = f"shuffledp.accounting.{module}"
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # a missing dependency inside an existing module is a real error
                raise


def available_methods(kind: Literal["upper", "lower"] | None = None) -> dict[str, BoundMethod]:
    """Registered bound methods (all, or only upper / lower bounds), by name.

    Parameters
    ----------
    kind : {"upper", "lower"} or None
        Filter by kind; ``None`` for all.

    Returns
    -------
    dict of str to BoundMethod
        Sorted by name.

    Examples
    --------
    >>> sorted(available_methods("lower"))
    ['variation-ratio-lower']
    >>> "stronger-clones" in available_methods("upper")
    True
    """
    _load_methods()
    return {name: m for name, m in sorted(METHODS.items()) if kind is None or m.kind == kind}


def resolve_params(
    eps0: float | None, params: VariationRatio | BlanketDecomposition | None
) -> VariationRatio | BlanketDecomposition:
    """Exactly one of eps0 / params; eps0 means the generic eps0-LDP parameters.

    Parameters
    ----------
    eps0 : float, in [1e-6, 700], or None
    params : VariationRatio or BlanketDecomposition or None

    Returns
    -------
    VariationRatio or BlanketDecomposition
        ``params`` (when a bound is proven for it), or ``VariationRatio.from_ldp(eps0)``.

    Raises
    ------
    UnprovenBoundError
        For a `VariationRatio` with a randomizer's own beta (`shuffledp.params.check_release_params`).
    PrivacyParameterError
        If both or neither are given, or the given one is invalid.

    Examples
    --------
    >>> resolve_params(2.0, None) == VariationRatio.from_ldp(2.0)
    True
    """
    if (eps0 is None) == (params is None):
        raise PrivacyParameterError(
            "give exactly one of eps0 (generic eps0-LDP) or params (VariationRatio or BlanketDecomposition)"
        )
    if params is not None:
        return check_release_params(params)
    return VariationRatio.from_ldp(check_eps0(eps0))


def check_n(n: int, name: str = "n") -> int:
    """A count of reports in [1, 2^53] (exact in float64).

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
        If ``n`` is not an integer in range.

    Examples
    --------
    >>> check_n(10)
    10
    """
    n = check_positive_int(n, name)
    if n > N_MAX:
        raise PrivacyParameterError(f"{name} must be at most 2^53 = {N_MAX} (exact in float64), got {name}={n}")
    return n


def check_delta(delta: float, name: str = "delta") -> float:
    """A delta in [1e-300, 1): below 1e-300 neglected masses can no longer be charged in float64.

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
        If ``delta`` is out of range.

    Examples
    --------
    >>> check_delta(1e-6)
    1e-06
    >>> check_delta(1e-320)
    Traceback (most recent call last):
    ...
    shuffledp.errors.PrivacyParameterError: delta must be at least 1e-300 (and below 1), got delta=1e-320
    """
    delta = check_probability(delta, name)
    if delta < DELTA_MIN:
        raise PrivacyParameterError(f"{name} must be at least {DELTA_MIN:g} (and below 1), got {name}={delta!r}")
    return delta


def check_n_delta(n: int, delta: float) -> tuple[int, float]:
    """`check_n` and `check_delta` together.

    Examples
    --------
    >>> check_n_delta(100, 0.01)
    (100, 0.01)
    """
    return check_n(n), check_delta(delta)


def _article(kind: str) -> str:
    return f"an {kind}" if kind == "upper" else f"a {kind}"


def _method(name: str, kind: str) -> BoundMethod:
    _load_methods()
    if name not in METHODS:
        names = ", ".join(sorted(m for m, b in METHODS.items() if b.kind == kind))
        raise PrivacyParameterError(f"unknown bound method {name!r}; {kind} bounds: {names}")
    method = METHODS[name]
    if method.kind != kind:
        raise PrivacyParameterError(f"method {name!r} is {_article(method.kind)} bound, not {_article(kind)} bound")
    return method


def shuffle_epsilon(
    n: int,
    delta: float,
    eps0: float | None = None,
    params: VariationRatio | None = None,
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
    params : VariationRatio, optional
        Parameters of the victim's randomizer (give this or ``eps0``).
    method : str
        A registered upper bound (`available_methods` ("upper")).

    Returns
    -------
    float
        The shuffled epsilon; ``math.inf`` where the method certifies nothing (outside
        its regime).

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
    from shuffledp.accounting.accountants import accountant_for
    from shuffledp.accounting.events import ShuffleEvent

    n, delta = check_n_delta(n, delta)
    vr = resolve_params(eps0, params)
    _method(method, "upper")
    try:
        return accountant_for(method).compose(ShuffleEvent(vr, n)).get_epsilon(delta)
    except OutsideRegimeError:
        return math.inf  # documented: a bound outside its regime is math.inf here


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
    lower = _method(method, "lower")
    if isinstance(vr, BlanketDecomposition):
        raise UnsupportedEventError(
            f"{method}: no lower bound is offered for a randomizer's own BlanketDecomposition (the attainable "
            "pair bounds some randomizer with those parameters from below, not this one); "
            "shuffledp.shuffle_audit computes the exact value for a discrete randomizer at small n"
        )
    return lower.func(vr, n, delta)


def ldp_level(vr: VariationRatio | BlanketDecomposition) -> float | None:
    """log p when ``vr`` describes a population of (log p)-LDP randomizers, else None.

    The generic bounds (clones, closed forms) hold for *any* eps0-LDP randomizers, so a
    release whose randomizer has finite p and q0, q1 <= p (every user's output density
    ratio is within p, as for one randomizer shared by all) is priced by them at
    eps0 = log p: a relaxation of its tighter (p, beta, q), never an optimistic one.
    A `BlanketDecomposition` is its eps0.
    """
    if isinstance(vr, BlanketDecomposition):
        return vr.eps0
    if math.isinf(vr.p) or vr.q > vr.p * (1.0 + 1e-12):
        return None
    return math.log(vr.p)
