"""RR-Shuffle(delta, p, k, n) of the metric paper (§3.2, Algorithm 2; privacy Theorem 3.1).

Each user sends U(x, k) (`shuffledp.randomizers.unary.thermometer_encode`) with randomized
response RR(., p) on every bit: a bit is replaced by a fair coin with probability p, i.e. flipped with
probability p/2 (the law of `shuffledp.randomizers.unary.UnaryRR`, which itself refuses the
small p of the shuffle model: its whole-range LDP epsilon k log((2 - p)/p) exceeds 700 there).
The analyst returns z = n k / (n k - lambda) (sum B - lambda / 2), lambda = p n k.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from shuffledp._util.validation import check_positive_int, check_rng
from shuffledp.accounting.bounds import check_delta
from shuffledp.accounting.metric import (
    RR_SHUFFLE_METHODS,
    rr_shuffle_epsilon,
    rr_shuffle_local_epsilon,
    rr_shuffle_probability,
)
from shuffledp.accounting.metric.rr_shuffle import check_rr_p as _check_rr_p
from shuffledp.accounting.metric.rr_shuffle import rr_local as _rr_local
from shuffledp.errors import PrivacyParameterError
from shuffledp.protocols.metric._base import (
    UnaryShuffleProtocol,
    check_counts,
    check_values,
    not_analysed,
    quantized_ones,
)
from shuffledp.randomizers._sampling import bernoulli
from shuffledp.randomizers.unary import thermometer_encode

__all__ = ["RRShuffle"]


class RRShuffle(UnaryShuffleProtocol):
    """RR-Shuffle(delta, p, k, n); ``epsilon`` is the certified guarantee (valid for every pair of datasets, see
    `shuffledp.accounting.metric.rr_shuffle_certified_epsilon`); ``method="theorem-3.1"`` makes it Theorem 3.1's
    (not valid for datasets far apart; its validity condition is checked here).

    Parameters
    ----------
    delta : float, in (0, 1)
        Target delta.
    p : float, in (0, 1)
        Probability that a bit is replaced by a fair coin.
    k : int, >= 1
        Largest value (message width).
    n : int, >= 1
        Number of users.
    method : {"certified", "theorem-3.1"}
        Which analysis gives ``epsilon``.
    granularity : int, >= 1
        Appendix G's Q: users send U_Q(x, ceil(k/Q)) (Algorithm 8) through RR, the analyst returns Q times the
        debiased count.  The paper does not analyse its privacy: with Q > 1 ``epsilon`` and `local_epsilon` are the
        per-report pure bound ln((2 - p)/p) (a message of x and one of x' at distance d differ in at most d unary
        positions whatever the rounding, each RR'd bit being ln((2 - p)/p)-LDP), and the theorems raise
        `shuffledp.errors.OutsideRegimeError`.

    Raises
    ------
    ValidityConditionError
        With ``method="theorem-3.1"``, if p n k < 14 log(4/delta) (Theorem 3.1's condition).
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §3.2, Algorithm 2, Theorem 3.1; §7, Theorem 7.1.

    Examples
    --------
    The debiased sum is unbiased with variance n k (p/2)(1 - p/2) / (1 - p)^2:

    >>> import numpy as np
    >>> proto = RRShuffle.for_epsilon(0.5, 1e-4, 10, 1000, method="theorem-3.1")
    >>> x = np.arange(1000) % 11
    >>> sums = proto.estimate_sum(x, np.random.default_rng(1), 2000)
    >>> sd = np.sqrt(10_000 * proto.flip * (1 - proto.flip)) / (1 - proto.p)
    >>> proto.epsilon <= 0.5, bool(abs(sums.mean() - x.sum()) < 4 * sd / np.sqrt(2000)), bool(abs(sums.std() / sd - 1) < 0.06)
    (True, True, True)
    """

    def __init__(
        self, delta: float, p: float, k: int, n: int, *, method: str = "certified", granularity: int = 1
    ) -> None:
        super().__init__(n, k)
        if method not in RR_SHUFFLE_METHODS:
            raise PrivacyParameterError(f"method must be one of {', '.join(RR_SHUFFLE_METHODS)}, got {method!r}")
        self.method = method
        self.granularity = check_positive_int(granularity, "granularity (Q, Appendix G)")
        self.delta = check_delta(delta)
        if self.granularity == 1:
            # validates p; with method="theorem-3.1" raises outside Theorem 3.1's condition
            self.epsilon = rr_shuffle_epsilon(self.delta, p, self.k, self.n, method=method)
        elif method != "certified":
            raise not_analysed("Theorem 3.1", self.granularity)
        else:
            p = _check_rr_p(p)
            self.epsilon = _rr_local(p)
        self.p = float(p)
        #: Probability that a bit is flipped.
        self.flip = self.p / 2.0
        #: Expected number of random bits, p n width.
        self.lam = self.p * self.n * self.width

    @classmethod
    def for_epsilon(cls, epsilon: float, delta: float, k: int, n: int, *, method: str = "certified") -> RRShuffle:
        """The protocol whose ``method`` guarantee is at most ``epsilon`` (p from the inverse)."""
        return cls(delta, rr_shuffle_probability(epsilon, delta, k, n, method=method), k, n, method=method)

    @property
    def width(self) -> int:
        """Bits per user (the communication cost): k, or ceil(k/Q) with granularity Q (Appendix G)."""
        return -(-self.k // self.granularity)

    def local_epsilon(self) -> float:
        """eps_L if the shuffler is compromised: certified (exact) with ``method="certified"``, else Theorem 7.1
        (not a valid bound; ValidityConditionError outside its condition).  ln((2 - p)/p) with granularity Q > 1."""
        if self.granularity > 1:
            return self.epsilon  # the per-report pure bound (certified only: the constructor refused the theorem)
        method = "certified" if self.method == "certified" else "theorem-7.1"
        return rr_shuffle_local_epsilon(self.delta, self.p, self.k, method=method)

    def randomize(self, x: Any, rng: np.random.Generator | None = None) -> np.ndarray:
        """Every user's U(x, k) (U_Q(x, ceil(k/Q))) with each bit flipped with probability p/2: (n, width) int8
        (at most `MAX_MATERIALIZED_BITS` bits)."""
        self._check_materialize()
        x, rng = check_values(x, self.k, self.n), check_rng(rng)
        codes = thermometer_encode(quantized_ones(x, self.granularity, rng), self.width)
        flips = bernoulli(self.flip, (self.n, self.width), rng)
        return (codes.view(bool) ^ flips).view(np.int8)

    def ones(self, x: Any, rng: np.random.Generator | None = None, repetitions: int | None = None) -> Any:
        """Ones among the n width bits: Binom(M, 1 - p/2) + Binom(n width - M, p/2) (bits are independent),
        M = sum x (the sum of U_Q's counts with granularity Q)."""
        x = check_values(x, self.k, self.n)
        rng, reps = check_rng(rng), self._repetitions(repetitions)
        if self.granularity == 1:
            total: Any = int(x.sum())
        else:
            total = quantized_ones(np.broadcast_to(x, (reps, self.n)), self.granularity, rng).sum(axis=1)
        bits = self.n * self.width
        count = rng.binomial(total, 1.0 - self.flip, reps) + rng.binomial(bits - total, self.flip, reps)
        return int(count[0]) if repetitions is None else count.astype(np.int64)

    def _draws_per_run(self) -> int:
        return 1 if self.granularity == 1 else self.n  # two binomials, or each user's quantized count

    def debias(self, ones: Any) -> Any:
        """The analyst (Algorithm 2): z = n k / (n k - lambda) (sum B - lambda / 2), unbiased; with granularity Q,
        Q times the same with n width bits."""
        bits = self.n * self.width
        ones = check_counts(ones, bits).astype(np.float64)
        return self.granularity * bits / (bits - self.lam) * (ones - self.lam / 2.0)

    def __repr__(self) -> str:
        q = f", granularity={self.granularity}" if self.granularity > 1 else ""
        return f"RRShuffle(delta={self.delta:g}, p={self.p:g}, k={self.k}, n={self.n}, method={self.method!r}{q})"
