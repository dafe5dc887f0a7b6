"""The count-law engine: the law of a sum of independent Bernoullis (Poisson binomial), certified.

Used by the personalized clone bound (`shuffledp.accounting.personalized`), whose count of
clones C ~ PoissonBinomial(c_j : j != victim) this computes.  The law is built by
divide-and-conquer convolution (direct for short arrays, FFT otherwise) in linear space, with
a rigorous absolute error per entry (|a*b - â*b̂| <= E_a ||b̂||_1 + E_b ||a||_1 plus the
round-off of the product, bounded for the FFT by 10 u log2(N) ||a||_2 ||b||_2, u = 2^-53: the
worst-case FFT bound with a wide margin) and edges trimmed with their mass charged.  Entries
whose true value is below the error floor (~1e-16) are not resolved, which only matters
through the charged errors.

References
----------
personalized-shuffle-eapes.txt §3 (the count of clones).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from shuffledp._util.validation import check_probability, check_real
from shuffledp.accounting._checks import check_counts, real_array
from shuffledp.accounting._rounding import UNIT_ROUNDOFF, rel_slack
from shuffledp.accounting.dominating_pair import count_window
from shuffledp.errors import PrivacyParameterError

_U = UNIT_ROUNDOFF
#: Arrays shorter than this are convolved directly (np.convolve), longer ones by FFT.
_DIRECT = 64
#: Safety factor of the FFT round-off bound C u log2(N) ||a||_2 ||b||_2.
_FFT_FACTOR = 10.0
#: Widest clone-count law computed (entries, ~20 s of epsilon search at this width); beyond it
#: (about 10^10 users at clone capacity 1/2) the law is refused rather than allocated.
MAX_COUNT_WIDTH = 2**20


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


ONE = CountPmf(0, np.ones(1), 0.0, 0.0, 0.0)


def _combine_errors(ra, ea, la, rb, eb, lb, round_rel, round_abs):
    """Error of â*b̂ against a*b: relative parts add (non-negative terms), absolute parts
    propagate through the L1 norms (<= 1 + size * abs), plus the product's own round-off."""
    rel = ra + rb + ra * rb + round_rel
    absolute = ea * (1.0 + rb) * (1.0 + lb * eb) + eb * (1.0 + ra) * (1.0 + la * ea) + round_abs
    return rel, absolute


def convolve(a: CountPmf, b: CountPmf) -> CountPmf:
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
    return CountPmf(
        a.offset + b.offset, np.maximum(out, 0.0), rel, absolute, a.missing + b.missing, a.mu + b.mu, a.var + b.var
    )


def bernstein_radius(var: np.ndarray | float, cut: float) -> np.ndarray | float:
    """t with 2 exp(-t^2 / (2 (var + t/3))) = cut: a sum of independent Bernoullis with
    variance ``var`` leaves its mean by >= t with probability <= cut (Bernstein)."""
    log_term = math.log(2.0 / cut)
    var = np.asarray(var, dtype=np.float64) * (1.0 + 1e-9) + 1e-12  # float sums of p (1 - p), rounded up
    return log_term / 3.0 + np.sqrt((log_term / 3.0) ** 2 + 2.0 * var * log_term) + 1.0


def trim(x: CountPmf, cut: float) -> CountPmf:
    """Keep the counts within the Bernstein radius of the mean; the law outside has mass <= ``cut``."""
    if cut <= 0.0:
        return x
    t = float(bernstein_radius(x.var, cut))
    lo = max(0, math.floor(x.mu - t) - x.offset)
    hi = min(x.pmf.size, math.ceil(x.mu + t) - x.offset + 1)
    if lo == 0 and hi == x.pmf.size:
        return x
    return CountPmf(x.offset + lo, x.pmf[lo:hi].copy(), x.rel, x.abs_err, x.missing + cut, x.mu, x.var)


