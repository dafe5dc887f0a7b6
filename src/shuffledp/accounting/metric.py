"""Metric-privacy accounting of the shuffle protocols of Athanasiou, Chatzikokolakis, Palamidessi,
*Enhancing Metric Privacy With a Shuffler* (PoPETs 2025), the "metric paper".

Guarantees are (epsilon, delta)-d_X-privacy (Definition 4): Pr[M(X) in S] <= e^(eps d) Pr[M(X') in S] + delta,
d the Manhattan distance of the datasets (Eq. 1).

* SGDL(beta, p) pmf (§4.1): the difference of two independent NB(beta, 1 - p).  The paper's series
  sum_k C(beta+k-1, k) C(beta+k-|r|-1, k-|r|) p^(2k-|r|) is (1-p)^(2 beta) p^m C(beta+m-1, m)
  2F1(beta, beta+m; m+1; p^2), m = |r|.  Pfaff's transformation turns it into a *finite sum of
  positive terms* for integer beta (no cancellation, any p):

      pmf(m) = ((1-p)/(1+p))^beta p^m sum_{j=0}^{beta-1} C(beta-1, j) Gamma(beta+m) Gamma(beta+j)
               / (Gamma(beta)^2 Gamma(m+j+1)) (p^2/(1-p^2))^j,

  summed in log space over the window of j that carries the mass (the terms are log-concave in j;
  the cut tails are bounded by geometric series and checked negligible).  For beta in (0, 1]
  (SGDL-Shuffle's 1/n) the hypergeometric series itself has positive, decreasing terms.
* RR-Shuffle: a certified epsilon (the default: the exact divergence of the released count over every pair of
  datasets, see `rr_shuffle_certified_epsilon`) beside Theorem 3.1 as printed (valid for nearby datasets only),
  with its inverse; the compromised shuffler likewise (certified, beside Theorem 7.1); the theorems keep their
  validity conditions (`shuffledp.errors.ValidityConditionError` names the minimum n / p or maximum eps).
* Geo-Shuffle: c of Proposition 2; a certified epsilon (the default: valid for every pair of datasets,
  see `geo_shuffle_certified_epsilon`) beside Theorem 4.1 as printed (max over d of ln g(-alpha, d)/d,
  valid only for sums a few noise deviations apart); their inverse; Proposition 5 (compromised shuffler).
* SGDL-Shuffle: c (Lemma C.1, see `sgdl_shuffle_c` for why the paper's value is not used as is); a certified
  epsilon (the default, `sgdl_shuffle_certified_epsilon`) beside Theorem 5.1's claim; Theorem 7.2 (compromised
  shuffler).
* Two dimensions (Appendix D, Theorem D.1 and Proposition 7).
"""

from __future__ import annotations

import functools
import math
import numbers
from typing import Any, NamedTuple

import numpy as np
from scipy import special, stats

from shuffledp._util import validation as _validation
from shuffledp._util.validation import check_positive_int
from shuffledp.accounting import bounds as _bounds
from shuffledp.accounting.bounds import N_MAX, check_n
from shuffledp.errors import PrivacyParameterError, ValidityConditionError


def _check_real(value: Any, name: str) -> None:
    """PrivacyParameterError unless ``value`` is a real number: the metric API takes numbers, never numeric strings
    (the CLI parses its own), as `check_noise_epsilon` always did."""
    if isinstance(value, (bool, str, bytes)) or not isinstance(value, numbers.Real):
        raise PrivacyParameterError(f"{name} must be a number, got {value!r}")


def check_delta(delta: Any, name: str = "delta") -> float:
    """`shuffledp.accounting.bounds.check_delta` for a real number only (no strings)."""
    _check_real(delta, name)
    return _bounds.check_delta(delta, name)


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """`shuffledp._util.validation.check_epsilon` for a real number only (no strings)."""
    _check_real(epsilon, name)
    return _validation.check_epsilon(epsilon, name)


def check_probability(value: Any, name: str) -> float:
    """`shuffledp._util.validation.check_probability` (open interval) for a real number only (no strings)."""
    _check_real(value, name)
    return _validation.check_probability(value, name)

#: Relative size below which cut-off SGDL terms are neglected (well below float64 resolution).
_TAIL_RTOL = 1e-20
#: Most terms of the beta < 1 series (about 45 / (1 - p^2) are needed).
_MAX_SERIES_TERMS = 20_000_000
#: Most (outcome, term) cells `sgdl_shift_divergence` evaluates (about 3 s).
_MAX_DIVERGENCE_CELLS = 1e8
#: Most (outcome, term) cells of the SGDL sum evaluated at once.
_MAX_CELLS = 2_000_000
#: Distances d over which Theorem 4.1's maximum is taken by default (Conjecture B.3: d = 1 attains it).
DEFAULT_MAX_DISTANCE = 50
#: Largest ``max_distance`` accepted (the maximum over d costs one pmf ratio per unit of distance).
MAX_DISTANCE = 10_000


#: Largest noise epsilon (Geo-Shuffle's eps_geo, SGDL-Shuffle's eps) accepted: the noise parameter e^-eps is then
#: 3.7e-44, so a report is noiseless with probability 1 - 1e-43 (a guarantee of e^100 per unit distance is none),
#: and e^-2 eps stays a normal float64.  Beyond about 745, e^-eps is 0 in float64.
MAX_EPSILON = 100.0


def check_noise_epsilon(value: Any, name: str) -> float:
    """``value`` (a real number, not a string) as a float in [2^-52, MAX_EPSILON] (a metric protocol's noise
    epsilon), else PrivacyParameterError.

    Examples
    --------
    >>> check_noise_epsilon(0.5, "eps_geo")
    0.5
    >>> check_noise_epsilon(800, "eps_geo")
    Traceback (most recent call last):
    ...
    shuffledp.errors.PrivacyParameterError: eps_geo must be at most 100 (MAX_EPSILON: beyond it the noise e^-eps_geo vanishes), got 800
    """
    if isinstance(value, (bool, str, bytes)) or not isinstance(value, numbers.Real):
        raise PrivacyParameterError(f"{name} must be a number in (0, {MAX_EPSILON:g}], got {value!r}")
    number = check_epsilon(value, name)
    if number > MAX_EPSILON:
        raise PrivacyParameterError(
            f"{name} must be at most {MAX_EPSILON:g} (MAX_EPSILON: beyond it the noise e^-{name} vanishes), got {value!r}"
        )
    return number


def _no_smaller_reason(pmf: np.ndarray, largest_shift: int, bound: str) -> str:
    """Why the shift analysis certified nothing below ``bound``: float64 underflow of T's pmf, or genuinely none."""
    nonzero = np.flatnonzero(pmf > 0.0)
    reach = int(nonzero[-1] - nonzero[0]) // 2 if nonzero.size else 0
    if largest_shift > reach:
        return (
            f"no epsilon below {bound} certified: T's pmf underflows float64 beyond |t| = {reach} < n k = {largest_shift}, "
            "and the loss there counts as infinite (conservative)"
        )
    return f"no epsilon below {bound} meets delta at every sum distance"


class CertifiedEpsilon(NamedTuple):
    """A certified epsilon with where it comes from (returned by `geo_shuffle_certificate`,
    `sgdl_shuffle_certificate` and `rr_shuffle_certificate`).

    ``certified`` is True when the shuffle analysis itself gave ``epsilon``; False when ``epsilon`` is the
    fallback bound (the per-report / local epsilon, valid for every pair of datasets too) and ``reason`` says why
    the shuffle analysis was not used (not attempted, or it certified nothing smaller).
    """

    epsilon: float
    certified: bool
    reason: str


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
MAX_SGDL_OUTCOME = 2**53


