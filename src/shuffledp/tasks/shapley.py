"""Shapley values of gradient reports for federated learning with incentives (PIC §7.3; full version Appendix E).

Each of ``s`` users reports a gradient ``g_i`` in R^D; the server holds the
validation gradient ``v`` (the mean gradient over its validation set).  The
utility of a coalition S is the cosine similarity of its aggregated gradient
with ``v`` (Appendix E):

    U(S) = <v, sum_{i in S} g_i> / (||v||_2 ||sum_{i in S} g_i||_2),

with U(empty) = 0, and U(S) = 0 where the coalition's sum is the zero vector
(the cosine is undefined there; both choices keep U in [-1, 1]).  A zero ``v``
makes every U zero, hence every value.  User i's Shapley value is the usual

    phi_i = sum_{S subset of N \\ {i}} |S|! (s - |S| - 1)! / s! * (U(S u {i}) - U(S)),

(Appendix E prints the weight as binom(n, k-1) / n, a typo for 1 / (n binom(n-1, k-1)):
only the latter gives the efficiency sum_i phi_i = U(N), which the tests check.)

Two ways to compute it:

- ``exact_shapley``: enumeration of all 2^s coalitions (s <= `EXACT_MAX_PLAYERS`).
  The gradients are first written in an orthonormal basis of span{v, g_1..g_s}
  (at most s + 1 coordinates, so D does not matter), the 2^s coalition sums are
  built by doubling, and phi is one weighted sum over the coalitions.
- ``permutation_shapley``: the unbiased permutation-sampling estimator
  (Castro, Gomez & Tejada 2009): for a uniformly random order pi of the users,
  the marginal contribution U(P_i u {i}) - U(P_i) of i over the users P_i before
  it has expectation exactly phi_i, so the mean over T independent orders is
  unbiased, with standard error sd / sqrt(T) (returned).  Vectorised: a batch of
  orders at once, the prefix sums of each order by ``cumsum`` (in column chunks
  when D is large), no Python loop over users.

- ``order_shapley``: the same estimator over orders the caller gives, for sparse
  gradients (few nonzero coordinates per user) through their Gram matrix.

`shapley_values` picks exact enumeration for s <= `EXACT_MAX_PLAYERS` and the
estimator otherwise.  Like every task (``tasks.base``) it is permutation-
equivariant: the gradients are put in canonical order first and the result is
mapped back, so permuting the reports permutes the values the same way (the
estimator's random orders are drawn over canonical positions from the given
seed, so this holds exactly for a fixed seed too).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.sparse import csr_matrix

from shuffledp._util.validation import check_rng
from shuffledp.errors import DomainError, ShapeError
from shuffledp.tasks.base import as_reports, canonical_order, inverse_permutation

__all__ = [
    "DEFAULT_PERMUTATIONS",
    "EXACT_MAX_PLAYERS",
    "ShapleyTask",
    "ShapleyValues",
    "cosine_utility",
    "exact_shapley",
    "order_shapley",
    "permutation_shapley",
    "shapley_values",
]

#: Largest number of users whose values are exact: `exact_shapley` enumerates up to this many (2^16
#: coalitions of <= 17 coordinates: 9 MB, about 0.1 s) and `shapley_values(method="auto")` switches to the
#: estimator above it.  README.md states this number (a test reads it there).
EXACT_MAX_PLAYERS = 16
#: Default number of random orders of the estimator.
DEFAULT_PERMUTATIONS = 256
#: Elements per (orders, users, coordinates) block of the estimator (32 MB of float64).
_BLOCK_ELEMENTS = 1 << 22


@dataclass(frozen=True)
class ShapleyValues:
    """One Shapley value per report (output ``i`` belongs to report ``i``).

    Attributes
    ----------
    values : numpy.ndarray of float64, shape (s,)
        The values (exact, or the permutation-sampling estimate).
    stderr : numpy.ndarray of float64, shape (s,)
        Standard error of each estimate (zeros for exact values; NaN with one order).
    method : str
        ``"exact"`` or ``"permutation"``.
    n_permutations : int
        Random orders averaged (0 for exact values).

    Examples
    --------
    >>> from shuffledp.tasks import shapley_values
    >>> sv = shapley_values([[1.0, 0.0], [0.0, 1.0]], [1.0, 0.0])
    >>> sv.method, sv.values.round(4), round(float(sv.values.sum()), 4)   # sums to U(N) = cos 45 deg
    ('exact', array([ 0.8536, -0.1464]), 0.7071)
    """

    values: np.ndarray
    stderr: np.ndarray
    method: str
    n_permutations: int

    def __len__(self) -> int:
        return self.values.size

    def records(self) -> np.ndarray:
        """Every output as little-endian float64, one per report."""
        return self.values.astype("<f8")

    def user_output(self, i: int) -> bytes:
        """Report ``i``'s output: its Shapley value as 8 bytes (little-endian float64)."""
        if not 0 <= i < len(self):
            raise ShapeError(f"i must be a report index in [0, {len(self)}), got {i!r}")
        return self.records()[i : i + 1].tobytes()


