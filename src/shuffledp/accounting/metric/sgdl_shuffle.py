"""SGDL-Shuffle (metric paper §5, Lemma C.1, Theorem 7.2): c (Lemma C.1, see `sgdl_shuffle_c` for why the
paper's value is not used as is); a certified epsilon (the default, `sgdl_shuffle_certified_epsilon`) beside
Theorem 5.1's claim, and its inverse (`sgdl_shuffle_noise_epsilon`); Theorem 7.2 (compromised shuffler).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import stats

from shuffledp._util.validation import check_positive_int
from shuffledp.accounting._checks import check_delta, check_n
from shuffledp.accounting._solve import feasible_edge
from shuffledp.accounting.metric._common import (
    DEFAULT_MAX_DISTANCE,
    INVERSE_RTOL,
    MAX_EPSILON,
    MAX_INVERSE_STEPS,
    CertifiedEpsilon,
    ShiftLaw,
    check_noise_epsilon,
)
from shuffledp.accounting.metric._common import certificate_margin as _certificate_margin
from shuffledp.accounting.metric._common import certified_shift_epsilon as _certified_shift_epsilon
from shuffledp.accounting.metric._common import check_convolution_size as _check_convolution_size
from shuffledp.accounting.metric._common import check_method as _check_method
from shuffledp.accounting.metric._common import convolution_power as _convolution_power
from shuffledp.accounting.metric._common import distance_epsilons as _distance_epsilons
from shuffledp.accounting.metric._common import distances as _distances
from shuffledp.accounting.metric._common import no_smaller_reason as _no_smaller_reason
from shuffledp.accounting.metric._common import shift_law as _shift_law
from shuffledp.accounting.metric._common import tail_share as _tail_share
from shuffledp.accounting.metric._common import too_costly as _too_costly
from shuffledp.accounting.metric._exhaustive import cached_profile, exact_reason, exhaustive_applies
from shuffledp.accounting.metric.sgdl import log_sgdl_pmf, sgdl_pmf
from shuffledp.errors import PrivacyParameterError

# --- SGDL-Shuffle (§5, Lemma C.1, Theorem 7.2) -----------------------------------------------------------


def sgdl_shuffle_c_paper(epsilon: float, delta: float, n: int) -> int:
    """Lemma C.1 as printed: c = ceil(u (1 - e^-eps) / n), u = 1 + (sqrt(w(w-4)) - w)/2,
    w = 2 n ln((1 - (1 - delta)^(1/n)) / 2).  Not a valid bound (see `sgdl_shuffle_c`).

    Parameters
    ----------
    epsilon : float, > 0
        Target shuffle-model epsilon.
    delta : float, in (0, 1)
        Target delta.
    n : int, >= 1
        Number of users.

    Returns
    -------
    int
        The paper's c.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt Appendix C, Lemma C.1.

    Examples
    --------
    >>> sgdl_shuffle_c_paper(0.1, 1e-4, 100) <= sgdl_shuffle_c(0.1, 1e-4, 100)
    True
    """
    epsilon, delta, n = check_noise_epsilon(epsilon, "epsilon"), check_delta(delta), check_n(n)
    w = 2.0 * n * (math.log(_tail_share(delta, n)) - math.log(2.0))
    u = 1.0 + (math.sqrt(w * (w - 4.0)) - w) / 2.0
    return math.ceil(u * -math.expm1(-epsilon) / n)


def sgdl_shuffle_c(epsilon: float, delta: float, n: int) -> int:
    """Padding c of SGDL-Shuffle: the smallest c >= the paper's with 1 - Pr[all |N_i| <= c] <= delta.

    Lemma C.1 uses b q = (1 - e^-eps)/n as the mean of NB(1/n, 1 - e^-eps), whose mean is
    e^-eps / (n (1 - e^-eps)); its c is far too small for small eps (at n = 100, eps = 0.1,
    delta = 1e-4 it is 3, and some user truncates with probability ~0.8).  Privacy-conservative
    reading: keep the lemma's argument (|N_i| > c needs one of the two NB(1/n, 1 - e^-eps) parts
    above c; union over users) with the exact NB tail: 2 Pr[NB > c] <= 1 - (1 - delta)^(1/n).
    The paper's c is kept when larger.

    Parameters
    ----------
    epsilon : float, > 0
        Target shuffle-model epsilon.
    delta : float, in (0, 1)
        Target delta.
    n : int, >= 1
        Number of users.

    Returns
    -------
    int
        c >= 0.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §5 and Appendix C, Lemma C.1.

    Examples
    --------
    >>> sgdl_shuffle_c(0.1, 1e-4, 100), sgdl_shuffle_c_paper(0.1, 1e-4, 100)
    (78, 3)

    The exact NB tail at c meets the per-user share:

    >>> from scipy import stats
    >>> c = sgdl_shuffle_c(0.1, 1e-4, 100)
    >>> tail = stats.nbinom(1 / 100, 1 - math.exp(-0.1)).sf(c)
    >>> bool(2 * tail <= 1 - (1 - 1e-4) ** (1 / 100))
    True
    """
    epsilon, delta, n = check_noise_epsilon(epsilon, "epsilon"), check_delta(delta), check_n(n)
    share = _tail_share(delta, n) / 2.0
    success = -math.expm1(-epsilon)
    dist = stats.nbinom(1.0 / n, success)
    # the tail decays like e^-eps per step: bracket, then bisect on integers
    lo, hi = 0, 1
    while 2.0 * dist.sf(hi) > 2.0 * share * (1.0 - 1e-12):
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if 2.0 * dist.sf(mid) > 2.0 * share * (1.0 - 1e-12) else (lo, mid)
    exact = 0 if dist.sf(0) <= share * (1.0 - 1e-12) else hi
    return max(exact, sgdl_shuffle_c_paper(epsilon, delta, n))


def sgdl_shuffle_epsilon_paper(epsilon: float, delta: float, n: int) -> float:
    """Theorem 5.1 as printed: SGDL-Shuffle(eps, delta, n) is (eps, delta)-d_X-private.  NOT a valid bound in general.

    The proof conditions on H = "no |N_i| exceeds c" (Proposition 3) and then treats the sum of the noises as
    Geo-Central's SGDL(1, e^-eps); conditioned on H it is not (its support is [-n c, n c]), and without the
    conditioning the truncation at 0 and k + 2c separates datasets far apart (all zeros against all k, see
    `sgdl_shuffle_certified_epsilon`).  Kept to reproduce the paper (``method="theorem-5.1"``).

    Parameters
    ----------
    epsilon : float, > 0
        The protocol's parameter eps.
    delta : float, in (0, 1)
        Target delta (it sets c, not epsilon).
    n : int, >= 1
        Number of users.

    Returns
    -------
    float
        ``epsilon``.

    Raises
    ------
    PrivacyParameterError
        For ``epsilon`` out of range.

    References
    ----------
    metric-privacy-shuffler.txt §5, Theorem 5.1; Appendix C.

    Examples
    --------
    >>> sgdl_shuffle_epsilon_paper(0.3, 1e-4, 100)
    0.3
    """
    return check_noise_epsilon(epsilon, "epsilon")


# --- SGDL-Shuffle, certified ------------------------------------------------------------------------------
#
# The analyst sees sum_i clip(x_i + N_i + c, 0, k + 2c) (Proposition 1), N_i ~ SGDL(1/n, e^-eps); its law depends
# on the whole dataset through the truncation, so the exact worst pair is out of reach beyond tiny cases.  What
# holds (the same reading as Geo-Shuffle's certified epsilon):
#   * always: every report is post-processing of x + N, and SGDL(beta, p) for beta <= 1 is log-convex on
#     m >= 0 (a sum over j of NB(j + m) NB(j), each log-convex in m since NB(beta) is for beta <= 1), so the
#     unit-step ratio pmf(m)/pmf(m + 1) is largest at m = 0: x + N is (eps_u, 0)-d_R-private with
#     eps_u = ln(pmf(0)/pmf(1)), and the release is (eps_u, 0)-d_X-private (`sgdl_shuffle_report_epsilon`;
#     eps_u = eps for n = 1, and grows like ln n);
#   * at sum distance D: (eps, delta_1 + Pr[H] D_{e^(eps D)}(T + D || T)), H = every |N_i| <= c (independent of
#     the data; delta_1 = 1 - Pr[H] <= 1 - (1 - 2 Pr[NB(1/n, 1 - e^-eps) > c])^n, Lemma C.1's union), T the sum
#     of the n noises each conditioned on [-c, c] (Proposition 3 with the conditioned mechanism).  T is not
#     Geo-Central's SGDL(1, e^-eps): its support is [-n c, n c], so nothing is certified once n k > 2 n c, and
#     `sgdl_shuffle_c` spends all of delta on delta_1, leaving only its rounding margin for the divergence.
# The certified epsilon is the smallest eps <= eps_u meeting delta at every D = 1..n k, else eps_u.  A larger
# padding ``c`` (k <= 2c and delta_1 well below delta) is what makes the second analysis bite.


def sgdl_shuffle_report_epsilon(epsilon: float, n: int) -> float:
    """eps_u = ln(pmf(0) / pmf(1)) of SGDL(1/n, e^-eps): each SGDL-Shuffle report is (eps_u, 0)-d_R-private.

    So SGDL-Shuffle is (eps_u, 0)-d_X-private whether the shuffler is trusted or not (see the comment above:
    log-convexity puts the largest unit-step loss at 0).  Rounded upward (relative 1e-9).

    Parameters
    ----------
    epsilon : float, > 0
        The protocol's parameter eps.
    n : int, >= 1
        Number of users.

    Returns
    -------
    float
        eps_u >= eps.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §5.1 (SGDL(1/n, e^-eps) noise), §7 Theorem 7.2 (its d = 1 term).

    Examples
    --------
    >>> round(sgdl_shuffle_report_epsilon(0.5, 1), 6), round(sgdl_shuffle_report_epsilon(0.5, 100), 4)
    (0.5, 5.1031)
    """
    epsilon, n = check_noise_epsilon(epsilon, "epsilon"), check_n(n)
    logs = log_sgdl_pmf(np.array([0, 1]), 1.0 / n, math.exp(-epsilon))
    return float(logs[0] - logs[1]) * (1.0 + 1e-9)


#: The methods of `sgdl_shuffle_epsilon`.
SGDL_SHUFFLE_METHODS = ("certified", "theorem-5.1")


def sgdl_shuffle_conditioned_noise(epsilon: float, c: int, n: int) -> tuple[np.ndarray, float]:
    """T's pmf on -n c .. n c (the sum of n SGDL(1/n, e^-eps) draws each conditioned on [-c, c]) and an upper
    bound on delta_1 = 1 - Pr[H] (H = every |N_i| <= c): 1 - (1 - 2 Pr[NB(1/n, 1 - e^-eps) > c])^n.

    Parameters
    ----------
    epsilon : float, > 0
        The protocol's parameter eps.
    c : int, >= 0
        The padding.
    n : int, >= 1
        Number of users.

    Returns
    -------
    (numpy.ndarray, float)
        T's pmf (length 2 n c + 1) and the bound on delta_1.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range, or when 2 (c + 1)^2 n^2 exceeds 4e8 multiply-adds (the limit is named).

    References
    ----------
    metric-privacy-shuffler.txt §5.2, Lemma C.1, Proposition 3.

    Examples
    --------
    >>> pmf, delta_1 = sgdl_shuffle_conditioned_noise(1.0, 3, 4)
    >>> pmf.size, round(float(pmf.sum()), 12), bool(np.allclose(pmf, pmf[::-1])), 0 < delta_1 < 1
    (25, 1.0, True, True)
    """
    epsilon, n = check_noise_epsilon(epsilon, "epsilon"), check_n(n)
    c = check_positive_int(c, "c", minimum=0)
    _check_convolution_size(c, n)
    return _convolution_power(_user_law(epsilon, c, n), n), _delta_1(epsilon, c, n)


def _user_law(epsilon: float, c: int, n: int) -> np.ndarray:
    """One user's noise SGDL(1/n, e^-eps) conditioned on [-c, c]."""
    one = sgdl_pmf(np.arange(-c, c + 1), 1.0 / n, math.exp(-epsilon))
    return one / one.sum()


