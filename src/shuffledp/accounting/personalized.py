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
import numbers
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np
from scipy import optimize, special, stats

from shuffledp._util.validation import check_probability, check_real, check_rtol
from shuffledp.accounting._rounding import EPS_CEILING, N_MAX, rel_slack, tail_budget
from shuffledp.accounting.bounds import check_delta, check_n
from shuffledp.accounting.dominating_pair import DominatingPair, PairDivergence, count_window, solve_epsilon
from shuffledp.errors import NoCloneBoundError, PrivacyParameterError, ShapeError

#: Randomizer families with a clone capacity.
FAMILIES = ("binary-rr", "k-rr", "laplace")
_U = 2.0**-53
#: Arrays shorter than this are convolved directly (np.convolve), longer ones by FFT.
_DIRECT = 64
#: Safety factor of the FFT round-off bound C u log2(N) ||a||_2 ||b||_2.
_FFT_FACTOR = 10.0


# --------------------------------------------------------------------------- validation

#: Budgets accepted here: the accounting module's eps0 range.  Below 1e-6 the victim's pair
#: would rest on e^eps - 1 with float64 rounding error above u/eps ~ 2e-10 that the engine does
#: not charge; above 700, e^eps overflows float64 (math.exp raises above ~709.78).
MIN_BUDGET = 1e-6
MAX_BUDGET = 700.0
#: Widest clone-count law computed (entries, ~20 s of epsilon search at this width); beyond it
#: (about 10^10 users at clone capacity 1/2) the law is refused rather than allocated.
MAX_COUNT_WIDTH = 2**20


def _real_array(values: Any, name: str, *, bits: bool = False) -> np.ndarray:
    """``values`` as a float64 array (any shape) of real numbers: strings, and bools unless ``bits``, refused.

    A numpy array is judged by its dtype; anything else element by element (numpy would turn
    ``[1, True]`` into ``[1, 1]`` and ``[1.0, "2"]`` into strings).
    """
    numeric = isinstance(values, np.ndarray) and values.dtype.kind in ("iufb" if bits else "iuf")
    allowed = (numbers.Real, np.bool_) if bits else numbers.Real
    refused = () if bits else (bool, np.bool_)
    try:
        arr = values if numeric else np.asarray(values, dtype=object)
        if not numeric:
            flat = arr.ravel()
            bad = next((i for i, x in enumerate(flat) if not isinstance(x, allowed) or isinstance(x, refused)), None)
            if bad is not None:
                what = "numbers or bools (no strings)" if bits else "numbers only (no bools or strings)"
                raise PrivacyParameterError(f"{name} must contain {what}, got {flat[bad]!r} at index {bad}")
        return np.asarray(arr, dtype=np.float64)
    except (ValueError, TypeError) as exc:
        if isinstance(exc, PrivacyParameterError):
            raise
        raise ShapeError(f"{name} must be an array of numbers, got {values!r:.80}") from None


def check_budgets(values: Any, name: str, *, allow_empty: bool = True) -> np.ndarray:
    """``values`` as a 1-d float array of budgets in [`MIN_BUDGET`, `MAX_BUDGET`] (named errors).

    Parameters
    ----------
    values : float or array_like
        Local budgets eps_i, each a number (no bools or strings) in [1e-6, 700]; a scalar
        becomes a length-1 array.
    name : str
        The parameter name quoted in error messages.
    allow_empty : bool
        Whether an empty array is accepted.

    Returns
    -------
    numpy.ndarray
        1-d float64 array of the budgets.

    Raises
    ------
    ShapeError
        If ``values`` has more than one dimension or is ragged.
    PrivacyParameterError
        If a budget is not a number, not finite or out of range, or ``values`` is empty
        and ``allow_empty`` is False.

    Examples
    --------
    >>> check_budgets(0.5, "budgets").tolist()
    [0.5]
    >>> check_budgets([1.0, 1000.0], "budgets")
    Traceback (most recent call last):
    ...
    shuffledp.errors.PrivacyParameterError: budgets must be finite and in [1e-06, 700], got 1000.0 at index 1
    """
    arr = _real_array(values, name)
    scalar = arr.ndim == 0
    arr = np.atleast_1d(arr)
    if arr.ndim != 1:
        raise ShapeError(f"{name} must be a 1-d array of budgets, got shape {arr.shape}")
    if not allow_empty and arr.size == 0:
        raise PrivacyParameterError(f"{name} must hold at least one budget, got an empty array")
    bad = ~(np.isfinite(arr) & (arr >= MIN_BUDGET) & (arr <= MAX_BUDGET))
    if bad.any():
        i = int(np.argmax(bad))
        where = "" if scalar else f" at index {i}"
        raise PrivacyParameterError(f"{name} must be finite and in [{MIN_BUDGET:g}, {MAX_BUDGET:g}], got {float(arr[i])!r}{where}")
    return arr


