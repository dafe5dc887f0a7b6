"""Numerical variation-ratio bounds (segmented paper §3.3 Theorem 1, §5.1 Theorem 2, Lemma 3, Prop. 1).

The variation-ratio reduction (Wang et al., VLDB 2024) dominates the shuffled
output of any randomizers with (p, beta)-variation and q-ratio properties by the
pair of two-dimensional counts

    P = (A + D1, C - A + D2),    Q = (A + D2, C - A + D1),

with C ~ Binom(n - 1, rho), A | C ~ Binom(C, 1/2) and the victim's indicators
(D1, D2) in {(1, 0), (0, 1), (0, 0)} with probabilities

    w_same = beta p / (p - 1),  w_other = beta / (p - 1),  w_none = 1 - w_same - w_other,

(Theorem 1 writes D2 ~ Bernoulli(1 - D1, beta / (p - 1 - beta p)); multiplying out gives
Pr[D2 = 1] = (1 - w_same) beta / (p - 1 - beta p) = beta / (p - 1)), and the blanket
probability rho = 2 beta p / ((p - 1) q).  The shuffled guarantee at ``delta`` is the
smallest eps with D_{e^eps}(P || Q) <= delta; the coordinate swap maps P to Q, so
D(P || Q) = D(Q || P) and one direction suffices.

**p = infinity** (Poisson randomizer, Lemma 3): the limits of the formulas above are
w_same = beta, w_other = 0 and rho = 2 beta / q; the victim either reports its own
symbol (probability beta) or nothing, and eps may be infinite (when no blanket can
cover the victim's message, see :func:`_infinite_divergence`).

**Random number of blankets** (Theorem 2): if the n - 1 blanket slots are each used
with probability ``gamma``, rho is multiplied by gamma (equivalently q -> q / gamma).
For Algorithm 2 of the segmented paper with ``n_users`` users each sending
Binom(ceil(m), m / ceil(m)) blankets, pass ``n = n_users * ceil(m) + 1`` and
``gamma = m / ceil(m)``: every user's blankets (the victim's included) are slots, which is
Theorem 2 exactly and what Proposition 1 shows tight.  (Theorem 3 states
n' = n_users * ceil(m), one slot fewer: also valid, slightly larger.)

**Computation.**  Given the total s = x + y of an outcome, both P and Q are
b_s(x) times a function *linear* in x (b_s = Binom(s, 1/2) pmf), so P - e^eps Q > 0 on
a half-line x >= k_s and the positive part per s is one Binom(s, 1/2) pmf and one tail
(:class:`_Divergence`), vectorised over s; tails use :func:`scipy.special.betainc`
(Boost; relative error ~1e-13, checked against exact integer sums in the tests).
Only s where Binom(n - 1, rho) has mass are summed; the neglected mass is added to
the divergence for upper bounds (dropped for lower bounds).  Every computed
divergence carries a slack of :func:`_rel_slack` times the sum of the absolute values of
all summed terms: added for upper bounds, subtracted for lower bounds.

**Epsilons** are snapped to the grid exp(k log(1 + rtol)), k integer: the upper bound is
the smallest grid point whose divergence upper bound is <= delta, the lower bound the
largest grid point whose divergence lower bound is > delta (so the true eps is
strictly above it).  Snapping makes both bounds deterministic step functions that
inherit the monotonicity of the true eps in n and eps0 (unless the divergence at a grid
point lies within the float slack of delta).

**Lower bound.**  The pair is attained by actual randomizers: a victim with outputs
(o0, o1, none) and probabilities (w_same, w_other, w_none) (swapped for the other input)
and other users who, independently of their inputs, output o0 and o1 with
probability rho/2 each and "none" otherwise; their shuffled output *is* (P, Q).  This
tuple has exactly the parameters (p, beta, q) when q >= 1 + beta (the victim's
"none" mass must be covered q-fold by the others'; summing the q-ratio inequality
over all outputs shows no randomizer with total variation beta exists otherwise).  So
the lower bound uses beta' = min(beta, q - 1): no analysis that relies only on
(p, beta, q) can certify less.  For the generic eps0-LDP parameters q = p >= 1 + beta
always, and the bound coincides with the upper bound up to rounding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import optimize, stats

from shuffledp._util.validation import check_nonnegative, check_positive_int, check_probability, check_rtol
from shuffledp.accounting._binomial import half_binomial_tail
from shuffledp.accounting.bounds import BoundMethod, register_method
from shuffledp.accounting.params import VariationRatio
from shuffledp.errors import PrivacyParameterError

#: Below this many blanket trials every count C is summed (no truncation).
_FULL_RANGE = 20_000
#: The largest eps tried for p = infinity before declaring the bound infinite.
_EPS_CEILING = 700.0
#: Default relative precision of the returned epsilons.
DEFAULT_RTOL = 1e-7


def _rel_slack(size: float) -> float:
    """Relative error allowed for each summed term when binomials have up to ``size`` trials.

    Boost's betainc and binomial pmf (behind scipy) measured against exact integer
    arithmetic: <= 1e-13 relative up to 2e5 trials, <= 4.3e-13 at 1e6 and 4e6 trials
    (see the tests).  The allowance, 2e-12 * max(1, sqrt(size / 1e4)), is >= 50x those
    errors and grows with the problem size; float64 pairwise sums add < 1e-14.
    """
    return 2e-12 * max(1.0, math.sqrt(size / 1e4))


@dataclass(frozen=True)
class DominatingPair:
    """The pair (P, Q) of Theorem 1 in mixture form (see the module docstring).

    ``w_same``/``w_other``: probabilities that the victim's message lands on its own /
    the other input's symbol; ``rho``: probability that one blanket slot lands on
    either symbol; ``trials``: number of blanket slots (n - 1); ``eps_cap``: log p
    (rounded up), since P <= p Q pointwise (a ratio of mixtures is at most p).
    """

    w_same: float
    w_other: float
    rho: float
    trials: int
    eps_cap: float

    @property
    def w_none(self) -> float:
        return max(0.0, 1.0 - self.w_same - self.w_other)

    @classmethod
    def from_params(cls, params: VariationRatio, n: int, gamma: float = 1.0, *, attainable: bool = False) -> "DominatingPair":
        """Theorem 1 (gamma = 1) / Theorem 2 pair for ``n`` participants.

        ``attainable=True`` caps beta at q - 1 so that actual randomizers realise the
        pair (the lower-bound construction of the module docstring).
        """
        if not isinstance(params, VariationRatio):
            raise PrivacyParameterError(f"params must be a VariationRatio, got {type(params).__name__}")
        n = check_positive_int(n, "n")
        gamma = check_probability(gamma, "gamma", open_low=False, open_high=False)
        p, q = params.p, params.q

        def victim(beta: float) -> tuple[float, float]:
            if math.isinf(p):  # Lemma 3: the p -> infinity limits of the Theorem 1 formulas
                return beta, 0.0
            return beta * p / (p - 1.0), beta / (p - 1.0)

        w_same, w_other = victim(params.beta)
        rho = 2.0 * w_same / q  # q = infinity: blankets never cover the victim
        if rho > 1.0 + 1e-12:
            raise PrivacyParameterError(
                f"inconsistent (p, beta, q) = ({p:g}, {params.beta:g}, {q:g}): the blanket probability "
                f"2*beta*p/((p-1)*q) = {rho:.6g} exceeds 1; the q-ratio property needs q >= {2.0 * w_same:.6g}"
            )
        if attainable and params.beta > q - 1.0:
            w_same, w_other = victim(q - 1.0)
            rho = 2.0 * w_same / q
        cap = math.inf if math.isinf(p) else math.nextafter(math.log(p), math.inf)
        return cls(w_same=w_same, w_other=w_other, rho=min(rho, 1.0) * gamma, trials=n - 1, eps_cap=cap)


def _count_window(t: int, rho: float, tail: float) -> tuple[int, int]:
    """[lo, hi] with P[Binom(t, rho) < lo] and P[Binom(t, rho) > hi] each about <= ``tail``.

    Both ends come from the lower quantile (``binom.isf`` loses tails below ~1e-16),
    the upper one through the mirrored count t - C ~ Binom(t, 1 - rho); they are then
    widened until the exact tails are small enough (rounding of 1 - rho aside).
    """
    lo = int(stats.binom.ppf(tail, t, rho))
    hi = t - int(stats.binom.ppf(tail, t, 1.0 - rho))
    step = 1
    while lo > 0 and stats.binom.cdf(lo - 1, t, rho) > tail:
        lo, step = max(0, lo - step), 2 * step
    step = 1
    while hi < t and stats.binom.sf(hi, t, rho) > tail:
        hi, step = min(t, hi + step), 2 * step
    return lo, hi


class _Divergence:
    """Rigorous bounds on D_{e^eps}(P || Q) for one pair, reusing the binomial weights.

    For an outcome total s, P(x, s-x) - e Q(x, s-x) = b_s(x) a_s (x - x*_s) with
    a_s = 2 B(s-1) (w_same - w_other)(1 + e) / s and x*_s = s/2 + d_s, where B is the
    Binom(n-1, rho) pmf and d_s = s (e-1) (w_none B(s)/B(s-1) + w_same + w_other)
    / (2 (w_same - w_other)(1 + e)) >= 0.  De Moivre's identity
    sum_{x>=k} (x - s/2) b_s(x) = (k/2) b_s(k) then gives the positive part in closed form,
    a_s [(k/2) b_s(k) - d_s P(Binom(s, 1/2) >= k)] with k = floor(x*) + 1, a difference of
    two terms of like size (no cancellation of order sqrt(s)).  Totals with B(s-1) = 0
    contribute nothing (there P - e Q = (1-e) w_none B(s) b_s(x) <= 0), nor does s = 0.
    """

    def __init__(self, pair: DominatingPair, tail_budget: float) -> None:
        self.pair = pair
        t, rho = pair.trials, pair.rho
        if t <= _FULL_RANGE or rho in (0.0, 1.0):
            lo, hi, tail = 0, t, 0.0
        else:
            # C outside [lo, hi] has mass about tail_budget; its exact (Boost) mass is added,
            # which bounds every outcome total outside [lo, hi + 1].
            lo, hi = _count_window(t, rho, tail_budget / 2.0)
            tail = float(stats.binom.cdf(lo - 1, t, rho) + stats.binom.sf(hi, t, rho))
        s = np.arange(max(lo, 1), hi + 2, dtype=np.float64)
        b_s = stats.binom.pmf(s, t, rho)
        b_prev = stats.binom.pmf(s - 1.0, t, rho)
        keep = b_prev > 0.0
        self.s, self.b_prev = s[keep], b_prev[keep]
        with np.errstate(over="ignore"):
            self.ratio = np.minimum(b_s[keep] / b_prev[keep], 1e300)
        self.slack = _rel_slack(float(t))
        self.tail = tail * (1.0 + self.slack)

    def __call__(self, eps: float) -> tuple[float, float]:
        """(lower, upper) bounds on D_{e^eps}(P || Q)."""
        e, em1 = math.exp(eps), math.expm1(eps)
        w1, w0, w00 = self.pair.w_same, self.pair.w_other, self.pair.w_none
        s = self.s
        with np.errstate(over="ignore"):
            d = s * em1 * (w00 * self.ratio + (w1 + w0)) / (2.0 * (w1 - w0) * (1.0 + e))
        d = np.minimum(d, s)  # d >= s/2 means x* >= s: nothing positive, whatever d is
        k = np.floor(np.minimum(s / 2.0 + d, s)) + 1.0
        # a_s / (1 + e) times the two terms; the factor (1 + e) is applied to the sums
        scale = 2.0 * (w1 - w0) * self.b_prev / s
        pos = scale * (k / 2.0) * stats.binom.pmf(k, s, 0.5)
        neg = scale * d * half_binomial_tail(k, s)
        terms = pos - neg
        slack = self.slack * float(np.sum(pos) + np.sum(neg))
        lower = max(0.0, (1.0 + e) * (float(np.sum(terms)) - slack))
        upper = (1.0 + e) * (float(np.sum(np.maximum(terms, 0.0))) + slack) + self.tail
        return lower, min(upper, 1.0)


def _infinite_divergence(pair: DominatingPair) -> float:
    """lim_{eps -> inf} D_{e^eps}(P || Q) = P[Q = 0] (non-zero only for p = infinity).

    With w_other = 0, Q vanishes exactly where all messages sit on the victim's
    symbol and no "none" message can explain them: for w_none > 0 that is
    D1 = 1 and all n - 1 blankets on o0 (mass w_same (rho/2)^(n-1)); for
    beta = 1 it is every outcome with y = 0 (mass E[2^-C] = (1 - rho/2)^(n-1)).
    """
    if pair.w_other > 0.0:
        return 0.0
    if pair.w_none > 0.0:
        return pair.w_same * (pair.rho / 2.0) ** pair.trials
    return (1.0 - pair.rho / 2.0) ** pair.trials


def _grid_search(divergence: Callable[[float], float], delta: float, lo: float, hi: float, rtol: float, upper: bool) -> float:
    """Grid point exp(k h), h = log1p(rtol), bracketing the root of divergence(eps) = delta.

    ``divergence`` is non-increasing with divergence(lo) > delta >= divergence(hi).
    Upper: smallest grid point with divergence <= delta; lower: largest with > delta.
    """
    step = math.log1p(rtol)

    def above(k: int) -> bool:
        return divergence(math.exp(k * step)) > delta

    def phi(eps: float) -> float:
        return math.log(max(divergence(eps), 1e-300)) - math.log(delta)

    root = optimize.brentq(phi, lo, hi, xtol=1e-300, rtol=max(rtol / 4.0, 1e-14))
    k = math.ceil(math.log(root) / step) if upper else math.floor(math.log(root) / step)
    # Walk to the exact boundary (brentq's root lies within a grid step or so of it).
    for _ in range(10_000):
        if above(k):
            k += 1
        elif above(k - 1):
            break
        else:
            k -= 1
    else:  # pragma: no cover - the divergence is monotone, so the walk ends
        raise RuntimeError("grid search for epsilon did not converge")
    return math.exp(k * step) if upper else math.exp((k - 1) * step)


def _epsilon(pair: DominatingPair, delta: float, rtol: float, upper: bool) -> float:
    """Grid-snapped eps with D_{e^eps}(P || Q) = delta (module docstring), bracketed from a guess."""
    side = 1 if upper else 0
    w_diff = pair.w_same - pair.w_other
    if w_diff <= 0.0:
        return 0.0  # beta = 0: P = Q
    h = _Divergence(pair, tail_budget=delta * rtol * 1e-2)

    def divergence(eps: float) -> float:
        return h(eps)[side]

    cap = pair.eps_cap
    if math.isinf(cap):
        d_inf = _infinite_divergence(pair) * (1.0 + (h.slack if upper else -h.slack))
        if (d_inf >= delta) if upper else (d_inf > delta):
            return math.inf
    ceiling = min(cap, _EPS_CEILING)
    # Normal approximation of the pair: eps ~ 2 (w_same - w_other) sqrt(2 log(1/delta) / E[C]).
    # Only a starting point: the bracket below is verified and widened as needed.
    guess = 2.0 * w_diff * math.sqrt(2.0 * math.log(1.0 / delta) / max(1.0, pair.rho * pair.trials))
    guess = min(max(guess, 1e-9), ceiling)
    if divergence(guess) > delta:
        lo, hi = guess, min(2.0 * guess, ceiling)
        while divergence(hi) > delta:
            if hi >= ceiling:
                # finite p: eps <= log p holds exactly (reached only through slack);
                # p = infinity: no eps below the ceiling certifies delta.
                if upper:
                    return cap
                return lo if math.isfinite(cap) else hi
            lo, hi = hi, min(2.0 * hi, ceiling)
    else:
        lo, hi = guess / 2.0, guess
        while divergence(lo) <= delta:
            if lo < guess / 8.0:
                # Far below the normal approximation: test eps = 0 (the total variation) at
                # once rather than halving on (each evaluation is slow near the binomial centre).
                if divergence(0.0) <= delta:
                    return 0.0
                lo, hi = 0.0, lo  # the root lies in (0, lo]
                break
            lo, hi = lo / 2.0, lo
    result = _grid_search(divergence, delta, lo, hi, rtol, upper)
    return min(result, cap) if upper else result


def _check_inputs(n: int, delta: float, rtol: float) -> tuple[int, float, float]:
    return check_positive_int(n, "n"), check_probability(delta, "delta"), check_rtol(rtol)


def variation_ratio_epsilon(
    params: VariationRatio, n: int, delta: float, *, gamma: float = 1.0, rtol: float = DEFAULT_RTOL
) -> float:
    """Upper bound on the shuffled epsilon (Theorem 1; Theorem 2 with ``gamma`` < 1).

    ``n`` counts the victim plus n - 1 blanket slots, each used with probability
    ``gamma``.  The result is >= the exact eps of the dominating pair and within a
    relative ``rtol`` (plus float slack) of it; ``math.inf`` when p = infinity and
    no eps reaches ``delta``.
    """
    n, delta, rtol = _check_inputs(n, delta, rtol)
    return _epsilon(DominatingPair.from_params(params, n, gamma), delta, rtol, upper=True)


def variation_ratio_epsilon_lower(
    params: VariationRatio, n: int, delta: float, *, gamma: float = 1.0, rtol: float = DEFAULT_RTOL
) -> float:
    """Lower bound: the true eps of concrete randomizers with parameters (p, beta, q) is above it.

    Equals the upper bound's pair (up to rounding, erring low) whenever q >= 1 + beta;
    see the module docstring (and Proposition 1 for the Poisson / random-count case).
    """
    n, delta, rtol = _check_inputs(n, delta, rtol)
    return _epsilon(DominatingPair.from_params(params, n, gamma, attainable=True), delta, rtol, upper=False)


def hockey_stick_divergence(
    params: VariationRatio, n: int, eps: float, *, gamma: float = 1.0, tail_mass: float = 1e-18
) -> tuple[float, float]:
    """Rigorous (lower, upper) bounds on D_{e^eps}(P || Q) for the Theorem 1/2 pair.

    Counts whose total probability is below ``tail_mass`` may be skipped (their mass
    is added to the upper bound).
    """
    n = check_positive_int(n, "n")
    eps = check_nonnegative(eps, "eps")
    tail_mass = check_probability(tail_mass, "tail_mass")
    pair = DominatingPair.from_params(params, n, gamma)
    return _Divergence(pair, tail_budget=tail_mass)(eps)


def _upper(params: VariationRatio, n: int, delta: float) -> float:
    return variation_ratio_epsilon(params, n, delta)


def _lower(params: VariationRatio, n: int, delta: float) -> float:
    return variation_ratio_epsilon_lower(params, n, delta)


_REFERENCE = "Wang et al. VLDB 2024; segmented paper Theorem 1, Lemma 3, Proposition 1"
register_method(BoundMethod("variation-ratio", "upper", False, _upper, _REFERENCE))
register_method(BoundMethod("variation-ratio-lower", "lower", False, _lower, _REFERENCE))

__all__ = [
    "DEFAULT_RTOL",
    "DominatingPair",
    "hockey_stick_divergence",
    "variation_ratio_epsilon",
    "variation_ratio_epsilon_lower",
]
