"""Per-user amplification by shuffling when every user picks their own local budget.

Model (issue 10): every user runs one randomizer family (binary RR, k-RR, Laplace on a
bounded interval) at their own public budget eps_i; the shuffler releases the multiset of
reports.  A victim's central guarantee depends on its own budget and on how much of a
*clone* of the victim each other user can produce.

**Clone reduction, personalized.**  Write the victim's pair as R_v(x0), R_v(x1) (eps_v-DP).
Kairouz-Oh-Viswanath: with a = e^eps_v/(1 + e^eps_v), Q0 = (e^eps_v R_v(x0) - R_v(x1))/(e^eps_v - 1)
and Q1 symmetrically are distributions, R_v(x0) = a Q0 + (1 - a) Q1, R_v(x1) = (1 - a) Q0 + a Q1,
and (Q0 + Q1)/2 = (R_v(x0) + R_v(x1))/2.  If another user j satisfies, for every input x,
R_j(x) >= c_j/2 (R_v(x0) + R_v(x1)) (its *clone capacity* c_j, `clone_capacity`), then
R_j(x) = c_j (Q0 + Q1)/2 + (1 - c_j) L_j(x): user j is independently a fair Q0/Q1 message
with probability c_j.  Given the counts (n0, n1) of Q0 and Q1 messages, the set of clone
users has a law that does not depend on the victim's input, so the shuffled multiset is a
post-processing of P = (A + D1, C - A + D2) vs Q = (A + D2, C - A + D1) with
C ~ PoissonBinomial(c_j : j != victim), A | C ~ Binom(C, 1/2) and (D1, D2) = (1, 0) w.p. a,
(0, 1) otherwise: the clone pair of `dominating_pair` with a Poisson-binomial count
(equal budgets give Binom(n - 1, c): stronger clones for binary RR and k-RR).  Lowering a
c_j drops fair messages at random (post-processing), so any lower bound on c_j is safe.

**Computation.**  The law of C is computed by divide-and-conquer convolution (direct for
short arrays, FFT otherwise) in linear space, with a rigorous absolute error per entry
(|a*b - â*b̂| <= E_a ||b̂||_1 + E_b ||a||_1 plus the round-off of the product, bounded for
the FFT by 10 u log2(N) ||a||_2 ||b||_2, u = 2^-53: the worst-case FFT bound with a wide
margin) and edges trimmed with their mass charged.  Entries whose true value is below the
error floor (~1e-16) are not resolved, which only matters through the charged errors.
The divergence is `PairDivergence.from_count_pmf` (exact, width-1 blocks), epsilon
the certified grid search `solve_epsilon`.

References
----------
personalized-shuffle-eapes.txt §2.3 Fact 2, §3 Lemmas 1-2, Theorems 1-3, §4 Corollaries 1-2;
Feldman, McMillan, Talwar FOCS 2021 / SODA 2023 (clones; not in /work/shared/papers).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy import optimize, special

from shuffledp._util.validation import Interval, check_probability, check_real

# re-exported: their public paths were this module's before the validators and the count law moved out
from shuffledp.accounting._checks import (  # noqa: F401
    FAMILIES,
    MAX_BUDGET,
    MAX_DISTINCT_BUDGETS,
    MIN_BUDGET,
    check_budgets,
    check_delta,
    check_distinct_budgets,
    check_family,
    check_n,
    check_victim_budget,
)
from shuffledp.accounting._checks import check_delta_rtol as _check_common
from shuffledp.accounting._checks import check_others as _others
from shuffledp.accounting._checks import real_array as _real_array
from shuffledp.accounting._count_law import (
    MAX_COUNT_WIDTH,
    CountPmf,
    binomial_count,  # noqa: F401
    poisson_binomial,
)
from shuffledp.accounting._count_law import convolve as _convolve
from shuffledp.accounting._count_law import grouped_law as _grouped_law
from shuffledp.accounting._count_law import leave_one_out as _leave_one_out
from shuffledp.accounting._count_law import tight_window as _tight_window
from shuffledp.accounting._rounding import EPS_CEILING, EPS_RANGE, N_MAX, UNIT_ROUNDOFF, tail_budget
from shuffledp.accounting.dominating_pair import DominatingPair, PairDivergence, solve_epsilon
from shuffledp.errors import PrivacyParameterError, ShapeError

_U = UNIT_ROUNDOFF


# --------------------------------------------------------------------------- clone capacity


def clone_capacity(victim_eps: Any, other_eps: Any, family: str = "binary-rr", k: int | None = None) -> np.ndarray:
    """Largest c with R_other(x) >= c/2 (R_victim(x0) + R_victim(x1)) for all x and x0 != x1.

    * binary RR: (R_v(0) + R_v(1))/2 is the fair bit and R_other(x) puts at least
      1/(1 + e^eps_o) on each bit, so c = 2/(1 + e^eps_o) (independent of eps_v).
    * k-RR: with a_i = 1/(e^eps_i + k - 1), (R_v(x0) + R_v(x1))/2 puts (e^eps_v + 1) a_v/2 on
      x0 and x1 and a_v on each other symbol; R_other(x) puts at least a_o on every symbol
      y != x (and more on y = x).  The binding constraint is y = x0 != x:
      c (e^eps_v + 1) a_v / 2 <= a_o, i.e. c = 2 (e^eps_v + k - 1)/((e^eps_o + k - 1)(e^eps_v + 1))
      (the other symbols need only c <= a_o/a_v, weaker since (e^eps_v + 1)/2 >= 1); k = 2
      gives the binary formula, equal budgets 2/(e^eps + 1).
    * Laplace on an interval of length Delta, scale b_i = Delta/eps_i: inside the interval
      R_o(y|x) >= e^{-eps_o}/(2 b_o) and the victim's mixture is <= 1/(2 b_v), so
      c <= (b_v/b_o) e^{-eps_o}, attained at y at an end; outside it, at distance d,
      the ratio is (b_v/b_o) e^{-eps_o} e^{d (1/b_v - 1/b_o)}: for eps_o <= eps_v it grows with d
      and c = (eps_o/eps_v) e^{-eps_o} (equal budgets: e^-eps, the FOCS 2021 clones); for
      eps_o > eps_v the liberal user's lighter tails cannot imitate the victim's (ratio -> 0)
      and c = 0: such users give no amplification and the victim's bound falls back on
      the other users (at worst its own local eps_v, which always holds).

    The result is rounded down by a few ulps (a smaller capacity is always safe).

    Parameters
    ----------
    victim_eps, other_eps : float or array, in [1e-6, 700] (broadcast)
    family : {"binary-rr", "k-rr", "laplace"}
    k : int, >= 2, for "k-rr"

    Returns
    -------
    ndarray of float in [0, 1]

    Raises
    ------
    PrivacyParameterError, NoCloneBoundError

    Examples
    --------
    >>> import math
    >>> math.isclose(clone_capacity(1.0, 1.0), clone_capacity(1.0, 1.0, "k-rr", k=2), rel_tol=1e-14)
    True
    >>> round(float(clone_capacity(0.5, 1.0, "laplace")), 6), float(clone_capacity(1.0, 0.5, "laplace")) > 0
    (0.0, True)
    """
    check_family(family, k)
    v = check_budgets(victim_eps, "victim_eps")
    o = check_budgets(other_eps, "other_eps")
    if family == "binary-rr":
        c = 2.0 / (1.0 + np.exp(o)) + 0.0 * v
    elif family == "k-rr":  # the formula above as 2/(e^eps_o + k - 1) (1 + (k - 2)/(e^eps_v + 1)): no overflow
        c = 2.0 / (np.exp(o) + k - 1.0) * (1.0 + (k - 2.0) / (np.exp(v) + 1.0))
    else:
        c = np.where(o <= v, o / v * np.exp(-o), 0.0)
    c = np.minimum(c, 1.0) * (1.0 - 8.0 * _U)
    scalar = np.ndim(victim_eps) == 0 and np.ndim(other_eps) == 0
    return c[0] if scalar else c


# --------------------------------------------------------------------------- upper bound


def _count_divergence(victim_eps: float, count: CountPmf) -> PairDivergence:
    pair = DominatingPair.clones(victim_eps, 1, stronger=True)  # only w_same, w_other, w_diff, log_p are used
    return PairDivergence.from_count_pmf(pair, count.pmf, count.err, count.offset, count.missing)


def _solve_upper(victim_eps: float, count: CountPmf, delta: float, rtol: float, guess: float | None = None) -> float:
    div = _count_divergence(victim_eps, _tight_window(count, tail_budget(delta, rtol)))
    cap = div.pair.eps_cap
    if guess is None:
        guess = 2.0 * div.pair.w_diff * math.sqrt(2.0 * math.log(1.0 / delta) / max(count.mu, 1.0))
    return solve_epsilon(div.upper, delta, min(cap, EPS_CEILING), guess, rtol, True, cap=cap)


def _clone_count(
    victim_eps: float, values: np.ndarray, counts: np.ndarray, family: str, k: int | None, cut: float
) -> CountPmf:
    """Law of C: ``counts[j]`` other users at budget ``values[j]``, each a clone w.p. its clone capacity."""
    caps = np.atleast_1d(clone_capacity(victim_eps, values, family, k)) if values.size else np.zeros(0)
    return _grouped_law(caps, counts, cut)


#: Where a victim given as an array is pointed to.
_ALL_VICTIMS = "personalized_shuffle_epsilons(budgets, delta)"
_ALL_VICTIMS_LOWER = "personalized_shuffle_epsilons_lower(budgets, delta)"


def personalized_shuffle_epsilon(
    victim_eps: float,
    others_eps: Sequence[float],
    delta: float,
    family: str = "binary-rr",
    *,
    k: int | None = None,
    rtol: float = 1e-6,
    others_counts: Sequence[int] | None = None,
) -> float:
    """Certified upper bound on the central epsilon of one victim among users with their own budgets.

    Clone pair with C ~ PoissonBinomial(clone_capacity(victim_eps, others_eps)) (module
    docstring), computed exactly up to charged round-off and trimmed mass.

    Parameters
    ----------
    victim_eps : float, in [1e-6, 700]
        The victim's one budget (for every user's bound use `personalized_shuffle_epsilons`).
    others_eps : array of float, in [1e-6, 700]
        Budgets of the other n - 1 users (one per user, or one per group with ``others_counts``).
    delta : float, in [1e-300, 1)
    family : {"binary-rr", "k-rr", "laplace"}
    k : int, for "k-rr" only
    rtol : float, in [1e-12, 1e-2]
        Relative spacing of the epsilon grid (the result is rounded up to it).
    others_counts : array of int >= 0, optional
        Number of other users with each budget of ``others_eps`` (default one each; total < 2^53).
        The clone count's law is built from these groups, never one entry per user.

    Returns
    -------
    float, <= victim_eps (rounded up by one ulp)

    Raises
    ------
    PrivacyParameterError, NoCloneBoundError, ShapeError
        For an argument out of range (no bools or strings), an array ``victim_eps``, or a
        clone count too wide to compute (`MAX_COUNT_WIDTH`).

    Examples
    --------
    >>> from shuffledp.accounting.dominating_pair import DominatingPair, pair_epsilon
    >>> mine = personalized_shuffle_epsilon(1.0, [1.0] * 999, 1e-6)
    >>> ref = pair_epsilon(DominatingPair.clones(1.0, 1000, stronger=True), 1e-6, 1e-6, upper=True)
    >>> abs(mine - ref) <= 2e-6 * ref
    True
    >>> mine == personalized_shuffle_epsilon(1.0, [1.0], 1e-6, others_counts=[999])
    True
    """
    delta, rtol = _check_common(delta, rtol)
    v = check_victim_budget(victim_eps, _ALL_VICTIMS)
    values, counts = _others(others_eps, others_counts)
    check_family(family, k)
    return _solve_upper(v, _clone_count(v, values, counts, family, k, tail_budget(delta, rtol)), delta, rtol)


def personalized_shuffle_epsilons(
    budgets: Sequence[float], delta: float, family: str = "binary-rr", *, k: int | None = None, rtol: float = 1e-6
) -> tuple[np.ndarray, np.ndarray]:
    """Upper bound for every distinct budget of a population (each user the victim in turn).

    For binary RR the capacities do not depend on the victim, so the laws of C for all
    victims come from one product tree over the groups of equal budget (`_leave_one_out`,
    streamed: each law is solved and dropped).

    Parameters
    ----------
    budgets : array of float, in [1e-6, 700], one per user (at least one)
    delta, family, k, rtol : as `personalized_shuffle_epsilon`

    Returns
    -------
    (distinct budgets ascending, their upper bounds)

    Raises
    ------
    PrivacyParameterError, NoCloneBoundError, ShapeError
        For an argument out of range, an empty ``budgets`` or more than
        `MAX_DISTINCT_BUDGETS` distinct budgets.

    Examples
    --------
    >>> b, eps = personalized_shuffle_epsilons([0.5] * 500 + [1.0] * 500, 1e-6)
    >>> b.tolist(), bool(eps[0] < eps[1] < 1.0)
    ([0.5, 1.0], True)
    """
    delta, rtol = _check_common(delta, rtol)
    all_eps = check_budgets(budgets, "budgets", allow_empty=False)
    check_family(family, k)
    values, counts = check_distinct_budgets(all_eps, family=family)
    cut = tail_budget(delta, rtol)
    eps: list[float] = []
    if family == "binary-rr":
        caps = np.atleast_1d(clone_capacity(values[0], values, family))
        for v, cnt in zip(values, _leave_one_out(caps, counts, cut)):  # the previous victim's answer is a close guess
            eps.append(_solve_upper(float(v), cnt, delta, rtol, eps[-1] if eps else None))
    else:
        for i, v in enumerate(values):
            others = counts.copy()
            others[i] -= 1
            eps.append(_solve_upper(float(v), _clone_count(float(v), values, others, family, k, cut), delta, rtol))
    return values, np.asarray(eps)


#: Mass of the clone count that `personalized_shuffle_delta` may trim (charged to the bound).
_DELTA_TAIL = 1e-30


def personalized_shuffle_delta(
    victim_eps: float,
    others_eps: Sequence[float],
    epsilon: float,
    family: str = "binary-rr",
    *,
    k: int | None = None,
    tail_mass: float = _DELTA_TAIL,
    others_counts: Sequence[int] | None = None,
) -> float:
    """Certified upper bound on delta at ``epsilon`` for one victim: the clone pair's divergence.

    The same pair as `personalized_shuffle_epsilon` (C ~ PoissonBinomial of the clone capacities),
    evaluated at a given epsilon; trimmed mass (at most 1e-30) and round-off are added.  0 for
    ``epsilon`` >= ``victim_eps`` (the victim's own pure LDP).

    Parameters
    ----------
    victim_eps : float, in [1e-6, 700]
        The victim's one budget.
    others_eps : array of float, in [1e-6, 700]
    epsilon : float, >= 0
    family : {"binary-rr", "k-rr", "laplace"}
    k : int, for "k-rr" only
    tail_mass : float, in (0, 1)
        The clone-count mass that may be trimmed (and is charged).
    others_counts : array of int >= 0, optional
        As `personalized_shuffle_epsilon`.

    Returns
    -------
    float, in [0, 1]

    Raises
    ------
    PrivacyParameterError, NoCloneBoundError, ShapeError

    Examples
    --------
    >>> eps = personalized_shuffle_epsilon(1.0, [0.5] * 500 + [2.0] * 499, 1e-6)
    >>> personalized_shuffle_delta(1.0, [0.5] * 500 + [2.0] * 499, eps) <= 1e-6
    True
    """
    epsilon = check_real(epsilon, "epsilon")
    if not (math.isfinite(epsilon) and epsilon >= 0.0):
        raise PrivacyParameterError(f"epsilon must be finite and >= 0, got {epsilon!r}")
    return personalized_divergence(
        victim_eps, others_eps, family, k=k, tail_mass=tail_mass, others_counts=others_counts
    )(epsilon)


def personalized_divergence(
    victim_eps: float,
    others_eps: Sequence[float],
    family: str = "binary-rr",
    *,
    k: int | None = None,
    tail_mass: float = _DELTA_TAIL,
    others_counts: Sequence[int] | None = None,
) -> Callable[[float], float]:
    """eps -> `personalized_shuffle_delta` at eps, with the clone count's law computed once.

    Parameters
    ----------
    victim_eps, others_eps, family, k, tail_mass, others_counts
        As `personalized_shuffle_delta`.

    Returns
    -------
    callable
        float eps >= 0 -> certified upper bound on delta(eps).

    Raises
    ------
    PrivacyParameterError, NoCloneBoundError, ShapeError

    Examples
    --------
    >>> div = personalized_divergence(1.0, [0.5] * 999)
    >>> div(0.05) > div(0.1) > div(1.0) == 0.0
    True
    """
    v = check_victim_budget(victim_eps, "one call per victim")
    values, counts = _others(others_eps, others_counts)
    check_family(family, k)
    cut = check_probability(check_real(tail_mass, "tail_mass"), "tail_mass")
    upper = _count_divergence(v, _clone_count(v, values, counts, family, k, cut)).upper
    return lambda eps: 0.0 if eps >= v else upper(eps)


# --------------------------------------------------------------------------- lower bound (binary RR)


def _lower_divergence(victim_eps: float, ones: CountPmf, victim_bit: int):
    """Certified lower bound on D_{e^eps}(K | x_v = victim_bit || K | x_v = 1 - victim_bit), K = V + S.

    The victim's report probabilities come as expit(+-eps) pairs, never as 1 - p: at eps0 >= 37
    1 - p would round to 0 and the bound would exceed the truth.  Each coefficient's own
    round-off (<= 4 u times its operands) is charged.
    """
    flip, keep = float(special.expit(-victim_eps)), float(special.expit(victim_eps))
    # (P[V=1], P[V=0]) under the first input, then under the second
    alpha, not_alpha, beta, not_beta = (keep, flip, flip, keep) if victim_bit else (flip, keep, keep, flip)
    s = np.concatenate((ones.pmf, [0.0]))
    s_prev = np.concatenate(([0.0], ones.pmf))
    err = np.concatenate((ones.err, [0.0]))
    err_prev = np.concatenate(([0.0], ones.err))
    size = s.size

    def divergence(eps: float) -> float:
        e = math.exp(eps)
        a, a_ops = not_alpha - e * not_beta, not_alpha + e * not_beta  # coefficient of S(k)
        c, c_ops = alpha - e * beta, alpha + e * beta  # coefficient of S(k - 1)
        terms = a * s + c * s_prev
        a_mag, c_mag = abs(a) + 4.0 * _U * a_ops, abs(c) + 4.0 * _U * c_ops
        slack = a_mag * err + c_mag * err_prev + 4.0 * _U * (a_ops * s + c_ops * s_prev)
        kept = np.maximum(terms - slack, 0.0)
        total = float(np.sum(kept)) * (1.0 - size * _U) - (a_mag + c_mag) * ones.missing
        return max(total, 0.0)

    return divergence


def _reflect(x: CountPmf) -> CountPmf:
    """The law of T - X on the same window (T = first + last count): shift-free divergences are unchanged."""
    top = 2 * x.offset + x.pmf.size - 1
    return CountPmf(x.offset, x.pmf[::-1].copy(), x.rel, x.abs_err, x.missing, top - x.mu, x.var)


def _ones_law(others: np.ndarray, counts: np.ndarray, inputs: np.ndarray, cut: float) -> CountPmf:
    """Law of the others' count of ones, up to a shift: flips among input-0 users plus minus the flips
    among input-1 users, each flip with probability expit(-eps_j) (never 1 - p, which rounds to 1)."""
    flip = special.expit(-others)
    zeros = _grouped_law(flip[inputs == 0.0], counts[inputs == 0.0], cut / 2.0)
    ones = _grouped_law(flip[inputs == 1.0], counts[inputs == 1.0], cut / 2.0)
    return _convolve(zeros, _reflect(ones))


def personalized_shuffle_epsilon_lower(
    victim_eps: float,
    others_eps: Sequence[float],
    delta: float,
    *,
    others_inputs: Sequence[int] | None = None,
    rtol: float = 1e-6,
    others_counts: Sequence[int] | None = None,
) -> float:
    """Certified lower bound for binary RR: the exact divergence of one neighbouring pair.

    Victim input 0 vs 1, the others' inputs ``others_inputs`` (default all 0).  The shuffled
    multiset of bits is its count of ones K = V + S, S ~ PoissonBinomial(P[R_j(x_j) = 1]),
    computed exactly (up to charged round-off); both directions are tried and the largest
    grid epsilon whose certified divergence exceeds delta returned.

    Parameters
    ----------
    victim_eps : float, in [1e-6, 700]
        The victim's one budget (for every user's bound use `personalized_shuffle_epsilons_lower`).
    others_eps : array of float, in [1e-6, 700]
    delta : float, in [1e-300, 1)
    others_inputs : array of {0, 1} or bool, same length as ``others_eps``
        The other users' bits (strings refused).
    rtol : float, in [1e-12, 1e-2]
    others_counts : array of int >= 0, optional
        Number of other users with each entry of ``others_eps`` (and its input); default one each.

    Returns
    -------
    float

    Raises
    ------
    PrivacyParameterError, ShapeError

    Examples
    --------
    >>> lo = personalized_shuffle_epsilon_lower(1.0, [1.0] * 999, 1e-6)
    >>> hi = personalized_shuffle_epsilon(1.0, [1.0] * 999, 1e-6)
    >>> 0.0 < lo <= hi
    True
    """
    delta, rtol = _check_common(delta, rtol)
    v = check_victim_budget(victim_eps, _ALL_VICTIMS_LOWER)
    o, counts = _others(others_eps, others_counts)
    x = np.zeros(o.size) if others_inputs is None else _real_array(others_inputs, "others_inputs", bits=True).ravel()
    if x.size != o.size:
        raise ShapeError(f"others_inputs must have one bit per entry of others_eps ({o.size}), got {x.size}")
    if not np.all((x == 0.0) | (x == 1.0)):
        raise PrivacyParameterError("others_inputs must contain only 0 and 1")
    return _solve_lower(v, _ones_law(o, counts, x, tail_budget(delta, rtol)), delta, rtol)


def _solve_lower(v: float, ones: CountPmf, delta: float, rtol: float) -> float:
    best = 0.0
    for bit in (0, 1):
        div = _lower_divergence(v, ones, bit)
        best = max(best, solve_epsilon(div, delta, v, 0.1, rtol, False))
    return best


def personalized_shuffle_epsilons_lower(
    budgets: Sequence[float], delta: float, *, rtol: float = 1e-6
) -> tuple[np.ndarray, np.ndarray]:
    """`personalized_shuffle_epsilon_lower` (all inputs 0) for every distinct budget of a population.

    Parameters
    ----------
    budgets : sequence of float, each in [1e-6, 700]
        Every user's local budget (binary RR), at least one.
    delta : float, in [1e-300, 1)
        Target delta.
    rtol : float, in [1e-12, 1e-2]
        Relative precision of the epsilon grid search.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        The distinct budgets (sorted) and, for a victim with each, the certified lower bound
        on its epsilon (the others being all the other users, inputs 0).

    Raises
    ------
    PrivacyParameterError
        For a budget, ``delta`` or ``rtol`` out of range, an empty ``budgets`` or more than
        `MAX_DISTINCT_BUDGETS` distinct budgets.

    References
    ----------
    personalized-shuffle-eapes.txt §3 (the shuffled binary-RR release whose exact divergence
    this bounds from below).

    Examples
    --------
    >>> b, lo = personalized_shuffle_epsilons_lower([0.5] * 500 + [1.0] * 500, 1e-6)
    >>> bool(0.0 < lo[0] < lo[1])
    True
    """
    delta, rtol = _check_common(delta, rtol)
    values, counts = check_distinct_budgets(check_budgets(budgets, "budgets", allow_empty=False))
    probs = 1.0 / (1.0 + np.exp(values))
    ones = _leave_one_out(probs, counts, tail_budget(delta, rtol))  # streamed: each law solved, then dropped
    return values, np.asarray([_solve_lower(float(v), s, delta, rtol) for v, s in zip(values, ones)])


# --------------------------------------------------------------------------- competitors


def _eapes_inputs(eps: Any, deltas: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    """The other users' budgets (at least one) and deltas in [0, 1) (default 0), validated."""
    e = check_budgets(eps, name, allow_empty=False)
    d = np.zeros(e.size) if deltas is None else _real_array(deltas, "deltas").ravel()
    if d.size != e.size:
        raise ShapeError(f"deltas must have one entry per entry of {name} ({e.size}), got {d.size}")
    bad = ~((d >= 0.0) & (d < 1.0))
    if bad.any():
        i = int(np.argmax(bad))
        raise Interval(0.0, 1.0, high_open=True).error(f"deltas[{i}]", float(d[i]))
    return e, d


