"""Certified Geo-/SGDL-Shuffle epsilons at the paper's sizes (n up to 10^4): T's law by tilted FFT powers
(`_common.shift_law(..., "tilted")`) against the direct convolution where that runs, and the certified value at
n = 1000 against a 50-digit evaluation of delta_1 + Pr[H] D_{e^(eps D)}(T + D || T)."""

from __future__ import annotations

import itertools
import math

import mpmath as mp
import numpy as np
import pytest

from shuffledp.accounting.metric import _common as C
from shuffledp.accounting.metric import _tilted_law as T
from shuffledp.accounting.metric import geo_shuffle as G
from shuffledp.accounting.metric import sgdl_shuffle as S


def _setting(kind: str, eps: float, delta: float, n: int):
    """(per-user law, budget on the divergence, c) of Geo- or SGDL-Shuffle."""
    if kind == "geo":
        c = G.geo_shuffle_c(eps, delta, n)
        inside = G._inside(eps, c, n)
        return G._user_law(eps, c), (delta - (1.0 - inside)) / inside, c
    c = S.sgdl_shuffle_c(eps, delta, n)
    return S._user_law(eps, c, n), delta - S._delta_1(eps, c, n), c


_GRID = [
    (kind, eps, delta, n, k)
    for kind, eps, delta, n, k in itertools.product(("geo", "sgdl"), (0.5, 1.0, 2.0), (1e-3, 1e-5), (40, 300), (1, 4))
]


@pytest.mark.parametrize("kind, eps, delta, n, k", _GRID)
def test_tilted_law_certifies_what_the_direct_convolution_certifies(kind, eps, delta, n, k):
    """Where the direct convolution runs, the tilted law's certified epsilon equals it within 1e-9 relative."""
    one, budget, c = _setting(kind, eps, delta, n)
    if n * k > 2 * n * c or not budget > 0.0:
        pytest.skip("no shift analysis here")
    shifts = np.arange(1, n * k + 1)
    direct = C.certified_shift_epsilon(C.shift_law(one, n, n * k, "direct"), budget, shifts)
    tilted = C.certified_shift_epsilon(C.shift_law(one, n, n * k, "tilted"), budget, shifts)
    assert math.isfinite(direct)
    assert tilted == pytest.approx(direct, rel=1e-9, abs=0.0)


@pytest.mark.parametrize("kind, eps, delta, n", [("geo", 0.5, 1e-4, 1000), ("sgdl", 0.5, 1e-4, 300)])
def test_automatic_law_is_the_tilted_one_where_the_direct_convolution_costs_more(kind, eps, delta, n):
    """At n = 1000 (Geo, c = 13: 3.9e8 multiply-adds, ~0.25 s) the direct convolution was the automatic choice, and
    the certified inverse paid it at every step (1.4 s at n = 1000, k = 1); beyond `AUTO_DIRECT_WORK` the automatic
    law is the tilted one (~10 ms, as valid: the test above)."""
    one, _, c = _setting(kind, eps, delta, n)
    assert C.convolution_work(c, n) > C.AUTO_DIRECT_WORK
    auto, tilted = C.shift_law(one, n, n, "auto"), C.shift_law(one, n, n, "tilted")
    assert all(np.array_equal(x, y) for x, y in zip(auto, tilted) if isinstance(x, np.ndarray))


def test_tilted_law_brackets_the_direct_convolution():
    """Both tilted bounds hold against the direct pmf (itself exact to ~1e-13) wherever it is normal, within 2e-9."""
    one, _, c = _setting("geo", 1.0, 1e-4, 300)
    law = C.shift_law(one, 300, 300 * 3, "tilted")
    pmf = C.convolution_power(one, 300)
    seen = pmf > 1e-280
    assert np.all(law.upper[seen] >= pmf[seen] * (1.0 - 1e-12))
    assert np.all(np.exp(law.log_lower[seen]) <= pmf[seen] * (1.0 + 1e-12))
    assert np.max(np.log(law.upper[seen] / pmf[seen])) < 2e-9


@pytest.mark.parametrize(
    "kind, eps, delta, n, k",
    [
        ("geo", 0.3, 1e-6, 10**4, 10),
        ("geo", 2.0, 1e-6, 10**4, 10),
        ("geo", 1.0, 1e-4, 2000, 3),
        ("sgdl", 1.0, 1e-5, 3000, 4),
    ],
)
def test_each_tilt_of_the_sweep_covers_the_edge_the_last_one_left(kind, eps, delta, n, k, monkeypatch):
    """Every tilt aimed `_tilted_law._AHEAD` sds beyond the covered edge still covers that edge: no outcome inside
    the covered span is left without a lower bound, and the tilted means run monotonically away from the centre
    (a look-ahead that missed would be re-aimed at the edge itself, back towards it, costing a tilt)."""
    one, _, _ = _setting(kind, eps, delta, n)
    means, one_tilt = [], T._one_tilt

    def spy(tilted, n_users, c, mean, var):
        means.append(mean)
        return one_tilt(tilted, n_users, c, mean, var)

    monkeypatch.setattr(T, "_one_tilt", spy)
    law = C.shift_law(one, n, n * k, "tilted")
    assert np.all(np.isfinite(law.log_lower[C._finite_span(law.log_lower)]))
    centre, *rest = means
    left = [m for m in rest if m < centre]
    right = [m for m in rest if m >= centre]
    assert len(left) > 5 and rest == left + right
    assert np.all(np.diff(left) < 0) and np.all(np.diff(right) > 0)


