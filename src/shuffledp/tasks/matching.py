"""Two-group matchings of spatial crowdsourcing (PIC §4.1 step III; §7.1).

``min_weight_matching``: minimum weighted full matching [54] — every report of
the smaller group is matched, minimising the total Euclidean distance of the
matched pairs.  ``radius_matching``: maximum matching [48] — as many pairs as
possible, a pair allowed only within the serving radius (Hopcroft–Karp).

Both return a `Matching`: report ``i`` of group A (group 0 of ``L``)
gets the index of its partner in group B (group 1) and their reported distance,
and symmetrically; unmatched reports get ``NO_MATCH`` and NaN.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching, min_weight_full_bipartite_matching
from scipy.spatial import cKDTree
from scipy.spatial.distance import cdist

from shuffledp.errors import ShapeError
from shuffledp.tasks.base import NO_MATCH, PAIR_DTYPE, as_reports, canonical_order, check_radius, overflow_safe

__all__ = ["Matching", "min_weight_matching", "radius_matching"]


@dataclass(frozen=True)
class Matching:
    """A one-to-one matching between group A (``n_a`` reports) and group B (``n_b``).

    The output of the matching tasks (PIC §4.1 step III): report ``i`` of A gets
    ``(partner_a[i], distance_a[i])``, report ``j`` of B gets ``(partner_b[j],
    distance_b[j])``.

    Attributes
    ----------
    partner_a : numpy.ndarray of int64, shape (n_a,)
        Index in B matched to report ``i`` of A, or ``NO_MATCH`` (-1).
    partner_b : numpy.ndarray of int64, shape (n_b,)
        Index in A matched to report ``j`` of B, or ``NO_MATCH``.
    distance_a, distance_b : numpy.ndarray of float64
        Euclidean distance between the two matched *reports* (NaN if unmatched).

    Examples
    --------
    >>> import numpy as np
    >>> from shuffledp.tasks import min_weight_matching
    >>> m = min_weight_matching([[0.0, 0.0], [1.0, 0.0]], [[0.9, 0.0], [0.1, 0.0], [5.0, 5.0]])
    >>> m.size, m.partner_a, m.partner_b
    (2, array([1, 0]), array([ 1,  0, -1]))
    >>> m.pairs()
    array([[0, 1],
           [1, 0]])
    """

    partner_a: np.ndarray
    partner_b: np.ndarray
    distance_a: np.ndarray
    distance_b: np.ndarray

    @classmethod
    def from_pairs(cls, rows: np.ndarray, cols: np.ndarray, group_a: np.ndarray, group_b: np.ndarray) -> Matching:
        """The matching of pairs ``(rows[k], cols[k])`` (distinct rows, distinct cols)."""
        partner_a = np.full(len(group_a), NO_MATCH, dtype=np.int64)
        partner_b = np.full(len(group_b), NO_MATCH, dtype=np.int64)
        partner_a[rows] = cols
        partner_b[cols] = rows
        with np.errstate(over="ignore"):  # reports beyond 1e154: the distance is reported as inf
            dist = np.linalg.norm(group_a[rows] - group_b[cols], axis=1)
        distance_a = np.full(len(group_a), np.nan)
        distance_b = np.full(len(group_b), np.nan)
        distance_a[rows] = dist
        distance_b[cols] = dist
        return cls(partner_a, partner_b, distance_a, distance_b)

    @property
    def size(self) -> int:
        """Number of matched pairs."""
        return int(np.count_nonzero(self.partner_a != NO_MATCH))

    def pairs(self) -> np.ndarray:
        """The matched pairs as an int64 array of shape (size, 2), rows ``(i in A, j in B)`` by increasing i."""
        rows = np.flatnonzero(self.partner_a != NO_MATCH)
        return np.column_stack([rows, self.partner_a[rows]]).astype(np.int64)

    def records(self, group: int) -> np.ndarray:
        """Every output of ``group`` (0 = A, 1 = B) as a PAIR_DTYPE array, one record per report."""
        partner, distance = self._group(group)
        out = np.empty(partner.size, dtype=PAIR_DTYPE)
        out["index"] = partner
        out["distance"] = distance
        return out

    def user_output(self, group: int, i: int) -> bytes:
        """The 16-byte output of report ``i`` of ``group``: ``PAIR_DTYPE`` (partner index, distance)."""
        partner, distance = self._group(group)
        if not 0 <= i < partner.size:
            raise ShapeError(f"i must be a report index in [0, {partner.size}) of group {group}, got {i!r}")
        record = np.empty(1, dtype=PAIR_DTYPE)
        record["index"], record["distance"] = partner[i], distance[i]
        return record.tobytes()

    def _group(self, group: int) -> tuple[np.ndarray, np.ndarray]:
        if group == 0:
            return self.partner_a, self.distance_a
        if group == 1:
            return self.partner_b, self.distance_b
        raise ShapeError(f"group must be 0 (group A) or 1 (group B) for a two-group matching, got {group!r}")


def _groups(group_a: Any, group_b: Any) -> tuple[np.ndarray, np.ndarray]:
    A = as_reports(group_a, "group_a")
    return A, as_reports(group_b, "group_b", dim=A.shape[1])


#: Largest n_a * n_b solved densely (a 5,000 x 5,000 cost matrix); above it the sparse candidate graph.
DENSE_MAX_PAIRS = 25_000_000
#: Nearest candidates of each report (both ways) in the sparse candidate graph.
SPARSE_CANDIDATES = 16
#: Most reports of the two groups together in one leaf of the blocked method.
BLOCK_SIZE = 2000
#: Improving passes of the blocked method over leaves of other splits.
REFINE_PASSES = 2


def min_weight_matching(
    group_a: Any, group_b: Any, *, method: str = "auto", candidates: int = SPARSE_CANDIDATES
) -> Matching:
    """Minimum weighted full matching (§7.1, [54]) of two groups of reports in R^d.

    Every report of the smaller group is matched to a distinct report of the
    larger one so that the sum of Euclidean distances is minimal; the surplus
    of the larger group gets ``NO_MATCH``.  Every method returns a full matching.
    ``method="dense"``: O(n_a n_b)
    memory, cubic time (``scipy.optimize.linear_sum_assignment``), exact.
    ``method="sparse"``: the same objective on a sparse candidate graph -- each
    report's ``candidates`` nearest reports of the other group (k-d trees, both
    ways), plus a rank pairing along the first coordinate that always contains a
    full matching (so the result is always full: the fallback) -- solved exactly
    on that graph by ``scipy.sparse.csgraph.min_weight_full_bipartite_matching``
    (LAPJVsp), exact on that graph but superlinear (about 40 s at 2 x 10^4 on one core).
    ``method="blocked"``: a k-d split of both groups, in proportion, into leaves of at
    most `BLOCK_SIZE` reports, each solved exactly (dense); every leaf holds no more of
    the smaller group than of the larger, so the matching is full (near-linear: 10^5 per
    group in seconds).  ``"auto"`` is dense up to `DENSE_MAX_PAIRS` pairs,
    blocked above.  The costs of "sparse" and "blocked" against the dense optimum on
    gMission and EverySender are in the README ("PIC as a service").
    Permutation-equivariant: each group is solved in its canonical order.

    Parameters
    ----------
    group_a, group_b : array_like, shape (n_a, d) and (n_b, d)
        The two groups of reports (finite coordinates, same d >= 1; either may be empty).
    method : {"auto", "dense", "sparse", "blocked"}
    candidates : int, >= 1
        Nearest candidates per report in the sparse graph.

    Returns
    -------
    Matching
        The minimum-weight matching of the reports.

    Raises
    ------
    ShapeError
        When an input is not an (n, d) numeric array or the dimensions differ.
    DomainError
        When a report has a NaN or infinite coordinate (the message names the row).

    Examples
    --------
    >>> from shuffledp.tasks import min_weight_matching
    >>> m = min_weight_matching([[0.0, 0.0], [1.0, 0.0]], [[0.9, 0.0], [0.1, 0.0]])
    >>> m.partner_a, m.distance_a
    (array([1, 0]), array([0.1, 0.1]))
    """
    A, B = _groups(group_a, group_b)
    if method not in ("auto", "dense", "sparse", "blocked"):
        raise ShapeError(f"method must be 'auto', 'dense', 'sparse' or 'blocked', got {method!r}")
    oa, ob = canonical_order(A), canonical_order(B)
    (As, Bs), _ = overflow_safe(A, B)  # any finite report: distances never overflow to inf
    if method == "auto":
        method = "blocked" if len(A) * len(B) > DENSE_MAX_PAIRS else "dense"
    if method == "sparse" and len(A) and len(B):
        rows, cols = _sparse_assignment(As[oa], Bs[ob], max(1, int(candidates)))
    elif method == "blocked" and len(A) and len(B):
        rows, cols = _blocked_assignment(As[oa], Bs[ob], BLOCK_SIZE)
    else:
        rows, cols = linear_sum_assignment(cdist(As[oa], Bs[ob]))
    return Matching.from_pairs(oa[rows], ob[cols], A, B)


def _blocked_assignment(A: np.ndarray, B: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    """`min_weight_matching`'s "blocked" method: a proportional k-d split, each leaf solved exactly.

    Each split cuts both groups along one axis at ranks in the same proportion (the smaller
    group at its median), so every leaf holds at most as many reports of the smaller group as
    of the larger one: one exact solve per leaf matches the whole smaller group (a full matching).
    """
    flip = len(A) > len(B)
    if flip:
        A, B = B, A
    rows_out, cols_out = [], []
    stack = [(np.arange(len(A)), np.arange(len(B)), 0)]
    while stack:
        a, b, depth = stack.pop()
        if len(a) + len(b) <= block or len(a) < 2:
            if len(a):
                r, c = linear_sum_assignment(cdist(A[a], B[b]))
                rows_out.append(a[r])
                cols_out.append(b[c])
            continue
        axis = depth % A.shape[1]
        a = a[np.argsort(A[a, axis], kind="stable")]
        b = b[np.argsort(B[b, axis], kind="stable")]
        na = len(a) // 2
        nb = min(max(na, round(len(b) * na / len(a))), len(b) - (len(a) - na))
        stack += [(a[:na], b[:nb], depth + 1), (a[na:], b[nb:], depth + 1)]
    partner = np.empty(len(A), dtype=np.intp)
    partner[np.concatenate(rows_out)] = np.concatenate(cols_out)
    for shift in range(1, REFINE_PASSES + 1):
        partner = _refine(A, B, partner, block, shift)
    rows = np.arange(len(A))
    return (partner, rows) if flip else (rows, partner)


def _leaves(X: np.ndarray, size: int, shift: int) -> list[np.ndarray]:
    """A k-d split of X's rows at medians into leaves of at most ``size`` rows (axis order shifted by ``shift``)."""
    out, stack = [], [(np.arange(len(X)), shift)]
    while stack:
        idx, depth = stack.pop()
        if len(idx) <= size:
            out.append(idx)
            continue
        idx = idx[np.argsort(X[idx, depth % X.shape[1]], kind="stable")]
        half = len(idx) // 2
        stack += [(idx[:half], depth + 1), (idx[half:], depth + 1)]
    return out


