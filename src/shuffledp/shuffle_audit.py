"""Exact privacy of a shuffled release of a discrete randomizer, by enumeration.

The shuffler's output is the histogram of the n reports.  For a randomizer with a
finite transition matrix ``M[input, output]`` the law of that histogram is the
convolution of the users' rows, so the hockey-stick divergence

    delta(eps) = sum_H max(0, P_0(H) - e^eps P_1(H))

between the histograms of two neighbouring datasets (the victim on input x0 or x1,
everyone else on fixed inputs) can be computed exactly for small n and small output
alphabets.  The worst case over every victim pair and every multiset of the other
users' inputs is the true (eps, delta) curve of the shuffled mechanism: the ground
truth that every upper bound of `shuffledp.accounting` must stay above and every
lower bound below (the soundness harness of the tests).

For a continuous randomizer, the same computation on a *discretisation* (one fixed
map from outputs to cells, applied to every report) is a post-processing of the
shuffled output, hence a rigorous **lower** bound on its true divergence.

Outputs on which every user's row is equal may be lumped into one column first
(`lump_outputs`): the split of a lumped count is then drawn the same way under both
hypotheses, so the divergence is unchanged.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from shuffledp.errors import ShapeError

#: Largest number of histogram states enumerated (memory guard; about 100 MB of work arrays).
MAX_STATES = 4_000_000


@dataclass(frozen=True)
class ShuffleDelta:
    """The worst divergence found and where: victim inputs (x0, x1) and the others' inputs."""

    delta: float
    victim: tuple[int, int]
    others: tuple[int, ...]


def _check_matrix(M: np.ndarray) -> np.ndarray:
    M = np.asarray(M, dtype=np.float64)
    if M.ndim != 2 or M.shape[0] < 2 or M.shape[1] < 1:
        raise ShapeError(f"transition matrix must be 2-d with at least two rows, got shape {M.shape}")
    if np.any(M < 0.0) or not np.allclose(M.sum(axis=1), 1.0, atol=1e-9):
        raise ShapeError("transition matrix rows must be probability vectors (non-negative, summing to 1)")
    return M