def _delta_1(epsilon: float, c: int, n: int) -> float:
    """The bound 1 - (1 - 2 Pr[NB(1/n, 1 - e^-eps) > c])^n on 1 - Pr[H]."""
    tail = min(1.0, 2.0 * float(stats.nbinom(1.0 / n, -math.expm1(-epsilon)).sf(c)) * (1.0 + 1e-9))
    return 1.0 if tail >= 1.0 else -math.expm1(n * math.log1p(-tail))


def _sgdl_shuffle_noise_law(epsilon: float, c: int, n: int, largest_shift: int) -> tuple[ShiftLaw, float]:
    """(bounds of T's pmf for the shift checks up to ``largest_shift``, `_common.shift_law`; the bound on delta_1):
    what `sgdl_shuffle_conditioned_noise` computes, with T's left tail from log space where it underflows."""
    return _shift_law(_user_law(epsilon, c, n), n, largest_shift), _delta_1(epsilon, c, n)


def sgdl_shuffle_certified_epsilon(
    epsilon: float, delta: float, n: int, k: int | None, *, c: int | None = None
) -> float:
    """The privacy-conservative SGDL-Shuffle epsilon: (eps, delta)-d_X-private for *every* pair of datasets.

    The smallest eps <= eps_u (`sgdl_shuffle_report_epsilon`) with delta_1 + D_{e^(eps D)}(T + D || T) <= delta at
    every sum distance D = 1..n k (see the comment above this function in the source), else eps_u; eps_u when
    ``k`` is None (unbounded values), when n k > 2 n c, or when T is too costly to convolve.  Every rounding errs
    upward.  With the protocol's c (`sgdl_shuffle_c`, the default) delta_1 takes nearly all of delta.

    Parameters
    ----------
    epsilon : float, > 0
        The protocol's parameter eps.
    delta : float, in (0, 1)
        Target delta.
    n : int, >= 1
        Number of users.
    k : int >= 1 or None
        Largest value (values in {0..k}); None for unbounded values.
    c : int >= 0, optional
        The padding (default `sgdl_shuffle_c`, as Algorithm 4 with the exact tail).

    Returns
    -------
    float
        The certified epsilon, at most eps_u.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §5, Definition 4, Proposition 3, Lemma C.1 (a conservative replacement of
    Theorem 5.1).

    Examples
    --------
    At the paper's k = 1000 (k > 2c) only the per-report bound survives; a small domain with generous
    padding certifies much less:

    >>> sgdl_shuffle_certified_epsilon(0.5, 1e-4, 100, 1000) == sgdl_shuffle_report_epsilon(0.5, 100)
    True
    >>> round(sgdl_shuffle_certified_epsilon(1.0, 1e-4, 10, 4, c=20), 4), round(sgdl_shuffle_report_epsilon(1.0, 10), 4)
    (1.0513, 3.2962)
    """
    return sgdl_shuffle_certificate(epsilon, delta, n, k, c=c).epsilon


