"""Every task runs on any finite report (DESIGN.md, "Tasks"): huge, tiny, duplicated or all equal.

Distances of reports up to 1.8e308 overflowed to inf (min-weight: "cost matrix is infeasible",
the k-d trees: float overflow or an out-of-range index); the tasks now compute on points
scaled by a common power of two, which changes nothing for reports below 2^256.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from shuffledp.tasks import NO_MATCH, k_nearest_neighbors, min_weight_matching, radius_matching, radius_neighbors

_finite = st.floats(allow_nan=False, allow_infinity=False)


def _points(max_n=8):
    return st.integers(0, max_n).flatmap(lambda n: arrays(np.float64, (n, 2), elements=_finite))


@settings(max_examples=60, deadline=None)
@given(a=_points(), b=_points())
def test_matchings_run_on_any_finite_reports(a, b):
    m = min_weight_matching(a, b)
    assert m.size == min(len(a), len(b))
    r = radius_matching(a, b, 0.4)
    assert r.size <= min(len(a), len(b))
    for match in (m, r):
        matched = match.partner_a[match.partner_a != NO_MATCH]
        assert len(set(matched.tolist())) == len(matched)


@settings(max_examples=60, deadline=None)
@given(x=_points(10), k=st.integers(1, 3))
def test_neighbours_run_on_any_finite_reports(x, k):
    radius_neighbors(x, 0.2)
    if len(x) > k:
        nb = k_nearest_neighbors(x, k)
        assert (nb.counts == k).all() and (nb.indices != np.repeat(np.arange(len(x)), k)).all()


@pytest.mark.parametrize("scale", [1.0, 1e100, 2.0**300])
def test_large_reports_match_as_their_scaled_copies_do(scale):
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-1, 1, (20, 2)), rng.uniform(-1, 1, (25, 2))
    ref = min_weight_matching(a, b)
    big = min_weight_matching(a * scale, b * scale)
    assert np.array_equal(ref.partner_a, big.partner_a)
    ref_nb, big_nb = k_nearest_neighbors(a, 3), k_nearest_neighbors(a * scale, 3)
    assert np.array_equal(ref_nb.indices, big_nb.indices)
