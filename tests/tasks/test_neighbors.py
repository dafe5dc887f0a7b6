"""Neighbour search (PIC §7.2): brute force, equivariance, duplicates, bad input, 10^5 scale."""

import numpy as np
import pytest
from scipy.spatial import cKDTree

from shuffledp.errors import DomainError, ShapeError
from shuffledp.tasks import PAIR_DTYPE, Neighbors, k_nearest_neighbors, radius_neighbors


def _distances(X):
    return np.linalg.norm(X[:, None, :] - X[None, :, :], axis=2)


def _rows(nb: Neighbors):
    return [nb.row(i) for i in range(len(nb))]


def test_radius_neighbors_match_brute_force():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (80, 2))
    D = _distances(X)
    nb = radius_neighbors(X, 0.3)
    assert len(nb) == 80
    for i in range(80):
        expected = np.flatnonzero((D[i] <= 0.3) & (np.arange(80) != i))
        expected = expected[np.argsort(D[i, expected])]
        np.testing.assert_array_equal(nb.row(i), expected)
        s = slice(nb.indptr[i], nb.indptr[i + 1])
        np.testing.assert_allclose(nb.distances[s], D[i, expected], rtol=0, atol=1e-15)
    assert nb.counts.sum() > 80  # a real test: most reports have neighbours


def test_k_nearest_neighbors_match_brute_force():
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, (60, 3))
    D = _distances(X)
    np.fill_diagonal(D, np.inf)
    for k in (1, 4, 59):
        nb = k_nearest_neighbors(X, k)
        assert np.all(nb.counts == k)
        for i in range(60):
            np.testing.assert_array_equal(nb.row(i), np.argsort(D[i])[:k])


def _assert_equivariant(task, X, rng, trials=5):
    base = task(X)
    for _ in range(trials):
        s = rng.permutation(len(X))
        inv = np.argsort(s)
        got = task(X[s])
        for k in range(len(X)):  # new report k is old report s[k]; old index j is now inv[j]
            np.testing.assert_array_equal(got.row(k), inv[base.row(s[k])])
            a = slice(got.indptr[k], got.indptr[k + 1])
            b = slice(base.indptr[s[k]], base.indptr[s[k] + 1])
            np.testing.assert_array_equal(got.distances[a], base.distances[b])


@pytest.mark.parametrize(
    "task", [lambda X: radius_neighbors(X, 0.25), lambda X: k_nearest_neighbors(X, 5)], ids=["radius", "knn"]
)
def test_neighbors_are_permutation_equivariant(task):
    # Continuous random data: no two distances tie almost surely.
    rng = np.random.default_rng(3)
    _assert_equivariant(task, rng.uniform(-1, 1, (120, 2)), rng)


@pytest.mark.parametrize(
    "task", [lambda X: radius_neighbors(X, 0.3), lambda X: k_nearest_neighbors(X, 3)], ids=["radius", "knn"]
)
def test_neighbors_are_equivariant_on_a_lattice_full_of_ties(task):
    # Every lattice point has 4 neighbours at exactly 0.25: the order within a row and
    # which of them k-NN keeps is decided by the canonical order, not the input order.
    X = np.array([(x, y) for x in range(6) for y in range(5)], dtype=float) / 4
    _assert_equivariant(task, X, np.random.default_rng(4), trials=10)


def test_radius_neighbors_are_symmetric_and_exclude_self():
    rng = np.random.default_rng(5)
    nb = radius_neighbors(rng.uniform(-1, 1, (100, 2)), 0.4)
    p = nb.pairs()
    assert np.all(p[:, 0] != p[:, 1])
    forward = set(map(tuple, p))
    assert forward == {(j, i) for i, j in forward}
    assert len(forward) == len(p)


def test_identical_reports_are_neighbours_at_distance_zero():
    X = np.vstack([np.zeros((6, 2)), [[0.9, 0.9], [-0.9, 0.8]]])
    knn = k_nearest_neighbors(X, 2)
    for i in range(6):  # six copies: self may not be among the 3 nearest found, it is still excluded
        row = knn.row(i)
        assert len(row) == 2 and i not in row and set(row) <= set(range(6))
    np.testing.assert_array_equal(knn.distances[:12], 0.0)
    rad = radius_neighbors(X, 0.0)
    np.testing.assert_array_equal(rad.counts, [5] * 6 + [0, 0])


def test_user_output_decodes_to_the_row():
    rng = np.random.default_rng(6)
    nb = radius_neighbors(rng.uniform(-1, 1, (30, 2)), 0.5)
    for i in range(30):
        rec = np.frombuffer(nb.user_output(i), dtype=PAIR_DTYPE)
        np.testing.assert_array_equal(rec["index"], nb.row(i))
        np.testing.assert_array_equal(rec["distance"], nb.distances[nb.indptr[i] : nb.indptr[i + 1]])
    with pytest.raises(ShapeError, match=r"i must be a report index in \[0, 30\)"):
        nb.user_output(30)


def test_tiny_groups():
    assert len(radius_neighbors(np.zeros((0, 2)), 1.0)) == 0
    one = radius_neighbors([[0.5, 0.5]], 1.0)
    assert len(one) == 1 and one.counts[0] == 0
    np.testing.assert_array_equal(k_nearest_neighbors([[0.0, 0.0], [1.0, 0.0]], 1).indices, [1, 0])


def test_bad_input_is_refused_naming_the_argument():
    with pytest.raises(ShapeError, match=r"reports.*\(4,\)"):
        radius_neighbors(np.zeros(4), 0.1)
    with pytest.raises(ShapeError, match="reports"):
        k_nearest_neighbors(np.zeros((2, 2, 2)), 1)
    X = np.zeros((5, 2))
    X[3] = [np.nan, 0.0]
    with pytest.raises(DomainError, match=r"reports\[3\]"):
        radius_neighbors(X, 0.1)
    with pytest.raises(DomainError, match=r"reports\[3\]"):
        k_nearest_neighbors(X, 1)
    for radius in (-1.0, float("nan"), "x"):
        with pytest.raises(DomainError, match="radius must be a finite number >= 0"):
            radius_neighbors(np.zeros((3, 2)), radius)
    for k in (0, 3, 2.5, "2", -1):
        with pytest.raises(DomainError, match=r"k must be an integer in \[1, 2\]"):
            k_nearest_neighbors(np.zeros((3, 2)), k)


def test_radius_neighbors_at_scale_match_ball_counts():
    n = 100_000
    rng = np.random.default_rng(7)
    X = rng.uniform(-1, 1, (n, 2))
    r = np.sqrt(20 / (np.pi * n))
    nb = radius_neighbors(X, r)
    expected = cKDTree(X).query_ball_point(X, r, return_length=True) - 1
    np.testing.assert_array_equal(nb.counts, expected)
    assert np.all(nb.distances <= r) and np.all(np.diff(nb.distances)[np.diff(nb.pairs()[:, 0]) == 0] >= 0)
