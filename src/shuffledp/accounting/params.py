"""Re-export of `shuffledp.params.VariationRatio` (it lives in the bottom layer).

Examples
--------
>>> import shuffledp.params
>>> VariationRatio is shuffledp.params.VariationRatio, EPS0_MIN, EPS0_MAX
(True, 1e-06, 700.0)
"""

from shuffledp.params import EPS0_MAX, EPS0_MIN, VariationRatio, check_eps0

__all__ = ["EPS0_MAX", "EPS0_MIN", "VariationRatio", "check_eps0"]
