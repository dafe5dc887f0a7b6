"""Numerical clone bounds (Feldman, McMillan, Talwar: FOCS 2021 and SODA 2023).

Both reductions dominate the shuffled output of n generic eps0-LDP randomizers by
the pair of two-dimensional counts

    P = (A + D, C - A + 1 - D),    Q = (A + 1 - D, C - A + D),

with C ~ Binom(n - 1, r) "clones" among the other users, A | C ~ Binom(C, 1/2) and
the victim's D ~ Bernoulli(e^eps0 / (e^eps0 + 1)):

* **clones** (FOCS 2021, "Hiding among the clones"): r = e^-eps0;
* **stronger clones** (SODA 2023): r = 2 / (e^eps0 + 1) >= e^-eps0.  The SODA 2023
  errata restricts the paper's *general* decomposition lemma; for eps0-LDP
  randomizers this pair is nevertheless valid: it is exactly the pair of the
  variation-ratio reduction (segmented paper, Theorem 1) at the generic parameters
  p = q = e^eps0, beta = (e^eps0 - 1)/(e^eps0 + 1), where Delta_2 = 1 - Delta_1 and
  2 beta p / ((p - 1) q) = 2 / (e^eps0 + 1).

**Computation.**  Given C = c the second coordinate is c + 1 minus the first, u, and
with b = Binom(c, 1/2) pmf and alpha = e^eps0 / (e^eps0 + 1)

    P(u) - e^eps Q(u) = (alpha - e^eps (1 - alpha)) b(u - 1) + ((1 - alpha) - e^eps alpha) b(u).

Since b(u - 1)/b(u) = u/(c + 1 - u) increases in u, the positive part is the sum over
u >= u*(c), i.e. two Binom(c, 1/2) tails (:func:`scipy.special.betainc`), vectorised
over c and over a batch of candidate epsilons.  Counts c whose total mass is below a
budget (Bernstein's inequality) are skipped and the budget added to delta; every divergence carries a
slack of ``_REL_SLACK`` times the sum of the absolute values of its terms.  Swapping
the two coordinates maps P to Q, so D(P || Q) = D(Q || P) and one direction suffices.
The returned eps is certified (its divergence upper bound is <= delta) and lies
within a relative ``rtol`` above the root found by Brent's method.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, stats

from shuffledp._util.validation import check_epsilon, check_nonnegative, check_positive_int, check_probability, check_rtol
from shuffledp.accounting._binomial import binomial_window, half_binomial_tail

#: Relative error allowed per summed term (Boost betainc / binomial pmf are accurate to ~1e-13).
_REL_SLACK = 1e-10
#: Up to this many other users every clone count c is summed.
_FULL_RANGE = 1_000
DEFAULT_RTOL = 1e-7


class _CloneDivergence:
    """Upper bounds on D_{e^eps}(P || Q) of one clone pair, for batches of eps."""

    def __init__(self, eps0: float, n: int, clone_prob: float, tail_budget: float) -> None:
        self.eps0 = eps0
        self.alpha = 1.0 / (1.0 + math.exp(-eps0))
        trials = n - 1
        if trials <= _FULL_RANGE or clone_prob >= 1.0:
            lo, hi, tail = 0, trials, 0.0
        else:
            lo, hi = binomial_window(trials, clone_prob, tail_budget)
            tail = tail_budget
        self.c = np.arange(lo, hi + 1, dtype=np.float64)
        self.w = stats.binom.pmf(self.c, trials, clone_prob)
        self.tail = tail

    def upper(self, eps: np.ndarray) -> np.ndarray:
        """Certified upper bounds on the divergence at each eps (shape of ``eps``)."""
        eps = np.atleast_1d(np.asarray(eps, dtype=np.float64))
        e = np.exp(eps)[:, None]
        a = self.alpha
        coef_prev = a - e * (1.0 - a)  # multiplies b(u - 1); > 0 iff eps < eps0
        coef_here = (1.0 - a) - e * a  # multiplies b(u); < 0
        c = self.c[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            theta = np.where(coef_prev > 0.0, -coef_here / coef_prev, np.inf)
            # first u with u / (c + 1 - u) > theta
            u_star = np.where(np.isfinite(theta), np.floor(theta / (1.0 + theta) * (c + 1.0)) + 1.0, c + 2.0)
        u_star = np.minimum(u_star, c + 2.0)
        c_b = np.broadcast_to(c, u_star.shape)
        s_prev = half_binomial_tail(u_star - 1.0, c_b)  # sum_{u >= u*} b(u - 1)
        s_here = half_binomial_tail(u_star, c_b)  # sum_{u >= u*} b(u)
        pos = np.where(coef_prev > 0.0, coef_prev, 0.0) * s_prev
        neg = coef_here * s_here
        w = self.w[None, :]
        terms = np.maximum(pos + neg, 0.0) * w
        slack = _REL_SLACK * np.sum((pos - neg) * w, axis=1)
        total = np.sum(terms, axis=1) + slack + self.tail
        return np.minimum(total, 1.0)


def _check(eps0: float, n: int, delta: float, rtol: float) -> tuple[float, int, float, float]:
    eps0, n, delta = check_epsilon(eps0, "eps0"), check_positive_int(n, "n"), check_probability(delta, "delta")
    return eps0, n, delta, check_rtol(rtol)


def _epsilon(eps0: float, n: int, delta: float, clone_prob: float, rtol: float) -> float:
    div = _CloneDivergence(eps0, n, clone_prob, tail_budget=delta * rtol * 1e-2)

    def upper(eps: float) -> float:
        return float(div.upper(np.array([eps]))[0])

    if upper(0.0) <= delta:
        return 0.0
    # D_{e^eps0}(P || Q) = 0 (P <= e^eps0 Q pointwise), so the root lies in (0, eps0].
    root = optimize.brentq(
        lambda e: math.log(max(upper(e), 1e-300)) - math.log(delta), 0.0, eps0, xtol=1e-300, rtol=max(rtol / 4.0, 1e-14)
    )
    hi = min(root * (1.0 + rtol / 2.0), eps0)
    while upper(hi) > delta and hi < eps0:  # certify the returned upper end
        hi = min(hi * (1.0 + rtol / 2.0), eps0)
    return hi


def clone_divergence(eps0: float, n: int, eps: float, *, stronger: bool = False, tail_mass: float = 1e-18) -> float:
    """Certified upper bound on D_{e^eps}(P || Q) of the (stronger) clone pair."""
    eps0, n = check_epsilon(eps0, "eps0"), check_positive_int(n, "n")
    eps = check_nonnegative(eps, "eps")
    div = _CloneDivergence(eps0, n, _clone_prob(eps0, stronger), check_probability(tail_mass, "tail_mass"))
    return float(div.upper(np.array([eps]))[0])


def _clone_prob(eps0: float, stronger: bool) -> float:
    return 2.0 / (math.exp(eps0) + 1.0) if stronger else math.exp(-eps0)


def clone_epsilon(eps0: float, n: int, delta: float, *, rtol: float = DEFAULT_RTOL) -> float:
    """FMT (FOCS 2021) numerical clone bound: clones with probability e^-eps0."""
    eps0, n, delta, rtol = _check(eps0, n, delta, rtol)
    return _epsilon(eps0, n, delta, _clone_prob(eps0, False), rtol)


def stronger_clone_epsilon(eps0: float, n: int, delta: float, *, rtol: float = DEFAULT_RTOL) -> float:
    """FMT (SODA 2023) stronger-clone bound: clones with probability 2/(e^eps0 + 1)."""
    eps0, n, delta, rtol = _check(eps0, n, delta, rtol)
    return _epsilon(eps0, n, delta, _clone_prob(eps0, True), rtol)


def _register() -> None:
    from shuffledp.accounting.bounds import BoundMethod, register_method

    register_method(
        BoundMethod(
            "clones",
            "upper",
            True,
            lambda params, n, delta: clone_epsilon(math.log(params.p), n, delta),
            "Feldman-McMillan-Talwar FOCS 2021, numerical clone bound",
        )
    )
    register_method(
        BoundMethod(
            "stronger-clones",
            "upper",
            True,
            lambda params, n, delta: stronger_clone_epsilon(math.log(params.p), n, delta),
            "Feldman-McMillan-Talwar SODA 2023, stronger clones",
        )
    )


_register()

__all__ = ["DEFAULT_RTOL", "clone_divergence", "clone_epsilon", "stronger_clone_epsilon"]
