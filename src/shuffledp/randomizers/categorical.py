"""Categorical and set-valued local randomizers.

* `KRandomizedResponse` — generalized (k-ary) randomized response.
* `BinaryRandomizedResponse` — the k = 2 case on inputs {0, 1} (metric
  paper §3: Warner's RR; its "randomize with probability p" form is the same
  mechanism with e^eps = (2 - p)/p).
* `SubsetExponential` — PrivSet's subset exponential mechanism for
  set-valued data (Wang, Huang, Nie, Wang, Xu, Yang, INFOCOM 2018; reference
  [20] of the segmented paper, the "Subexp" baselines of its §6).
* `PoissonRandomizer` — Eq. 2 of the segmented paper (not eps-LDP for
  any finite eps; amplified through Lemma 3 / Theorem 2).

Set-valued inputs and outputs are (n, k) 0/1 membership matrices (int8).  The
module also holds the small enumeration helpers that the transition matrices
of set-valued randomizers need (also used by `unary`).
"""

from __future__ import annotations

import itertools
import math
from typing import Any, ClassVar

import numpy as np
from scipy import stats

from shuffledp._util.validation import check_positive_int, check_probability
from shuffledp.errors import DomainError, PrivacyParameterError, ShapeError
from shuffledp.params import BlanketDecomposition, VariationRatio
from shuffledp.randomizers._decomposition import decomposition_from_matrix, matrix_is_small
from shuffledp.randomizers._sampling import bernoulli, hazard_categorical
from shuffledp.randomizers.base import DiscreteRandomizer
from shuffledp.randomizers.domains import Categorical, Subsets

__all__ = [
    "BinaryRandomizedResponse",
    "KRandomizedResponse",
    "PoissonRandomizer",
    "SubsetExponential",
    "binary_vectors",
    "check_binary_matrix",
    "check_enumerable",
    "optimal_output_size",
    "privset_variance",
    "row_codes",
    "subset_rows",
    "table_index",
]

#: Largest number of items k for which a transition matrix enumerates outputs
#: that are subsets of {0, ..., k-1} (2^16 columns).
MAX_ENUMERATED_ITEMS = 16
#: Largest transition matrix (entries) built by enumeration (128 MiB of float64).
_MAX_TABLE_ENTRIES = 1 << 24


# --------------------------------------------------------------------------- helpers


def check_enumerable(k: int, rows: int, cols: int) -> None:
    """Raise ``ShapeError`` when a rows x cols table over subsets of k items is too large."""
    if k > MAX_ENUMERATED_ITEMS or rows * cols > _MAX_TABLE_ENTRIES:
        raise ShapeError(
            f"the transition matrix would enumerate {rows} inputs x {cols} outputs over k={k} items; "
            f"it is supported for k <= {MAX_ENUMERATED_ITEMS} and at most {_MAX_TABLE_ENTRIES} entries"
        )


def binary_vectors(k: int) -> np.ndarray:
    """All 2^k vectors of {0,1}^k as an int8 matrix; row c has bit j = (c >> j) & 1."""
    codes = np.arange(1 << k, dtype=np.int64)
    return ((codes[:, None] >> np.arange(k)) & 1).astype(np.int8)


def subset_rows(k: int, size: int) -> np.ndarray:
    """All C(k, size) subsets of {0, ..., k-1} as 0/1 rows, in lexicographic order of their items."""
    combos = np.array(list(itertools.combinations(range(k), size)), dtype=np.int64).reshape(-1, size)
    out = np.zeros((len(combos), k), dtype=np.int8)
    np.put_along_axis(out, combos, 1, axis=1)
    return out


def row_codes(Y: np.ndarray) -> np.ndarray:
    """Integer code sum_j Y[:, j] 2^j of each 0/1 row (the row index in `binary_vectors`)."""
    Y = np.asarray(Y)
    return (Y.astype(np.int64) << np.arange(Y.shape[1], dtype=np.int64)).sum(axis=1)


