"""The privacy-loss distribution (PLD) engine: tight composition of shuffled rounds.

`shuffle_pld` builds the PLD of one shuffled round's dominating pair (P, Q) of the
variation-ratio reduction (segmented paper, Theorem 1).  (P, Q) dominates every round,
so the product pair dominates the k-fold (even adaptive) composition; its hockey-stick
divergence is computed from the k-fold convolution of the PLD (FFT, `scipy.fft`).
The accountants (`shuffledp.accounting.pld_accountant.PLDAccountant`) compose rounds with it;
the user-facing functions are in `shuffledp.accounting.composition`.

**The PLD of (P, Q).**  Outcomes are (x, s - x) with s the total count.  Both pmfs are
Binom(s, 1/2)(x) times a function linear in x (the mixture weights come from
`DominatingPair`, whose
`pair_cells` enumerates them),
so the privacy loss log(P/Q) is a ratio of two linear functions.  Totals s and first
coordinates x are enumerated where their mass matters; the neglected mass (Bernstein's
bound for the count, Hoeffding's for x given the total) is put on the loss +infinity.

**Pessimistic discretisation** (Meiser & Mohammadi, CCS 2018; Koskela et al. 2021):
every loss is rounded *up* to the grid step * Z; losses above a cut-off carrying a
mass budget go to +infinity, losses below a low cut-off are raised to it.  With
delta(eps) = E_P[(1 - e^(eps - L))_+] + P[L = inf] non-decreasing in L, replacing each
round's loss by a larger one can only increase the composed delta: the result is an
upper bound, above the exact one by at most about k * step in epsilon.  The FFT
result is clipped at zero and charged an explicit round-off allowance
(`_fft_roundoff`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import fft as sp_fft

from shuffledp._util.validation import check_positive_int, check_probability
from shuffledp.accounting.interop import from_dp_accounting, to_dp_accounting
from shuffledp.errors import OutsideRegimeError, PrivacyParameterError

#: Mass of the dominating pair that may be neglected when enumerating it (to +infinity).
ENUM_TAIL = 1e-15
#: Default cap on the bins of one round's PLD, and on those of a k-fold composition
#: (float64 + FFT workspace: about 40 bytes a bin).
MAX_BINS = 1_000_000
MAX_COMPOSED_BINS = 2**24
#: Number of (s, x) cells evaluated per chunk (memory bound).
_CHUNK_CELLS = 2_000_000
_ULP = 2.0**-52


def _fft_roundoff(modulus: np.ndarray, k: int, size: int) -> float:
    """Bound on the summed absolute error of an FFT k-fold convolution of a pmf.

    Standard FFT round-off analysis: each computed frequency X_f of a length-N transform
    of a pmf is off by at most c u log2(N) (u the unit round-off, c = 4 here, sum of the
    pmf <= 1); raising to the k-th power turns this into k |X_f|^(k-1) c u log2(N), the
    power itself adds k |X_f|^k u, and the inverse transform adds c u log2(N) |X_f|^k.
    Each output cell is 1/N times a sum over all N frequencies, so the errors summed
    over the N cells are bounded by the sum over frequencies below (``modulus`` holds
    the rfft half spectrum; the other half mirrors it).
    """
    c_log = 4.0 * _ULP * math.log2(size)
    powered = modulus ** (k - 1)
    per_freq = c_log * k * powered + (k * _ULP + c_log) * powered * modulus
    return 2.0 * float(np.sum(per_freq))


@dataclass(frozen=True)
class PrivacyLossDistribution:
    """A discretised privacy-loss distribution under P: mass ``pmf[i]`` at loss (offset + i) * step.

    The privacy loss is L = log(P(z)/Q(z)) for z ~ P; the hockey-stick divergence is
    D_{e^eps}(P || Q) = E_P[(1 - e^(eps - L))_+] + P[L = inf], and composing mechanisms
    adds their losses (convolves their PLDs).

    Parameters
    ----------
    step : float, > 0
        Spacing of the loss grid.
    offset : int
        Grid index of ``pmf[0]``.
    pmf : ndarray of float, >= 0
        Masses of the finite losses.
    inf_mass : float, in [0, 1]
        Mass at loss +infinity.
    roundoff : float, >= 0
        Absolute error allowance on the total of the finite masses (FFT round-off),
        charged to delta.

    References
    ----------
    Meiser and Mohammadi, CCS 2018; Koskela et al. 2021 (not in /work/shared/papers).

    Examples
    --------
    >>> import numpy as np
    >>> pld = PrivacyLossDistribution(step=0.5, offset=-1, pmf=np.array([0.25, 0.25, 0.5]), inf_mass=0.0)
    >>> pld.losses
    array([-0.5,  0. ,  0.5])
    >>> round(pld.delta(0.0), 4)
    0.1967
    """

    step: float
    offset: int
    pmf: np.ndarray
    inf_mass: float
    roundoff: float = 0.0

    @property
    def losses(self) -> np.ndarray:
        """The loss of each ``pmf`` cell, (offset + i) * step.

        Examples
        --------
        >>> import numpy as np
        >>> PrivacyLossDistribution(step=0.25, offset=2, pmf=np.array([0.5, 0.5]), inf_mass=0.0).losses
        array([0.5 , 0.75])
        """
        return (self.offset + np.arange(self.pmf.size)) * self.step

    def compose(self, k: int) -> PrivacyLossDistribution:
        """The PLD of the k-fold product pair (k-fold convolution by FFT).

        The finite masses are clipped at 0; the FFT's round-off is bounded by
        ``_fft_roundoff`` and added to ``roundoff``; the mass at +infinity becomes
        1 - (1 - inf_mass)^k.

        Parameters
        ----------
        k : int, >= 1

        Returns
        -------
        PrivacyLossDistribution
            ``self`` when k = 1.

        Raises
        ------
        PrivacyParameterError
            If ``k`` < 1.

        Examples
        --------
        >>> import numpy as np
        >>> pld = PrivacyLossDistribution(step=0.5, offset=-1, pmf=np.array([0.25, 0.25, 0.5]), inf_mass=0.0)
        >>> twice = pld.compose(2)
        >>> twice.offset, np.round(twice.pmf, 6)
        (-2, array([0.0625, 0.125 , 0.3125, 0.25  , 0.25  ]))
        """
        k = check_positive_int(k, "k")
        if k == 1:
            return self
        length = k * (self.pmf.size - 1) + 1
        size = sp_fft.next_fast_len(length, real=True)
        spectrum = sp_fft.rfft(self.pmf, size)
        out = sp_fft.irfft(spectrum**k, size)[:length]
        allowance = _fft_roundoff(np.abs(spectrum), k, size)
        np.maximum(out, 0.0, out=out)
        return PrivacyLossDistribution(
            step=self.step,
            offset=k * self.offset,
            pmf=out,
            inf_mass=1.0 - (1.0 - self.inf_mass) ** k,
            roundoff=k * self.roundoff + allowance,
        )

    @staticmethod
    def compose_all(parts: list[tuple[PrivacyLossDistribution, int]]) -> PrivacyLossDistribution:
        """The PLD of the product of ``count`` copies of each PLD (one loss grid), by one FFT.

        Round-off: the product of the spectra is charged, per frequency, the sum over
        factors of (count * c u log2 N) times the product of the other moduli, plus the
        powers' and the inverse transform's own errors (`_fft_roundoff` for one factor).

        Parameters
        ----------
        parts : list of (PrivacyLossDistribution, int)
            PLDs sharing one ``step``, with their counts (>= 1).

        Returns
        -------
        PrivacyLossDistribution

        Raises
        ------
        PrivacyParameterError
            If the PLDs do not share one loss step.

        Examples
        --------
        >>> import numpy as np
        >>> a = PrivacyLossDistribution(step=0.5, offset=-1, pmf=np.array([0.25, 0.25, 0.5]), inf_mass=0.0)
        >>> b = PrivacyLossDistribution(step=0.5, offset=0, pmf=np.array([0.5, 0.5]), inf_mass=0.0)
        >>> ab = PrivacyLossDistribution.compose_all([(a, 1), (b, 1)])
        >>> ab.offset, np.round(ab.pmf, 6)
        (-1, array([0.125, 0.25 , 0.375, 0.25 ]))
        """
        step = parts[0][0].step
        if any(pld.step != step for pld, _ in parts):
            raise PrivacyParameterError("PLDs composed together must share one loss step")
        length = sum(c * (pld.pmf.size - 1) for pld, c in parts) + 1
        size = sp_fft.next_fast_len(length, real=True)
        spectra = [(sp_fft.rfft(pld.pmf, size), c) for pld, c in parts]
        product = np.ones(size // 2 + 1, dtype=np.complex128)
        for spectrum, c in spectra:
            product *= spectrum**c
        out = sp_fft.irfft(product, size)[:length]
        c_log = 4.0 * _ULP * math.log2(size)
        modulus = np.abs(product)
        total_count = sum(c for _, c in spectra)
        allowance = (total_count * _ULP + c_log) * modulus
        for i, (spectrum, c) in enumerate(spectra):
            others = np.abs(spectrum) ** (c - 1)
            for j, (other, c_other) in enumerate(spectra):
                if j != i:
                    others = others * np.abs(other) ** c_other
            allowance = allowance + c_log * c * others
        np.maximum(out, 0.0, out=out)
        survive = math.prod((1.0 - pld.inf_mass) ** c for pld, c in parts)
        return PrivacyLossDistribution(
            step=step,
            offset=sum(c * pld.offset for pld, c in parts),
            pmf=out,
            inf_mass=1.0 - survive,
            roundoff=sum(c * pld.roundoff for pld, c in parts) + 2.0 * float(np.sum(allowance)),
        )

    def to_dp_accounting(self, value_discretization_interval: float | None = None, *, add: Any = None) -> Any:
        """This PLD as a symmetric ``dp_accounting`` PrivacyLossDistribution (needs ``shuffledp[interop]``).

        Pessimistic: ``roundoff`` goes to the mass at infinity; another ``value_discretization_interval`` rounds
        every loss up onto it.  ``add`` (ours) makes it asymmetric, this PLD then being the "remove" direction.
        See `shuffledp.accounting.interop.to_dp_accounting` (directions, relations, an example).

        Raises
        ------
        OptionalDependencyError
            If dp-accounting is not installed.
        """
        return to_dp_accounting(self, value_discretization_interval, add=add)

    @classmethod
    def from_dp_accounting(
        cls, pld: Any, *, direction: str | None = None, step: float | None = None
    ) -> PrivacyLossDistribution:
        """A (pessimistic) ``dp_accounting`` PrivacyLossDistribution as ours (needs ``shuffledp[interop]``).

        ``direction`` ("remove" or "add") is required when theirs is asymmetric; ``step`` re-grids (losses
        rounded up).  See `shuffledp.accounting.interop.from_dp_accounting`.

        Raises
        ------
        OptionalDependencyError
            If dp-accounting is not installed.
        PrivacyParameterError
            For an asymmetric PLD without ``direction``, or an optimistic one.
        """
        return from_dp_accounting(pld, cls, direction=direction, step=step)

    def delta(self, epsilon: float) -> float:
        """Upper bound on D_{e^eps}(P || Q) = E_P[(1 - e^(eps - L))_+] + P[L = inf], plus ``roundoff``.

        Parameters
        ----------
        epsilon : float

        Returns
        -------
        float, in [0, 1]

        Examples
        --------
        >>> import numpy as np
        >>> pld = PrivacyLossDistribution(step=0.5, offset=-1, pmf=np.array([0.25, 0.25, 0.5]), inf_mass=0.01)
        >>> round(pld.delta(0.0), 4), round(pld.delta(0.5), 4)
        (0.2067, 0.01)
        """
        eps = float(epsilon)
        losses = self.losses
        above = losses > eps
        finite = float(np.sum(self.pmf[above] * -np.expm1(eps - losses[above])))
        return min(1.0, finite + self.inf_mass + self.roundoff)

    def epsilon(self, delta: float) -> float:
        """Smallest eps >= 0 with `delta` (eps) <= ``delta`` (rounded up); inf if none.

        Solved exactly on the piecewise form delta(eps) = S1 - e^eps S2 between consecutive
        losses (S1, S2 suffix sums of w_i and w_i e^(-l_i)).

        Parameters
        ----------
        delta : float, in (0, 1)

        Returns
        -------
        float
            ``math.inf`` when ``inf_mass + roundoff`` >= delta.

        Raises
        ------
        PrivacyParameterError
            If ``delta`` is not in (0, 1).

        Examples
        --------
        >>> import numpy as np
        >>> pld = PrivacyLossDistribution(step=0.5, offset=-1, pmf=np.array([0.25, 0.25, 0.5]), inf_mass=0.0)
        >>> eps = pld.epsilon(0.1)
        >>> round(float(eps), 4), pld.delta(eps) <= 0.1
        (0.2769, True)
        """
        delta = check_probability(delta, "delta")
        budget = delta - self.inf_mass - self.roundoff
        if budget <= 0.0:
            return math.inf
        losses = self.losses
        # Suffix sums from the top (small masses first): for eps in [l_{m-1}, l_m),
        # delta_finite(eps) = S1[m] - e^eps S2[m] with S1 = sum_{i>=m} w_i, S2 = sum_{i>=m} w_i e^-l_i;
        # S2 is kept as its logarithm (e^-l underflows and e^eps overflows for losses of hundreds).
        w = self.pmf
        s1 = np.cumsum(w[::-1])[::-1]
        with np.errstate(divide="ignore"):
            log_s2 = np.logaddexp.accumulate((np.log(w) - np.maximum(losses, 0.0))[::-1])[::-1]
        start = int(np.searchsorted(losses, 0.0, side="right"))  # first loss > 0
        if start >= w.size:
            return 0.0
        left = np.concatenate(([0.0], losses[start:]))  # interval ends: 0, l_start, ..., l_last
        # delta_finite at each interval end; it is 0 at the last (largest) loss
        at_end = np.append(s1[start:] - np.exp(left[:-1] + log_s2[start:]), 0.0)
        j = int(np.argmax(at_end <= budget))
        if j == 0:
            return 0.0
        # the root lies in [left[j-1], left[j]], where delta_finite = s1 - e^eps s2 with index start+j-1
        s1m, log_s2m = s1[start + j - 1], log_s2[start + j - 1]
        root = math.log(s1m - budget) - log_s2m if s1m > budget else float(left[j - 1])
        root = min(max(root, float(left[j - 1])), float(left[j]))
        return float(root * (1.0 + 1e-12) + 1e-15)


def pld_from_cells(
    cells: Iterator[tuple[np.ndarray, np.ndarray]], *, step: float | None, tail_mass: float, max_bins: int
) -> PrivacyLossDistribution:
    """Pessimistic PLD from (P-mass, Q-mass) cells of a dominating pair (the generator returns the neglected P-mass).

    ``step`` is the loss grid; ``None`` picks 1/1000 of the standard deviation of the loss
    (clipped to [1e-8, 1e-3]), never so fine that the loss range needs more than ``max_bins``
    bins.  Every loss is rounded up to the grid; losses above the point where at most
    ``tail_mass`` of P lies are moved to +infinity and the lowest losses holding at most
    ``tail_mass`` are raised (both only increase delta).

    Parameters
    ----------
    cells : iterator of (ndarray, ndarray)
    step : float or None
    tail_mass : float, in (0, 1)
    max_bins : int, >= 1

    Returns
    -------
    PrivacyLossDistribution

    Raises
    ------
    PrivacyParameterError
        For an explicit ``step`` needing more than ``max_bins`` bins.

    Examples
    --------
    >>> cells = iter([(np.array([0.75, 0.25]), np.array([0.25, 0.75]))])
    >>> round(pld_from_cells(cells, step=0.01, tail_mass=1e-15, max_bins=1000).delta(0.0), 2)
    0.5
    """
    loss_parts, mass_parts = [], []
    inf_mass = 0.0
    while True:
        try:
            p_mass, q_mass = next(cells)
        except StopIteration as stop:
            inf_mass += stop.value or 0.0
            break
        keep = p_mass > 0.0
        p_mass, q_mass = p_mass[keep], q_mass[keep]
        infinite = q_mass <= 0.0
        inf_mass += float(np.sum(p_mass[infinite]))
        p_mass, q_mass = p_mass[~infinite], q_mass[~infinite]
        loss_parts.append(np.log(p_mass) - np.log(q_mass))
        mass_parts.append(p_mass)
    loss = np.concatenate(loss_parts)
    mass = np.concatenate(mass_parts)
    span = float(loss.max() - loss.min())
    if step is None:
        mean = float(np.sum(mass * loss) / np.sum(mass))
        spread = math.sqrt(float(np.sum(mass * (loss - mean) ** 2) / np.sum(mass)))
        step = max(min(max(spread / 1000.0, 1e-8), 1e-3), span / max_bins)
    elif span / step > max_bins:
        raise PrivacyParameterError(
            f"step={step:g} needs {span / step:.3g} bins for the loss range {span:.4g}; at most max_bins={max_bins} "
            f"are allowed: use step >= {span / max_bins:.3g}"
        )
    idx = np.ceil(loss / step + 1e-9).astype(np.int64)  # rounded up (pessimistic)
    base = int(idx.min())
    hist = np.bincount(idx - base, weights=mass)
    # +infinity for the top bins holding at most tail_mass; the lowest bins holding at
    # most tail_mass are raised to the first remaining bin (never above loss 0)
    above = np.cumsum(hist[::-1])[::-1]  # mass in bins >= j
    top = int(np.argmax(above <= tail_mass)) if above[-1] <= tail_mass else hist.size
    inf_mass += float(above[top]) if top < hist.size else 0.0
    low = min(int(np.argmax(np.cumsum(hist) > tail_mass)), max(0, -base), top - 1)
    pmf = hist[low:top].copy()
    pmf[0] += float(np.sum(hist[:low]))
    cut_lo = base + low
    return PrivacyLossDistribution(step=step, offset=cut_lo, pmf=pmf, inf_mass=min(inf_mass, 1.0))


class CompositionError(OutsideRegimeError):
    """A composition method cannot certify any finite epsilon for the asked (n, delta, rounds).

    A subclass of `OutsideRegimeError` (hence of
    `ShuffleDPError`).

    Examples
    --------
    >>> from shuffledp.errors import ShuffleDPError
    >>> issubclass(CompositionError, ShuffleDPError)
    True
    """


__all__ = [
    "ENUM_TAIL",
    "MAX_BINS",
    "CompositionError",
    "MAX_COMPOSED_BINS",
    "PrivacyLossDistribution",
    "pld_from_cells",
]