def check_victim_budget(victim_eps: Any, plural: str, name: str = "victim_eps") -> float:
    """The victim's one budget; an array is refused with a pointer to ``plural`` (all victims at once)."""
    if _real_array(victim_eps, name).ndim != 0:
        raise ShapeError(f"{name} must be one budget, got {victim_eps!r:.80}; for a bound per user use {plural}")
    return float(check_budgets(victim_eps, name)[0])


def _check_counts(counts: Any, size: int, name: str) -> np.ndarray:
    """Multiplicities: ``size`` integers >= 0 summing to at most 2^53 - 1 (float64-exact user counts)."""
    arr = _real_array(counts, name).ravel()
    if arr.size != size:
        raise ShapeError(f"{name} must have one count per budget ({size}), got {arr.size}")
    bad = ~(np.isfinite(arr) & (arr >= 0.0) & (arr == np.round(arr)) & (arr < N_MAX))
    if bad.any():
        i = int(np.argmax(bad))
        raise PrivacyParameterError(f"{name} must be integers in [0, 2^53), got {float(arr[i])!r} at index {i}")
    if math.fsum(arr) >= N_MAX:
        raise PrivacyParameterError(f"{name} must sum to fewer than 2^53 users (with the victim at most 2^53), got {math.fsum(arr):.6g}")
    return arr.astype(np.int64)


def _others(others_eps: Any, others_counts: Any) -> tuple[np.ndarray, np.ndarray]:
    """The other users as (budgets, counts): one user per entry of ``others_eps`` unless counts are given."""
    o = check_budgets(others_eps, "others_eps")
    if others_counts is None:
        return o, np.ones(o.size, dtype=np.int64)
    return o, _check_counts(others_counts, o.size, "others_counts")


#: Most distinct budgets priced in one call: each needs its own clone-count law and search (~3 ms).
MAX_DISTINCT_BUDGETS = 20_000


def check_distinct_budgets(budgets: np.ndarray, name: str = "budgets", family: str = "binary-rr") -> tuple[np.ndarray, np.ndarray]:
    """Distinct values and counts of ``budgets``, refusing more than `MAX_DISTINCT_BUDGETS` values.

    Call it before any work whose result would be lost to the refusal (e.g. before randomizing).

    Raises
    ------
    PrivacyParameterError
        Naming the number of distinct budgets and what to do: round them up to a grid for
        binary-rr and k-rr (a larger budget never lowers a bound); for laplace, where rounding
        is not sound, have users pick their budgets from a grid.

    Examples
    --------
    >>> check_distinct_budgets(np.array([0.5, 1.0, 0.5]))[1].tolist()
    [2, 1]
    """
    values, counts = np.unique(budgets, return_counts=True)
    if values.size > MAX_DISTINCT_BUDGETS:
        raise PrivacyParameterError(
            f"{name} has {values.size:,} distinct values; at most {MAX_DISTINCT_BUDGETS:,} are priced in one call "
            "(each needs its own clone-count law): "
            + ("have the users pick their budgets from a grid (rounding given laplace budgets is not sound: "
               "a more conservative laplace user can get a worse guarantee)" if family == "laplace" else
               "round them up to a grid first, e.g. np.ceil(budgets / 0.01) * 0.01 "
               "(for binary-rr and k-rr a larger budget never lowers a bound)"))
    return values, counts


