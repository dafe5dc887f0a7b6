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
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import special

from shuffledp._util.validation import check_positive_int, check_probability
from shuffledp.accounting._rounding import EPS_RANGE
from shuffledp.errors import ArgumentTypeError, PrivacyParameterError, ShapeError

#: Largest number of histogram states enumerated (memory guard; about 100 MB of work arrays).
MAX_STATES = 4_000_000
#: Largest grid `iid_shuffle_delta` lays out, (n)^(outputs - 1) cells: three outputs up to n = 20,000 (the PIC
#: ledger's independent check, `protocols.pic.round`), while 10 unlumped outputs at n = 100 (10^18) are refused.
MAX_IID_CELLS = 400_040_001
#: Largest (multiset of the others' inputs) x (histogram state) count `exact_shuffle_delta` enumerates by
#: default (about a minute per 10^6 on one core).
MAX_WORK = 50_000_000


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


def _check_eps(eps: float) -> float:
    return EPS_RANGE.check(eps, "eps")


def _check_work(units: int, shape: tuple[int, int], n: int) -> None:
    """Refuse an enumeration whose (input multisets) x (histogram states) exceeds `MAX_WORK`."""
    if units > MAX_WORK:
        raise ShapeError(
            f"enumerating every input of the others for a {shape[0]} x {shape[1]} matrix at n={n} takes "
            f"{units:.3g} (multiset, state) pairs, more than {MAX_WORK:.0e} (hours): lower n, lump outputs "
            f"(lump_outputs), or give the others' inputs (others=)"
        )


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


def _pair_delta(
    law_others: tuple[np.ndarray, np.ndarray], row0: np.ndarray, row1: np.ndarray, eps: float, base: int
) -> float:
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
    n = check_positive_int(n, "n")
    eps = _check_eps(eps)
    k = M.shape[0]
    if victims is None:
        victims = list(itertools.combinations(range(k), 2))
    if others is None:
        _check_work(math.comb(n + k - 2, k - 1) * math.comb(n + M.shape[1] - 1, M.shape[1] - 1), M.shape, n)
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
    delta = check_probability(delta, "delta")
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
    n = check_positive_int(n, "n")
    eps = _check_eps(eps)
    outputs = others.size
    m = n - 1
    if (m + 1) ** max(outputs - 1, 0) > MAX_IID_CELLS:
        raise ShapeError(
            f"{outputs} outputs and n={n} make {m + 1}^{outputs - 1} histogram cells, more than {MAX_IID_CELLS:,}: "
            f"lump the outputs on which all three rows agree first (lump_outputs), e.g. k-RR's other categories"
        )
    # every composition of m into `outputs` parts (the others' histogram)
    grids = np.meshgrid(*([np.arange(m + 1)] * (outputs - 1)), indexing="ij", sparse=False)
    parts = np.stack([g.ravel() for g in grids], axis=1) if outputs > 1 else np.zeros((1, 0), dtype=np.int64)
    last = m - parts.sum(axis=1)
    keep = last >= 0
    H = np.concatenate([parts[keep], last[keep, None]], axis=1).astype(np.float64)
    with np.errstate(divide="ignore"):
        log_p = np.log(others)
    with np.errstate(invalid="ignore"):  # 0 * log(0) on outputs the others never send: masked to 0
        log_mult = (
            special.gammaln(m + 1.0)
            - special.gammaln(H + 1.0).sum(axis=1)
            + np.where(H > 0, H * log_p, 0.0).sum(axis=1)
        )
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
    cells = minkowski_cells(R)
    return iid_shuffle_delta(cells.row0, cells.row1, cells.others_rows[0], n, eps)


# --------------------------------------------------------------------------- continuous randomizers
#
# A continuous randomizer has no transition matrix, but a lower bound on its shuffled divergence
# only needs one: fix a map g from reports to k cells and apply it to every report.  The
# histogram of the g(y_i) is a function of the shuffled output (the multiset of the y_i), so by
# data processing the exact divergence of the cell histograms, for one choice of the victim's
# pair and the others' input, is at most the mechanism's divergence for that configuration,
# hence at most its worst case and at most every valid upper bound.  `CellLaw` holds such a
# map with the cell laws it induces, computed in closed form; `cells_lower_delta` prices it
# exactly as `iid_shuffle_delta` does, minus a margin for the float error of those closed forms.

