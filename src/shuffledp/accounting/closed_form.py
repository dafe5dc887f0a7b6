"""Closed-form amplification upper bounds from the literature.

Each function returns an epsilon such that shuffling ``n`` reports of the local
randomizers is (epsilon, delta)-DP, or ``math.inf`` when the parameters lie outside
the regime in which the cited theorem holds (the regime is stated per function).
The formulas are evaluated in float64 exactly as stated; where a paper leaves a
choice open, the privacy-conservative reading is taken and commented.

* `erlingsson_epsilon` — Erlingsson et al., SODA 2019 (Theorem 7);
* `blanket_hoeffding_epsilon`, `blanket_bennett_epsilon` — Balle et al.,
  "The Privacy Blanket of the Shuffle Model", CRYPTO 2019: the blanket-divergence
  bound with Hoeffding's / Bennett's inequality, for a generic eps0-LDP randomizer;
* `fmt_epsilon` — Feldman, McMillan, Talwar, FOCS 2021 (Theorem 3.1);
* `pic_eq1_epsilon` — Eq. 1 / Theorem 5.2 of the PIC paper (USENIX Security 2025);
* `variation_ratio_closed_form` — the closed form of the variation-ratio
  reduction (Wang et al., VLDB 2024, §4.1; its order is Eq. 1 of the segmented paper).
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._util.validation import check_positive_int, check_probability
from shuffledp.errors import PrivacyParameterError
from shuffledp.params import VariationRatio, check_eps0

#: A blanket delta is accepted at eps only if delta_B(eps) * (1 + _DELTA_SLACK) <= delta
#: (covers the float64 rounding of the few operations in the formulas).
_DELTA_SLACK = 1e-9
#: Relative precision of the epsilons solved from the (implicit) blanket bounds.
_BLANKET_RTOL = 1e-9


def _check(eps0: float, n: int, delta: float) -> tuple[float, int, float]:
    return check_eps0(eps0), check_positive_int(n, "n"), check_probability(delta, "delta")


def erlingsson_epsilon(eps0: float, n: int, delta: float) -> float:
    """Erlingsson et al. (SODA 2019), Theorem 7: eps = 12 eps0 sqrt(log(1/delta) / n).

    Regime: eps0 < 1/2, n >= 1000 and delta < 1/100; ``math.inf`` otherwise.
    (eps0 = 1/2 exactly is excluded: the theorem's hypothesis is strict.)

    Parameters
    ----------
    eps0 : float, in [2^-52, 700]
        Local epsilon of the generic eps0-LDP randomizer.
    n : int, >= 1
        Number of shuffled reports.
    delta : float, in (0, 1)

    Returns
    -------
    float
        The shuffled epsilon, or ``math.inf`` outside the regime.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    Erlingsson, Feldman, Mironov, Raghunathan, Talwar, Thakurta, SODA 2019, Theorem 7
    (not in /work/shared/papers).

    Examples
    --------
    >>> round(erlingsson_epsilon(0.25, 10_000, 1e-6), 4)
    0.1115
    >>> erlingsson_epsilon(0.6, 10_000, 1e-6)
    inf
    """
    eps0, n, delta = _check(eps0, n, delta)
    if not (eps0 < 0.5 and n >= 1000 and delta < 0.01):
        return math.inf
    return 12.0 * eps0 * math.sqrt(math.log(1.0 / delta) / n)


def fmt_epsilon(eps0: float, n: int, delta: float) -> float:
    """Feldman-McMillan-Talwar (FOCS 2021), Theorem 3.1 (the clone reduction's closed form).

    eps = log(1 + (e^eps0 - 1)/(e^eps0 + 1) * (8 sqrt(e^eps0 log(4/delta) / n) + 8 e^eps0 / n)).
    Regime: eps0 <= log(n / (16 log(2/delta))); ``math.inf`` otherwise.

    Parameters
    ----------
    eps0 : float, in [2^-52, 700]
        Local epsilon of the generic eps0-LDP randomizer.
    n : int, >= 1
        Number of shuffled reports.
    delta : float, in (0, 1)

    Returns
    -------
    float
        The shuffled epsilon, or ``math.inf`` outside the regime.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    Feldman, McMillan, Talwar, FOCS 2021, Theorem 3.1 (not in /work/shared/papers).

    Examples
    --------
    >>> round(fmt_epsilon(1.0, 10_000, 1e-6), 4)
    0.214
    """
    eps0, n, delta = _check(eps0, n, delta)
    if eps0 > math.log(n / (16.0 * math.log(2.0 / delta))):
        return math.inf
    e0 = math.exp(eps0)
    return math.log1p(math.tanh(eps0 / 2.0) * (8.0 * math.sqrt(e0 * math.log(4.0 / delta) / n) + 8.0 * e0 / n))


def pic_eq1_epsilon(eps0: float, n: int, delta: float) -> float:
    """Eq. 1 of the PIC paper (Theorem 5.2), the stronger-clone closed form.

    eps = log(1 + (e^eps0 - 1)/(e^eps0 + 1) * (sqrt(32 (e^eps0 + 1) log(4/delta) / n) + 4 (e^eps0 + 1) / n)),
    with ``n`` the number n' of uncorrupted users of the victim's group.
    Regime: n >= 8 (e^eps0 + 1) log(2/delta); ``math.inf`` otherwise.

    Parameters
    ----------
    eps0 : float, in [2^-52, 700]
        Local epsilon of the generic eps0-LDP randomizer.
    n : int, >= 1
        Number of shuffled reports.
    delta : float, in (0, 1)

    Returns
    -------
    float
        The shuffled epsilon eps_c, or ``math.inf`` outside the regime.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    pic-usenix25.txt §5.2 Theorem 5.2, Eq. (1).

    Examples
    --------
    >>> round(pic_eq1_epsilon(2.0, 10_000, 1e-6), 4)
    0.3982
    >>> pic_eq1_epsilon(2.0, 100, 1e-6)
    inf
    """
    eps0, n, delta = _check(eps0, n, delta)
    e1 = math.exp(eps0) + 1.0
    if n < 8.0 * e1 * math.log(2.0 / delta):
        return math.inf
    return math.log1p(math.tanh(eps0 / 2.0) * (math.sqrt(32.0 * e1 * math.log(4.0 / delta) / n) + 4.0 * e1 / n))


def variation_ratio_closed_form(params: VariationRatio, n: int, delta: float) -> float:
    """Closed-form variation-ratio bound (Wang et al., VLDB 2024, §4.1).

    With r = beta p / ((p - 1) q) (the probability that one other user clones either
    of the victim's two inputs, halved), and c = max(0, 4 (1 - 3r) / (9 (1 - 2r))):

        eps = log(1 + beta / ((1 - c)(p + 1) beta / (p - 1) + c)
                      * (sqrt(16 log(4/delta) / (r (n - 1))) + 2 / (r (n - 1)))).

    Regime: n > 8 log(4/delta) / r; ``math.inf`` otherwise.  The segmented paper
    (Eq. 1) quotes only its order sqrt(beta (p - 1) q log(1/delta) / (p n)); the
    constants are those of the reduction's authors.  Conservative readings: q is
    max(q0, q1); for r >= 1/3 the weight c is 0 (the formula's c would be <= 0 for
    1/3 <= r < 1/2 and is meaningless for r >= 1/2), which maximises the
    coefficient.  p = infinity uses the limits beta p/(p - 1) -> beta, (p + 1)/(p - 1) -> 1.

    Parameters
    ----------
    params : VariationRatio
    n : int, >= 1
    delta : float, in (0, 1)

    Returns
    -------
    float
        The shuffled epsilon (0 when beta = 0), or ``math.inf`` outside the regime.

    Raises
    ------
    PrivacyParameterError
        If ``params`` is not a VariationRatio or ``n`` / ``delta`` is out of range.

    References
    ----------
    segmented-multimessage-shuffle.txt §3.3 Eq. (1) (the order); Wang et al., VLDB 2024,
    §4.1 (the constants; not in /work/shared/papers).

    Examples
    --------
    >>> from shuffledp.params import VariationRatio, check_eps0
    >>> round(variation_ratio_closed_form(VariationRatio.from_ldp(2.0), 10_000, 1e-6), 4)
    0.2966
    """
    if not isinstance(params, VariationRatio):
        raise PrivacyParameterError(f"params must be a VariationRatio, got {type(params).__name__}")
    n, delta = check_positive_int(n, "n"), check_probability(delta, "delta")
    p, beta, q = params.p, params.beta, params.q
    if beta == 0.0:
        return 0.0  # (p, 0)-variation: the two inputs' output distributions coincide
    if math.isinf(p):
        r, ratio = beta / q, 1.0
    else:  # beta p / ((p - 1) q) without forming p q (it overflows for eps0 >~ 355)
        r, ratio = beta / (-math.expm1(-math.log(p)) * q), (p + 1.0) / (p - 1.0)
    if r <= 0.0:
        return math.inf
    log4 = math.log(4.0 / delta)
    if not n > 8.0 * log4 / r:
        return math.inf
    c = max(0.0, 4.0 * (1.0 - 3.0 * r) / (9.0 * (1.0 - 2.0 * r))) if r < 1.0 / 3.0 else 0.0
    coef = beta / ((1.0 - c) * ratio * beta + c)
    m = r * (n - 1)
    return math.log1p(coef * (math.sqrt(16.0 * log4 / m) + 2.0 / m))


# --- the privacy blanket (Balle, Bell, Gascon, Nissim, CRYPTO 2019) -------------------------
#
# Every eps0-LDP randomizer is a mixture R(x) = gamma * omega + (1 - gamma) * nu_x with
# gamma >= e^-eps0 (the blanket).  With L = (R(x1)(W) - e^eps R(x1')(W)) / omega(W),
# W ~ omega (mean 1 - e^eps), the shuffled protocol is (eps, delta)-DP for
#     delta = 1/(gamma n) * E_{M ~ Bin(n, gamma)} E[(L_1 + ... + L_M)_+].
# For a generic randomizer the densities R(x)/omega lie in [e^-eps0, e^eps0] (the
# reference statement's generic parameters, used as stated although [gamma, gamma e^eps0]
# would be tighter), so
#     L <= e^eps0 - e^(eps - eps0)               (maximum b+),
#     max L - min L <= (e^eps + 1)(e^eps0 - e^-eps0)   (range b),
#     E[L^2] <= e^eps0 (e^2eps + 1) - 2 e^(eps - 3 eps0).
# Hoeffding's inequality bounds E[(S_m)_+] by b^2/(4a) e^(-2 m a^2 / b^2) (a = e^eps - 1;
# the reference keeps the m = 0 term, which only adds), and Bennett's inequality (in the
# form for X <= b+ with second moment v) by b+/log(1 + a b+/v) e^(-m v/b+^2 phi(a b+/v)),
# phi(u) = (1 + u) log(1 + u) - u.  E over M is closed form: E[e^(-k M)] = (1 - gamma(1 - e^-k))^n.


def _phi(u: np.ndarray) -> np.ndarray:
    """(1 + u) log(1 + u) - u without cancellation for small u.

    Below u = 1e-3 the alternating series u^2/2 - u^3/6 + u^4/12 - u^5/20 is used; a
    partial sum ending with a negative term is a lower bound on phi, so delta (which
    decreases in phi) is never under-estimated.
    """
    small = u < 1e-3
    series = u * u * (0.5 - u / 6.0 + u * u / 12.0 - u**3 / 20.0)
    direct = (1.0 + u) * np.log1p(u) - u
    return np.where(small, series, direct)


def _log_mgf_binomial(k: np.ndarray, n: int, gamma: float) -> np.ndarray:
    """log E[e^(-k M)] for M ~ Bin(n, gamma), k >= 0."""
    return n * np.log1p(gamma * np.expm1(-k))


def blanket_hoeffding_delta(eps: np.ndarray | float, eps0: float, n: int) -> np.ndarray:
    """Blanket delta(eps) with Hoeffding's inequality, generic eps0-LDP randomizer (vectorised in eps).

    delta = b^2/(4 a gamma n) E[e^(-2 M a^2 / b^2)], M ~ Bin(n, gamma), gamma = e^-eps0,
    a = e^eps - 1, b = (e^eps + 1)(e^eps0 - e^-eps0) (derivation above this function).
    Valid for 0 < eps < eps0; returns 1 elsewhere (the bound says nothing there).

    Parameters
    ----------
    eps : float or ndarray
        Central epsilons.
    eps0 : float, in [2^-52, 700]
    n : int, >= 1

    Returns
    -------
    ndarray
        delta(eps), in (0, 1], the shape of ``eps``.

    References
    ----------
    Balle, Bell, Gascon, Nissim, "The Privacy Blanket of the Shuffle Model", CRYPTO 2019
    (not in /work/shared/papers).

    Examples
    --------
    >>> import numpy as np
    >>> d = blanket_hoeffding_delta(np.array([0.5, 1.0, 3.0]), 2.0, 10_000)
    >>> bool(d[0] > d[1]), float(d[2])
    (True, 1.0)
    """
    eps = np.asarray(eps, dtype=np.float64)
    gamma = math.exp(-eps0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # overflow -> inf/nan -> not certified
        a = np.expm1(eps)
        b = (np.exp(eps) + 1.0) * (math.exp(eps0) - math.exp(-eps0))
        log_delta = (
            2.0 * np.log(b) - np.log(4.0 * a) - math.log(gamma * n) + _log_mgf_binomial(2.0 * a * a / (b * b), n, gamma)
        )
        out = np.exp(log_delta)
    return np.where((eps > 0.0) & (eps < eps0), np.minimum(out, 1.0), 1.0)


def blanket_bennett_delta(eps: np.ndarray | float, eps0: float, n: int) -> np.ndarray:
    """Blanket delta(eps) with Bennett's inequality, generic eps0-LDP randomizer (vectorised in eps).

    delta = b+ / (gamma n log(1 + a b+/v)) E[e^(-M v/b+^2 phi(a b+/v)); M >= 1], with
    b+ = e^eps0 - e^(eps - eps0), v = e^eps0 (e^2eps + 1) - 2 e^(eps - 3 eps0),
    phi(u) = (1 + u) log(1 + u) - u.  Valid for 0 < eps < eps0; returns 1 elsewhere.
    M = 0 contributes nothing ((S_0)_+ = 0), so E[e^(-kM); M >= 1] = E[e^(-kM)] - (1 - gamma)^n.

    Parameters
    ----------
    eps : float or ndarray
    eps0 : float, in [2^-52, 700]
    n : int, >= 1

    Returns
    -------
    ndarray
        delta(eps), in (0, 1], the shape of ``eps``.

    References
    ----------
    Balle, Bell, Gascon, Nissim, CRYPTO 2019 (not in /work/shared/papers).

    Examples
    --------
    >>> import numpy as np
    >>> d = blanket_bennett_delta(np.array([0.5, 1.0]), 2.0, 10_000)
    >>> bool(d[0] < blanket_hoeffding_delta(0.5, 2.0, 10_000)), bool(d[1] < 1e-14)
    (True, True)
    """
    eps = np.asarray(eps, dtype=np.float64)
    gamma = math.exp(-eps0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # overflow -> inf/nan -> not certified
        a = np.expm1(eps)
        b_plus = math.exp(eps0) - np.exp(eps - eps0)
        v = math.exp(eps0) * (np.exp(2.0 * eps) + 1.0) - 2.0 * np.exp(eps - 3.0 * eps0)
        u = a * b_plus / v
        k = v / (b_plus * b_plus) * _phi(u)
        # E[e^(-kM)] - (1 - gamma)^n = (1 - gamma)^n expm1(n log1p(gamma e^-k / (1 - gamma))): no cancellation
        # (the plain difference of two numbers near 1 vanished for gamma < 1e-16, i.e. eps0 >~ 37)
        # (in log space: (1 - gamma)^n underflows at small eps0 while the expm1 factor overflows)
        x = n * np.log1p(gamma * np.exp(-k) / (1.0 - gamma))
        log_expm1 = np.where(x > 30.0, x + np.log1p(-np.exp(-x)), np.log(np.expm1(np.minimum(x, 30.0))))
        mgf = np.exp(n * math.log1p(-gamma) + log_expm1)
        out = b_plus / np.log1p(u) * mgf / (gamma * n)
    return np.where((eps > 0.0) & (eps < eps0) & (b_plus > 0.0), np.minimum(out, 1.0), 1.0)


def _smallest_certified_eps(delta_of, eps0: float, delta: float) -> float:
    """Smallest eps in (0, eps0) (to relative _BLANKET_RTOL) with delta_of(eps) <= delta.

    ``delta_of`` need not be monotone: a log grid locates the first certified point,
    then bisection between it and the previous (uncertified) point keeps the upper
    end certified.  Returns ``math.inf`` if no point is certified.
    """

    def ok(e: np.ndarray) -> np.ndarray:
        return delta_of(e) * (1.0 + _DELTA_SLACK) <= delta

    grid = eps0 * np.logspace(-8.0, 0.0, 801)[:-1]
    good = np.flatnonzero(ok(grid))
    if good.size == 0:
        return math.inf
    i = int(good[0])
    hi = float(grid[i])
    lo = float(grid[i - 1]) if i > 0 else 0.0
    while hi - lo > _BLANKET_RTOL * hi:
        mids = np.linspace(lo, hi, 18)[1:-1]
        flags = ok(mids)
        j = int(np.argmax(flags)) if flags.any() else len(mids)
        hi = float(mids[j]) if j < len(mids) else hi
        lo = float(mids[j - 1]) if j > 0 else lo
    return hi


def blanket_hoeffding_epsilon(eps0: float, n: int, delta: float) -> float:
    """Privacy blanket with Hoeffding's inequality (Balle et al. 2019), generic eps0-LDP.

    The smallest eps < eps0 (to relative 1e-9, rounded up) with
    `blanket_hoeffding_delta` (eps) <= ``delta``; ``math.inf`` when no eps < eps0
    is certified (no amplification from this bound).

    Parameters
    ----------
    eps0 : float, in [2^-52, 700]
        Local epsilon of the generic eps0-LDP randomizer.
    n : int, >= 1
        Number of shuffled reports.
    delta : float, in (0, 1)

    Returns
    -------
    float

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    Balle, Bell, Gascon, Nissim, CRYPTO 2019 (not in /work/shared/papers).

    Examples
    --------
    >>> round(blanket_hoeffding_epsilon(2.0, 10_000, 1e-6), 4)
    1.0171
    """
    eps0, n, delta = _check(eps0, n, delta)
    return _smallest_certified_eps(lambda e: blanket_hoeffding_delta(e, eps0, n), eps0, delta)


def blanket_bennett_epsilon(eps0: float, n: int, delta: float) -> float:
    """Privacy blanket with Bennett's inequality (Balle et al. 2019), generic eps0-LDP.

    The smallest eps < eps0 (to relative 1e-9, rounded up) with
    `blanket_bennett_delta` (eps) <= ``delta``; ``math.inf`` when no eps < eps0
    is certified.

    Parameters
    ----------
    eps0 : float, in [2^-52, 700]
        Local epsilon of the generic eps0-LDP randomizer.
    n : int, >= 1
        Number of shuffled reports.
    delta : float, in (0, 1)

    Returns
    -------
    float

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    Balle, Bell, Gascon, Nissim, CRYPTO 2019 (not in /work/shared/papers).

    Examples
    --------
    >>> round(blanket_bennett_epsilon(2.0, 10_000, 1e-6), 4)
    0.5175
    >>> blanket_bennett_epsilon(2.0, 10, 1e-6)
    inf
    """
    eps0, n, delta = _check(eps0, n, delta)
    return _smallest_certified_eps(lambda e: blanket_bennett_delta(e, eps0, n), eps0, delta)


__all__ = [
    "blanket_bennett_delta",
    "blanket_bennett_epsilon",
    "blanket_hoeffding_delta",
    "blanket_hoeffding_epsilon",
    "erlingsson_epsilon",
    "fmt_epsilon",
    "pic_eq1_epsilon",
    "variation_ratio_closed_form",
]
