"""The three-class decomposition bound for a specific randomizer (`BlanketDecomposition`).

**The pair.**  With the decomposition of `shuffledp.params.BlanketDecomposition`
(e = e^eps0, r = beta/(e - 1), common mass a = 1 - (e + 1) r, kappa = a/common_ratio), label
every report: the victim takes label 0, 1 or c with probabilities (e r, r, a) on x0 and
(r, e r, a) on x1; each other user, whatever its input, takes 0, 1, c with probabilities
(r, r, kappa) and otherwise "own".  A report labelled 0, 1 or c is a fresh draw from Q0, Q1
or Qc; an "own" report is drawn from that user's remainder.  Given the counts (h0, h1, hc)
the set of "own" users is uniform among the others, under either input, so the shuffled
output is a post-processing of the counts: D(shuffle) <= D(T0 || T1) for the count laws T_b
(data processing).  The variation-ratio pair of the segmented paper's Theorem 1 differs
from T by treating the victim's common report as invisible; that step is not a
post-processing and fails for k-RR (docs/which-bound.md has the counterexamples).
The bound grows with beta (so with m) and with common_ratio (fewer common reports among
the others), so the largest of each over input pairs is safe (both proved in the docs).

**Computation through the one engine.**  The law of hc is the same under both inputs.
Given hc, the victim is common with probability

    pi(hc) = a B(hc - 1) / (a B(hc - 1) + (1 - a) B(hc)),  B = Binom(n - 1, kappa) pmf,

and (h0, h1) is the engine's two-count pair (`DominatingPair`) with t = n - 1 - hc
others that land on 0 or 1 with probability rho = 2 r/(1 - kappa) each time, and a
victim whose message is (0, 1) w.p. (e, 1)/(e + 1) when it is not common and one
more such trial when it is:

    w_same = (1 - pi) e/(e + 1) + pi rho/2,  w_other = (1 - pi)/(e + 1) + pi rho/2,
    w_none = pi (1 - rho).

So D(T0 || T1) = sum_hc P(hc) D(pair(pi(hc), t(hc))).  The pair's divergence falls as t
grows (one more independent trial is a post-processing) and as pi grows (a mixture with a
message that is the same under both inputs); pi rises with hc.  Blocks of hc values
[h_a, h_b] are therefore bounded above by the pair at (pi(h_a), n - 1 - h_b) and below
by the pair at (pi(h_b), n - 1 - h_a); blocks of width 1 are exact.  The mass of hc
outside its window is added to the upper bound.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats

from shuffledp._util.validation import check_nonnegative, check_probability, check_rtol
from shuffledp.accounting._checks import check_n_delta
from shuffledp.accounting._count_law import bernstein_radius
from shuffledp.accounting._rounding import EPS_CEILING, tail_budget
from shuffledp.accounting.dominating_pair import (
    DominatingPair,
    PairDivergence,
    _CloneMixture,
    infinite_divergence,
    solve_epsilon,
)
from shuffledp.errors import PrivacyParameterError
from shuffledp.params import BlanketDecomposition, PoissonReport

#: Most blocks of common counts per divergence (each block is one engine pair).
MAX_COMMON_BLOCKS = 256
#: A block of common counts may span this fraction of the fewest non-common others t (its upper end moves t,
#: and pi, by about that fraction, and epsilon by about half of it; width 1, exact, when t is below 1,000);
#: the coarser fraction applies from _COARSE_FROM others on, where the window holds hundreds of counts.
_COMMON_BLOCK_RTOL, _COARSE_BLOCK_RTOL, _COARSE_FROM = 1e-3, 5e-3, 2_000
#: Most blocks of totals in each block's pair (the engine's blocking is certified either way).
_PAIR_BLOCKS = 1_000
#: Mass below which a row of the merged blocks is dropped (and charged to the upper bound's tail).
_NEGLIGIBLE = 1e-300
#: Relative safety factor on pi (the pair's divergence falls as pi grows: the upper bound takes pi smaller).
_PI_SLACK = 1e-12


def _check(params: object) -> BlanketDecomposition | PoissonReport:
    if not isinstance(params, (BlanketDecomposition, PoissonReport)):
        raise PrivacyParameterError(
            f"params must be a BlanketDecomposition or a PoissonReport, got {type(params).__name__}"
        )
    return params


@dataclass(frozen=True)
class _Labels:
    """The label probabilities of the three-class pair (module docstring).

    The victim: common with probability ``common``; otherwise informative with probability
    ``informative`` (then label 0 w.p. ``same``, 1 w.p. ``other``) or silent (no message).
    Each other user: label 0 and label 1 with probability ``g`` each, common with ``kappa``.
    """

    same: float
    other: float
    common: float
    informative: float
    g: float
    kappa: float
    cap: float

    @classmethod
    def of(cls, params: BlanketDecomposition | PoissonReport, gamma: float) -> _Labels:
        if isinstance(params, PoissonReport):
            # the victim's item w.p. lam, else nothing; a used blanket slot lands on each item w.p. 1/d
            d = params.d
            return cls(1.0, 0.0, 0.0, params.lam, gamma / d, gamma * (d - 2) / d, math.inf)
        e = math.exp(params.eps0)
        r = params.beta / math.expm1(params.eps0)
        a = params.common_mass
        return cls(
            e / (e + 1.0),
            1.0 / (e + 1.0),
            a,
            1.0,
            gamma * r,
            gamma * a / params.common_ratio,
            math.nextafter(params.eps0, math.inf),
        )


def _common_window(trials: int, kappa: float, tail: float) -> tuple[int, int, float]:
    """[lo, hi] of Binom(trials, kappa) and the certified mass outside it (<= about ``tail``)."""
    if trials == 0 or kappa <= 0.0:
        return 0, 0, 0.0
    if kappa >= 1.0:
        return trials, trials, 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo = stats.binom.ppf(tail / 2.0, trials, kappa)
        hi = stats.binom.ppf(tail / 2.0, trials, 1.0 - kappa)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        # scipy's quantile gives up near 2^52 trials: Bernstein's window, whose outside mass is certified
        radius = float(bernstein_radius(trials * kappa * (1.0 - kappa), tail))
        mean = trials * kappa
        return max(0, math.floor(mean - radius)), min(trials, math.ceil(mean + radius)), tail * (1.0 + 1e-9)
    lo, hi = int(lo), trials - int(hi)
    lo, hi = max(0, min(lo, trials)), max(0, min(max(hi, lo), trials))
    step = 1
    while lo > 0 and stats.binom.cdf(lo - 1, trials, kappa) > tail / 2.0:
        lo, step = max(0, lo - step), 2 * step
    step = 1
    while hi < trials and stats.binom.sf(hi, trials, kappa) > tail / 2.0:
        hi, step = min(trials, hi + step), 2 * step
    outside = (stats.binom.cdf(lo - 1, trials, kappa) if lo > 0 else 0.0) + (
        stats.binom.sf(hi, trials, kappa) if hi < trials else 0.0
    )
    return lo, hi, float(outside) * (1.0 + 1e-9) + 1e-300


class BlanketDivergence:
    """Certified (lower, upper) bounds on D_{e^eps}(T0 || T1) of the three-class pair (module docstring).

    Parameters
    ----------
    params : BlanketDecomposition
    n : int, in [1, 2^53]
        Users, the victim included.
    tail : float, in (0, 1)
        Mass that may be left out (added to the upper bound).
    gamma : float, in [0, 1]
        Probability that each other user takes part (segmented paper Theorem 2).

    Examples
    --------
    >>> from shuffledp.params import BlanketDecomposition, PoissonReport
    >>> div = BlanketDivergence(BlanketDecomposition(eps0=1.0, beta=0.3, common_ratio=1.0), 1_000, 1e-15)
    >>> lo, hi = div(0.1)
    >>> 0.0 < lo <= hi < 1.0
    True
    """

    def __init__(self, params: BlanketDecomposition | PoissonReport, n: int, tail: float, gamma: float = 1.0) -> None:
        self.params = params = _check(params)
        lab = _Labels.of(params, gamma)
        a, kappa = lab.common, lab.kappa
        rho = min(1.0, 2.0 * lab.g / (1.0 - kappa)) if kappa < 1.0 else 1.0
        self.cap = lab.cap
        self.rate = 2.0 * lab.g + kappa  # others' chance of a label that counts
        self.diff = lab.informative * (lab.same - lab.other)
        trials = n - 1
        lo, hi, self.tail = _common_window(trials, kappa, tail / 2.0)
        h_lo, h_hi = lo, hi + (1 if a > 0.0 else 0)  # the victim may add one common report
        fewest_others = max(0, trials - h_hi)
        rtol = _COARSE_BLOCK_RTOL if fewest_others >= _COARSE_FROM else _COMMON_BLOCK_RTOL
        width = max(1, math.ceil((h_hi - h_lo + 1) / MAX_COMMON_BLOCKS), math.floor(rtol * fewest_others))
        starts = np.arange(h_lo, h_hi + 1, width)
        ends = np.minimum(starts + width - 1, h_hi)
        self.exact = width == 1
        weights, errors = self._block_weights(starts, ends, trials, kappa, a)
        self._rho, self._labels, self._block_tail = rho, lab, tail / (2.0 * len(starts))
        self._specs: dict[bool, list[tuple[float, float, int]]] = {True: [], False: []}  # (weight, pi, t)
        for h_a, h_b, w, err in zip(starts.tolist(), ends.tolist(), weights, errors):
            # the upper representative: pi at the block's low end, the fewest others; the lower one the reverse
            self._specs[True].append((w + err, self._pi(h_a, trials, kappa, a) * (1.0 - _PI_SLACK), trials - h_b))
            pi_hi = min(1.0, self._pi(h_b, trials, kappa, a) * (1.0 + _PI_SLACK))
            self._specs[False].append((max(0.0, w - err), pi_hi, trials - h_a))
        self._upper = self._blocks(upper=True)
        self._merged_upper = _merge(self._upper, upper=True)
        self._merged_lower: PairDivergence | None | bool = False  # built on the first `lower` call
        # the stronger-clone pair (m = 1) bounds the same release (docs/which-bound.md); where the blocks'
        # slack would put the specific bound above it, the smaller of the two is kept
        self._generic = None
        if isinstance(params, BlanketDecomposition):
            e = math.exp(params.eps0)
            generic = DominatingPair(
                lab.same, lab.other, 0.0, self.diff, params.eps0, min(1.0, 2.0 * gamma / (e + 1.0)), trials
            )
            self._generic = PairDivergence(generic, tail)

    def _blocks(self, upper: bool) -> list[tuple[float, PairDivergence]]:
        """(mass, engine divergence) of each block's representative pair."""
        lab, rho, out = self._labels, self._rho, []
        for weight, pi, t in self._specs[upper]:
            if pi >= 1.0 or weight <= 0.0:
                continue  # the victim is surely common: both inputs give the same counts
            told = (1.0 - pi) * lab.informative  # the victim's message is on label 0 or 1
            w_same = told * lab.same + 0.5 * pi * rho
            w_other = told * lab.other + 0.5 * pi * rho
            w_diff = told * (lab.same - lab.other)
            log_p = math.log1p(w_diff / w_other) if w_other > 0.0 else math.inf
            pair = DominatingPair(w_same, w_other, max(0.0, 1.0 - w_same - w_other), w_diff, log_p, rho, max(t, 0))
            out.append((weight, PairDivergence(pair, self._block_tail, _PAIR_BLOCKS)))
        return out

    @property
    def upper_blocks(self) -> list[tuple[float, PairDivergence]]:
        """(mass, divergence) of each block's upper representative: a mixture that dominates the pair."""
        return list(self._upper)

    @staticmethod
    def _pi(h: int, trials: int, kappa: float, a: float) -> float:
        """Probability that the victim's report is common given hc = h common reports in all."""
        if a <= 0.0 or h <= 0:
            return 0.0
        if h > trials or a >= 1.0 or kappa >= 1.0:
            return 1.0
        # B(h - 1)/B(h) = h (1 - kappa) / ((trials - h + 1) kappa)
        ratio = h * (1.0 - kappa) / ((trials - h + 1.0) * kappa)
        return 1.0 / (1.0 + (1.0 - a) / (a * ratio))

    @staticmethod
    def _block_weights(starts: np.ndarray, ends: np.ndarray, trials: int, kappa: float, a: float) -> tuple[list, list]:
        """P[hc in block] = a P[B in block - 1] + (1 - a) P[B in block], with an absolute error bound."""

        def mass(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
            if kappa <= 0.0:
                return ((lo <= 0) & (hi >= 0)).astype(float)
            lo_c, hi_c = np.maximum(lo, 0), np.minimum(hi, trials)
            below = stats.binom.cdf(hi_c, trials, kappa) - stats.binom.cdf(lo_c - 1, trials, kappa)
            above = stats.binom.sf(lo_c - 1, trials, kappa) - stats.binom.sf(hi_c, trials, kappa)
            mid = (lo_c + hi_c) / 2.0 < trials * kappa
            return np.where(hi_c < lo_c, 0.0, np.maximum(np.where(mid, below, above), 0.0))

        w = a * mass(starts - 1, ends - 1) + (1.0 - a) * mass(starts, ends)
        err = 1e-12 * w + 1e-300
        return w.tolist(), err.tolist()

    def upper(self, eps: float) -> float:
        """Certified upper bound on the divergence at ``eps`` (0 beyond eps0)."""
        if eps >= self.cap:
            return 0.0
        eps = min(eps, EPS_CEILING)
        value = self.tail if self._merged_upper is None else self._merged_upper.upper(eps) * (1.0 + 1e-12) + self.tail
        if self._generic is not None:
            value = min(value, self._generic.upper(eps))
        return min(1.0, value)

    def upper_many(self, eps: np.ndarray) -> np.ndarray:
        """`upper` at every epsilon of an array (the engine's vectorised pass, `PairDivergence.upper_many`).

        Examples
        --------
        >>> from shuffledp.params import BlanketDecomposition
        >>> div = BlanketDivergence(BlanketDecomposition(eps0=1.0, beta=0.3, common_ratio=1.0), 1_000, 1e-15)
        >>> grid = np.array([0.0, 0.1, 2.0])
        >>> bool(np.all(div.upper_many(grid) == [div.upper(e) for e in grid]))
        True
        """
        eps = np.asarray(eps, dtype=np.float64)
        clipped = np.minimum(eps, EPS_CEILING)
        if self._merged_upper is None:
            value = np.full(eps.shape, self.tail)
        else:
            value = self._merged_upper.upper_many(clipped) * (1.0 + 1e-12) + self.tail
        if self._generic is not None:
            value = np.minimum(value, self._generic.upper_many(clipped))
        value = np.minimum(1.0, value)
        value[eps >= self.cap] = 0.0
        return value

    def at_infinity(self) -> float:
        """Upper bound on lim_{eps -> inf} of the divergence (> 0 only when the victim's report can be
        one no other user sends: a `PoissonReport`)."""
        if math.isfinite(self.cap):
            return 0.0
        return min(1.0, sum(w * infinite_divergence(div.pair) for w, div in self._upper) * (1.0 + 1e-12) + self.tail)

    def lower(self, eps: float) -> float:
        """Certified lower bound on the pair's divergence at ``eps`` (not a bound on the mechanism)."""
        if eps >= self.cap or eps > EPS_CEILING:
            return 0.0
        if self._merged_lower is False:
            self._merged_lower = _merge(self._blocks(upper=False), upper=False)
        if self._merged_lower is None:
            return 0.0
        return max(0.0, self._merged_lower.lower(eps) * (1.0 - 1e-12))

    def __call__(self, eps: float) -> tuple[float, float]:
        return self.lower(eps), self.upper(eps)


@dataclass(frozen=True)
class _RowPair:
    """The scalars of `DominatingPair` as one value per row, so the engine's vectorised terms
    evaluate every block of a mixture in one call (numpy broadcasting)."""

    w_same: np.ndarray
    w_other: np.ndarray
    w_diff: np.ndarray
    log_p: np.ndarray
    eps_cap: float


def _merge(blocks: list[tuple[float, PairDivergence]], upper: bool) -> PairDivergence | None:
    """One `PairDivergence` whose rows are every block's rows, weighted by the block's mass.

    The divergence of a mixture whose component is revealed is the weighted sum of the
    components' divergences, which is what summing the weighted rows computes.
    """
    if not blocks:
        return None
    mixes = [div._upper if upper else div._lower for _, div in blocks]
    sizes = [m.clones.size for m in mixes]

    def rows(values) -> np.ndarray:
        return np.concatenate([np.full(size, value) for size, value in zip(sizes, values)])

    pairs = [div.pair for _, div in blocks]
    weights = rows([w for w, _ in blocks])
    weight = weights * np.concatenate([m.weight for m in mixes])
    weight_err = weights * np.concatenate([m.weight_err for m in mixes])
    # rows whose mass is below _NEGLIGIBLE (most of them when the blanket count is nearly certain, e.g.
    # every slot used) are dropped and their mass, at most _NEGLIGIBLE each, charged to the tail
    keep = weight + weight_err > _NEGLIGIBLE
    dropped = float(np.count_nonzero(~keep)) * _NEGLIGIBLE
    mixture = _CloneMixture(
        weight=weight[keep],
        weight_err=weight_err[keep],
        clones=np.concatenate([m.clones for m in mixes])[keep],
        h=np.concatenate([m.h for m in mixes])[keep],
    )
    merged = PairDivergence.__new__(PairDivergence)
    merged.pair = _RowPair(
        rows([p.w_same for p in pairs])[keep],
        rows([p.w_other for p in pairs])[keep],
        rows([p.w_diff for p in pairs])[keep],
        rows([p.log_p for p in pairs])[keep],
        max(p.eps_cap for p in pairs),
    )
    merged._upper = merged._lower = mixture
    merged.tail = sum(w * div.tail for w, div in blocks) + (dropped if upper else 0.0)
    merged.slack = max(div.slack for _, div in blocks)
    merged.exact = all(div.exact for _, div in blocks)
    return merged


def blanket_divergence(
    params: BlanketDecomposition, n: int, eps: float, *, gamma: float = 1.0, tail_mass: float = 1e-18
) -> float:
    """Certified upper bound on delta(eps) of the shuffled release of ``n`` reports (module docstring).

    Parameters
    ----------
    params : BlanketDecomposition
    n : int, in [1, 2^53]
    eps : float, >= 0
    gamma : float, in [0, 1]
    tail_mass : float, in (0, 1)

    Returns
    -------
    float, in [0, 1]

    Examples
    --------
    >>> from shuffledp.params import BlanketDecomposition, PoissonReport
    >>> generic = blanket_divergence(BlanketDecomposition.from_ldp(2.0), 10_000, 0.1)
    >>> round(generic * 1e6, 3)   # the stronger-clone pair
    6.021
    """
    n, _ = check_n_delta(n, 0.5)
    eps = check_nonnegative(eps, "eps")
    gamma = check_probability(gamma, "gamma", open_low=False, open_high=False)
    return BlanketDivergence(params, n, check_probability(tail_mass, "tail_mass"), gamma).upper(eps)


def blanket_epsilon(
    params: BlanketDecomposition, n: int, delta: float, *, gamma: float = 1.0, rtol: float = 1e-7
) -> float:
    """Upper bound on the shuffled epsilon of ``n`` reports of a randomizer described by ``params``.

    The smallest eps on the grid exp(k log(1 + rtol)) whose certified divergence is <= delta
    (at most eps0, always valid).

    Parameters
    ----------
    params : BlanketDecomposition
    n : int, in [1, 2^53]
    delta : float, in [1e-300, 1)
    gamma : float, in [0, 1]
    rtol : float, in [1e-12, 1e-2]

    Returns
    -------
    float

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    Examples
    --------
    >>> from shuffledp.params import BlanketDecomposition, PoissonReport
    >>> round(blanket_epsilon(BlanketDecomposition.from_ldp(2.0), 10_000, 1e-6), 4)   # stronger clone
    0.1144
    >>> krr = BlanketDecomposition(eps0=2.0, beta=math.expm1(2.0) / (math.exp(2.0) + 9), common_ratio=1.0)
    >>> round(blanket_epsilon(krr, 10_000, 1e-6), 4)   # 10-RR: the common part is fully covered
    0.08
    """
    n, delta = check_n_delta(n, delta)
    gamma = check_probability(gamma, "gamma", open_low=False, open_high=False)
    rtol = check_rtol(rtol)
    params = _check(params)
    div = BlanketDivergence(params, n, tail_budget(delta, rtol), gamma)
    if div.diff <= 0.0:
        return 0.0
    if div.at_infinity() >= delta:
        return math.inf  # the victim's report can be one no blanket explains, with probability >= delta
    guess = 2.0 * div.diff * math.sqrt(2.0 * math.log(1.0 / delta) / max(1.0, div.rate * (n - 1)))
    ceiling = min(div.cap, EPS_CEILING)
    return solve_epsilon(div.upper, delta, ceiling, guess, rtol, True, cap=div.cap)


__all__ = ["BlanketDivergence", "MAX_COMMON_BLOCKS", "blanket_divergence", "blanket_epsilon"]
