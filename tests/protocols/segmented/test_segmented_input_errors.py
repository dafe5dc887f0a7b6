"""Every public boundary of the segmented protocol names the bad value and what is allowed (nothing rounded, clipped or dropped).

Nothing is rounded, clipped or dropped: a float item id, an out-of-range index or a NaN count
is an error, never a silently different input.
"""

import math

import numpy as np
import pytest

from shuffledp.datasets.setvalued import fix_set_size, item_frequencies
from shuffledp.errors import (
    DataError,
    DomainError,
    PrivacyLevelError,
    PrivacyParameterError,
    ProtocolError,
    ShapeError,
)
from shuffledp.protocols.segmented import (
    SegmentedParameters,
    aggregate_levels,
    estimate_frequencies,
    level_indices,
    mse_bound,
    optimize_parameters,
    run_segmented,
    shuffle,
    user_messages,
)
from shuffledp.protocols.segmented.baselines import membership
from shuffledp.protocols.segmented.levels import check_level_index
from shuffledp.protocols.segmented.messages import check_lambdas
from shuffledp.protocols.segmented.optimizer import full_rate_blankets, max_sampling_rate

RNG = np.random.default_rng(0)
LEVELS, D, S, N, DELTA = (0.5, 1.0, 2.0), 8, 2, 60, 1e-3


# --------------------------------------------------------------------------- run_segmented: delta and m vs parameters


def _params(delta=DELTA, m=1.5):  # m not an integer: an integer m makes the message count public
    return SegmentedParameters(LEVELS, (N / 3,) * 3, N, D, S, delta, m, (0.1, 0.2, 0.3), (0.0,) * 3, math.nan, None)


