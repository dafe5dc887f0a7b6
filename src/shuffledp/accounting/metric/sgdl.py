"""The SGDL(beta, p) distribution of the metric paper (§4.1): the difference of two independent NB(beta, 1 - p).

The paper's series sum_k C(beta+k-1, k) C(beta+k-|r|-1, k-|r|) p^(2k-|r|) is (1-p)^(2 beta) p^m C(beta+m-1, m)
2F1(beta, beta+m; m+1; p^2), m = |r|.  Pfaff's transformation turns it into a *finite sum of positive terms* for
integer beta (no cancellation, any p):

    pmf(m) = ((1-p)/(1+p))^beta p^m sum_{j=0}^{beta-1} C(beta-1, j) Gamma(beta+m) Gamma(beta+j)
             / (Gamma(beta)^2 Gamma(m+j+1)) (p^2/(1-p^2))^j,

summed in log space over the window of j that carries the mass (the terms are log-concave in j; the cut tails are
bounded by geometric series and checked negligible).  For beta in (0, 1] (SGDL-Shuffle's 1/n) the hypergeometric
series itself has positive, decreasing terms.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from scipy import special

from shuffledp._util.validation import check_epsilon, check_positive_int, check_probability
from shuffledp.accounting._checks import check_n
from shuffledp.accounting._rounding import N_MAX, SGDL_EPSILON_MIN
from shuffledp.accounting.metric._common import TAIL_RTOL as _TAIL_RTOL
from shuffledp.errors import PrivacyParameterError

#: Most terms of the beta < 1 series (about 45 / (1 - p^2) are needed).
_MAX_SERIES_TERMS = 20_000_000
#: Most (outcome, term) cells `sgdl_shift_divergence` evaluates (about 3 s).
_MAX_DIVERGENCE_CELLS = 1e8
#: Most (outcome, term) cells of the SGDL sum evaluated at once.
_MAX_CELLS = 2_000_000


# --- the SGDL distribution ------------------------------------------------------------------------------


def _check_beta(beta: Any) -> float | int:
    """beta is an integer >= 1 (Geo-Shuffle's n) or a real in (0, 1] (SGDL-Shuffle's 1/n)."""
    if isinstance(beta, (bool, str, bytes)):
        raise PrivacyParameterError(f"beta (SGDL shape) must be an integer >= 1 or a real in (0, 1], got {beta!r}")
    try:
        value = float(beta)
    except (TypeError, ValueError):
        value = math.nan
    if math.isfinite(value) and value >= 1.0 and value.is_integer():
        return check_n(int(value), "beta")
    if math.isfinite(value) and 0.0 < value <= 1.0:
        return value
    raise PrivacyParameterError(f"beta (SGDL shape) must be an integer >= 1 or a real in (0, 1], got {beta!r}")


#: Largest |r| at which the SGDL pmf is evaluated (integers stay exact in float64); beyond it `log_sgdl_pmf` is -inf
#: where the pmf is provably below the float range (Chernoff: Pr[Y = r] <= 2^beta p^(|r|/2)), else an error.
MAX_SGDL_OUTCOME = N_MAX


def _as_offsets(r: Any) -> tuple[np.ndarray, np.ndarray]:
    """(|r| as int64, with 0 where |r| > MAX_SGDL_OUTCOME; |r| as float64) for integer ``r`` (any size)."""
    arr = np.asarray(r)
    if arr.dtype == object and all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in arr.flat):
        arr = np.array([float(v) for v in arr.flat], dtype=np.float64).reshape(arr.shape)  # Python ints beyond int64
    if (
        arr.size
        and not np.issubdtype(arr.dtype, np.integer)
        and not (np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)))
    ):
        raise PrivacyParameterError(f"r (SGDL outcome) must hold integers, got {r!r}")
    size = np.abs(arr.astype(np.float64))
    return np.where(size > MAX_SGDL_OUTCOME, 0, np.abs(np.where(size > MAX_SGDL_OUTCOME, 0, arr))).astype(
        np.int64
    ), size


def _log_pmf_integer(m: np.ndarray, n: int, p: float, widths: float = 14.0) -> np.ndarray:
    """log pmf of SGDL(n, p), n integer, at m >= 0 (1-d): the finite positive sum of the module docstring.

    For n > 4096 only the ``widths`` peak widths either side of the largest term are summed; if the cut
    tails (bounded by geometric series) are not negligible the window is doubled.
    """
    log_p, log1m_p, log1p_p = math.log(p), math.log1p(-p), math.log1p(p)
    log_q = 2.0 * log_p - log1m_p - log1p_p  # q = p^2 / (1 - p^2)
    mf = m.astype(np.float64)[:, None]
    if n <= 4_096:  # every term
        j = np.arange(n, dtype=np.float64)[None, :]
        valid = np.ones((1, n), dtype=bool)
    else:  # the window of j around the peak of the log-concave terms
        q = math.exp(log_q)
        b = mf[:, 0] + 2.0 + q
        disc = b * b - 4.0 * (1.0 + q) * (mf[:, 0] + 1.0 - q * n * (n - 1.0))
        peak = np.clip((-b + np.sqrt(np.maximum(disc, 0.0))) / (2.0 * (1.0 + q)), 0.0, n - 1.0)
        curv = (
            1.0 / np.maximum(n - 1.0 - peak, 1.0)
            + 1.0 / (peak + 1.0)
            - 1.0 / (n + peak)
            + 1.0 / (mf[:, 0] + 1.0 + peak)
        )
        half = np.ceil(widths / np.sqrt(curv) + 40.0)
        width = int(min(2.0 * half.max() + 1.0, n))
        start = np.clip(np.floor(peak - half), 0.0, n - width)[:, None]
        j = start + np.arange(width, dtype=np.float64)[None, :]
        valid = j <= n - 1.0
    log_terms = (
        special.gammaln(n + mf)
        - special.gammaln(j + 1.0)
        - special.gammaln(np.where(valid, n - j, 1.0))
        + special.gammaln(n + j)
        - special.gammaln(mf + j + 1.0)
        - special.gammaln(float(n))
        + j * log_q
    )
    log_terms = np.where(valid, log_terms, -np.inf)
    top = log_terms.max(axis=1, keepdims=True)
    total = np.exp(log_terms - top).sum(axis=1)
    if n > 4_096:  # geometric bounds on the cut-off tails (term ratios decrease in j)
        first, last = j[:, 0], j[:, -1]
        ratio_right = (n - 1.0 - last) * (n + last) * math.exp(log_q) / ((mf[:, 0] + 1.0 + last) * (last + 1.0))
        ratio_left = first * (mf[:, 0] + first) / ((n - first) * (n + first - 1.0) * math.exp(log_q))
        right = np.where(last < n - 1.0, np.exp(log_terms[:, -1] - top[:, 0]) * ratio_right / (1.0 - ratio_right), 0.0)
        left = np.where(first > 0.0, np.exp(log_terms[:, 0] - top[:, 0]) * ratio_left / (1.0 - ratio_left), 0.0)
        narrow = ((ratio_right >= 1.0) & (last < n - 1.0)) | ((ratio_left >= 1.0) & (first > 0.0))
        if np.any(narrow | ((left + right) / total > _TAIL_RTOL)):
            return _log_pmf_integer(m, n, p, 2.0 * widths)
    return n * (log1m_p - log1p_p) + mf[:, 0] * log_p + top[:, 0] + np.log(total)


def _log_pmf_series(m: np.ndarray, beta: float, p: float) -> np.ndarray:
    """log pmf of SGDL(beta, p), 0 < beta < 1: the paper's series, whose terms are positive and decrease."""
    z = p * p
    log_z = 2.0 * math.log(p)
    terms = int(math.ceil(math.log(_TAIL_RTOL * (1.0 - z)) / log_z)) + 2  # t_J <= z^J, tail <= z^J / (1 - z)
    if terms > _MAX_SERIES_TERMS:
        raise PrivacyParameterError(
            f"p = {p!r} is too close to 1 for the SGDL({beta:g}, p) series ({terms} terms); use epsilon >= "
            f"{SGDL_EPSILON_MIN:g}"
        )
    out = np.empty(m.shape, dtype=np.float64)
    jj = np.arange(terms - 1, dtype=np.float64)
    for idx, mi in enumerate(m.astype(np.float64)):  # one vectorised series per distinct outcome
        log_ratio = np.log((beta + jj) * (beta + mi + jj) / ((mi + 1.0 + jj) * (jj + 1.0))) + log_z
        log_terms = np.concatenate(([0.0], np.cumsum(log_ratio)))
        series = math.log(np.exp(log_terms).sum())
        log_binom = special.gammaln(beta + mi) - special.gammaln(beta) - special.gammaln(mi + 1.0)
        out[idx] = 2.0 * beta * math.log1p(-p) + mi * math.log(p) + log_binom + series
    return out