def sgdl_shuffle_certificate(
    epsilon: float, delta: float, n: int, k: int | None, *, c: int | None = None
) -> CertifiedEpsilon:
    """`sgdl_shuffle_certified_epsilon` with where it comes from: ``(epsilon, certified, reason)``.

    ``certified`` is False when ``epsilon`` is the per-report eps_u (`sgdl_shuffle_report_epsilon`): values
    unbounded, k > 2c, T or the divergence search beyond its limit (not attempted, `_common.too_costly`),
    delta_1 >= delta, or no smaller eps.

    Parameters
    ----------
    epsilon : float, in (0, MAX_EPSILON]
        The protocol's parameter eps.
    delta : float, in (0, 1)
        Target delta.
    n : int, >= 1
        Number of users.
    k : int >= 1 or None
        Largest value; None for unbounded values.
    c : int >= 0, optional
        The padding (default `sgdl_shuffle_c`).

    Returns
    -------
    CertifiedEpsilon
        ``(epsilon, certified, reason)``.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §5, Definition 4, Proposition 3, Lemma C.1.

    Examples
    --------
    >>> sgdl_shuffle_certificate(1.0, 1e-4, 10, 4, c=20).certified, sgdl_shuffle_certificate(0.5, 1e-4, 100, 1000).certified
    (True, False)
    """
    epsilon, delta, n = check_noise_epsilon(epsilon, "epsilon"), check_delta(delta), check_n(n)
    report = sgdl_shuffle_report_epsilon(epsilon, n)
    fallback = "the per-report bound eps_u = ln(pmf(0)/pmf(1))"
    if k is None:
        return CertifiedEpsilon(report, False, f"values unbounded (no k): {fallback}")
    k = check_positive_int(k, "k (largest value)")
    c = sgdl_shuffle_c(epsilon, delta, n) if c is None else check_positive_int(c, "c", minimum=0)
    if exhaustive_applies(n, k, c, delta):  # every pair of datasets, on the clamped laws: exact
        profile, (worst_a, worst_b) = cached_profile("sgdl", epsilon, delta, n, k, c)
        exact = float(profile.max())
        if exact < report:
            return CertifiedEpsilon(
                exact,
                True,
                exact_reason(worst_a, worst_b),
            )
        return CertifiedEpsilon(report, False, f"exact over every pair of datasets: no gain below eps_u: {fallback}")
    if n * k > 2 * n * c:
        return CertifiedEpsilon(report, False, f"k={k} > 2c={2 * c}: the conditioned noises' supports part, {fallback}")
    costly = _too_costly(c, n, k, fallback, lambda: _user_law(epsilon, c, n))
    if costly is not None:
        return CertifiedEpsilon(report, False, costly)
    law, delta_1 = _sgdl_shuffle_noise_law(epsilon, c, n, n * k)
    budget = delta - delta_1  # Pr[H] <= 1 multiplies the divergence
    if not budget > 0.0:
        return CertifiedEpsilon(
            report, False, f"delta_1 = {delta_1:.3g} (some noise beyond c) leaves no delta: {fallback}"
        )
    eps = _certified_shift_epsilon(law, budget, np.arange(1, n * k + 1))
    if not eps < report:
        return CertifiedEpsilon(report, False, f"{_no_smaller_reason(law, n * k, 'eps_u', budget)}: {fallback}")
    return CertifiedEpsilon(eps, True, f"certified: delta met at every sum distance D = 1..{n * k}")