def _inputs(gradients: Any, validation: Any) -> tuple[np.ndarray, np.ndarray]:
    G = as_reports(gradients, "gradients")
    v = np.asarray(validation, dtype=np.float64)
    if v.ndim == 2 and v.shape[0] == 1:
        v = v[0]
    if v.ndim != 1 or v.size != G.shape[1]:
        raise ShapeError(f"validation must be a vector of length {G.shape[1]} like the gradients, got shape {v.shape}")
    if not np.all(np.isfinite(v)):
        raise DomainError("validation must hold finite numbers (it has NaN or infinite entries)")
    return G, v


def _check_players(s: int, limit: int) -> None:
    if s > limit:
        raise DomainError(
            f"exact Shapley values enumerate 2^s coalitions: s must be at most {limit}, got s={s}; "
            "use method='permutation' (unbiased estimator)"
        )


def cosine_utility(sums: Any, validation: Any) -> np.ndarray:
    """U of coalitions from their aggregated gradients: cosine with ``validation``, 0 for a zero sum.

    Parameters
    ----------
    sums : array_like, shape (m, D)
        One aggregated gradient per coalition.
    validation : array_like, shape (D,)
        The validation gradient v.

    Returns
    -------
    numpy.ndarray, shape (m,)
        <v, sum> / (||v|| ||sum||), in [-1, 1]; 0 where the sum or v is zero.

    Examples
    --------
    >>> from shuffledp.tasks.shapley import cosine_utility
    >>> cosine_utility([[2.0, 0.0], [1.0, 1.0], [0.0, 0.0]], [3.0, 0.0]).round(4)
    array([1.    , 0.7071, 0.    ])
    """
    S, v = _inputs(sums, validation)
    return _cosine(S @ v, np.einsum("ij,ij->i", S, S), float(v @ v))


def _cosine(dots: np.ndarray, sq_norms: np.ndarray, v_sq: float) -> np.ndarray:
    """dots / (||v|| ||sum||) with 0 where the sum (or v) is zero; clipped to [-1, 1] against rounding."""
    denom = np.sqrt(np.maximum(sq_norms, 0.0) * v_sq)
    out = np.zeros_like(dots)
    np.divide(dots, denom, out=out, where=denom > 0.0)
    return np.clip(out, -1.0, 1.0, out=out)