#: Above this n the unit-step log-ratios of SGDL(n, p) come from the saddlepoint expansion (see `_log_ratios_integer`).
_SADDLEPOINT_MIN_N = 4_096


def _saddlepoint_theta(x: np.ndarray, n: int, p: float) -> np.ndarray:
    """theta with K'(theta) = x, K the cumulant generating function of SGDL(n, p) (Theorem B.1's log mgf).

    With u = e^theta and s = x/n, K'(theta) = x is p (1 + s) u^2 - s (1 + p^2) u - p (1 - s) = 0; its positive
    root is written without cancellation: u - 1 = (s (1-p)^2 + 2 p z / (1 + sqrt(1 + z))) / (2 p (1 + s)),
    z = (s (1 - p^2) / (2 p))^2 (for s >= 0; theta is odd in x).
    """
    s = np.abs(x) / float(n)
    z = (s * (1.0 - p * p) / (2.0 * p)) ** 2
    u_minus_1 = (s * (1.0 - p) ** 2 + 2.0 * p * z / (np.sqrt(1.0 + z) + 1.0)) / (2.0 * p * (1.0 + s))
    return np.sign(x) * np.log1p(u_minus_1)


def _saddlepoint_log_density_terms(theta: np.ndarray, n: int, p: float) -> np.ndarray:
    """-ln K''(theta) / 2 + ln(1 + kappa_4/8 - 5 kappa_3^2/24): the theta-dependent terms of the second-order
    saddlepoint expansion of ln pmf beyond K(theta) - theta x (kappa_r = K^(r) / K''^(r/2))."""
    a, b = p * np.exp(theta), p * np.exp(-theta)
    k2 = n * (a / (1.0 - a) ** 2 + b / (1.0 - b) ** 2)
    k3 = n * (a * (1.0 + a) / (1.0 - a) ** 3 - b * (1.0 + b) / (1.0 - b) ** 3)
    k4 = n * (a * (1.0 + 4.0 * a + a * a) / (1.0 - a) ** 4 + b * (1.0 + 4.0 * b + b * b) / (1.0 - b) ** 4)
    return -0.5 * np.log(k2) + np.log1p(k4 / (8.0 * k2 * k2) - 5.0 * k3 * k3 / (24.0 * k2**3))