def sgdl_shuffle_noise_epsilon(
    target_epsilon: float,
    delta: float,
    n: int,
    k: int,
    *,
    max_epsilon: float = MAX_EPSILON,
    progress: Callable[[int, int], None] | None = None,
) -> float:
    """The certified inverse: the largest noise epsilon whose `sgdl_shuffle_certificate` (c of `sgdl_shuffle_c`)
    meets ``target_epsilon``, to a relative ``INVERSE_RTOL``.

    The noise epsilon is the parameter Theorem 5.1 claims as the guarantee; the certified epsilon lies above it (the
    truncation to [-c, c] costs: 0.3 certifies 0.48 at n = 300, k = 5, delta = 1e-4), so the answer is below the
    target.  The result is an edge of the certified set (`_solve.feasible_edge`): its certificate reads at most the
    target and some epsilon at most a relative ``INVERSE_RTOL`` above it does not.  A feasible start is found by
    halving from the target; then the search is aimed by ln(certificate / target), started at the target: about ten
    certificates (~0.05-0.3 s each at n = 10^4).  ``progress(done, MAX_INVERSE_STEPS)`` after each certificate of
    the search.

    Parameters
    ----------
    target_epsilon : float, > 0
        The shuffle-model epsilon to certify.
    delta : float, in (0, 1)
        Target delta.
    n : int, >= 1
        Number of users.
    k : int, >= 1
        Largest value (values in {0..k}; unbounded values certify nothing).
    max_epsilon : float, in (0, MAX_EPSILON]
        Upper end of the search.
    progress : callable (int, int) -> None, optional
        Called with (certificates done, ``MAX_INVERSE_STEPS``).

    Returns
    -------
    float
        The noise epsilon.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range, or when no noise epsilon certifies the target down to 2^-52 or the end of the
        noise's range (the message gives the smallest one tried and what its certificate says).

    References
    ----------
    metric-privacy-shuffler.txt §5, Theorem 5.1 (inverted on the certified reading).

    Examples
    --------
    >>> epsilon = sgdl_shuffle_noise_epsilon(0.5, 1e-4, 300, 5)
    >>> round(epsilon, 3), sgdl_shuffle_certified_epsilon(epsilon, 1e-4, 300, 5) <= 0.5
    (0.31, True)
    """
    target = check_noise_epsilon(target_epsilon, "target_epsilon")
    delta, n, k = check_delta(delta), check_n(n), check_positive_int(k, "k (largest value)")
    hi = check_noise_epsilon(max_epsilon, "max_epsilon")

    def certificate(epsilon: float) -> CertifiedEpsilon:
        return sgdl_shuffle_certificate(epsilon, delta, n, k)

    lo = min(target, hi)
    try:
        found = certificate(lo)
    except PrivacyParameterError as error:  # the noise's own range ends (SGDL's series near p = 1)
        raise PrivacyParameterError(
            f"target_epsilon={target!r} is below what SGDL-Shuffle's noise can be computed at: {error}"
        ) from error
    above = None  # the last epsilon certified above the target (too little noise)
    while _certificate_margin(found, target) > 0.0:  # a feasible start: halving (the certified epsilon grows with it)
        if not found.certified and above is not None:  # the analysis stopped certifying between lo and above
            band = _certified_in_band(certificate, target, lo, above)
            if band is not None:
                lo, found = band
                break
        elif found.certified:
            above = lo
        unmet = (
            f"no SGDL-Shuffle noise epsilon certifies target_epsilon={target:g} (n={n}, k={k}, delta={delta:g}): at "
            f"epsilon={lo:.3g} the certificate reads {found.epsilon:.6g} ({found.reason})"
        )
        if lo * 0.5 < 2.0**-52:
            raise PrivacyParameterError(unmet)
        try:
            found = certificate(lo * 0.5)
        except PrivacyParameterError as error:  # the noise's own range ends (SGDL's series near p = 1)
            raise PrivacyParameterError(f"{unmet}; below it: {error}") from error
        lo *= 0.5
    if lo >= hi:
        return hi
    edge = feasible_edge(
        lambda e: _certificate_margin(certificate(e), target),
        lo,
        hi,
        rtol=INVERSE_RTOL,
        max_steps=MAX_INVERSE_STEPS,
        guess=min(2.0 * lo, hi),
        progress=progress,
    )
    return edge.value