def check_family(family: str, k: int | None) -> None:
    """Raise NoCloneBoundError unless ``family`` has a clone bound (and "k-rr" an integer k >= 2).

    Parameters
    ----------
    family : str
        One of `FAMILIES`.
    k : int or None
        The alphabet size: an integer >= 2 for "k-rr", None for the other families.

    Raises
    ------
    NoCloneBoundError
        For a family without a clone bound, or "k-rr" without a valid k.
    PrivacyParameterError
        For a k given with another family.

    Examples
    --------
    >>> check_family("k-rr", 3)
    >>> check_family("gaussian", None)
    Traceback (most recent call last):
    ...
    shuffledp.errors.NoCloneBoundError: family must be one of binary-rr, k-rr, laplace (the families with a clone bound), got 'gaussian'
    >>> check_family("binary-rr", 3)
    Traceback (most recent call last):
    ...
    shuffledp.errors.PrivacyParameterError: k is only for family 'k-rr', got k=3 with family 'binary-rr'
    """
    if not isinstance(family, str) or family not in FAMILIES:
        raise NoCloneBoundError(f"family must be one of {', '.join(FAMILIES)} (the families with a clone bound), got {family!r}")
    if family != "k-rr":
        if k is not None:
            raise PrivacyParameterError(f"k is only for family 'k-rr', got k={k!r} with family {family!r}")
        return
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (numbers.Integral, float)) or int(k) != k or k < 2:
        raise NoCloneBoundError(f"family 'k-rr' needs the alphabet size k, an integer >= 2, got k={k!r}")


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


# --------------------------------------------------------------------------- Poisson-binomial law


@dataclass(frozen=True)
class CountPmf:
    """A sub-probability vector approximating the law of a count.

    ``pmf[i]`` is within ``rel * pmf[i] + abs_err`` of a sub-probability s(offset + i) <=
    Pr[C = offset + i]; the exact law puts at most ``missing`` mass beyond s (anywhere).

    Parameters
    ----------
    offset : int, >= 0
        The count of ``pmf[0]``.
    pmf : numpy.ndarray
        Approximate probabilities of the counts offset, offset + 1, ...
    rel : float, >= 0
        Relative error bound of each entry.
    abs_err : float, >= 0
        Absolute error bound of each entry.
    missing : float, >= 0
        Mass of the exact law not represented (trimmed edges).
    mu, var : float
        Mean and variance of the count (used to place trimming windows).

    References
    ----------
    personalized-shuffle-eapes.txt §3 (the count of clones; module docstring, "Computation").

    Examples
    --------
    >>> import numpy as np
    >>> c = CountPmf(2, np.array([0.25, 0.75]), 1e-15, 0.0, 0.0)
    >>> bool(np.allclose(c.err, [0.25e-15, 0.75e-15], rtol=1e-12, atol=0))
    True
    """

    offset: int
    pmf: np.ndarray
    rel: float
    abs_err: float
    missing: float
    mu: float = 0.0
    var: float = 0.0

    @property
    def err(self) -> np.ndarray:
        """Absolute error bound of each entry."""
        return self.rel * self.pmf + self.abs_err

_ONE = CountPmf(0, np.ones(1), 0.0, 0.0, 0.0)


def _combine_errors(ra, ea, la, rb, eb, lb, round_rel, round_abs):
    """Error of â*b̂ against a*b: relative parts add (non-negative terms), absolute parts
    propagate through the L1 norms (<= 1 + size * abs), plus the product's own round-off."""
    rel = ra + rb + ra * rb + round_rel
    absolute = ea * (1.0 + rb) * (1.0 + lb * eb) + eb * (1.0 + ra) * (1.0 + la * ea) + round_abs
    return rel, absolute