#: Default bound on the L1 error of a computed cell law (closed forms in float64 and scipy special
#: functions; the tests check them against mpmath and against each randomizer's own sampler).
CELL_ERROR = 1e-12


@dataclass(frozen=True)
class CellLaw:
    """A map of every report to one of a few cells, with the cell laws it induces (a lower-bound witness).

    Attributes
    ----------
    x0, x1 : ndarray
        The victim's two inputs (one row of the randomizer's domain each).
    others : tuple of ndarray
        Candidate inputs of the n - 1 other users (each candidate is used for all of them).
    row0, row1 : ndarray, shape (cells,)
        Law of the cell of the victim's report on x0, on x1.
    others_rows : tuple of ndarray
        Law of the cell of a report on each entry of ``others``.
    cell : callable
        The map itself: reports of ``randomize`` (one per row) -> cell indices in 0..cells-1
        (what the Monte-Carlo checks of the tests apply to the randomizer's own samples).
    error : float
        A bound on the L1 error of every computed row.
    """

    x0: np.ndarray
    x1: np.ndarray
    others: tuple[np.ndarray, ...]
    row0: np.ndarray
    row1: np.ndarray
    others_rows: tuple[np.ndarray, ...]
    cell: Callable[[np.ndarray], np.ndarray]
    error: float = CELL_ERROR


#: Most histogram states the cached ratio form enumerates (beyond: `iid_shuffle_delta`, uncached).
_RATIO_STATES = 1_000_000


@lru_cache(maxsize=4)
def _compositions(total: int, parts: int) -> tuple[np.ndarray, np.ndarray]:
    """Every vector H of ``parts`` non-negative integers summing to ``total`` (one per row, float64),
    and log(total! / prod H!) (read-only: cached)."""
    grids = np.meshgrid(*([np.arange(total + 1)] * (parts - 1)), indexing="ij")
    head = np.stack([g.ravel() for g in grids], axis=1) if parts > 1 else np.zeros((1, 0), dtype=np.int64)
    last = total - head.sum(axis=1)
    keep = last >= 0
    H = np.concatenate([head[keep], last[keep, None]], axis=1).astype(np.float64)
    log_coef = special.gammaln(total + 1.0) - special.gammaln(H + 1.0).sum(axis=1)
    H.flags.writeable = log_coef.flags.writeable = False
    return H, log_coef


def _iid_delta_by_ratio(row0: np.ndarray, row1: np.ndarray, others: np.ndarray, n: int, eps: float) -> float:
    """`iid_shuffle_delta` through P_b(H) = Mult_n(H; others) sum_v H_v row_b[v] / (n others[v]) (others > 0).

    Mult_{n-1}(H - e_v) = Mult_n(H) H_v / (n others[v]), so the n-report histogram's law needs
    no merging of shifted histograms (no sort): one pass over the compositions of n.
    """
    H, log_coef = _compositions(n, others.size)
    base = np.exp(log_coef + H @ np.log(others)) / n
    S0, S1 = H @ (row0 / others), H @ (row1 / others)
    e = math.exp(eps)
    return max(float((base * np.maximum(S0 - e * S1, 0.0)).sum()), float((base * np.maximum(S1 - e * S0, 0.0)).sum()))