def _as_offsets(r: Any) -> tuple[np.ndarray, np.ndarray]:
    """(|r| as int64, with 0 where |r| > MAX_SGDL_OUTCOME; |r| as float64) for integer ``r`` (any size)."""
    arr = np.asarray(r)
    if arr.dtype == object and all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in arr.flat):
        arr = np.array([float(v) for v in arr.flat], dtype=np.float64).reshape(arr.shape)  # Python ints beyond int64
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        if not (np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))):
            raise PrivacyParameterError(f"r (SGDL outcome) must hold integers, got {r!r}")
    size = np.abs(arr.astype(np.float64))
    return np.where(size > MAX_SGDL_OUTCOME, 0, np.abs(np.where(size > MAX_SGDL_OUTCOME, 0, arr))).astype(np.int64), size


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
        curv = 1.0 / np.maximum(n - 1.0 - peak, 1.0) + 1.0 / (peak + 1.0) - 1.0 / (n + peak) + 1.0 / (mf[:, 0] + 1.0 + peak)
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
            f"{-math.log(1.0 - 45.0 / _MAX_SERIES_TERMS) / 2.0:.3g}"
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
      characteristic function; tests/accounting/test_metric.py), i.e. below 1e-10 for n > 4096.
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
            -special.gammaln(j + 1.0) - special.gammaln(n - j) + special.gammaln(n + j) - special.gammaln(block + j + 1.0) + j * log_q
        )
        log_terms -= log_terms.max(axis=1, keepdims=True)  # O(1) sums: their difference keeps its digits
        out[start : start + block.shape[0]] = (
            log_p
            + np.log(n + block[:, 0])
            + special.logsumexp(log_terms - np.log(block + j + 1.0), axis=1)
            - special.logsumexp(log_terms, axis=1)
        )
    return out


def _relative_log_pmf(offsets: np.ndarray, n: int, p: float) -> np.ndarray:
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
        values = np.concatenate([_log_pmf_integer(unique[i : i + rows], int(beta), p) for i in range(0, unique.size, rows)] or [np.empty(0)])
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


def _distance_epsilons(log_pmf_at, center: float, distances: np.ndarray) -> np.ndarray:
    """ln g(center, d) / d: g = max(h, 1/h), h = pmf(floor(center - d/2)) / pmf(floor(center + d/2)) (Eq. 45-48)."""
    a = np.abs(np.floor(center - distances / 2.0)).astype(np.int64)
    b = np.abs(np.floor(center + distances / 2.0)).astype(np.int64)
    logs = log_pmf_at(np.concatenate([a, b]))
    return np.abs(logs[: a.size] - logs[a.size :]) / distances


def _distances(max_distance: int) -> np.ndarray:
    """d = 1..max_distance; at most `MAX_DISTANCE` (about 2 s at the costliest n, 4096; Conjecture B.3 puts the
    maximum at d = 1 and the exceptions found sit at single-digit d)."""
    return np.arange(1, check_positive_int(max_distance, "max_distance", maximum=MAX_DISTANCE) + 1, dtype=np.float64)


# --- RR-Shuffle (§3, Theorems 3.1 and 7.1) ---------------------------------------------------------------


def _rr_epsilon(lam: float, delta: float) -> float:
    """sqrt(32 log(4/delta) / (lambda - sqrt(2 lambda log(2/delta)))) (natural logarithms, as in Cheu et al.)."""
    return math.sqrt(32.0 * math.log(4.0 / delta) / (lam - math.sqrt(2.0 * lam * math.log(2.0 / delta))))


def rr_minimum_lambda(delta: float) -> float:
    """14 log(4/delta): the smallest expected number of random bits Theorem 3.1 accepts.

    Parameters
    ----------
    delta : float, in (0, 1)
        Target delta.

    Returns
    -------
    float
        14 log(4/delta).

    Raises
    ------
    PrivacyParameterError
        For ``delta`` out of range.

    References
    ----------
    metric-privacy-shuffler.txt §3, Theorem 3.1 (validity condition).

    Examples
    --------
    >>> round(rr_minimum_lambda(1e-4), 6) == round(14 * math.log(4e4), 6)
    True
    """
    return 14.0 * math.log(4.0 / check_delta(delta))


def rr_shuffle_epsilon_paper(delta: float, p: float, k: int, n: int) -> float:
    """Theorem 3.1 as printed: RR-Shuffle(delta, p, k, n) is (eps, delta)-d_X-private, lambda = p n k.

    NOT a valid bound for datasets far apart (all zeros against all k: the released counts are told apart,
    see `rr_shuffle_certified_epsilon`); kept to reproduce the paper (``method="theorem-3.1"``).  Its
    argument is the binary-summation bound of Cheu et al., which covers one bit changing, i.e. distance 1;
    Definition 4 needs every distance with the same delta.

    Applies when n k >= lambda >= 14 log(4/delta); otherwise `ValidityConditionError`
    naming the minimum n (and the largest epsilon the theorem can give).

    Parameters
    ----------
    delta : float, in (0, 1)
        Target delta.
    p : float, in (0, 1)
        Probability that a user's bit is replaced by a random bit.
    k : int, >= 1
        Largest value (values lie in {0..k}).
    n : int, >= 1
        Number of users.

    Returns
    -------
    float
        sqrt(32 log(4/delta) / (lambda - sqrt(2 lambda log(2/delta)))), lambda = p n k.

    Raises
    ------
    ValidityConditionError
        If lambda < 14 log(4/delta) (the theorem's condition).
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §3, Theorem 3.1.

    Examples
    --------
    >>> round(rr_shuffle_epsilon_paper(1e-4, 0.5, 1000, 100), 6)
    0.083184
    >>> rr_shuffle_epsilon_paper(1e-4, 0.5, 1, 10)
    Traceback (most recent call last):
    ...
    shuffledp.errors.ValidityConditionError: RR-Shuffle needs lambda = p n k >= 14 log(4/delta) = 148.353 (Theorem 3.1), got lambda = 5 at n=10, p=0.5, k=1: use n >= 297 (or a larger p)
    """
    delta = check_delta(delta)
    p = _check_rr_p(p)
    k, n = check_positive_int(k, "k (largest value)"), check_n(n)
    lam, lam_min = p * n * k, rr_minimum_lambda(delta)
    if lam < lam_min:
        need = math.ceil(lam_min / (p * k))
        if need > N_MAX:  # beyond the accepted n: only a larger p helps
            p_min = lam_min / (N_MAX * k)
            while p_min * N_MAX * k < lam_min:  # round-off: the suggested p must satisfy the condition
                p_min = math.nextafter(p_min, 1.0)
            raise ValidityConditionError(
                f"RR-Shuffle needs lambda = p n k >= 14 log(4/delta) = {lam_min:.6g} (Theorem 3.1), got "
                f"lambda = {lam:.6g} at n={n}, p={p:g}, k={k}: no n <= 2^53 works at this p; use p >= {p_min:.6g}",
                minimum_p=p_min,
                maximum_epsilon=_rr_epsilon(lam_min, delta),
            )
        raise ValidityConditionError(
            f"RR-Shuffle needs lambda = p n k >= 14 log(4/delta) = {lam_min:.6g} (Theorem 3.1), got "
            f"lambda = {lam:.6g} at n={n}, p={p:g}, k={k}: use n >= {need} (or a larger p)",
            minimum_n=need,
            maximum_epsilon=_rr_epsilon(lam_min, delta),
        )
    return _rr_epsilon(lam, delta)