def _convolve(a: CountPmf, b: CountPmf) -> CountPmf:
    """a * b with its error bound (module docstring): direct sums of non-negative terms have
    relative round-off <= (min size + 1) u; the FFT an absolute one, 10 u log2 N ||a||_2 ||b||_2."""
    size = a.pmf.size + b.pmf.size - 1
    if min(a.pmf.size, b.pmf.size) <= _DIRECT:
        out = np.convolve(a.pmf, b.pmf)
        round_rel, round_abs = (min(a.pmf.size, b.pmf.size) + 1) * _U, 0.0
    else:
        nfft = 1 << (size - 1).bit_length()
        out = np.fft.irfft(np.fft.rfft(a.pmf, nfft) * np.fft.rfft(b.pmf, nfft), nfft)[:size]
        norms = math.sqrt(float(np.dot(a.pmf, a.pmf)) * float(np.dot(b.pmf, b.pmf)))
        round_rel, round_abs = 0.0, _FFT_FACTOR * _U * math.log2(nfft) * norms + 1e-300
    rel, absolute = _combine_errors(a.rel, a.abs_err, a.pmf.size, b.rel, b.abs_err, b.pmf.size, round_rel, round_abs)
    # true values are >= 0, so clipping only moves toward them
    return CountPmf(a.offset + b.offset, np.maximum(out, 0.0), rel, absolute, a.missing + b.missing, a.mu + b.mu, a.var + b.var)


def _bernstein_radius(var: np.ndarray | float, cut: float) -> np.ndarray | float:
    """t with 2 exp(-t^2 / (2 (var + t/3))) = cut: a sum of independent Bernoullis with
    variance ``var`` leaves its mean by >= t with probability <= cut (Bernstein)."""
    log_term = math.log(2.0 / cut)
    var = np.asarray(var, dtype=np.float64) * (1.0 + 1e-9) + 1e-12  # float sums of p (1 - p), rounded up
    return log_term / 3.0 + np.sqrt((log_term / 3.0) ** 2 + 2.0 * var * log_term) + 1.0


def _trim(x: CountPmf, cut: float) -> CountPmf:
    """Keep the counts within the Bernstein radius of the mean; the law outside has mass <= ``cut``."""
    if cut <= 0.0:
        return x
    t = float(_bernstein_radius(x.var, cut))
    lo = max(0, math.floor(x.mu - t) - x.offset)
    hi = min(x.pmf.size, math.ceil(x.mu + t) - x.offset + 1)
    if lo == 0 and hi == x.pmf.size:
        return x
    return CountPmf(x.offset + lo, x.pmf[lo:hi].copy(), x.rel, x.abs_err, x.missing + cut, x.mu, x.var)


def binomial_count(trials: int, prob: float, cut: float) -> CountPmf:
    """Binom(trials, prob) on a window holding all but <= ``cut`` of its mass (Boost pmf, rel_slack charged)."""
    if trials == 0 or prob <= 0.0:
        return _ONE
    mu, var = trials * prob, trials * prob * (1.0 - prob)
    if trials == 1:
        return CountPmf(0, np.array([1.0 - prob, prob]), _U, 0.0, 0.0, mu, var)
    lo, hi, tail = count_window(trials, prob, cut / 2.0) if cut > 0.0 else (0, trials, 0.0)
    pmf = stats.binom.pmf(np.arange(lo, hi + 1, dtype=np.float64), trials, prob)
    return CountPmf(lo, pmf, rel_slack(trials), 1e-300, tail, mu, var)


