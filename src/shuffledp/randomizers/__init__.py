"""Local randomizers (LDP and metric-LDP), vectorised over rows.

Every randomizer class is importable from here::

    from shuffledp.randomizers import MinkowskiResponse, Laplace, KRandomizedResponse

``make_randomizer(name, epsilon, dim=...)`` builds one by its registry name
(``available_randomizers()``).  Randomizer modules are imported on first use.
"""

from shuffledp._util.lazy import lazy_exports
from shuffledp.randomizers.base import DiscreteRandomizer, LocalRandomizer
from shuffledp.randomizers.domains import Box, Categorical, Domain, IntegerRange, L2Ball, Subsets, UnitSphere

_CATEGORICAL = "shuffledp.randomizers.categorical"
_EXPORTS = {
    "MinkowskiResponse": "shuffledp.randomizers.minkowski",
    "Laplace": "shuffledp.randomizers.laplace",
    "PlanarLaplace": "shuffledp.randomizers.laplace",
    "Staircase": "shuffledp.randomizers.staircase",
    "SquareWave": "shuffledp.randomizers.squarewave",
    "PrivUnit": "shuffledp.randomizers.privunit",
    "PrivUnitG": "shuffledp.randomizers.privunit",
    "PrivHS": "shuffledp.randomizers.duchi",
    "KRandomizedResponse": _CATEGORICAL,
    "BinaryRandomizedResponse": _CATEGORICAL,
    "SubsetExponential": _CATEGORICAL,
    "PoissonRandomizer": _CATEGORICAL,
    "Geometric": "shuffledp.randomizers.geometric",
    "UnaryEncoding": "shuffledp.randomizers.unary",
    "UnaryRR": "shuffledp.randomizers.unary",
    "available_randomizers": "shuffledp.randomizers.registry",
    "make_randomizer": "shuffledp.randomizers.registry",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

__all__ = [
    "Box",
    "Categorical",
    "DiscreteRandomizer",
    "Domain",
    "IntegerRange",
    "L2Ball",
    "LocalRandomizer",
    "Subsets",
    "UnitSphere",
]
__all__ += _EXPORTS
__all__.sort()