def _eapes_mu(e: np.ndarray, d: np.ndarray) -> float:
    """mu of validated inputs; math.inf when 2 / sum overflows float64 (no amplification at all)."""
    total = float(np.sum((1.0 - d) / (1.0 + np.exp(e))))
    return math.sqrt(2.0 / total) if total > 2.0 / sys.float_info.max else math.inf


def eapes_mu(eps: Sequence[float], deltas: Sequence[float] | None = None) -> float:
    """mu of E-APES Theorem 3 / Corollaries 1-2: sqrt(2 / sum_i (1 - delta_i)/(1 + e^eps_i)) over the n - 1 others.

    Parameters
    ----------
    eps : array of float, in [1e-6, 700], at least one
        The other users' local budgets.
    deltas : array of float in [0, 1), same length (default 0)

    Returns
    -------
    float
        math.inf if 2 / sum overflows float64.

    Raises
    ------
    PrivacyParameterError, ShapeError

    Examples
    --------
    >>> round(eapes_mu([0.0001] * 200), 4)
    0.1414
    """
    return _eapes_mu(*_eapes_inputs(eps, deltas, "eps"))


def gdp_delta(eps: float, mu: float) -> float:
    """delta(eps) of mu-GDP (E-APES Fact 2): Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).

    Parameters
    ----------
    eps : float, >= 0
        The epsilon at which delta is read.
    mu : float, > 0
        The GDP parameter.

    Returns
    -------
    float
        delta(eps) in [0, 1).

    Raises
    ------
    PrivacyParameterError
        For ``eps`` or ``mu`` out of range or not a number (no bools or strings).

    References
    ----------
    personalized-shuffle-eapes.txt §2.3, Fact 2.

    Examples
    --------
    At eps = 0 this is the total variation of N(0, 1) and N(mu, 1), 2 Phi(mu/2) - 1:

    >>> from scipy.stats import norm
    >>> abs(gdp_delta(0.0, 1.0) - float(2 * norm.cdf(0.5) - 1)) < 1e-15
    True
    >>> gdp_delta(1.0, 1.0) < gdp_delta(0.5, 1.0)
    True
    """
    eps, mu = EPS_RANGE.check(eps, "eps"), Interval(0.0, low_open=True).check(mu, "mu")
    return float(special.ndtr(-eps / mu + mu / 2.0) - math.exp(eps) * special.ndtr(-eps / mu - mu / 2.0))