def rr_shuffle_probability_paper(epsilon: float, delta: float, k: int, n: int) -> float:
    """The RR parameter p in (0, 1) at which Theorem 3.1 gives ``epsilon`` (never above it; not a valid bound).

    lambda solves eps^2 (lambda - sqrt(2 lambda log(2/delta))) = 32 log(4/delta); below the validity
    floor 14 log(4/delta) the floor is used (a smaller epsilon).  If lambda >= n k (p would reach 1),
    `ValidityConditionError` names the minimum n.

    Parameters
    ----------
    epsilon : float, > 0
        Target shuffle-model epsilon.
    delta : float, in (0, 1)
        Target delta.
    k : int, >= 1
        Largest value.
    n : int, >= 1
        Number of users.

    Returns
    -------
    float
        p = lambda / (n k).

    Raises
    ------
    ValidityConditionError
        If the needed lambda reaches n k.
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §3, Theorem 3.1 (inverted).

    Examples
    --------
    Round trip through `rr_shuffle_epsilon`, never above the target:

    >>> p = rr_shuffle_probability_paper(0.5, 1e-4, 1000, 100)
    >>> eps = rr_shuffle_epsilon_paper(1e-4, p, 1000, 100)
    >>> 0 < p < 1, 0.4999 < eps <= 0.5
    (True, True)
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    k, n = check_positive_int(k, "k (largest value)"), check_n(n)
    b = math.sqrt(2.0 * math.log(2.0 / delta))
    s = (b + math.sqrt(b * b + 4.0 * 32.0 * math.log(4.0 / delta) / epsilon**2)) / 2.0
    lam = max(s * s, rr_minimum_lambda(delta))
    while _rr_epsilon(lam, delta) > epsilon:  # round-off: err toward more random bits
        lam = math.nextafter(lam, math.inf)
    if lam >= n * k:
        need = math.floor(lam / k) + 1
        if need > N_MAX:
            raise ValidityConditionError(
                f"RR-Shuffle cannot reach epsilon={epsilon:g} at delta={delta:g} with n={n}, k={k}: it needs "
                f"lambda = {lam:.6g} random bits (Theorem 3.1), more than n k for every n <= 2^53; use a larger epsilon"
            )
        raise ValidityConditionError(
            f"RR-Shuffle cannot reach epsilon={epsilon:g} at delta={delta:g} with n={n}, k={k}: it needs "
            f"lambda = {lam:.6g} random bits out of n k = {n * k} (Theorem 3.1); use n >= {need}",
            minimum_n=need,
        )
    return lam / (n * k)


def rr_shuffle_local_epsilon_paper(delta: float, p: float, k: int) -> float:
    """Theorem 7.1 as printed (compromised shuffler): eps_L of Theorem 3.1's formula with lambda_L = p k.
    NOT a valid bound: see `rr_shuffle_certified_local_epsilon`.

    Its proof says seeing one user's k bits is the same as seeing them shuffled; the bits arrive in their
    positions, so moving x by 1 shows one bit that is Bern(1 - p/2) against Bern(p/2) (loss up to
    ln((2 - p)/p), e.g. 1.085 at p = 0.5, delta = 0.01, where this formula gives 0.67 for k = 1000).

    Applies when k >= lambda_L >= 14 log(4/delta); otherwise `ValidityConditionError` naming the
    minimum p (or that k itself is too small).

    Parameters
    ----------
    delta : float, in (0, 1)
        Target delta.
    p : float, in (0, 1)
        Probability that a user's bit is replaced by a random bit.
    k : int, >= 1
        Largest value.

    Returns
    -------
    float
        eps_L of Theorem 3.1's formula at lambda_L = p k.

    Raises
    ------
    ValidityConditionError
        If p k < 14 log(4/delta).
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §7, Theorem 7.1.

    Examples
    --------
    One user's bits are n = 1 of the shuffle-model formula:

    >>> rr_shuffle_local_epsilon_paper(1e-4, 0.5, 1000) == rr_shuffle_epsilon_paper(1e-4, 0.5, 1000, 1)
    True
    """
    delta = check_delta(delta)
    p = _check_rr_p(p)
    k = check_positive_int(k, "k (largest value)")
    lam, lam_min = p * k, rr_minimum_lambda(delta)
    if lam < lam_min:
        if lam_min > k:
            raise ValidityConditionError(
                f"Theorem 7.1 needs k >= 14 log(4/delta) = {lam_min:.6g} for any p, got k={k}", minimum_p=None
            )
        raise ValidityConditionError(
            f"Theorem 7.1 needs p k >= 14 log(4/delta) = {lam_min:.6g}, got p k = {lam:.6g} (p={p:g}, k={k}): "
            f"use p >= {lam_min / k:.6g}",
            minimum_p=lam_min / k,
            maximum_epsilon=_rr_epsilon(lam_min, delta),
        )
    return _rr_epsilon(lam, delta)


# --- RR-Shuffle, certified: the exact divergence of the released count, every pair of datasets -----------
#
# What the analyst sees.  Every bit of U(x_i, k) goes through RR(., p): it reads 1 with probability
# q1 = 1 - p/2 if it was 1, q0 = p/2 if it was 0 (Algorithm 2; `shuffledp.protocols.metric.RRShuffle`).  The
# shuffled bits are equivalent to their count (Proposition 1), whose law depends on the dataset only through
# S = sum_i x_i:  P_S = Bin(S, q1) + Bin(N - S, q0), N = n k.  Every S in 0..N is reached and every pair
# (S, S + D) by datasets at Manhattan distance exactly D (Eq. 1); a larger distance only relaxes
# Definition 4.  So the certified epsilon is the smallest eps with both D_{e^(eps D)}(P_{S+D} || P_S) and
# D_{e^(eps D)}(P_S || P_{S+D}) <= delta for all D = 1..N, S = 0..N - D.
#
# Facts used (each checked by tests/accounting/test_metric_certified.py):
#  (a) Threshold sets.  P_{S+D}(y) / P_S(y) is non-decreasing in y: P_{S+D} = Z + Bin(D, q1) and
#      P_S = Z + Bin(D, q0) with Z = Bin(S, q1) + Bin(N - S - D, q0) independent and log-concave, the two
#      binomials have the increasing ratio (q1/q0)^(2j - D), and convolving with a log-concave (PF2) kernel keeps
#      a monotone likelihood ratio (Karlin's composition formula).  So the hockey-stick divergence is a maximum
#      over threshold sets: D_{e^a}(P_{S+D} || P_S) = max_y SF_{S+D}(y) - e^a SF_S(y) (SF(y) = Pr[Y >= y]),
#      and the smallest a meeting delta is max_y ln((SF_{S+D}(y) - delta)_+ / SF_S(y)); likewise with CDFs
#      for the other direction.  No bisection.
#  (b) Removing blanket bits only helps the adversary.  The S one-bits and the N - S - D zero-bits outside the
#      D that differ add independent noise to both laws (post-processing), so the pair (S, S + D) in a world of
#      N bits is at most as distinguishable as the pair (0, D) in a world of M = N - S bits, and (reflecting
#      y -> M - y, ones <-> zeros) as the pair (M - D, M) in a world of M = S + D bits.  Hence, with
#      a1(D, M) / a2(D, M) the two directions of the pair (0, D) among M bits (both non-increasing in M):
#      direction "up" of (S, S+D) <= min(a1(D, N - S), a2(D, S + D)), direction "down" <= min(a2(D, N - S),
#      a1(D, S + D)); in particular every S is covered by the pair (0, D) among ceil((N + D) / 2) bits.
#  (c) Which S are worst.  The exact values at S = 0 lower-bound the answer; in every case we searched
#      exhaustively the maximum over all (S, D) sits at D = N, S = 0 (all zeros against all k), a single pair
#      of plain binomials.  The code does not rely on (c): it starts from that pair's epsilon L, certifies each
#      D with the cover of (b) at level L, refines with the per-S minimum of (b) (binary search on M), and
#      computes the remaining S exactly (raising L if one exceeds it).  The result is the exact maximum over
#      all pairs, up to the upward rounding below.
#  (d) Always valid: every bit is ln((2 - p)/p)-LDP and U(x, k) moves |x - x'| bits, so the release is
#      (ln((2 - p)/p), 0)-d_X-private (post-processing); the certified value never exceeds it, and it is
#      returned when N is too large for the exact search (`_MAX_RR_WORK`), e.g. at the paper's k = 1000.
#
# Rounding: log pmfs of the binomials come from a table of ln j! (log-gamma; absolute error ~ N ulp of ln N!,
# i.e. ~1e-12 relative on the pmf); a sum of two binomials is a direct convolution of positive terms (relative
# error ~ N ulp), after exponential tilting so that the region of interest is far from underflow; underflowed
# terms are 0, which can only raise the computed epsilon (they sit in denominators, and numerators, whose lost
# mass is below 1e-290, get an absolute 1e-250 added); tails are accumulated in log space.  Numerators are
# inflated and denominators deflated by _PMF_SLACK (1e-9), far above these errors.

#: Smallest RR parameter p accepted by the RR-Shuffle functions: p/2 and ln p stay normal floats far from
#: underflow, and the local epsilon ln((2 - p)/p) reaches about 691.5; a smaller p adds nothing usable.
RR_MIN_P = 1e-300


def _check_rr_p(p: float) -> float:
    """`check_probability` for RR's p, and p >= RR_MIN_P."""
    p = check_probability(p, "p (RR randomization probability)")
    if p < RR_MIN_P:
        raise PrivacyParameterError(
            f"p (RR randomization probability) must be >= {RR_MIN_P:g} (local epsilon at most "
            f"{_rr_local(RR_MIN_P):.6g}), got {p!r}"
        )
    return p


def _rr_local(p: float) -> float:
    """ln((2 - p)/p), the local epsilon of one RR bit (no overflow for p >= RR_MIN_P)."""
    return math.log((2.0 - p) / p)


#: Most multiply-adds of the exact RR-Shuffle search (beyond it the local epsilon ln((2-p)/p) is returned).
_MAX_RR_WORK = 6e8
#: The methods of `rr_shuffle_epsilon`.
RR_SHUFFLE_METHODS = ("certified", "theorem-3.1")


def _check_method(method: str, allowed: tuple[str, ...]) -> str:
    if method not in allowed:
        raise PrivacyParameterError(f"method must be one of {', '.join(allowed)}, got {method!r}")
    return method


