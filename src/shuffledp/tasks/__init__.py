"""Permutation-equivariant tasks f(L) run by the PIC server (matchings, neighbours, Shapley values), and their utility metrics.

See ``tasks.base`` for the contract (output i belongs to report i; canonical order).
"""

from shuffledp.tasks.base import NO_MATCH, PAIR_DTYPE
from shuffledp.tasks.matching import Matching, min_weight_matching, radius_matching
from shuffledp.tasks.metrics import (
    NeighborScores,
    PairCounts,
    matching_size_ratio,
    mean_l2_error,
    neighbor_scores,
    radius_neighbor_counts,
    shapley_error,
    success_ratio,
    travel_cost,
    travel_cost_ratio,
)
from shuffledp.tasks.neighbors import Neighbors, k_nearest_neighbors, radius_neighbors
from shuffledp.tasks.shapley import (
    ShapleyTask,
    ShapleyValues,
    cosine_utility,
    exact_shapley,
    order_shapley,
    permutation_shapley,
    shapley_values,
)

__all__ = [
    "NO_MATCH",
    "PAIR_DTYPE",
    "Matching",
    "NeighborScores",
    "Neighbors",
    "PairCounts",
    "ShapleyTask",
    "ShapleyValues",
    "cosine_utility",
    "exact_shapley",
    "k_nearest_neighbors",
    "matching_size_ratio",
    "mean_l2_error",
    "min_weight_matching",
    "neighbor_scores",
    "order_shapley",
    "permutation_shapley",
    "radius_matching",
    "radius_neighbor_counts",
    "radius_neighbors",
    "shapley_error",
    "shapley_values",
    "success_ratio",
    "travel_cost",
    "travel_cost_ratio",
]
