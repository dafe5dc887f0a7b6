"""The certified Geo-/SGDL-Shuffle shift analysis (`shuffledp.accounting.metric._common`) where float64 runs out
(issue 20, soundness): e^(eps D) beyond the float range (eps D > ~709.78) and T's pmf below the smallest normal
double.  Every value is checked against an evaluation that does not share the float64 shortcut: mpmath at 50 digits
on the same inputs, or T's pmf convolved in log space."""

from __future__ import annotations

import decimal
import math

import mpmath
import numpy as np
import pytest
from scipy.special import logsumexp

from shuffledp.accounting import metric as M
from shuffledp.accounting.metric import _common as C
from shuffledp.accounting.metric import geo_shuffle as G
from shuffledp.accounting.metric import sgdl_shuffle as S
from shuffledp.accounting.metric.sgdl import log_sgdl_pmf


def _exact_divergences(upper: np.ndarray, lower: np.ndarray, shifts: np.ndarray, epsilon: float) -> list:
    """sum_t max(0, upper(t) - e^(eps D) lower(t - D)) at 50 digits, from the exact values of the float inputs."""
    with mpmath.workdps(50):
        out = []
        for d in shifts:
            scale = mpmath.exp(mpmath.mpf(epsilon) * int(d))
            total = mpmath.mpf(0)
            for t in range(upper.size):
                below = mpmath.mpf(float(lower[t - d])) if t - d >= 0 else mpmath.mpf(0)
                total += max(mpmath.mpf(0), mpmath.mpf(float(upper[t])) - scale * below)
            out.append(total)
        return out


