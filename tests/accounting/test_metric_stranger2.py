"""Second stranger pass on the metric module (issue 11): tiny RR p, size caps, huge values, messages."""

from __future__ import annotations

import math

import pytest

from shuffledp.accounting import metric as M
from shuffledp.errors import PrivacyParameterError
from shuffledp.protocols.metric import RRShuffle

# --- 1. RR-Shuffle with tiny p ----------------------------------------------------------------------------


def _one_bit_epsilon(p: float, delta: float) -> float:
    """N = 1 bit: Bern(p/2) against Bern(1 - p/2); the smallest eps with 1 - p/2 - e^eps p/2 <= delta."""
    return math.log1p(-p / 2 - delta) - math.log(p / 2)


@pytest.mark.parametrize("p", [1e-16, 1e-17, 1e-200, 1e-300])
def test_rr_tiny_p_one_bit_is_exact(p):
    delta = 1e-4
    want = _one_bit_epsilon(p, delta)
    assert M.rr_shuffle_certified_epsilon(delta, p, 1, 1) == pytest.approx(want, rel=1e-9)
    assert M.rr_shuffle_certified_epsilon(delta, p, 1, 1) >= want * (1 - 1e-12)  # rounded upward
    assert M.rr_shuffle_certified_local_epsilon(delta, p, 1) == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("p", [1e-16, 1e-17, 1e-300])
def test_rr_tiny_p_every_entry_point_answers(p):
    local = math.log(2 - p) - math.log(p)
    cert = M.rr_shuffle_certificate(1e-4, p, 4, 300)
    assert math.isfinite(cert.epsilon) and cert.epsilon <= local
    assert cert.epsilon == pytest.approx(local, rel=1e-3)  # hardly any bit is flipped: about the local bound
    assert M.rr_shuffle_epsilon(1e-4, p, 4, 300) == cert.epsilon
    eps_l = M.rr_shuffle_local_epsilon(1e-4, p, 4)
    assert 0 < eps_l <= local and eps_l == pytest.approx(local, rel=1e-3)
    assert RRShuffle(1e-4, p, 4, 300).epsilon == cert.epsilon


def test_rr_p_below_the_minimum_is_a_named_error():
    for p in (5e-324, 1e-301):
        with pytest.raises(PrivacyParameterError, match=r"must be >= 1e-300 .*got"):
            M.rr_shuffle_epsilon(1e-4, p, 4, 300)
        with pytest.raises(PrivacyParameterError, match="1e-300"):
            M.rr_shuffle_local_epsilon(1e-4, p, 4)
        with pytest.raises(PrivacyParameterError, match="1e-300"):
            RRShuffle(1e-4, p, 4, 300)
        with pytest.raises(PrivacyParameterError, match="1e-300"):
            RRShuffle(1e-4, p, 4, 300, granularity=2)


def test_rr_inverse_at_large_epsilon():
    p = M.rr_shuffle_probability(40, 1e-4, 4, 300)
    assert 0 < p < 1e-17 and M.rr_shuffle_epsilon(1e-4, p, 4, 300) <= 40
    assert RRShuffle.for_epsilon(40, 1e-4, 4, 300).epsilon <= 40
    # beyond what the smallest p allowed reaches: that p (its epsilon is below the target)
    for eps in (692.0, 1000.0, 1e300):
        assert M.rr_shuffle_probability(eps, 1e-4, 4, 300) == M.RR_MIN_P
    assert M.rr_shuffle_epsilon(1e-4, M.RR_MIN_P, 4, 300) <= 692.0
    out = M.compromised_local_epsilons(50, 1e-4, 300, 4)
    assert 0 < out["rr-shuffle"] <= 50
