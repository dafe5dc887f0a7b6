"""Two-group matchings (PIC §7.1): brute force, equivariance, bad input, 10^5 scale."""

import itertools

import numpy as np
import pytest
from scipy.spatial import cKDTree

from shuffledp.errors import DomainError, ShapeError
from shuffledp.tasks import NO_MATCH, PAIR_DTYPE, Matching, min_weight_matching, radius_matching


def _check_valid(m: Matching, A: np.ndarray, B: np.ndarray) -> None:
    """One-to-one, both sides agree, distances are the reports' Euclidean distances."""
    assert m.partner_a.shape == (len(A),) and m.partner_b.shape == (len(B),)
    rows = np.flatnonzero(m.partner_a != NO_MATCH)
    cols = m.partner_a[rows]
    assert len(np.unique(cols)) == len(cols)
    np.testing.assert_array_equal(m.partner_b[cols], rows)
    assert np.count_nonzero(m.partner_b != NO_MATCH) == len(rows)
    np.testing.assert_allclose(m.distance_a[rows], np.linalg.norm(A[rows] - B[cols], axis=1), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(m.distance_b[cols], m.distance_a[rows])
    assert np.isnan(m.distance_a[m.partner_a == NO_MATCH]).all()
    assert np.isnan(m.distance_b[m.partner_b == NO_MATCH]).all()


def _injective_maps(n_small: int, n_large: int):
    """Every way to match each member of the smaller group to a distinct member of the larger."""
    return itertools.permutations(range(n_large), n_small)


def _pair_distances(A, B):
    return np.linalg.norm(A[:, None, :] - B[None, :, :], axis=2)


@pytest.mark.parametrize("n_a,n_b", [(1, 1), (3, 5), (5, 3), (6, 6), (7, 4), (4, 7), (7, 7)])
def test_min_weight_matching_is_optimal_against_enumeration(n_a, n_b):
    rng = np.random.default_rng(100 * n_a + n_b)
    for _ in range(3):
        A, B = rng.uniform(-1, 1, (n_a, 2)), rng.uniform(-1, 1, (n_b, 2))
        D = _pair_distances(A, B)
        if n_a <= n_b:
            best = min(D[np.arange(n_a), list(p)].sum() for p in _injective_maps(n_a, n_b))
        else:
            best = min(D[list(p), np.arange(n_b)].sum() for p in _injective_maps(n_b, n_a))
        m = min_weight_matching(A, B)
        _check_valid(m, A, B)
        assert m.size == min(n_a, n_b)
        assert np.nansum(m.distance_a) == pytest.approx(best, rel=1e-12)


def _relabelled(m: Matching, sa: np.ndarray, sb: np.ndarray) -> Matching:
    """The matching expected after reordering A as A[sa] and B as B[sb].

    New report k of A is old report sa[k]; its partner, old index p in B, is now at
    position inv_sb[p] (NO_MATCH stays NO_MATCH).
    """
    inv_a, inv_b = np.argsort(sa), np.argsort(sb)

    def relabel(partner, inv):
        return np.where(partner == NO_MATCH, NO_MATCH, inv[np.where(partner == NO_MATCH, 0, partner)])

    return Matching(
        relabel(m.partner_a[sa], inv_b), relabel(m.partner_b[sb], inv_a), m.distance_a[sa], m.distance_b[sb]
    )


def _assert_same(m1: Matching, m2: Matching) -> None:
    np.testing.assert_array_equal(m1.partner_a, m2.partner_a)
    np.testing.assert_array_equal(m1.partner_b, m2.partner_b)
    np.testing.assert_array_equal(m1.distance_a, m2.distance_a)
    np.testing.assert_array_equal(m1.distance_b, m2.distance_b)


def _assert_equivariant(task, A, B, rng, trials=5):
    m = task(A, B)
    for _ in range(trials):
        sa, sb = rng.permutation(len(A)), rng.permutation(len(B))
        _assert_same(task(A[sa], B[sb]), _relabelled(m, sa, sb))


@pytest.mark.parametrize("n_a,n_b", [(40, 40), (50, 30), (30, 50)])
def test_min_weight_matching_is_permutation_equivariant(n_a, n_b):
    # Continuous random data: the optimal matching is unique almost surely.
    rng = np.random.default_rng(n_a * n_b)
    A, B = rng.uniform(-1, 1, (n_a, 2)), rng.uniform(-1, 1, (n_b, 2))
    _assert_equivariant(min_weight_matching, A, B, rng)


def _tied_gadgets():
    """Six far-apart gadgets of two reports per group whose four cross distances are all
    exactly sqrt(0.5): 2^6 matchings are optimal (and maximum within radius 0.8), and only
    the canonical order picks one."""
    offsets = np.array([(3.0 * i, 3.0 * j) for i in range(3) for j in range(2)])
    A = (offsets[:, None, :] + [[0.0, 0.0], [1.0, 0.0]]).reshape(-1, 2)
    B = (offsets[:, None, :] + [[0.5, 0.5], [0.5, -0.5]]).reshape(-1, 2)
    return A, B


def test_min_weight_matching_is_equivariant_even_with_tied_optima():
    A, B = _tied_gadgets()
    D = _pair_distances(A, B)
    assert np.count_nonzero(np.sqrt(0.5) == D) == 4 * 6  # every gadget really is tied
    _assert_equivariant(min_weight_matching, A, B, np.random.default_rng(3), trials=20)


def test_rectangular_matching_gives_surplus_members_no_match():
    rng = np.random.default_rng(5)
    A, B = rng.uniform(-1, 1, (9, 2)), rng.uniform(-1, 1, (4, 2))
    m = min_weight_matching(A, B)
    assert m.size == 4 and np.all(m.partner_b != NO_MATCH)
    assert np.count_nonzero(m.partner_a == NO_MATCH) == 5
    for group, partner, distance in ((0, m.partner_a, m.distance_a), (1, m.partner_b, m.distance_b)):
        for i in range(partner.size):
            rec = np.frombuffer(m.user_output(group, i), dtype=PAIR_DTYPE)
            assert rec.shape == (1,) and rec["index"][0] == partner[i]
            np.testing.assert_array_equal(rec["distance"], distance[i : i + 1])
        recs = m.records(group)
        np.testing.assert_array_equal(recs["index"], partner)
        np.testing.assert_array_equal(recs["distance"], distance)


def test_pairs_lists_each_matched_pair_once():
    rng = np.random.default_rng(6)
    A, B = rng.uniform(-1, 1, (6, 2)), rng.uniform(-1, 1, (8, 2))
    m = min_weight_matching(A, B)
    p = m.pairs()
    assert p.shape == (6, 2) and np.all(np.diff(p[:, 0]) > 0)
    np.testing.assert_array_equal(m.partner_a[p[:, 0]], p[:, 1])


@pytest.mark.parametrize("n_a,n_b", [(4, 4), (3, 6), (6, 3), (5, 6)])
def test_radius_matching_has_maximum_size_against_enumeration(n_a, n_b):
    rng = np.random.default_rng(7 * n_a + n_b)
    sizes = set()
    for _ in range(8):
        A, B = rng.uniform(-1, 1, (n_a, 2)), rng.uniform(-1, 1, (n_b, 2))
        allowed = _pair_distances(A, B) <= 0.9
        if n_a <= n_b:
            best = max(allowed[np.arange(n_a), list(p)].sum() for p in _injective_maps(n_a, n_b))
        else:
            best = max(allowed[list(p), np.arange(n_b)].sum() for p in _injective_maps(n_b, n_a))
        m = radius_matching(A, B, 0.9)
        _check_valid(m, A, B)
        assert np.all(m.distance_a[m.partner_a != NO_MATCH] <= 0.9)
        assert m.size == best
        sizes.add(best)
    assert len(sizes) > 1  # the instances are not all trivially full or empty


def test_radius_matching_is_permutation_equivariant():
    # Continuous random data; a radius small enough that many maximum matchings exist.
    rng = np.random.default_rng(11)
    A, B = rng.uniform(-1, 1, (300, 2)), rng.uniform(-1, 1, (200, 2))
    _assert_equivariant(lambda a, b: radius_matching(a, b, 0.15), A, B, rng)


def test_radius_matching_is_equivariant_with_tied_optima():
    A, B = _tied_gadgets()
    _assert_equivariant(lambda a, b: radius_matching(a, b, 0.8), A, B, np.random.default_rng(4), trials=20)


def test_radius_matching_extremes():
    rng = np.random.default_rng(8)
    A, B = rng.uniform(-1, 1, (20, 2)), rng.uniform(-1, 1, (15, 2))
    assert radius_matching(A, B, 0.0).size == 0
    assert radius_matching(A, B, 3.0).size == 15  # diameter of [-1,1]^2 is 2*sqrt(2) < 3
    # A report at distance exactly radius is reachable.
    m = radius_matching([[0.0, 0.0]], [[0.3, 0.4]], 0.5)
    assert m.size == 1 and m.distance_a[0] == 0.5


@pytest.mark.parametrize("task", [min_weight_matching, lambda a, b: radius_matching(a, b, 0.5)])
def test_empty_groups_leave_everyone_unmatched(task):
    m = task(np.zeros((0, 2)), np.ones((3, 2)))
    assert m.size == 0 and np.all(m.partner_b == NO_MATCH) and m.partner_a.shape == (0,)
    assert task(np.ones((2, 2)), np.zeros((0, 2))).size == 0


def test_matchings_work_in_other_dimensions():
    rng = np.random.default_rng(9)
    A, B = rng.uniform(-1, 1, (5, 3)), rng.uniform(-1, 1, (5, 3))
    _check_valid(min_weight_matching(A, B), A, B)
    _check_valid(radius_matching(A, B, 1.0), A, B)


@pytest.mark.parametrize("task", [min_weight_matching, lambda a, b: radius_matching(a, b, 0.5)])
def test_bad_reports_are_refused_naming_the_argument(task):
    good = np.zeros((3, 2))
    with pytest.raises(ShapeError, match=r"group_a.*\(5,\)"):
        task(np.zeros(5), good)
    with pytest.raises(ShapeError, match=r"group_b.*\(n, 2\).*\(3, 3\)"):
        task(good, np.zeros((3, 3)))
    with pytest.raises(ShapeError, match="group_a"):
        task([["a", "b"]], good)
    bad = good.copy()
    bad[2, 1] = np.nan
    with pytest.raises(DomainError, match=r"group_a\[2\].*not finite"):
        task(bad, good)
    bad[2, 1] = np.inf
    with pytest.raises(DomainError, match=r"group_b\[2\]"):
        task(good, bad)


@pytest.mark.parametrize("radius", [-0.1, float("nan"), float("inf"), "far", None])
def test_bad_radius_is_refused(radius):
    with pytest.raises(DomainError, match=r"radius must be a finite number >= 0"):
        radius_matching(np.zeros((2, 2)), np.zeros((2, 2)), radius)


def test_user_output_refuses_unknown_group_or_index():
    m = min_weight_matching(np.zeros((2, 2)), np.ones((3, 2)))
    with pytest.raises(ShapeError, match="group must be 0"):
        m.user_output(2, 0)
    with pytest.raises(ShapeError, match=r"i must be a report index in \[0, 3\)"):
        m.user_output(1, 3)


def test_radius_matching_at_scale_is_valid_and_maximal():
    """10^5 reports per group, about 5 reachable partners each: the matching is one-to-one,
    within the radius, and maximal (no reachable pair of two unmatched reports is left)."""
    n = 100_000
    rng = np.random.default_rng(12)
    A, B = rng.uniform(-1, 1, (n, 2)), rng.uniform(-1, 1, (n, 2))
    r = np.sqrt(20 / (np.pi * n))
    m = radius_matching(A, B, r)
    _check_valid(m, A, B)
    assert np.all(m.distance_a[m.partner_a != NO_MATCH] <= r)
    free_a, free_b = A[m.partner_a == NO_MATCH], B[m.partner_b == NO_MATCH]
    assert len(free_a) > 0
    assert cKDTree(free_a).count_neighbors(cKDTree(free_b), r) == 0


# ---------------------------------------------------------------- scale: sparse and blocked methods (issue 18)
@pytest.mark.parametrize("method", ["sparse", "blocked"])
@pytest.mark.parametrize("sizes", [(300, 200), (200, 300), (250, 250)])
def test_large_group_methods_return_a_full_matching_near_the_dense_optimum(method, sizes, monkeypatch):
    import shuffledp.tasks.matching as M

    monkeypatch.setattr(M, "BLOCK_SIZE", 60)  # several leaves and passes at this size
    rng = np.random.default_rng(sum(sizes))
    A, B = rng.uniform(-1, 1, (sizes[0], 2)), rng.uniform(-1, 1, (sizes[1], 2))
    dense = M.min_weight_matching(A, B, method="dense")
    got = M.min_weight_matching(A, B, method=method, candidates=6)
    assert got.size == min(sizes)
    assert np.unique(got.partner_a[got.partner_a >= 0]).size == got.size
    from shuffledp.tasks import travel_cost

    ratio = travel_cost(got, A, B) / travel_cost(dense, A, B)
    assert 1.0 - 1e-12 <= ratio < 1.25


@pytest.mark.parametrize("method", ["sparse", "blocked"])
def test_large_group_methods_are_permutation_equivariant(method, monkeypatch):
    import shuffledp.tasks.matching as M

    monkeypatch.setattr(M, "BLOCK_SIZE", 50)
    rng = np.random.default_rng(3)
    A, B = rng.uniform(-1, 1, (120, 2)), rng.uniform(-1, 1, (90, 2))
    pa, pb = rng.permutation(120), rng.permutation(90)
    m = M.min_weight_matching(A, B, method=method)
    q = M.min_weight_matching(A[pa], B[pb], method=method)
    inv_b = np.argsort(pb)
    expected = np.where(m.partner_a[pa] >= 0, inv_b[np.maximum(m.partner_a[pa], 0)], m.partner_a[pa])
    assert np.array_equal(q.partner_a, expected)


def test_auto_switches_to_blocked_above_the_dense_cap(monkeypatch):
    import shuffledp.tasks.matching as M

    monkeypatch.setattr(M, "DENSE_MAX_PAIRS", 100)
    monkeypatch.setattr(M, "BLOCK_SIZE", 40)
    rng = np.random.default_rng(4)
    A, B = rng.uniform(-1, 1, (80, 2)), rng.uniform(-1, 1, (80, 2))
    assert M.min_weight_matching(A, B).size == 80
    with pytest.raises(ShapeError):
        M.min_weight_matching(A, B, method="greedy")