def _mp_fft(values: list) -> list:
    """Radix-2 decimation-in-time DFT, sum_j v_j e^(-2 pi i j m / N), in mpmath (N a power of 2)."""
    size = len(values)
    if size == 1:
        return list(values)
    even, odd = _mp_fft(values[0::2]), _mp_fft(values[1::2])
    out = [mp.mpc(0)] * size
    for m in range(size // 2):
        twiddle = mp.expjpi(-2 * mp.mpf(m) / size) * odd[m]
        out[m], out[m + size // 2] = even[m] + twiddle, even[m] - twiddle
    return out


def _mp_law_near(one: list, n: int, centre: int, lo: int, hi: int, grid: int = 4096) -> dict[int, mp.mpf]:
    """T(t) for t = lo..hi at 50 digits: T(t) = e^(-theta t) M(theta)^n P_theta(t), P_theta by an inverse DFT of
    the tilted characteristic function on ``grid`` points (theta puts the tilted mean near ``centre``; the tilted
    law's mass beyond grid/2 of its mean, which would wrap, is far below 1e-50 of the values read)."""
    c = (len(one) - 1) // 2
    xs = range(-c, c + 1)

    def tilted_mean(theta):
        m = mp.fsum(w * mp.exp(theta * x) for w, x in zip(one, xs, strict=True))
        return mp.fsum(w * x * mp.exp(theta * x) for w, x in zip(one, xs, strict=True)) / m

    left, right = mp.mpf(-60), mp.mpf(60)  # bisection: any theta is exact, one near the centre keeps P_theta large
    for _ in range(80 if centre else 0):
        mid = (left + right) / 2
        left, right = (mid, right) if tilted_mean(mid) < mp.mpf(centre) / n else (left, mid)
    theta = (left + right) / 2 if centre else mp.mpf(0)
    big_m = mp.fsum(w * mp.exp(theta * x) for w, x in zip(one, xs, strict=True))
    tilted = [w * mp.exp(theta * x) / big_m for w, x in zip(one, xs, strict=True)]
    # the characteristic function at omega_j = 2 pi j / grid, to the n-th power; P(t) = (1/grid) sum_j ... e^(-i omega_j t)
    spectrum = []
    for j in range(grid):
        z = mp.expjpi(2 * mp.mpf(j) / grid)
        spectrum.append(mp.fsum(w * z**x for w, x in zip(tilted, xs, strict=True)) ** n)
    circular = [v / grid for v in _mp_fft(spectrum)]
    return {t: mp.re(circular[t % grid]) * mp.exp(-theta * t) * big_m**n for t in range(lo, hi + 1)}


@pytest.mark.parametrize("kind, eps, delta", [("geo", 1.0, 1e-4), ("sgdl", 1.0, 1e-4)])
def test_certified_at_n_1000_meets_delta_at_50_digits(kind, eps, delta):
    """n = 1000, k = 1 (not attempted before: the direct convolution was over its limit): the certified value is
    below the per-report epsilon, and at it delta_1 + Pr[H] D_{e^(eps D)}(T + D || T) <= delta at 50 digits, at
    the worst D and a sample of others (outcomes where T's tail is below 1e-9 delta bounded by Chernoff)."""
    n, k = 1000, 1
    if kind == "geo":
        cert = G.geo_shuffle_certificate(eps, delta, n, k)
        per_report = eps
    else:
        cert = S.sgdl_shuffle_certificate(eps, delta, n, k)
        per_report = S.sgdl_shuffle_certificate(eps, delta, n, None).epsilon
    assert cert.certified and cert.epsilon < per_report
    one, budget, c = _setting(kind, eps, delta, n)
    law = C.shift_law(one, n, n * k)
    shifts = np.arange(1, n * k + 1)
    window = C._shift_window(law.upper, 1e-6 * budget)
    inside, _ = C._windowed_divergences(law, shifts, cert.epsilon, window)
    worst = int(shifts[np.argmax(inside)])
    with mp.workdps(50):
        if kind == "geo":
            p = mp.exp(-eps)
            weights = [p ** abs(x) for x in range(-c, c + 1)]
            one_mp = [w / mp.fsum(weights) for w in weights]
            delta_1 = 1 - (1 - 2 * p ** (c + 1) / (1 + p)) ** n
        else:  # the per-user law as the code computes it (float64 sgdl_pmf), and its delta_1 bound
            one_mp = [mp.mpf(float(w)) for w in one]
            one_mp = [w / mp.fsum(one_mp) for w in one_mp]
            delta_1 = mp.mpf(S._delta_1(eps, c, n))
        x = range(-c, c + 1)
        sd = math.sqrt(n * sum(float(w) * v * v for w, v in zip(one_mp, x, strict=True)))
        thetas = [mp.mpf(v) for v in (0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 0.9)]

        def chernoff(half):  # a bound on Pr[|T| > half] (T symmetric): 2 min over theta of M(theta)^n e^(-theta half)
            return 2 * min(
                mp.fsum(w * mp.exp(th * v) for w, v in zip(one_mp, x, strict=True)) ** n * mp.exp(-th * half)
                for th in thetas
            )

        half = int(12 * sd) + 2
        while chernoff(half) > 1e-9 * delta:
            half = int(1.25 * half) + 1
        tail = chernoff(half)
        upper_row = _mp_law_near(one_mp, n, 0, -half, half)
        for d in sorted({worst, 1, n * k // 2, n * k}):
            lower_row = _mp_law_near(one_mp, n, -d, -half - d, half - d)
            factor = mp.exp(mp.mpf(cert.epsilon) * d)
            divergence = mp.fsum(max(mp.mpf(0), upper_row[t] - factor * lower_row[t - d]) for t in upper_row)
            total = delta_1 + (1 - delta_1) * (divergence + tail)
            assert total <= delta, (d, total)
