"""Exact discrete sampling primitives, at any probability float64 can hold.

``rng.random()`` returns k / 2^53, so ``rng.random() < p`` cannot realize a
probability below 2^-53 (nor the complement of one: 1 - 1e-17 rounds to 1.0).
Every discrete randomizer draws its rare events through these primitives instead:

* `bernoulli` — exact Bernoulli(p) for any float p in [0, 1], by lazy
  refinement: with t = floor(p 2^53) / 2^53, a uniform u below t is a success,
  above it a failure, and u == t (probability 2^-53) recurses on the next 53
  bits of p, frac = p 2^53 - floor(p 2^53) (exact in float).  So
  P[success] = t + 2^-53 frac = p exactly; the recursion touches ~n 2^-53 rows.
* `geometric_tail` — G with P[G >= r] = e^(-rate r) (no truncation),
  as G = B K + R: K counts exact Bernoulli(e^(-rate B)) successes, R is the
  remainder on {0, ..., B-1} (memorylessness makes them independent), with B the
  smallest block whose continuation probability is <= 1/16.
* `hazard_categorical` — a categorical draw as a chain of exact coins
  P[J = j | J >= j], so each category keeps its own relative precision.

Audits (`shuffledp.audit`) pass a `TiltedGenerator`: the same
primitives then draw every coin with a *tilted* probability (rare events made
common) and record the log likelihood ratio of each row, so importance sampling
sees probabilities like e^-74 with a few thousand draws.  A sampler that
bypasses the primitives is not tilted, never shows its rare outputs, and fails
the audit.
"""

from __future__ import annotations

import math

import numpy as np

#: numpy's Generator.random() returns k / 2^53.
_GRID = 2.0**53
#: Geometric blocks B are the smallest with continuation probability e^(-rate B) <= 1/16.
_LOG_BLOCK = math.log(16.0)


class TiltedGenerator(np.random.Generator):
    """A generator for audits: the primitives draw tilted coins and record likelihood ratios.

    A coin of probability p in (0, 1) is drawn with probability clip(p, floor, 1 - floor);
    ``log_weight[i]`` accumulates log(P[coin outcomes of row i] / P'[same]) over every
    coin row i drew, so E'[f(Y) exp(log_weight)] = E[f(Y)] for any f.  Rows are the
    first axis of the batch passed to ``randomize`` (``rows`` in the constructor).
    """

    def __init__(self, seed: int | list[int], rows: int, floor: float = 0.5) -> None:
        super().__init__(np.random.PCG64(seed))
        if not 0.0 < floor <= 0.5:
            raise ValueError(f"floor must lie in (0, 0.5], got {floor!r}")
        self.floor = floor
        self.log_weight = np.zeros(rows)

    def tilt(self, p: np.ndarray) -> np.ndarray:
        """The tilted probability of a coin of probability p (0 and 1 stay: impossible stays impossible)."""
        return np.where((p > 0.0) & (p < 1.0), np.clip(p, self.floor, 1.0 - self.floor), p)

    def record(self, log_ratio: np.ndarray, rows: np.ndarray | None) -> None:
        """Add per-coin log ratios (first axis: batch rows, or the rows listed in ``rows``)."""
        per_row = log_ratio.reshape(log_ratio.shape[0], -1).sum(axis=1) if log_ratio.ndim else log_ratio
        if rows is None:
            self.log_weight += per_row
        else:
            np.add.at(self.log_weight, rows, per_row)