def _refine(A: np.ndarray, B: np.ndarray, partner: np.ndarray, block: int, shift: int) -> np.ndarray:
    """One improving pass: on leaves of another split, re-solve each leaf's reports against their partners and
    the free reports nearest to them (the current pairs stay feasible, so the cost never increases)."""
    used = np.zeros(len(B), dtype=bool)
    used[partner] = True
    free = np.flatnonzero(~used)
    leaf_of = np.empty(len(A), dtype=np.intp)
    leaves = _leaves(A, max(2, block // 2), shift)
    for k, leaf in enumerate(leaves):
        leaf_of[leaf] = k
    owner = leaf_of[cKDTree(A).query(B[free])[1]] if len(free) else np.zeros(0, np.intp)
    order = np.argsort(owner, kind="stable")
    bounds = np.searchsorted(owner[order], np.arange(len(leaves) + 1))
    out = partner.copy()
    for k, leaf in enumerate(leaves):
        cand = np.concatenate([partner[leaf], free[order[bounds[k] : bounds[k + 1]]]])
        r, c = linear_sum_assignment(cdist(A[leaf], B[cand]))
        out[leaf[r]] = cand[c]
    return out


def _sparse_assignment(A: np.ndarray, B: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Minimum-weight full matching of the smaller side on the candidate graph of `min_weight_matching`."""
    flip = len(A) > len(B)
    if flip:
        A, B = B, A
    na, nb = len(A), len(B)
    ka, kb = min(k, nb), min(k, na)
    _, ja = cKDTree(B).query(A, k=ka)
    _, ib = cKDTree(A).query(B, k=kb)
    ja, ib = ja.reshape(na, ka), ib.reshape(nb, kb)
    # the fallback: rank pairing by the first coordinate (then the rest), an injective map A -> B, so the
    # graph always holds a full matching of the smaller side, whatever the candidates miss
    ra, rb = np.lexsort(A.T[::-1]), np.lexsort(B.T[::-1])
    pos = np.round(np.arange(na) * (nb - 1) / max(na - 1, 1)).astype(np.intp) if na > 1 else np.zeros(1, np.intp)
    fallback = np.empty(na, dtype=np.intp)
    fallback[ra] = rb[pos]
    r = np.concatenate([np.repeat(np.arange(na), ka), ib.ravel(), np.arange(na)])
    c = np.concatenate([ja.ravel(), np.repeat(np.arange(nb), kb), fallback])
    edges = np.unique(r.astype(np.int64) * nb + c)
    r, c = edges // nb, edges % nb
    w = np.linalg.norm(A[r] - B[c], axis=1) + 1.0  # +1 on every edge: no zero weight is read as "no edge";
    # every full matching has na edges, so the optimum is unchanged
    graph = csr_matrix((w, (r, c)), shape=(na, nb))
    rows, cols = min_weight_full_bipartite_matching(graph)
    return (cols, rows) if flip else (rows, cols)


def radius_matching(group_a: Any, group_b: Any, radius: float) -> Matching:
    """Maximum matching within a serving radius (§7.1, [48]).

    A pair (i, j) is allowed when the reports are at Euclidean distance <= ``radius``;
    returns a matching with the largest possible number of allowed pairs
    (Hopcroft–Karp, ``scipy.sparse.csgraph.maximum_bipartite_matching``, on the
    sparse graph of allowed pairs found with k-d trees).  Which maximum matching
    is returned is fixed by the canonical order (see ``tasks.base``), not by the
    input order.

    Parameters
    ----------
    group_a, group_b : array_like, shape (n_a, d) and (n_b, d)
        The two groups of reports (finite coordinates, same d >= 1).
    radius : float
        The serving radius tau, finite and >= 0.

    Returns
    -------
    Matching
        A maximum matching among the allowed pairs.

    Raises
    ------
    ShapeError
        When an input is not an (n, d) numeric array or the dimensions differ.
    DomainError
        For a non-finite report or a radius that is negative or not finite.

    Examples
    --------
    >>> from shuffledp.tasks import radius_matching
    >>> m = radius_matching([[0.0, 0.0], [1.0, 0.0]], [[0.9, 0.0], [5.0, 5.0]], radius=0.2)
    >>> m.size, m.partner_a
    (1, array([-1,  0]))
    """
    A, B = _groups(group_a, group_b)
    r = check_radius(radius, "radius")
    oa, ob = canonical_order(A), canonical_order(B)
    if len(A) == 0 or len(B) == 0:
        return Matching.from_pairs(np.zeros(0, np.intp), np.zeros(0, np.intp), A, B)
    (As, Bs), r = overflow_safe(A, B, radius=r)  # any finite report: distances never overflow to inf
    pairs = cKDTree(As[oa]).sparse_distance_matrix(cKDTree(Bs[ob]), r, output_type="ndarray")
    graph = csr_matrix((np.ones(len(pairs), dtype=np.int8), (pairs["i"], pairs["j"])), shape=(len(A), len(B)))
    match = maximum_bipartite_matching(graph, perm_type="column")
    rows = np.flatnonzero(match >= 0)
    return Matching.from_pairs(oa[rows], ob[match[rows]], A, B)