def eapes_epsilon(
    others_eps: Sequence[float],
    delta: float,
    *,
    others_deltas: Sequence[float] | None = None,
    berry_esseen: float | None = None,
) -> float:
    """E-APES (eps, delta) of Theorem 3 via the mu-GDP conversion (an approximation, not a bound).

    The paper leaves the Berry-Esseen constant C of Lemma 3 unspecified and drops it
    ("gamma ... can be negligible"), so by default the trade-off is taken as
    delta_max (1 - alpha) + (1 - delta_max) G_mu(alpha): the central-limit approximation.
    With a constant C supplied, the term g = C / sqrt(n - 1) is kept: the trade-off
    G_mu(alpha + g) - g has delta(eps) = delta_mu(eps) + g (1 + e^eps), which shows its size.
    With delta_max > 0 the mixture gives delta(eps) = (1 - delta_max) delta'(eps'),
    e^eps' = (e^eps - delta_max)/(1 - delta_max).  The victim's own budget does not enter
    (the paper's Theorem 1 treats the victim's message as revealing).

    Parameters
    ----------
    others_eps : array of float, in [1e-6, 700], at least one
    delta : float, in [1e-300, 1)
    others_deltas : array of float in [0, 1), optional
    berry_esseen : float, >= 0, optional
        The constant C of Lemma 3.

    Returns
    -------
    float
        math.inf when no epsilon up to 700 reaches delta (the Berry-Esseen term alone exceeds
        it, or mu is so large, e.g. others at budgets near 700, that delta_mu stays above it).

    Raises
    ------
    PrivacyParameterError, ShapeError

    Examples
    --------
    >>> eps = eapes_epsilon([1.0] * 9999, 1e-6)
    >>> mu = eapes_mu([1.0] * 9999)
    >>> abs(gdp_delta(eps, mu) - 1e-6) < 1e-12
    True
    """
    delta = check_delta(check_real(delta, "delta"))
    e, d = _eapes_inputs(others_eps, others_deltas, "others_eps")
    mu = _eapes_mu(e, d)
    if mu == math.inf:
        return math.inf
    d_max = float(np.max(d))
    g = 0.0
    if berry_esseen is not None:
        c = check_real(berry_esseen, "berry_esseen")
        if not (math.isfinite(c) and c >= 0.0):
            raise PrivacyParameterError(f"berry_esseen must be finite and >= 0, got {berry_esseen!r}")
        g = c / math.sqrt(e.size)
    target = delta / (1.0 - d_max)

    def excess(eps_p: float) -> float:
        return gdp_delta(eps_p, mu) + g * (1.0 + math.exp(eps_p)) - target

    if excess(0.0) <= 0.0:
        eps_p = 0.0
    else:
        hi = 1.0
        while excess(hi) > 0.0:
            hi *= 2.0
            if hi > EPS_CEILING or g * (1.0 + math.exp(hi)) > target:
                return math.inf
        eps_p = optimize.brentq(excess, 0.0, hi, xtol=1e-15, rtol=1e-14)
    return math.log((1.0 - d_max) * math.exp(eps_p) + d_max)


