"""Utility metrics of the PIC experiments (§7.1 Figs 5–7, §7.2 Figs 10–11, §7.3 Tables 5-6).

Tasks run on the *reports*; utility is judged on the *true* locations: a
matching computed from noisy reports is charged the true distances of the
pairs it formed.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from shuffledp.errors import ShapeError
from shuffledp.tasks.base import as_reports, check_radius
from shuffledp.tasks.matching import Matching
from shuffledp.tasks.neighbors import Neighbors

__all__ = [
    "NeighborScores",
    "PairCounts",
    "matching_size_ratio",
    "mean_l2_error",
    "neighbor_scores",
    "radius_neighbor_counts",
    "shapley_error",
    "success_ratio",
    "travel_cost",
    "travel_cost_ratio",
]


def mean_l2_error(reported: Any, true: Any) -> float:
    """Mean Euclidean distance between each report and its true value (PIC §7.1, Fig. 5).

    mean over i of ||reported_i - true_i||_2.

    Parameters
    ----------
    reported, true : array_like, shape (n, d)
        Reports (or estimates) and the true values, row by row.

    Returns
    -------
    float
        The mean l2 error (NaN for n = 0).

    Raises
    ------
    ShapeError
        When the arrays are not (n, d) or their shapes differ.
    DomainError
        For a non-finite value.

    Examples
    --------
    >>> from shuffledp.tasks import mean_l2_error
    >>> mean_l2_error([[0.0, 1.0], [3.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]])   # (1 + 5) / 2
    3.0
    """
    X = as_reports(true, "true")
    Y = as_reports(reported, "reported", dim=X.shape[1])
    if Y.shape != X.shape:
        raise ShapeError(f"reported must have the shape of true {X.shape}, got {Y.shape}")
    return float(np.linalg.norm(Y - X, axis=1).mean())


def _true_pair_distances(matching: Matching, true_a: Any, true_b: Any) -> np.ndarray:
    A = as_reports(true_a, "true_a")
    B = as_reports(true_b, "true_b", dim=A.shape[1])
    if (len(A), len(B)) != (matching.partner_a.size, matching.partner_b.size):
        raise ShapeError(
            f"true_a and true_b must have {matching.partner_a.size} and {matching.partner_b.size} rows "
            f"like the matching, got {len(A)} and {len(B)}"
        )
    p = matching.pairs()
    return np.linalg.norm(A[p[:, 0]] - B[p[:, 1]], axis=1)


def travel_cost(matching: Matching, true_a: Any, true_b: Any) -> float:
    """Total travel cost (PIC §7.1, Fig. 6): sum over matched pairs of the true distance ||l_i - l_j||_2.

    Parameters
    ----------
    matching : Matching
        A matching computed on the reports.
    true_a, true_b : array_like, shape (n_a, d) and (n_b, d)
        The true locations of the two groups, in the matching's order.

    Returns
    -------
    float
        The total true distance of the matched pairs.

    Raises
    ------
    ShapeError
        When the true locations do not have the matching's group sizes.

    Examples
    --------
    >>> from shuffledp.tasks import min_weight_matching, travel_cost
    >>> A, B = [[0.0, 0.0], [1.0, 0.0]], [[0.9, 0.0], [0.1, 0.0]]
    >>> travel_cost(min_weight_matching(A, B), A, B)
    0.2
    """
    return float(_true_pair_distances(matching, true_a, true_b).sum())


def travel_cost_ratio(private: Matching, reference: Matching, true_a: Any, true_b: Any) -> float:
    """Travel cost of ``private`` over that of ``reference`` (the matching of the true locations).

    Parameters
    ----------
    private, reference : Matching
        The matching of the reports and the matching of the true locations.
    true_a, true_b : array_like
        The true locations of the two groups.

    Returns
    -------
    float
        ``travel_cost(private) / travel_cost(reference)``; NaN when the reference costs 0.

    Examples
    --------
    >>> from shuffledp.tasks import min_weight_matching, travel_cost_ratio
    >>> A, B = [[0.0, 0.0], [1.0, 0.0]], [[0.9, 0.0], [0.1, 0.0]]
    >>> best = min_weight_matching(A, B)
    >>> travel_cost_ratio(best, best, A, B)
    1.0
    """
    cost = travel_cost(reference, true_a, true_b)
    return travel_cost(private, true_a, true_b) / cost if cost > 0 else float("nan")


def success_ratio(matching: Matching, true_a: Any, true_b: Any, radius: float) -> float:
    """Successful matching ratio (§7.1, Fig. 7).

    Matched pairs whose *true* distance is <= ``radius``, over min(|G_a|, |G_b|).

    Parameters
    ----------
    matching : Matching
        A matching computed on the reports.
    true_a, true_b : array_like
        The true locations of the two groups.
    radius : float
        The serving radius, finite and >= 0.

    Returns
    -------
    float
        The ratio, in [0, 1]; NaN when a group is empty.

    Raises
    ------
    ShapeError
        When the true locations do not have the matching's group sizes.
    DomainError
        For a negative or non-finite radius.

    Examples
    --------
    >>> from shuffledp.tasks import min_weight_matching, success_ratio
    >>> A, B = [[0.0, 0.0], [1.0, 0.0]], [[0.9, 0.0], [0.1, 0.0]]
    >>> success_ratio(min_weight_matching(A, B), A, B, radius=0.2)
    1.0
    """
    tau = check_radius(radius, "radius")
    dist = _true_pair_distances(matching, true_a, true_b)
    smaller = min(matching.partner_a.size, matching.partner_b.size)
    return float(np.count_nonzero(dist <= tau) / smaller) if smaller else float("nan")


def matching_size_ratio(private: Matching, reference: Matching) -> float:
    """Number of pairs of ``private`` over that of ``reference`` (PIC §7.1).

    Parameters
    ----------
    private, reference : Matching
        Matchings of groups of the same sizes.

    Returns
    -------
    float
        ``private.size / reference.size``; NaN when the reference is empty.

    Raises
    ------
    ShapeError
        When the matchings cover groups of different sizes.

    Examples
    --------
    >>> from shuffledp.tasks import matching_size_ratio, min_weight_matching, radius_matching
    >>> A, B = [[0.0, 0.0], [1.0, 0.0]], [[0.9, 0.0], [5.0, 5.0]]
    >>> matching_size_ratio(radius_matching(A, B, 0.2), min_weight_matching(A, B))
    0.5
    """
    if (private.partner_a.size, private.partner_b.size) != (reference.partner_a.size, reference.partner_b.size):
        raise ShapeError("private and reference must match groups of the same sizes")
    return private.size / reference.size if reference.size else float("nan")


class NeighborScores(NamedTuple):
    """Micro-averaged precision, recall and F1 of neighbour sets (PIC §7.2); see `neighbor_scores`.

    Attributes
    ----------
    precision, recall, f1 : float
        The three scores (NaN where undefined).
    """

    precision: float
    recall: float
    f1: float


def neighbor_scores(retrieved: Neighbors, true: Neighbors) -> NeighborScores:
    """§7.2: precision = sum_i |N_i ∩ N^_i| / sum_i |N^_i|, recall = sum_i |N_i ∩ N^_i| / sum_i |N_i|, F1.

    ``true`` holds the neighbours N_i found on the true locations, ``retrieved``
    the N^_i found on the reports.  A ratio with a zero denominator (nothing
    retrieved, or no true neighbours at all) is undefined and returned as NaN,
    and so is F1 then.

    Parameters
    ----------
    retrieved, true : Neighbors
        Neighbour tables of the same reports.

    Returns
    -------
    NeighborScores
        ``(precision, recall, f1)``.

    Raises
    ------
    ShapeError
        When the tables cover different numbers of reports.

    Examples
    --------
    >>> from shuffledp.tasks import k_nearest_neighbors, neighbor_scores, radius_neighbors
    >>> X = [[0.0, 0.0], [0.1, 0.0], [1.0, 0.0]]
    >>> neighbor_scores(k_nearest_neighbors(X, 1), radius_neighbors(X, 0.5))   # 2 of 3 found are true
    NeighborScores(precision=0.666..., recall=1.0, f1=0.8)
    """
    if len(retrieved) != len(true):
        raise ShapeError(f"retrieved and true must cover the same reports, got {len(retrieved)} and {len(true)}")
    n = np.int64(len(true))
    keys_r = retrieved.pairs() @ np.array([n, 1], dtype=np.int64)
    keys_t = true.pairs() @ np.array([n, 1], dtype=np.int64)
    hits = np.intersect1d(keys_r, keys_t, assume_unique=True).size
    precision = hits / keys_r.size if keys_r.size else float("nan")
    recall = hits / keys_t.size if keys_t.size else float("nan")
    if precision + recall > 0:
        f1 = 2 * precision * recall / (precision + recall)
    else:
        f1 = 0.0 if precision == 0 and recall == 0 else float("nan")
    return NeighborScores(float(precision), float(recall), float(f1))


def shapley_error(estimated: Any, true: Any) -> float:
    """Shapley l2 error of PIC §7.3 (Tables 5-6): sum_i ||Shapley^_i - Shapley_i||_2 / |S|.

    Each user's value is a scalar, so its l2 norm is an absolute value: the mean
    absolute difference between the values computed from the sanitized gradients
    and from the true ones (the paper's formula, taken literally).

    Parameters
    ----------
    estimated, true : array_like, shape (s,)
        Shapley values from the sanitized and from the true gradients, user by user.

    Returns
    -------
    float
        The mean absolute difference (NaN for s = 0).

    Raises
    ------
    ShapeError
        When the arrays are not 1-d of the same length.
    DomainError
        For a non-finite value.

    Examples
    --------
    >>> from shuffledp.tasks import shapley_error
    >>> shapley_error([0.5, -0.25, 0.25], [0.25, 0.25, 0.25])   # (0.25 + 0.5 + 0) / 3
    0.25
    """
    a = np.asarray(estimated, dtype=np.float64)
    b = np.asarray(true, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise ShapeError(
            f"estimated and true must be 1-d arrays of the same length, got shapes {a.shape} and {b.shape}"
        )
    X = as_reports(b[:, None], "true") if b.size else b[:, None]
    Y = as_reports(a[:, None], "estimated") if a.size else a[:, None]
    return float(np.abs(Y - X).mean()) if a.size else float("nan")


class PairCounts(NamedTuple):
    """Directed neighbour pairs (i, j), i != j, behind the §7.2 scores; see `radius_neighbor_counts`.

    Attributes
    ----------
    hits : float
        sum_i |N_i ∩ N^_i| (an unbiased estimate when ``exact`` is False).
    retrieved : int
        sum_i |N^_i|, pairs within the radius on the reports (exact).
    true : int
        sum_i |N_i|, pairs within the radius on the true locations (exact).
    exact : bool
        Whether ``hits`` was counted pair by pair or estimated from a uniform sample of pairs.
    hits_stderr : float
        Standard error of ``hits`` (0 when exact).
    """

    hits: float
    retrieved: int
    true: int
    exact: bool
    hits_stderr: float

    def scores(self) -> NeighborScores:
        """Micro-averaged precision, recall and F1 (§7.2), NaN where a denominator is zero."""
        precision = self.hits / self.retrieved if self.retrieved else float("nan")
        recall = self.hits / self.true if self.true else float("nan")
        if precision + recall > 0:
            f1 = 2 * precision * recall / (precision + recall)
        else:
            f1 = 0.0 if precision == 0 and recall == 0 else float("nan")
        return NeighborScores(float(precision), float(recall), float(f1))


#: Largest number of unordered pairs `radius_neighbor_counts` enumerates (32 MB of index pairs).
PAIR_ENUMERATION_LIMIT = 2_000_000
#: Uniform random pairs drawn when both pair sets exceed the limit (relative standard error of the
#: hits sqrt((1 - p) / (samples p)) for a fraction p of all pairs: 0.7% at p = 1%).
PAIR_SAMPLES = 2_000_000


def radius_neighbor_counts(
    reported: Any,
    true: Any,
    radius: float,
    *,
    enumeration_limit: int = PAIR_ENUMERATION_LIMIT,
    samples: int = PAIR_SAMPLES,
    rng: np.random.Generator | None = None,
    true_pairs: int | None = None,
) -> PairCounts:
    """The pair counts of §7.2's scores for radius-tau neighbours, without building the neighbour lists.

    N_i are the other users within ``radius`` of user i's true location, N^_i those
    within ``radius`` of its report.  The totals sum_i |N_i| and sum_i |N^_i| are
    counted exactly with k-d trees (``cKDTree.count_neighbors``: no pair is stored).
    The hits sum_i |N_i ∩ N^_i| are counted exactly by enumerating the smaller of
    the two pair sets when it has at most ``enumeration_limit`` pairs and checking
    the other distance; otherwise (dense data at large n: all 88,100 Austin addresses
    have 8e8 pairs within 0.2) they are estimated from ``samples`` uniform random
    pairs {i, j}, i != j: hits = 2 * (n choose 2) * (fraction within the radius in
    both), unbiased, with its binomial standard error.  Never an n x n matrix.

    Parameters
    ----------
    reported, true : array_like, shape (n, d)
        Reports (or estimates) and true locations of the same users, row by row.
    radius : float
        tau, finite and >= 0.
    enumeration_limit, samples : int
        See above.
    rng : numpy.random.Generator or None
        Source of the sampled pairs (only used when sampling).
    true_pairs : int or None
        sum_i |N_i| when already known (``PairCounts.true`` of an earlier call with the same
        true locations and radius), to skip counting it again.

    Returns
    -------
    PairCounts
        ``.scores()`` gives (precision, recall, F1).

    Raises
    ------
    ShapeError
        When the arrays are not (n, d) of the same shape.
    DomainError
        For a non-finite value or a bad radius.

    Examples
    --------
    >>> from shuffledp.tasks.metrics import radius_neighbor_counts
    >>> true = [[0.0, 0.0], [0.1, 0.0], [1.0, 0.0]]
    >>> reported = [[0.0, 0.0], [0.5, 0.0], [0.9, 0.0]]   # user 1 drifts from user 0 to user 2
    >>> c = radius_neighbor_counts(reported, true, 0.2)
    >>> c.hits, c.retrieved, c.true, c.scores()
    (0.0, 0, 2, NeighborScores(precision=nan, recall=0.0, f1=nan))
    """
    from scipy.spatial import cKDTree

    X = as_reports(true, "true")
    Y = as_reports(reported, "reported", dim=X.shape[1])
    if Y.shape != X.shape:
        raise ShapeError(f"reported must have the shape of true {X.shape}, got {Y.shape}")
    tau = check_radius(radius, "radius")
    n = len(X)
    if n < 2:
        return PairCounts(0.0, 0, 0, True, 0.0)
    tree_x, tree_y = cKDTree(X), cKDTree(Y)
    # ordered pairs, self pairs removed
    n_true = int(tree_x.count_neighbors(tree_x, tau)) - n if true_pairs is None else int(true_pairs)
    n_retrieved = int(tree_y.count_neighbors(tree_y, tau)) - n
    smaller = min(n_true, n_retrieved) // 2
    if smaller <= enumeration_limit:
        tree, other = (tree_x, Y) if n_true <= n_retrieved else (tree_y, X)
        pairs = tree.query_pairs(tau, output_type="ndarray")
        diff = other[pairs[:, 0]] - other[pairs[:, 1]]
        hits = 2 * int(np.count_nonzero(np.einsum("ij,ij->i", diff, diff) <= tau * tau))
        return PairCounts(float(hits), n_retrieved, n_true, True, 0.0)
    gen = rng if rng is not None else np.random.default_rng()
    i = gen.integers(0, n, size=samples)
    j = gen.integers(0, n - 1, size=samples)
    j += j >= i  # uniform over j != i
    inside = np.ones(samples, dtype=bool)
    for Z in (X, Y):
        sq = np.zeros(samples)
        for col in np.ascontiguousarray(Z.T):  # 1-d gathers: faster than gathering rows
            d = col[i] - col[j]
            sq += d * d
        inside &= sq <= tau * tau
    ordered = n * (n - 1)
    p = np.count_nonzero(inside) / samples
    return PairCounts(p * ordered, n_retrieved, n_true, False, ordered * math.sqrt(p * (1 - p) / samples))
