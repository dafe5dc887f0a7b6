"""The one table of amplification bounds: which ``method`` names exist and what computes them.

``METHODS`` maps a method name to a `BoundMethod`: whether it is an upper or a lower
bound, whether it needs only eps0 (generic epsilon-LDP) or accepts full `VariationRatio`
parameters, the function computing it and, for upper bounds, the accountant that prices a
release by it (``accountant``, read by `shuffledp.accounting.accountants.accountant_for`,
which `shuffle_epsilon` and `local_epsilon` go through).  Functions have the signature
``func(params: VariationRatio, n: int, delta: float) -> float`` and return ``math.inf`` where
their parameter regime is not met.

The table is written out below, once: bound modules are pure functions and register
nothing when imported.  `register_method` adds a method at run time (priced by
`ClosedFormAccountant`, through its ``func``).  Read the table through `available_methods`
and `lookup_method`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from shuffledp.accounting.clones import clone_epsilon, stronger_clone_epsilon
from shuffledp.accounting.closed_form import (
    blanket_bennett_epsilon,
    blanket_hoeffding_epsilon,
    erlingsson_epsilon,
    fmt_epsilon,
    pic_eq1_epsilon,
    variation_ratio_closed_form,
)
from shuffledp.accounting.variation_ratio import variation_ratio_epsilon, variation_ratio_epsilon_lower
from shuffledp.errors import PrivacyParameterError
from shuffledp.params import VariationRatio

BoundFunc = Callable[[VariationRatio, int, float], float]


@dataclass(frozen=True)
class BoundMethod:
    """An amplification bound of the table: name, kind, regime and the function computing it.

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
    accountant : {"variation-ratio", "clones", "stronger-clones"} or None
        The accountant that prices a release by this (upper) bound; ``None``:
        `ClosedFormAccountant`, which calls ``func``.

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
    accountant: Literal["variation-ratio", "clones", "stronger-clones"] | None = None


def _generic(func: Callable[[float, int, float], float]) -> BoundFunc:
    """Adapt ``func(eps0, n, delta)`` to the table's signature ``(params, n, delta)``."""

    def bound(params: VariationRatio, n: int, delta: float) -> float:
        return func(math.log(params.p), n, delta)

    return bound


def _variation_ratio(params: VariationRatio, n: int, delta: float) -> float:
    return variation_ratio_epsilon(params, n, delta)


def _variation_ratio_lower(params: VariationRatio, n: int, delta: float) -> float:
    return variation_ratio_epsilon_lower(params, n, delta)


_VARIATION_RATIO = "Wang et al. VLDB 2024; segmented paper Theorem 1, Lemma 3, Proposition 1"

#: Every bound method, by name: the one dispatch table.
METHODS: dict[str, BoundMethod] = {
    method.name: method
    for method in (
        BoundMethod("variation-ratio", "upper", False, _variation_ratio, _VARIATION_RATIO, "variation-ratio"),
        BoundMethod("variation-ratio-lower", "lower", False, _variation_ratio_lower, _VARIATION_RATIO),
        BoundMethod(
            "clones",
            "upper",
            True,
            _generic(clone_epsilon),
            "Feldman-McMillan-Talwar FOCS 2021, numerical clone bound",
            "clones",
        ),
        BoundMethod(
            "stronger-clones",
            "upper",
            True,
            _generic(stronger_clone_epsilon),
            "Feldman-McMillan-Talwar SODA 2023, stronger clones",
            "stronger-clones",
        ),
        BoundMethod(
            "erlingsson", "upper", True, _generic(erlingsson_epsilon), "Erlingsson et al. SODA 2019, Theorem 7"
        ),
        BoundMethod(
            "blanket-hoeffding",
            "upper",
            True,
            _generic(blanket_hoeffding_epsilon),
            "Balle et al. CRYPTO 2019, blanket + Hoeffding",
        ),
        BoundMethod(
            "blanket-bennett",
            "upper",
            True,
            _generic(blanket_bennett_epsilon),
            "Balle et al. CRYPTO 2019, blanket + Bennett",
        ),
        BoundMethod(
            "fmt-closed-form", "upper", True, _generic(fmt_epsilon), "Feldman-McMillan-Talwar FOCS 2021, Theorem 3.1"
        ),
        BoundMethod(
            "pic-eq1", "upper", True, _generic(pic_eq1_epsilon), "PIC paper (USENIX Security 2025), Theorem 5.2 / Eq. 1"
        ),
        BoundMethod(
            "variation-ratio-closed-form",
            "upper",
            False,
            variation_ratio_closed_form,
            "Wang et al. VLDB 2024 §4.1; segmented paper Eq. 1",
        ),
    )
}


def register_method(method: BoundMethod) -> None:
    """Add ``method`` to the table at run time (it is then priced by `ClosedFormAccountant` through ``func``).

    Parameters
    ----------
    method : BoundMethod

    Raises
    ------
    ValueError
        If a method of that name is already in the table.

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


def available_methods(kind: Literal["upper", "lower"] | None = None) -> dict[str, BoundMethod]:
    """The bound methods of the table (all, or only upper / lower bounds), by name.

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
    return {name: m for name, m in sorted(METHODS.items()) if kind is None or m.kind == kind}


def _article(kind: str) -> str:
    return f"an {kind}" if kind == "upper" else f"a {kind}"


def lookup_method(name: str, kind: str) -> BoundMethod:
    """The table's method ``name``, which must be of ``kind``.

    Parameters
    ----------
    name : str
    kind : {"upper", "lower"}

    Returns
    -------
    BoundMethod

    Raises
    ------
    PrivacyParameterError
        If there is no such method, or it is of the other kind.

    Examples
    --------
    >>> lookup_method("pic-eq1", "upper").reference
    'PIC paper (USENIX Security 2025), Theorem 5.2 / Eq. 1'
    """
    if name not in METHODS:
        names = ", ".join(sorted(m for m, b in METHODS.items() if b.kind == kind))
        raise PrivacyParameterError(f"unknown bound method {name!r}; {kind} bounds: {names}")
    method = METHODS[name]
    if method.kind != kind:
        raise PrivacyParameterError(f"method {name!r} is {_article(method.kind)} bound, not {_article(kind)} bound")
    return method


__all__ = ["METHODS", "BoundFunc", "BoundMethod", "available_methods", "lookup_method", "register_method"]