def _reduced(G: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Z, w): the gradients and v in at most s + 1 coordinates with the same inner products.

    When D > s + 1, an orthonormal basis Q of span{v, g_1..g_s} (QR) gives Z = G Q,
    w = v Q, with <z_i, z_j> = <g_i, g_j> and <z_i, w> = <g_i, v> (up to rounding).
    """
    s, D = G.shape
    if s + 1 >= D:
        return G, v
    Q, _ = np.linalg.qr(np.vstack([v[None, :], G]).T)  # (D, s + 1), orthonormal columns
    return G @ Q, v @ Q


def _exact(G: np.ndarray, v: np.ndarray) -> np.ndarray:
    s = len(G)
    if s == 0:
        return np.zeros(0)
    Z, w = _reduced(G, v)
    sums = np.zeros((1, Z.shape[1]))
    for i in range(s):  # coalition mask m holds user i iff bit i is set
        sums = np.concatenate([sums, sums + Z[i]])
    U = _cosine(sums @ w, np.einsum("ij,ij->i", sums, sums), float(w @ w))
    masks = np.arange(1 << s)
    members = ((masks[:, None] >> np.arange(s)) & 1).astype(bool)
    size = members.sum(axis=1)
    # weight of a coalition of k others: k! (s - k - 1)! / s! = 1 / (s * binom(s - 1, k)), k = 0..s-1
    weight = np.array([1.0 / (s * math.comb(s - 1, k)) for k in range(s)] + [0.0])
    with_i = weight[np.maximum(size - 1, 0)] * U  # U(S u {i}) terms: S = m \ {i} has |m| - 1 users
    without_i = weight[size] * U  # U(S) terms: S = m
    return members.T.astype(np.float64) @ with_i - (~members).T.astype(np.float64) @ without_i


def exact_shapley(gradients: Any, validation: Any) -> np.ndarray:
    """Exact Shapley values of the cosine utility by enumerating all 2^s coalitions (s <= 16).

    Parameters
    ----------
    gradients : array_like, shape (s, D)
        One (sanitized or true) gradient per user, finite.
    validation : array_like, shape (D,)
        The validation gradient v.

    Returns
    -------
    numpy.ndarray, shape (s,)
        phi_i; they sum to U(N).

    Raises
    ------
    DomainError
        For s > `EXACT_MAX_PLAYERS` or a non-finite entry.
    ShapeError
        For arrays of the wrong shape.

    Examples
    --------
    >>> from shuffledp.tasks import exact_shapley
    >>> exact_shapley([[1.0, 0.0], [-1.0, 0.0]], [1.0, 0.0])   # U(1)=1, U(2)=-1, U(12)=0 (zero sum)
    array([ 1., -1.])
    """
    G, v = _inputs(gradients, validation)
    _check_players(len(G), EXACT_MAX_PLAYERS)
    order = canonical_order(G)
    return _exact(G[order], v)[inverse_permutation(order)]


def _check_permutations(n_permutations: Any) -> int:
    if (
        isinstance(n_permutations, (bool, np.bool_))
        or not isinstance(n_permutations, (int, np.integer))
        or n_permutations < 1
    ):
        raise DomainError(f"n_permutations must be an integer >= 1, got {n_permutations!r}")
    return int(n_permutations)


def _permutation(G: np.ndarray, v: np.ndarray, T: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(mean, standard error) of the marginal contributions over T uniform orders."""
    s = len(G)
    if s == 0:
        return np.zeros(0), np.zeros(0)
    Z, w = _reduced(G, v)
    k = Z.shape[1]
    a, w_sq = Z @ w, float(w @ w)
    total, total_sq = np.zeros(s), np.zeros(s)
    orders_per_block = max(1, _BLOCK_ELEMENTS // (s * k))
    cols_per_block = max(1, _BLOCK_ELEMENTS // s)
    rows = np.arange(s)
    done = 0
    while done < T:
        B = min(orders_per_block, T - done)
        P = rng.permuted(np.broadcast_to(rows, (B, s)), axis=1)  # B uniform orders
        dots = np.cumsum(a[P], axis=1)
        sq = np.zeros((B, s))
        for c in range(0, k, cols_per_block):  # prefix sums of the coalitions, a block of coordinates at a time
            prefix = np.cumsum(Z[P, c : c + cols_per_block], axis=1)
            sq += np.einsum("bij,bij->bi", prefix, prefix)
        U = _cosine(dots, sq, w_sq)
        marginal = np.diff(U, axis=1, prepend=0.0)  # U(P_t u {pi_t}) - U(P_t), U(empty) = 0
        contribution = np.empty_like(marginal)
        np.put_along_axis(contribution, P, marginal, axis=1)  # back to the users
        total += contribution.sum(axis=0)
        total_sq += np.einsum("bi,bi->i", contribution, contribution)
        done += B
    mean = total / T
    if T < 2:
        return mean, np.full(s, np.nan)
    var = np.maximum(total_sq - T * mean * mean, 0.0) / (T - 1)
    return mean, np.sqrt(var / T)


def permutation_shapley(
    gradients: Any, validation: Any, n_permutations: int = DEFAULT_PERMUTATIONS, rng: np.random.Generator | None = None
) -> ShapleyValues:
    """Unbiased permutation-sampling estimate of the Shapley values (module docstring).

    Parameters
    ----------
    gradients : array_like, shape (s, D)
        One gradient per user, finite.
    validation : array_like, shape (D,)
        The validation gradient v.
    n_permutations : int, default 256
        Number T of uniformly random orders; the standard error falls as 1/sqrt(T).
    rng : numpy.random.Generator or None
        Source of the orders (None: fresh OS entropy).

    Returns
    -------
    ShapleyValues
        ``values`` (E[values] = exact phi) and their ``stderr``.

    Raises
    ------
    DomainError
        For n_permutations < 1 or a non-finite entry.
    ShapeError
        For arrays of the wrong shape.

    Examples
    --------
    >>> import numpy as np
    >>> from shuffledp.tasks import permutation_shapley
    >>> G, v = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], [1.0, 0.0]
    >>> est = permutation_shapley(G, v, 4000, np.random.default_rng(0))
    >>> bool(np.all(np.abs(est.values - exact_shapley(G, v)) < 4 * est.stderr))
    True
    >>> round(float(est.values.sum()), 6)   # every order's contributions sum to U(N) = cos 45 deg
    0.707107
    """
    G, v = _inputs(gradients, validation)
    T = _check_permutations(n_permutations)
    order = canonical_order(G)
    mean, se = _permutation(G[order], v, T, check_rng(rng))
    rank = inverse_permutation(order)
    return ShapleyValues(mean[rank], se[rank], "permutation", T)


def shapley_values(
    gradients: Any,
    validation: Any,
    *,
    method: str = "auto",
    n_permutations: int = DEFAULT_PERMUTATIONS,
    rng: np.random.Generator | None = None,
) -> ShapleyValues:
    """Shapley value of each gradient report for the cosine-similarity utility (Appendix E).

    Parameters
    ----------
    gradients : array_like, shape (s, D)
        One gradient (true, or the server's estimate from a sanitized report) per user.
    validation : array_like, shape (D,)
        The validation gradient v.
    method : {"auto", "exact", "permutation"}, default "auto"
        ``"exact"``: enumeration (s <= 16); ``"permutation"``: the unbiased
        estimator; ``"auto"``: exact for s <= `EXACT_MAX_PLAYERS` (16), else the estimator.
    n_permutations : int, default 256
        Orders of the estimator.
    rng : numpy.random.Generator or None
        Source of the estimator's orders.

    Returns
    -------
    ShapleyValues
        Output i belongs to report i.

    Raises
    ------
    DomainError
        For an unknown method, s too large for ``"exact"``, n_permutations < 1 or
        a non-finite entry.
    ShapeError
        For arrays of the wrong shape.

    Examples
    --------
    >>> from shuffledp.tasks import shapley_values
    >>> shapley_values([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]], [1.0, 1.0]).values.round(4)
    array([0.2961, 0.269 , 0.4154])
    """
    if method not in ("auto", "exact", "permutation"):
        raise DomainError(f"method must be 'auto', 'exact' or 'permutation', got {method!r}")
    G, v = _inputs(gradients, validation)
    if method == "exact" or (method == "auto" and len(G) <= EXACT_MAX_PLAYERS):
        values = exact_shapley(G, v)
        return ShapleyValues(values, np.zeros_like(values), "exact", 0)
    return permutation_shapley(G, v, n_permutations, rng)


def order_shapley(gradients: Any, validation: Any, orders: Any) -> np.ndarray:
    """Mean over ``orders`` (rows: permutations of the users) of each user's marginal cosine utility.

    The permutation estimator of `permutation_shapley` (unbiased for uniform orders; exact
    when ``orders`` are all s! permutations) for sparse gradients: the coalitions' squared norms come from
    the Gram matrix, whose off-diagonal entries are nonzero only for users sharing a coordinate (about
    s^2 k^2 / (2 d) pairs), so an order costs O(s + pairs), not O(s^2).  U(S) = 0 for a zero sum.
    The caller draws the orders, so two gradient sets can be valued over the same ones (federated
    learning's true and sanitized gradients, `shuffledp.experiments.pic_fl_incentives`).

    Parameters
    ----------
    gradients : array_like, shape (s, D)
        One gradient per user, finite (mostly zeros: each user's few kept coordinates).
    validation : array_like, shape (D,)
        The validation gradient v.
    orders : array_like of int, shape (T, s)
        T orders, each row a permutation of range(s).

    Returns
    -------
    numpy.ndarray, shape (s,)
        The mean marginal contribution of each user over the orders.

    Examples
    --------
    >>> import itertools
    >>> G, v = [[1.0, 0.0], [0.0, 1.0]], [1.0, 0.0]
    >>> order_shapley(G, v, list(itertools.permutations(range(2)))).round(4)   # every order: exact
    array([ 0.8536, -0.1464])
    """
    G, v = _inputs(gradients, validation)
    orders = np.asarray(orders)
    if orders.ndim != 2 or orders.shape[1] != len(G) or not np.issubdtype(orders.dtype, np.integer):
        raise ShapeError(
            f"orders must be integer rows of {len(G)} users, shape (T, {len(G)}), got shape {orders.shape}"
        )
    T, s = orders.shape
    sparse = csr_matrix(G)
    K = (sparse @ sparse.T).toarray()
    i, j = np.nonzero(np.triu(K, 1))
    rows = np.arange(T)[:, None]
    position = np.empty_like(orders)
    np.put_along_axis(position, orders, np.arange(s)[None, :], axis=1)
    later = np.maximum(position[:, i], position[:, j])  # the pair's cross term joins the prefix here
    step = np.diag(K)[orders] + np.bincount(
        (rows * s + later).ravel(), weights=np.broadcast_to(2 * K[i, j], later.shape).ravel(), minlength=T * s
    ).reshape(T, s)
    sq, dots, v_sq = np.cumsum(step, axis=1), np.cumsum((G @ v)[orders], axis=1), float(v @ v)
    # a sum that cancels to zero leaves rounding residue in sq: below 1e-12 of its terms' squared norms it is 0
    sq[sq <= 1e-12 * np.cumsum(np.diag(K)[orders], axis=1)] = 0.0
    denom = np.sqrt(sq * v_sq)
    U = np.clip(np.divide(dots, denom, out=np.zeros_like(dots), where=denom > 0.0), -1.0, 1.0)
    contribution = np.empty_like(U)
    np.put_along_axis(contribution, orders, np.diff(U, axis=1, prepend=0.0), axis=1)
    return contribution.mean(axis=0)


@dataclass(frozen=True, eq=False)
class ShapleyTask:
    """The PIC server's task f(L) for federated learning with incentives (§7.3).

    One group of reports (the server's estimates of each user's gradient); the
    server's private input is the validation gradient.  Output i is report i's
    Shapley value (8 bytes, `ShapleyValues.user_output`).  The estimator draws its
    orders from ``seed`` over the canonical order of the reports, so f is a
    function of the multiset of reports: the real protocol and F_PIC give every
    user the same value.

    Parameters
    ----------
    validation : array_like, shape (D,)
        The validation gradient v.
    method : {"auto", "exact", "permutation"}, default "auto"
        As in `shapley_values`.
    n_permutations : int, default 256
        Orders of the estimator.
    seed : int, default 0
        Seed of the estimator's orders (part of the round's parameters).

    Examples
    --------
    >>> import numpy as np
    >>> from shuffledp.tasks import ShapleyTask
    >>> task = ShapleyTask(validation=np.array([1.0, 0.0]))
    >>> task([[1.0, 0.0], [0.0, 1.0]]).values.round(4)
    array([ 0.8536, -0.1464])
    """

    validation: Any
    method: str = "auto"
    n_permutations: int = DEFAULT_PERMUTATIONS
    seed: int = 0

    name = "shapley"
    n_groups = 1

    def __call__(self, reports: Any) -> ShapleyValues:
        return shapley_values(
            reports, self.validation, method=self.method, n_permutations=self.n_permutations,
            rng=np.random.default_rng(self.seed),
        )  # fmt: skip
