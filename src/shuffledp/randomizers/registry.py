"""Randomizers by name, for the CLI and experiments.

``make_randomizer("minkowski", 3.0, dim=2)`` builds a randomizer from its
registry name; the size argument is passed as ``dim`` to vector randomizers
and as ``k`` (domain size) to categorical ones.  Modules are imported lazily.
"""

from __future__ import annotations

import importlib
from typing import Any

from shuffledp.errors import PrivacyParameterError
from shuffledp.randomizers.base import LocalRandomizer

#: name -> (module, class, keyword receiving the size argument)
_ENTRIES: dict[str, tuple[str, str, str]] = {
    "minkowski": ("shuffledp.randomizers.minkowski", "MinkowskiResponse", "dim"),
    "laplace": ("shuffledp.randomizers.laplace", "Laplace", "dim"),
    "planar_laplace": ("shuffledp.randomizers.laplace", "PlanarLaplace", "dim"),
    "staircase": ("shuffledp.randomizers.staircase", "Staircase", "dim"),
    "square_wave": ("shuffledp.randomizers.squarewave", "SquareWave", "dim"),
    "privunit": ("shuffledp.randomizers.privunit", "PrivUnit", "dim"),
    "privunit_g": ("shuffledp.randomizers.privunit", "PrivUnitG", "dim"),
    "privhs": ("shuffledp.randomizers.duchi", "PrivHS", "dim"),
    "krr": ("shuffledp.randomizers.categorical", "KRandomizedResponse", "k"),
    "unary": ("shuffledp.randomizers.unary", "UnaryEncoding", "k"),
}


def randomizer_class(name: str) -> type[LocalRandomizer]:
    """The class registered under ``name``."""
    if name not in _ENTRIES:
        raise PrivacyParameterError(f"unknown randomizer {name!r}; available: {', '.join(available_randomizers())}")
    module, cls, _ = _ENTRIES[name]
    return getattr(importlib.import_module(module), cls)


def make_randomizer(name: str, epsilon: float, dim: int = 2, **kwargs: Any) -> LocalRandomizer:
    """Build the randomizer ``name`` with local budget ``epsilon`` and size ``dim``."""
    cls = randomizer_class(name)
    return cls(epsilon, **{_ENTRIES[name][2]: dim}, **kwargs)


def available_randomizers() -> list[str]:
    return sorted(_ENTRIES)