def _batched_tree(singles: np.ndarray, leaves: list[CountPmf], share: float) -> list[CountPmf]:
    """Pairwise products of many short leaves, level by level as one (rows, length) array.

    ``singles``: Bernoulli probabilities (one user each); ``leaves``: other short laws.
    Stops when few rows are left or rows grow long; returns the remaining nodes.
    """
    width = max([2] + [leaf.pmf.size for leaf in leaves])
    rows = np.zeros((singles.size + len(leaves), width))
    rows[: singles.size, 0] = 1.0 - singles
    rows[: singles.size, 1] = singles
    for i, leaf in enumerate(leaves, start=singles.size):
        rows[i, : leaf.pmf.size] = leaf.pmf
    offsets = np.array([0] * singles.size + [leaf.offset for leaf in leaves], dtype=np.int64)
    rel = max([_U] + [leaf.rel for leaf in leaves])
    abs_err = np.array([0.0] * singles.size + [leaf.abs_err for leaf in leaves])
    missing = np.array([0.0] * singles.size + [leaf.missing for leaf in leaves])
    mu = np.concatenate((singles, [leaf.mu for leaf in leaves]))
    var = np.concatenate((singles * (1.0 - singles), [leaf.var for leaf in leaves]))
    while rows.shape[0] > 64 and rows.shape[1] <= 2048:
        if rows.shape[0] % 2:
            pad = np.zeros((1, rows.shape[1]))
            pad[0, 0] = 1.0
            rows = np.vstack((rows, pad))
            offsets, abs_err, missing = np.append(offsets, 0), np.append(abs_err, 0.0), np.append(missing, 0.0)
            mu, var = np.append(mu, 0.0), np.append(var, 0.0)
        a, b = rows[0::2], rows[1::2]
        length = rows.shape[1]
        size = 2 * length - 1
        if length <= 8:
            out = np.zeros((a.shape[0], size))
            for j in range(length):
                out[:, j : j + length] += a[:, j : j + 1] * b
            round_rel, round_abs = (length + 1) * _U, np.zeros(a.shape[0])
        else:
            nfft = 1 << (size - 1).bit_length()
            out = np.fft.irfft(np.fft.rfft(a, nfft, axis=1) * np.fft.rfft(b, nfft, axis=1), nfft, axis=1)[:, :size]
            norms = np.sqrt(np.einsum("ij,ij->i", a, a) * np.einsum("ij,ij->i", b, b))
            round_rel, round_abs = 0.0, _FFT_FACTOR * _U * math.log2(nfft) * norms + 1e-300
        new_rel, new_abs = _combine_errors(rel, abs_err[0::2], length, rel, abs_err[1::2], length, round_rel, round_abs)
        rows, offsets = np.maximum(out, 0.0), offsets[0::2] + offsets[1::2]
        rel, abs_err, missing = new_rel, new_abs, missing[0::2] + missing[1::2]
        mu, var = mu[0::2] + mu[1::2], var[0::2] + var[1::2]
        if share > 0.0:
            # every row cut to its Bernstein window (law outside: mass <= share), at a common width
            t = _bernstein_radius(var, share)
            lo = np.maximum(np.floor(mu - t).astype(np.int64) - offsets, 0)
            hi = np.minimum(np.ceil(mu + t).astype(np.int64) - offsets + 1, rows.shape[1])
            keep = int(np.max(hi - lo))
            if keep < rows.shape[1]:
                lo = np.minimum(lo, rows.shape[1] - keep)
                rows = np.take_along_axis(rows, lo[:, None] + np.arange(keep)[None, :], axis=1)
                offsets, missing = offsets + lo, missing + share
    return [CountPmf(int(o), r, rel, float(e), float(m), float(a), float(v)) for o, r, e, m, a, v in zip(offsets, rows, abs_err, missing, mu, var)]


def _check_width(probs: np.ndarray, counts: np.ndarray, cut: float) -> None:
    """Refuse the law of ``counts[j]`` Bernoulli(``probs[j]``) if its Bernstein window would exceed
    `MAX_COUNT_WIDTH` entries."""
    var = float(np.sum(counts * probs * (1.0 - probs)))
    cut = max(cut, 1e-305)
    width = 2.0 * float(_bernstein_radius(var, cut)) + 1.0
    if width > MAX_COUNT_WIDTH:
        log_term = math.log(2.0 / cut)  # the variance whose window is MAX_COUNT_WIDTH wide (_bernstein_radius inverted)
        var_max = ((MAX_COUNT_WIDTH / 2.0 - 1.0 - log_term / 3.0) ** 2 - (log_term / 3.0) ** 2) / (2.0 * log_term)
        raise PrivacyParameterError(
            f"the clone count of these users has variance {var:.4g}: its law would need about {width:.3g} entries, "
            f"more than MAX_COUNT_WIDTH = {MAX_COUNT_WIDTH:,} (variance at most about {var_max:.3g}, e.g. "
            f"{4.0 * var_max:.3g} users at clone capacity 1/2)")