@functools.lru_cache(maxsize=4)
def _log_factorials(size: int) -> np.ndarray:
    """ln j! for j = 0..size (read-only)."""
    out = special.gammaln(np.arange(size + 1, dtype=np.float64) + 1.0)
    out.flags.writeable = False
    return out


def _log_binomial_pmf(m: int, log_q: float, log_r: float) -> np.ndarray:
    """ln Pr[Bin(m, q) = j], j = 0..m, from log_q = ln q and log_r = ln(1 - q) (each computed directly, so that
    q near 1 keeps its ln(1 - q); log-gamma form; absolute error ~ m ulp of ln m!)."""
    lf = _log_factorials(max(m, 64))
    j = np.arange(m + 1)
    return lf[m] - lf[j] - lf[m - j] + j * log_q + (m - j) * log_r


#: Tilts tried by `_log_two_binomials` (interpolated to put a centre at the tilted mean).
_TILT_GRID = np.linspace(-60.0, 60.0, 481)


def _log_two_binomials(
    a: int, qa: tuple[float, float], b: int, qb: tuple[float, float], centers: tuple[float, ...]
) -> np.ndarray:
    """log pmf of Bin(a, qa) + Bin(b, qb) on 0..a+b: direct convolutions of positive terms, exponentially tilted
    (by e^(theta y), then undone) so that each of ``centers`` is near the tilted mean once, plus the untilted one;
    the largest (least underflowed) value is kept.  ``qa``, ``qb``: (ln q, ln(1 - q)) of each binomial.  Any tilt gives the same exact value up to rounding: the tilt
    only decides where values fall below the float range (they are then 0)."""
    la, lb = _log_binomial_pmf(a, *qa), _log_binomial_pmf(b, *qb)
    if a == 0 or b == 0:
        return la if b == 0 else lb
    ya, yb, y = np.arange(a + 1.0), np.arange(b + 1.0), np.arange(a + b + 1.0)
    means = a * special.expit(qa[0] - qa[1] + _TILT_GRID) + b * special.expit(qb[0] - qb[1] + _TILT_GRID)  # the tilted mean, increasing in theta
    out = np.full(a + b + 1, -np.inf)
    for theta in (0.0, *np.interp(centers, means, _TILT_GRID)):
        ta, tb = la + theta * ya, lb + theta * yb
        ma, mb = ta.max(), tb.max()
        with np.errstate(divide="ignore"):
            conv = np.log(np.convolve(np.exp(ta - ma), np.exp(tb - mb))) + ma + mb - theta * y
        out = np.maximum(out, conv)
    return out


def _rr_pair_epsilons(s: int, d: int, total: int, q0: float, delta: float) -> tuple[float, float]:
    """(a_up, a_down) / d: the smallest eps with D_{e^(eps d)}(P_{s+d} || P_s) <= delta, resp. the other direction,
    P_S = Bin(S, 1 - q0) + Bin(total - S, q0) (fact (a) of the comment above; rounded upward)."""
    q1 = 1.0 - q0  # only for the centres: the logs below never take ln(1 - q1) (1 - q1 rounds to 0 for tiny q0)
    l0 = (math.log(q0), math.log1p(-q0))
    l1 = (l0[1], l0[0])  # Bin(., 1 - q0)
    centers = (s * q1 + (total - s) * q0, (s + d) * q1 + (total - s - d) * q0)
    log_p = _log_two_binomials(s, l1, total - s, l0, centers)
    log_q = _log_two_binomials(s + d, l1, total - s - d, l0, centers)
    cdf_p, sf_p = np.logaddexp.accumulate(log_p), np.logaddexp.accumulate(log_p[::-1])[::-1]
    cdf_q, sf_q = np.logaddexp.accumulate(log_q), np.logaddexp.accumulate(log_q[::-1])[::-1]
    up_slack = math.log1p(_PMF_SLACK)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        num_up = np.exp(sf_q + up_slack) + 1e-250 - delta
        a_up = np.where(num_up > 0.0, np.log(np.where(num_up > 0.0, num_up, 1.0)) - (sf_p - up_slack), -np.inf)
        num_down = np.exp(cdf_p + up_slack) + 1e-250 - delta
        a_down = np.where(num_down > 0.0, np.log(np.where(num_down > 0.0, num_down, 1.0)) - (cdf_q - up_slack), -np.inf)
    return max(float(a_up.max()), 0.0) / d, max(float(a_down.max()), 0.0) / d


def _rr_search_work(total: int) -> float:
    """Multiply-adds of the cover step of the exact search (the pairs (0, D) among ceil((N + D)/2) bits).

    About N^3 / 4: beyond N = 4096 (far above the largest searched, 1335) infinity, without summing N terms
    (n k reaches 2^53 at the command line)."""
    if total > 4_096:
        return math.inf
    d = np.arange(1, total + 1, dtype=np.float64)
    return float(np.sum(3.0 * (d + 1.0) * (np.ceil((total + d) / 2.0) - d + 1.0)))


def rr_shuffle_certified_epsilon(delta: float, p: float, k: int, n: int) -> float:
    """The privacy-conservative RR-Shuffle epsilon: (eps, delta)-d_X-private for *every* pair of datasets.

    The exact smallest eps with D_{e^(eps D)} <= delta in both directions between the laws of the released count
    at every pair of sums (S, S + D), D = 1..n k (see the comment above this function in the source: threshold
    sets, blanket removal, exact refinement); at most the local epsilon ln((2 - p)/p), which is returned when
    n k is too large for the exact search (n k above 1335; about 1.5 s there).  Every rounding errs upward.

    Parameters
    ----------
    delta : float, in (0, 1)
        Target delta.
    p : float, in (0, 1)
        Probability that a user's bit is replaced by a random bit.
    k : int, >= 1
        Largest value (values in {0..k}).
    n : int, >= 1
        Number of users.

    Returns
    -------
    float
        The certified epsilon, at most ln((2 - p)/p).

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §2.3 Definition 4 and Eq. 1, §3.2 Algorithm 2, §4 Proposition 1 (a conservative
    replacement of Theorem 3.1, which is not valid for datasets far apart).

    Examples
    --------
    Theorem 3.1's 0.083 at n = 100, k = 1000 does not survive all zeros against all thousands; with n k beyond the
    exact search the local epsilon is returned:

    >>> rr_shuffle_certified_epsilon(1e-4, 0.5, 1000, 100) == math.log(1.5 / 0.5)
    True
    >>> round(rr_shuffle_certified_epsilon(1e-4, 0.5, 4, 50), 4)  # 200 bits: some gain over ln 3 = 1.0986
    0.7798
    """
    delta = check_delta(delta)
    p = _check_rr_p(p)
    k, n = check_positive_int(k, "k (largest value)"), check_n(n)
    return rr_shuffle_certificate(delta, p, k, n).epsilon


def rr_shuffle_certificate(delta: float, p: float, k: int, n: int) -> CertifiedEpsilon:
    """`rr_shuffle_certified_epsilon` with where it comes from: ``(epsilon, certified, reason)``.

    ``certified`` is False when ``epsilon`` is the local ln((2 - p)/p) because n k is beyond the exact search
    (not attempted) or the search found nothing smaller.

    Parameters
    ----------
    delta : float, in (0, 1)
        Target delta.
    p : float, in (0, 1)
        Probability that a user's bit is replaced by a random bit.
    k : int, >= 1
        Largest value.
    n : int, >= 1
        Number of users.

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
    metric-privacy-shuffler.txt §3.2 Algorithm 2, Definition 4.

    Examples
    --------
    >>> rr_shuffle_certificate(1e-4, 0.5, 4, 50).certified, rr_shuffle_certificate(1e-4, 0.5, 1000, 100).certified
    (True, False)
    """
    delta = check_delta(delta)
    p = _check_rr_p(p)
    k, n = check_positive_int(k, "k (largest value)"), check_n(n)
    q0, total = p / 2.0, n * k
    local = _rr_local(p)
    fallback = "the local bound ln((2 - p)/p)"
    work = _rr_search_work(total)
    if work > _MAX_RR_WORK:
        cost = f"{work:,.0f} multiply-adds" if math.isfinite(work) else f"about {total**3 / 4.0:.3g} multiply-adds"
        return CertifiedEpsilon(
            local, False, f"not attempted: the exact search over n k = {total} bits takes {cost}, above the limit "
            f"{_MAX_RR_WORK:,.0f} (n k <= 1335): {fallback}"
        )
    level = max(_rr_pair_epsilons(0, total, total, q0, delta))  # all zeros against all k: attained
    eps = _rr_search(total, q0, delta, level, range(1, total))
    if not eps < local:
        return CertifiedEpsilon(local, False, f"no epsilon below the local one meets delta for every pair: {fallback}")
    return CertifiedEpsilon(eps, True, f"certified: exact over every pair of sums among n k = {total} bits")


