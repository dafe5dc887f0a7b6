"""Utility metrics of PIC §7 on hand-computed instances and against direct set arithmetic."""

import math

import numpy as np
import pytest

from shuffledp.errors import DomainError, ShapeError
from shuffledp.tasks import (
    Matching,
    matching_size_ratio,
    mean_l2_error,
    min_weight_matching,
    neighbor_scores,
    radius_neighbors,
    success_ratio,
    travel_cost,
    travel_cost_ratio,
)

# True locations: two users on the x axis, two workers 4 above them.
TRUE_A = np.array([[0.0, 0.0], [3.0, 0.0]])
TRUE_B = np.array([[0.0, 4.0], [3.0, 4.0]])


def _crossed():
    """The matching noisy reports might produce: user 0 with worker 1, user 1 with worker 0."""
    return Matching.from_pairs(np.array([0, 1]), np.array([1, 0]), TRUE_A, TRUE_B)


def test_travel_cost_charges_true_distances():
    assert travel_cost(_crossed(), TRUE_A, TRUE_B) == pytest.approx(10.0)  # two 3-4-5 triangles
    reference = min_weight_matching(TRUE_A, TRUE_B)
    assert travel_cost(reference, TRUE_A, TRUE_B) == pytest.approx(8.0)
    assert travel_cost_ratio(_crossed(), reference, TRUE_A, TRUE_B) == pytest.approx(1.25)


def test_travel_cost_uses_true_not_reported_locations():
    reports_a = TRUE_A + [[0.0, 3.9], [0.0, 3.9]]  # reported right next to the workers
    m = min_weight_matching(reports_a, TRUE_B)
    assert np.nansum(m.distance_a) == pytest.approx(0.2)
    assert travel_cost(m, TRUE_A, TRUE_B) == pytest.approx(8.0)


def test_success_ratio_counts_pairs_truly_within_radius_over_the_smaller_group():
    A = np.array([[0.0, 0.0], [1.0, 0.0], [5.0, 5.0]])
    B = np.array([[0.0, 0.3], [1.0, 0.6]])
    m = Matching.from_pairs(np.array([0, 1]), np.array([0, 1]), A, B)
    assert success_ratio(m, A, B, 0.5) == pytest.approx(1 / 2)
    assert success_ratio(m, A, B, 0.6) == pytest.approx(2 / 2)  # distance exactly tau counts
    assert success_ratio(m, A, B, 0.1) == 0.0
    with pytest.raises(DomainError, match="radius"):
        success_ratio(m, A, B, -1.0)


def test_matching_size_ratio():
    A, B = np.zeros((3, 2)), np.ones((4, 2))
    full = Matching.from_pairs(np.arange(3), np.arange(3), A, B)
    one = Matching.from_pairs(np.array([2]), np.array([0]), A, B)
    assert matching_size_ratio(one, full) == pytest.approx(1 / 3)
    empty = Matching.from_pairs(np.zeros(0, int), np.zeros(0, int), A, B)
    assert math.isnan(matching_size_ratio(one, empty))
    with pytest.raises(ShapeError, match="same sizes"):
        matching_size_ratio(one, Matching.from_pairs(np.arange(2), np.arange(2), A[:2], B))


def test_metrics_refuse_true_locations_of_the_wrong_size():
    with pytest.raises(ShapeError, match="true_a and true_b must have 2 and 2 rows"):
        travel_cost(_crossed(), TRUE_A[:1], TRUE_B)
    with pytest.raises(ShapeError, match="true_b"):
        travel_cost(_crossed(), TRUE_A, np.zeros((2, 3)))


