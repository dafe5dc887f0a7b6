"""Re-export of :class:`shuffledp.params.VariationRatio` (it lives in the bottom layer)."""

from shuffledp.params import EPS0_MAX, EPS0_MIN, VariationRatio, check_eps0

__all__ = ["EPS0_MAX", "EPS0_MIN", "VariationRatio", "check_eps0"]