def table_index(table: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Row of ``table`` (0/1 rows, distinct) equal to each 0/1 row of ``Y``; -1 where none is."""
    codes = row_codes(table)
    order = np.argsort(codes)
    wanted = row_codes(Y)
    pos = np.minimum(np.searchsorted(codes[order], wanted), len(codes) - 1)
    return np.where(codes[order][pos] == wanted, order[pos], -1)


def check_binary_matrix(Y: Any, k: int, name: str = "Y") -> np.ndarray:
    """Return ``Y`` as an (n, k) int8 0/1 matrix, or raise ``ShapeError`` / ``DomainError`` naming the row."""
    arr = np.asarray(Y)
    if arr.ndim != 2 or arr.shape[1] != k:
        raise ShapeError(f"{name} must be an (n, {k}) 0/1 matrix, got shape {arr.shape}")
    binary = np.all((arr == 0) | (arr == 1), axis=1)
    if not binary.all():
        row = int(np.flatnonzero(~binary)[0])
        raise DomainError(f"{name}[{row}] = {np.array2string(arr[row])} has entries other than 0 and 1")
    return arr.astype(np.int8, copy=False)


def _check_k(k: Any, maximum: int | None = None) -> int:
    return check_positive_int(k, "k (number of categories)", minimum=2, maximum=maximum)


# --------------------------------------------------------------------------- k-RR


class KRandomizedResponse(DiscreteRandomizer):
    """Generalized (k-ary) randomized response on the categories {0, ..., k-1}.

    Reports the true category with probability ``p_true`` = e^eps/(e^eps + k - 1)
    and each other category with probability ``p_other`` = 1/(e^eps + k - 1), so
    every column of the transition matrix has ratio e^eps: exactly eps-LDP.

    Parameters
    ----------
    epsilon : float
        Local privacy budget, in (0, 700].
    k : int
        Number of categories, >= 2.

    Raises
    ------
    PrivacyParameterError
        For epsilon outside (0, 700] or k < 2.

    Examples
    --------
    >>> import math
    >>> from shuffledp.randomizers import KRandomizedResponse
    >>> R = KRandomizedResponse(epsilon=math.log(3), k=3)   # e^eps = 3
    >>> R.p_true, R.p_other
    (0.6, 0.2)
    >>> R.amplification_parameters().beta   # (e^eps - 1)/(e^eps + k - 1)
    0.4
    """

    name = "krr"

    def __init__(self, epsilon: float, k: int) -> None:
        k = _check_k(k)
        super().__init__(epsilon, Categorical(k))
        self.k = k
        z = -math.expm1(-self.epsilon)  # 1 - e^-eps, without cancellation
        denom = 1.0 + (k - 1) * math.exp(-self.epsilon)
        #: Pr[y = x] and Pr[y = j] for each j != x (written with e^-eps: no overflow at large eps).
        self.p_true = 1.0 / denom
        self.p_other = math.exp(-self.epsilon) / denom
        self._gap = z / denom  # p_true - p_other
        self._p_move = (k - 1) * self.p_other  # Pr[y != x], not 1 - p_true (which rounds)

    def _randomize(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # The rare branch "report another category" is drawn with its own probability
        # (k-1) p_other, exactly (1 - that rounds to 1.0 once eps > ~37).
        moved = np.flatnonzero(bernoulli(self._p_move, X.shape[0], rng))
        Y = X.copy()
        # A uniform category among the k-1 others: x + U{1..k-1} mod k.
        Y[moved] = (X[moved] + rng.integers(1, self.k, size=moved.size)) % self.k
        return Y

    def transition_matrix(self) -> np.ndarray:
        """P[x, y] over inputs and outputs {0, ..., k-1}."""
        P = np.full((self.k, self.k), self.p_other)
        np.fill_diagonal(P, self.p_true)
        return P

    def transition_inputs(self) -> np.ndarray:
        """The k categories."""
        return np.arange(self.k)

    def transition_outputs(self) -> np.ndarray:
        """The k categories (columns of `transition_matrix`)."""
        return np.arange(self.k)

    def output_index(self, Y: np.ndarray) -> np.ndarray:
        """A report y is column y."""
        Y = np.asarray(Y, dtype=np.int64)
        return np.where((Y >= 0) & (self.k > Y), Y, -1)

    def estimate(self, Y: Any) -> np.ndarray:
        """(onehot(y) - p_other)/(p_true - p_other): unbiased for the one-hot input, shape (n, k)."""
        Y = self.domain.check(Y, name="Y")
        out = np.full((Y.shape[0], self.k), -self.p_other / self._gap)
        out[np.arange(Y.shape[0]), Y] = (1.0 - self.p_other) / self._gap
        return out

    def amplification_parameters(self) -> BlanketDecomposition:
        """beta = (e^eps - 1)/(e^eps + k - 1), the TV distance of any two rows, and common_ratio = 1.

        For inputs x0, x1 the common part is uniform on the other k - 2 categories, each with
        mass 1/(e^eps + k - 1), which every user's row also gives them: the others cover it
        fully (the privacy blanket of k-RR).
        """
        return BlanketDecomposition(eps0=self.epsilon, beta=self._gap, common_ratio=1.0)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(epsilon={self.epsilon:g}, k={self.k})"


class BinaryRandomizedResponse(KRandomizedResponse):
    """Binary randomized response on {0, 1} (Warner 1965; metric paper §3): k-RR with k = 2.

    Keeps the bit with probability e^eps/(e^eps + 1).  `estimate` returns the
    unbiased estimate of the bit itself, shape (n,).

    Parameters
    ----------
    epsilon : float
        Local privacy budget, in (0, 700].

    Raises
    ------
    PrivacyParameterError
        For epsilon outside (0, 700].

    Examples
    --------
    >>> import math
    >>> from shuffledp.randomizers import BinaryRandomizedResponse
    >>> R = BinaryRandomizedResponse(epsilon=math.log(3))
    >>> R.p_true
    0.75
    >>> R.estimate([0, 1])   # (y - 1/4) / (1/2)
    array([-0.5,  1.5])
    """

    name = "binary_rr"

    def __init__(self, epsilon: float) -> None:
        super().__init__(epsilon, 2)

    def estimate(self, Y: Any) -> np.ndarray:
        """(y - p_other)/(p_true - p_other): unbiased for the input bit."""
        Y = self.domain.check(Y, name="Y")
        return (Y - self.p_other) / self._gap

    def __repr__(self) -> str:
        return f"{type(self).__name__}(epsilon={self.epsilon:g})"


# --------------------------------------------------------------------------- PrivSet


def _zero_overlap(k: int, size: int, m: int) -> float:
    """Probability that a uniform m-subset of k items avoids ``size`` given items."""
    return float(stats.hypergeom.pmf(0, k, size, m))


def _privset_rates(epsilon: float, k: int, s: int, m: int) -> tuple[float, float, float]:
    """(t, f, t - f): Pr[item in output] for an item in the input set (t) and outside it (f).

    With r0 = C(k-s, m)/C(k, m) and r1 = C(k-1-s, m-1)/C(k-1, m-1), dividing the
    weights by e^eps: t = (m/k) / D and f = (m/k)(r1 e^-eps + 1 - r1) / D, with
    D = r0 e^-eps + 1 - r0; so t - f = (m/k) r1 (1 - e^-eps) / D (computed directly,
    without cancellation).
    """
    a = math.exp(-epsilon)
    r0 = _zero_overlap(k, s, m)
    r1 = _zero_overlap(k - 1, s, m - 1)
    d = r0 * a + 1.0 - r0
    return (m / k) / d, (m / k) * (r1 * a + 1.0 - r1) / d, (m / k) * r1 * -math.expm1(-epsilon) / d


def privset_variance(epsilon: float, k: int, s: int, m: int) -> float:
    """Exact sum over items of Var[(y_j - f)/(t - f)] for one report (independent of the input).

    ``math.inf`` when t - f underflows (m so large that almost every output meets every input).
    """
    t, f, gap = _privset_rates(epsilon, k, s, m)
    if gap == 0.0:
        return math.inf
    return (s * t * (1.0 - t) + (k - s) * f * (1.0 - f)) / gap**2


def optimal_output_size(epsilon: float, k: int, s: int) -> int:
    """The output size m in {1, ..., k-s} minimising `privset_variance`."""
    sizes = range(1, k - s + 1)
    return min(sizes, key=lambda m: privset_variance(epsilon, k, s, m))


class SubsetExponential(DiscreteRandomizer):
    """PrivSet's subset exponential mechanism (segmented paper [20], §6 "Subexp").

    Input: a set x of exactly ``size_in`` = s items of {0, ..., k-1}.  Output:
    a set z of ``size_out`` = m items, with

        Pr[z | x] = e^eps / Omega  if z ∩ x ≠ ∅,    1 / Omega  otherwise,
        Omega = C(k-s, m) + (C(k, m) - C(k-s, m)) e^eps,

    so the exponential weight is e^eps when the output shares at least one
    item with the input.  PrivSet pads smaller sets with dummy items up to the
    maximum size; our domain (`Subsets`) already has exactly s items, so
    no padding is needed.  m must lie in {1, ..., k-s} (for larger m every
    output meets every input and the mechanism carries no information).

    ``size_out=None`` picks the m minimising the exact per-report variance of
    the unbiased estimator, sum_j Var[(z_j - f)/(t - f)], where t (resp. f) is
    the probability that an item inside (resp. outside) x is reported.  PrivSet
    selects m by minimising its error bound; for s = 1 the two criteria
    coincide, and for s > 1 ours is the exact variance of what we estimate.

    Parameters
    ----------
    epsilon : float
        Local privacy budget, in (0, 700].
    k : int
        Number of items, >= 2.
    size_in : int
        Items per input set s, in {1, ..., k-1}.
    size_out : int or None, default None
        Items per output set m, in {1, ..., k - size_in}; None picks the
        variance-optimal m.

    Raises
    ------
    PrivacyParameterError
        For parameters outside these ranges, or an m that leaves no signal.

    Examples
    --------
    >>> from shuffledp.randomizers import SubsetExponential
    >>> from shuffledp.audit import exact_epsilon
    >>> R = SubsetExponential(epsilon=1.0, k=5, size_in=2)
    >>> P = R.transition_matrix()
    >>> P.shape, exact_epsilon(P)   # C(5, 2) input sets; exactly eps-LDP
    ((10, 5), 1.0)
    """

    name = "subset_exponential"
    #: Largest k accepted (amplification_parameters() takes about 1.5 s at this cap with one item per user, and
    #: grows faster than k: 5 s at 30,000, minutes at 10^5).
    MAX_SIZE: ClassVar[int] = 10_000

    def __init__(self, epsilon: float, k: int, size_in: int, size_out: int | None = None) -> None:
        k = _check_k(k, self.MAX_SIZE)
        s = check_positive_int(size_in, "size_in", minimum=1)
        if s >= k:
            raise PrivacyParameterError(f"size_in must lie in {{1, ..., k-1}} = {{1, ..., {k - 1}}}, got {size_in!r}")
        super().__init__(epsilon, Subsets(k, s))
        if size_out is None:
            m = optimal_output_size(self.epsilon, k, s)
        else:
            m = check_positive_int(size_out, "size_out", minimum=1)
            if m > k - s:
                raise PrivacyParameterError(
                    f"size_out must lie in {{1, ..., k - size_in}} = {{1, ..., {k - s}}}, got {size_out!r}"
                )
        self.k, self.size_in, self.size_out = k, s, m
        self.output_domain = Subsets(k, m)
        self.t, self.f, self._gap = _privset_rates(self.epsilon, k, s, m)
        if self._gap == 0.0:
            raise PrivacyParameterError(
                f"size_out={m} leaves no usable signal (t - f underflows) for k={k}, size_in={s}; choose a smaller size_out"
            )
        # Sampling, the transition matrix and beta all read these (weights divided by e^eps):
        self._a = math.exp(-self.epsilon)  # weight of an output that misses the input
        self._r0 = _zero_overlap(k, s, m)  # C(k-s, m)/C(k, m)
        # Distribution of J = |z ∩ x|: hypergeometric pmf reweighted by e^eps for J >= 1.
        j = np.arange(min(s, m) + 1)
        w = stats.hypergeom.pmf(j, k, s, m) * np.where(j == 0, self._a, 1.0)
        self._overlap_pmf = w / w.sum()

    def _randomize(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        n, k, s, m = X.shape[0], self.k, self.size_in, self.size_out
        X = X.astype(np.int8, copy=False)
        # J by exact coins: Pr[J = 0] ~ e^-eps is realized at any epsilon.
        J = hazard_categorical(self._overlap_pmf, n, rng)
        # Uniform ranks within the input set (0..s-1) and within its complement (s..k-1):
        # sort random keys with the input items first, then invert the permutation.
        keys = rng.random((n, k)) + (1 - X)
        order = np.argsort(keys, axis=1)
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.broadcast_to(np.arange(k), (n, k)), axis=1)
        chosen = np.where(X == 1, rank < J[:, None], rank - s < (m - J)[:, None])
        return chosen.astype(np.int8)

    def transition_inputs(self) -> np.ndarray:
        """The C(k, s) input sets (rows of `transition_matrix`)."""
        return subset_rows(self.k, self.size_in)

    def transition_outputs(self) -> np.ndarray:
        """The C(k, m) output sets (columns of `transition_matrix`)."""
        return subset_rows(self.k, self.size_out)

    def output_index(self, Y: np.ndarray) -> np.ndarray:
        """Position of each reported set among `transition_outputs` (-1: not an m-subset)."""
        return table_index(self.transition_outputs(), Y)

    def transition_matrix(self) -> np.ndarray:
        """Pr[z | x] over all input sets and all output sets."""
        rows = math.comb(self.k, self.size_in)
        cols = math.comb(self.k, self.size_out)
        check_enumerable(self.k, rows, cols)
        meets = (self.transition_inputs().astype(np.int64) @ self.transition_outputs().T.astype(np.int64)) > 0
        omega = cols * (self._r0 * self._a + 1.0 - self._r0)  # Omega * e^-eps
        return np.where(meets, 1.0, self._a) / omega

    def estimate(self, Y: Any) -> np.ndarray:
        """(z - f)/(t - f): unbiased for the 0/1 membership vector of the input, shape (n, k)."""
        Y = self.output_domain.check(Y, name="Y")
        return (Y.astype(np.float64) - self.f) / self._gap

    def amplification_parameters(self) -> BlanketDecomposition:
        """The exact largest TV distance between two inputs, and the common ratio read off the matrix.

        TV(x0, x1) = (e^eps - 1) N / Omega, where the number N of outputs z that
        meet x0 and miss x1 is C(k-s, m) - C(k - |x0 ∪ x1|, m), largest for
        disjoint inputs (|x0 ∪ x1| = min(2s, k)).
        """
        k, s, m, a, r0 = self.k, self.size_in, self.size_out, self._a, self._r0
        r2 = _zero_overlap(k, min(2 * s, k), m)
        beta = (1.0 - a) * (r0 - r2) / (r0 * a + 1.0 - r0)
        rows, cols = math.comb(k, s), math.comb(k, m)
        if k <= MAX_ENUMERATED_ITEMS and matrix_is_small(rows, cols) and rows * cols <= _MAX_TABLE_ENTRIES:
            return decomposition_from_matrix(self.transition_matrix(), self.epsilon, beta)
        return BlanketDecomposition(eps0=self.epsilon, beta=beta)  # common ratio: the LDP guarantee only

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(epsilon={self.epsilon:g}, k={self.k}, "
            f"size_in={self.size_in}, size_out={self.size_out})"
        )


# --------------------------------------------------------------------------- Poisson


class PoissonRandomizer(DiscreteRandomizer):
    """The Poisson randomizer, Eq. 2 of the segmented paper (Algorithm 2, lines 9-12).

    Each item t of the input set x (s = ``size_in`` items of {0, ..., k-1}) is
    reported with probability ``lam`` and dropped otherwise; a report with no
    item is the empty output Phi.  Input and output are (n, k) 0/1 rows; a
    report's messages are the positions of its ones.

    Privacy.  An item is reported only by users who hold it, so the mechanism
    is not eps-LDP for any finite eps: `epsilon` is ``math.inf`` (the
    exact audit agrees).  Its privacy comes only from shuffling with uniform
    blanket messages, through `item_amplification_parameters` (one item;
    Lemma 3) and, for ``size_in`` > 1, group composition over the items
    (Theorem 3; `amplification_parameters` refuses that case).

    Parameters
    ----------
    lam : float
        Sampling rate lambda, in (0, 1].
    k : int
        Number of items d, >= 2.
    size_in : int, default 1
        Items per input set s, in {1, ..., k}.

    Raises
    ------
    PrivacyParameterError
        For parameters outside these ranges.

    Examples
    --------
    >>> from shuffledp.randomizers import PoissonRandomizer
    >>> R = PoissonRandomizer(lam=0.25, k=3)
    >>> R.epsilon                                  # not eps-LDP for any finite eps
    inf
    >>> R.transition_matrix()[0, :2]               # input {0}: Phi w.p. 3/4, {0} w.p. 1/4
    array([0.75, 0.25])
    >>> R.item_amplification_parameters()          # Lemma 3: p = inf, beta = lam, q = max(1, k lam)
    VariationRatio(p=inf, beta=0.25, q0=1.0, q1=1.0)
    """

    name = "poisson"

    def __init__(self, lam: float, k: int, size_in: int = 1) -> None:
        # Not LocalRandomizer.__init__: its epsilon check (finite, > 0) does not apply here.
        k = _check_k(k)
        s = check_positive_int(size_in, "size_in", minimum=1)
        if s > k:
            raise PrivacyParameterError(f"size_in must lie in {{1, ..., k}} = {{1, ..., {k}}}, got {size_in!r}")
        self.lam = check_probability(lam, "lam (Poisson sampling rate)", open_low=True, open_high=False)
        self.epsilon = math.inf
        self.domain = Subsets(k, s)
        self.k, self.size_in = k, s

    def _randomize(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        kept = bernoulli(self.lam, X.shape, rng)  # exact even for a tiny lam
        return (X.astype(bool) & kept).astype(np.int8)

    def transition_inputs(self) -> np.ndarray:
        """The C(k, s) input sets (rows of `transition_matrix`)."""
        return subset_rows(self.k, self.size_in)

    def transition_outputs(self) -> np.ndarray:
        """All 2^k subsets (columns of `transition_matrix`; row c of `binary_vectors`)."""
        return binary_vectors(self.k)

    def output_index(self, Y: np.ndarray) -> np.ndarray:
        """Report y is column sum_j y_j 2^j."""
        return row_codes(Y)

    def transition_matrix(self) -> np.ndarray:
        """Pr[y | x] = lam^|y| (1 - lam)^(s - |y|) if y ⊆ x, else 0."""
        rows = math.comb(self.k, self.size_in)
        check_enumerable(self.k, rows, 1 << self.k)
        X = self.transition_inputs().astype(np.int64)
        Y = self.transition_outputs().astype(np.int64)
        inside = (Y @ (1 - X).T).T == 0  # y ⊆ x
        kept = Y.sum(axis=1)[None, :]
        dropped = np.maximum(self.size_in - kept, 0)  # negative only off the support (masked below)
        law = np.power(self.lam, kept) * np.power(1.0 - self.lam, dropped)  # 0.0**0 = 1 at lam = 1
        return np.where(inside, law, 0.0)

    def estimate(self, Y: Any) -> np.ndarray:
        """y / lam: unbiased for the 0/1 membership vector of the input, shape (n, k)."""
        return check_binary_matrix(Y, self.k).astype(np.float64) / self.lam

    def item_amplification_parameters(self) -> VariationRatio:
        """Lemma 3 of the segmented paper, for *one* input item (one message):
        p = inf, beta = lam, q0 = q1 = d * lam with d = k.

        q compares the victim's message with one *uniform blanket message*
        (probability 1/k per item): an item is reported with probability lam,
        hence the ratio k * lam, and the blanket copies the victim's item with
        probability beta / q = 1/k.  `VariationRatio` requires q >= 1, so when
        k * lam < 1 we report q = 1 -- which alone is *not* conservative: it
        thins the blankets' copies to lam < 1/k, and the tail of the divergence
        (every blanket on the victim's item) then falls below the protocol's.
        `shuffledp.accounting.segmented.item_event` restores the blanket rate
        for such lam; price Algorithm 2 through it, not through these
        parameters.  Theorem 2 further divides q by the blanket rate gamma.
        """
        q = max(1.0, self.k * self.lam)
        return VariationRatio(p=math.inf, beta=self.lam, q0=q, q1=q)

    def amplification_parameters(self) -> VariationRatio:
        """The user's parameters: `item_amplification_parameters` when ``size_in`` = 1.

        A user with s > 1 items is s virtual users (Theorem 3): the shuffled guarantee
        (eps', delta') of one item composes by group privacy (Lemma 1) to
        (s eps', s e^(s eps') delta').  No (p, beta, q) describes that composed
        guarantee -- and since p = inf there is no pure local epsilon to group-compose
        either -- so for s > 1 this refuses (``PrivacyParameterError``) instead of
        presenting the per-message figure as the user's guarantee.
        """
        if self.size_in > 1:
            raise PrivacyParameterError(
                f"size_in={self.size_in}: no single (p, beta, q) describes a user with {self.size_in} items; "
                "shuffle the per-item item_amplification_parameters() to (eps', delta') and compose them "
                f"over the {self.size_in} items with shuffledp.accounting.composition.group_composition"
                "(eps', delta', size_in) (segmented paper, Theorem 3)"
            )
        return self.item_amplification_parameters()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(lam={self.lam:g}, k={self.k}, size_in={self.size_in})"