def _run(**kw):
    items = np.tile([0, 1], (N, 1))
    levels = np.repeat(LEVELS, N // 3)
    args = {"parameters": _params(), "rng": np.random.default_rng(0)} | kw
    delta = args.pop("delta", DELTA)
    return run_segmented(items, levels, LEVELS, delta, D, S, **args)


def test_parameters_for_another_delta_are_refused():
    with pytest.raises(ProtocolError, match=r"delta=0\.001; this run has .*delta=1e-06"):
        _run(delta=1e-6)
    assert _run().parameters.delta == DELTA  # the same delta is accepted


def test_m_that_disagrees_with_the_parameters_is_refused():
    with pytest.raises(ProtocolError, match=r"m=2\.5 disagrees with parameters\.m=1\.5"):
        _run(m=2.5)
    assert _run(m=1.5).parameters.m == 1.5


def test_parameters_must_be_segmented_parameters():
    with pytest.raises(ProtocolError, match="parameters must be a SegmentedParameters.*got dict"):
        _run(parameters={"m": 1.0})


def test_run_checks_delta_even_with_parameters():
    with pytest.raises(PrivacyParameterError, match="^delta"):
        _run(delta=0.0)


def test_delta_p_without_epsilon_p_is_refused():
    with pytest.raises(PrivacyParameterError, match=r"delta_p=1e-06 was given without epsilon_p"):
        _run(delta_p=1e-6)


# --------------------------------------------------------------------------- item_frequencies, fix_set_size


@pytest.mark.parametrize(
    "items,d,error,pattern",
    [
        ([[0, 8]], 8, DomainError, r"items\[0, 1\]=8 is outside the item domain \[0, 7\]"),
        ([[0, -1]], 8, DomainError, r"items\[0, 1\]=-1 is outside"),
        ([[0.0, 1.5]], 8, DomainError, "integer item ids .* got dtype float64"),
        ([[1, 1]], 8, DataError, r"items\[0\] repeats an item \(\[1, 1\]\)"),
        ([0, 1], 8, ShapeError, r"\(n, s\) array .* got shape \(2,\)"),
        (np.zeros((3, 0), dtype=int), 8, ShapeError, r"s >= 1, got shape \(3, 0\)"),
        (np.zeros((0, 2), dtype=int), 8, ShapeError, "at least one user"),
        ([[0, 1]], 0, PrivacyParameterError, r"^d must be an integer in \[1, inf\); got 0"),
    ],
)
def test_item_frequencies_bad_input(items, d, error, pattern):
    with pytest.raises(error, match=pattern):
        item_frequencies(np.asarray(items), d)


def test_fix_set_size_does_not_truncate_float_items():
    with pytest.raises(DataError, match=r"sets\[1\] must be a 1-d array of integer items in \[0, 7\], got \[1\.5\]"):
        fix_set_size([np.array([0, 1]), np.array([1.5])], 8, 2)


# --------------------------------------------------------------------------- estimate_frequencies


def _estimate(**kw):
    args = {
        "messages": np.array([0, 1, 1]),
        "d": 4,
        "level_counts": [2.0, 3.0],
        "lambdas": [0.5, 1.0],
        "n_users": 5,
        "m": 1.0,
    } | kw
    return estimate_frequencies(**args)


@pytest.mark.parametrize(
    "change,error,pattern",
    [
        ({"messages": np.array([0, 4])}, DomainError, r"messages\[1\]=4 is outside the item domain \[0, 3\]"),
        ({"messages": np.array([-1, 0])}, DomainError, r"messages\[0\]=-1 is outside"),
        ({"messages": np.array([0.0, 1.0])}, ShapeError, "integer item ids in \\[0, 3\\], got dtype float64"),
        ({"messages": np.zeros((2, 2), dtype=int)}, ShapeError, r"1-d array of item ids, got shape \(2, 2\)"),
        ({"level_counts": [2.0, math.nan]}, PrivacyLevelError, r"level_counts\[1\] must be a finite number, got nan"),
        ({"level_counts": [2.0]}, PrivacyLevelError, r"one count per level \(2, as lambdas\), got shape \(1,\)"),
        ({"level_counts": [-4.0, 1.0]}, PrivacyLevelError, r"denominator\) must be > 0, got -1\.0"),
        (
            {"lambdas": [0.5, 1.5]},
            PrivacyParameterError,
            r"lambdas\[1\] \(Poisson sampling rate\) must be a number in \(0, 1\]; got 1\.5",
        ),
        ({"lambdas": [0.5, math.nan]}, PrivacyParameterError, r"lambdas\[1\] .* got nan"),
        ({"d": 1}, PrivacyParameterError, r"^d must be an integer in \[2, inf\); got 1"),
        ({"n_users": 0}, PrivacyParameterError, r"^n_users must be an integer in \[1, inf\); got 0"),
        (
            {"m": -1.0},
            PrivacyParameterError,
            r"^m \(blanket messages per user\) must be a number in \[1e-6, 10000\]; got -1\.0",
        ),
    ],
)
def test_estimate_frequencies_bad_input(change, error, pattern):
    with pytest.raises(error, match=pattern):
        _estimate(**change)


def test_estimate_frequencies_accepts_noisy_counts_and_no_messages():
    # DP level counts may be negative or fractional; the estimate needs only a positive denominator
    w = _estimate(level_counts=[-0.5, 3.5], messages=np.array([], dtype=np.int64))
    assert w.shape == (4,) and np.allclose(w, -5 * 1.0 / 4 / (-0.25 + 3.5))


# --------------------------------------------------------------------------- user_messages, shuffle


def _messages(**kw):
    args = {
        "items": np.tile([0, 1], (4, 1)),
        "level_index": np.array([0, 1, 0, 1]),
        "lambdas": np.array([0.5, 1.0]),
        "m": 1.0,
        "d": 4,
        "rng": np.random.default_rng(0),
    } | kw
    return user_messages(**args)


@pytest.mark.parametrize(
    "change,error,pattern",
    [
        (
            {"level_index": np.array([0, 2, 0, 1])},
            DomainError,
            r"level_index\[1\]=2 is outside the level indices \[0, 1\]",
        ),
        ({"level_index": np.array([0, -1, 0, 1])}, DomainError, r"level_index\[1\]=-1 is outside"),
        (
            {"level_index": np.array([0.0, 1.0, 0.0, 1.0])},
            ShapeError,
            "integer level indices in \\[0, 1\\], got dtype float64",
        ),
        ({"level_index": np.array([0, 1])}, ShapeError, r"one level per user \(4\), got 2"),
        ({"items": np.tile([0, 4], (4, 1))}, DomainError, r"items\[0, 1\]=4 is outside the item domain \[0, 3\]"),
        ({"items": np.tile([2, 2], (4, 1))}, DataError, "repeats an item"),
        ({"items": np.array([0, 1, 2, 3])}, ShapeError, r"\(n_users, s\) array .* got shape \(4,\)"),
        (
            {"lambdas": np.array([0.0, 1.0])},
            PrivacyParameterError,
            r"lambdas\[0\] \(Poisson sampling rate\) must be a number in \(0, 1\]; got 0\.0",
        ),
        ({"lambdas": np.array([[0.5, 1.0]])}, ShapeError, r"one rate per level, got shape \(1, 2\)"),
        (
            {"m": math.inf},
            PrivacyParameterError,
            r"^m \(blanket messages per user\) must be a number in \[1e-6, 10000\]; got inf",
        ),
        ({"d": 1.5}, PrivacyParameterError, r"^d must be an integer in \[2, inf\); got 1.5"),
    ],
)
def test_user_messages_bad_input(change, error, pattern):
    with pytest.raises(error, match=pattern):
        _messages(**change)


def test_shuffle_bad_input():
    with pytest.raises(ShapeError, match="at least one batch"):
        shuffle()
    with pytest.raises(ShapeError, match=r"batches\[1\] must be a 1-d integer array .* dtype float64"):
        shuffle(np.array([0, 1]), np.array([0.5]))


# --------------------------------------------------------------------------- level_indices, aggregate_levels


@pytest.mark.parametrize(
    "user_levels,menu,error,pattern",
    [
        (
            [1.0, math.nan],
            LEVELS,
            PrivacyLevelError,
            r"user_levels\[1\]=nan is not a privacy level on the menu; allowed: \[0\.5, 1\.0, 2\.0\]",
        ),
        ([[1.0, 2.0]], LEVELS, ShapeError, r"1-d array with one level per user, got shape \(1, 2\)"),
        (["1.0"], LEVELS, ShapeError, "numeric privacy levels, got dtype <U3"),
        ([], LEVELS, PrivacyLevelError, "got none"),
        ([1.0], (2.0, 1.0), PrivacyLevelError, r"levels must be strictly increasing, got \[2\.0, 1\.0\]"),
    ],
)
def test_level_indices_bad_input(user_levels, menu, error, pattern):
    with pytest.raises(error, match=pattern):
        level_indices(user_levels, menu)


@pytest.mark.parametrize(
    "index,k,error,pattern",
    [
        ([0, 3], 3, DomainError, r"level_index\[1\]=3 is outside the level indices \[0, 2\]"),
        ([0.0, 1.0], 3, ShapeError, "got dtype float64"),
        ([], 3, ShapeError, "at least one user"),
        ([0, 1], 0, PrivacyParameterError, r"^k must be an integer in \[1, inf\); got 0"),
    ],
)
def test_aggregate_levels_bad_input(index, k, error, pattern):
    with pytest.raises(error, match=pattern):
        aggregate_levels(np.asarray(index), k)
    with pytest.raises(error, match=pattern):
        check_level_index(np.asarray(index), k)


# --------------------------------------------------------------------------- optimizer helpers, baselines


@pytest.mark.parametrize(
    "args,error,pattern",
    [
        ((0.0, [0.5], [10], 10, 1), PrivacyParameterError, r"^m \(blanket"),
        ((1.0, [0.5, 1.2], [10, 10], 20, 1), PrivacyParameterError, r"lambdas\[1\] .* got 1\.2"),
        ((1.0, [0.5], [10, 10], 20, 1), PrivacyLevelError, r"one count per level \(1\), got 2"),
        ((1.0, [0.5], [math.nan], 20, 1), PrivacyLevelError, r"level_counts\[0\] must be > 0 .* got nan"),
        ((1.0, [0.5], [10], 0, 1), PrivacyParameterError, "^n_users"),
        ((1.0, [0.5], [10], 10, 0), PrivacyParameterError, "^s must"),
    ],
)
def test_mse_bound_bad_input(args, error, pattern):
    with pytest.raises(error, match=pattern):
        mse_bound(*args)


@pytest.mark.parametrize("level", [0.0, -1.0, math.nan, math.inf])
def test_rate_searches_name_a_bad_level(level):
    with pytest.raises(PrivacyParameterError, match=r"^level must be a number in \[2\^-52, inf\); got"):
        max_sampling_rate(level, 1e-3, 8, 100, 1.0, 1)
    with pytest.raises(PrivacyParameterError, match=r"^level must be a number in \[2\^-52, inf\); got"):
        full_rate_blankets(level, 1e-3, 8, 100, 1)


def test_rate_searches_check_the_rest():
    with pytest.raises(PrivacyParameterError, match=r"s \(items per user\) must be at most d=8, got s=9"):
        max_sampling_rate(1.0, 1e-3, 8, 100, 1.0, 9)
    with pytest.raises(PrivacyParameterError, match=r"^m \(blanket"):
        max_sampling_rate(1.0, 1e-3, 8, 100, 0.0, 1)
    with pytest.raises(PrivacyParameterError, match="^delta"):
        full_rate_blankets(1.0, 1.5, 8, 100, 1)


def test_check_lambdas():
    assert check_lambdas([1, 0.25]).dtype == np.float64
    with pytest.raises(ShapeError, match=r"non-empty 1-d array .* got shape \(0,\)"):
        check_lambdas([])


def test_membership_is_checked():
    assert membership(np.array([[0, 2]]), 3).tolist() == [[1, 0, 1]]
    with pytest.raises(DomainError, match=r"items\[0, 1\]=3 is outside the item domain \[0, 2\]"):
        membership(np.array([[0, 3]]), 3)


def test_optimize_parameters_still_accepts_what_it_did():
    # the checks do not refuse the documented inputs (numpy scalars, integer-valued floats)
    p = optimize_parameters(np.array(LEVELS), np.float64(1e-3), np.array([20, 20, 20]), 8.0, np.int64(2), m=1.0)
    assert p.n_users == 60 and len(p.lambdas) == 3


def test_experiment_level_counts_name_the_setting():
    from shuffledp.errors import ExperimentError
    from shuffledp.experiments.segmented_common import level_counts

    assert level_counts(5000, "S2") == (2500, 1250, 1250)
    with pytest.raises(ExperimentError, match="setting must be one of S1, S2, S3, got 'S4'"):
        level_counts(5000, "S4")


# --------------------------------------------------------------------------- large budgets: refused up front, never capped


@pytest.mark.parametrize("epsilon_p", [40.5, 51, 100, 1000, math.inf])
def test_large_epsilon_p_is_refused_with_the_allowed_range(epsilon_p):
    index = np.repeat([0, 1, 2], 20)
    pattern = r"epsilon_p must be a number in \[2\^-52, 40\]; got .* \(beyond 40 the level reports are exact"
    with pytest.raises(PrivacyParameterError, match=pattern):
        aggregate_levels(index, 3, epsilon_p=epsilon_p, delta_p=1e-3)
    with pytest.raises(PrivacyParameterError, match=pattern):
        _run(epsilon_p=epsilon_p)


def test_epsilon_p_at_the_maximum_is_met_not_capped():
    from shuffledp.protocols.segmented.levels import EPSILON_P_MAX, level_local_epsilon

    local = level_local_epsilon(60, 3, EPSILON_P_MAX, 1e-3)
    assert EPSILON_P_MAX <= local < 50.0  # shuffling only helps: at least the target, below the search's top


@pytest.mark.parametrize("epsilon", [20.5, 30, 100])
def test_subexp_shuffle_refuses_a_large_epsilon(epsilon):
    from shuffledp.protocols.segmented.baselines import SubsetExponentialBaseline

    with pytest.raises(
        PrivacyParameterError,
        match=rf"epsilon must be a number in \[2\^-52, 20\]; got {epsilon} \(for Subexp, shuffle no amplification",
    ):
        SubsetExponentialBaseline.calibrated("shuffle", epsilon, 128, 4, 5000, 2e-6)
    assert SubsetExponentialBaseline.calibrated("shuffle", 20, 128, 4, 5000, 2e-6).local_epsilon >= 20


def test_ragged_item_rows_are_a_shape_error():
    with pytest.raises(ShapeError, match=r"s=2 items in every row, got rows of lengths \[1, 2\]"):
        run_segmented([[0, 1], [2]], [1.0, 1.0], [1.0], 1e-6, 8, 2, m=1.0)
    with pytest.raises(ShapeError, match="rows of different lengths"):
        item_frequencies([[0, 1], [2]], 8)