def cells_lower_delta(cells: CellLaw, n: int, eps: float) -> float:
    """Rigorous lower bound on the shuffled delta(eps) from one `CellLaw`: the best candidate for the others.

    For each candidate input of the others, `iid_shuffle_delta` of the cell histograms (a
    post-processing of the shuffled output, module comment above) less the float margin
    (1 + e^eps) n error / 2, clipped at 0.  The margin: rows within ``error`` in L1 of the
    true ones give histogram laws within n error in L1 (the victim's row plus n - 1 others'),
    and sup_S P0(S) - e^eps P1(S) moves by at most half of that times (1 + e^eps).

    Parameters
    ----------
    cells : CellLaw
    n : int, >= 1
    eps : float, >= 0

    Returns
    -------
    float

    Examples
    --------
    >>> rr = CellLaw(np.zeros(1), np.ones(1), (np.zeros(1),), np.array([0.75, 0.25]), np.array([0.25, 0.75]),
    ...              (np.array([0.75, 0.25]),), lambda y: y, error=0.0)
    >>> cells_lower_delta(rr, 1, 0.0)   # one binary-RR report at eps0 = log 3: the total variation
    0.5
    """
    margin = 0.5 * (1.0 + math.exp(eps)) * n * cells.error
    row0, row1 = (np.clip(r, 0.0, None) for r in (cells.row0, cells.row1))
    best = 0.0
    for others in cells.others_rows:
        others = np.clip(others, 0.0, None)
        # the ratio form divides by others[v]: tiny cells (and huge grids) go through the merge
        if others.min() > 1e-100 and math.comb(n + others.size - 1, others.size - 1) <= _RATIO_STATES:
            best = max(best, _iid_delta_by_ratio(row0, row1, others, n, eps))
        else:
            best = max(best, iid_shuffle_delta(row0, row1, others, n, eps))
    return max(0.0, best - margin)


def ternary_sign_law(plus: float, minus: float, dim: int) -> np.ndarray:
    """Law of (S > 0, S < 0, S = 0) for S a sum of ``dim`` iid steps +1, -1, 0 with probabilities plus, minus, rest.

    Examples
    --------
    >>> ternary_sign_law(0.5, 0.25, 2).tolist()   # S > 0: (+,+), (+,0), (0,+); S < 0: (-,-), (-,0), (0,-)
    [0.5, 0.1875, 0.3125]
    """
    step = np.array([minus, 1.0 - plus - minus, plus])
    law = step
    for _ in range(dim - 1):
        law = np.convolve(law, step)
    return np.array([law[dim + 1 :].sum(), law[:dim].sum(), law[dim]])


def _count_sign_cells(Y: np.ndarray, plus: Callable, minus: Callable) -> np.ndarray:
    """Cell 0 if more coordinates are in ``plus`` than in ``minus``, 1 if fewer, 2 if as many."""
    Y = np.atleast_2d(np.asarray(Y, dtype=np.float64))
    S = plus(Y).sum(axis=1) - minus(Y).sum(axis=1)
    return np.where(S > 0, 0, np.where(S < 0, 1, 2))


def _ternary_cells(x0, x1, mid, plus0: float, minus0: float, mid_each: float, dim: int, cell) -> CellLaw:
    """The count-sign cells of a product randomizer: per coordinate, the victim on x0 lands in the
    plus set w.p. plus0 and the minus set w.p. minus0 (swapped on x1); the midpoint input in each w.p. mid_each."""
    row0 = ternary_sign_law(plus0, minus0, dim)
    row1 = row0[[1, 0, 2]]
    return CellLaw(x0, x1, (x0, mid), row0, row1, (row0, ternary_sign_law(mid_each, mid_each, dim)), cell)


def laplace_cells(R, cut: float = 0.5) -> CellLaw:
    """Count-sign cells for `Laplace` on [-1,1]^d: opposite corners, per coordinate y < -cut or y > cut.

    The privacy loss of one coordinate between x0 = -1 and x1 = +1 falls in y (it is
    -2 clip(y, -1, 1)/b), so {y_j < -cut} and {y_j > cut} are its high and low level sets;
    the report goes to cell 0, 1 or 2 as more coordinates fall below -cut than above cut,
    fewer, or as many.  With N ~ Laplace(0, b): on x0 a coordinate is below -cut w.p.
    P(N < 1 - cut) = 1 - e^{-(1 - cut)/b}/2 and above cut w.p. e^{-(1 + cut)/b}/2; on the
    midpoint 0 each w.p. e^{-cut/b}/2 (``cut`` in [0, 1)).  Others: on x0 or on 0.

    Examples
    --------
    >>> from shuffledp.randomizers import Laplace
    >>> c = laplace_cells(Laplace(epsilon=2.0, dim=2))
    >>> bool(c.row0[0] > c.row1[0] and abs(c.row0.sum() - 1.0) < 1e-15)
    True
    """
    if not 0.0 <= cut < 1.0:
        raise PrivacyParameterError(f"cut must lie in [0, 1), got {cut!r}")
    b, d = R.scale, R.dim
    plus0 = -0.5 * math.expm1(-(1.0 - cut) / b) + 0.5  # 1 - e^{-(1-cut)/b}/2
    minus0 = 0.5 * math.exp(-(1.0 + cut) / b)
    mid = 0.5 * math.exp(-cut / b)

    def cell(Y):
        return _count_sign_cells(Y, lambda y: y < -cut, lambda y: y > cut)

    return _ternary_cells(-np.ones(d), np.ones(d), np.zeros(d), plus0, minus0, mid, d, cell)