def _rr_search(total: int, q0: float, delta: float, level: float, distances: range) -> float:
    """max(level, the largest pair epsilon over every (S, S + D), D in ``distances``) (``level``: a value attained
    by some pair, or 0): the cover / refine / exact steps of fact (b) in the comment above."""
    cover_cache: dict[tuple[int, int], tuple[float, float]] = {}

    def cover(d: int, m: int) -> tuple[float, float]:  # (a1, a2) of the pair (0, d) among m bits
        if (d, m) not in cover_cache:
            cover_cache[(d, m)] = _rr_pair_epsilons(0, d, m, q0, delta)
        return cover_cache[(d, m)]

    def smallest_world(d: int, which: int, lo: int, level: float) -> int:
        """Smallest m in [lo, total] with cover(d, m)[which] <= level (total + 1 if none): non-increasing in m."""
        if cover(d, total)[which] > level:
            return total + 1
        hi = total
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if cover(d, mid)[which] <= level else (mid + 1, hi)
        return lo

    for d in distances:
        half = (total + d + 1) // 2
        if max(cover(d, half)) <= level:
            continue
        m1, m2 = smallest_world(d, 0, d, level), smallest_world(d, 1, d, level)
        s = np.arange(total - d + 1)
        ones, zeros = total - s, s + d  # world sizes after removing the one-bits, resp. the zero-bits
        up_ok = (ones >= m1) | (zeros >= m2)
        down_ok = (ones >= m2) | (zeros >= m1)
        for s_left in s[~(up_ok & down_ok)]:
            level = max(level, *_rr_pair_epsilons(int(s_left), d, total, q0, delta))
        cover_cache.clear()
    return level


def rr_shuffle_epsilon(delta: float, p: float, k: int, n: int, *, method: str = "certified") -> float:
    """Shuffle-model epsilon of RR-Shuffle(delta, p, k, n) on values in {0..k}.

    ``method="certified"`` (default): `rr_shuffle_certified_epsilon`, valid for every pair of datasets
    (Definition 4), never above the local ln((2 - p)/p), no validity condition.  ``method="theorem-3.1"``: the
    paper's formula (`rr_shuffle_epsilon_paper`), not a valid bound for datasets far apart, with its
    `ValidityConditionError`.

    Parameters
    ----------
    delta : float, in (0, 1)
        Target delta.
    p : float, in (0, 1)
        Probability that a user's bit is replaced by a random bit.
    k : int, >= 1
        Largest value (values in {0..k}).
    n : int, >= 1
        Number of users.
    method : {"certified", "theorem-3.1"}
        Which analysis (see above).

    Returns
    -------
    float
        The shuffle-model epsilon.

    Raises
    ------
    ValidityConditionError
        With ``method="theorem-3.1"`` outside Theorem 3.1's condition.
    PrivacyParameterError
        For an unknown ``method`` or an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §3, Algorithm 2, Theorem 3.1.

    Examples
    --------
    >>> round(rr_shuffle_epsilon(1e-4, 0.5, 4, 50), 4), round(rr_shuffle_epsilon(1e-4, 0.5, 1000, 100, method="theorem-3.1"), 6)
    (0.7798, 0.083184)
    """
    if _check_method(method, RR_SHUFFLE_METHODS) == "certified":
        return rr_shuffle_certified_epsilon(delta, p, k, n)
    return rr_shuffle_epsilon_paper(delta, p, k, n)


def rr_shuffle_probability(epsilon: float, delta: float, k: int, n: int, *, method: str = "certified") -> float:
    """The RR parameter p in (0, 1) at which `rr_shuffle_epsilon` (``method``) is at most ``epsilon``.

    ``method="certified"`` (default): the smallest such p up to a relative 1e-6 in p or 1e-7 in epsilon (regula
    falsi on log p; the certified epsilon does not increase with p, since RR(p') is a post-processing of RR(p)
    for p' > p), never
    failing: p = 2 / (1 + e^eps) always qualifies (local epsilon), and is the answer when n k is beyond the
    exact search.  Each step is one certified epsilon (about 1.5 s at the largest n k searched, n k = 1335,
    where the inverse takes about 15 s).
    ``method="theorem-3.1"``: `rr_shuffle_probability_paper` (may raise `ValidityConditionError`).

    Parameters
    ----------
    epsilon : float, > 0
        Target shuffle-model epsilon.
    delta : float, in (0, 1)
        Target delta.
    k : int, >= 1
        Largest value.
    n : int, >= 1
        Number of users.
    method : {"certified", "theorem-3.1"}
        Which analysis.

    Returns
    -------
    float
        p in (0, 1).

    Raises
    ------
    ValidityConditionError
        With ``method="theorem-3.1"`` if the needed lambda reaches n k.
    PrivacyParameterError
        For an unknown ``method`` or an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §3, Algorithm 2, Theorem 3.1 (inverted).

    Examples
    --------
    >>> p = rr_shuffle_probability(0.9, 1e-4, 4, 50)
    >>> rr_shuffle_epsilon(1e-4, p, 4, 50) <= 0.9 < rr_shuffle_epsilon(1e-4, p * (1 - 1e-5), 4, 50)
    True
    >>> p = rr_shuffle_probability(0.5, 1e-4, 1000, 100)  # beyond the exact search: the local epsilon's p
    >>> abs(p - 2 / (1 + math.exp(0.5))) < 1e-15, math.log((2 - p) / p) <= 0.5
    (True, True)
    """
    if _check_method(method, RR_SHUFFLE_METHODS) == "theorem-3.1":
        return rr_shuffle_probability_paper(epsilon, delta, k, n)
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    k, n = check_positive_int(k, "k (largest value)"), check_n(n)
    if epsilon >= _rr_local(RR_MIN_P):  # the smallest p allowed already meets it
        return RR_MIN_P
    hi = 2.0 * special.expit(-epsilon)  # ln((2 - hi)/hi) = eps
    while _rr_local(hi) > epsilon:  # round-off: err toward more randomization
        hi = math.nextafter(hi, 1.0)
    if _rr_search_work(n * k) > _MAX_RR_WORK:
        return hi
    gap = lambda log_p: rr_shuffle_certified_epsilon(delta, max(math.exp(log_p), RR_MIN_P), k, n) - epsilon  # noqa: E731
    x_hi, f_hi = math.log(hi), gap(math.log(hi))
    x_floor = math.log(RR_MIN_P)
    x_lo = max(x_hi - math.log(2.0), x_floor)
    f_lo = gap(x_lo)
    while f_lo <= 0.0 and x_lo > x_floor:  # bracket: f_lo > 0 (too little randomization) >= f_hi
        x_hi, f_hi, x_lo = x_lo, f_lo, max(x_lo - math.log(2.0), x_floor)
        f_lo = gap(x_lo)
    if f_lo <= 0.0:  # even the smallest p allowed meets the target
        return RR_MIN_P
    side = 0
    while x_hi - x_lo > 1e-6 and f_hi < -1e-7 * epsilon:  # Illinois regula falsi on log p
        x = (x_lo * f_hi - x_hi * f_lo) / (f_hi - f_lo)
        if not x_lo < x < x_hi:
            x = 0.5 * (x_lo + x_hi)
        f = gap(x)
        if f <= 0.0:
            x_hi, f_hi = x, f
            f_lo, side = (f_lo / 2.0, side) if side == -1 else (f_lo, -1)
        else:
            x_lo, f_lo = x, f
            f_hi, side = (f_hi / 2.0, side) if side == 1 else (f_hi, 1)
    return max(math.exp(x_hi), RR_MIN_P) if gap(x_hi) <= 0.0 else hi  # checked: never above the target


#: The methods of `rr_shuffle_local_epsilon`.
RR_LOCAL_METHODS = ("certified", "theorem-7.1")