def _certified_in_band(
    certificate: Callable[[float], CertifiedEpsilon], target: float, lo: float, above: float
) -> tuple[float, CertifiedEpsilon] | None:
    """A noise epsilon in (lo, above) whose certificate meets ``target``, with that certificate, or None: ``lo``'s
    certificate is the fallback (the analysis stopped: c grows as epsilon falls, and with it T's size, past its
    limit), ``above``'s is certified but above the target.  The certified epsilons meeting the target then lie in a
    band between the two (at n = 10^4, k = 10, delta = 1e-6, target 0.1: 0.0599-0.0605, where halving from 0.1 went
    from 0.1 straight to 0.05, beyond the limit, and reported that nothing certifies); bisection in log epsilon, up
    to a relative `INVERSE_RTOL` apart."""
    while above > lo * (1.0 + INVERSE_RTOL):
        middle = math.sqrt(lo * above)
        found = certificate(middle)
        if not found.certified:
            lo = middle
        elif _certificate_margin(found, target) > 0.0:
            above = middle
        else:
            return middle, found
    return None


def sgdl_shuffle_epsilon(
    epsilon: float, delta: float, n: int, k: int | None = None, *, method: str = "certified", c: int | None = None
) -> float:
    """Shuffle-model epsilon of SGDL-Shuffle(eps, delta, n) on values in {0..k}.

    ``method="certified"`` (default): `sgdl_shuffle_certified_epsilon`, valid for every pair of datasets
    (without ``k`` the values are unbounded and it is the per-report eps_u).  ``method="theorem-5.1"``: the
    paper's claim (`sgdl_shuffle_epsilon_paper`, ``epsilon`` itself; ignores ``k`` and ``c``), not a valid bound.

    Parameters
    ----------
    epsilon : float, > 0
        The protocol's parameter eps.
    delta : float, in (0, 1)
        Target delta.
    n : int, >= 1
        Number of users.
    k : int >= 1 or None
        Largest value; None for unbounded values.
    method : {"certified", "theorem-5.1"}
        Which analysis.
    c : int >= 0, optional
        The padding (certified only; default `sgdl_shuffle_c`).

    Returns
    -------
    float
        The shuffle-model epsilon.

    Raises
    ------
    PrivacyParameterError
        For an unknown ``method`` or an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §5, Theorem 5.1.

    Examples
    --------
    >>> sgdl_shuffle_epsilon(0.3, 1e-4, 100, method="theorem-5.1"), sgdl_shuffle_epsilon(0.3, 1e-4, 100) > 0.3
    (0.3, True)
    """
    if _check_method(method, SGDL_SHUFFLE_METHODS) == "theorem-5.1":
        return sgdl_shuffle_epsilon_paper(epsilon, delta, n)
    return sgdl_shuffle_certified_epsilon(epsilon, delta, n, k, c=c)


