"""The per-distance guarantee `metric_profile` (issue 20, item 3): epsilon(d) for every pair of datasets at distance
<= d with one delta, the distance up to which a target holds, and the paper's theorem beside it."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from shuffledp.accounting import metric as M
from shuffledp.errors import PrivacyParameterError


def _geo_pairs(eps, delta, n, k):
    c = M.geo_shuffle_c(eps, delta, n)
    t = np.arange(-300, 301)
    pmf = math.tanh(eps / 2) * np.exp(-eps * np.abs(t))
    law = lambda x: np.bincount(np.clip(x + c + t, 0, k + 2 * c), weights=pmf, minlength=k + 2 * c + 1)  # noqa: E731
    sets = list(itertools.combinations_with_replacement(range(k + 1), n))
    laws = []
    for s in sets:
        pm = np.array([1.0])
        for x in s:
            pm = np.convolve(pm, law(x))
        laws.append(pm)
    laws, arr = np.array(laws), np.array(sets)
    i, j = np.nonzero(~np.eye(len(sets), dtype=bool))
    return laws[i], laws[j], np.abs(arr[i] - arr[j]).sum(axis=1)


@pytest.mark.parametrize("eps, delta, n, k", [(1.0, 1e-4, 4, 3), (2.0, 1e-2, 3, 5)])
def test_geo_profile_is_sound_and_exact_at_every_distance(eps, delta, n, k):
    prof = M.metric_profile("geo-shuffle", delta, n, k, eps_geo=eps)
    assert prof.exact and np.all(np.diff(prof.epsilons) >= 0)
    p, q, d = _geo_pairs(eps, delta, n, k)
    for dist, e in zip(prof.distances, prof.epsilons):
        near = d <= dist
        div = np.maximum(p[near] - np.exp(e * d[near])[:, None] * q[near], 0).sum(axis=1).max()
        assert div <= delta * (1 + 1e-9)
        if e < eps:
            tighter = np.maximum(p[near] - np.exp(0.999 * e * d[near])[:, None] * q[near], 0).sum(axis=1).max()
            assert tighter > delta
    assert prof.uniform == pytest.approx(M.geo_shuffle_epsilon(eps, delta, n, k))


def test_geo_profile_at_the_papers_scale_puts_theorem_4_1_within_its_radius():
    """n = 100, k = 1000, eps_geo = 0.2: no uniform gain, but Theorem 4.1's value holds up to about 240."""
    prof = M.metric_profile("geo-shuffle", 1e-4, 100, 1000, eps_geo=0.2)
    assert prof.uniform == 0.2 and not prof.exact
    assert 200 <= prof.theorem_holds_up_to <= 260
    assert prof.epsilon_at(1) < prof.theorem < prof.epsilon_at(prof.theorem_holds_up_to + 30)
    assert prof.reach(0.1) > prof.reach(0.07) > 0
    assert prof.epsilon_at(10**5) == 0.2  # beyond the curve: the uniform value


def test_rr_and_sgdl_profiles_end_at_their_uniform_values():
    rr = M.metric_profile("rr-shuffle", 1e-2, 100, 20, p=0.5)
    assert rr.epsilons[-1] == pytest.approx(M.rr_shuffle_epsilon(1e-2, 0.5, 20, 100))
    assert rr.epsilon_at(1) < 0.25 * rr.uniform
    sg = M.metric_profile("sgdl-shuffle", 1e-4, 5, 2, epsilon=1.0)
    assert sg.exact and sg.uniform == pytest.approx(M.sgdl_shuffle_epsilon(1.0, 1e-4, 5, 2))


def test_rr_profile_never_above_its_uniform_value():
    """Pairs at distance <= d are pairs: at p = 0.95, n k = 2,000, delta = 1e-6 the covers of a distance below n k
    gave 0.0344, twice the uniform (exact) 0.01526, and the running maximum carried it to the end of the curve."""
    prof = M.metric_profile("rr-shuffle", 1e-6, 100, 20, p=0.95)
    assert prof.uniform == M.rr_shuffle_epsilon(1e-6, 0.95, 20, 100)
    assert np.all(prof.epsilons <= prof.uniform) and prof.epsilons[-1] == prof.uniform


def test_profile_refuses_a_missing_or_foreign_parameter():
    with pytest.raises(PrivacyParameterError, match="geo-shuffle takes eps_geo"):
        M.metric_profile("geo-shuffle", 1e-4, 5, 2, p=0.5)
    with pytest.raises(PrivacyParameterError, match="protocol must be one of"):
        M.metric_profile("laplace", 1e-4, 5, 2, eps_geo=1.0)


@pytest.mark.parametrize(
    "protocol, noise, delta, n, k, single",
    [
        ("sgdl-shuffle", {"epsilon": 0.3}, 1e-2, 100, 10, M.sgdl_shuffle_certified_epsilon),
        ("geo-shuffle", {"eps_geo": 1.0}, 1e-2, 300, 3, M.geo_shuffle_certified_epsilon),
    ],
)
def test_profile_ends_on_the_single_certified_epsilon(protocol, noise, delta, n, k, single):
    """The conditioned-noise profile and the single certified epsilon come from one certified search: at
    SGDL-Shuffle (0.3, 1e-2, n = 100, k = 10) the per-distance root search alone ended at 0.737848 (D = 999, where
    (A - budget) / B overflows on a subnormal B), above the certified 0.737803 that holds at every distance."""
    prof = M.metric_profile(protocol, delta, n, k, **noise)
    assert not prof.exact and prof.distances[-1] == n * k
    value = single(*noise.values(), delta, n, k)
    assert prof.uniform == value and prof.epsilons[-1] == value
    assert np.all(np.diff(prof.epsilons) >= 0) and prof.epsilons[0] < value


