"""The §6 competitors: unbiased estimators, exact MSE where it has a closed form, calibrated privacy."""

import math

import numpy as np
import pytest

from shuffledp.accounting.accountants import VariationRatioAccountant
from shuffledp.accounting.segmented import user_event
from shuffledp.datasets.setvalued import item_frequencies, uniform_item_sets
from shuffledp.errors import ProtocolError
from shuffledp.params import PoissonReport
from shuffledp.protocols.segmented.baselines import (
    BallsIntoBins,
    SeparatedBallsIntoBins,
    SubsetExponentialBaseline,
    bound_weights,
)
from shuffledp.randomizers.categorical import privset_variance

D, S, N, DELTA = 8, 2, 400, 1e-4
LEVELS, COUNTS = (0.5, 1.0, 2.0), (100, 200, 100)


@pytest.fixture(scope="module")
def items():
    # skewed sets (not uniform), so unbiasedness is checked away from the symmetric case
    rng = np.random.default_rng(0)
    base = uniform_item_sets(N, D, S, rng)
    base[: N // 2, 0] = np.where(base[: N // 2, 1] == 0, 1, 0)
    return base


def _unbiased(runs, truth, sigmas=4.0):
    runs = np.asarray(runs)
    se = runs.std(axis=0, ddof=1) / math.sqrt(runs.shape[0])
    assert np.all(np.abs(runs.mean(axis=0) - truth) <= sigmas * se + 1e-12), (runs.mean(axis=0), truth, se)


def _mse_matches(errors, expected, sigmas=4.0):
    errors = np.asarray(errors)
    se = errors.std(ddof=1) / math.sqrt(errors.size)
    assert abs(errors.mean() - expected) <= sigmas * se, (errors.mean(), expected, se)


def test_balls_into_bins_is_unbiased_with_the_closed_form_mse(items):
    rng = np.random.default_rng(1)
    truth = item_frequencies(items, D)
    mm = BallsIntoBins.calibrated(1.0, DELTA, D, S, N)
    runs = [mm.run(items, rng) for _ in range(800)]
    _unbiased(runs, truth)
    # true balls are exact: only the n ceil(mu) Bernoulli(mu / ceil(mu)) uniform dummies vary
    p = mm.mu / (D * math.ceil(mm.mu))
    _mse_matches([np.sum((r - truth) ** 2) for r in runs], N * math.ceil(mm.mu) * D * p * (1 - p) / N**2)


def test_balls_into_bins_dummy_rate_is_the_least_that_meets_the_level():
    mm = BallsIntoBins.calibrated(1.0, DELTA, D, S, N)
    assert mm.user_epsilon() <= 1.0
    fewer = VariationRatioAccountant().compose(user_event(1.0, D, N, mm.mu * (1 - 3e-3), S)).get_epsilon(DELTA)
    assert fewer > 1.0
    assert isinstance(mm.event().event.params, PoissonReport)  # the three-count pricing of the items


@pytest.mark.parametrize("model, epsilon", [("local", 2.0), ("shuffle", 0.5)])
def test_subset_exponential_is_unbiased_with_its_exact_variance(items, model, epsilon):
    rng = np.random.default_rng(2)
    truth = item_frequencies(items, D)
    sub = SubsetExponentialBaseline.calibrated(model, epsilon, D, S, N, DELTA)
    runs = [sub.run(items, rng) for _ in range(600)]
    _unbiased(runs, truth)
    R = sub.randomizer
    _mse_matches([np.sum((r - truth) ** 2) for r in runs], privset_variance(R.epsilon, D, S, R.size_out) / N)


def test_subset_exponential_shuffle_budget_is_the_largest_meeting_the_target():
    sub = SubsetExponentialBaseline.calibrated("shuffle", 0.5, D, S, N, DELTA)
    assert sub.local_epsilon > 0.5  # amplification lets the local budget exceed the target
    assert VariationRatioAccountant().compose(sub.event()).get_epsilon(DELTA) <= 0.5
    above = SubsetExponentialBaseline("shuffle", 0.5, DELTA, D, S, N, sub.local_epsilon * 1.01)
    assert VariationRatioAccountant().compose(above.event()).get_epsilon(DELTA) > 0.5
    assert SubsetExponentialBaseline.calibrated("local", 2.0, D, S, N).event() is None


def test_bound_weights_follow_section_6():
    w = bound_weights(LEVELS, COUNTS, DELTA, D, S)
    raw = [1 / math.sqrt(D * S * S * math.log(1 / DELTA) / (n * e) ** 2 + S / n) for e, n in zip(LEVELS, COUNTS)]
    assert w == pytest.approx(np.array(raw) / sum(raw), rel=1e-12)
    assert w.sum() == pytest.approx(1.0) and min(w[1], w[2]) > w[0]  # n_k E_k: 50 < 200 = 200


@pytest.mark.parametrize("weighted", [False, True])
def test_separated_runs_are_unbiased_over_level_assignments(items, weighted):
    rng = np.random.default_rng(3)
    truth = item_frequencies(items, D)
    sep = SeparatedBallsIntoBins.calibrated(LEVELS, COUNTS, DELTA, D, S, weighted=weighted)
    assert [r.n_users for r in sep.runs] == list(COUNTS)
    assert all(r.user_epsilon() <= e for r, e in zip(sep.runs, LEVELS))
    assert sep.runs[0].mu > sep.runs[2].mu  # the conservative level needs more dummies
    if not weighted:
        assert sep.weights == pytest.approx((1 / 3,) * 3)
    assignment = np.repeat(np.arange(3), COUNTS)
    _unbiased([sep.run(items, rng.permutation(assignment), rng) for _ in range(600)], truth)


def test_bad_input_is_named(items):
    mm = BallsIntoBins.calibrated(1.0, DELTA, D, S, N)
    with pytest.raises(ProtocolError, match="items must hold n_users=400 users"):
        mm.run(items[:10])
    with pytest.raises(ProtocolError, match="model must be one of local, shuffle, got 'central'"):
        SubsetExponentialBaseline.calibrated("central", 1.0, D, S, N)
    sep = SeparatedBallsIntoBins.calibrated(LEVELS, COUNTS, DELTA, D, S, weighted=True)
    with pytest.raises(ProtocolError, match="level_index must assign \\[100, 200, 100\\] users"):
        sep.run(items, np.zeros(N, dtype=int))