def binomial_count(trials: int, prob: float, cut: float) -> CountPmf:
    """Binom(trials, prob) on a window holding all but <= ``cut`` of its mass (Boost pmf, rel_slack charged)."""
    if trials == 0 or prob <= 0.0:
        return ONE
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
            t = bernstein_radius(var, share)
            lo = np.maximum(np.floor(mu - t).astype(np.int64) - offsets, 0)
            hi = np.minimum(np.ceil(mu + t).astype(np.int64) - offsets + 1, rows.shape[1])
            keep = int(np.max(hi - lo))
            if keep < rows.shape[1]:
                lo = np.minimum(lo, rows.shape[1] - keep)
                rows = np.take_along_axis(rows, lo[:, None] + np.arange(keep)[None, :], axis=1)
                offsets, missing = offsets + lo, missing + share
    return [
        CountPmf(int(o), r, rel, float(e), float(m), float(a), float(v))
        for o, r, e, m, a, v in zip(offsets, rows, abs_err, missing, mu, var)
    ]


def _check_width(probs: np.ndarray, counts: np.ndarray, cut: float) -> None:
    """Refuse the law of ``counts[j]`` Bernoulli(``probs[j]``) if its Bernstein window would exceed
    `MAX_COUNT_WIDTH` entries."""
    var = float(np.sum(counts * probs * (1.0 - probs)))
    cut = max(cut, 1e-305)
    width = 2.0 * float(bernstein_radius(var, cut)) + 1.0
    if width > MAX_COUNT_WIDTH:
        log_term = math.log(2.0 / cut)  # the variance whose window is MAX_COUNT_WIDTH wide (bernstein_radius inverted)
        var_max = ((MAX_COUNT_WIDTH / 2.0 - 1.0 - log_term / 3.0) ** 2 - (log_term / 3.0) ** 2) / (2.0 * log_term)
        raise PrivacyParameterError(
            f"the clone count of these users has variance {var:.4g}: its law would need about {width:.3g} entries, "
            f"more than MAX_COUNT_WIDTH = {MAX_COUNT_WIDTH:,} (variance at most about {var_max:.3g}, e.g. "
            f"{4.0 * var_max:.3g} users at clone capacity 1/2)"
        )


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
    p = real_array(probs, "probs").ravel()
    if not np.all((p >= 0.0) & (p <= 1.0)):
        raise PrivacyParameterError(f"probs must lie in [0, 1], got {float(p[~((p >= 0.0) & (p <= 1.0))][0])!r}")
    cut = check_probability(check_real(cut, "cut"), "cut", open_low=False)
    m = np.ones(p.size, dtype=np.int64) if counts is None else check_counts(counts, p.size, "counts")
    return grouped_law(p, m, cut)


def grouped_law(p: np.ndarray, m: np.ndarray, cut: float) -> CountPmf:
    """`poisson_binomial` of validated inputs: ``m[j]`` Bernoullis of probability ``p[j]``."""
    keep = (p > 0.0) & (m > 0)
    values, inverse = np.unique(p[keep], return_inverse=True)
    if values.size == 0:
        return ONE
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
        paired = [trim(convolve(nodes[i], nodes[i + 1]), share) for i in range(0, len(nodes) - 1, 2)]
        if len(nodes) % 2:
            paired.append(nodes[-1])
        nodes = paired
    return nodes[0]


def leave_one_out(values: np.ndarray, counts: np.ndarray, cut: float) -> Iterator[CountPmf]:
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
                start = trim(convolve(start, leaves[i + 1]), share)
            yield i, start

    checkpoints = {i: s for i, s in suffixes(g - 1, 0, ONE) if i in ends}
    prefix = ONE
    for first in range(0, g, block):
        last = min(first + block, g) - 1
        inside = dict(suffixes(last, first, checkpoints.pop(last)))
        for i in range(first, last + 1):
            minus = binomial_count(int(counts[i]) - 1, float(values[i]), share)
            yield trim(convolve(convolve(prefix, inside.pop(i)), minus), share)
            if i < g - 1:
                prefix = trim(convolve(prefix, leaves[i]), share)


def tight_window(x: CountPmf, cut: float) -> CountPmf:
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
    return CountPmf(
        x.offset + lo, x.pmf[lo:hi].copy(), x.rel, x.abs_err, x.missing + dropped * (1.0 + slack), x.mu, x.var
    )


__all__ = [
    "CountPmf",
    "MAX_COUNT_WIDTH",
    "ONE",
    "binomial_count",
    "convolve",
    "grouped_law",
    "leave_one_out",
    "poisson_binomial",
    "tight_window",
    "trim",
]
