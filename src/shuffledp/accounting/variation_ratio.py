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

**Computation** is done by the one binomial-divergence engine of the package
(:mod:`shuffledp.accounting.dominating_pair`): exact per outcome total, with directed
rounding, the neglected mass of the blanket count added (upper) or dropped (lower), and
epsilons snapped to the grid exp(k log(1 + rtol)) — up for the upper bound, down for the
lower bound — so both are deterministic step functions.

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

from shuffledp.accounting.bounds import BoundMethod, check_n_delta, register_method
from shuffledp.accounting.dominating_pair import DominatingPair, PairDivergence, pair_epsilon
from shuffledp.params import VariationRatio
from shuffledp._util.validation import check_nonnegative, check_probability, check_rtol

#: Default relative precision of the returned epsilons.
DEFAULT_RTOL = 1e-7


def variation_ratio_epsilon(
    params: VariationRatio, n: int, delta: float, *, gamma: float = 1.0, rtol: float = DEFAULT_RTOL
) -> float:
    """Upper bound on the shuffled epsilon (Theorem 1; Theorem 2 with ``gamma`` < 1).

    ``n`` counts the victim plus n - 1 blanket slots, each used with probability
    ``gamma``.  The result is >= the exact eps of the dominating pair and within a
    relative ``rtol`` (plus float slack) of it; at most log p; ``math.inf`` when
    p = infinity and no eps reaches ``delta``.
    """
    n, delta = check_n_delta(n, delta)
    return pair_epsilon(DominatingPair.from_params(params, n, gamma), delta, check_rtol(rtol), upper=True)


def variation_ratio_epsilon_lower(
    params: VariationRatio, n: int, delta: float, *, gamma: float = 1.0, rtol: float = DEFAULT_RTOL
) -> float:
    """Lower bound: the true eps of concrete randomizers with parameters (p, beta, q) is above it.

    Equals the upper bound's pair (up to rounding, erring low) whenever q >= 1 + beta;
    see the module docstring (and Proposition 1 for the Poisson / random-count case).
    """
    n, delta = check_n_delta(n, delta)
    pair = DominatingPair.from_params(params, n, gamma, attainable=True)
    return pair_epsilon(pair, delta, check_rtol(rtol), upper=False)


def hockey_stick_divergence(
    params: VariationRatio, n: int, eps: float, *, gamma: float = 1.0, tail_mass: float = 1e-18
) -> tuple[float, float]:
    """Rigorous (lower, upper) bounds on D_{e^eps}(P || Q) for the Theorem 1/2 pair.

    Counts whose total probability is below about ``tail_mass`` may be skipped (their
    mass is added to the upper bound).
    """
    eps = check_nonnegative(eps, "eps")
    tail_mass = check_probability(tail_mass, "tail_mass")
    return PairDivergence(DominatingPair.from_params(params, n, gamma), tail_mass)(eps)


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