def rr_shuffle_certified_local_epsilon(delta: float, p: float, k: int) -> float:
    """RR-Shuffle's local-model epsilon when the shuffler is compromised, exactly: max over d = 1..k of the
    smallest eps with D_{e^(eps d)} <= delta between Bin(d, 1 - p/2) and Bin(d, p/2) (both directions).

    The analyst then sees each user's k bits in their positions; x and x' at distance d differ in d positions of
    U(., k), each Bern(1 - p/2) against Bern(p/2), the others equal in law, so the count of ones among those d
    bits is sufficient (threshold sets as in `rr_shuffle_certified_epsilon`).  Not monotone in d.  At most
    ln((2 - p)/p), which is returned when k is too large for the search (k above about 10^4).

    Parameters
    ----------
    delta : float, in (0, 1)
        Target delta.
    p : float, in (0, 1)
        Probability that a user's bit is replaced by a random bit.
    k : int, >= 1
        Largest value.

    Returns
    -------
    float
        eps_L, at most ln((2 - p)/p).

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §7, Theorem 7.1 (replaced), Algorithm 2.

    Examples
    --------
    >>> round(rr_shuffle_certified_local_epsilon(0.01, 0.5, 1000), 4), round(rr_shuffle_local_epsilon_paper(0.01, 0.5, 1000), 4)
    (1.0906, 0.6699)
    """
    delta = check_delta(delta)
    p = _check_rr_p(p)
    k = check_positive_int(k, "k (largest value)")
    local = _rr_local(p)
    if 5.0 * k * k > _MAX_RR_WORK:
        return local
    worst = max(max(_rr_pair_epsilons(0, d, d, p / 2.0, delta)) for d in range(1, k + 1))
    return min(worst, local)


def rr_shuffle_local_epsilon(delta: float, p: float, k: int, *, method: str = "certified") -> float:
    """RR-Shuffle's local-model epsilon if the shuffler is compromised.

    ``method="certified"`` (default): `rr_shuffle_certified_local_epsilon` (exact, no condition);
    ``method="theorem-7.1"``: `rr_shuffle_local_epsilon_paper` (not a valid bound; may raise
    `ValidityConditionError`).

    Parameters
    ----------
    delta : float, in (0, 1)
        Target delta.
    p : float, in (0, 1)
        Probability that a user's bit is replaced by a random bit.
    k : int, >= 1
        Largest value.
    method : {"certified", "theorem-7.1"}
        Which analysis.

    Returns
    -------
    float
        eps_L.

    Raises
    ------
    ValidityConditionError
        With ``method="theorem-7.1"`` outside Theorem 7.1's condition.
    PrivacyParameterError
        For an unknown ``method`` or an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §7, Theorem 7.1.

    Examples
    --------
    >>> rr_shuffle_local_epsilon(0.01, 0.5, 1000) > rr_shuffle_local_epsilon(0.01, 0.5, 1000, method="theorem-7.1")
    True
    """
    if _check_method(method, RR_LOCAL_METHODS) == "theorem-7.1":
        return rr_shuffle_local_epsilon_paper(delta, p, k)
    return rr_shuffle_certified_local_epsilon(delta, p, k)


# --- Geo-Shuffle (§4, Proposition 2, Theorem 4.1, Proposition 5) ----------------------------------------


def _tail_share(delta: float, n: int) -> float:
    """1 - (1 - delta)^(1/n), without cancellation."""
    return -math.expm1(math.log1p(-delta) / n)


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


def geo_shuffle_epsilons_by_distance(eps_geo: float, delta: float, n: int, max_distance: int = DEFAULT_MAX_DISTANCE) -> np.ndarray:
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


def geo_shuffle_epsilon_paper(eps_geo: float, delta: float, n: int, *, max_distance: int = DEFAULT_MAX_DISTANCE) -> float:
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


# --- Geo-Shuffle, certified: the privacy-conservative reading of Theorem 4.1 ------------------------------
#
# Definition 4 compares *every* pair of datasets, with one delta for every distance d = sum_i |x_i - x'_i|,
# and values lie in {0..k}, so sums differ by D = 1..n k.  Theorem 4.1 bounds the loss only on a window
# around the midpoint of the two sums; SGDL(n, e^-eps_geo) has tails of rate eps_geo, so at large D the
# needed eps tends to eps_geo (n = 100, eps_geo = 0.2: 0.032 at D = 1, 0.104 at D = 1000, 0.171 at
# D = 10^4 for the untruncated sum).  And Proposition 3 needs the mechanism *conditioned* on nobody
# truncating: there the noise is T = the sum of n discrete Laplace draws conditioned on [-c, c], whose
# support [-nc, nc] makes the release distinguishable outright once D > 2 n c.  What holds:
#   * always: (eps_geo, 0) (every report is post-processing of eps_geo-d_R-private noise; Proposition 5);
#   * at sum distance D: (eps, delta_1 + Pr[H] D_{e^(eps D)}(T + D || T)), delta_1 = 1 - Pr[H]
#     (Proposition 3 with the conditioned mechanism; H = every |N_i| <= c, independent of the data).
# The certified epsilon is the smallest eps <= eps_geo meeting delta at every D = 1..n k, else eps_geo.

#: Most multiply-adds spent convolving T (beyond it the certificate is not attempted: eps_geo is returned, and
#: `geo_shuffle_conditioned_noise` / `sgdl_shuffle_conditioned_noise` refuse).
_MAX_CONVOLUTION_WORK = 4e8


def _convolution_work(c: int, n: int) -> float:
    """Multiply-adds (an upper estimate) of convolving n copies of a pmf on [-c, c]: 2 (c + 1)^2 n^2."""
    return 2.0 * (c + 1) ** 2 * float(n) * float(n)


#: Most (shift, outcome) cells of the divergence search over D = 1..n k (n k (2 n c + 1); about 3 s).
_MAX_SHIFT_CELLS = 3e7


def _too_costly(c: int, n: int, k: int, fallback: str) -> str | None:
    """Why the certificate is not attempted (convolution or shift search beyond its limit), or None."""
    work = _convolution_work(c, n)
    if work > _MAX_CONVOLUTION_WORK:
        return (
            f"not attempted: convolving the conditioned noise of n={n} users (c={c}) takes 2 (c+1)^2 n^2 = {work:.3g} "
            f"multiply-adds, above the limit {_MAX_CONVOLUTION_WORK:.3g}: {fallback}"
        )
    cells = float(n) * k * (2.0 * n * c + 1.0)
    if cells > _MAX_SHIFT_CELLS:
        return (
            f"not attempted: the divergence search over D = 1..n k takes n k (2 n c + 1) = {cells:.3g} cells (n={n}, k={k}, "
            f"c={c}), above the limit {_MAX_SHIFT_CELLS:.3g}: {fallback}"
        )
    return None


def _check_convolution_size(c: int, n: int) -> None:
    work = _convolution_work(c, n)
    if work > _MAX_CONVOLUTION_WORK:
        raise PrivacyParameterError(
            f"the conditioned noise of n={n} users on [-c, c], c={c}, costs 2 (c+1)^2 n^2 = {work:.3g} multiply-adds, "
            f"above the limit {_MAX_CONVOLUTION_WORK:.3g}: use a smaller n or c"
        )


#: Relative slack on T's pmf (direct convolution of positive terms; rounding is far below this).
_PMF_SLACK = 1e-9
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
    p = math.exp(-eps_geo)
    one = np.exp(-eps_geo * np.abs(np.arange(-c, c + 1, dtype=np.float64)))
    one /= one.sum()
    pmf = one
    for _ in range(n - 1):
        pmf = np.convolve(pmf, one)
    inside = -math.expm1(math.log(2.0) + (c + 1) * math.log(p) - math.log1p(p))  # 1 - 2 p^(c+1)/(1+p)
    return pmf, math.exp(n * math.log(inside))


