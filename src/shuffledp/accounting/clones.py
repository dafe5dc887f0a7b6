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

**Computation** is the package's one binomial-divergence engine
(`shuffledp.accounting.dominating_pair`, `DominatingPair.clones`): the clone
pair is the engine's pair with w_same = e^eps0/(e^eps0 + 1), w_other = 1 - w_same and no
"none" message.  The returned eps is certified (its divergence upper bound is <= delta),
at most eps0, and snapped up to the grid exp(k log(1 + rtol)).
"""

from __future__ import annotations

from shuffledp._util.validation import check_nonnegative, check_probability, check_rtol
from shuffledp.accounting._checks import check_n_delta
from shuffledp.accounting._rounding import DEFAULT_RTOL
from shuffledp.accounting.dominating_pair import (
    DominatingPair,
    PairDivergence,
    pair_epsilon,
)
from shuffledp.params import check_eps0


def clone_divergence(eps0: float, n: int, eps: float, *, stronger: bool = False, tail_mass: float = 1e-18) -> float:
    """Certified upper bound on D_{e^eps}(P || Q) of the (stronger) clone pair.

    P = (A + D, C - A + 1 - D), Q = (A + 1 - D, C - A + D), C ~ Binom(n - 1, r),
    r = e^-eps0 (clones) or 2/(e^eps0 + 1) (stronger), D ~ Bernoulli(e^eps0/(e^eps0 + 1)).

    Parameters
    ----------
    eps0 : float, in [1e-6, 700]
    n : int, in [1, 2^53]
    eps : float, >= 0
    stronger : bool
    tail_mass : float, in (0, 1)
        Mass of the clone count that may be skipped (and is added).

    Returns
    -------
    float, in [0, 1]

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    Feldman, McMillan, Talwar FOCS 2021 / SODA 2023 (not in /work/shared/papers);
    segmented-multimessage-shuffle.txt §3.3 Theorem 1 at p = q = e^eps0 (stronger clones).

    Examples
    --------
    >>> clone_divergence(2.0, 10_000, 0.2) < 1e-8 < clone_divergence(2.0, 10_000, 0.1)
    True
    """
    pair = DominatingPair.clones(check_eps0(eps0), n, stronger=stronger)
    eps = check_nonnegative(eps, "eps")
    return PairDivergence(pair, check_probability(tail_mass, "tail_mass")).upper(eps)


def _epsilon(eps0: float, n: int, delta: float, rtol: float, stronger: bool) -> float:
    eps0 = check_eps0(eps0)
    n, delta = check_n_delta(n, delta)
    return pair_epsilon(DominatingPair.clones(eps0, n, stronger=stronger), delta, check_rtol(rtol), upper=True)


def clone_epsilon(eps0: float, n: int, delta: float, *, rtol: float = DEFAULT_RTOL) -> float:
    """FMT (FOCS 2021) numerical clone bound: clones with probability e^-eps0.

    Smallest grid eps exp(k log(1 + rtol)) whose `clone_divergence` is <= delta.

    Parameters
    ----------
    eps0 : float, in [1e-6, 700]
    n : int, in [1, 2^53]
    delta : float, in [1e-300, 1)
    rtol : float, in [1e-12, 1e-2]

    Returns
    -------
    float, at most eps0

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    Feldman, McMillan, Talwar, "Hiding among the clones", FOCS 2021 (not in /work/shared/papers).

    Examples
    --------
    >>> round(clone_epsilon(2.0, 10_000, 1e-6), 4)
    0.155
    """
    return _epsilon(eps0, n, delta, rtol, stronger=False)


def stronger_clone_epsilon(eps0: float, n: int, delta: float, *, rtol: float = DEFAULT_RTOL) -> float:
    """FMT (SODA 2023) stronger-clone bound: clones with probability 2/(e^eps0 + 1).

    Equal to the variation-ratio bound at the generic eps0-LDP parameters (module docstring).

    Parameters
    ----------
    eps0 : float, in [1e-6, 700]
    n : int, in [1, 2^53]
    delta : float, in [1e-300, 1)
    rtol : float, in [1e-12, 1e-2]

    Returns
    -------
    float, at most eps0

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    Feldman, McMillan, Talwar, SODA 2023 (not in /work/shared/papers); its closed form is
    pic-usenix25.txt §5.2 Eq. (1).

    Examples
    --------
    >>> round(stronger_clone_epsilon(2.0, 10_000, 1e-6), 4)
    0.1144
    >>> stronger_clone_epsilon(2.0, 10_000, 1e-6) <= clone_epsilon(2.0, 10_000, 1e-6)
    True
    """
    return _epsilon(eps0, n, delta, rtol, stronger=True)


__all__ = ["DEFAULT_RTOL", "clone_divergence", "clone_epsilon", "stronger_clone_epsilon"]