def sgdl_shuffle_local_epsilon(epsilon_s: float, n: int, *, max_distance: int = DEFAULT_MAX_DISTANCE) -> float:
    """Theorem 7.2 (compromised shuffler): eps_L = max_d ln g(0, d, e^-eps_S, 1/n) / d over d = 1..max_distance.

    Parameters
    ----------
    epsilon_s : float, > 0
        The shuffle-model epsilon the protocol was tuned to.
    n : int, >= 1
        Number of users (beta = 1/n).
    max_distance : int, in [1, MAX_DISTANCE]
        Largest distance d of the maximum.

    Returns
    -------
    float
        eps_L.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §7, Theorem 7.2.

    Examples
    --------
    With n = 1 the noise is the discrete Laplace itself, so eps_L = eps_S; more users leave
    each one less noise:

    >>> round(sgdl_shuffle_local_epsilon(0.5, 1), 9), sgdl_shuffle_local_epsilon(0.5, 100) > 0.5
    (0.5, True)
    """
    epsilon_s, n = check_noise_epsilon(epsilon_s, "epsilon_s"), check_n(n)
    p, beta = math.exp(-epsilon_s), 1.0 / n
    return float(_distance_epsilons(lambda r: log_sgdl_pmf(r, beta, p), 0.0, _distances(max_distance)).max())


__all__ = [
    "sgdl_shuffle_certificate",
    "sgdl_shuffle_c",
    "sgdl_shuffle_c_paper",
    "SGDL_SHUFFLE_METHODS",
    "sgdl_shuffle_certified_epsilon",
    "sgdl_shuffle_conditioned_noise",
    "sgdl_shuffle_epsilon",
    "sgdl_shuffle_epsilon_paper",
    "sgdl_shuffle_report_epsilon",
    "sgdl_shuffle_local_epsilon",
    "sgdl_shuffle_noise_epsilon",
]
