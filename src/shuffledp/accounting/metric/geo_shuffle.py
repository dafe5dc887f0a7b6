"""Geo-Shuffle (metric paper §4, Proposition 2, Theorem 4.1, Proposition 5): c of Proposition 2; a certified
epsilon (the default: valid for every pair of datasets, see `geo_shuffle_certified_epsilon`) beside Theorem 4.1 as
printed (max over d of ln g(-alpha, d)/d, valid only for sums a few noise deviations apart); their inverse;
Proposition 5 (compromised shuffler).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from shuffledp._util.validation import check_epsilon, check_positive_int
from shuffledp.accounting._checks import check_delta, check_n
from shuffledp.accounting._solve import feasible_edge, largest_within
from shuffledp.accounting.accountants import VariationRatioAccountant
from shuffledp.accounting.events import ShuffleEvent
from shuffledp.accounting.metric._common import (
    DEFAULT_MAX_DISTANCE,
    INVERSE_RTOL,
    MAX_EPSILON,
    MAX_INVERSE_STEPS,
    CertifiedEpsilon,
    ShiftLaw,
    check_max_distance,
    check_noise_epsilon,
)
from shuffledp.accounting.metric._common import certificate_margin as _certificate_margin
from shuffledp.accounting.metric._common import certified_shift_epsilon as _certified_shift_epsilon
from shuffledp.accounting.metric._common import check_convolution_size as _check_convolution_size
from shuffledp.accounting.metric._common import convolution_power as _convolution_power
from shuffledp.accounting.metric._common import distance_epsilons as _distance_epsilons
from shuffledp.accounting.metric._common import distances as _distances
from shuffledp.accounting.metric._common import no_smaller_reason as _no_smaller_reason
from shuffledp.accounting.metric._common import shift_law as _shift_law
from shuffledp.accounting.metric._common import tail_share as _tail_share
from shuffledp.accounting.metric._common import too_costly as _too_costly
from shuffledp.accounting.metric._exhaustive import (
    cached_profile,
    exact_reason,
    exhaustive_applies,
    exhaustive_meets,
    geo_user_laws,
)
from shuffledp.accounting.metric.sgdl import log_sgdl_mgf
from shuffledp.accounting.metric.sgdl import relative_log_pmf as _relative_log_pmf
from shuffledp.errors import PrivacyParameterError, ValidityConditionError
from shuffledp.params import EPS0_RANGE, BlanketDecomposition
from shuffledp.randomizers.geometric import Geometric


def geo_shuffle_c(eps_geo: float, delta: float, n: int) -> int:
    """Proposition 2: c = ceil(-ln[(1 + e^-eps_geo)(1 - (1 - delta/2)^(1/n)) / 2] / eps_geo).

    Then no user's noise leaves [-c, c] with probability >= 1 - delta/2 (Corollary 1).

    Parameters
    ----------
    eps_geo : float, > 0
        Each user's geometric-noise budget.
    delta : float, in (0, 1)
        Target delta.
    n : int, >= 1
        Number of users.

    Returns
    -------
    int
        The truncation bound c >= 0.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §4, Proposition 2 and Corollary 1.

    Examples
    --------
    Pr[|G| > c] = 2 e^(-eps (c+1)) / (1 + e^-eps) for one user; over n users it stays within delta/2:

    >>> c = geo_shuffle_c(0.5, 1e-4, 300)
    >>> tail = 2 * math.exp(-0.5 * (c + 1)) / (1 + math.exp(-0.5))
    >>> 1 - (1 - tail) ** 300 <= 0.5e-4, c
    (True, 32)
    """
    eps_geo, delta, n = check_noise_epsilon(eps_geo, "eps_geo"), check_delta(delta), check_n(n)
    a = math.exp(-eps_geo)
    value = -(math.log1p(a) + math.log(_tail_share(delta / 2.0, n)) - math.log(2.0)) / eps_geo
    return max(0, math.ceil(value))


def geo_shuffle_alpha(eps_geo: float, delta: float, n: int) -> float:
    """alpha of Theorem 4.1: Pr[|SGDL(n, e^-eps_geo)| >= alpha] <= delta/2 by Chernoff at t = 2 eps_geo / sqrt(n).

    Defined for n >= 5 only (t < eps_geo is needed for the moment generating function).

    Parameters
    ----------
    eps_geo : float, > 0
        Each user's geometric-noise budget.
    delta : float, in (0, 1)
        Target delta.
    n : int, >= 5
        Number of users.

    Returns
    -------
    float
        alpha = (log(4/delta) + log E[e^(tY)]) / t, Y ~ SGDL(n, e^-eps_geo).

    Raises
    ------
    ValidityConditionError
        If n < 5.
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §4, Theorem 4.1; Appendix B (Chernoff bound).

    Examples
    --------
    >>> import numpy as np
    >>> from shuffledp.accounting.metric import sgdl_pmf
    >>> alpha = geo_shuffle_alpha(0.5, 1e-4, 300)
    >>> r = np.arange(-2000, 2001)
    >>> float(sgdl_pmf(r, 300, math.exp(-0.5))[np.abs(r) >= alpha].sum()) <= 0.5e-4  # the tail it bounds
    True
    """
    eps_geo, delta, n = check_noise_epsilon(eps_geo, "eps_geo"), check_delta(delta), check_n(n)
    t = 2.0 * eps_geo / math.sqrt(n)
    if not t < eps_geo:
        raise ValidityConditionError(
            f"Theorem 4.1's Chernoff step needs t = 2 eps_geo / sqrt(n) < eps_geo, i.e. n >= 5, got n={n}", minimum_n=5
        )
    return (math.log(4.0 / delta) + log_sgdl_mgf(t, n, math.exp(-eps_geo))) / t


def geo_shuffle_epsilons_by_distance(
    eps_geo: float, delta: float, n: int, max_distance: int = DEFAULT_MAX_DISTANCE
) -> np.ndarray:
    """ln g(-alpha, d, e^-eps_geo, n) / d for d = 1, ..., max_distance (the terms of Theorem 4.1's maximum).

    Parameters
    ----------
    eps_geo : float, > 0
        Each user's geometric-noise budget.
    delta : float, in (0, 1)
        Target delta.
    n : int, >= 5
        Number of users.
    max_distance : int, in [1, MAX_DISTANCE]
        Largest distance d.

    Returns
    -------
    numpy.ndarray
        The ``max_distance`` values ln g(-alpha, d)/d.

    Raises
    ------
    ValidityConditionError
        If n < 5.

    References
    ----------
    metric-privacy-shuffler.txt §4, Theorem 4.1 (Eq. 45-48).

    Examples
    --------
    >>> terms = geo_shuffle_epsilons_by_distance(0.5, 1e-4, 300, 5)
    >>> terms.shape, float(terms.max()) == geo_shuffle_epsilon_paper(0.5, 1e-4, 300, max_distance=5)
    ((5,), True)
    """
    alpha = geo_shuffle_alpha(eps_geo, delta, n)
    p = math.exp(-eps_geo)
    return _distance_epsilons(lambda r: _relative_log_pmf(r, n, p), -alpha, _distances(max_distance))


def geo_shuffle_epsilon_paper(
    eps_geo: float, delta: float, n: int, *, max_distance: int = DEFAULT_MAX_DISTANCE
) -> float:
    """Theorem 4.1 as printed, eps = max_d ln g(-alpha, d)/d: NOT a valid (eps, delta)-d_X bound in general.

    It certifies sums that differ by a few standard deviations of SGDL(n, e^-eps_geo) only (see below and
    `geo_shuffle_certified_epsilon`); kept to reproduce the paper (``method="theorem-4.1"``).

    The maximum is taken over d = 1, ..., ``max_distance`` (Conjecture B.3: d = 1 attains it).  For
    n <= 4 the theorem is undefined (its Chernoff parameter t = 2 eps_geo / sqrt(n) >= eps_geo) and
    eps_geo is returned: every user's report is post-processing of eps_geo-d_R-private geometric noise,
    so Geo-Shuffle is (eps_geo, 0)-d_X-private for any n (Proposition 5's argument).  Never above eps_geo.
    The pmf ratios are computed directly (`_log_ratios_integer`: exact sums up to n = 4096, the saddlepoint
    expansion beyond), matching 60-digit mpmath to ~1e-9 relative for n up to 10^12 (it decays like 1/sqrt(n)
    up to n = 2^53); at most ``MAX_DISTANCE`` distances.

    Caveats (paper, not code): Conjecture B.3 fails in places (alpha's floors: d = 2 wins at n = 50,
    eps_geo = 1, also at 60 digits; at n = 1000 and 10^4, eps_geo = 0.0177, every even d beats d = 1), hence the
    maximum over d.  And the proof bounds the loss only over outputs within alpha of the *midpoint* of the two sums: with one delta for every
    distance (Definition 4) the sum's exact divergence exceeds delta/2 for large d (n = 100,
    eps_geo = 0.2, delta = 1e-4: D_{e^(eps d)} = 0.02 at d = 500), so the value certifies datasets whose
    sums differ by a few standard deviations of SGDL(n, e^-eps_geo) only.

    Parameters
    ----------
    eps_geo : float, > 0
        Each user's geometric-noise budget.
    delta : float, in (0, 1)
        Target delta.
    n : int, >= 1
        Number of users.
    max_distance : int, in [1, MAX_DISTANCE]
        Largest distance d of the maximum.

    Returns
    -------
    float
        min(eps_geo, max_d ln g(-alpha, d)/d); eps_geo for n <= 4.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §4, Theorem 4.1; Appendix B, Conjecture B.3.

    Examples
    --------
    >>> round(geo_shuffle_epsilon_paper(0.5, 1e-4, 300), 6)  # eps_geo = 0.5 per user, shuffled among 300
    0.103266
    """
    eps_geo, delta, n = check_noise_epsilon(eps_geo, "eps_geo"), check_delta(delta), check_n(n)
    if n <= 4:
        return eps_geo
    return float(min(geo_shuffle_epsilons_by_distance(eps_geo, delta, n, max_distance).max(), eps_geo))


#: The methods of `geo_shuffle_epsilon`.
GEO_SHUFFLE_METHODS = ("certified", "theorem-4.1")


def geo_shuffle_conditioned_noise(eps_geo: float, c: int, n: int) -> tuple[np.ndarray, float]:
    """T's pmf on -n c .. n c (the sum of n G(0, eps_geo) draws each conditioned on [-c, c]) and Pr[H].

    H = "no user's noise leaves [-c, c]" (Proposition 2); Pr[H] = (1 - 2 p^(c+1) / (1 + p))^n, p = e^-eps_geo.
    Direct convolution of positive terms (relative rounding ~ n c ulp); far-tail values below the float
    range are 0.

    Parameters
    ----------
    eps_geo : float, > 0
        Each user's geometric-noise budget.
    c : int, >= 0
        Truncation bound (Proposition 2).
    n : int, >= 1
        Number of users.

    Returns
    -------
    (numpy.ndarray, float)
        T's pmf on -n c .. n c (length 2 n c + 1) and Pr[H].

    Raises
    ------
    PrivacyParameterError
        For an argument out of range, or when 2 (c + 1)^2 n^2 exceeds 4e8 multiply-adds (the limit is named).

    References
    ----------
    metric-privacy-shuffler.txt §4, Propositions 2-3.

    Examples
    --------
    >>> pmf, inside = geo_shuffle_conditioned_noise(1.0, 3, 4)
    >>> pmf.size, round(float(pmf.sum()), 12), bool(np.allclose(pmf, pmf[::-1]))
    (25, 1.0, True)
    >>> abs(inside - (1 - 2 * math.exp(-4) / (1 + math.exp(-1))) ** 4) < 1e-15
    True
    """
    eps_geo, n = check_noise_epsilon(eps_geo, "eps_geo"), check_n(n)
    c = check_positive_int(c, "c", minimum=0)
    _check_convolution_size(c, n)
    return _convolution_power(_user_law(eps_geo, c), n), _inside(eps_geo, c, n)


def _user_law(eps_geo: float, c: int) -> np.ndarray:
    """One user's noise G(0, eps_geo) conditioned on [-c, c]."""
    one = np.exp(-eps_geo * np.abs(np.arange(-c, c + 1, dtype=np.float64)))
    return one / one.sum()


#: T is log-concave (`_common.ShiftLaw.log_concave`): one user's law e^(-eps_geo |x|) / Z on -c..c has the concave
#: log -eps_geo |x| - ln Z and no zero inside, and a convolution of such pmfs on Z is log-concave with no zero inside
#: its support -n c .. n c.  So the shift checks use the cumulative bound, and the windowed search's limit is moot.
_NOISE_LOG_CONCAVE = True


def _inside(eps_geo: float, c: int, n: int) -> float:
    """Pr[H] = (1 - 2 p^(c+1) / (1 + p))^n, p = e^-eps_geo."""
    p = math.exp(-eps_geo)
    inside = -math.expm1(math.log(2.0) + (c + 1) * math.log(p) - math.log1p(p))  # 1 - 2 p^(c+1)/(1+p)
    return math.exp(n * math.log(inside))


def _geo_shuffle_noise_law(eps_geo: float, c: int, n: int, largest_shift: int) -> tuple[ShiftLaw, float]:
    """(bounds of T's pmf for the shift checks up to ``largest_shift``, `_common.shift_law`; Pr[H]): what
    `geo_shuffle_conditioned_noise` computes, with T's left tail from log space where it underflows, marked
    log-concave (`_NOISE_LOG_CONCAVE`)."""
    law = _shift_law(_user_law(eps_geo, c), n, largest_shift)
    return law._replace(log_concave=_NOISE_LOG_CONCAVE), _inside(eps_geo, c, n)


#: The certificate's fallback, said in its reasons.
_FALLBACK = "the per-report bound eps_geo (Proposition 5)"


@functools.lru_cache(maxsize=4)
def _shift_analysis(eps_geo: float, delta: float, n: int, k: int) -> tuple[ShiftLaw, float] | str:
    """(T's shift law up to D = n k, the budget on D_{e^(eps D)}(T + D || T)) of the certificate's shift analysis, or
    why it is not used (k > 2c; `_common.too_costly`).  Cached: the inverse's feasible end and its final certificate
    share one law (the arrays are read-only)."""
    c = geo_shuffle_c(eps_geo, delta, n)
    if n * k > 2 * n * c:
        return f"k={k} > 2c={2 * c}: the conditioned noises' supports part, {_FALLBACK}"
    costly = _too_costly(c, n, k, _FALLBACK, lambda: _user_law(eps_geo, c), log_concave=_NOISE_LOG_CONCAVE)
    if costly is not None:
        return costly
    law, inside = _geo_shuffle_noise_law(eps_geo, c, n, n * k)
    for array in (law.upper, law.lower, law.log_lower):
        if array is not None:
            array.flags.writeable = False
    return law, (delta - (1.0 - inside)) / inside


def geo_shuffle_certified_epsilon(eps_geo: float, delta: float, n: int, k: int | None) -> float:
    """The privacy-conservative Geo-Shuffle epsilon: (eps, delta)-d_X-private for *every* pair of datasets.

    Values in {0..k} (``k=None``: unbounded, so eps_geo).  eps is the smallest value <= eps_geo with
    delta_1 + Pr[H] D_{e^(eps D)}(T + D || T) <= delta at every sum distance D = 1..n k (see the comment
    above: Proposition 3 on the conditioned noise T, exact pmf); a Manhattan distance d >= D only relaxes
    the constraint.  eps_geo when n k > 2 n c (T's supports part: no eps < eps_geo certifies) or when T
    is too costly to convolve.  Every rounding errs upward (slack on T's pmf, the final check).

    Parameters
    ----------
    eps_geo : float, > 0
        Each user's geometric-noise budget.
    delta : float, in (0, 1)
        Target delta.
    n : int, >= 1
        Number of users.
    k : int >= 1 or None
        Largest value (values in {0..k}); None for unbounded values.

    Returns
    -------
    float
        The certified epsilon, at most eps_geo.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §4, Definition 4, Propositions 2-3 and 5 (a conservative
    reading of Theorem 4.1; see the comment above this function in the source).

    Examples
    --------
    >>> geo_shuffle_certified_epsilon(0.2, 1e-4, 100, 1000)  # k > 2c: no amplification survives
    0.2
    >>> round(geo_shuffle_certified_epsilon(1.0, 1e-4, 30, 5), 4)  # small domain: a real (if modest) gain
    0.7655
    """
    return geo_shuffle_certificate(eps_geo, delta, n, k).epsilon


def geo_shuffle_certificate(eps_geo: float, delta: float, n: int, k: int | None) -> CertifiedEpsilon:
    """`geo_shuffle_certified_epsilon` with where it comes from: ``(epsilon, certified, reason)``.

    ``certified`` is False when ``epsilon`` is the per-report eps_geo because the shuffle analysis was not used:
    values unbounded (``k`` None), k > 2c (the conditioned noise's supports part), T or the divergence search
    beyond its limit (T by direct convolution up to 2 (c + 1)^2 n^2 = 4e8 multiply-adds, by tilted FFT powers up to
    2 n c + 1 = 4e6 outcomes: not attempted beyond, so that every call answers within a few seconds;
    `_common.too_costly`; T being log-concave, the shift checks take O(n c) for all n k shifts, so no limit applies
    to them), or no smaller eps is certified (the reason says when float64 underflow of T's pmf is the cause).

    Parameters
    ----------
    eps_geo : float, in (0, MAX_EPSILON]
        Each user's geometric-noise budget.
    delta : float, in (0, 1)
        Target delta.
    n : int, >= 1
        Number of users.
    k : int >= 1 or None
        Largest value; None for unbounded values.

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
    metric-privacy-shuffler.txt §4, Definition 4, Propositions 2-3 and 5.

    Examples
    --------
    >>> geo_shuffle_certificate(1.0, 1e-4, 30, 5)
    CertifiedEpsilon(epsilon=0.7655..., certified=True, reason='certified: delta met at every sum distance D = 1..150')
    >>> geo_shuffle_certificate(0.5, 1e-4, 1000, 10).reason  # T by tilted FFT powers: beyond the direct limit
    'certified: delta met at every sum distance D = 1..10000'
    >>> geo_shuffle_certificate(0.5, 1e-4, 100_000, 10).reason[:94]
    'not attempted: the conditioned noise of n=100000 users (c=44) has 2 n c + 1 = 8800001 outcomes'
    """
    eps_geo, delta, n = check_noise_epsilon(eps_geo, "eps_geo"), check_delta(delta), check_n(n)
    if k is None:
        return CertifiedEpsilon(eps_geo, False, f"values unbounded (no k): {_FALLBACK}")
    return _certificate(eps_geo, delta, n, check_positive_int(k, "k (largest value)"))


@functools.lru_cache(maxsize=16)
def _certificate(eps_geo: float, delta: float, n: int, k: int) -> CertifiedEpsilon:
    """`geo_shuffle_certificate` on checked arguments, cached (the inverse's steps near the edge and its final
    reading are one computation)."""
    fallback = _FALLBACK
    c = geo_shuffle_c(eps_geo, delta, n)
    if exhaustive_applies(n, k, c, delta):  # every pair of datasets, on the clamped laws: exact
        profile, (worst_a, worst_b) = cached_profile("geo", eps_geo, delta, n, k, c)
        exact = float(profile.max())
        if exact < eps_geo:
            return CertifiedEpsilon(
                exact,
                True,
                exact_reason(worst_a, worst_b),
            )
        return CertifiedEpsilon(eps_geo, False, f"exact over every pair of datasets: no gain below eps_geo: {fallback}")
    analysis = _shift_analysis(eps_geo, delta, n, k)
    if isinstance(analysis, str):
        return CertifiedEpsilon(eps_geo, False, analysis)
    law, budget = analysis
    eps = _certified_shift_epsilon(law, budget, np.arange(1, n * k + 1))
    if not eps < eps_geo:
        return CertifiedEpsilon(eps_geo, False, f"{_no_smaller_reason(law, n * k, 'eps_geo', budget)}: {fallback}")
    return CertifiedEpsilon(eps, True, f"certified: delta met at every sum distance D = 1..{n * k}")


def geo_shuffle_epsilon(
    eps_geo: float,
    delta: float,
    n: int,
    k: int | None = None,
    *,
    method: str = "certified",
    max_distance: int = DEFAULT_MAX_DISTANCE,
) -> float:
    """Shuffle-model epsilon of Geo-Shuffle(eps_geo, delta, n) on values in {0..k}.

    ``method="certified"`` (default): `geo_shuffle_certified_epsilon`, valid for every pair of datasets
    (Definition 4); without ``k`` the values are unbounded and it is eps_geo.  ``method="theorem-4.1"``: the
    paper's formula (`geo_shuffle_epsilon_paper`, ignores ``k``), which is not a valid bound in general.

    Parameters
    ----------
    eps_geo : float, > 0
        Each user's geometric-noise budget.
    delta : float, in (0, 1)
        Target delta.
    n : int, >= 1
        Number of users.
    k : int >= 1 or None
        Largest value (values in {0..k}); None for unbounded values.
    method : {"certified", "theorem-4.1"}
        Which analysis (see above).
    max_distance : int, in [1, MAX_DISTANCE]
        Largest distance of Theorem 4.1's maximum (``method="theorem-4.1"`` only).

    Returns
    -------
    float
        The shuffle-model epsilon, at most eps_geo.

    Raises
    ------
    PrivacyParameterError
        For an unknown ``method`` or an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §4, Theorem 4.1.

    Examples
    --------
    >>> geo_shuffle_epsilon(0.5, 1e-4, 300, 1000), round(geo_shuffle_epsilon(0.5, 1e-4, 300, method="theorem-4.1"), 6)
    (0.5, 0.103266)
    """
    check_max_distance(max_distance)  # checked whatever the method: the certified one does not read it
    if method == "certified":
        return geo_shuffle_certified_epsilon(eps_geo, delta, n, k)
    if method == "theorem-4.1":
        return geo_shuffle_epsilon_paper(eps_geo, delta, n, max_distance=max_distance)
    raise PrivacyParameterError(f"method must be one of {', '.join(GEO_SHUFFLE_METHODS)}, got {method!r}")


def geo_shuffle_local_epsilon(
    target_epsilon: float,
    delta: float,
    n: int,
    k: int | None = None,
    *,
    method: str = "certified",
    max_distance: int = DEFAULT_MAX_DISTANCE,
    max_eps_geo: float = MAX_EPSILON,
    progress: Callable[[int, int], None] | None = None,
) -> float:
    """Largest eps_geo with ``geo_shuffle_epsilon(eps_geo, delta, n, k, method=method) <= target_epsilon``.

    Verified never above the target; within a relative 1e-7 of reaching it where the epsilon is continuous
    in eps_geo (alpha's floors and c's ceiling make it a step function in places).  eps_geo = target always
    qualifies (neither method exceeds eps_geo), so the search runs over [target, max_eps_geo].  With the
    default certified method and k > 2c (or k None) no amplification is certified and the result is the target;
    likewise with ``method="theorem-4.1"`` for n <= 4, where the theorem is undefined (no amplification: the
    guarantee is eps_geo itself).  A target at or above ``max_eps_geo`` returns ``max_eps_geo`` (the search's end).
    With the certified method the result is an edge of the certified set (`_solve.feasible_edge`): its certificate
    reads at most the target, and some eps_geo at most a relative ``INVERSE_RTOL`` = 1e-4 above it does not certify
    the target (the certified epsilon is non-decreasing in eps_geo where checked, so then none above does).  Cost:
    about 7-10 certificates (cached; the last feasible one is the final reading), started from Theorem 4.1's inverse
    (above the certified one) and aimed by ln(certificate / target), approached from above: ~0.1, 0.2, 0.6 s at
    n = 10^4 with k = 1, 3, 10 (benchmarks/results/bench_metric.json); exhaustive sizes check one divergence per pair of
    datasets at the target (no root search).  At most ``MAX_INVERSE_STEPS`` checks (then the largest eps_geo found to
    certify the target); ``progress(done, MAX_INVERSE_STEPS)`` after each.

    Parameters
    ----------
    target_epsilon : float, > 0
        The shuffle-model epsilon to reach.
    delta : float, in (0, 1)
        Target delta.
    n : int, >= 1
        Number of users.
    k : int >= 1 or None
        Largest value; None for unbounded values.
    method : {"certified", "theorem-4.1"}
        Which analysis `geo_shuffle_epsilon` uses.
    max_distance : int, in [1, MAX_DISTANCE]
        Largest distance of Theorem 4.1's maximum.
    max_eps_geo : float, in (0, MAX_EPSILON]
        Upper end of the search.
    progress : callable (int, int) -> None, optional
        Called with (checks done, ``MAX_INVERSE_STEPS``) after each feasibility check (certified method only).

    Returns
    -------
    float
        eps_geo in [target_epsilon, max_eps_geo] (``max_eps_geo`` if it is below the target).

    Raises
    ------
    PrivacyParameterError
        For an unknown ``method`` or an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §4, Theorem 4.1 (inverted); §7, Figure 6.

    Examples
    --------
    >>> geo_shuffle_local_epsilon(0.1, 1e-4, 300, 1000)  # certified, values up to 1000: nothing to gain
    0.1
    >>> eps_geo = geo_shuffle_local_epsilon(0.1, 1e-4, 300, method="theorem-4.1")
    >>> round(eps_geo, 4), geo_shuffle_epsilon(eps_geo, 1e-4, 300, method="theorem-4.1") <= 0.1
    (0.4847, True)
    """
    target = check_epsilon(target_epsilon, "target_epsilon")
    delta, n = check_delta(delta), check_n(n)
    hi = check_noise_epsilon(max_eps_geo, "max_eps_geo")
    check_max_distance(max_distance)
    if method not in GEO_SHUFFLE_METHODS:
        raise PrivacyParameterError(f"method must be one of {', '.join(GEO_SHUFFLE_METHODS)}, got {method!r}")
    if hi <= target:
        return hi
    if method == "theorem-4.1" and n <= 4:  # Theorem 4.1 is undefined: its value is eps_geo itself, no amplification
        return target
    if method == "certified":
        return _certified_inverse(target, delta, n, k, hi, progress)
    return largest_within(
        lambda e: geo_shuffle_epsilon(e, delta, n, k, method=method, max_distance=max_distance),
        target,
        target,
        hi,
        context=f"with n={n}, delta={delta:g}",
    )


def _certified_inverse(
    target: float, delta: float, n: int, k: int | None, hi: float, progress: Callable[[int, int], None] | None
) -> float:
    """`geo_shuffle_local_epsilon`'s certified search: the edge of the eps_geo that `_margin` finds feasible, then
    its certificate (cached on the shift path; on the exhaustive path the profile, which the check's margin keeps at
    or below the target: stepped down should rounding ever say otherwise)."""
    # Theorem 4.1 bounds only part of what the certificate does: its inverse, a few ms, sits above the certified one
    # (by 2-4x at n = 300..10^4), a start from which the bracket is found by halving, where steps are cheap (small c)
    guess = geo_shuffle_local_epsilon(target, delta, n, method="theorem-4.1", max_eps_geo=hi)
    edge = feasible_edge(
        lambda e: _margin(e, target, delta, n, k),
        target,
        hi,
        rtol=INVERSE_RTOL,
        max_steps=MAX_INVERSE_STEPS,
        guess=guess,
        progress=progress,
    )
    found = edge.value
    for _ in range(20):
        if found <= target or geo_shuffle_certified_epsilon(found, delta, n, k) <= target:
            return found
        found = max(target, found * (1.0 - INVERSE_RTOL))
    return target


def _margin(eps_geo: float, target: float, delta: float, n: int, k: int | None) -> float:
    """At most 0 exactly when Geo-Shuffle(eps_geo) is certified (target, delta) for every pair of datasets.

    On the shift analysis ln(certificate / target) (+inf when it certifies nothing), the certificate cached (the
    inverse's final reading is the one of its last feasible step): smooth in eps_geo, so it aims the steps.  On the
    exhaustive path one divergence check per pair at the target (`_exhaustive.exhaustive_meets`, no root search):
    -inf or +inf."""
    if eps_geo <= target:
        return -math.inf
    if k is None:
        return math.inf
    c = geo_shuffle_c(eps_geo, delta, n)
    if exhaustive_applies(n, k, c, delta):
        return -math.inf if exhaustive_meets(geo_user_laws(eps_geo, k, c), n, delta, target) else math.inf
    return _certificate_margin(_certificate(eps_geo, delta, n, k), target)


def geo_shuffle_variation_ratio_epsilon(eps_geo: float, delta: float, n: int, k: int, *, distance: int = 1) -> float:
    """Beyond the paper: Geo-Shuffle's shuffled epsilon when one user's value moves by ``distance``, through the
    variation-ratio engine (segmented paper Theorem 1; a `shuffledp.accounting.events.ShuffleEvent`).

    The victim's report is post-processing of geometric noise, so p = e^(eps_geo d) and beta = TV(G(x), G(x + d))
    (truncation only lowers both); any other user's input is within k, so q = e^(eps_geo k).  The released count is
    post-processing of the shuffled reports.  Returns the total epsilon for the pair (compare d times Theorem 4.1's);
    q grows like e^(eps_geo k), so this is the tighter analysis only for small eps_geo k.

    Parameters
    ----------
    eps_geo : float, > 0
        Each user's geometric-noise budget.
    delta : float, in (0, 1)
        Target delta.
    n : int, >= 1
        Number of users.
    k : int, >= 1
        Largest value.
    distance : int, in [1, k]
        How far the victim's value moves.

    Returns
    -------
    float
        The epsilon for the pair, at most eps_geo ``distance``, which is returned where eps_geo ``distance`` is
        outside the engine's local epsilons [1e-6, 700] (`shuffledp.params.EPS0_RANGE`: below, shuffling cannot be
        accounted in float64; above, e^(eps_geo d) overflows).

    Raises
    ------
    PrivacyParameterError
        For an argument out of range or ``distance`` > ``k``.

    References
    ----------
    segmented-multimessage-shuffle.txt §3.3, Theorem 1 (variation-ratio amplification), applied
    to metric-privacy-shuffler.txt §4's Geo-Shuffle.

    Examples
    --------
    >>> eps = geo_shuffle_variation_ratio_epsilon(0.1, 1e-6, 10_000, 5)
    >>> 0 < eps < 0.1
    True
    """
    eps_geo, delta, n = check_noise_epsilon(eps_geo, "eps_geo"), check_delta(delta), check_n(n)
    k, d = check_positive_int(k, "k (largest value)"), check_positive_int(distance, "distance")
    if d > k:
        raise PrivacyParameterError(f"distance must be at most k={k} (values lie in {{0..k}}), got {d}")
    if eps_geo * d not in EPS0_RANGE:  # beyond the engine's local epsilons: the pure eps_geo d holds (no gain)
        return eps_geo * d
    pair = Geometric(eps_geo * d, 0, d).amplification_parameters()  # eps0 = eps_geo d, beta = TV at distance d
    # every other user's law is at least e^(-eps_geo k) times the victim's (values differ by at most k): the
    # three-class pair with the others' labels thinned by gamma = e^(-eps_geo (k - d)) relative to e^(-eps0)
    params = BlanketDecomposition(eps0=pair.eps0, beta=pair.beta)
    gamma = math.exp(-eps_geo * (k - d))
    return min(VariationRatioAccountant().compose(ShuffleEvent(params, n, gamma)).get_epsilon(delta), eps_geo * d)


def geo_shuffle_compromised_epsilon(eps_geo: float) -> float:
    """Proposition 5: with the shuffler compromised Geo-Shuffle is (eps_geo, 0)-d_X-private in the local model.

    Parameters
    ----------
    eps_geo : float, > 0
        Each user's geometric-noise budget.

    Returns
    -------
    float
        eps_geo.

    Raises
    ------
    PrivacyParameterError
        For ``eps_geo`` out of range.

    References
    ----------
    metric-privacy-shuffler.txt §7, Proposition 5.

    Examples
    --------
    >>> geo_shuffle_compromised_epsilon(0.3)
    0.3
    """
    return check_noise_epsilon(eps_geo, "eps_geo")


__all__ = [
    "geo_shuffle_certificate",
    "geo_shuffle_alpha",
    "geo_shuffle_c",
    "geo_shuffle_compromised_epsilon",
    "GEO_SHUFFLE_METHODS",
    "geo_shuffle_certified_epsilon",
    "geo_shuffle_conditioned_noise",
    "geo_shuffle_epsilon",
    "geo_shuffle_epsilon_paper",
    "geo_shuffle_epsilons_by_distance",
    "geo_shuffle_local_epsilon",
    "geo_shuffle_variation_ratio_epsilon",
]