def weakest_budget_epsilon(
    n: int,
    budgets: Sequence[float],
    delta: float,
    family: str = "binary-rr",
    *,
    k: int | None = None,
    rtol: float = 1e-6,
) -> float:
    """Everyone charged at the weakest budget: the homogeneous clone bound at max(budgets) for n users.

    A baseline, valid for every user of a binary-RR or k-RR population (a smaller budget never
    raises the divergence); for "laplace" it is not proven for users below max(budgets), whose
    Laplace tails the others cannot imitate (see `clone_capacity`).

    Parameters
    ----------
    n : int, in [len(budgets), 2^53]
        Number of users (a bool or a string is refused).
    budgets : sequence of float, each in [1e-6, 700], at least one
        The users' local budgets; only the largest is used.
    delta : float, in [1e-300, 1)
        Target delta.
    family : {"binary-rr", "k-rr", "laplace"}
        The randomizer family.
    k : int, >= 2, for "k-rr"
        Alphabet size.
    rtol : float, in [1e-12, 1e-2]
        Relative precision of the epsilon grid search.

    Returns
    -------
    float
        `personalized_shuffle_epsilon` of a victim at max(budgets) among n - 1 others at
        max(budgets).

    Raises
    ------
    PrivacyParameterError
        For ``n`` or another argument out of range, or a clone count too wide to compute.
    NoCloneBoundError
        For a family without a clone bound.

    References
    ----------
    personalized-shuffle-eapes.txt §4 (the baseline that ignores personalization).

    Examples
    --------
    >>> weakest_budget_epsilon(1000, [0.5, 1.0], 1e-6) == personalized_shuffle_epsilon(1.0, [1.0] * 999, 1e-6)
    True
    """
    b = check_budgets(budgets, "budgets", allow_empty=False)
    n = check_n(n)
    if n < b.size:
        raise Interval(b.size, N_MAX, integer=True).error("n", n, f"at least the number of budgets, {b.size}")
    eps_max = float(np.max(b))
    return personalized_shuffle_epsilon(eps_max, [eps_max], delta, family, k=k, rtol=rtol, others_counts=[n - 1])


#: Liu et al. 2023 (APES / "EoN") is cited by the E-APES paper but its normal-approximation
#: formula is not stated there, and we do not have the paper: no implementation.
LIU_2023_AVAILABLE = False

__all__ = [
    "FAMILIES",
    "MAX_BUDGET",
    "MAX_COUNT_WIDTH",
    "MIN_BUDGET",
    "CountPmf",
    "clone_capacity",
    "eapes_epsilon",
    "eapes_mu",
    "gdp_delta",
    "personalized_divergence",
    "personalized_shuffle_delta",
    "personalized_shuffle_epsilon",
    "personalized_shuffle_epsilon_lower",
    "personalized_shuffle_epsilons",
    "personalized_shuffle_epsilons_lower",
    "poisson_binomial",
    "weakest_budget_epsilon",
]
