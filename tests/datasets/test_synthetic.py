"""Synthetic generators: distributions checked with KS / chi-square at fixed seeds."""

import numpy as np
import pytest
from scipy import stats

from shuffledp.datasets import clustered_points, synthetic_instance, uniform_points
from shuffledp.errors import DomainError


def test_uniform_points_are_uniform_on_the_box():
    X = uniform_points(20_000, np.random.default_rng(1), dim=3)
    assert X.shape == (20_000, 3)
    for col in X.T:
        assert stats.kstest(col, stats.uniform(-1, 2).cdf).pvalue > 1e-3
    # Independence of the coordinates: the four quadrants are equally likely.
    quadrant = (X[:, 0] > 0) * 2 + (X[:, 1] > 0)
    assert stats.chisquare(np.bincount(quadrant)).pvalue > 1e-3


def test_clustered_points_follow_the_truncated_mixture():
    rng = np.random.default_rng(2)
    # A cluster at the centre (truncation negligible) and one at the edge (heavily truncated).
    X = clustered_points(40_000, [[0.0, 0.0], [0.9, -0.9]], 0.1, rng)
    assert np.all(np.abs(X) <= 1.0)
    near_edge = X[:, 0] > 0.45
    assert stats.binomtest(int(near_edge.sum()), len(X), 0.5).pvalue > 1e-3  # equal weights
    centre, edge = X[~near_edge], X[near_edge]
    assert stats.kstest(centre[:, 0], stats.norm(0, 0.1).cdf).pvalue > 1e-3
    # Edge cluster, x coordinate: N(0.9, 0.1^2) conditioned on [-1, 1] (closed-form CDF).
    lo, hi = stats.norm.cdf((-1 - 0.9) / 0.1), stats.norm.cdf((1 - 0.9) / 0.1)
    cdf = lambda x: (stats.norm.cdf((x - 0.9) / 0.1) - lo) / (hi - lo)  # noqa: E731
    assert stats.kstest(edge[:, 0], cdf).pvalue > 1e-3
    assert stats.kstest(-edge[:, 1], cdf).pvalue > 1e-3


def test_generators_are_reproducible_from_the_seed():
    a = synthetic_instance(50, 20, np.random.default_rng(7), layout="clustered")
    b = synthetic_instance(50, 20, np.random.default_rng(7), layout="clustered")
    np.testing.assert_array_equal(a.users, b.users)
    np.testing.assert_array_equal(a.workers, b.workers)
    assert (a.n_users, a.n_workers, a.serving_radius) == (50, 20, 0.4)
    c = synthetic_instance(50, 20, np.random.default_rng(8), layout="clustered")
    assert not np.array_equal(a.users, c.users)


def test_clustered_groups_share_hot_spots():
    inst = synthetic_instance(3000, 3000, np.random.default_rng(3), layout="clustered", n_clusters=1, spread=0.05)
    # One hot spot: both groups are centred on the same point.
    np.testing.assert_allclose(inst.users.mean(axis=0), inst.workers.mean(axis=0), atol=0.01)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"n_users": -1}, "n_users must be an integer >= 0"),
        ({"n_workers": 2.5}, "n_workers"),
        ({"radius": 0.0}, "radius must be a finite number > 0"),
        ({"layout": "grid"}, "layout must be 'uniform' or 'clustered'"),
        ({"layout": "clustered", "n_clusters": 0}, "n_clusters must be an integer >= 1"),
        ({"layout": "clustered", "spread": -0.1}, "spread must be a finite number > 0"),
    ],
)
def test_bad_parameters_are_refused(kwargs, message):
    args = {"n_users": 5, "n_workers": 5, **kwargs}
    with pytest.raises(DomainError, match=message):
        synthetic_instance(args.pop("n_users"), args.pop("n_workers"), np.random.default_rng(0), **args)


def test_bad_centres_are_refused():
    with pytest.raises(DomainError, match="centres"):
        clustered_points(5, [[1.5, 0.0]], 0.1, np.random.default_rng(0))
    with pytest.raises(DomainError, match="dim must be an integer >= 1"):
        uniform_points(5, dim=0)
