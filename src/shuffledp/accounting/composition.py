"""Composition of shuffled rounds: group, basic, advanced and tight (PLD) composition.

* `group_composition` — Lemma 1 of the segmented paper: an (eps, delta)-DP
  protocol is (s eps, s e^(s eps) delta)-indistinguishable on datasets differing in s entries.
* `basic_composition` — k rounds of (eps, delta)-DP are (k eps, k delta)-DP.
* `advanced_composition` — Dwork, Rothblum, Vadhan (FOCS 2010): k rounds of
  (eps, delta)-DP are (sqrt(2 k log(1/delta')) eps + k eps (e^eps - 1), k delta + delta')-DP.
* `shuffle_pld` / `tight_composition_epsilon` — tight composition of k
  shuffled rounds through the privacy-loss distribution (PLD) of the dominating pair
  (P, Q) of the variation-ratio reduction (segmented paper, Theorem 1).  (P, Q)
  dominates every round, so the product pair dominates the k-fold (even adaptive)
  composition; its hockey-stick divergence is computed from the k-fold convolution
  of the PLD (FFT, `scipy.fft`).

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
from dataclasses import dataclass

import numpy as np
from scipy import fft as sp_fft
from scipy import optimize

from shuffledp._util.validation import check_nonnegative, check_positive_int, check_probability
from shuffledp.accounting.bounds import check_n_delta, resolve_params
from shuffledp.accounting.inverse import Family, check_inverse_problem, largest_within, parameters_of
from shuffledp.params import VariationRatio
from shuffledp.accounting.release import release_cells
from shuffledp.errors import OutsideRegimeError, PrivacyParameterError

#: Ways `composed_shuffle_epsilon` composes k rounds.
COMPOSITION_METHODS = ("tight", "advanced", "basic")
#: Mass of the dominating pair that may be neglected when enumerating it (to +infinity).
_ENUM_TAIL = 1e-15
#: Default cap on the bins of one round's PLD, and on those of a k-fold composition
#: (float64 + FFT workspace: about 40 bytes a bin).
_MAX_BINS = 1_000_000
_MAX_COMPOSED_BINS = 2**24
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


# --- classical composition theorems -------------------------------------------------------


def _check_eps_delta(epsilon: float, delta: float) -> tuple[float, float]:
    return check_nonnegative(epsilon, "epsilon"), check_probability(delta, "delta", open_low=False)


def group_composition(epsilon: float, delta: float, size: int) -> tuple[float, float]:
    """Lemma 1 (segmented paper): (eps, delta)-DP gives (s eps, s e^(s eps) delta) for s = ``size`` differing entries.

    Parameters
    ----------
    epsilon : float, >= 0
    delta : float, in [0, 1)
    size : int, >= 1
        Number s of entries in which the datasets differ.

    Returns
    -------
    (float, float)
        (s eps, min(1, s e^(s eps) delta)).

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    segmented-multimessage-shuffle.txt §3.1 Lemma 1.

    Examples
    --------
    >>> eps, delta = group_composition(0.1, 1e-6, 3)
    >>> round(eps, 6), round(delta * 1e6, 4)
    (0.3, 4.0496)
    """
    eps, delta = _check_eps_delta(epsilon, delta)
    size = check_positive_int(size, "size")
    with np.errstate(over="ignore"):
        grown = size * math.exp(min(size * eps, 700.0)) * delta if delta > 0.0 else 0.0
    return size * eps, min(1.0, grown)


def basic_composition(epsilon: float, delta: float, rounds: int) -> tuple[float, float]:
    """Composition of ``rounds`` (eps, delta)-DP mechanisms: (rounds * eps, rounds * delta).

    Parameters
    ----------
    epsilon : float, >= 0
    delta : float, in [0, 1)
    rounds : int, >= 1

    Returns
    -------
    (float, float)
        (k eps, min(1, k delta)).

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    Dwork and Roth, The Algorithmic Foundations of DP, Theorem 3.16 (not in
    /work/shared/papers); pic-usenix25.txt §8 (sequential composition of executions).

    Examples
    --------
    >>> eps, delta = basic_composition(0.1, 1e-6, 10)
    >>> round(eps, 6), round(delta, 12)
    (1.0, 1e-05)
    """
    eps, delta = _check_eps_delta(epsilon, delta)
    k = check_positive_int(rounds, "rounds")
    return k * eps, min(1.0, k * delta)


def advanced_composition(epsilon: float, delta: float, rounds: int, delta_slack: float) -> tuple[float, float]:
    """Advanced composition (Dwork, Rothblum, Vadhan 2010; Theorem 3.20 of Dwork & Roth).

    Returns (sqrt(2 k log(1/delta')) eps + k eps (e^eps - 1), k delta + delta') for k =
    ``rounds`` and the slack delta' = ``delta_slack`` in (0, 1), capped by basic composition's
    k eps (valid at k delta <= k delta + delta').

    Parameters
    ----------
    epsilon : float, >= 0
    delta : float, in [0, 1)
    rounds : int, >= 1
    delta_slack : float, in (0, 1)

    Returns
    -------
    (float, float)
        The composed (epsilon, delta); delta capped at 1.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    Dwork, Rothblum, Vadhan, FOCS 2010; Dwork and Roth, Theorem 3.20 (not in /work/shared/papers).

    Examples
    --------
    >>> eps, delta = advanced_composition(0.01, 1e-7, 1000, 1e-6)
    >>> round(eps, 4), round(delta, 10)
    (1.7628, 0.000101)
    """
    eps, delta = _check_eps_delta(epsilon, delta)
    k = check_positive_int(rounds, "rounds")
    slack = check_probability(delta_slack, "delta_slack")
    with np.errstate(over="ignore"):
        drv = math.sqrt(2.0 * k * math.log(1.0 / slack)) * eps + k * eps * math.expm1(min(eps, 700.0))
    return min(drv, k * eps), min(1.0, k * delta + slack)


# --- privacy-loss distributions -----------------------------------------------------------


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

    def compose(self, k: int) -> "PrivacyLossDistribution":
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
    def compose_all(parts: list[tuple["PrivacyLossDistribution", int]]) -> "PrivacyLossDistribution":
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


def shuffle_pld(
    n: int,
    eps0: float | None = None,
    params: VariationRatio | None = None,
    *,
    step: float | None = None,
    tail_mass: float = 1e-15,
    max_bins: int = _MAX_BINS,
    gamma: float = 1.0,
) -> PrivacyLossDistribution:
    """Pessimistic PLD of one shuffled round (dominating pair of Theorem 1).

    ``step`` is the loss grid; ``None`` picks 1/1000 of the standard deviation of the
    loss (clipped to [1e-8, 1e-3]), so that the rounding bias (at most one step per
    round) stays a small fraction of any composed epsilon, but never so fine that the
    loss range needs more than ``max_bins`` bins.  Every loss is rounded up to the grid;
    losses above the point where at most ``tail_mass`` of P lies are moved to +infinity
    and the lowest losses holding at most ``tail_mass`` are raised (both only increase
    delta).  The pair is symmetric under swapping its coordinates, so D(P||Q) = D(Q||P)
    and this one PLD covers both directions.

    Parameters
    ----------
    n : int, >= 1
    eps0 : float, in [1e-6, 700], optional
    params : VariationRatio, optional
        Exactly one of ``eps0`` / ``params``.
    step : float, in [1e-8, 0.1], or None
    tail_mass : float, in (0, 1)
    max_bins : int, >= 1
    gamma : float, in [0, 1]
        Blanket-slot probability (segmented Theorem 2).

    Returns
    -------
    PrivacyLossDistribution

    Raises
    ------
    PrivacyParameterError
        For an argument out of range, or an explicit ``step`` needing more than ``max_bins`` bins.

    References
    ----------
    segmented-multimessage-shuffle.txt §3.3 Theorem 1; Meiser and Mohammadi, CCS 2018
    (pessimistic discretisation; not in /work/shared/papers).

    Examples
    --------
    >>> pld = shuffle_pld(1000, eps0=1.0)
    >>> round(float(pld.epsilon(1e-6)), 3), pld.inf_mass < 1e-14
    (0.149, True)
    """
    n = check_positive_int(n, "n")
    max_bins = check_positive_int(max_bins, "max_bins")
    vr = resolve_params(eps0, params)
    if step is not None:
        step = float(step)
        if not (math.isfinite(step) and 1e-8 <= step <= 0.1):
            raise PrivacyParameterError(f"step must lie in [1e-8, 0.1], got {step!r}")
    tail_mass = check_probability(tail_mass, "tail_mass")
    loss_parts, mass_parts = [], []
    inf_mass = 0.0
    cells = release_cells(vr, n, gamma, _ENUM_TAIL)
    while True:
        try:
            p_mass, q_mass = next(cells)
        except StopIteration as stop:
            inf_mass += stop.value
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


def tight_composition_epsilon(
    n: int,
    delta: float,
    rounds: int,
    eps0: float | None = None,
    params: VariationRatio | None = None,
    *,
    step: float | None = None,
) -> float:
    """Total epsilon of ``rounds`` shuffled rounds at total ``delta``, by PLD convolution (upper bound).

    Above the exact epsilon of the k-fold product of the dominating pair by at most
    about k * step (see `shuffle_pld` for the default step), and never above
    k * log p (each round's privacy loss is at most log p); for one round without an
    explicit ``step``, the variation-ratio bound of the round itself.

    Parameters
    ----------
    n : int, in [1, 2^53]
    delta : float, in [1e-300, 1)
    rounds : int, >= 1
    eps0 : float, in [1e-6, 700], optional
    params : VariationRatio, optional
        Exactly one of ``eps0`` / ``params``.
    step : float, in [1e-8, 0.1], or None

    Returns
    -------
    float

    Raises
    ------
    CompositionError
        When the PLD certifies nothing: its FFT round-off allowance or the mass it puts at
        loss +infinity reaches ``delta`` (nearly deterministic losses, e.g. eps0 >= 12 with
        n = 10^4 and 80 rounds; delta below ~1e-11), or more than 16,777 rounds (memory).
        `best_composed_epsilon` then picks another method.
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    segmented-multimessage-shuffle.txt §3.3 Theorem 1; pic-usenix25.txt §8 (k executions).

    Examples
    --------
    >>> round(tight_composition_epsilon(1000, 1e-6, 3, eps0=1.0), 3)
    0.267
    """
    from shuffledp.accounting.accountants import PLDAccountant
    from shuffledp.accounting.events import ShuffleEvent

    n, delta = check_n_delta(n, delta)
    k = check_positive_int(rounds, "rounds")
    return PLDAccountant(step).compose(ShuffleEvent(resolve_params(eps0, params), n), k).get_epsilon(delta)


@dataclass(frozen=True)
class ComposedBound:
    """The best composed epsilon, the method that gave it, and what every method gave.

    Parameters
    ----------
    epsilon : float
    method : str
        One of `COMPOSITION_METHODS`.
    candidates : dict of str to float
        Each method's epsilon (``math.inf`` where it certified nothing).
    reasons : dict of str to str
        Why, for those methods.

    Examples
    --------
    >>> ComposedBound(0.5, "basic", {"basic": 0.5}, {}).method
    'basic'
    """

    epsilon: float
    method: str
    candidates: dict[str, float]
    reasons: dict[str, str]


def composed_shuffle_epsilon(
    n: int,
    delta: float,
    rounds: int,
    eps0: float | None = None,
    params: VariationRatio | None = None,
    *,
    method: str = "tight",
    per_round_method: str = "variation-ratio",
    step: float | None = None,
) -> float:
    """Total epsilon of ``rounds`` shuffled rounds at total ``delta`` by ``method``.

    * ``"tight"``: `tight_composition_epsilon`;
    * ``"basic"``: k times the per-round bound at delta / k;
    * ``"advanced"``: `advanced_composition` with the split of delta into k per-round
      deltas and the slack delta' chosen by a bounded scalar search (any split is valid),
      capped by basic composition;
    * ``"best"``: the smallest of the three (`best_composed_epsilon` also says which).

    Per-round bounds come from `shuffle_epsilon`
    with ``per_round_method``.

    Parameters
    ----------
    n : int, in [1, 2^53]
    delta : float, in [1e-300, 1)
    rounds : int, >= 1
    eps0 : float, in [1e-6, 700], optional
    params : VariationRatio, optional
        Exactly one of ``eps0`` / ``params``.
    method : {"tight", "advanced", "basic", "best"}
    per_round_method : str
        A registered upper bound.
    step : float, in [1e-8, 0.1], or None
        Loss grid of the tight method.

    Returns
    -------
    float

    Raises
    ------
    CompositionError
        When the method certifies nothing (for "best": when none does).
    PrivacyParameterError
        For an argument out of range or an unknown method.

    References
    ----------
    pic-usenix25.txt §8 (k executions with fresh keys compose sequentially).

    Examples
    --------
    >>> round(composed_shuffle_epsilon(10_000, 1e-6, 10, eps0=2.0, method="basic"), 4)
    1.3098
    """
    n, delta = check_n_delta(n, delta)
    k = check_positive_int(rounds, "rounds")
    if method == "best":
        return best_composed_epsilon(n, delta, k, eps0, params, per_round_method=per_round_method, step=step).epsilon
    if method == "tight":
        return tight_composition_epsilon(n, delta, k, eps0, params, step=step)
    if method not in COMPOSITION_METHODS:
        allowed = ", ".join((*COMPOSITION_METHODS, "best"))
        raise PrivacyParameterError(f"unknown composition method {method!r}; use one of {allowed}")
    basic = _basic(n, delta, k, eps0, params, per_round_method)
    return basic if method == "basic" else _advanced(n, delta, k, eps0, params, per_round_method, basic)


def _basic(n: int, delta: float, k: int, eps0, params, per_round_method: str) -> float:
    """k times the per-round bound at delta / k; CompositionError if that bound is infinite."""
    from shuffledp.accounting.bounds import shuffle_epsilon

    per_round = shuffle_epsilon(n, delta / k, eps0, params, method=per_round_method)
    if not math.isfinite(per_round):
        raise CompositionError(
            f"basic and advanced composition certify nothing: the per-round bound ({per_round_method}) is infinite at "
            f"n={n}, delta/rounds={delta / k:g}; use a larger n or delta, or another per_round_method"
        )
    return basic_composition(per_round, delta / k, k)[0]


def _advanced(n: int, delta: float, k: int, eps0, params, per_round_method: str, basic: float) -> float:
    """Advanced composition over a searched split of delta, capped by ``basic`` (basic composition's value)."""
    from shuffledp.accounting.bounds import shuffle_epsilon

    def advanced(frac: float) -> float:
        per_round = (1.0 - frac) * delta / k
        eps = shuffle_epsilon(n, per_round, eps0, params, method=per_round_method)
        return advanced_composition(eps, per_round, k, frac * delta)[0] if math.isfinite(eps) else math.inf

    # Every split is valid, so a near-optimal one found by bounded Brent search is still an upper bound.
    found = optimize.minimize_scalar(advanced, bounds=(0.01, 0.99), method="bounded", options={"xatol": 1e-3})
    return min(float(found.fun), advanced(0.5), basic)


def best_composed_epsilon(
    n: int,
    delta: float,
    rounds: int,
    eps0: float | None = None,
    params: VariationRatio | None = None,
    *,
    per_round_method: str = "variation-ratio",
    step: float | None = None,
) -> ComposedBound:
    """The smallest valid composed epsilon among tight, advanced and basic, and which method gave it.

    Every method is a valid upper bound, so their minimum is one too; a method that
    certifies nothing is listed with ``math.inf`` and its reason.

    Parameters
    ----------
    n, delta, rounds, eps0, params, per_round_method, step
        As in `composed_shuffle_epsilon`.

    Returns
    -------
    ComposedBound

    Raises
    ------
    CompositionError
        Only when no method certifies a finite epsilon.
    PrivacyParameterError
        For an argument out of range.

    Examples
    --------
    >>> best = best_composed_epsilon(1000, 1e-6, 3, eps0=1.0)
    >>> best.method, round(best.epsilon, 3), best.candidates["basic"] >= best.epsilon
    ('tight', 0.267, True)
    """
    candidates: dict[str, float] = {}
    reasons: dict[str, str] = {}
    n, delta = check_n_delta(n, delta)
    k = check_positive_int(rounds, "rounds")
    try:
        candidates["tight"] = tight_composition_epsilon(n, delta, k, eps0, params, step=step)
    except CompositionError as exc:
        candidates["tight"], reasons["tight"] = math.inf, str(exc)
    try:  # advanced is capped by basic, so one per-round bound serves both
        basic = _basic(n, delta, k, eps0, params, per_round_method)
        candidates["advanced"] = _advanced(n, delta, k, eps0, params, per_round_method, basic)
        candidates["basic"] = basic
    except CompositionError as exc:
        for name in ("advanced", "basic"):
            candidates[name], reasons[name] = math.inf, str(exc)
    best = min(candidates, key=lambda name: candidates[name])
    if not math.isfinite(candidates[best]):
        raise CompositionError("no composition method certifies a finite epsilon: " + "; ".join(reasons.values()))
    return ComposedBound(candidates[best], best, candidates, reasons)


def composed_local_epsilon(
    target_epsilon: float,
    n: int,
    delta: float,
    rounds: int,
    family: Family = "generic",
    *,
    method: str = "tight",
    min_epsilon: float = 1e-3,
    max_epsilon: float = 20.0,
) -> float:
    """Largest per-round local eps0 whose composed shuffled rounds stay within (target, delta).

    The inverse of `composed_shuffle_epsilon` over ``rounds`` rounds for a randomizer
    ``family`` (as in `local_epsilon`); the result is
    verified to compose to at most ``target_epsilon``.  PIC §8: each round uses fresh
    one-time keys, so rounds compose as independent shuffled mechanisms.

    Parameters
    ----------
    target_epsilon : float, > 0
    n : int, in [1, 2^53]
    delta : float, in [1e-300, 1)
    rounds : int, >= 1
    family : "generic" or callable
        Randomizer family eps0 -> LocalRandomizer (or VariationRatio).
    method : {"tight", "advanced", "basic", "best"}
    min_epsilon, max_epsilon : float, 0 < min_epsilon < max_epsilon
        Search bracket for eps0 (within [1e-6, 700]).

    Returns
    -------
    float
        ``max_epsilon`` when even it meets the target.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range, an unknown method, or when even ``min_epsilon``
        misses the target.

    References
    ----------
    pic-usenix25.txt §8 ("Multiple executions and reuse keys").

    Examples
    --------
    >>> eps0 = composed_local_epsilon(0.5, 1000, 1e-6, 3, method="basic")
    >>> round(eps0, 3), composed_shuffle_epsilon(1000, 1e-6, 3, eps0=eps0, method="basic") <= 0.5
    (1.037, True)
    """
    target, n, delta, lo, hi = check_inverse_problem(target_epsilon, n, delta, min_epsilon, max_epsilon)
    k = check_positive_int(rounds, "rounds")
    if method not in (*COMPOSITION_METHODS, "best"):
        allowed = ", ".join((*COMPOSITION_METHODS, "best"))
        raise PrivacyParameterError(f"unknown composition method {method!r}; use one of {allowed}")
    from shuffledp.accounting.accountants import PLDAccountant, VariationRatioAccountant, calibrate
    from shuffledp.accounting.events import SelfComposedEvent, ShuffleEvent

    params_of = parameters_of(family)
    context = f"over rounds={k} of n={n} reports at delta={delta:g}"
    if method in ("tight", "basic"):  # PLD / basic composition are accountants: the one calibrate
        accountant = PLDAccountant() if method == "tight" else VariationRatioAccountant()
        make = lambda eps0: SelfComposedEvent(ShuffleEvent(params_of(eps0), n), k)  # noqa: E731
        return calibrate(make, target, delta, accountant=accountant, bracket=(lo, hi), context=context)

    def composed(eps0: float) -> float:
        try:
            return composed_shuffle_epsilon(n, delta, k, params=params_of(eps0), method=method)
        except CompositionError:
            return math.inf  # this eps0 certifies nothing: too large

    return largest_within(composed, target, lo, hi, context=context)


__all__ = [
    "COMPOSITION_METHODS",
    "ComposedBound",
    "CompositionError",
    "best_composed_epsilon",
    "PrivacyLossDistribution",
    "advanced_composition",
    "basic_composition",
    "composed_local_epsilon",
    "composed_shuffle_epsilon",
    "group_composition",
    "shuffle_pld",
    "tight_composition_epsilon",
]