def _planar_marginal_cdf(t: float, geo_epsilon: float) -> float:
    """CDF of one coordinate (any direction) of planar Laplace noise: 1/2 + sign(t) P(|N_1| <= |t|)/2,
    P(|N_1| <= s) = (2/pi)(int_0^c K_0 - c K_0(c)) with c = eps' s (`planar_laplace_total_variation`)."""
    c = geo_epsilon * abs(t)
    inside = 2.0 / math.pi * (float(special.iti0k0(c)[1]) - c * float(special.k0(c))) if c > 0.0 else 0.0
    return 0.5 + math.copysign(0.5 * inside, t)


def planar_laplace_cells(R, cut: float = math.sqrt(0.5)) -> CellLaw:
    """Three bands across the diagonal for `PlanarLaplace`: opposite corners, w = <y, (1, 1)>/sqrt 2 vs +-cut.

    The noise is radially decreasing, so the loss between x0 = (-1, -1) and x1 = (1, 1) falls
    as w (the coordinate along x1 - x0, 0 at their midpoint) rises; cell 0 is w < -cut, cell 1
    w > cut, cell 2 the band between.  The inputs sit at w = -+sqrt 2, so on x0 the cells have
    probabilities F(sqrt 2 - cut), 1 - F(sqrt 2 + cut) and the rest, F the CDF of one
    coordinate of the noise (`_planar_marginal_cdf`, through scipy's iti0k0 and k0); on the
    midpoint (0, 0) the outer bands have F(-cut) each.  Others: on x0 or on (0, 0).

    Examples
    --------
    >>> from shuffledp.randomizers import PlanarLaplace
    >>> c = planar_laplace_cells(PlanarLaplace(epsilon=2.0), cut=0.0)   # two half-planes: TV = beta
    >>> bool(abs(c.row0[0] - c.row1[0] - PlanarLaplace(epsilon=2.0).amplification_parameters().beta) < 1e-12)
    True
    """
    ep, h = R.geo_epsilon, math.sqrt(2.0)
    low0, high0 = _planar_marginal_cdf(h - cut, ep), 1.0 - _planar_marginal_cdf(h + cut, ep)
    row0 = np.array([low0, high0, 1.0 - low0 - high0])
    tail = _planar_marginal_cdf(-cut, ep)
    axis = np.array([1.0, 1.0]) / h

    def cell(Y):
        w = np.atleast_2d(np.asarray(Y, dtype=np.float64)) @ axis
        return np.where(w < -cut, 0, np.where(w > cut, 1, 2))

    x0 = -np.ones(2)
    mid = np.array([tail, tail, 1.0 - 2.0 * tail])
    return CellLaw(x0, -x0, (x0, np.zeros(2)), row0, row0[[1, 0, 2]], (row0, mid), cell)