_GAUSS_X, _GAUSS_W = np.polynomial.legendre.leggauss(8)


def _log_ratios_integer(m: np.ndarray, n: int, p: float) -> np.ndarray:
    """ln pmf(m + 1) - ln pmf(m) of SGDL(n, p), n integer, m >= 0 (1-d), computed without differencing two log pmfs.

    Differencing `log_sgdl_pmf` loses the log-ratio (of order 1/sqrt(n) at Theorem 4.1's alpha) to the rounding of
    log-gamma values of order n ln n: wrong in the fifth digit at n = 10^8 and of the wrong sign at 10^10.  Here:

    * n <= 4096: exactly, as a weighted average: with w_j the terms of the finite sum of the module docstring,
      pmf(m + 1) / pmf(m) = p (n + m) sum_j w_j / (m + j + 1) / sum_j w_j (only ratios of terms of one row);
    * n > 4096: the second-order saddlepoint expansion of ln pmf, whose x-derivative of K(theta) - theta x is
      -theta(x): the log-ratio is -int_m^(m+1) theta(x) dx (8-point Gauss-Legendre) plus the change of the
      remaining terms.  Relative error about 4 / n^3 against 60-digit mpmath (Fourier inversion of the
      characteristic function; tests/accounting/test_metric_against_exact_laws.py), i.e. below 1e-10 for n > 4096.
    """
    mf = m.astype(np.float64)
    if n > _SADDLEPOINT_MIN_N:
        xs = mf[:, None] + 0.5 + 0.5 * _GAUSS_X[None, :]
        integral = 0.5 * (_saddlepoint_theta(xs, n, p) * _GAUSS_W[None, :]).sum(axis=1)
        t0, t1 = _saddlepoint_theta(mf, n, p), _saddlepoint_theta(mf + 1.0, n, p)
        return -integral + _saddlepoint_log_density_terms(t1, n, p) - _saddlepoint_log_density_terms(t0, n, p)
    log_p, log1m_p, log1p_p = math.log(p), math.log1p(-p), math.log1p(p)
    log_q = 2.0 * log_p - log1m_p - log1p_p
    j = np.arange(n, dtype=np.float64)[None, :]
    out = np.empty(mf.size)
    rows = max(1, _MAX_CELLS // n)
    for start in range(0, mf.size, rows):
        block = mf[start : start + rows, None]
        log_terms = (
            -special.gammaln(j + 1.0)
            - special.gammaln(n - j)
            + special.gammaln(n + j)
            - special.gammaln(block + j + 1.0)
            + j * log_q
        )
        log_terms -= log_terms.max(axis=1, keepdims=True)  # O(1) sums: their difference keeps its digits
        out[start : start + block.shape[0]] = (
            log_p
            + np.log(n + block[:, 0])
            + special.logsumexp(log_terms - np.log(block + j + 1.0), axis=1)
            - special.logsumexp(log_terms, axis=1)
        )
    return out


def relative_log_pmf(offsets: np.ndarray, n: int, p: float) -> np.ndarray:
    """ln pmf(|r|) of SGDL(n, p) up to one additive constant (the same for every entry): cumulative sums of
    `_log_ratios_integer` from the smallest |r|, so differences keep their relative precision."""
    m = np.abs(offsets.astype(np.int64))
    lo, hi = int(m.min()), int(m.max())
    ratios = _log_ratios_integer(np.arange(lo, hi, dtype=np.int64), n, p)
    levels = np.concatenate(([0.0], np.cumsum(ratios)))
    return levels[m - lo]


def log_sgdl_pmf(r: Any, beta: Any, p: float) -> np.ndarray:
    """log Pr[Y = r] for Y ~ SGDL(beta, p) (metric paper §4.1), vectorised over integer ``r``.

    ``beta`` is an integer >= 1 or a real in (0, 1]; ``p`` in (0, 1).  Relative accuracy ~1e-12
    for beta <= 10^4 and |r| <= 10^4 (tests: against 60-digit mpmath).

    Parameters
    ----------
    r : int or array_like of int
        Outcomes of Y.
    beta : int >= 1 or float in (0, 1]
        Shape of the two negative binomials (Geo-Shuffle: n; SGDL-Shuffle: 1/n).
    p : float, in (0, 1)
        The SGDL parameter e^-eps.

    Returns
    -------
    numpy.ndarray
        log Pr[Y = r], with the shape of ``r``; -inf for |r| > `MAX_SGDL_OUTCOME` (the pmf is below the float range).

    Raises
    ------
    PrivacyParameterError
        For ``beta`` or ``p`` out of range, a non-integer ``r``, or |r| > `MAX_SGDL_OUTCOME` where the pmf is not
        provably below the float range.

    References
    ----------
    metric-privacy-shuffler.txt §4.1 (SGDL); module docstring for the finite sum.

    Examples
    --------
    >>> import numpy as np
    >>> np.exp(log_sgdl_pmf([0, 3], 1, 0.5))  # beta = 1: discrete Laplace (1-p)/(1+p) p^|r|
    array([0.33333333, 0.04166667])
    >>> bool(abs(np.exp(log_sgdl_pmf(np.arange(-200, 201), 2, 0.5)).sum() - 1) < 1e-12)  # a distribution
    True
    """
    beta = _check_beta(beta)
    p = check_probability(p, "p (SGDL parameter e^-eps)")
    m, size = _as_offsets(r)
    huge = size > MAX_SGDL_OUTCOME
    if np.any(huge):
        bound = float(beta) * math.log(2.0) + 0.5 * float(size[huge].min()) * math.log(p)  # ln of a bound on the pmf
        if bound > -800.0:
            raise PrivacyParameterError(
                f"r (SGDL outcome) must have |r| <= 2^53 = {MAX_SGDL_OUTCOME} here (beyond it only pmfs below the float "
                f"range are answered, as -inf), got |r| = {float(size[huge].min()):.6g} at beta={beta!r}, p={p!r}"
            )
    flat = m.reshape(-1)
    unique, inverse = np.unique(flat, return_inverse=True)
    if isinstance(beta, int) or beta == 1.0:
        rows = max(1, _MAX_CELLS // min(int(beta), _MAX_CELLS))  # outcomes per block: bounded memory
        values = np.concatenate(
            [_log_pmf_integer(unique[i : i + rows], int(beta), p) for i in range(0, unique.size, rows)] or [np.empty(0)]
        )
    else:
        values = _log_pmf_series(unique, beta, p)
    return np.where(huge, -np.inf, values[inverse].reshape(m.shape))


def sgdl_pmf(r: Any, beta: Any, p: float) -> np.ndarray:
    """Pr[Y = r] for Y ~ SGDL(beta, p); see `log_sgdl_pmf`.

    Parameters
    ----------
    r : int or array_like of int
        Outcomes of Y.
    beta : int >= 1 or float in (0, 1]
        Shape of the two negative binomials.
    p : float, in (0, 1)
        The SGDL parameter e^-eps.

    Returns
    -------
    numpy.ndarray
        Pr[Y = r], with the shape of ``r``.

    Raises
    ------
    PrivacyParameterError
        For ``beta`` or ``p`` out of range.

    References
    ----------
    metric-privacy-shuffler.txt §4.1.

    Examples
    --------
    Symmetric, and a distribution also for fractional beta:

    >>> import numpy as np
    >>> pmf = sgdl_pmf(np.arange(-2000, 2001), 0.5, 0.9)
    >>> bool(abs(pmf.sum() - 1) < 1e-12), bool(np.allclose(pmf, pmf[::-1], rtol=1e-12, atol=0))
    (True, True)
    """
    return np.exp(log_sgdl_pmf(r, beta, p))


def log_sgdl_mgf(t: float, beta: float, p: float) -> float:
    """log E[e^(tY)] = beta log((1-p)^2 / ((1 - p e^t)(1 - p e^-t))), |t| < -log p (Theorem B.1).

    Parameters
    ----------
    t : float, |t| < -log p
        Argument of the moment generating function.
    beta : float, > 0
        Shape of the two negative binomials.
    p : float, in (0, 1)
        The SGDL parameter e^-eps.

    Returns
    -------
    float
        log E[e^(tY)].

    Raises
    ------
    PrivacyParameterError
        If |t| >= -log p (the expectation is infinite).

    References
    ----------
    metric-privacy-shuffler.txt Appendix B, Theorem B.1.

    Examples
    --------
    Against the pmf summed directly:

    >>> import numpy as np
    >>> r = np.arange(-300, 301)
    >>> direct = np.log(np.sum(sgdl_pmf(r, 3, 0.5) * np.exp(0.2 * r)))
    >>> bool(abs(log_sgdl_mgf(0.2, 3, 0.5) - direct) < 1e-12), log_sgdl_mgf(0.0, 3, 0.5)
    (True, 0.0)
    """
    if not abs(t) < -math.log(p):
        raise PrivacyParameterError(f"t must satisfy |t| < -log p = {-math.log(p):g}, got t={t!r}")
    # (1 - p e^t)(1 - p e^-t) = (1 - p)^2 - p (e^t - 1)^2 / e^t: no cancellation for small t (huge beta multiplies it)
    return -beta * math.log1p(-p * math.expm1(t) ** 2 * math.exp(-t) / (1.0 - p) ** 2)


def sgdl_shift_divergence(epsilon: float, distance: int, beta: Any, p: float) -> float:
    """Upper bound on D_{e^(eps d)}(Y || Y + d) = sum_u max(0, P[Y = u] - e^(eps d) P[Y = u - d]), Y ~ SGDL(beta, p).

    The exact privacy of a sum released with SGDL noise at two datasets whose sums differ by d (Definition 4):
    Geo-Shuffle is (eps, delta/2 + this)-private at sum distance d (Propositions 2-3).  Outcomes beyond a
    Chernoff window of probability < 1e-18 are not summed; that mass is added (upper bound).

    Parameters
    ----------
    epsilon : float, >= 0
        The epsilon per unit of distance.
    distance : int, >= 1
        The difference d of the two sums.
    beta : int >= 1 or float in (0, 1]
        SGDL shape.
    p : float, in (0, 1)
        The SGDL parameter e^-eps.

    Returns
    -------
    float
        An upper bound on the divergence, in [1e-18, 1].

    Raises
    ------
    PrivacyParameterError
        For an argument out of range, or when the sum would exceed 1e8 pmf terms (the message says so).

    References
    ----------
    metric-privacy-shuffler.txt §4, Definition 4, Propositions 2-3.

    Examples
    --------
    beta = 1 is the discrete Laplace of parameter p, exactly (-log p)-d_R-private:

    >>> p = math.exp(-0.1)
    >>> sgdl_shift_divergence(0.1, 1, 1, p) < 1e-12, sgdl_shift_divergence(0.05, 1, 1, p) > 0.01
    (True, True)
    """
    epsilon = check_epsilon(epsilon)
    d = check_positive_int(distance, "distance")
    beta = _check_beta(beta)
    p = check_probability(p, "p (SGDL parameter e^-eps)")
    t = -math.log(p) / 2.0
    half = math.ceil((math.log(2.0 / 1e-18) + log_sgdl_mgf(t, beta, p)) / t)  # Pr[|Y| > half] < 1e-18
    if isinstance(beta, int) or beta == 1.0:  # terms per outcome of `_log_pmf_integer` (its window beyond 4096)
        per_outcome = float(beta) if beta <= 4_096 else 11.0 * math.sqrt(beta) + 81.0
    else:  # of `_log_pmf_series`
        per_outcome = math.log(_TAIL_RTOL * (1.0 - p * p)) / (2.0 * math.log(p)) + 2.0
    cells = (2.0 * (half + d) + 1.0) * per_outcome
    if cells > _MAX_DIVERGENCE_CELLS:
        raise PrivacyParameterError(
            f"sgdl_shift_divergence would sum about {cells:.3g} pmf terms at beta={beta}, p={p:g}, distance={d}, above the "
            f"limit {_MAX_DIVERGENCE_CELLS:.3g} (a few seconds): use a smaller beta or distance, or p further from 1"
        )
    log_pmf = log_sgdl_pmf(np.arange(-half - d, half + d + 1), beta, p)
    with np.errstate(over="ignore"):  # e^(eps d) P may overflow to inf: that outcome then adds nothing
        gap = np.exp(log_pmf[d:]) - np.exp(epsilon * d + log_pmf[:-d])  # at u = -half .. half + d
    return float(min(1.0, np.maximum(gap, 0.0).sum() + 1e-18))  # + the mass of u outside: < 1e-18


__all__ = [
    "MAX_SGDL_OUTCOME",
    "log_sgdl_mgf",
    "log_sgdl_pmf",
    "sgdl_pmf",
    "sgdl_shift_divergence",
]