def poisson_binomial(probs: Any, cut: float = 1e-30, counts: Any = None) -> CountPmf:
    """Law of a sum of independent Bernoulli(probs), by divide-and-conquer convolution.

    Leaves are grouped by equal probability into binomials; the tree multiplies them
    pairwise (balanced; many short leaves level by level in one array), trimming edge
    mass at most ``cut`` in total (charged to ``missing``).

    Parameters
    ----------
    probs : array of float in [0, 1]
        The success probabilities.
    cut : float, >= 0
        Total edge mass that may be trimmed.
    counts : array of int >= 0, optional
        Number of Bernoullis with each probability (default one each): the law is built
        from these groups, never one entry per Bernoulli.

    Returns
    -------
    CountPmf

    Raises
    ------
    PrivacyParameterError
        For a probability outside [0, 1], ``cut`` outside [0, 1), bad counts (no bools or
        strings anywhere), or a law wider than `MAX_COUNT_WIDTH` entries.

    Examples
    --------
    >>> pb = poisson_binomial([0.5, 0.5, 0.5])
    >>> pb.offset, [round(float(v), 12) for v in pb.pmf]
    (0, [0.125, 0.375, 0.375, 0.125])
    >>> poisson_binomial([0.5], counts=[3]).pmf.size
    4
    """
    p = _real_array(probs, "probs").ravel()
    if not np.all((p >= 0.0) & (p <= 1.0)):
        raise PrivacyParameterError(f"probs must lie in [0, 1], got {float(p[~((p >= 0.0) & (p <= 1.0))][0])!r}")
    cut = check_probability(check_real(cut, "cut"), "cut", open_low=False)
    m = np.ones(p.size, dtype=np.int64) if counts is None else _check_counts(counts, p.size, "counts")
    return _grouped_law(p, m, cut)


def _grouped_law(p: np.ndarray, m: np.ndarray, cut: float) -> CountPmf:
    """`poisson_binomial` of validated inputs: ``m[j]`` Bernoullis of probability ``p[j]``."""
    keep = (p > 0.0) & (m > 0)
    values, inverse = np.unique(p[keep], return_inverse=True)
    if values.size == 0:
        return _ONE
    counts = np.bincount(inverse.ravel(), weights=m[keep].astype(np.float64)).astype(np.int64)  # sums < 2^53: exact
    _check_width(values, counts, cut)
    # every node of the tree is trimmed at most once: 2 * values.size trims in all
    share = cut / (4.0 * values.size)
    single = counts == 1
    nodes = [binomial_count(int(c), float(q), share) for q, c in zip(values[~single], counts[~single])]
    short = [node for node in nodes if node.pmf.size <= 64]
    if single.sum() + len(short) > 64:
        nodes = [node for node in nodes if node.pmf.size > 64] + _batched_tree(values[single], short, share)
    else:
        nodes = nodes + [binomial_count(1, float(q), share) for q in values[single]]
    while len(nodes) > 1:
        paired = [_trim(_convolve(nodes[i], nodes[i + 1]), share) for i in range(0, len(nodes) - 1, 2)]
        if len(nodes) % 2:
            paired.append(nodes[-1])
        nodes = paired
    return nodes[0]


def _leave_one_out(values: np.ndarray, counts: np.ndarray, cut: float) -> Iterator[CountPmf]:
    """For each group g in order, the law of the sum over all users but one of group g.

    prefix(g) x suffix(g) x Binom(counts[g] - 1, values[g]), streamed: the suffix products are
    computed once from the right keeping one per block of ~sqrt(G) groups, then recomputed
    block by block while the prefix runs forward.  A caller that solves each law and drops
    it holds O(sqrt(G)) laws instead of 2G, and the results are bit for bit those of keeping
    every prefix and suffix (the same operations in the same order).
    """
    g = values.size
    _check_width(values, counts, cut)
    share = cut / (4.0 * max(g, 1))
    leaves = [binomial_count(int(m), float(q), share) for q, m in zip(values, counts)]
    block = max(1, math.isqrt(g))
    ends = set(range(block - 1, g - 1, block)) | {g - 1}  # each block's last group

    def suffixes(last: int, stop: int, start: CountPmf) -> Iterator[tuple[int, CountPmf]]:
        """(i, product of leaves[i + 1:]) for i = last down to stop, from that of ``last``."""
        for i in range(last, stop - 1, -1):
            if i < last:
                start = _trim(_convolve(start, leaves[i + 1]), share)
            yield i, start

    checkpoints = {i: s for i, s in suffixes(g - 1, 0, _ONE) if i in ends}
    prefix = _ONE
    for first in range(0, g, block):
        last = min(first + block, g) - 1
        inside = dict(suffixes(last, first, checkpoints.pop(last)))
        for i in range(first, last + 1):
            minus = binomial_count(int(counts[i]) - 1, float(values[i]), share)
            yield _trim(_convolve(_convolve(prefix, inside.pop(i)), minus), share)
            if i < g - 1:
                prefix = _trim(_convolve(prefix, leaves[i]), share)