def staircase_cells(R) -> CellLaw:
    """Count-sign cells for `Staircase`: opposite corners, per coordinate y < -c or y > c, c = |1 - 2 gamma|.

    With the full shift Delta = 2 between x0 = -1 and x1 = +1 one coordinate's density ratio
    is e^{eps/d} exactly on y < -c, e^{-eps/d} on y > c and 1 between (y < -1: the two
    distances differ by one step; on (-1, 1) the scaled distances u0 = (y + 1)/2 and
    u1 = (1 - y)/2 sum to 1: outside [-c, c] exactly one lies below gamma, inside both or neither); so
    these are the loss's level sets, and for d = 1 the cells carry the whole experiment.
    Probabilities from the noise CDF: P(y < -c | x0) = F(1 - c), P(y > c | x0) = F(-1 - c),
    P(y < -c | 0) = F(-c).  Others: on x0 or on 0.

    Examples
    --------
    >>> from shuffledp.randomizers import Staircase
    >>> R = Staircase(epsilon=1.0, dim=1)
    >>> c = staircase_cells(R)    # d = 1: the cells' TV is the exact TV
    >>> bool(abs(c.row0[0] - c.row1[0] - R.coordinate_total_variation()) < 1e-15)
    True
    """
    c, d = abs(1.0 - 2.0 * R.gamma), R.dim
    F = R.noise_cdf
    plus0, minus0, mid = float(F(1.0 - c)), float(F(-1.0 - c)), float(F(-c))

    def cell(Y):
        return _count_sign_cells(Y, lambda y: y < -c, lambda y: y > c)

    return _ternary_cells(-np.ones(d), np.ones(d), np.zeros(d), plus0, minus0, mid, d, cell)


def square_wave_cells(R) -> CellLaw:
    """Count-sign cells for `SquareWave`: opposite corners, per coordinate the part of each window outside the other.

    x0 = -1 and x1 = +1 map to v = 0 and 1, with windows [-b, b] and [1 - b, 1 + b]; with
    w = min(2b, 1) the parts of each window outside the other are A = [-b, w - b) and
    B = (1 + b - w, 1 + b], where the density ratio is e^{eps/d} and e^{-eps/d} (1 elsewhere:
    the loss's level sets; for d = 1 the cells carry the whole experiment).  On x0 a
    coordinate is in A w.p. p w and in B w.p. q w; on the midpoint 0 (v = 1/2, window
    [1/2 - b, 1/2 + b]) in each w.p. p |A cap window| + q (w - |A cap window|).
    Others: on x0 or on 0.

    Examples
    --------
    >>> from shuffledp.randomizers import SquareWave
    >>> R = SquareWave(epsilon=1.0, dim=1)
    >>> c = square_wave_cells(R)    # d = 1: the cells' TV is the exact TV (p - q) min(1, 2b)
    >>> bool(abs(c.row0[0] - c.row1[0] - (R.p - R.q) * min(1.0, 2.0 * R.half_width)) < 1e-15)
    True
    """
    b, d = R.half_width, R.dim
    w = min(2.0 * b, 1.0)
    inter = max(0.0, min(w - b, 0.5 + b) - (0.5 - b))
    mid = R.p * inter + R.q * (w - inter)

    def cell(Y):
        return _count_sign_cells(Y, lambda y: y < w - b, lambda y: y > 1.0 + b - w)

    return _ternary_cells(-np.ones(d), np.ones(d), np.zeros(d), R.p * w, R.q * w, mid, d, cell)


def cap_cells(R) -> CellLaw:
    """The two antipodal caps for `PrivUnit` and `PrivUnitG`: <V, u0> >= gamma, <V, u0> <= -gamma, the rest.

    The victim's inputs map to antipodes u0, u1 = -u0 (opposite corners of the box, lifted;
    or e_1, -e_1 on the sphere), whose caps {<V, u> >= gamma} are disjoint (gamma >= 0).  The
    output density relative to the reference law is p/q on the own cap and (1-p)/(1-q)
    elsewhere, so on u0 the cells have probabilities p, (1-p) q/(1-q), (1-p)(1-2q)/(1-q), and
    the density ratio between u0 and u1 is constant on each cell: with the others on u0
    the cells carry the whole experiment.  PrivUnitG also gets the others on an input
    orthogonal to u0 (the origin of the box, e_2 on the sphere): there <V, u0> ~ N(0, 1)
    whatever the cap draw, so the cells have q, q, 1 - 2q.

    Examples
    --------
    >>> from shuffledp.randomizers import PrivUnit
    >>> R = PrivUnit(epsilon=2.0, dim=2)
    >>> c = cap_cells(R)
    >>> bool(abs(c.row0[0] - c.row1[0] - R.amplification_parameters().beta) < 1e-12)
    True
    """
    from shuffledp.randomizers.privunit import PrivUnitG

    P = R.params
    p, q, gamma = P.p, P.cap_mass, P.gamma
    other = (1.0 - p) * q / (1.0 - q)
    row0 = np.array([p, other, (1.0 - p) * (1.0 - 2.0 * q) / (1.0 - q)])
    if R.lifted:
        x0, ortho = -np.ones(R.dim), np.zeros(R.dim)
    else:
        x0, ortho = np.eye(R.dim)[0], np.eye(R.dim)[1]
    u0 = R.to_sphere(x0[None, :])[0]

    def cell(Y):
        t = np.atleast_2d(np.asarray(Y, dtype=np.float64)) @ u0
        return np.where(t >= gamma, 0, np.where(t <= -gamma, 1, 2))

    others, rows = (x0,), (row0,)
    if isinstance(R, PrivUnitG):
        others, rows = (x0, ortho), (row0, np.array([q, q, 1.0 - 2.0 * q]))
    return CellLaw(x0, -x0, others, row0, row0[[1, 0, 2]], rows, cell)