def histogram_law(rows: np.ndarray, base: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Law of the histogram of independent reports, one row of output probabilities per user.

    Histograms are encoded as integers in ``base`` (default users + 1), one digit per output.

    Parameters
    ----------
    rows : ndarray, shape (users, outputs)
    base : int, > users, optional

    Returns
    -------
    (keys, probs) : (ndarray of int64, ndarray of float)

    Examples
    --------
    >>> keys, probs = histogram_law(np.array([[0.5, 0.5], [0.5, 0.5]]))
    >>> sorted(zip(keys.tolist(), probs.tolist()))
    [(2, 0.25), (4, 0.5), (6, 0.25)]
    """
    rows = np.atleast_2d(np.asarray(rows, dtype=np.float64))
    users, outputs = rows.shape
    base = users + 1 if base is None else base
    if outputs * math.log(base) > 62 * math.log(2):
        raise ShapeError(f"{outputs} outputs and {users} users do not fit a 63-bit histogram code; lump outputs first")
    place = base ** np.arange(outputs, dtype=np.int64)
    keys = np.zeros(1, dtype=np.int64)
    probs = np.ones(1)
    for row in rows:
        support = np.flatnonzero(row > 0.0)
        new_keys = (keys[None, :] + place[support, None]).ravel()
        new_probs = (row[support, None] * probs[None, :]).ravel()
        keys, inverse = np.unique(new_keys, return_inverse=True)
        probs = np.bincount(inverse, weights=new_probs)
        if keys.size > MAX_STATES:
            raise ShapeError(f"more than {MAX_STATES} histogram states; use fewer users or outputs")
    return keys, probs


def _pair_delta(law_others: tuple[np.ndarray, np.ndarray], row0: np.ndarray, row1: np.ndarray, eps: float, base: int) -> float:
    """max over both directions of D_{e^eps} between the histograms with the victim on row0 / row1."""
    keys, probs = law_others
    outputs = row0.size
    place = base ** np.arange(outputs, dtype=np.int64)
    all_keys = (keys[None, :] + place[:, None]).ravel()
    p0 = (row0[:, None] * probs[None, :]).ravel()
    p1 = (row1[:, None] * probs[None, :]).ravel()
    uniq, inverse = np.unique(all_keys, return_inverse=True)
    P0 = np.bincount(inverse, weights=p0, minlength=uniq.size)
    P1 = np.bincount(inverse, weights=p1, minlength=uniq.size)
    e = math.exp(eps)
    return max(float(np.maximum(P0 - e * P1, 0.0).sum()), float(np.maximum(P1 - e * P0, 0.0).sum()))


def exact_shuffle_delta(
    M: np.ndarray,
    n: int,
    eps: float,
    *,
    victims: list[tuple[int, int]] | None = None,
    others: list[tuple[int, ...]] | None = None,
) -> ShuffleDelta:
    """Worst hockey-stick divergence of the shuffled histogram of ``n`` reports of ``M``.

    The maximum, over victim input pairs and multisets of the other n - 1 users' inputs, of
    D_{e^eps} in both directions.  By default every unordered victim pair and every multiset.

    Parameters
    ----------
    M : array_like, shape (inputs, outputs)
        Transition matrix.
    n : int, >= 1
    eps : float, >= 0
    victims : list of (int, int), optional
    others : list of tuple of int (each of length n - 1), optional

    Returns
    -------
    ShuffleDelta

    Examples
    --------
    >>> import math
    >>> rr = np.array([[3.0, 1.0], [1.0, 3.0]]) / 4.0   # binary RR at eps0 = log 3
    >>> res = exact_shuffle_delta(rr, 1, 0.0)             # one user: delta(0) = total variation
    >>> round(res.delta, 12)
    0.5
    """
    M = _check_matrix(M)
    k = M.shape[0]
    if victims is None:
        victims = list(itertools.combinations(range(k), 2))
    if others is None:
        others = list(itertools.combinations_with_replacement(range(k), n - 1))
    best = ShuffleDelta(-1.0, victims[0], tuple(others[0]))
    for rest in others:
        law = histogram_law(M[list(rest)], n + 1) if len(rest) else (np.zeros(1, dtype=np.int64), np.ones(1))
        for x0, x1 in victims:
            d = _pair_delta(law, M[x0], M[x1], eps, n + 1)
            if d > best.delta:
                best = ShuffleDelta(d, (x0, x1), tuple(rest))
    return best


def exact_shuffle_epsilon(M: np.ndarray, n: int, delta: float, *, rtol: float = 1e-9, **kwargs) -> float:
    """Smallest eps (to ``rtol``, rounded down) with `exact_shuffle_delta` <= ``delta``.

    Returns a value at most the true epsilon (a lower end of the final bisection bracket).

    Examples
    --------
    >>> rr = np.array([[3.0, 1.0], [1.0, 3.0]]) / 4.0
    >>> round(exact_shuffle_epsilon(rr, 1, 1e-9), 6)   # one user: the local epsilon log 3
    1.098612
    """
    M = _check_matrix(M)
    with np.errstate(divide="ignore"):
        ratios = np.log(M[:, None, :]) - np.log(M[None, :, :])
    finite = ratios[np.isfinite(ratios)]
    hi = float(finite.max()) if finite.size else 1.0
    lo = 0.0
    if exact_shuffle_delta(M, n, 0.0, **kwargs).delta <= delta:
        return 0.0
    while hi - lo > rtol * max(hi, 1e-12):
        mid = 0.5 * (lo + hi)
        if exact_shuffle_delta(M, n, mid, **kwargs).delta <= delta:
            hi = mid
        else:
            lo = mid
    return lo


def iid_shuffle_delta(row0: np.ndarray, row1: np.ndarray, others_row: np.ndarray, n: int, eps: float) -> float:
    """Exact D_{e^eps} (both directions) when the n - 1 others share one output law ``others_row``.

    The others' histogram is multinomial, so P_b(H) = sum_v row_b[v] Mult(n - 1)(H - e_v)
    (the closed form of the issue tracker's k-RR check): no enumeration user by user, so
    n in the thousands is fine for three or four outputs.

    Parameters
    ----------
    row0, row1 : ndarray, shape (outputs,)
        The victim's output law on its two inputs.
    others_row : ndarray, shape (outputs,)
    n : int, >= 1
    eps : float, >= 0

    Returns
    -------
    float

    Examples
    --------
    >>> rr = np.array([[3.0, 1.0], [1.0, 3.0]]) / 4.0
    >>> abs(iid_shuffle_delta(rr[0], rr[1], rr[0], 4, 0.2) - exact_shuffle_delta(rr, 4, 0.2, others=[(0, 0, 0)]).delta) < 1e-12
    True
    """
    row0, row1, others = (np.asarray(v, dtype=np.float64) for v in (row0, row1, others_row))
    outputs = others.size
    m = n - 1
    # every composition of m into `outputs` parts (the others' histogram)
    grids = np.meshgrid(*([np.arange(m + 1)] * (outputs - 1)), indexing="ij", sparse=False)
    parts = np.stack([g.ravel() for g in grids], axis=1) if outputs > 1 else np.zeros((1, 0), dtype=np.int64)
    last = m - parts.sum(axis=1)
    keep = last >= 0
    H = np.concatenate([parts[keep], last[keep, None]], axis=1).astype(np.float64)
    with np.errstate(divide="ignore"):
        log_p = np.log(others)
    log_mult = special.gammaln(m + 1.0) - special.gammaln(H + 1.0).sum(axis=1) + np.where(H > 0, H * log_p, 0.0).sum(axis=1)
    base = np.exp(log_mult)
    # the victim adds one report on output v: the histogram H + e_v
    place = (n + 1) ** np.arange(outputs, dtype=np.int64)
    codes = (H.astype(np.int64) * place).sum(axis=1)
    all_codes = (codes[None, :] + place[:, None]).ravel()
    uniq, inverse = np.unique(all_codes, return_inverse=True)
    P0 = np.bincount(inverse, weights=(row0[:, None] * base[None, :]).ravel(), minlength=uniq.size)
    P1 = np.bincount(inverse, weights=(row1[:, None] * base[None, :]).ravel(), minlength=uniq.size)
    e = math.exp(eps)
    return max(float(np.maximum(P0 - e * P1, 0.0).sum()), float(np.maximum(P1 - e * P0, 0.0).sum()))


def minkowski_lower_delta(R, n: int, eps: float) -> float:
    """Rigorous lower bound on delta(eps) of n shuffled Minkowski Response reports, by discretisation.

    The victim sits on one of the two farthest inputs x0, x1 (opposite corners or antipodes),
    the other n - 1 users on x0, and every report is mapped to one of three cells: in the cap
    of x0 only, in the cap of x1 only, elsewhere.  The same map applied to every report is a
    post-processing of the shuffled output, so the exact divergence of the cell histograms
    (`iid_shuffle_delta`) is below the mechanism's true divergence for that configuration,
    hence below its worst case and below every valid upper bound.  With c the fraction of a
    cap outside the other (`total_variation_bound` / beta_c) and w = V(B_r)/V(Y_r), a report
    of x0 lands in its own cell with probability beta_c c + (1 - beta_c) w c and in x1's
    with (1 - beta_c) w c.

    Parameters
    ----------
    R : MinkowskiResponse
    n : int, >= 1
    eps : float, >= 0

    Returns
    -------
    float

    Examples
    --------
    >>> from shuffledp.randomizers import MinkowskiResponse
    >>> lo = minkowski_lower_delta(MinkowskiResponse(epsilon=2.0, dim=2), 50, 0.5)
    >>> 0.0 < lo < 1.0
    True
    """
    b = R.cap_probability
    c = R.total_variation_bound() / b
    log_vb, log_vy = R._log_volumes()
    w = math.exp(log_vb - log_vy)
    own, other = b * c + (1.0 - b) * w * c, (1.0 - b) * w * c
    row0 = np.array([own, other, 1.0 - own - other])
    row1 = np.array([other, own, 1.0 - own - other])
    return iid_shuffle_delta(row0, row1, row0, n, eps)


def lump_outputs(M: np.ndarray, columns: list[list[int]]) -> np.ndarray:
    """Sum the given groups of output columns (each group must hold equal columns).

    Examples
    --------
    >>> lump_outputs(np.array([[0.5, 0.25, 0.25], [0.2, 0.4, 0.4]]), [[0], [1, 2]]).tolist()
    [[0.5, 0.5], [0.2, 0.8]]
    """
    M = _check_matrix(M)
    for group in columns:
        if not np.allclose(M[:, group], M[:, group[:1]], rtol=1e-12, atol=0.0):
            raise ShapeError(f"columns {group} differ for some input: lumping them would change the divergence")
    return np.stack([M[:, g].sum(axis=1) for g in columns], axis=1)


__all__ = [
    "MAX_STATES",
    "ShuffleDelta",
    "exact_shuffle_delta",
    "exact_shuffle_epsilon",
    "histogram_law",
    "iid_shuffle_delta",
    "lump_outputs",
    "minkowski_lower_delta",
]
