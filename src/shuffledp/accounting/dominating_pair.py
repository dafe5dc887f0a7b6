"""One binomial-divergence engine for every dominating pair of the shuffle model.

Every numerical amplification bound of the package (variation ratio, clones, stronger
clones, the PLD cells of tight composition) dominates the shuffled output of n
randomizers by a pair of two-dimensional counts

    P = (A + D1, C - A + D2),    Q = (A + D2, C - A + D1),

with C ~ Binom(t, rho) blanket messages among the t = n - 1 other users, A | C ~
Binom(C, 1/2), and the victim's indicators (D1, D2) equal to (1, 0), (0, 1), (0, 0)
with probabilities w_same, w_other, w_none (:class:`DominatingPair`):

* variation ratio (segmented paper Theorem 1, Wang et al. VLDB 2024):
  w_same = beta p/(p - 1), w_other = beta/(p - 1), rho = 2 beta p/((p - 1) q);
  p = infinity (Lemma 3): w_same = beta, w_other = 0, rho = 2 beta / q; Theorem 2
  multiplies rho by the slot probability gamma;
* clones (Feldman, McMillan, Talwar FOCS 2021): w_same = e^eps0/(e^eps0 + 1),
  w_other = 1 - w_same, w_none = 0, rho = e^-eps0; stronger clones (SODA 2023):
  rho = 2/(e^eps0 + 1), which is the variation-ratio pair at the generic parameters.

**Decomposition.**  Given the total s = x + y of an outcome, the pair is a *symmetric
clone pair*: with B the Binom(t, rho) pmf, b_c the Binom(c, 1/2) pmf and
h_s = w_none B(s) / (2 B(s - 1)),

    P(x, s - x) = P(s) [alpha_s b_{s-1}(x - 1) + (1 - alpha_s) b_{s-1}(x)],
    Q(x, s - x) = P(s) [(1 - alpha_s) b_{s-1}(x - 1) + alpha_s b_{s-1}(x)],

with P(s) = (w_same + w_other) B(s - 1) + w_none B(s) (the same under P and Q) and
alpha_s = (w_same + h_s)/(w_same + w_other + 2 h_s).  So

    D_{e^eps}(P || Q) = sum_s P(s) K(alpha_s, s - 1, eps),

where K(alpha, c, eps) is the divergence of one message equal to (1, 0) w.p. alpha
(else (0, 1)) plus c fair messages.  Since b_c(u - 1)/b_c(u) increases in u, the
positive part of K sits on u >= u* and (De Moivre, no cancellation of order sqrt(c))

    K = A b_c(u* - 1) - (e^eps - 1) P[Binom(c, 1/2) >= u*],  A = alpha - e^eps (1 - alpha).

**Directed rounding** (rules in :mod:`shuffledp.accounting._rounding`):

* A is computed as (w_same + h) (-expm1(eps - L_s)) with the log-odds
  L_s = log1p((w_same - w_other)/(w_other + h_s)) (= log p exactly when h_s = 0): stable as
  eps approaches log p, where A carries nearly all of the divergence;
* the threshold u* is not trusted to a float floor: K is evaluated at the three integers
  around it and the largest value kept (every u gives a value <= K, the true u* gives K);
* each summed term is charged ``rel_slack`` times its magnitude; mass outside the
  window of C is added (upper) or dropped (lower); float underflow is charged too.

**Scale.**  K is non-increasing in c (one more fair message is post-processing) and
non-decreasing in alpha >= 1/2 (a mixture with a fair coin); alpha_s is non-decreasing
in s (B(s)/B(s-1) decreases).  So for a block of totals [s_a, s_b],
K(alpha_{s_a}, s_b - 1) <= K(alpha_s, s - 1) <= K(alpha_{s_b}, s_a - 1): when the window of
C holds more than ``MAX_BLOCKS`` totals, or E[C] exceeds 10^6, consecutive totals are
grouped into blocks spanning at most 10^-6 E[C] (or the window / MAX_BLOCKS) and the two
ends give certified upper and lower bounds (blocks of width 1 are exact).  The
window has O(sqrt(n log(1/delta))) totals, so n = 10^12 costs as much as n = 10^8.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from shuffledp._util.validation import check_probability
from shuffledp.accounting._binomial import binomial_pmf, binomial_window, half_binomial_pmf, half_binomial_tail
from shuffledp.accounting._checks import check_n
from shuffledp.accounting._rounding import (
    EPS_CEILING,
    LOG_ODDS_SLACK,
    rel_slack,
    tail_budget,
)
from shuffledp.accounting._solve import bracket_root, newton_root, solve_epsilon
from shuffledp.errors import PrivacyParameterError
from shuffledp.params import VariationRatio

#: Below this many blanket trials every count C is summed (no truncation).
_FULL_RANGE = 1_000
#: Most blocks of totals summed per divergence (more totals are grouped, see "Scale").
MAX_BLOCKS = 20_000
#: Blocks may span this fraction of the typical blanket count E[C]: K changes by about
#: that fraction across a block, and Boost's betainc is slow (~0.5 ms) at c ~ 10^11.
_BLOCK_RTOL = 1e-6
#: Blocks of totals in the PLD span this fraction of E[C] (width 1 below E[C] = 10^4: exact cells).
PLD_BLOCK_RTOL = 1e-4
#: Most (epsilon, block) terms evaluated at once by `PairDivergence.upper_many` (memory bound).
_CHUNK_ELEMENTS = 1_000_000
#: Absolute error of a float64 probability that underflowed (half the smallest subnormal, doubled).
_UNDERFLOW = 1e-323
#: Most blocks of the estimate (`PairDivergence.estimate`) that locates the root before the certified search:
#: a quarter of the pair's blocks up to this many (a search costs about one evaluation of the pair's blocks
#: instead of ten; with few blocks of a huge count, Boost's betainc costs ~0.1 ms a block).
_ESTIMATE_BLOCKS = 64
#: A pair searches on its own evaluations when they cost little: fewer blocks than the first number, or than the
#: second with fewer than 10^6 blanket messages expected (Boost's betainc is fast below that).
_ESTIMATE_FROM = (256, 16)
#: Scalar evaluations a `PairDivergence` remembers (a search asks for some epsilons twice).
_REMEMBERED = 16


@dataclass(frozen=True)
class DominatingPair:
    """The pair (P, Q) of the module docstring.

    P = (A + D1, C - A + D2), Q = (A + D2, C - A + D1), C ~ Binom(trials, rho),
    A | C ~ Binom(C, 1/2), (D1, D2) = (1, 0), (0, 1), (0, 0) w.p. w_same, w_other, w_none.

    Parameters
    ----------
    w_same, w_other, w_none : float, in [0, 1], summing to 1
        The victim's message on its own symbol / the other input's symbol / on neither.
    w_diff : float, in [0, 1]
        w_same - w_other, given exactly (beta for the variation ratio, tanh(eps0/2) for clones).
    log_p : float, > 0
        sup log(P/Q) (math.inf for p = infinity).
    rho : float, in [0, 1]
        Probability that one of the ``trials`` blanket slots lands on either symbol.
    trials : int, >= 0
        Blanket slots t = n - 1.

    References
    ----------
    segmented-multimessage-shuffle.txt §3.3 Theorem 1, §5.1.1 Theorem 2, §5.1.2 Lemma 3.

    Examples
    --------
    >>> from shuffledp.params import VariationRatio
    >>> pair = DominatingPair.from_params(VariationRatio.from_ldp(2.0), 10_000)
    >>> round(pair.w_same, 4), round(pair.w_other, 4), round(pair.rho, 4), pair.trials
    (0.8808, 0.1192, 0.2384, 9999)
    """

    w_same: float
    w_other: float
    w_none: float
    w_diff: float
    log_p: float
    rho: float
    trials: int

    @property
    def eps_cap(self) -> float:
        """log p rounded up: P <= p Q pointwise, so log p is always a valid epsilon.

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> pair = DominatingPair.from_params(VariationRatio.from_ldp(2.0), 10_000)
        >>> pair.eps_cap > 2.0
        True
        """
        return math.inf if math.isinf(self.log_p) else math.nextafter(self.log_p, math.inf)

    @classmethod
    def from_params(
        cls, params: VariationRatio, n: int, gamma: float = 1.0, *, attainable: bool = False
    ) -> DominatingPair:
        """Theorem 1 (gamma = 1) / Theorem 2 pair for ``n`` participants.

        w_same = beta p/(p - 1), w_other = beta/(p - 1), rho = gamma 2 beta p/((p - 1) q)
        (p = infinity: w_same = beta, w_other = 0, rho = gamma 2 beta / q).
        ``attainable=True`` caps beta at q - 1 so that actual randomizers realise the
        pair (the lower-bound construction of :mod:`shuffledp.accounting.variation_ratio`).

        Parameters
        ----------
        params : VariationRatio
        n : int, in [1, 2^53]
        gamma : float, in [0, 1]
        attainable : bool

        Returns
        -------
        DominatingPair

        Raises
        ------
        PrivacyParameterError
            For an argument out of range, or (p, beta, q) with 2 beta p/((p - 1) q) > 1.

        References
        ----------
        segmented-multimessage-shuffle.txt §3.3 Theorem 1, §5.1.1 Theorem 2, §5.1.2 Lemma 3.

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> round(DominatingPair.from_params(VariationRatio.from_pq(3.0, 0.4, 3.0), 100, gamma=0.5).rho, 12)
        0.2
        """
        if not isinstance(params, VariationRatio):
            raise PrivacyParameterError(f"params must be a VariationRatio, got {type(params).__name__}")
        n = check_n(n)
        gamma = check_probability(gamma, "gamma", open_low=False, open_high=False)
        p, q = params.p, params.q
        beta = params.beta
        w_same = beta if math.isinf(p) else beta * p / (p - 1.0)
        rho = 2.0 * w_same / q  # q = infinity: blankets never cover the victim
        if rho > 1.0 + 1e-12:
            raise PrivacyParameterError(
                f"inconsistent (p, beta, q) = ({p:g}, {beta:g}, {q:g}): the blanket probability "
                f"2*beta*p/((p-1)*q) = {rho:.6g} exceeds 1; the q-ratio property needs q >= {2.0 * w_same:.6g}"
            )
        if attainable and beta > q - 1.0:
            beta = q - 1.0
            w_same = beta if math.isinf(p) else beta * p / (p - 1.0)
            rho = 2.0 * w_same / q
        w_other = 0.0 if math.isinf(p) else beta / (p - 1.0)
        w_none = max(0.0, 1.0 - w_same - w_other)
        return cls(w_same, w_other, w_none, beta, math.log(p), min(rho, 1.0) * gamma, n - 1)

    @classmethod
    def clones(cls, eps0: float, n: int, *, stronger: bool) -> DominatingPair:
        """Clone pair of generic eps0-LDP randomizers: clone probability e^-eps0, or 2/(e^eps0 + 1).

        w_same = e^eps0/(e^eps0 + 1), w_other = 1 - w_same, w_none = 0.

        Parameters
        ----------
        eps0 : float, in [1e-6, 700]
        n : int, in [1, 2^53]
        stronger : bool
            Stronger clones (SODA 2023) or clones (FOCS 2021).

        Returns
        -------
        DominatingPair

        Raises
        ------
        PrivacyParameterError
            If ``n`` is out of range.

        References
        ----------
        Feldman, McMillan, Talwar FOCS 2021 / SODA 2023 (not in /work/shared/papers).

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> pair = DominatingPair.from_params(VariationRatio.from_ldp(2.0), 10_000)
        >>> strong = DominatingPair.clones(2.0, 10_000, stronger=True)
        >>> abs(strong.rho - pair.rho) < 1e-15, strong.w_none
        (True, 0.0)
        """
        n = check_n(n)
        w_other = 1.0 / (1.0 + math.exp(eps0))
        rho = 2.0 * w_other if stronger else math.exp(-eps0)
        return cls(1.0 - w_other, w_other, 0.0, math.tanh(eps0 / 2.0), eps0, rho, n - 1)


def count_window(t: int, rho: float, tail: float) -> tuple[int, int, float]:
    """[lo, hi] and an upper bound on P[Binom(t, rho) outside [lo, hi]], which is about <= 2 * ``tail``.

    Both ends start from quantiles (the upper one through the mirrored count
    t - C ~ Binom(t, 1 - rho): ``binom.isf`` loses tails below ~1e-16), or from
    Bernstein's inequality where Boost's quantile search fails (t near 2^53); they are
    then widened until the exact (Boost) tails are below ``tail``.  For t <= 1000 the
    whole range [0, t] is returned.

    Parameters
    ----------
    t : int, >= 0
    rho : float, in [0, 1]
    tail : float, in (0, 1)

    Returns
    -------
    (int, int, float)
        lo, hi and the certified outside mass (with rounding slack).

    Examples
    --------
    >>> lo, hi, mass = count_window(9_999, 0.25, 1e-12)
    >>> lo < 2_500 < hi, mass < 3e-12
    (True, True)
    >>> count_window(500, 0.25, 1e-12)
    (0, 500, 0.0)
    """
    if rho <= 0.0 or rho >= 1.0:  # C is certain: 0 or t
        return (0, 0, 0.0) if rho <= 0.0 else (t, t, 0.0)
    if t <= _FULL_RANGE:
        return 0, t, 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        q_lo, q_hi = stats.binom.ppf(tail, t, rho), stats.binom.ppf(tail, t, 1.0 - rho)
    if math.isfinite(q_lo) and math.isfinite(q_hi):
        lo, hi = int(q_lo), t - int(q_hi)
    else:
        lo, hi = binomial_window(t, rho, tail)
    lo, hi = min(max(lo, 0), t), min(max(hi, lo), t)
    step = 1
    while lo > 0 and stats.binom.cdf(lo - 1, t, rho) > tail:
        lo, step = max(0, lo - step), 2 * step
    step = 1
    while hi < t and stats.binom.sf(hi, t, rho) > tail:
        hi, step = min(t, hi + step), 2 * step
    mass = float(stats.binom.cdf(lo - 1, t, rho) + stats.binom.sf(hi, t, rho)) if lo > 0 or hi < t else 0.0
    return lo, hi, (mass + 2.0 * _UNDERFLOW) * (1.0 + rel_slack(t))


def _block_edges(pair: DominatingPair, lo: int, hi: int, max_blocks: int) -> tuple[np.ndarray, np.ndarray, int]:
    """First and last totals [s_a, s_b] of the blocks over the window [lo, hi] of C (totals lo + 1 .. hi + 1), and
    their width: at most about ``max_blocks`` blocks, none narrower than `_BLOCK_RTOL` E[C]; the top total t + 1
    gets a block of its own.
    """
    totals = hi + 2 - max(lo, 1)
    width = max(1, math.ceil(totals / max_blocks), math.floor(pair.trials * pair.rho * _BLOCK_RTOL))
    s_a = np.arange(max(lo, 1), hi + 2, width, dtype=np.float64)
    s_b = np.minimum(s_a + (width - 1), hi + 1.0)
    if hi == pair.trials and s_a[-1] < s_b[-1]:
        # the top total t + 1 has alpha = 1 (only the victim's message explains it): a block of
        # its own, else the upper representative gives the whole block alpha = 1
        s_b[-1] -= 1.0
        s_a, s_b = np.append(s_a, hi + 1.0), np.append(s_b, hi + 1.0)
    return s_a, s_b, width


@dataclass(frozen=True)
class _CloneMixture:
    """Blocks of totals, each summarised by one symmetric clone pair (module docstring).

    ``weight``: P-mass of the block (with its absolute error ``weight_err``); ``clones``:
    the fair messages c; ``h``: the block's h_s, so alpha = (w_same + h)/(w_same + w_other + 2h).
    ``memo``: the Boost values at the thresholds of the last scalar evaluation (`PairDivergence._at_thresholds`).
    """

    weight: np.ndarray
    weight_err: np.ndarray
    clones: np.ndarray
    h: np.ndarray
    memo: dict = field(default_factory=dict, compare=False, repr=False)


def _binomial_masses(edges: np.ndarray, t: int, rho: float) -> tuple[np.ndarray, np.ndarray]:
    """Masses of Binom(t, rho) on [edges[i], edges[i+1]) with their absolute error bounds.

    Differences of the cdf below the mean and of the sf above it, so each mass keeps
    its relative precision in the tails; the error is rel_slack times the two ends.
    """
    below = edges - 1.0 < t * rho
    ends = np.empty(edges.shape)  # each end by the one Boost call it keeps (the cdf below the mean, the sf above)
    ends[below] = stats.binom.cdf(edges[below] - 1.0, t, rho)
    ends[~below] = stats.binom.sf(edges[~below] - 1.0, t, rho)
    # mass[i] = F(e_{i+1} - 1) - F(e_i - 1) below the mean, S(e_i - 1) - S(e_{i+1} - 1) above;
    # the block straddling the mean is 1 - F(e_i - 1) - S(e_{i+1} - 1).
    lo_end, hi_end = ends[:-1], ends[1:]
    lo_below, hi_below = below[:-1], below[1:]
    mass = np.where(
        lo_below & hi_below,
        hi_end - lo_end,
        np.where(~lo_below & ~hi_below, lo_end - hi_end, 1.0 - lo_end - hi_end),
    )
    err = rel_slack(t) * (lo_end + hi_end + np.where(lo_below & ~hi_below, 1.0, 0.0)) + _UNDERFLOW
    return np.maximum(mass, 0.0), err


def _mixture(pair: DominatingPair, s_a: np.ndarray, s_b: np.ndarray, upper: bool) -> _CloneMixture:
    """Blocks [s_a, s_b] of totals with the representative that bounds K from above / below."""
    t, rho = pair.trials, pair.rho
    w1, w0, w00 = pair.w_same, pair.w_other, pair.w_none
    exact = bool(np.all(s_a == s_b))
    # a victim that always sends (w_none = 0) needs no Pr[C = s] terms: they would add exact zeros
    if exact:
        b_prev = binomial_pmf(s_a - 1.0, t, rho)
        weight = (w1 + w0) * b_prev
        if w00 != 0.0:
            weight = weight + w00 * binomial_pmf(s_a, t, rho)
        weight_err = rel_slack(t) * weight + _UNDERFLOW
    else:
        edges = np.append(s_a, s_b[-1] + 1.0)
        m_prev, e_prev = _binomial_masses(edges - 1.0, t, rho)
        weight, weight_err = (w1 + w0) * m_prev, (w1 + w0) * e_prev
        if w00 != 0.0:
            m_here, e_here = _binomial_masses(edges, t, rho)
            weight, weight_err = weight + w00 * m_here, weight_err + w00 * e_here
    # alpha grows with s: the upper bound takes alpha at s_b and the fewest clones s_a - 1
    s_alpha, s_clones = (s_b, s_a) if upper else (s_a, s_b)
    if w00 > 0.0 and rho > 0.0:
        with np.errstate(divide="ignore", over="ignore"):
            ratio = (
                (t - s_alpha + 1.0) / s_alpha * (rho / (1.0 - rho)) if rho < 1.0 else np.where(s_alpha > t, 0.0, np.inf)
            )
        h = 0.5 * w00 * np.maximum(ratio, 0.0)
    else:
        h = np.zeros_like(s_alpha)
    return _CloneMixture(weight, weight_err, s_clones - 1.0, h)


def _at_thresholds(mix: _CloneMixture, u0: np.ndarray, j: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """P[Binom(c, 1/2) >= u0 + 1] and Pr[Binom(c, 1/2) = j] per block: the two Boost calls of an evaluation.

    They are most of its cost, and the evaluations of a search sit close together, where
    most blocks keep their threshold u0: for one epsilon (``c`` is then ``mix.clones``) the
    values of the mixture's last evaluation are kept in ``mix.memo`` and only the blocks
    whose u0 moved are recomputed.  The same elementwise calls on the same arguments: the
    same bits as computing every block afresh.
    """
    if c is not mix.clones:  # several epsilons at once (`upper_many`)
        return half_binomial_tail(u0 + 1.0, c), half_binomial_pmf(j, c)
    last = mix.memo.get("thresholds")
    if last is None:
        tail_hi, b_j = half_binomial_tail(u0 + 1.0, c), half_binomial_pmf(j, c)
    else:
        last_u0, tail_hi, b_j = last
        moved = u0 != last_u0
        if np.any(moved):
            tail_hi, b_j = tail_hi.copy(), b_j.copy()
            tail_hi[moved] = half_binomial_tail(u0[moved] + 1.0, c[moved])
            b_j[moved] = half_binomial_pmf(j[moved], c[moved])
    mix.memo["thresholds"] = u0, tail_hi, b_j
    return tail_hi, b_j


class PairDivergence:
    """Certified lower and upper bounds on D_{e^eps}(P || Q) of one pair, reusing its blocks.

    D_{e^eps}(P || Q) = sum_s P(s) K(alpha_s, s - 1, eps) over the totals s in the window
    of C (module docstring); blocks of totals bound K from both sides.

    Parameters
    ----------
    pair : DominatingPair
    tail : float, in (0, 1)
        Mass of the blanket count that may be left outside the window (added to the upper bound).
    max_blocks : int, >= 1, optional
        Most blocks of totals (fewer: faster, certified, slightly looser); ``MAX_BLOCKS`` by default.

    Examples
    --------
    >>> from shuffledp.params import VariationRatio
    >>> pair = DominatingPair.from_params(VariationRatio.from_ldp(2.0), 10_000)
    >>> lo, hi = PairDivergence(pair, 1e-12)(0.1)
    >>> round(hi * 1e6, 3), lo <= hi
    (6.021, True)
    """

    #: Scalar evaluations already made, (kind, eps) -> result (created on the first one).
    _remembered: dict | None = None

    def __init__(self, pair: DominatingPair, tail: float, max_blocks: int | None = None) -> None:
        self.pair = pair
        lo, hi, self.tail = count_window(pair.trials, pair.rho, tail)
        s_a, s_b, width = _block_edges(pair, lo, hi, max_blocks or MAX_BLOCKS)
        self.exact = width == 1
        self._edges = s_a, s_b
        self._upper = _mixture(pair, s_a, s_b, upper=True)
        self._lower_mix = self._upper if self.exact else None
        self.slack = rel_slack(float(pair.trials))

    @property
    def blocks(self) -> int:
        """Blocks of totals summed per evaluation (its cost)."""
        return int(self._upper.clones.size)

    @property
    def _lower(self) -> _CloneMixture:
        """The lower representatives, built on the first lower bound asked for (an upper search never needs them)."""
        if self._lower_mix is None:
            self._lower_mix = _mixture(self.pair, *self._edges, upper=False)
        return self._lower_mix

    @_lower.setter
    def _lower(self, mix: _CloneMixture) -> None:
        self._lower_mix = mix

    def estimate(self, blocks: int = _ESTIMATE_BLOCKS) -> PairDivergence:
        """The divergence with its blocks merged into at most ``blocks`` groups, each at its mass-weighted centre.

        A midpoint rule over the same weights (count and h of a group averaged by mass): close to the divergence and cheap (no Boost
        call to build it), but **not a bound** (neither `upper` nor `lower` of the result
        certifies anything).  `pair_epsilon` locates its root on it, then certifies the grid
        point next to that root on this divergence.

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> div = PairDivergence(DominatingPair.from_params(VariationRatio.from_ldp(1.0), 10**6), 1e-15)
        >>> est = div.estimate()
        >>> est.blocks <= 64 < div.blocks, abs(est.upper(0.003) / div.upper(0.003) - 1) < 1e-5
        (True, True)
        """
        mix = self._upper
        size = mix.clones.size
        groups = max(1, min(blocks, size))
        starts = np.arange(groups) * size // groups
        weight = np.add.reduceat(mix.weight, starts)
        middles = (starts + np.append(starts[1:], size) - 1) // 2
        with np.errstate(divide="ignore", invalid="ignore"):  # a group without mass keeps its middle block
            clones = np.where(weight > 0.0, np.round(np.add.reduceat(mix.weight * mix.clones, starts) / weight), 0.0)
            h = np.where(weight > 0.0, np.add.reduceat(mix.weight * mix.h, starts) / weight, 0.0)
        clones = np.where(weight > 0.0, clones, mix.clones[middles])
        h = np.where(weight > 0.0, h, mix.h[middles])
        est = PairDivergence.__new__(PairDivergence)
        est.pair, est.tail, est.slack, est.exact = self.pair, self.tail, self.slack, False
        est._upper = est._lower = _CloneMixture(weight, np.add.reduceat(mix.weight_err, starts), clones, h)
        return est

    @classmethod
    def from_count_pmf(
        cls, pair: DominatingPair, pmf: np.ndarray, pmf_err: np.ndarray, offset: int, tail: float
    ) -> PairDivergence:
        """The same divergence with an arbitrary law of the blanket count C (exact, width-1 blocks).

        ``pmf[i]`` approximates Pr[C = offset + i] to within ``pmf_err[i]`` (absolute);
        ``tail`` bounds the mass of C outside the array, and is added to the upper bound.
        The per-total decomposition of the module docstring holds for any law of C:
        P(s) = (w_same + w_other) Pr[C = s - 1] + w_none Pr[C = s] and
        h_s = w_none Pr[C = s] / (2 Pr[C = s - 1]); ``pair.rho`` and ``pair.trials``
        are not used (used for Poisson-binomial clone counts, :mod:`.personalized`).

        Parameters
        ----------
        pair : DominatingPair
            Supplies w_same, w_other, w_none, w_diff and log_p.
        pmf, pmf_err : ndarray, shape (m,)
        offset : int, >= 0
        tail : float, in [0, 1]

        Returns
        -------
        PairDivergence

        Examples
        --------
        >>> from scipy import stats
        >>> pair = DominatingPair.clones(1.0, 201, stronger=True)
        >>> c = np.arange(201.0)
        >>> pmf = stats.binom.pmf(c, 200, pair.rho)
        >>> div = PairDivergence.from_count_pmf(pair, pmf, 1e-15 * pmf, 0, 0.0)
        >>> abs(div.upper(0.3) - PairDivergence(pair, 1e-300).upper(0.3)) < 1e-12
        True
        """
        pmf = np.asarray(pmf, dtype=np.float64)
        err = np.asarray(pmf_err, dtype=np.float64)
        # totals s = offset + i + 1 take C = s - 1 from the victim's messages (weight w_same + w_other)
        # and C = s from a "none" victim; both arrays padded by one count on each side
        prev = np.concatenate(([0.0], pmf))  # Pr[C = s - 1] for s = offset, ..., offset + m
        here = np.concatenate((pmf, [0.0]))  # Pr[C = s]
        prev_err = np.concatenate(([0.0], err))
        here_err = np.concatenate((err, [0.0]))
        s = offset + np.arange(pmf.size + 1, dtype=np.float64)
        keep = s >= 1.0  # s = 0: the victim's message is absent, P = Q there
        w1, w0, w00 = pair.w_same, pair.w_other, pair.w_none
        weight = ((w1 + w0) * prev + w00 * here)[keep]
        weight_err = ((w1 + w0) * prev_err + w00 * here_err)[keep] + _UNDERFLOW
        if w00 > 0.0:
            # h from floats with errors: alpha falls as h grows, so the upper bound takes h
            # from the pmf rounded toward the smaller ratio, the lower bound the larger
            with np.errstate(divide="ignore", invalid="ignore"):
                h_up = np.where(
                    prev + prev_err > 0.0, 0.5 * w00 * np.maximum(here - here_err, 0.0) / (prev + prev_err), np.inf
                )[keep]
                h_lo = np.where(prev - prev_err > 0.0, 0.5 * w00 * (here + here_err) / (prev - prev_err), np.inf)[keep]
        else:
            h_up = h_lo = np.zeros(int(keep.sum()))
        clones = s[keep] - 1.0
        self = cls.__new__(cls)
        self.pair = pair
        self.tail = float(tail)
        self.exact = True
        self._upper = _CloneMixture(weight, weight_err, clones, h_up)
        self._lower = _CloneMixture(weight, weight_err, clones, h_lo) if w00 > 0.0 else self._upper
        self.slack = rel_slack(float(clones[-1]) if clones.size else 0.0)
        return self

    def _per_block(self, mix: _CloneMixture, up: bool) -> tuple[np.ndarray, ...]:
        """What `_terms` computes from the blocks alone, once per mixture and direction (kept in ``mix.memo``):
        w_same + h, w_same + w_other + 2h, the log-odds L of alpha rounded outward (``up``), L = inf, 1 - alpha.
        """
        pair = self.pair
        kept = mix.memo.get(("per block", up))
        if kept is not None and kept[0] is pair:
            return kept[1]
        w1h, w0h = pair.w_same + mix.h, pair.w_other + mix.h
        w_sum = w1h + w0h
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            # log-odds of alpha: log p exactly when h = 0, else log1p(w_diff / (w_other + h)) < log p
            log_odds = np.where(mix.h > 0.0, np.log1p(pair.w_diff / w0h), pair.log_p)
            log_odds = log_odds * (1.0 + LOG_ODDS_SLACK if up else 1.0 - LOG_ODDS_SLACK)
            other = np.where(w_sum > 0.0, w0h / w_sum, 0.5)  # 1 - alpha
        values = w1h, w_sum, log_odds, np.isinf(log_odds), other
        mix.memo[("per block", up)] = pair, values
        return values

    def _terms(
        self, mix: _CloneMixture, eps: float | np.ndarray, up: bool
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per block: K(alpha, c, eps) (the best of three thresholds), its magnitude |pos| + |neg|, and the
        Q-mass of the positive region (dK/deps = -e^eps times it).  ``eps`` is a number or a column
        (shape (E, 1)): the results then have one row per epsilon (numpy broadcasting).

        The log-odds L is rounded outward (up for an upper bound, down for a lower one) by
        ``LOG_ODDS_SLACK`` relative: near eps = L one ulp of L moves A by ulp / (L - eps).
        """
        pair = self.pair
        e, em1 = np.exp(eps), np.expm1(eps)
        c = (
            mix.clones
            if np.ndim(eps) == 0
            else np.broadcast_to(mix.clones, np.broadcast_shapes(np.shape(eps), mix.clones.shape))
        )
        w1h, w_sum, log_odds, no_odds, other = self._per_block(mix, up)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            gain = np.where(no_odds, 1.0, -np.expm1(eps - log_odds))
            coef = np.where(gain > 0.0, w1h * gain / w_sum, 0.0)  # A = alpha - e (1 - alpha), stably
            slope = (pair.w_diff + em1 * w1h) / (pair.w_diff * (1.0 + e))  # u* = floor((c + 1) slope) + 1
            u0 = np.floor((c + 1.0) * np.minimum(slope, 1.0)) + 1.0
        u0 = np.where(coef > 0.0, u0, c + 2.0)
        # one Boost pmf at j = min(u0 - 1, c), its neighbours by the exact ratios
        # b(j - 1)/b(j) = j/(c - j + 1) and b(j + 1)/b(j) = (c - j)/(j + 1) (one ulp each); when the
        # float threshold overshoots (u0 = c + 2, slope rounded to 1) the candidates shift by one
        j = np.minimum(u0 - 1.0, c)
        tail_hi, b_j = _at_thresholds(mix, u0, j, c)
        with np.errstate(divide="ignore", invalid="ignore"):
            b_prev = np.where(j >= 1.0, b_j * j / (c - j + 1.0), 0.0)
            b_next = b_j * (c - j) / (j + 1.0)
        shifted = u0 - 1.0 > c
        below = np.where(shifted, b_j, b_prev)
        mid = np.where(shifted, 0.0, b_j)
        above = np.where(shifted, 0.0, b_next)
        pmf = [below, mid, above]  # b(u0 - 2), b(u0 - 1), b(u0)
        tail_mid = tail_hi + pmf[2]
        tails = (tail_mid + pmf[1], tail_mid, tail_hi)  # T(u0 - 1), T(u0), T(u0 + 1)
        best = np.full(c.shape, -np.inf)
        magnitude = np.zeros(c.shape)
        q_mass = np.zeros(c.shape)
        for b_prev, t_here in zip(pmf, tails):  # candidate u: b(u - 1) and T(u)
            pos, neg = coef * b_prev, em1 * t_here
            value = pos - neg
            better = value > best
            best = np.where(better, value, best)
            magnitude = np.where(better, pos + neg, magnitude)
            q_mass = np.where(
                better, t_here + other * b_prev, q_mass
            )  # Q-mass of u >= u*: (1-alpha) T(u-1) + alpha T(u)
        positive = best > 0.0
        return np.where(positive, best, 0.0), magnitude, np.where(positive, q_mass, 0.0)

    def upper(self, eps: float) -> float:
        """Certified upper bound on the divergence at ``eps``.

        Parameters
        ----------
        eps : float, >= 0

        Returns
        -------
        float, in [0, 1]

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> pair = DominatingPair.from_params(VariationRatio.from_ldp(2.0), 10_000)
        >>> div = PairDivergence(pair, 1e-12)
        >>> round(div.upper(0.0), 4), div.upper(0.05) < div.upper(0.0)
        (0.0124, True)
        """
        if eps > EPS_CEILING:  # e^eps would overflow: D is non-increasing, and 0 beyond log p
            return 0.0 if eps >= self.pair.eps_cap else self.upper(EPS_CEILING)
        return self.upper_and_slope(eps)[0]

    def upper_many(self, eps: np.ndarray) -> np.ndarray:
        """`upper` at every epsilon of an array (one vectorised pass over the blocks per chunk of epsilons).

        Parameters
        ----------
        eps : array_like of float, >= 0

        Returns
        -------
        ndarray of float, in [0, 1], the shape of ``eps``

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> div = PairDivergence(DominatingPair.from_params(VariationRatio.from_ldp(2.0), 10_000), 1e-12)
        >>> grid = np.array([0.0, 0.05, 0.1])
        >>> bool(np.all(div.upper_many(grid) == [div.upper(e) for e in grid]))
        True
        """
        eps = np.asarray(eps, dtype=np.float64)
        flat = eps.ravel()
        out = np.empty(flat.size)
        mix = self._upper
        weight = mix.weight + mix.weight_err
        chunk = max(1, _CHUNK_ELEMENTS // max(1, mix.clones.size))
        clipped = np.minimum(flat, EPS_CEILING)
        for i in range(0, flat.size, chunk):
            rows = clipped[i : i + chunk, None]
            value, magnitude, _ = self._terms(mix, rows, up=True)
            total = np.sum(value * weight, axis=1)
            slack = self.slack * np.sum(magnitude * weight, axis=1)
            out[i : i + chunk] = np.minimum(1.0, (total + slack) * (1.0 + 1e-15) + self.tail)
        out[(flat > EPS_CEILING) & (flat >= self.pair.eps_cap)] = 0.0
        return out.reshape(eps.shape)

    def _remember(self, kind: str, eps: float, compute: Callable[[float], object]):
        """``compute(eps)``, or the result of the same call made before (the last `_REMEMBERED` are kept)."""
        if self._remembered is None or len(self._remembered) >= _REMEMBERED:
            self._remembered = {}
        key = (kind, float(eps))
        if key not in self._remembered:
            self._remembered[key] = compute(eps)
        return self._remembered[key]

    def upper_and_slope(self, eps: float) -> tuple[float, float]:
        """:meth:`upper` (for eps <= EPS_CEILING) and, approximately, its derivative -e^eps Q[loss > eps]:
        the derivative serves Newton steps only."""
        return self._remember("upper", eps, self._upper_and_slope)

    def _upper_and_slope(self, eps: float) -> tuple[float, float]:
        mix = self._upper
        value, magnitude, q_mass = self._terms(mix, eps, up=True)
        weight = mix.weight + mix.weight_err
        total = float(np.sum(weight * value))
        slack = self.slack * float(np.sum(weight * magnitude))
        upper = min(1.0, (total + slack) * (1.0 + 1e-15) + self.tail)
        return upper, -math.exp(eps) * float(np.sum(mix.weight * q_mass))

    def lower(self, eps: float) -> float:
        """Certified lower bound on the divergence at ``eps``.

        Parameters
        ----------
        eps : float, >= 0

        Returns
        -------
        float, in [0, 1]

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> pair = DominatingPair.from_params(VariationRatio.from_ldp(2.0), 10_000)
        >>> div = PairDivergence(pair, 1e-12)
        >>> div.lower(0.2) <= div.upper(0.2)
        True
        """
        if eps > EPS_CEILING:  # e^eps would overflow: 0 is a valid lower bound
            return 0.0
        return self._remember("lower", eps, self._lower_at)

    def _lower_at(self, eps: float) -> float:
        mix = self._lower
        value, magnitude, _ = self._terms(mix, eps, up=False)
        weight = np.maximum(mix.weight - mix.weight_err, 0.0)
        total = float(np.sum(weight * value)) - self.slack * float(np.sum(mix.weight * magnitude))
        return max(0.0, total * (1.0 - 1e-15))

    def __call__(self, eps: float) -> tuple[float, float]:
        return self.lower(eps), self.upper(eps)


def infinite_divergence(pair: DominatingPair) -> float:
    """lim_{eps -> inf} D_{e^eps}(P || Q) = P[Q = 0] (non-zero only for p = infinity).

    With w_other = 0, Q vanishes exactly where all messages sit on the victim's symbol
    and no "none" message can explain them: for w_none > 0 that is D1 = 1 and all
    t blankets on o0 (mass w_same (rho/2)^t); for w_none = 0 it is every outcome with
    y = 0 (mass E[2^-C] = (1 - rho/2)^t).

    Parameters
    ----------
    pair : DominatingPair

    Returns
    -------
    float, in [0, 1]

    References
    ----------
    segmented-multimessage-shuffle.txt §5.1.2 Lemma 3 (Poisson randomizer, p = infinity).

    Examples
    --------
    >>> import math
    >>> from shuffledp.params import VariationRatio
    >>> poisson = VariationRatio(p=math.inf, beta=0.5, q0=2.0, q1=2.0)
    >>> infinite_divergence(DominatingPair.from_params(poisson, 10)) == 0.5 * 0.25 ** 9
    True
    """
    if pair.w_other > 0.0:
        return 0.0
    if pair.w_none > 0.0:
        return pair.w_same * (pair.rho / 2.0) ** pair.trials
    return math.exp(pair.trials * math.log1p(-pair.rho / 2.0))


def _normal_guess(pair: DominatingPair, delta: float) -> float:
    """Normal approximation eps ~ 2 w_diff sqrt(2 log(1/delta) / E[C]): only a starting point."""
    return 2.0 * pair.w_diff * math.sqrt(2.0 * math.log(1.0 / delta) / max(1.0, pair.rho * pair.trials))


def pair_epsilon(pair: DominatingPair, delta: float, rtol: float, upper: bool) -> float:
    """Grid-snapped eps of the pair at ``delta``: certified upper bound, or certified lower bound.

    Upper: the smallest grid point exp(k h), h = log1p(rtol), whose divergence upper bound
    is <= delta (or log p, always valid for finite p); lower: the largest grid point whose
    divergence lower bound is > delta (so the true eps is above it), or 0.

    Parameters
    ----------
    pair : DominatingPair
    delta : float, in [1e-300, 1)
    rtol : float, in [1e-12, 1e-2]
    upper : bool

    Returns
    -------
    float
        ``math.inf`` (upper) when p = infinity and the divergence at eps = infinity reaches delta.

    Examples
    --------
    >>> from shuffledp.params import VariationRatio
    >>> pair = DominatingPair.from_params(VariationRatio.from_ldp(2.0), 10_000)
    >>> hi = pair_epsilon(pair, 1e-6, 1e-7, upper=True)
    >>> lo = pair_epsilon(pair, 1e-6, 1e-7, upper=False)
    >>> round(hi, 4), lo < hi
    (0.1144, True)
    """
    if pair.w_diff <= 0.0:
        return 0.0  # beta = 0: P = Q
    div = PairDivergence(pair, tail_budget(delta, rtol))
    divergence = div.upper if upper else div.lower
    cap = pair.eps_cap
    if math.isinf(cap):
        d_inf = infinite_divergence(pair) * (1.0 + (div.slack if upper else -div.slack))
        if (d_inf >= delta) if upper else (d_inf > delta):
            return math.inf
    ceiling = min(cap, EPS_CEILING)
    guess = _normal_guess(pair, delta)
    if not upper:
        return solve_epsilon(divergence, delta, ceiling, guess, rtol, upper, cap=cap)
    near = None
    if div.blocks >= _ESTIMATE_FROM[0] or (div.blocks >= _ESTIMATE_FROM[1] and pair.trials * pair.rho >= 1e6):
        near = _estimated_root(div.estimate(min(_ESTIMATE_BLOCKS, div.blocks // 4)), delta, ceiling, guess)
    return solve_epsilon(
        divergence, delta, ceiling, guess, rtol, upper, cap=cap, with_slope=div.upper_and_slope, near=near
    )


def _estimated_root(estimate: PairDivergence, delta: float, ceiling: float, guess: float) -> float | None:
    """Root of ``estimate.upper(eps) = delta`` (Newton steps in its bracket), or None when it has none below ``ceiling``.

    The estimate's blocks are few, so its evaluations are cheap; the root it gives is a
    starting point only (`solve_epsilon`'s ``near``), never a result.
    """
    lo, hi = bracket_root(estimate.upper, delta, ceiling, guess)
    return newton_root(estimate.upper_and_slope, delta, lo, hi, 1e-6) if lo < hi else None


def pair_cells(
    pair: DominatingPair, tail: float, chunk_cells: int = 2_000_000
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield (P-mass, Q-mass) arrays over chunks of outcomes (x, s - x); return the neglected P-mass.

    Totals outside the window of C (mass ``tail`` / 2) and x given s outside
    s/2 +- sqrt(s log(4/tail) / 2) (Hoeffding: mass <= tail / 2) are skipped; the
    generator's return value (StopIteration.value) bounds the neglected mass.

    Parameters
    ----------
    pair : DominatingPair
    tail : float, in (0, 1)
    chunk_cells : int, >= 1
        Cells per chunk (memory bound).

    Yields
    ------
    (ndarray, ndarray)
        P and Q masses of the cells of one chunk.

    Examples
    --------
    >>> from shuffledp.params import VariationRatio
    >>> small = DominatingPair.from_params(VariationRatio.from_ldp(1.0), 50)
    >>> cells = list(pair_cells(small, 1e-15))
    >>> round(sum(float(p.sum()) for p, q in cells), 12), round(sum(float(q.sum()) for p, q in cells), 12)
    (1.0, 1.0)
    """
    t, rho = pair.trials, pair.rho
    c_lo, c_hi, tail_c = count_window(t, rho, tail / 4.0)
    width = max(1, math.floor(t * rho * PLD_BLOCK_RTOL))
    if width > 1:
        return (yield from _block_cells(pair, c_lo, c_hi, width, tail, chunk_cells)) + tail_c
    s_all = np.arange(c_lo, c_hi + 2, dtype=np.float64)
    half = math.ceil(math.sqrt(max(c_hi + 1, 1) * math.log(4.0 / tail) / 2.0)) + 2
    offsets = np.arange(-half, half + 1, dtype=np.float64)
    rows = max(1, chunk_cells // offsets.size)
    w1, w0, w00 = pair.w_same, pair.w_other, pair.w_none
    for i in range(0, s_all.size, rows):
        s = s_all[i : i + rows, None]
        x = np.floor(s / 2.0) + offsets[None, :]
        valid = (x >= 0.0) & (x <= s)
        b_prev = binomial_pmf(s - 1.0, t, rho)  # Pr[C = s - 1]
        b_here = binomial_pmf(s, t, rho)  # Pr[C = s]
        with np.errstate(divide="ignore", invalid="ignore"):
            lin = np.where(s > 0.0, 2.0 * b_prev / s, 0.0)
        g_p = lin * (w1 * x + w0 * (s - x)) + w00 * b_here
        g_q = lin * (w1 * (s - x) + w0 * x) + w00 * b_here
        base = np.where(valid, stats.binom.pmf(np.clip(x, 0.0, s), s, 0.5), 0.0)
        yield base * g_p, base * g_q
    return tail_c + tail / 2.0


def _block_cells(pair: DominatingPair, c_lo: int, c_hi: int, width: int, tail: float, chunk_cells: int):
    """Cells of the blocked pair that dominates the pair (the engine's "Scale" argument).

    Each block of totals [s_a, s_b] becomes one clone pair with the fewest clones c = s_a - 1 and
    the largest alpha (at s_b), weighted by the block's P-mass: every total's conditional pair is a
    post-processing of it (more fair messages, alpha mixed toward 1/2) and the total is drawn
    independently of the secret, so the PLD of the blocked pair is pessimistic, as the cells'
    rounding is.  Cells: the representative's u in (c+1)/2 +- sqrt((c+1) log(4/tail) / 2).
    """
    s_a = np.arange(max(c_lo, 1), c_hi + 2, width, dtype=np.float64)
    s_b = np.minimum(s_a + (width - 1), c_hi + 1.0)
    mix = _mixture(pair, s_a, s_b, upper=True)
    if c_lo == 0 and pair.w_none > 0.0:  # total 0: the victim sent nothing and no blanket landed (loss 0)
        mass = np.array([pair.w_none * float(binomial_pmf(np.zeros(1), pair.trials, pair.rho)[0])])
        yield mass, mass.copy()
    alpha = (pair.w_same + mix.h) / (pair.w_same + pair.w_other + 2.0 * mix.h)
    half = math.ceil(math.sqrt((c_hi + 1) * math.log(4.0 / tail) / 2.0)) + 2
    offsets = np.arange(-half, half + 1, dtype=np.float64)
    rows = max(1, chunk_cells // offsets.size)
    for i in range(0, s_a.size, rows):
        c = mix.clones[i : i + rows, None]
        a = alpha[i : i + rows, None]
        weight = (mix.weight + mix.weight_err)[i : i + rows, None]
        u = np.floor((c + 1.0) / 2.0) + offsets[None, :]
        valid = (u >= 0.0) & (u <= c + 1.0)
        b_prev = np.where(valid, stats.binom.pmf(u - 1.0, c, 0.5), 0.0)
        b_here = np.where(valid, stats.binom.pmf(u, c, 0.5), 0.0)
        yield weight * (a * b_prev + (1.0 - a) * b_here), weight * ((1.0 - a) * b_prev + a * b_here)
    return tail / 2.0


__all__ = [
    "MAX_BLOCKS",
    "DominatingPair",
    "PairDivergence",
    "count_window",
    "infinite_divergence",
    "pair_cells",
    "pair_epsilon",
    "solve_epsilon",
]
