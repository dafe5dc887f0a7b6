"""Local randomizers (LDP and metric-LDP), vectorised over rows."""

from shuffledp.randomizers.base import DiscreteRandomizer, LocalRandomizer
from shuffledp.randomizers.domains import Box, Categorical, Domain, IntegerRange, L2Ball, Subsets, UnitSphere

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
