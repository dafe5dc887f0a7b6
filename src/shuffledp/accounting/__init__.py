"""Privacy-amplification accounting for the shuffle model."""

from shuffledp.accounting.bounds import available_methods, shuffle_epsilon, shuffle_epsilon_lower
from shuffledp.accounting.inverse import local_epsilon
from shuffledp.accounting.params import VariationRatio

__all__ = ["VariationRatio", "available_methods", "local_epsilon", "shuffle_epsilon", "shuffle_epsilon_lower"]
