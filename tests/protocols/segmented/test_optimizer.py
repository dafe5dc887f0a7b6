"""Step 2 (segmented paper §5.2): the rates meet every level and are maximal; the free search."""

import math

import pytest

from shuffledp.accounting.segmented import level_constraint_met, user_epsilon
from shuffledp.errors import PrivacyLevelError, PrivacyParameterError
from shuffledp.protocols.segmented.optimizer import (
    _approximate_rate,
    _search_blanket_rate,
    full_rate_blankets,
    mse_bound,
    optimize_parameters,
)

LEVELS, DELTA, D, S = (0.5, 1.0, 2.0), 1e-6, 128, 4


def _check_maximal(result):
    for level, lam in zip(result.levels, result.lambdas):
        args = (D, result.n_users, result.m, S, DELTA)
        assert user_epsilon(lam, *args) <= level
        if lam < 1.0:  # a slightly larger rate breaks the level
            assert user_epsilon(lam + 1e-6, *args) > level


def test_fixed_m_rates_meet_levels_and_are_maximal():
    result = optimize_parameters(LEVELS, DELTA, [1000, 2000, 1000], D, S, m=1.0)
    assert result.m == 1.0 and result.m_range is None
    assert result.lambdas[0] < result.lambdas[1] < result.lambdas[2] <= 1.0
    _check_maximal(result)
    assert all(e <= level for e, level in zip(result.epsilons, LEVELS))


def test_enough_blankets_give_full_rates():
    result = optimize_parameters(LEVELS, DELTA, [1000, 2000, 1000], D, S, m=200.0)
    assert result.lambdas == (1.0, 1.0, 1.0)
    assert result.mse_bound == pytest.approx((4000 * 200.0 + S * 4000) / 4000**2)


def test_full_rate_blankets_is_the_least_m():
    m_k = full_rate_blankets(1.0, DELTA, D, 4000, S)
    assert level_constraint_met(1.0, 1.0, DELTA, D, 4000, m_k, S)
    assert not level_constraint_met(1.0, 1.0, DELTA, D, 4000, m_k / 1.002, S)


def test_free_m_minimises_the_bound_over_the_range():
    counts = [1000, 2000, 1000]
    result = optimize_parameters(LEVELS, DELTA, counts, D, S)
    lo, hi = result.m_range
    assert lo <= result.m <= hi
    assert hi == pytest.approx(full_rate_blankets(0.5, DELTA, D, 4000, S))
    _check_maximal(result)

    def bound(m):
        return mse_bound(m, [_approximate_rate(e, DELTA, D, 4000, m, S) for e in LEVELS], counts, 4000, S)

    for m in (lo, math.sqrt(lo * hi), hi, result.m * 1.5, result.m / 1.5):
        assert result.mse_bound <= bound(m) * (1 + 1e-3)


def test_optimal_m_decreases_with_n():
    # §6.2: the search alone (the final calibration does not move m)
    small, _ = _search_blanket_rate(LEVELS, (500, 1000, 500), 0.01 / 2000, D, 2000, S)
    large, _ = _search_blanket_rate(LEVELS, (5000, 10000, 5000), 0.01 / 20000, D, 20000, S)
    assert large < small


def test_mse_bound_formula():
    # (n m + s sum n_k lam_k) / (sum n_k lam_k)^2 with n = 30, m = 2, s = 3, signal = 10*0.5 + 20*1 = 25
    assert mse_bound(2.0, [0.5, 1.0], [10, 20], 30, 3) == pytest.approx((60 + 75) / 625)


@pytest.mark.parametrize(
    "kwargs,error,pattern",
    [
        ({"E": []}, PrivacyLevelError, "levels must name at least one"),
        ({"E": [1.0, 0.5, 2.0]}, PrivacyLevelError, "levels must be strictly increasing"),
        ({"level_counts": [10, 0, 10]}, PrivacyLevelError, r"level_counts\[1\] must be > 0"),
        ({"level_counts": [10, 20]}, PrivacyLevelError, "one count per level"),
        ({"level_counts": [10.5, 20, 10]}, PrivacyParameterError, "pass n_users"),
        ({"m": 0.0}, PrivacyParameterError, r"^m \(blanket"),
        ({"m": 1e9}, PrivacyParameterError, r"^m \(blanket"),
        ({"s": 0}, PrivacyParameterError, "^s must"),
        ({"delta": 0.0}, PrivacyParameterError, "^delta"),
    ],
)
def test_bad_input(kwargs, error, pattern):
    args = {"E": LEVELS, "delta": DELTA, "level_counts": [10, 20, 10], "d": D, "s": S, "m": 1.0} | kwargs
    with pytest.raises(error, match=pattern):
        optimize_parameters(**args)


