"""Total-variation distance of product randomizers, for the amplification beta.

For a randomizer with independent coordinates, the total-variation distance
between its output laws P0 = R(x0) and P1 = R(x1) is

    TV(P0, P1) = E_{Y ~ P0}[(1 - e^{-L(Y)})_+],   L = log(dP0/dP1) = sum_j L_j,

a function of the privacy loss L, which under P0 is a sum of independent
per-coordinate losses L_j.  Given the P0-law of L_j on a grid symmetric about 0,
the law of the sum is a d-fold convolution: summed directly while that is cheap,
else through its characteristic function (`_convolution_power`), whose cost does
not grow with d squared (Laplace at d = 10,000: about 0.1 s instead of a minute).  When the losses are rounded *up*
to the grid, the sum stochastically dominates the true one and, as
s -> (1 - e^{-s})_+ is nondecreasing, the result is an upper bound; it is exact
when the losses live on the grid.

Which pair (x0, x1) is worst is each mechanism's business (see the callers):
for all mechanisms here, each coordinate's experiment (P0_j, P1_j) is a
garbling of the one at the largest coordinate distance, and a product of
garblings is a garbling, so opposite corners of the cube maximise the TV.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import fft as sp_fft

#: Relative margin added to computed distances (also used by duchi.py): absorbs float64 rounding in the
#: convolution sums so the returned value errs upward (DESIGN.md, "Accounting").
_FLOAT_SLACK = 1e-9


#: Largest number of multiply-adds (about size(pmf)^2 dim^2 / 2) for which the d-fold convolution is summed
#: directly; above it `_convolution_power` takes over (its cost grows like d log d, not d^2).
_DIRECT_CONVOLUTION_WORK = 1e8


def _convolution_power(pmf: np.ndarray, dim: int) -> np.ndarray:
    """The ``dim``-fold convolution of ``pmf`` (a law on the grid -K..K), on -K dim..K dim.

    Through the characteristic function phi on a grid of N >= 2 K dim + 1 frequencies (so
    nothing wraps around): the sum has phi^d.  Computing phi^d as (FFT(pmf))^d would multiply
    phi's round-off by d where |phi| is near 1, so phi - 1 = sum_j p_j (e^{-i w j} - 1) is summed
    with e^{-i w j} - 1 = -2 sin(w j/2) (sin(w j/2) + i cos(w j/2)) (no cancellation), and
    phi^d = exp(d log1p(phi - 1)).  One inverse real FFT then gives the law, to about 1e-16
    of its largest entry (1e-13 relative on the total variations of `laplace`, against both
    the direct sum and an 80-bit one).
    """
    K = (pmf.size - 1) // 2
    support = K * dim
    size = sp_fft.next_fast_len(2 * support + 1, real=True)
    half_angle = np.exp(1j * (np.pi / size) * np.arange(size // 2 + 1))  # e^{i w/2} at each frequency w
    rotation = np.ones_like(half_angle)  # e^{i w j/2}, by repeated multiplication (j <= K: error ~ K ulp)
    minus_one = np.zeros_like(half_angle)  # phi - 1
    for j in range(1, K + 1):
        rotation *= half_angle
        up, down = pmf[K + j], pmf[K - j]
        if up == 0.0 and down == 0.0:
            continue
        s, c = rotation.imag, rotation.real
        # p_up (e^{-iwj} - 1) + p_down (e^{iwj} - 1) = -2 s ((up + down) s + i (up - down) c)
        minus_one.real -= 2.0 * (up + down) * s * s
        minus_one.imag -= 2.0 * (up - down) * s * c
    with np.errstate(divide="ignore"):  # phi = 0 gives log |phi| = -inf, and |phi|^d = 0
        log_modulus = 0.5 * np.log1p(2.0 * minus_one.real + minus_one.real**2 + minus_one.imag**2)
    phase = dim * np.arctan2(minus_one.imag, 1.0 + minus_one.real)
    law = sp_fft.irfft(np.exp(dim * log_modulus) * (np.cos(phase) + 1j * np.sin(phase)), size)
    return np.concatenate((law[size - support :], law[: support + 1]))


def product_total_variation(pmf: np.ndarray, step: float, dim: int) -> float:
    """Upper bound on E[(1 - e^{-S})_+], S the sum of ``dim`` iid losses (exact on the grid).

    ``pmf[k]`` is P0(L_j = (k - K) * step) for k = 0..2K (odd length 2K+1),
    each loss already rounded up to the grid.
    """
    pmf = np.asarray(pmf, dtype=np.float64)
    if pmf.ndim != 1 or pmf.size % 2 != 1:
        raise ValueError(f"pmf must be 1-d of odd length (a grid symmetric about 0), got shape {pmf.shape}")
    if 0.5 * (pmf.size * dim) ** 2 <= _DIRECT_CONVOLUTION_WORK:
        total = pmf
        for _ in range(dim - 1):
            total = np.convolve(total, pmf)
    else:
        total = _convolution_power(pmf, dim)
    centre = (total.size - 1) // 2
    s = step * np.arange(1, total.size - centre)
    tv = float(np.sum(total[centre + 1 :] * -np.expm1(-s)))
    return min(1.0, tv * (1.0 + _FLOAT_SLACK))


@lru_cache(maxsize=256)
def ternary_product_total_variation(epsilon: float, tv: float, dim: int) -> float:
    """Exact TV of a product of ``dim`` iid coordinates whose density ratio takes only
    the values e^{-eps}, 1, e^{eps}, each coordinate having total variation ``tv``.

    With m = P0(L = eps), the ratio constraint forces P1(L = eps) = e^{-eps} m and,
    L = 0 carrying equal mass under both laws, P0(L = -eps) = e^{-eps} m; then
    TV = m (1 - e^{-eps}) fixes m.  Such a coordinate with a smaller m is a garbling
    of one with a larger m (send +-eps to 0 with a fixed probability), so the
    worst pair of inputs is the one maximising every coordinate's TV.
    """
    m = tv / -math.expm1(-epsilon)
    low = math.exp(-epsilon) * m
    return product_total_variation(np.array([low, max(0.0, 1.0 - m - low), m]), epsilon, dim)
