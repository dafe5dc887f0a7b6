"""Appendix G's granularity Q (Algorithm 8) in RR-, Geo- and SGDL-Shuffle: unbiased, fewer bits, privacy as attached."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from shuffledp.accounting import metric as M
from shuffledp.errors import DomainError, OutsideRegimeError, PrivacyParameterError
from shuffledp.protocols.metric import GeoShuffle, RRShuffle, SGDLShuffle
from shuffledp.protocols.metric._base import quantized_ones, quantized_unary_encode

X = np.array([0, 17, 5, 40, 23, 9, 40, 1])
K = 40


def _protocols(q: int):
    n = len(X)
    return [
        RRShuffle(1e-3, 0.3, K, n, granularity=q),
        GeoShuffle(1.0, 1e-9, n, K, granularity=q),  # c = 25: truncation has probability < 1e-9
        SGDLShuffle(1.0, 1e-9, n, K, granularity=q),
    ]


def test_algorithm_8_count_is_unbiased_exactly():
    """x // Q + Ber((x mod Q)/Q): two values, the upper one with probability (x mod Q)/Q, so Q times it averages x."""
    rng = np.random.default_rng(0)
    for q in (1, 2, 7, 40):
        x = np.arange(0, 3 * q + 1)
        draws = quantized_ones(np.broadcast_to(x, (20_000, x.size)), q, rng)
        low = x // q
        assert np.all((draws == low) | (draws == low + 1))
        share_up = (draws == low + 1).mean(axis=0)
        sd = np.sqrt((x % q) / q * (1 - (x % q) / q) / 20_000) + 1e-12
        assert np.all(np.abs(share_up - (x % q) / q) <= 5 * sd)
        assert np.all(share_up[x % q == 0] == 0)
    with pytest.raises(PrivacyParameterError, match="granularity"):
        quantized_ones(x, 0, rng)
    with pytest.raises(DomainError, match="x <= r Q = 12"):
        quantized_unary_encode(np.array([13]), 3, 4, rng)


@pytest.mark.parametrize("q", [1, 3, 8])
@pytest.mark.parametrize("index", [0, 1, 2])
def test_analyst_is_unbiased_and_messages_shrink(index, q):
    proto = _protocols(q)[index]
    c = getattr(proto, "c", 0)
    assert proto.width == math.ceil((K + 2 * c) / q)  # the communication cost, bits per user
    messages = proto.randomize(X, np.random.default_rng(q))
    assert messages.shape == (len(X), proto.width)
    if index > 0:  # padded protocols: every message is a thermometer code
        ones = messages.sum(axis=1)
        np.testing.assert_array_equal(messages, (np.arange(proto.width) < ones[:, None]).astype(np.int8))
    sums = proto.estimate_sum(X, np.random.default_rng(100 + q), 40_000)
    assert abs(sums.mean() - X.sum()) <= 5 * sums.std() / math.sqrt(sums.size)


@pytest.mark.parametrize("index", [0, 1, 2])
def test_materialised_bits_match_the_count_path_with_granularity(index):
    proto = _protocols(6)[index]
    rng_bits, rng_count = np.random.default_rng(7 + index), np.random.default_rng(70 + index)
    through_bits = np.array([proto.run(X, rng_bits, materialize=True) for _ in range(3000)])
    by_count = proto.estimate_sum(X, rng_count, 3000)
    values = np.union1d(through_bits, by_count)
    a = np.array([(np.isclose(through_bits, v)).sum() for v in values])
    b = np.array([(np.isclose(by_count, v)).sum() for v in values])
    keep = a + b >= 30  # pool the thin tails
    table = np.array([np.append(a[keep], a[~keep].sum()), np.append(b[keep], b[~keep].sum())])
    table = table[:, table.sum(axis=0) > 0]
    assert stats.chi2_contingency(table)[1] > 1e-3


def test_granularity_one_is_the_paper_protocol_draw_for_draw():
    """Q = 1 draws nothing for the rounding: the same random stream gives Algorithm 1's messages as before."""
    from shuffledp.randomizers._sampling import bernoulli
    from shuffledp.randomizers.unary import thermometer_encode

    geo = GeoShuffle(0.5, 1e-4, 8, K)
    expected = thermometer_encode(geo.shifted(X, np.random.default_rng(3)), geo.width)
    assert np.array_equal(geo.randomize(X, np.random.default_rng(3)), expected)
    rr = RRShuffle(1e-4, 0.4, K, 8)
    flips = bernoulli(0.2, (8, K), np.random.default_rng(3))
    assert np.array_equal(
        rr.randomize(X, np.random.default_rng(3)), (thermometer_encode(X, K).view(bool) ^ flips).view(np.int8)
    )
    geo = GeoShuffle(0.5, 1e-4, 8, K)
    assert geo.width == K + 2 * geo.c and RRShuffle(1e-4, 0.4, K, 8).width == K


def test_privacy_with_granularity_is_the_per_report_bound_and_theorems_refuse():
    n = len(X)
    rr = RRShuffle(1e-3, 0.3, K, n, granularity=4)
    assert rr.epsilon == rr.local_epsilon() == math.log(1.7 / 0.3)
    assert GeoShuffle(1.0, 1e-4, n, K, granularity=4).epsilon == 1.0
    assert SGDLShuffle(1.0, 1e-4, n, K, granularity=4).shuffle_epsilon == M.sgdl_shuffle_report_epsilon(1.0, n)
    with pytest.raises(OutsideRegimeError, match="Theorem 3.1 does not cover granularity Q=4"):
        RRShuffle(1e-3, 0.3, K, n, method="theorem-3.1", granularity=4)
    with pytest.raises(OutsideRegimeError, match="Theorem 4.1 does not cover granularity Q=4"):
        _ = GeoShuffle(1.0, 1e-4, n, K, method="theorem-4.1", granularity=4).epsilon
    with pytest.raises(OutsideRegimeError, match="Theorem 5.1 does not cover granularity Q=4"):
        _ = SGDLShuffle(1.0, 1e-4, n, K, method="theorem-5.1", granularity=4).shuffle_epsilon


@pytest.mark.parametrize("k, q, p", [(6, 2, 0.4), (7, 3, 0.2), (5, 5, 0.6)])
def test_rr_per_report_bound_holds_with_rounding(k, q, p):
    """One user's message U_Q(x, ceil(k/Q)) through RR, bits in their positions (the worst case: a compromised
    shuffler), enumerated exactly: every x, x' has ratio <= ((2 - p)/p)^|x - x'| on every output."""
    w = math.ceil(k / q)
    flips = np.array(list(itertools.product((0, 1), repeat=w)))
    outputs = flips  # every output vector
    law = {}
    for x in range(k + 1):
        low, up = divmod(x, q)
        mix = {low: 1 - up / q, low + 1: up / q} if up else {low: 1.0}
        probs = np.zeros(len(outputs))
        for m, weight in mix.items():
            code = (np.arange(w) < m).astype(int)
            same = outputs == code
            probs += weight * np.prod(np.where(same, 1 - p / 2, p / 2), axis=1)
        law[x] = probs
    r = math.log((2 - p) / p)
    for a, b in itertools.combinations(range(k + 1), 2):
        assert np.max(np.abs(np.log(law[a]) - np.log(law[b]))) <= r * (b - a) + 1e-12
