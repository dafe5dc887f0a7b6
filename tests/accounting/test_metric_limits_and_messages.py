"""The metric accounting at the limits of its input: tiny RR p, size caps checked before allocating, huge values,
and messages that name what was given (found in a second pass as a new user, issue 11)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffledp.accounting import metric as M
from shuffledp.accounting.metric import rr_shuffle as RR
from shuffledp.errors import PrivacyParameterError, ShapeError
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
    cert = M.rr_shuffle_certificate(1e-4, p, 4, 250)  # 1,000 bits: within the direct search's limit at any p
    assert cert.certified and math.isfinite(cert.epsilon) and cert.epsilon <= local
    assert cert.epsilon == pytest.approx(local, rel=1e-3)  # hardly any bit is flipped: about the local bound
    assert M.rr_shuffle_epsilon(1e-4, p, 4, 250) == cert.epsilon
    eps_l = M.rr_shuffle_local_epsilon(1e-4, p, 4)
    assert 0 < eps_l <= local and eps_l == pytest.approx(local, rel=1e-3)
    assert RRShuffle(1e-4, p, 4, 250).epsilon == cert.epsilon


def test_rr_p_below_the_minimum_is_a_named_error():
    for p in (5e-324, 1e-301):
        with pytest.raises(PrivacyParameterError, match=r"must be a number in \[1e-300, 1\); got .*local epsilon at"):
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


# --- 2. size caps (checked before allocating) ----------------------------------------------------------------


def test_materialising_bits_is_capped():
    from shuffledp.protocols.metric import MAX_MATERIALIZED_BITS, GeoShuffle, SGDLShuffle

    x, x10 = np.arange(5) % 11, np.arange(10) % 6  # RR (k=10, n=5); Geo, SGDL (n=10, k=5)
    proto = SGDLShuffle(0.5, 1e-4, 10, 5, c=10**9)
    assert proto.n * proto.width > MAX_MATERIALIZED_BITS
    with pytest.raises(ShapeError, match="MAX_MATERIALIZED_BITS"):
        proto.run(x10, np.random.default_rng(0), materialize=True)
    with pytest.raises(ShapeError, match="MAX_MATERIALIZED_BITS"):
        proto.randomize(x10, np.random.default_rng(0))
    assert np.isfinite(proto.run(x10, np.random.default_rng(0)))  # the count of ones still works
    geo = GeoShuffle(1e-9, 1e-4, 10, 5, method="theorem-4.1")
    with pytest.raises(ShapeError, match="MAX_MATERIALIZED_BITS"):
        geo.run(x10, np.random.default_rng(0), materialize=True)
    rr = RRShuffle(1e-4, 0.5, 10**4, 10**5)
    with pytest.raises(ShapeError, match="MAX_MATERIALIZED_BITS"):
        rr.run(np.zeros(10**5, dtype=np.int64), np.random.default_rng(0), materialize=True)
    small = RRShuffle(1e-4, 0.5, 10, 5)  # below the cap: unchanged
    assert np.isfinite(small.run(x, np.random.default_rng(0), materialize=True))


def test_repetitions_and_noise_size_are_capped():
    from shuffledp.protocols.metric import MAX_DRAWS, GeoCentral, GeoLocal, GeoShuffle, sgdl_noise

    x, x10 = np.arange(5) % 11, np.arange(10) % 6  # RR (k=10, n=5); Geo, SGDL (n=10, k=5)
    rng = np.random.default_rng(0)
    with pytest.raises(ShapeError, match="MAX_DRAWS"):
        GeoShuffle(0.5, 1e-4, 10, 5).estimate_sum(x10, rng, 10**12)
    with pytest.raises(ShapeError, match="MAX_DRAWS"):
        GeoShuffle(0.5, 1e-4, 10, 5).ones(x10, rng, MAX_DRAWS // 10 + 1)  # n draws per run
    assert GeoShuffle(0.5, 1e-4, 10, 5).estimate_sum(x10, rng, 10).shape == (10,)
    with pytest.raises(ShapeError, match="MAX_DRAWS"):
        RRShuffle(1e-4, 0.5, 10, 5).estimate_sum(x, rng, MAX_DRAWS + 1)  # one count per run
    with pytest.raises(ShapeError, match="MAX_DRAWS"):
        sgdl_noise(0.1, 0.5, 10**12, rng)
    with pytest.raises(ShapeError, match="MAX_DRAWS"):
        sgdl_noise(0.1, 0.5, (10**5, 10**4), rng)
    assert sgdl_noise(0.1, 0.5, (3, 4), rng).shape == (3, 4)
    with pytest.raises(ShapeError, match="MAX_DRAWS"):
        GeoLocal(0.5, 10).estimate_sum(x, rng, 10**12)
    with pytest.raises(ShapeError, match="MAX_DRAWS"):
        GeoCentral(0.5, 10).estimate_sum(x, rng, 10**12)


# --- 3. check_values names the value given ------------------------------------------------------------------


def test_check_values_names_huge_values_as_given():
    import warnings

    from shuffledp.errors import DomainError
    from shuffledp.protocols.metric import GeoShuffle, check_values

    x = np.r_[np.arange(99) % 6, 1e30]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning from a cast
        with pytest.raises(DomainError, match=r"got x\[99\]=1e\+30$"):
            GeoShuffle(0.5, 1e-4, 100, 5).run(x, np.random.default_rng(0))
        with pytest.raises(DomainError, match=r"got x\[1\]=18446744073709551615$"):
            check_values(np.array([0, 2**64 - 1], dtype=np.uint64), 5)
        with pytest.raises(DomainError, match=r"got x\[0\]=-3$"):
            check_values([-3, 1], 5)
    assert check_values(np.array([0.0, 5.0]), 5).dtype == np.int64


# --- 4. SGDL pmf at huge outcomes ---------------------------------------------------------------------------


def test_sgdl_pmf_beyond_the_outcome_limit_is_zero_or_named():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for r in (1e20, 1e30, 2**70, -(2**70), 2**53 + 2, np.uint64(2**64 - 1), np.int64(-(2**63))):
            assert float(M.sgdl_pmf(r, 0.01, 0.5)) == 0.0
            assert float(M.log_sgdl_pmf(r, 0.01, 0.5)) == -math.inf
            assert float(M.log_sgdl_pmf(r, 5, 0.5)) == -math.inf
        # at the limit the (finite) log pmf is still computed: beta = 1 is the discrete Laplace
        want = math.log((1 - 0.5) / (1 + 0.5)) + 2**53 * math.log(0.5)
        assert float(M.log_sgdl_pmf(2**53, 1, 0.5)) == pytest.approx(want, rel=1e-12)
        np.testing.assert_allclose(M.sgdl_pmf([0, 2**70, 3], 1, 0.5), [1 / 3, 0.0, 1 / 3 / 8], rtol=1e-12)
    with pytest.raises(PrivacyParameterError, match=r"\|r\| <= 2\^53"):
        M.log_sgdl_pmf(2**60, 1, 1 - 1e-16)  # p^(|r|/2) is not below the float range: no silent answer
    with pytest.raises(PrivacyParameterError, match="must hold integers"):
        M.sgdl_pmf([1, 2.5], 1, 0.5)


# --- 5. Theorem 3.1's hint stays within the accepted n ------------------------------------------------------


def test_theorem_31_hint_never_suggests_n_beyond_2_53():
    from shuffledp.errors import ValidityConditionError

    with pytest.raises(ValidityConditionError, match=r"no n <= 2\^53 works at this p; use p >= ") as info:
        M.rr_shuffle_epsilon_paper(1e-4, 1e-17, 4, 300)
    err = info.value
    assert err.minimum_n is None and err.minimum_p is not None
    assert math.isfinite(M.rr_shuffle_epsilon_paper(1e-4, err.minimum_p, 4, 2**53))  # the suggestion works
    with pytest.raises(ValidityConditionError, match="use n >= 297"):  # a reachable n is still named
        M.rr_shuffle_epsilon_paper(1e-4, 0.5, 1, 10)
    with pytest.raises(ValidityConditionError, match=r"every n <= 2\^53; use a larger epsilon") as info:
        M.rr_shuffle_probability_paper(1e-9, 1e-4, 1, 10)
    assert info.value.minimum_n is None


def test_theorem_31_hint_at_the_command_line():
    from typer.testing import CliRunner

    from shuffledp.cli import app

    args = [
        "metric",
        "epsilon",
        "--mechanism",
        "rr-shuffle",
        "--n",
        "300",
        "--delta",
        "1e-4",
        "--k",
        "4",
        "--p",
        "1e-17",
        "--method",
        "theorem-3.1",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert (
        "--p:" in result.output and "no n <= 2^53 works" in result.output and "3708822156583625216" not in result.output
    )


# --- 6. the RR fallback reason states the criterion it applied ----------------------------------------------


def test_rr_fallback_reason_is_consistent_with_the_limit():
    for total in (RR.MAX_RR_BITS + 1, 10**9):
        cert = M.rr_shuffle_certificate(1e-4, 0.5, 1, total)
        assert not cert.certified and cert.reason.startswith("not attempted")
        assert f"{total} bits is above MAX_RR_BITS = {RR.MAX_RR_BITS:,}" in cert.reason
    assert M.rr_shuffle_certificate(1e-4, 0.5, 1, 1335).certified


# --- 9. the metric API takes numbers, not numeric strings ---------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: RRShuffle(1e-4, "0.5", 4, 300),
        lambda: RRShuffle("1e-4", 0.5, 4, 300),
        lambda: M.rr_shuffle_epsilon(1e-4, "0.5", 4, 300),
        lambda: M.rr_shuffle_probability("0.5", 1e-4, 4, 300),
        lambda: M.geo_shuffle_epsilon(0.5, "1e-4", 300),
        lambda: M.sgdl_pmf(0, "0.01", 0.5),
        lambda: M.sgdl_pmf(0, 0.01, "0.5"),
        lambda: M.sgdl_pmf(0, True, 0.5),
        lambda: M.planar_guarantee("0.5", 1e-4),
        lambda: M.planar_guarantee(0.5, b"1e-4"),
    ],
)
def test_numeric_strings_are_refused(call):
    with pytest.raises(PrivacyParameterError, match="must be"):
        call()


def test_numpy_numbers_are_still_numbers():
    assert M.rr_shuffle_epsilon(np.float64(1e-4), np.float32(0.5), np.int64(4), 50) == M.rr_shuffle_epsilon(
        1e-4, 0.5, 4, 50
    )
    assert M.planar_guarantee(np.float64(0.5), 1e-4)[0] == pytest.approx(0.5 * math.sqrt(2))


@pytest.mark.parametrize("bad", ["abc", 2.5, 0, M.MAX_DISTANCE + 1])
@pytest.mark.parametrize("method", ["certified", "theorem-4.1"])
def test_geo_shuffle_checks_max_distance_whatever_the_method(bad, method):
    """A bad max_distance is refused even where the method does not read it (it was silently ignored)."""
    with pytest.raises(PrivacyParameterError, match="max_distance"):
        M.geo_shuffle_epsilon(0.2, 1e-4, 100, 5, method=method, max_distance=bad)
    with pytest.raises(PrivacyParameterError, match="max_distance"):
        M.geo_shuffle_local_epsilon(0.1, 1e-4, 100, 5, method=method, max_distance=bad)


def test_geo_fallback_at_a_sum_distance_beyond_the_conditioned_support_says_so_not_underflow():
    # n k = 100 > n c = 60: at D = n k most of T + D faces outcomes beyond T's support, a true limit of the
    # conditioned-noise analysis (T's pmf is normal everywhere: the reason used to blame float64 underflow)
    found = M.geo_shuffle_certificate(3.0, 0.01, 20, 5)
    assert not found.certified and found.epsilon == 3.0
    assert "T's support ends at -n c = -60" in found.reason and "underflow" not in found.reason


def test_exact_reason_names_a_large_worst_pair_by_runs():
    """At n = 100 the exhaustive certificate's reason listed the worst pair as 200 numbers; beyond 8 values it is
    written as value x count runs (small pairs stay lists)."""
    reason = M.geo_shuffle_certificate(1.0, 1e-4, 40, 1).reason
    assert reason.startswith("exact: every pair") and "[1 x40] vs [0 x40]" in reason and len(reason) < 120, reason
    small = M.geo_shuffle_certificate(2.0, 1e-2, 6, 3).reason
    # all-0 vs all-3 and its mirror image all-3 vs all-0 tie (their sums' laws are each other's reverse): either
    assert "[0, 0, 0, 0, 0, 0] vs [3, 3, 3, 3, 3, 3]" in small or "[3, 3, 3, 3, 3, 3] vs [0, 0, 0, 0, 0, 0]" in small