def _exact_bernoulli(p: np.ndarray, size: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    u = rng.random(size)
    scaled = p * _GRID  # exact: a power-of-two scaling
    whole = np.floor(scaled)
    threshold = whole / _GRID  # exact: an integer below 2^53, scaled back
    out = u < threshold
    frac = scaled - whole  # exact: the fractional part of a float is a float
    if p.ndim == 0:
        tie = (u == threshold) if frac > 0.0 else None
    else:
        tie = (u == threshold) & (frac > 0.0)
    if tie is not None and tie.any():
        at = np.flatnonzero(tie)
        out.flat[at] = _exact_bernoulli(np.broadcast_to(frac, size).flat[at], (at.size,), rng)
    return out


def bernoulli(
    p: float | np.ndarray, size: int | tuple[int, ...], rng: np.random.Generator, rows: np.ndarray | None = None
) -> np.ndarray:
    """Boolean draws with P[True] = p exactly, for any float p in [0, 1] (broadcast to ``size``).

    ``rows`` (only read by a `TiltedGenerator`) lists the batch row of each
    draw along the first axis when the draws cover a subset of the batch.
    """
    size = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    p = np.asarray(p, dtype=np.float64)
    if not isinstance(rng, TiltedGenerator):
        return _exact_bernoulli(p, size, rng)
    out = _exact_bernoulli(rng.tilt(p), size, rng)
    rng.record(_log_ratio(rng, p, out), rows)
    return out


def discard(p: float | np.ndarray, out: np.ndarray, rng: np.random.Generator, rows: np.ndarray | None = None) -> None:
    """Forget coins of probability p drawn by `bernoulli` whose outcomes ``out`` the report does not use.

    Only a `TiltedGenerator` reads this: it removes their likelihood ratios,
    so that each report's weight depends on the report alone.
    """
    if isinstance(rng, TiltedGenerator):
        rng.record(-_log_ratio(rng, np.asarray(p, dtype=np.float64), out), rows)


def _log_ratio(rng: TiltedGenerator, p: np.ndarray, out: np.ndarray) -> np.ndarray:
    """log P[out] - log P'[out] per coin, P' the tilted law."""
    tilted = np.broadcast_to(rng.tilt(p), out.shape)
    p = np.broadcast_to(p, out.shape)
    with np.errstate(divide="ignore", invalid="ignore"):  # the branch np.where discards may be -inf - -inf
        return np.where(out, np.log(p) - np.log(tilted), np.log1p(-p) - np.log1p(-tilted))


def _subset(rng: np.random.Generator, rows: np.ndarray | None, index: np.ndarray) -> np.ndarray | None:
    """Batch rows of the draws ``index`` (only a TiltedGenerator reads them)."""
    if not isinstance(rng, TiltedGenerator):
        return None
    return index if rows is None else rows[index]


def geometric_tail(rate: float, size: int, rng: np.random.Generator, rows: np.ndarray | None = None) -> np.ndarray:
    """int64 draws G with P[G >= r] = e^(-rate r), r = 0, 1, ... (``rate`` > 0), untruncated.

    G = B K + R with B = max(1, ceil(log 16 / rate)): K ~ geometric with continuation
    probability A = e^(-rate B) <= 1/16, drawn as a chain of exact coins; R on
    {0, ..., B-1} with P[R = r] proportional to e^(-rate r) by inverse CDF (every
    value there has probability >= (1 - e^-rate)/15, far above 2^-53).
    """
    block = max(1, math.ceil(_LOG_BLOCK / rate))
    cont = math.exp(-rate * block)
    first = bernoulli(cont, size, rng, rows)
    K = first.astype(np.int64)
    active = np.flatnonzero(first)
    while active.size:
        more = bernoulli(cont, active.size, rng, _subset(rng, rows, active))
        active = active[more]
        K[active] += 1
    if block == 1:
        return K
    # P[R >= r] = (e^(-rate r) - A) / (1 - A): invert with u uniform on [0, 1) (in place).
    u = rng.random(size)
    np.multiply(u, math.expm1(-rate * block), out=u)
    np.log1p(u, out=u)
    np.multiply(u, -1.0 / rate, out=u)
    np.minimum(u, block - 1, out=u)
    K *= block
    K += u.astype(np.int64)  # truncation = floor for u >= 0
    return K


def hazard_categorical(
    pmf: np.ndarray, size: int, rng: np.random.Generator, rows: np.ndarray | None = None
) -> np.ndarray:
    """int64 draws J with P[J = j] = pmf[j], as exact coins P[J = j | J >= j] = pmf[j] / sum_{i>=j} pmf[i].

    The tail sums are accumulated from the end, so a tiny category keeps its
    relative precision whatever its position.
    """
    pmf = np.asarray(pmf, dtype=np.float64)
    tail = np.cumsum(pmf[::-1])[::-1]
    J = np.full(size, len(pmf) - 1, dtype=np.int64)
    active = np.arange(size)
    for j in range(len(pmf) - 1):
        if not active.size:
            break
        stop = bernoulli(min(1.0, pmf[j] / tail[j]), active.size, rng, _subset(rng, rows, active))
        J[active[stop]] = j
        active = active[~stop]
    return J