def test_neighbor_scores_against_set_arithmetic():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (150, 2))
    Y = X + rng.normal(0, 0.05, X.shape)
    true, got = radius_neighbors(X, 0.2), radius_neighbors(Y, 0.2)
    sets_t = [set(true.row(i)) for i in range(150)]
    sets_r = [set(got.row(i)) for i in range(150)]
    hits = sum(len(t & r) for t, r in zip(sets_t, sets_r, strict=True))
    p = hits / sum(map(len, sets_r))
    r = hits / sum(map(len, sets_t))
    s = neighbor_scores(got, true)
    assert s.precision == pytest.approx(p) and s.recall == pytest.approx(r)
    assert s.f1 == pytest.approx(2 * p * r / (p + r))
    assert 0.3 < s.f1 < 1.0  # noise really changed some neighbour sets
    assert neighbor_scores(true, true) == (1.0, 1.0, 1.0)


def test_neighbor_scores_undefined_cases():
    X = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0]])
    none = radius_neighbors(X, 0.0)
    some = radius_neighbors(X, 0.2)
    s = neighbor_scores(none, some)  # nothing retrieved: precision undefined
    assert math.isnan(s.precision) and s.recall == 0.0 and math.isnan(s.f1)
    wrong = radius_neighbors(np.array([[0.0, 0.0], [5.0, 5.0], [5.1, 5.0]]), 0.2)
    assert neighbor_scores(wrong, some) == (0.0, 0.0, 0.0)
    with pytest.raises(ShapeError, match="same reports"):
        neighbor_scores(some, radius_neighbors(X[:2], 0.2))


def test_mean_l2_error():
    assert mean_l2_error([[3.0, 4.0], [0.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]]) == pytest.approx(3.0)
    with pytest.raises(ShapeError, match="reported must have the shape of true"):
        mean_l2_error(np.zeros((3, 2)), np.zeros((2, 2)))
    with pytest.raises(DomainError, match=r"reported\[0\]"):
        mean_l2_error([[np.nan, 0.0]], [[0.0, 0.0]])


def test_radius_neighbor_counts_hand_computed():
    """True: 0-1 at 0.1 (pair), 2 alone. Reported: 0 and 1 stay 0.15 apart, 2 moves next to 1 (0.1 away).
    N = {0:{1}, 1:{0}, 2:{}}; N^ = {0:{1}, 1:{0,2}, 2:{1}}: hits 2, retrieved 4, true 2."""
    from shuffledp.tasks import radius_neighbor_counts

    true = np.array([[0.0, 0.0], [0.1, 0.0], [1.0, 0.0]])
    reported = np.array([[0.0, 0.0], [0.15, 0.0], [0.25, 0.0]])
    c = radius_neighbor_counts(reported, true, 0.2)
    assert (c.hits, c.retrieved, c.true, c.exact) == (2.0, 4, 2, True)
    p, r, f1 = c.scores()
    assert (p, r) == (0.5, 1.0) and f1 == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    "noise", [0.02, 0.3]
)  # few retrieved pairs (enumerates them) / many (enumerates the true ones)
def test_radius_neighbor_counts_match_the_neighbour_tables(noise):
    from shuffledp.tasks import radius_neighbor_counts

    rng = np.random.default_rng(7)
    true = rng.uniform(-1, 1, (400, 2))
    reported = true + rng.normal(0, noise, true.shape) * (1 if noise < 0.1 else 3)
    c = radius_neighbor_counts(reported, true, 0.2)
    expected = neighbor_scores(radius_neighbors(reported, 0.2), radius_neighbors(true, 0.2))
    assert c.exact and c.scores() == pytest.approx(tuple(expected))


def test_sampled_hits_are_unbiased_within_their_standard_error():
    from shuffledp.tasks import radius_neighbor_counts

    rng = np.random.default_rng(8)
    true = rng.uniform(-1, 1, (600, 2))
    reported = true + rng.normal(0, 0.1, true.shape)
    exact = radius_neighbor_counts(reported, true, 0.3)
    sampled = radius_neighbor_counts(
        reported, true, 0.3, enumeration_limit=0, samples=400_000, rng=np.random.default_rng(1)
    )
    assert not sampled.exact and (sampled.retrieved, sampled.true) == (exact.retrieved, exact.true)
    assert abs(sampled.hits - exact.hits) < 4.5 * sampled.hits_stderr
    assert sampled.scores().f1 == pytest.approx(exact.scores().f1, abs=0.02)
