"""Randomizers by name, for the CLI and experiments.

``make_randomizer("minkowski", 3.0, dim=2)`` builds a randomizer from its
registry name; the size argument is passed as ``dim`` to vector randomizers,
as ``k`` (domain size) to categorical ones (see `size_argument`).  Modules
are imported lazily.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from shuffledp.errors import PrivacyParameterError
from shuffledp.randomizers.base import LocalRandomizer

__all__ = ["available_randomizers", "make_randomizer", "max_size", "randomizer_class", "size_argument"]


@dataclass(frozen=True)
class _Entry:
    """Where a randomizer lives and how the registry's size argument reaches it."""

    module: str
    cls: str
    size: str | None  # keyword receiving the size argument; None: the randomizer has no size
    defaults: dict[str, Any] = field(default_factory=dict)


_CATEGORICAL = "shuffledp.randomizers.categorical"
#: name -> entry.  The Poisson randomizer (segmented paper, Eq. 2) is not listed: it is
#: parameterised by a sampling rate, not by a local epsilon (its epsilon is infinite).
_ENTRIES: dict[str, _Entry] = {
    "minkowski": _Entry("shuffledp.randomizers.minkowski", "MinkowskiResponse", "dim"),
    "laplace": _Entry("shuffledp.randomizers.laplace", "Laplace", "dim"),
    "planar_laplace": _Entry("shuffledp.randomizers.laplace", "PlanarLaplace", "dim"),
    "staircase": _Entry("shuffledp.randomizers.staircase", "Staircase", "dim"),
    "square_wave": _Entry("shuffledp.randomizers.squarewave", "SquareWave", "dim"),
    "privunit": _Entry("shuffledp.randomizers.privunit", "PrivUnit", "dim"),
    "privunit_g": _Entry("shuffledp.randomizers.privunit", "PrivUnitG", "dim"),
    "privhs": _Entry("shuffledp.randomizers.duchi", "PrivHS", "dim"),
    "krr": _Entry(_CATEGORICAL, "KRandomizedResponse", "k"),
    "binary_rr": _Entry(_CATEGORICAL, "BinaryRandomizedResponse", None),
    # one item per user by default; pass size_in=... for larger sets
    "subset_exponential": _Entry(_CATEGORICAL, "SubsetExponential", "k", {"size_in": 1}),
    # integers {0, ..., size}
    "geometric": _Entry("shuffledp.randomizers.geometric", "Geometric", "high", {"low": 0}),
    "unary": _Entry("shuffledp.randomizers.unary", "UnaryEncoding", "k"),
}


def randomizer_class(name: str) -> type[LocalRandomizer]:
    """The class registered under ``name``.

    Raises
    ------
    PrivacyParameterError
        For an unknown name (the message lists the available ones).

    Examples
    --------
    >>> from shuffledp.randomizers.registry import randomizer_class
    >>> randomizer_class("privhs").__name__
    'PrivHS'
    """
    if name not in _ENTRIES:
        raise PrivacyParameterError(f"unknown randomizer {name!r}; available: {', '.join(available_randomizers())}")
    entry = _ENTRIES[name]
    return getattr(importlib.import_module(entry.module), entry.cls)


def make_randomizer(name: str, epsilon: float, dim: int = 2, **kwargs: Any) -> LocalRandomizer:
    """Build the randomizer registered as ``name`` with local budget ``epsilon`` and size ``dim``.

    Parameters
    ----------
    name : str
        A registry name, one of `available_randomizers`.
    epsilon : float
        Local privacy budget (the class checks its own range).
    dim : int, default 2
        The size: the dimension of vector randomizers, the number of categories k
        of categorical ones, the largest integer of the geometric one (inputs
        0..dim); binary randomized response ignores it.
    **kwargs
        Further keyword arguments of the class; they override the registry's
        defaults (e.g. ``size_in=1`` of the subset exponential mechanism).

    Returns
    -------
    LocalRandomizer
        The randomizer.

    Raises
    ------
    PrivacyParameterError
        For an unknown name (the message lists the available ones) or parameters
        the class refuses.

    Examples
    --------
    >>> from shuffledp.randomizers import make_randomizer
    >>> make_randomizer("krr", 1.0, dim=4)
    KRandomizedResponse(epsilon=1, k=4)
    >>> make_randomizer("minkowski", 3.0, dim=2, norm="l2")
    MinkowskiResponse(epsilon=3, domain='the l2 ball of radius 1 in R^2')
    """
    cls = randomizer_class(name)
    entry = _ENTRIES[name]
    size = {} if entry.size is None else {entry.size: dim}
    return cls(epsilon, **size, **(entry.defaults | kwargs))


def size_argument(name: str) -> str | None:
    """The keyword that receives ``make_randomizer``'s size ("dim", "k", "high"), or None.

    Raises
    ------
    PrivacyParameterError
        For an unknown name.

    Examples
    --------
    >>> from shuffledp.randomizers.registry import size_argument
    >>> size_argument("minkowski"), size_argument("krr"), size_argument("binary_rr")
    ('dim', 'k', None)
    """
    randomizer_class(name)  # unknown names fail with the list of names
    return _ENTRIES[name].size


def max_size(name: str) -> int | None:
    """The largest size the randomizer accepts (its ``MAX_SIZE``: what its amplification_parameters() computes
    in a few seconds and bounded memory), or None if it has no such cap.

    Examples
    --------
    >>> from shuffledp.randomizers.registry import max_size
    >>> max_size("laplace"), max_size("krr")
    (100000, None)
    """
    return getattr(randomizer_class(name), "MAX_SIZE", None)


def available_randomizers() -> list[str]:
    """The registry names accepted by `make_randomizer`, sorted.

    The Poisson randomizer is not listed: it is parameterised by a sampling rate,
    not by a local epsilon.

    Returns
    -------
    list of str
        The names.

    Examples
    --------
    >>> from shuffledp.randomizers import available_randomizers
    >>> available_randomizers()[:4]
    ['binary_rr', 'geometric', 'krr', 'laplace']
    >>> "minkowski" in available_randomizers()
    True
    """
    return sorted(_ENTRIES)