def privhs_cells(R, distance: int | None = None) -> CellLaw:
    """Likelihood-ratio cells for `PrivHS` (discrete): vertices x0 = (1, ..., 1) and x1 with ``distance`` coordinates flipped.

    The report is B s with s in {-1, 1}^d, of probability w[k] (A if 2k > d, else D) for k
    the coordinates where s agrees with the rounded input.  Cell 0 holds the s more likely
    under x0 than under x1, cell 1 the reverse, cell 2 the ties.  Counting s by its
    agreements k1 with x0 on the d - h shared coordinates and k2 on the h flipped ones
    (C(d-h, k1) C(h, k2) of them, agreeing with x1 on k1 + h - k2) gives the rows exactly;
    with the others on x0 the cells carry the whole experiment (cell 2 lumps outputs whose
    probabilities are equal under all three rows up to one factor, a sufficient statistic).
    The others are also tried on the midpoint (the flipped coordinates set to 0, rounded to
    a fair sign), where s has probability sum_j C(h, j) w[k1 + j] / 2^h.  Default distance: d.

    Examples
    --------
    >>> from shuffledp.randomizers import PrivHS
    >>> R = PrivHS(epsilon=1.0, dim=3)
    >>> best = max(abs(privhs_cells(R, h).row0[0] - privhs_cells(R, h).row1[0]) for h in (1, 2, 3))
    >>> bool(abs(best - R.amplification_parameters().beta) < 1e-12)
    True
    """
    from shuffledp.randomizers.duchi import _output_probabilities

    d = R.dim
    h = d if distance is None else int(distance)
    if not 1 <= h <= d:
        raise PrivacyParameterError(f"distance must be in 1..{d}, got {distance!r}")
    w = _output_probabilities(R.epsilon, d)
    k1 = np.arange(d - h + 1)[:, None]
    k2 = np.arange(h + 1)[None, :]
    count = special.comb(d - h, k1) * special.comb(h, k2)
    p0, p1 = w[k1 + k2], w[k1 + h - k2]
    j = np.arange(h + 1)[None, :]  # agreements of s with a fair-sign rounding on the h flipped coordinates
    pm = (special.comb(h, j) * w[k1 + j]).sum(axis=1, keepdims=True) / 2.0**h
    masks = (p0 > p1, p0 < p1, p0 == p1)
    row0 = np.array([float((count * p0)[m].sum()) for m in masks])
    row1 = np.array([float((count * p1)[m].sum()) for m in masks])
    mid = np.array([float((count * np.broadcast_to(pm, count.shape))[m].sum()) for m in masks])
    x0 = np.ones(d)
    x1 = x0.copy()
    x1[:h] = -1.0
    xm = x0.copy()
    xm[:h] = 0.0
    high = 2 * np.arange(d + 1) > d

    def cell(Y):
        s = np.sign(np.atleast_2d(np.asarray(Y, dtype=np.float64)))
        a0, a1 = high[(s == x0).sum(axis=1)], high[(s == x1).sum(axis=1)]
        return np.where(a0 & ~a1, 0, np.where(a1 & ~a0, 1, 2))

    return CellLaw(x0, x1, (x0, xm), row0, row1, (row0, mid), cell)