# --------------------------------------------------------------------------- upper bound


def _tight_window(x: CountPmf, cut: float) -> CountPmf:
    """Drop edge entries whose charged mass (value + error bound, summed from each end) is <= cut/2 per side.

    Narrower than the Bernstein window (the divergence is summed over fewer counts); the
    true mass dropped is at most the charged mass, which is added to ``missing``.
    """
    charged = (x.pmf + x.err) * (1.0 + 4.0 * _U)
    left, right = np.cumsum(charged), np.cumsum(charged[::-1])
    slack = x.pmf.size * _U  # float cumulative sums
    lo = int(np.searchsorted(left * (1.0 + slack), cut / 2.0, side="right"))
    hi = x.pmf.size - int(np.searchsorted(right * (1.0 + slack), cut / 2.0, side="right"))
    if hi <= lo or (lo == 0 and hi == x.pmf.size):
        return x
    dropped = (float(left[lo - 1]) if lo else 0.0) + (float(right[x.pmf.size - hi - 1]) if hi < x.pmf.size else 0.0)
    return CountPmf(x.offset + lo, x.pmf[lo:hi].copy(), x.rel, x.abs_err, x.missing + dropped * (1.0 + slack), x.mu, x.var)


def _count_divergence(victim_eps: float, count: CountPmf) -> PairDivergence:
    pair = DominatingPair.clones(victim_eps, 1, stronger=True)  # only w_same, w_other, w_diff, log_p are used
    return PairDivergence.from_count_pmf(pair, count.pmf, count.err, count.offset, count.missing)


def _solve_upper(victim_eps: float, count: CountPmf, delta: float, rtol: float, guess: float | None = None) -> float:
    div = _count_divergence(victim_eps, _tight_window(count, tail_budget(delta, rtol)))
    cap = div.pair.eps_cap
    if guess is None:
        guess = 2.0 * div.pair.w_diff * math.sqrt(2.0 * math.log(1.0 / delta) / max(count.mu, 1.0))
    return solve_epsilon(div.upper, delta, min(cap, EPS_CEILING), guess, rtol, True, cap=cap)


def _check_common(delta: Any, rtol: Any) -> tuple[float, float]:
    """delta in [1e-300, 1) and rtol in [1e-12, 1e-2], both numbers (no bools or strings)."""
    return check_delta(check_real(delta, "delta")), check_rtol(check_real(rtol, "rtol"))


def _clone_count(victim_eps: float, values: np.ndarray, counts: np.ndarray, family: str, k: int | None, cut: float) -> CountPmf:
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
    return personalized_divergence(victim_eps, others_eps, family, k=k, tail_mass=tail_mass, others_counts=others_counts)(epsilon)


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


def personalized_shuffle_epsilons_lower(budgets: Sequence[float], delta: float, *, rtol: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
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
    if not np.all((d >= 0.0) & (d < 1.0)):
        raise PrivacyParameterError(f"deltas must lie in [0, 1), got {float(d[~((d >= 0.0) & (d < 1.0))][0])!r}")
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
    eps, mu = check_real(eps, "eps"), check_real(mu, "mu")
    if not (math.isfinite(eps) and 0.0 <= eps <= EPS_CEILING):
        raise PrivacyParameterError(f"eps must be finite and in [0, {EPS_CEILING:g}], got {eps!r}")
    if not (math.isfinite(mu) and mu > 0.0):
        raise PrivacyParameterError(f"mu must be finite and > 0, got {mu!r}")
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
    n: int, budgets: Sequence[float], delta: float, family: str = "binary-rr", *, k: int | None = None, rtol: float = 1e-6
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
        raise PrivacyParameterError(f"n must be at least the number of budgets ({b.size}), got n={n}")
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
    "check_budgets",
    "check_family",
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
