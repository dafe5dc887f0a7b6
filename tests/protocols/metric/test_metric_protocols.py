"""RR-, Geo-, SGDL-Shuffle and the geometric baselines (shuffledp.protocols.metric)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from shuffledp.accounting.metric import sgdl_pmf
from shuffledp.errors import DomainError, PrivacyParameterError, ShapeError, ValidityConditionError
from shuffledp.protocols.metric import (
    GeoCentral,
    GeoLocal,
    GeoShuffle,
    RRShuffle,
    SGDLShuffle,
    sgdl_noise,
    shuffle_bits,
)

X_SMALL = np.array([0, 4, 2, 3, 1, 4])
K_SMALL = 16


def _protocols(n: int, k: int):
    return [
        RRShuffle(1e-2, 0.95, k, n),  # lambda = 0.95 n k must reach 14 log(400) = 83.9
        GeoShuffle(0.8, 1e-2, n, k),
        SGDLShuffle(0.8, 1e-2, n, k),
    ]


def _same_law(a: np.ndarray, b: np.ndarray) -> float:
    """p-value of a chi-square test that two integer samples share one law (sparse values pooled)."""
    values = np.union1d(a, b)
    ca = np.array([(a == v).sum() for v in values])
    cb = np.array([(b == v).sum() for v in values])
    order = np.argsort(values)
    ca, cb = ca[order], cb[order]
    # pool neighbouring values until every bin expects >= 10 in each sample
    bins_a, bins_b, acc_a, acc_b = [], [], 0, 0
    for x, y in zip(ca, cb):
        acc_a, acc_b = acc_a + x, acc_b + y
        if acc_a + acc_b >= 40:
            bins_a.append(acc_a), bins_b.append(acc_b)
            acc_a = acc_b = 0
    bins_a[-1] += acc_a
    bins_b[-1] += acc_b
    return stats.chi2_contingency(np.array([bins_a, bins_b]))[1]


@pytest.mark.parametrize("index", [0, 1, 2])
def test_materialised_shuffled_bits_give_the_same_analyst_law(index):
    """Proposition 1 in practice: users' bits, one permutation, the analyst's sum == the count path."""
    proto = _protocols(len(X_SMALL), K_SMALL)[index]
    rng_bits, rng_count = np.random.default_rng(11 + index), np.random.default_rng(911 + index)
    reps = 3000
    through_bits = np.array([proto.run(X_SMALL, rng_bits, materialize=True) for _ in range(reps)])
    by_count = proto.estimate_sum(X_SMALL, rng_count, reps)
    assert _same_law(np.round(through_bits * 1e6).astype(np.int64), np.round(by_count * 1e6).astype(np.int64)) > 1e-3


def test_shuffler_permutes_all_bits_of_all_users():
    proto = GeoShuffle(0.8, 1e-2, len(X_SMALL), K_SMALL)
    rng = np.random.default_rng(3)
    messages = proto.randomize(X_SMALL, rng)
    assert messages.shape == (len(X_SMALL), proto.width)
    # each message is a thermometer code U(x', k + 2c)
    ones = messages.sum(axis=1)
    np.testing.assert_array_equal(messages, (np.arange(proto.width) < ones[:, None]).astype(np.int8))
    shuffled = proto.shuffle(messages, rng)
    assert shuffled.shape == (len(X_SMALL) * proto.width,) and shuffled.sum() == ones.sum()
    # the permutation is uniform: a marked bit lands in every position equally often
    marked = np.zeros(12, dtype=np.int8)
    marked[0] = 1
    positions = np.array([np.flatnonzero(shuffle_bits(marked.reshape(3, 4), rng))[0] for _ in range(6000)])
    assert stats.chisquare(np.bincount(positions, minlength=12)).pvalue > 1e-3


@pytest.mark.parametrize(
    "make",
    [
        lambda n, k: RRShuffle.for_epsilon(1.0, 1e-4, k, n),
        lambda n, k: GeoShuffle(0.3, 1e-4, n, k),
        lambda n, k: SGDLShuffle(0.3, 1e-4, n, k),
        lambda n, k: GeoLocal(0.3, k),
        lambda n, k: GeoCentral(0.3, k),
    ],
)
def test_debiased_sums_are_unbiased(make):
    n, k, reps = 40, 50, 4000
    x = np.random.default_rng(5).integers(0, k + 1, n)
    estimates = make(n, k).estimate_sum(x, np.random.default_rng(17), reps)
    se = estimates.std(ddof=1) / math.sqrt(reps)
    assert abs(estimates.mean() - x.sum()) <= 4 * se


def test_geo_shuffle_count_is_the_sum_plus_sgdl_noise():
    """Without truncation (probability >= 1 - delta/2) the count is sum x + n c + SGDL(n, e^-eps_geo) (Prop. 6)."""
    n, k, eps_geo = 8, 20, 0.7
    proto = GeoShuffle(eps_geo, 1e-6, n, k)
    x = np.random.default_rng(2).integers(0, k + 1, n)
    noise = proto.ones(x, np.random.default_rng(8), 20_000) - x.sum() - n * proto.c
    _goodness_of_fit(noise, lambda r: sgdl_pmf(r, n, math.exp(-eps_geo)))


def test_sgdl_shuffle_sum_is_geo_central_noise():
    """SGDL(1/n) noises of n users sum to the discrete Laplace of Geo-Central (infinite divisibility, §5.1)."""
    n, k, eps = 30, 10, 0.4
    proto = SGDLShuffle(eps, 1e-6, n, k)
    x = np.random.default_rng(4).integers(0, k + 1, n)
    noise = proto.ones(x, np.random.default_rng(9), 20_000) - x.sum() - n * proto.c
    a = math.exp(-eps)
    _goodness_of_fit(noise, lambda r: (1 - a) / (1 + a) * a ** np.abs(r))


def test_sgdl_noise_sampler_law():
    beta, p = 0.25, 0.8
    draws = sgdl_noise(beta, p, 40_000, np.random.default_rng(12))
    _goodness_of_fit(draws, lambda r: sgdl_pmf(r, beta, p))


def _goodness_of_fit(samples: np.ndarray, pmf) -> None:
    lo, hi = int(samples.min()), int(samples.max())
    values = np.arange(lo, hi + 1)
    expected = pmf(values) * samples.size
    observed = np.bincount(samples - lo, minlength=values.size).astype(float)
    keep = expected >= 5
    obs = np.append(observed[keep], observed[~keep].sum() + 0.0)
    exp = np.append(expected[keep], samples.size - expected[keep].sum())
    assert stats.chisquare(obs, exp).pvalue > 1e-3


def test_rr_shuffle_count_law():
    """RR count: Binom(sum x, 1 - p/2) + Binom(n k - sum x, p/2): mean and variance."""
    n, k = 20, 30
    proto = RRShuffle.for_epsilon(1.0, 1e-4, k, n)
    x = np.random.default_rng(1).integers(0, k + 1, n)
    counts = proto.ones(x, np.random.default_rng(6), 20_000)
    f, s = proto.p / 2, x.sum()
    mean, var = s * (1 - f) + (n * k - s) * f, n * k * f * (1 - f)
    assert abs(counts.mean() - mean) <= 4 * math.sqrt(var / counts.size)
    assert counts.var() == pytest.approx(var, rel=0.05)


# --- bad input ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "proto", _protocols(len(X_SMALL), K_SMALL) + [GeoLocal(0.5, K_SMALL), GeoCentral(0.5, K_SMALL)]
)
def test_values_outside_the_domain_are_named(proto):
    rng = np.random.default_rng(0)
    with pytest.raises(DomainError, match=r"x must hold integers in \{0, ..., 16\}, got x\[1\]=17"):
        proto.estimate_sum(np.array([0, 17, 1, 1, 1, 1]), rng)
    with pytest.raises(DomainError, match=r"got x\[2\]=-1"):
        proto.estimate_sum(np.array([0, 1, -1, 1, 1, 1]), rng)
    with pytest.raises(DomainError, match=r"x\[0\]=0.5"):
        proto.estimate_sum(np.array([0.5, 1, 1, 1, 1, 1]), rng)


def test_wrong_number_of_values_and_messages():
    proto = GeoShuffle(0.5, 1e-3, 6, 4)
    with pytest.raises(ShapeError, match="n=6"):
        proto.run(np.array([1, 2, 3]))
    with pytest.raises(ShapeError, match="messages"):
        proto.shuffle(np.zeros((6, 3), dtype=np.int8))


def test_rr_shuffle_outside_theorem_3_1_names_minimum_n():
    with pytest.raises(ValidityConditionError, match="n >= 35"):
        RRShuffle.for_epsilon(0.1, 1e-4, 1000, 20, method="theorem-3.1")
    with pytest.raises(ValidityConditionError, match="use n >= "):
        RRShuffle(1e-4, 0.01, 10, 5, method="theorem-3.1")
    # the certified guarantee has no validity condition: p = 2 / (1 + e^eps) always reaches eps
    proto = RRShuffle.for_epsilon(0.1, 1e-4, 1000, 20)
    assert proto.epsilon <= 0.1 and proto.method == "certified"
    assert RRShuffle(1e-4, 0.01, 10, 5).epsilon <= math.log((2 - 0.01) / 0.01)


# --- refusals name the bad value and what is allowed --------------------------------------------------------


def test_constructors_refuse_noise_epsilons_beyond_the_maximum():
    from shuffledp.accounting.metric import MAX_EPSILON

    assert MAX_EPSILON == 100.0
    for make in (
        lambda e: SGDLShuffle(e, 1e-4, 1000, 10),
        lambda e: GeoShuffle(e, 1e-4, 1000, 10),
        lambda e: GeoLocal(e, 10),
        lambda e: GeoCentral(e, 10),
    ):
        with pytest.raises(PrivacyParameterError, match=r"must be a number in \[2\^-52, 100\]; got 1000"):
            make(1000)
        make(100)  # the maximum itself is accepted
    GeoShuffle(100, 1e-4, 1000, 10).run(np.zeros(1000, dtype=int), np.random.default_rng(0))
    SGDLShuffle(100, 1e-4, 1000, 10).run(np.zeros(1000, dtype=int), np.random.default_rng(0))


def test_noise_epsilon_must_be_a_number():
    for make in (
        lambda e: GeoShuffle(e, 1e-4, 100, 10),
        lambda e: SGDLShuffle(e, 1e-4, 100, 10),
        lambda e: GeoLocal(e, 10),
    ):
        with pytest.raises(PrivacyParameterError, match="must be a number"):
            make("0.5")
    with pytest.raises(PrivacyParameterError, match="n"):
        GeoShuffle(0.5, 1e-4, "10", 10)


def test_shuffler_and_analyst_refuse_non_bits():
    g = GeoShuffle(0.5, 1e-4, 100, 10)
    bits = g.n * g.width
    with pytest.raises(DomainError, match=r"shuffled must hold bits \(0 or 1\), got 7"):
        g.analyze(np.full(bits, 7))
    with pytest.raises(DomainError, match="got nan"):
        g.analyze(np.full(bits, np.nan))
    with pytest.raises(DomainError, match=r"messages must hold bits \(0 or 1\), got 5"):
        g.shuffle(np.full((100, g.width), 5))
    with pytest.raises(DomainError, match="got 7 at index"):
        shuffle_bits([[0, 7], [1, 1]])
    ok = g.shuffle(np.ones((100, g.width), dtype=np.int8), np.random.default_rng(0))
    assert g.analyze(ok) == bits - g.n * g.c
    assert g.analyze(ok.astype(bool)) == g.analyze(ok.astype(float))


def test_debias_and_sgdl_noise_refuse_bad_arguments():
    rng = np.random.default_rng(0)
    for proto in (GeoShuffle(0.5, 1e-4, 100, 10), RRShuffle(1e-4, 0.5, 10, 100)):
        total = proto.n * proto.width
        for bad in ("a", -1, 1.5, total + 1, np.nan):
            with pytest.raises(DomainError, match=rf"ones \(a count of ones\) must be integers in \[0, {total}\]"):
                proto.debias(bad)
        assert np.asarray(proto.debias([0, total])).shape == (2,)
    with pytest.raises(
        PrivacyParameterError, match=r"p \(SGDL parameter e\^-eps\) must be a number in \(0, 1\); got 1.0"
    ):
        sgdl_noise(0.01, 1.0, 5, rng)
    with pytest.raises(PrivacyParameterError, match=r"beta \(SGDL shape\) must be a finite number > 0, got -1"):
        sgdl_noise(-1, 0.5, 5, rng)
    with pytest.raises(PrivacyParameterError, match=r"size \(output shape\) must be an integer in \[0, inf\); got -1"):
        sgdl_noise(1, 0.5, -1, rng)
    assert sgdl_noise(1, 0.5, (2, 0), rng).shape == (2, 0)


def test_geo_local_refuses_empty_input():
    rng = np.random.default_rng(0)
    with pytest.raises(ShapeError, match="at least one value"):
        GeoLocal(0.5, 10).estimate_sum(np.array([], dtype=int), rng)
    with pytest.raises(ShapeError, match="at least one value"):
        GeoLocal(0.5, 10).randomize(np.array([], dtype=int), rng)
    with pytest.raises(ShapeError, match="at least one value"):
        GeoCentral(0.5, 10).estimate_sum(np.array([], dtype=int), rng)


@pytest.mark.parametrize("n", [1, 2, 4])
def test_for_epsilon_below_five_users_is_the_target(n):
    """Theorem 4.1 is undefined below n = 5 (no amplification): eps_geo = target, not a brentq traceback."""
    proto = GeoShuffle.for_epsilon(0.1, 1e-4, n, 1000, method="theorem-4.1")
    assert proto.eps_geo == 0.1 and proto.epsilon == 0.1