@pytest.mark.slow
def test_profile_at_metric_locations_size_certifies_below_eps_geo_at_small_distances():
    """metric-location's Geo-Shuffle column at n = 1000 (Table 3's eps = 0.15: eps_geo = 0.1478 per axis square,
    delta / 2, k = 1000): T's direct convolution is beyond its limit (2 (c+1)^2 n^2 = 2.9e10), so the profile gave
    eps_geo at every distance; T's law from tilted FFT powers (what the certificate uses) certifies ~0.0066 at d = 1."""
    eps_geo, delta, n, k = 0.1478034406830204, 5e-5, 1000, 1000
    prof = M.metric_profile("geo-shuffle", delta, n, k, eps_geo=eps_geo)
    assert not prof.exact and np.all(np.diff(prof.epsilons) >= 0)
    assert prof.epsilon_at(1) < 0.1 * eps_geo and prof.epsilon_at(10_000) < eps_geo
    assert prof.theorem_holds_up_to >= 100  # Theorem 4.1's 0.0177 holds for nearby datasets, certified
    assert prof.uniform == M.geo_shuffle_certificate(eps_geo, delta, n, k).epsilon == eps_geo  # k > 2c: no more


@pytest.mark.slow
@pytest.mark.parametrize(
    "protocol, noise, n, k",
    [("geo-shuffle", {"eps_geo": 0.5}, 10_000, 3), ("sgdl-shuffle", {"epsilon": 0.5}, 1000, 3)],
)
def test_profile_beyond_the_direct_convolution_ends_on_the_single_certified_epsilon(protocol, noise, n, k):
    """Beyond the direct convolution's limit the curve comes from T's tilted law (not the per-report bound, as
    before): it never exceeds the single certified epsilon and ends on it at n k."""
    prof = M.metric_profile(protocol, 1e-4, n, k, **noise)
    certificate = M.geo_shuffle_certificate if protocol == "geo-shuffle" else M.sgdl_shuffle_certificate
    single = certificate(*noise.values(), 1e-4, n, k)
    assert single.certified and prof.uniform == single.epsilon
    assert prof.distances[-1] == n * k and prof.epsilons[-1] == prof.epsilon_at(n * k) == single.epsilon
    assert np.all(np.diff(prof.epsilons) >= 0) and prof.epsilons[0] < single.epsilon


@pytest.mark.parametrize(
    "protocol, noise, delta, n, k",
    [("sgdl-shuffle", {"epsilon": 0.5}, 1e-4, 1000, 10), ("geo-shuffle", {"eps_geo": 0.5}, 1e-6, 10_000, 1)],
)
def test_a_target_the_uniform_value_meets_holds_at_every_distance(protocol, noise, delta, n, k):
    """The listed distances end at n k, so a target at or above the uniform epsilon reaches every distance, and so
    does the theorem's value where the curve stays below it: the curve used to stop where the per-distance solve
    stopped (distance 31 at Geo-Shuffle n = 10^4, k = 1) and ``reach`` said the target held only up to there, while
    the same profile's uniform value (valid for every pair) was below the target."""
    prof = M.metric_profile(protocol, delta, n, k, **noise)
    assert prof.distances[-1] == n * k
    assert prof.reach(prof.uniform) == prof.reach(prof.uniform * 1.5) == n * k
    below = prof.epsilons[prof.epsilons < prof.uniform]
    if below.size:  # a target the curve meets only nearby reaches less far
        assert prof.reach(float(below[0])) < n * k


def test_rr_profile_below_the_covers_smallest_p_gives_the_single_certified_epsilon():
    """Below p = 2e-9 the covers of one distance do not run, but the single epsilon is certified on direct
    convolutions up to n k = 1,060 bits: the profile said "not attempted" and gave the local bound where `metric
    epsilon` gave the certified value for the same inputs; now it gives that value (valid at every distance)."""
    prof = M.metric_profile("rr-shuffle", 1e-6, 100, 10, p=1e-12)
    single = M.rr_shuffle_certificate(1e-6, 1e-12, 10, 100)
    assert single.certified and prof.uniform == single.epsilon == prof.epsilon_at(1)
    assert prof.source.startswith(single.reason)


@pytest.mark.parametrize("p, k", [(0.5, 10**9), (1e-12, 100)])
def test_rr_profile_keeps_the_single_epsilons_limits(p, k):
    """Beyond MAX_RR_BITS (or below the covers' smallest p) the single epsilon returns the local bound without
    computing; the profile ran the covers anyway (229 s at n k = 10^11, its per-pmf slack then dominating every
    value) and disagreed with it: both now state the same limit and the local bound at every distance."""
    prof = M.metric_profile("rr-shuffle", 1e-4, 100, k, p=p)
    cert = M.rr_shuffle_certificate(1e-4, p, k, 100)
    local = math.log((2 - p) / p)
    assert prof.uniform == cert.epsilon == pytest.approx(local) and not cert.certified
    assert prof.epsilons.tolist() == [prof.uniform] and prof.source.startswith("not attempted")


def test_profile_beyond_64_bit_distances_is_a_named_error():
    """n = k = 2^53 (the command line's largest counts): the distances n k do not fit the profile's 64-bit
    integers; it crashed with an OverflowError, now a PrivacyParameterError says so and where the uniform value is."""
    with pytest.raises(PrivacyParameterError, match=r"above 2\^63 - 1"):
        M.metric_profile("rr-shuffle", 1e-4, 2**53, 2**53, p=0.5)
    assert M.metric_profile("rr-shuffle", 1e-4, 2**31, 2**31, p=0.5).uniform == pytest.approx(math.log(3))