def _shift_epsilons(upper: np.ndarray, lower: np.ndarray, shifts: np.ndarray, budget: float) -> np.ndarray:
    """For each D in ``shifts``: the smallest eps with sum_t max(0, upper(t) - e^(eps D) lower(t - D)) <= budget.

    ``upper``/``lower`` bound one pmf on the same support from above/below.  Sorting the outcomes by their
    loss ln(upper(t) / lower(t - D)) / D makes the divergence A_i - e^(eps D) B_i on each stretch between
    two losses; the root is taken on the stretch where the divergence crosses the budget.  +inf when even
    the outcomes with lower(t - D) = 0 carry more than the budget.
    """
    size = upper.size
    padded = np.concatenate([np.zeros(int(shifts.max())), lower])
    windows = np.lib.stride_tricks.sliding_window_view(padded, size)
    out = np.empty(shifts.size)
    rows = max(1, 2_000_000 // size)
    for start in range(0, shifts.size, rows):
        d = shifts[start : start + rows]
        shifted = windows[padded.size - size - d]  # lower(t - D) aligned with upper(t)
        with np.errstate(divide="ignore", invalid="ignore"):
            loss = (np.log(upper)[None, :] - np.log(shifted)) / d[:, None]
        loss = np.where(upper[None, :] > 0.0, loss, -np.inf)
        order = np.argsort(-loss, axis=1)
        loss = np.take_along_axis(loss, order, axis=1)
        a = np.cumsum(np.take_along_axis(np.broadcast_to(upper, shifted.shape), order, axis=1), axis=1)
        b = np.cumsum(np.take_along_axis(shifted, order, axis=1), axis=1)
        below = np.concatenate([loss[:, 1:], np.full((d.size, 1), -np.inf)], axis=1)  # next loss down
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            root = np.where(a > budget, np.log((a - budget) / b) / d[:, None], -np.inf)
        root = np.where(np.isnan(root), np.inf, root)
        # on stretch i (eps between below_i and loss_i) the divergence is within budget iff eps >= root_i
        feasible = root <= loss
        candidate = np.where(feasible, np.maximum(root, below), np.inf)
        out[start : start + d.size] = np.maximum(np.minimum(candidate.min(axis=1), loss[:, 0]), 0.0)
    return out


def _shift_divergences(upper: np.ndarray, lower: np.ndarray, shifts: np.ndarray, epsilon: float) -> np.ndarray:
    """sum_t max(0, upper(t) - e^(eps D) lower(t - D)) for each D in ``shifts`` (the check of `_shift_epsilons`)."""
    size = upper.size
    padded = np.concatenate([np.zeros(int(shifts.max())), lower])
    windows = np.lib.stride_tricks.sliding_window_view(padded, size)
    out = np.empty(shifts.size)
    rows = max(1, 2_000_000 // size)
    for start in range(0, shifts.size, rows):
        d = shifts[start : start + rows]
        scaled = np.exp(epsilon * d)[:, None] * windows[padded.size - size - d]
        out[start : start + d.size] = np.maximum(upper[None, :] - scaled, 0.0).sum(axis=1)
    return out


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
    values unbounded (``k`` None), k > 2c (the conditioned noise's supports part), the convolution of T or the
    divergence search beyond its work limit (2 (c + 1)^2 n^2 > 4e8 multiply-adds, n k (2 n c + 1) > 3e7 cells: not
    attempted, so that every call answers within a few seconds), or no smaller eps is certified (the reason says
    when float64 underflow of T's pmf is the cause).

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
    >>> geo_shuffle_certificate(0.5, 1e-4, 1000, 10).reason
    'not attempted: convolving the conditioned noise of n=1000 users (c=35) takes 2 (c+1)^2 n^2 = 2.59e+09 multiply-adds, above the limit 4e+08: the per-report bound eps_geo (Proposition 5)'
    """
    eps_geo, delta, n = check_noise_epsilon(eps_geo, "eps_geo"), check_delta(delta), check_n(n)
    fallback = "the per-report bound eps_geo (Proposition 5)"
    if k is None:
        return CertifiedEpsilon(eps_geo, False, f"values unbounded (no k): {fallback}")
    k = check_positive_int(k, "k (largest value)")
    c = geo_shuffle_c(eps_geo, delta, n)
    if n * k > 2 * n * c:
        return CertifiedEpsilon(eps_geo, False, f"k={k} > 2c={2 * c}: the conditioned noises' supports part, {fallback}")
    costly = _too_costly(c, n, k, fallback)
    if costly is not None:
        return CertifiedEpsilon(eps_geo, False, costly)
    pmf, inside = geo_shuffle_conditioned_noise(eps_geo, c, n)
    budget = (delta - (1.0 - inside)) / inside  # on D_{e^(eps D)}(T + D || T)
    upper = pmf * (1.0 + _PMF_SLACK) + 1e-300
    lower = pmf * (1.0 - _PMF_SLACK)
    shifts = np.arange(1, n * k + 1)
    eps = float(_shift_epsilons(upper, lower, shifts, budget * (1.0 - 1e-9)).max())
    none_smaller = CertifiedEpsilon(eps_geo, False, f"{_no_smaller_reason(pmf, n * k, 'eps_geo')}: {fallback}")
    if not eps < eps_geo:
        return none_smaller
    eps = math.nextafter(eps * (1.0 + 1e-12), math.inf)
    if _shift_divergences(upper, lower, shifts, eps).max() > budget:  # belt and braces: never report an unmet eps
        return none_smaller
    return CertifiedEpsilon(min(eps, eps_geo), True, f"certified: delta met at every sum distance D = 1..{n * k}")


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
    if method == "certified":
        return geo_shuffle_certified_epsilon(eps_geo, delta, n, k)
    if method == "theorem-4.1":
        return geo_shuffle_epsilon_paper(eps_geo, delta, n, max_distance=max_distance)
    raise PrivacyParameterError(f"method must be one of {', '.join(GEO_SHUFFLE_METHODS)}, got {method!r}")


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


def geo_shuffle_local_epsilon(
    target_epsilon: float,
    delta: float,
    n: int,
    k: int | None = None,
    *,
    method: str = "certified",
    max_distance: int = DEFAULT_MAX_DISTANCE,
    max_eps_geo: float = MAX_EPSILON,
) -> float:
    """Largest eps_geo with ``geo_shuffle_epsilon(eps_geo, delta, n, k, method=method) <= target_epsilon``.

    Verified never above the target; within a relative 1e-7 of reaching it where the epsilon is continuous
    in eps_geo (alpha's floors and c's ceiling make it a step function in places).  eps_geo = target always
    qualifies (neither method exceeds eps_geo), so the search runs over [target, max_eps_geo].  With the
    default certified method and k > 2c (or k None) no amplification is certified and the result is the target;
    likewise with ``method="theorem-4.1"`` for n <= 4, where the theorem is undefined (no amplification: the
    guarantee is eps_geo itself).  A target at or above ``max_eps_geo`` returns ``max_eps_geo`` (the search's end).
    Cost: with the certified method, a bisection of up to about 20-60 certified evaluations, each within the
    certificate's work limits (a few seconds at most), so up to about a minute near those limits (e.g. n = 300,
    k = 5, target 0.3: about 20 evaluations of almost 3e7 cells).

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
    from shuffledp.accounting.inverse import largest_within

    target = check_epsilon(target_epsilon, "target_epsilon")
    delta, n = check_delta(delta), check_n(n)
    hi = check_noise_epsilon(max_eps_geo, "max_eps_geo")
    if method not in GEO_SHUFFLE_METHODS:
        raise PrivacyParameterError(f"method must be one of {', '.join(GEO_SHUFFLE_METHODS)}, got {method!r}")
    if hi <= target:
        return hi
    if method == "theorem-4.1" and n <= 4:  # Theorem 4.1 is undefined: its value is eps_geo itself, no amplification
        return target
    if method == "certified":
        return _bisect_within(lambda e: geo_shuffle_certified_epsilon(e, delta, n, k), target, target, hi)
    return largest_within(
        lambda e: geo_shuffle_epsilon(e, delta, n, k, method=method, max_distance=max_distance),
        target,
        target,
        hi,
        context=f"with n={n}, delta={delta:g}",
    )


def _bisect_within(cost, target: float, lo: float, hi: float, steps: int = 60) -> float:
    """A large x in [lo, hi] with cost(x) <= target, given cost(lo) <= target (bisection; every returned point checked).

    The certified epsilon steps with c's ceiling and may not be monotone, so the result is a point that meets
    the target, not necessarily the largest.
    """
    if cost(hi) <= target:
        return hi
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if cost(mid) <= target else (lo, mid)
        if hi - lo <= 1e-9 * lo:
            break
    return lo


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
        The epsilon for the pair, at most eps_geo ``distance``.

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
    from shuffledp.accounting.accountants import VariationRatioAccountant
    from shuffledp.accounting.events import ShuffleEvent
    from shuffledp.params import BlanketDecomposition
    from shuffledp.randomizers.geometric import Geometric

    eps_geo, delta, n = check_noise_epsilon(eps_geo, "eps_geo"), check_delta(delta), check_n(n)
    k, d = check_positive_int(k, "k (largest value)"), check_positive_int(distance, "distance")
    if d > k:
        raise PrivacyParameterError(f"distance must be at most k={k} (values lie in {{0..k}}), got {d}")
    pair = Geometric(eps_geo * d, 0, d).amplification_parameters()  # eps0 = eps_geo d, beta = TV at distance d
    # every other user's law is at least e^(-eps_geo k) times the victim's (values differ by at most k):
    # the three-class pair with the others' labels thinned by gamma = e^(-eps_geo (k - d)) relative to e^(-eps0)
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
    p = math.exp(-epsilon)
    one = sgdl_pmf(np.arange(-c, c + 1), 1.0 / n, p)
    one /= one.sum()
    pmf = one
    for _ in range(n - 1):
        pmf = np.convolve(pmf, one)
    tail = min(1.0, 2.0 * float(stats.nbinom(1.0 / n, -math.expm1(-epsilon)).sf(c)) * (1.0 + 1e-9))
    delta_1 = 1.0 if tail >= 1.0 else -math.expm1(n * math.log1p(-tail))
    return pmf, delta_1


def sgdl_shuffle_certified_epsilon(epsilon: float, delta: float, n: int, k: int | None, *, c: int | None = None) -> float:
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


def sgdl_shuffle_certificate(epsilon: float, delta: float, n: int, k: int | None, *, c: int | None = None) -> CertifiedEpsilon:
    """`sgdl_shuffle_certified_epsilon` with where it comes from: ``(epsilon, certified, reason)``.

    ``certified`` is False when ``epsilon`` is the per-report eps_u (`sgdl_shuffle_report_epsilon`): values
    unbounded, k > 2c, the convolution beyond the work limit (not attempted), delta_1 >= delta, or no smaller eps.

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
    if n * k > 2 * n * c:
        return CertifiedEpsilon(report, False, f"k={k} > 2c={2 * c}: the conditioned noises' supports part, {fallback}")
    costly = _too_costly(c, n, k, fallback)
    if costly is not None:
        return CertifiedEpsilon(report, False, costly)
    pmf, delta_1 = sgdl_shuffle_conditioned_noise(epsilon, c, n)
    budget = delta - delta_1  # Pr[H] <= 1 multiplies the divergence
    if not budget > 0.0:
        return CertifiedEpsilon(report, False, f"delta_1 = {delta_1:.3g} (some noise beyond c) leaves no delta: {fallback}")
    upper = pmf * (1.0 + _PMF_SLACK) + 1e-300
    lower = pmf * (1.0 - _PMF_SLACK)
    shifts = np.arange(1, n * k + 1)
    eps = float(_shift_epsilons(upper, lower, shifts, budget * (1.0 - 1e-9)).max())
    none_smaller = CertifiedEpsilon(report, False, f"{_no_smaller_reason(pmf, n * k, 'eps_u')}: {fallback}")
    if not eps < report:
        return none_smaller
    eps = math.nextafter(eps * (1.0 + 1e-12), math.inf)
    if _shift_divergences(upper, lower, shifts, eps).max() > budget:  # never report an unmet eps
        return none_smaller
    return CertifiedEpsilon(min(eps, report), True, f"certified: delta met at every sum distance D = 1..{n * k}")


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


def compromised_local_epsilons(
    epsilon_s: float, delta: float, n: int, k: int, *, geo_method: str = "certified", rr_method: str = "certified"
) -> dict[str, float | None]:
    """eps_L of the three protocols tuned to the same shuffle-model eps_S (§7, Figure 6).

    RR-Shuffle: with ``rr_method="certified"`` p from the certified inverse, then the certified local epsilon
    (`rr_shuffle_certified_local_epsilon`); with ``"theorem-3.1"`` the paper's pair, Theorem 3.1's inverse then
    Theorem 7.1 (None where either condition fails); Geo-Shuffle: eps_geo from the inverse of `geo_shuffle_epsilon`
    with ``geo_method`` (Proposition 5); SGDL-Shuffle: Theorem 7.2.  The paper's Figure 6 uses
    ``geo_method="theorem-4.1", rr_method="theorem-3.1"``.

    Parameters
    ----------
    epsilon_s : float, > 0
        The common shuffle-model epsilon.
    delta : float, in (0, 1)
        Target delta.
    n : int, >= 1
        Number of users.
    k : int, >= 1
        Largest value.
    geo_method : {"certified", "theorem-4.1"}
        Analysis of Geo-Shuffle.
    rr_method : {"certified", "theorem-3.1"}
        Analysis of RR-Shuffle (which p reaches eps_S).

    Returns
    -------
    dict
        ``{"rr-shuffle": float or None, "geo-shuffle": float, "sgdl-shuffle": float}``.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §7, Theorems 7.1-7.2, Proposition 5, Figure 6.

    Examples
    --------
    >>> out = compromised_local_epsilons(0.5, 1e-4, 100, 10, geo_method="theorem-4.1", rr_method="theorem-3.1")
    >>> out["rr-shuffle"] is None, out["sgdl-shuffle"] == sgdl_shuffle_local_epsilon(0.5, 100)
    (True, True)
    """
    try:
        p = rr_shuffle_probability(epsilon_s, delta, k, n, method=rr_method)
        local_method = "certified" if rr_method == "certified" else "theorem-7.1"
        rr: float | None = rr_shuffle_local_epsilon(delta, p, k, method=local_method)
    except ValidityConditionError:
        rr = None
    return {
        "rr-shuffle": rr,
        "geo-shuffle": geo_shuffle_local_epsilon(epsilon_s, delta, n, k, method=geo_method),
        "sgdl-shuffle": sgdl_shuffle_local_epsilon(epsilon_s, n),
    }


# --- two dimensions (Appendix D) --------------------------------------------------------------------------


def planar_guarantee(axis_epsilon: float, axis_delta: float) -> tuple[float, float]:
    """Theorem D.1 + Proposition 7: two (eps, delta)-d_R-private axes give (sqrt(2) eps, 2 delta)-||.||_2-privacy.

    Parameters
    ----------
    axis_epsilon : float, > 0
        Epsilon of each axis.
    axis_delta : float, in (0, 1)
        Delta of each axis.

    Returns
    -------
    (float, float)
        (sqrt(2) axis_epsilon, 2 axis_delta).

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt Appendix D, Theorem D.1 and Proposition 7.

    Examples
    --------
    >>> eps, delta = planar_guarantee(*axis_budget(1.0, 1e-6))  # the two are inverse
    >>> round(eps, 12), round(delta, 18)
    (1.0, 1e-06)
    """
    return math.sqrt(2.0) * check_epsilon(axis_epsilon, "axis_epsilon"), 2.0 * check_delta(axis_delta, "axis_delta")


def axis_budget(epsilon: float, delta: float) -> tuple[float, float]:
    """Per-axis (eps / sqrt(2), delta / 2) for an (eps, delta)-||.||_2-private planar release (Appendix D).

    Parameters
    ----------
    epsilon : float, > 0
        Target planar epsilon.
    delta : float, in (0, 1)
        Target planar delta.

    Returns
    -------
    (float, float)
        (epsilon / sqrt(2), delta / 2).

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt Appendix D.

    Examples
    --------
    >>> eps, delta = axis_budget(1.0, 1e-6)
    >>> round(eps, 6), delta
    (0.707107, 5e-07)
    """
    return check_epsilon(epsilon) / math.sqrt(2.0), check_delta(delta) / 2.0


__all__ = [
    "DEFAULT_MAX_DISTANCE",
    "MAX_SGDL_OUTCOME",
    "RR_MIN_P",
    "MAX_EPSILON",
    "check_noise_epsilon",
    "MAX_DISTANCE",
    "axis_budget",
    "CertifiedEpsilon",
    "geo_shuffle_certificate",
    "rr_shuffle_certificate",
    "sgdl_shuffle_certificate",
    "compromised_local_epsilons",
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
    "log_sgdl_mgf",
    "log_sgdl_pmf",
    "planar_guarantee",
    "rr_minimum_lambda",
    "RR_SHUFFLE_METHODS",
    "rr_shuffle_certified_epsilon",
    "rr_shuffle_epsilon",
    "rr_shuffle_epsilon_paper",
    "RR_LOCAL_METHODS",
    "rr_shuffle_certified_local_epsilon",
    "rr_shuffle_local_epsilon",
    "rr_shuffle_local_epsilon_paper",
    "rr_shuffle_probability",
    "rr_shuffle_probability_paper",
    "sgdl_pmf",
    "sgdl_shift_divergence",
    "sgdl_shuffle_c",
    "sgdl_shuffle_c_paper",
    "SGDL_SHUFFLE_METHODS",
    "sgdl_shuffle_certified_epsilon",
    "sgdl_shuffle_conditioned_noise",
    "sgdl_shuffle_epsilon",
    "sgdl_shuffle_epsilon_paper",
    "sgdl_shuffle_report_epsilon",
    "sgdl_shuffle_local_epsilon",
]