def minkowski_cells(R) -> CellLaw:
    """The two caps of the farthest inputs for `MinkowskiResponse` (the cells of `minkowski_lower_delta`).

    x0, x1: opposite corners (-1, ..., -1), (1, ..., 1) of the cube, or antipodes -e_1, e_1
    of the l2 ball; cell 0 is the cap of x0 outside that of x1, cell 1 the reverse, cell 2
    the rest; others on x0.

    Examples
    --------
    >>> from shuffledp.randomizers import MinkowskiResponse
    >>> R = MinkowskiResponse(epsilon=2.0, dim=2)
    >>> c = minkowski_cells(R)
    >>> bool(abs(c.row0[0] - c.row1[0] - R.total_variation_bound()) < 1e-12)
    True
    """
    b = R.cap_probability
    c = R.total_variation_bound() / b
    log_vb, log_vy = R._log_volumes()
    w = math.exp(log_vb - log_vy)
    own, other = b * c + (1.0 - b) * w * c, (1.0 - b) * w * c
    row0 = np.array([own, other, 1.0 - own - other])
    x0 = -np.ones(R.dim) if R.norm == "linf" else -np.eye(R.dim)[0]
    order = math.inf if R.norm == "linf" else 2
    r = R.radius

    def cell(Y):
        Y = np.atleast_2d(np.asarray(Y, dtype=np.float64))
        in0 = np.linalg.norm(Y - x0, ord=order, axis=1) <= r
        in1 = np.linalg.norm(Y + x0, ord=order, axis=1) <= r
        return np.where(in0 & ~in1, 0, np.where(in1 & ~in0, 1, 2))

    return CellLaw(x0, -x0, (x0,), row0, row0[[1, 0, 2]], (row0,), cell)


def lower_bound_cells(R) -> list[CellLaw]:
    """Every `CellLaw` offered for a continuous randomizer of the registry (or `PrivHS`).

    Raises
    ------
    ArgumentTypeError
        For a randomizer with no cell map here (discrete ones: use `exact_shuffle_delta`).
    """
    name = type(R).__name__
    if name == "Laplace":
        return [laplace_cells(R)]
    if name == "PlanarLaplace":
        return [planar_laplace_cells(R)]
    if name == "Staircase":
        return [staircase_cells(R)]
    if name == "SquareWave":
        return [square_wave_cells(R)]
    if name in ("PrivUnit", "PrivUnitG"):
        return [cap_cells(R)]
    if name == "PrivHS":
        return [privhs_cells(R, h) for h in range(1, R.dim + 1)]
    if name == "MinkowskiResponse":
        return [minkowski_cells(R)]
    raise ArgumentTypeError(f"no cell map for {name}; discrete randomizers have exact_shuffle_delta")


def discretised_lower_delta(R, n: int, eps: float) -> float:
    """Rigorous lower bound on delta(eps) of n shuffled reports of a continuous randomizer (or `PrivHS`).

    The largest `cells_lower_delta` over `lower_bound_cells` (each a post-processing of the
    shuffled output applied to every report, so each is below the true divergence).

    Examples
    --------
    >>> from shuffledp.accounting.blanket import blanket_divergence
    >>> from shuffledp.randomizers import PlanarLaplace
    >>> R = PlanarLaplace(epsilon=2.0)
    >>> 0.0 < discretised_lower_delta(R, 10, 0.6) <= blanket_divergence(R.amplification_parameters(), 10, 0.6)
    True
    """
    return max(cells_lower_delta(c, n, eps) for c in lower_bound_cells(R))


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
    "CELL_ERROR",
    "MAX_STATES",
    "CellLaw",
    "ShuffleDelta",
    "cap_cells",
    "cells_lower_delta",
    "discretised_lower_delta",
    "exact_shuffle_delta",
    "exact_shuffle_epsilon",
    "histogram_law",
    "iid_shuffle_delta",
    "laplace_cells",
    "lower_bound_cells",
    "lump_outputs",
    "minkowski_cells",
    "minkowski_lower_delta",
    "planar_laplace_cells",
    "privhs_cells",
    "square_wave_cells",
    "staircase_cells",
    "ternary_sign_law",
]