def test_memos_do_not_change_results(monkeypatch):
    from shuffledp.protocols.segmented import optimizer as O

    args = ((0.5, 2.0), 1e-4, (300, 300), 8, 2)
    O.clear_caches()
    cold = optimize_parameters(*args)
    warm = optimize_parameters(*args)  # every constraint check and m_k now comes from the memos
    assert O._constraint_met.cache_info().hits > 0
    # without any memo: the unwrapped functions
    monkeypatch.setattr(O, "_constraint_met", O._constraint_met.__wrapped__)
    monkeypatch.setattr(O, "_full_rate_blankets", O._full_rate_blankets.__wrapped__)
    plain = optimize_parameters(*args)
    assert cold == warm == plain


def _epsilon_or_inf(*args):
    from shuffledp.errors import OutsideRegimeError

    try:
        return user_epsilon(*args)
    except OutsideRegimeError:  # no finite epsilon: certainly above the level
        return math.inf


#: (E, n, d, s, m) where the level needs lambda < 1/d (accounting.segmented, "Small lambda")
SMALL_RATE_CASES = [(0.05, 30, 128, 1, 0.5), (0.05, 100, 128, 4, 0.1), (0.01, 5, 128, 1, 0.1), (0.05, 20, 128, 1, 0.1)]


@pytest.mark.parametrize("level,n,d,s,m", SMALL_RATE_CASES)
def test_small_rates_are_valid_and_maximal(level, n, d, s, m):
    from shuffledp.protocols.segmented.optimizer import max_sampling_rate

    delta = 0.01 / n
    lam = max_sampling_rate(level, delta, d, n, m, s)
    assert lam < 1 / d  # the regime in question
    assert user_epsilon(lam, d, n, m, s, delta) <= level
    assert _epsilon_or_inf(lam * (1 + 1e-6), d, n, m, s, delta) > level


def test_small_rate_levels_in_optimize_parameters():
    n, d, s = 100, 128, 1
    delta = 0.01 / n
    for m in (0.1, None):  # fixed m (lambda_1 < 1/d) and the free search
        p = optimize_parameters((0.05, 0.5), delta, (50, 50), d, s, m)
        for level, lam in zip(p.levels, p.lambdas):
            assert user_epsilon(lam, d, n, p.m, s, delta) <= level
            if lam < 1.0:
                assert _epsilon_or_inf(lam * (1 + 1e-6), d, n, p.m, s, delta) > level
    assert optimize_parameters((0.05, 0.5), delta, (50, 50), d, s, 0.1).lambdas[0] < 1 / d


def test_a_level_no_rate_meets_is_a_clear_error():
    # m = 1: the message count is public, so the victim's message shows with probability
    # lambda (1 - 2/d)^20 >= 0.86 lambda, above delta = 1e-12 for every lambda >= 1e-9
    from shuffledp.protocols.segmented.optimizer import max_sampling_rate

    with pytest.raises(
        PrivacyParameterError,
        match=r"no sampling rate lambda in \[1e-09, 1\] meets level 0\.05 "
        r"\(m=1, n_users=20, d=128, s=1, delta=1e-12; .*an integer m makes the message count public",
    ):
        max_sampling_rate(0.05, 1e-12, 128, 20, 1.0, 1)
    with pytest.raises(
        PrivacyParameterError, match="level 0.05 cannot be met at delta=1e-12 .* not even lambda=1e-09 with m=1"
    ):
        optimize_parameters((0.05, 0.5), 1e-12, (10, 10), 128, 1, m=1.0)
    assert max_sampling_rate(0.05, 1e-12, 128, 20, 1.5, 1) > 1e-9  # a non-integer m hides the count


def test_counts_cannot_exceed_the_number_of_users():
    with pytest.raises(PrivacyLevelError, match=r"level_counts\[1\]=2000 exceeds n_users=5"):
        optimize_parameters([0.5, 1.0], 1e-6, [1000, 2000], 8, 2, m=1.0, n_users=5)