def _overflowing_laws(epsilon: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """An upper law and a lower law whose values are about upper e^(-eps 8) (subnormal at eps = 90: e^(eps 8) is
    beyond float64, yet e^(eps 8) lower(t - 8) is comparable to upper(t))."""
    rng = np.random.default_rng(seed)
    upper = rng.uniform(0.0, 1.0, 40)
    upper /= upper.sum()
    lower = np.exp(np.log(upper) - 8 * epsilon + rng.normal(0.0, 1.5, upper.size))
    return upper, lower


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_shift_divergences_never_drop_terms_where_e_to_the_eps_d_overflows(seed):
    epsilon = 90.0  # eps D > 709.78 from D = 8 on
    upper, lower = _overflowing_laws(epsilon, seed)
    assert 0.0 < lower.max() < np.finfo(np.float64).tiny and epsilon * 8 > math.log(np.finfo(np.float64).max)
    shifts = np.arange(1, 12)
    computed = C.shift_divergences(C.ShiftLaw(upper, lower), shifts, epsilon)
    exact = _exact_divergences(upper, lower, shifts, epsilon)
    assert float(exact[7]) > 0.01  # D = 8: terms that only the overflowing rows see
    for value, truth in zip(computed, exact, strict=True):
        assert value >= float(truth) * (1.0 - 1e-12)
        assert value <= float(truth) * (1.0 + 1e-9) + 1e-300
    budget = 0.5 * float(exact[7])
    assert C.max_shift_divergence(C.ShiftLaw(upper, lower), shifts, epsilon, budget) > budget
    assert not np.isnan(C.shift_divergences(C.ShiftLaw(upper, lower), shifts, math.inf)).any()  # ln 0 + inf is no nan


@pytest.mark.parametrize("seed", [0, 1])
def test_exhaustive_skip_check_keeps_terms_where_e_to_the_exponent_overflows(seed):
    # the skip test of the exhaustive Geo/SGDL search: a dropped term would let it skip a pair that raises the profile
    from shuffledp.accounting.metric._exhaustive import pair_divergences

    epsilon = 90.0
    upper, lower = _overflowing_laws(epsilon, seed)
    num, den = np.vstack([upper, upper]), np.vstack([lower, lower])
    exponent = np.array([epsilon * 8, epsilon * 2])  # the first overflows float64, the second does not
    computed = pair_divergences(num, den, exponent)
    with mpmath.workdps(50):
        for row, value in enumerate(computed):
            scale = mpmath.exp(mpmath.mpf(float(exponent[row])))
            truth = sum(
                max(mpmath.mpf(0), mpmath.mpf(float(u)) - scale * mpmath.mpf(float(v))) for u, v in zip(upper, lower)
            )
            assert value >= float(truth) * (1.0 - 1e-12)
            assert value <= float(truth) * (1.0 + 1e-9) + 1e-300
    assert computed[0] > 0.01  # the overflowing row has terms the plain product dropped


def _log_noise(kind: str, epsilon: float, delta: float, n: int) -> tuple[np.ndarray, np.ndarray, float]:
    """(ln of T's pmf convolved in log space, T's pmf as the package computes it, the budget on the divergence)."""
    if kind == "geo":
        c = G.geo_shuffle_c(epsilon, delta, n)
        log_one = -epsilon * np.abs(np.arange(-c, c + 1, dtype=np.float64))
        pmf, inside = G.geo_shuffle_conditioned_noise(epsilon, c, n)
        budget = (delta - (1.0 - inside)) / inside
    else:
        c = S.sgdl_shuffle_c(epsilon, delta, n)
        log_one = log_sgdl_pmf(np.arange(-c, c + 1), 1.0 / n, math.exp(-epsilon))
        pmf, delta_1 = S.sgdl_shuffle_conditioned_noise(epsilon, c, n)
        budget = delta - delta_1
    log_one = log_one - logsumexp(log_one)
    width = log_one.size
    log_pmf = log_one
    for _ in range(n - 1):
        padded = np.concatenate([np.full(width - 1, -np.inf), log_pmf, np.full(width - 1, -np.inf)])
        windows = np.lib.stride_tricks.sliding_window_view(padded, width)
        log_pmf = logsumexp(windows + log_one[::-1][None, :], axis=1)
    return log_pmf, pmf, budget


def _log_space_divergences(log_pmf: np.ndarray, epsilon: float, shifts: np.ndarray) -> np.ndarray:
    """sum_t max(0, p(t) - e^(eps D) p(t - D)) with every term formed in log space: p(t) (1 - e^(eps D + ln p(t - D)
    - ln p(t))), and p(t) whole where t - D is outside the support."""
    out = []
    for d in shifts:
        here, there = log_pmf[d:], log_pmf[:-d] + epsilon * d
        gap = there - here
        kept = np.isfinite(here) & (gap < 0.0)
        out.append(float((np.exp(here[kept]) * -np.expm1(gap[kept])).sum() + np.exp(log_pmf[:d]).sum()))
    return np.array(out)


@pytest.mark.parametrize("kind, epsilon, delta, n", [("sgdl", 0.3, 1e-2, 100), ("sgdl", 1.0, 1e-4, 200)])
def test_shift_bounds_hold_against_a_log_space_convolution_below_the_normal_range(kind, epsilon, delta, n):
    log_pmf, pmf, _ = _log_noise(kind, epsilon, delta, n)
    assert ((pmf > 0.0) & (pmf < np.finfo(np.float64).tiny)).sum() > 10  # subnormal values, relative error ~40%
    upper, lower = C.shift_bounds(pmf)
    with np.errstate(divide="ignore"):
        assert np.all(np.log(upper) >= log_pmf)
        assert np.all(np.log(lower) <= log_pmf)
    normal = pmf > 1e-290
    assert np.array_equal(lower[normal], pmf[normal] * (1.0 - C.PMF_SLACK))  # the common case is untouched


@pytest.mark.parametrize("epsilon, delta, n, k", [(1.0, 1e-2, 50, 10), (1.0, 1e-4, 200, 3)])
def test_sgdl_certified_epsilon_beyond_the_float_range_meets_delta_in_log_space(epsilon, delta, n, k):
    found = M.sgdl_shuffle_certificate(epsilon, delta, n, k)
    assert found.certified and found.epsilon * n * k > math.log(np.finfo(np.float64).max)  # e^(eps D) overflows
    log_pmf, _, budget = _log_noise("sgdl", epsilon, delta, n)
    assert _log_space_divergences(log_pmf, found.epsilon, np.arange(1, n * k + 1)).max() <= budget


@pytest.mark.parametrize("target, delta, n, k", [(2.4, 1e-2, 400, 1), (1.0, 1e-2, 400, 2)])
def test_geo_inverse_beyond_the_float_range_meets_delta_in_log_space(target, delta, n, k):
    eps_geo = M.geo_shuffle_local_epsilon(target, delta, n, k)
    assert eps_geo > target and target * n * k > math.log(np.finfo(np.float64).max)  # e^(eps D) overflows
    log_pmf, _, budget = _log_noise("geo", eps_geo, delta, n)
    assert _log_space_divergences(log_pmf, target, np.arange(1, n * k + 1)).max() <= budget


def _noise_at_50_digits(kind: str, epsilon: float, n: int, c: int) -> tuple[np.ndarray, decimal.Decimal]:
    """(T's pmf at 50 digits: the true per-user law on [-c, c], G(0, eps) or SGDL(1/n, e^-eps) from its
    hypergeometric form, conditioned and convolved n times in decimal arithmetic; the true 1 - Pr[H])."""
    with mpmath.workdps(60):
        p, r = mpmath.exp(-mpmath.mpf(epsilon)), mpmath.mpf(1) / n
        if kind == "geo":
            one = [p ** abs(x) * (1 - p) / (1 + p) for x in range(-c, c + 1)]
        else:
            one = [
                (1 - p) ** (2 * r) * p**m * mpmath.binomial(r + m - 1, m) * mpmath.hyp2f1(r, r + m, m + 1, p * p)
                for m in (abs(x) for x in range(-c, c + 1))
            ]
        mass = mpmath.fsum(one)
        law = np.array([decimal.Decimal(mpmath.nstr(v / mass, 55)) for v in one], dtype=object)
        outside = decimal.Decimal(mpmath.nstr(1 - mass**n, 55))
    with decimal.localcontext(prec=50):
        return C.convolution_power(law, n), outside


def _divergence_at_50_digits(pmf: np.ndarray, epsilon: float, d: int) -> decimal.Decimal:
    """D_{e^(eps d)}(T + d || T) = sum_t max(0, pmf(t - d) - e^(eps d) pmf(t)) over T + d's outcomes, at 50 digits."""
    with decimal.localcontext(prec=50):
        scale = (decimal.Decimal(epsilon) * d).exp()
        zero = decimal.Decimal(0)
        return sum((max(zero, a - scale * b) for a, b in zip(pmf[:-d], pmf[d:], strict=True)), zero) + sum(pmf[-d:])


@pytest.mark.parametrize(
    "kind, epsilon, delta, n, k",
    [
        ("sgdl", 0.3, 1e-2, 100, 10),  # T underflows beyond |t| = 1006; fell back to eps_u = 4.90
        pytest.param("sgdl", 0.3, 1e-4, 300, 5, marks=pytest.mark.slow),  # beyond |t| = 1525; eps_u = 6.00
        ("geo", 2.0, 1e-4, 100, 5),  # beyond |t| = 461; fell back to eps_geo = 2
        ("geo", 1.0, 1e-6, 100, 10),  # beyond |t| = 958; fell back to eps_geo = 1
    ],
)
def test_certificate_where_t_underflows_meets_delta_at_50_digits_and_is_tight(kind, epsilon, delta, n, k):
    # T's pmf is below the normal range where the largest sum distances look (e^(eps D) beyond 1e308): the linear
    # bounds read it as 0 (infinite loss) and fell back; the log-space tail certifies what the mechanism needs
    if kind == "geo":
        found, fallback = M.geo_shuffle_certificate(epsilon, delta, n, k), epsilon
        c = G.geo_shuffle_c(epsilon, delta, n)
    else:
        found, fallback = M.sgdl_shuffle_certificate(epsilon, delta, n, k), S.sgdl_shuffle_report_epsilon(epsilon, n)
        c = S.sgdl_shuffle_c(epsilon, delta, n)
    assert found.certified and found.epsilon < fallback
    pmf, outside = _noise_at_50_digits(kind, epsilon, n, c)
    assert pmf[: pmf.size // 2 - n * k + 1].min() < np.finfo(np.float64).tiny  # where D = n k meets T's mode
    if kind == "geo":  # the truncation is charged exactly: delta_1 + Pr[H] D_{e^(eps D)}(T + D || T)

        def total(eps, d):
            return outside + (1 - outside) * _divergence_at_50_digits(pmf, eps, d)
    else:  # the certificate charges its bound on delta_1 (Lemma C.1's union) and drops Pr[H] <= 1
        delta_1 = decimal.Decimal(S.sgdl_shuffle_conditioned_noise(epsilon, c, n)[1])
        assert outside <= delta_1

        def total(eps, d):
            return delta_1 + _divergence_at_50_digits(pmf, eps, d)

    # the worst sum distance at 50 digits (a grid of 20 down from n k) meets delta at the returned epsilon
    worst = max(range(n * k, 0, -max(1, n * k // 20)), key=lambda d: total(found.epsilon, d))
    assert total(found.epsilon, worst) <= decimal.Decimal(delta)
    lo, hi = 0.0, found.epsilon  # the 50-digit root there: the returned epsilon is at most 1e-6 above it
    for _ in range(40):
        lo, hi = ((lo + hi) / 2, hi) if total((lo + hi) / 2, worst) > decimal.Decimal(delta) else (lo, (lo + hi) / 2)
    assert hi <= found.epsilon <= hi * (1.0 + 1e-6)


def test_sgdl_fallback_names_the_float64_underflow_beyond_the_log_tail(monkeypatch):
    # with no tilt left the lower law is the linear one, 0 below 1e-308: the fallback must say so
    monkeypatch.setattr(C, "MAX_TAIL_TILTS", 0)
    found = M.sgdl_shuffle_certificate(0.3, 1e-2, 100, 10)
    assert not found.certified and found.epsilon == S.sgdl_shuffle_report_epsilon(0.3, 100)
    assert "underflows float64" in found.reason and "D = n k = 1000" in found.reason


@pytest.mark.parametrize("kind, epsilon, delta, n, k", [("sgdl", 0.3, 1e-2, 100, 10), ("geo", 1.0, 1e-6, 100, 10)])
def test_log_space_tail_of_t_is_a_lower_bound_within_1e_8_of_50_digits(kind, epsilon, delta, n, k):
    c = G.geo_shuffle_c(epsilon, delta, n) if kind == "geo" else S.sgdl_shuffle_c(epsilon, delta, n)
    if kind == "geo":
        law, _ = G._geo_shuffle_noise_law(epsilon, c, n, n * k)
    else:
        law, _ = S._sgdl_shuffle_noise_law(epsilon, c, n, n * k)
    assert law.log_lower is not None  # the tail is needed here
    pmf, _ = _noise_at_50_digits(kind, epsilon, n, c)
    with decimal.localcontext(prec=50):
        truth = np.array([float(v.ln()) for v in pmf])
    # the left tail (the checks compare T + D with T, D > 0) where the linear lower law has lost its precision
    tail = (law.lower < np.finfo(np.float64).tiny) & (np.arange(pmf.size) < n * c)
    reached = tail & np.isfinite(law.log_lower)
    assert reached.sum() > 300 and truth[reached].min() < -800  # far below the float range
    assert np.all(law.log_lower <= truth)  # rounded down everywhere
    assert np.all(truth[reached] - law.log_lower[reached] <= 1e-8 * (1.0 + np.abs(truth[reached])))
    assert np.all(np.log(law.upper) >= truth)  # the upper law stays linear, rounded up
