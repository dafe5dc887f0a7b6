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
cover the victim's message, see `_infinite_divergence`).

**Random number of blankets** (Theorem 2): if the n - 1 blanket slots are each used
with probability ``gamma``, rho is multiplied by gamma (equivalently q -> q / gamma).
For Algorithm 2 of the segmented paper with ``n_users`` users each sending
Binom(ceil(m), m / ceil(m)) blankets, pass ``n = n_users * ceil(m) + 1`` and
``gamma = m / ceil(m)``: every user's blankets (the victim's included) are slots, which is
Theorem 2 exactly and what Proposition 1 shows tight.  (Theorem 3 states
n' = n_users * ceil(m), one slot fewer: also valid, slightly larger.)

**Computation** is done by the one binomial-divergence engine of the package
(`shuffledp.accounting.dominating_pair`): exact per outcome total, with directed
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

from shuffledp._util.validation import check_nonnegative, check_probability, check_rtol
from shuffledp.accounting._checks import check_n_delta
from shuffledp.accounting._rounding import DEFAULT_RTOL
from shuffledp.accounting.dominating_pair import DominatingPair, PairDivergence, pair_epsilon
from shuffledp.params import VariationRatio


def variation_ratio_epsilon(
    params: VariationRatio, n: int, delta: float, *, gamma: float = 1.0, rtol: float = DEFAULT_RTOL
) -> float:
    """Upper bound on the shuffled epsilon (Theorem 1; Theorem 2 with ``gamma`` < 1).

    The smallest eps on the grid exp(k log(1 + rtol)) with D_{e^eps}(P || Q) <= delta, where
    P = (A + D1, C - A + D2), Q = (A + D2, C - A + D1), C ~ Binom(n - 1, gamma rho),
    rho = 2 beta p / ((p - 1) q) (module docstring).  The result is >= the exact eps of
    the pair, within a relative ``rtol`` (plus float slack) of it, and at most log p.

    Parameters
    ----------
    params : VariationRatio
        The victim's randomizer.
    n : int, in [1, 2^53]
        The victim plus n - 1 blanket slots.
    delta : float, in [1e-300, 1)
    gamma : float, in [0, 1]
        Probability that each blanket slot is used (Theorem 2).
    rtol : float, in [1e-12, 1e-2]
        Relative precision (the grid spacing).

    Returns
    -------
    float
        The epsilon; ``math.inf`` when p = infinity and no eps reaches ``delta``.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range, or (p, beta, q) with rho > 1.

    References
    ----------
    segmented-multimessage-shuffle.txt §3.3 Theorem 1, §5.1.1 Theorem 2, §5.1.2 Lemma 3.

    Examples
    --------
    >>> from shuffledp.params import VariationRatio
    >>> vr = VariationRatio.from_ldp(2.0)
    >>> round(variation_ratio_epsilon(vr, 10_000, 1e-6), 4)
    0.1144
    >>> variation_ratio_epsilon(vr, 10_000, 1e-6, gamma=0.5) > variation_ratio_epsilon(vr, 10_000, 1e-6)
    True
    """
    n, delta = check_n_delta(n, delta)
    return pair_epsilon(DominatingPair.from_params(params, n, gamma), delta, check_rtol(rtol), upper=True)


def variation_ratio_epsilon_lower(
    params: VariationRatio, n: int, delta: float, *, gamma: float = 1.0, rtol: float = DEFAULT_RTOL
) -> float:
    """Lower bound: the true eps of concrete randomizers with parameters (p, beta, q) is above it.

    The pair of `variation_ratio_epsilon` built with beta' = min(beta, q - 1), which
    actual randomizers attain (module docstring), rounded down to the grid.  Equals the
    upper bound up to rounding whenever q >= 1 + beta (always for generic eps0-LDP).

    Parameters
    ----------
    params : VariationRatio
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

    References
    ----------
    segmented-multimessage-shuffle.txt §5.1.3 Proposition 1 (tightness).

    Examples
    --------
    >>> from shuffledp.params import VariationRatio
    >>> vr = VariationRatio.from_ldp(2.0)
    >>> lo, hi = variation_ratio_epsilon_lower(vr, 10_000, 1e-6), variation_ratio_epsilon(vr, 10_000, 1e-6)
    >>> lo <= hi <= lo * (1 + 1e-6)
    True
    """
    n, delta = check_n_delta(n, delta)
    pair = DominatingPair.from_params(params, n, gamma, attainable=True)
    return pair_epsilon(pair, delta, check_rtol(rtol), upper=False)


def hockey_stick_divergence(
    params: VariationRatio, n: int, eps: float, *, gamma: float = 1.0, tail_mass: float = 1e-18
) -> tuple[float, float]:
    """Rigorous (lower, upper) bounds on D_{e^eps}(P || Q) for the Theorem 1/2 pair.

    D_{e^eps}(P || Q) = sum_z max(0, P(z) - e^eps Q(z)).  Counts whose total probability
    is below about ``tail_mass`` may be skipped (their mass is added to the upper bound).

    Parameters
    ----------
    params : VariationRatio
    n : int, in [1, 2^53]
    eps : float, >= 0
    gamma : float, in [0, 1]
    tail_mass : float, in (0, 1)

    Returns
    -------
    (float, float)
        Lower and upper bound, both in [0, 1].

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    segmented-multimessage-shuffle.txt §3.3 Definition 1 and Theorem 1.

    Examples
    --------
    >>> from shuffledp.params import VariationRatio
    >>> lo, hi = hockey_stick_divergence(VariationRatio.from_ldp(2.0), 10_000, 0.1)
    >>> round(hi * 1e6, 3), 0.0 <= hi - lo < 1e-9 * hi
    (6.021, True)
    """
    eps = check_nonnegative(eps, "eps")
    tail_mass = check_probability(tail_mass, "tail_mass")
    return PairDivergence(DominatingPair.from_params(params, n, gamma), tail_mass)(eps)


__all__ = [
    "DEFAULT_RTOL",
    "DominatingPair",
    "hockey_stick_divergence",
    "variation_ratio_epsilon",
    "variation_ratio_epsilon_lower",
]
