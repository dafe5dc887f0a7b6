"""Privacy-amplification accounting for the shuffle model."""

from shuffledp.accounting.params import VariationRatio

__all__ = ["VariationRatio"]
