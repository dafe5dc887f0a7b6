"""Unary-encoding randomizers.

* `UnaryEncoding` — one-hot encoding of a category followed by
  independent bit flips: SUE (symmetric, basic RAPPOR) and OUE (optimized),
  Wang, Blocki, Li, Jha, "Locally differentially private protocols for
  frequency estimation", USENIX Security 2017, §4.3.  Bit x is 1 with
  probability p, every other bit with probability q:

  - SUE: p = e^(eps/2)/(e^(eps/2) + 1), q = 1/(e^(eps/2) + 1);
  - OUE: p = 1/2, q = 1/(e^eps + 1).

  Either way p(1-q)/((1-p)q) = e^eps: exactly eps-LDP.

* `UnaryRR` — the local randomizer of RR-Shuffle (metric paper §3.2,
  Algorithms 1–2): x in {0, ..., k} becomes the k-bit *thermometer* vector
  U(x, k) with exactly its first x bits set (Algorithm 1), and randomized
  response is applied to every bit.

Outputs are (n, k) 0/1 int8 matrices.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Literal

import numpy as np
from scipy import stats

from shuffledp._util.validation import check_epsilon, check_positive_int, check_probability
from shuffledp.errors import PrivacyParameterError
from shuffledp.params import BlanketDecomposition
from shuffledp.randomizers._decomposition import decomposition_from_matrix, matrix_is_small
from shuffledp.randomizers._sampling import bernoulli, discard
from shuffledp.randomizers.base import MAX_DISCRETE_EPSILON, DiscreteRandomizer
from shuffledp.randomizers.categorical import binary_vectors, check_binary_matrix, check_enumerable, row_codes
from shuffledp.randomizers.domains import Categorical, IntegerRange

__all__ = ["UnaryEncoding", "UnaryRR", "Variant", "thermometer_encode"]

Variant = Literal["symmetric", "optimized"]


def _bit_log_likelihood(outputs: np.ndarray, log_rates: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """log Pr[outputs] for independent bits; ``log_rates`` = (log Pr[bit j = 1], log Pr[bit j = 0]) per input i.

    Returns the (inputs, outputs) matrix sum_j y_j log r1_ij + (1 - y_j) log r0_ij.
    """
    B = outputs.astype(np.float64)
    log_one, log_zero = log_rates
    return log_one @ B.T + log_zero @ (1.0 - B).T


class UnaryEncoding(DiscreteRandomizer):
    """Unary encoding, SUE or OUE, on the categories {0, ..., k-1} (Wang et al., USENIX Security 2017, §4.3).

    The one-hot vector of x is reported bit by bit: bit x is 1 with probability p,
    every other bit with probability q, with p(1-q)/((1-p)q) = e^eps (exactly
    eps-LDP): SUE p = e^(eps/2)/(e^(eps/2) + 1), q = 1 - p; OUE p = 1/2,
    q = 1/(e^eps + 1).  Reports are (n, k) 0/1 int8 matrices.

    Parameters
    ----------
    epsilon : float
        Local privacy budget, in (0, 700].
    k : int
        Number of categories, >= 2 (the transition matrix needs k <= 16).
    variant : {"symmetric", "optimized"}, default "symmetric"
        SUE (basic RAPPOR) or OUE.

    Raises
    ------
    PrivacyParameterError
        For epsilon outside (0, 700], k < 2 or an unknown variant.

    Examples
    --------
    >>> import math
    >>> from shuffledp.randomizers import UnaryEncoding
    >>> from shuffledp.audit import exact_epsilon
    >>> R = UnaryEncoding(epsilon=1.0, k=4, variant="optimized")
    >>> R.p, abs(R.q - 1 / (math.e + 1)) < 1e-15
    (0.5, True)
    >>> exact_epsilon(R.transition_matrix())
    1.0
    """

    name = "unary"
    #: Largest size accepted (its amplification_parameters() takes about 2 s at this cap and runs out of memory by k = 10^12).
    MAX_SIZE: ClassVar[int] = 10_000_000_000

    def __init__(self, epsilon: float, k: int, variant: Variant = "symmetric") -> None:
        k = check_positive_int(k, "k (number of categories)", minimum=2, maximum=self.MAX_SIZE)
        if variant not in ("symmetric", "optimized"):
            raise PrivacyParameterError(f"variant must be 'symmetric' (SUE) or 'optimized' (OUE), got {variant!r}")
        super().__init__(epsilon, Categorical(k))
        self.k, self.variant = k, variant
        if variant == "symmetric":
            h = self.epsilon / 2.0
            self.p = 1.0 / (1.0 + math.exp(-h))
            self.q = 1.0 / (1.0 + math.exp(h))
            self._gap = math.tanh(h / 2.0)  # p - q
        else:
            self.p = 0.5
            self.q = 1.0 / (1.0 + math.exp(self.epsilon))
            self._gap = 0.5 * math.tanh(self.epsilon / 2.0)  # 1/2 - 1/(e^eps + 1)

    def _randomize(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # Every bit is drawn through its rare probability q (p = 1 - q rounds to 1.0 for SUE
        # at large eps): SUE flips each bit of the one-hot vector with probability q; OUE
        # sets each bit with probability q and the input's bit with probability 1/2.
        n = X.shape[0]
        rows = np.arange(n)
        Y = bernoulli(self.q, (n, self.k), rng)
        if self.variant == "symmetric":
            Y[rows, X] ^= True
        else:
            discard(self.q, Y[rows, X], rng)  # the input's bit is redrawn with probability 1/2
            Y[rows, X] = bernoulli(0.5, n, rng)
        return Y.view(np.int8)

    def _log_rates(self) -> tuple[np.ndarray, np.ndarray]:
        """log Pr[bit j = 1 | input i] and log Pr[bit j = 0 | input i] for the k inputs."""
        log_q, log_not_q = math.log(self.q), math.log1p(-self.q)
        # The input's own bit: 1 w.p. 1 - q (SUE) or 1/2 (OUE).
        own_one, own_zero = (log_not_q, log_q) if self.variant == "symmetric" else (math.log(0.5), math.log(0.5))
        one, zero = np.full((self.k, self.k), log_q), np.full((self.k, self.k), log_not_q)
        np.fill_diagonal(one, own_one)
        np.fill_diagonal(zero, own_zero)
        return one, zero

    def transition_outputs(self) -> np.ndarray:
        """All 2^k output vectors (columns of `transition_matrix`)."""
        return binary_vectors(self.k)

    def transition_inputs(self) -> np.ndarray:
        """The k categories."""
        return np.arange(self.k)

    def output_index(self, Y: np.ndarray) -> np.ndarray:
        """Report y is column sum_j y_j 2^j."""
        return row_codes(Y)

    def transition_matrix(self) -> np.ndarray:
        """Pr[y | x] over the k inputs and the 2^k output vectors (k <= 16)."""
        return np.exp(self.log_transition_matrix())

    def log_transition_matrix(self) -> np.ndarray:
        """log Pr[y | x], summed bit by bit in log space (k <= 16)."""
        check_enumerable(self.k, self.k, 1 << self.k)
        return _bit_log_likelihood(self.transition_outputs(), self._log_rates())

    def estimate(self, Y: Any) -> np.ndarray:
        """(y - q)/(p - q): unbiased for the one-hot input, shape (n, k)."""
        Y = check_binary_matrix(Y, self.k)
        return (Y.astype(np.float64) - self.q) / self._gap

    def amplification_parameters(self) -> BlanketDecomposition:
        """beta = p - q, the TV distance of any two inputs (they differ in two bits), and the common ratio.

        Outputs with both bits x0, x1 set are common to the two inputs at density ratio e^eps above
        the blanket (every other input clears one of those bits with probability 1 - q), so the
        common ratio is e^eps for k >= 3 (read off the matrix when it is small).
        """
        if matrix_is_small(self.k, 1 << self.k):
            return decomposition_from_matrix(self.transition_matrix(), self.epsilon, self._gap)
        return BlanketDecomposition(eps0=self.epsilon, beta=self._gap)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(epsilon={self.epsilon:g}, k={self.k}, variant={self.variant!r})"


def thermometer_encode(x: np.ndarray, r: int) -> np.ndarray:
    """Algorithm 1 of the metric paper, U(x, r): the r-bit vector whose first x bits are 1 (rows of int8)."""
    x = np.asarray(x)
    return (np.arange(r) < x[:, None]).view(np.int8)


class UnaryRR(DiscreteRandomizer):
    """Local randomizer of RR-Shuffle (metric paper §3.2, Algorithm 2) on {0, ..., k}.

    x -> U(x, k), then each bit is flipped independently with probability
    f = 1/(e^(eps/k) + 1).  Each bit is (eps/k)-LDP, so the report is
    (eps/k)-d_R-private (``epsilon_per_unit``) and eps-LDP over the whole range.
    The paper's RR parameter p (report a uniform bit with probability p) is
    ``rr_probability`` = 2 f; `from_rr_probability` builds the randomizer from it.

    Parameters
    ----------
    epsilon : float
        Local privacy budget over the whole range, in (0, 700].
    k : int
        Largest input value (inputs 0, ..., k), >= 1; the transition matrix needs k <= 16.

    Raises
    ------
    PrivacyParameterError
        For epsilon outside (0, 700] or k < 1.

    Examples
    --------
    >>> import math
    >>> import numpy as np
    >>> from shuffledp.randomizers import UnaryRR
    >>> R = UnaryRR(epsilon=2.0, k=2)    # each bit is (eps/k)-LDP
    >>> abs(R.flip - 1 / (math.e + 1)) < 1e-15
    True
    >>> R.randomize(np.array([0, 1, 2]), np.random.default_rng(0)).shape
    (3, 2)
    """

    name = "unary_rr"

    def __init__(self, epsilon: float, k: int) -> None:
        k = check_positive_int(k, "k (largest value)", minimum=1)
        super().__init__(epsilon, IntegerRange(0, k))
        self.k = k
        self.epsilon_per_unit = self.epsilon / k
        self.flip = 1.0 / (1.0 + math.exp(self.epsilon_per_unit))
        self.rr_probability = 2.0 * self.flip
        self._gap = math.tanh(self.epsilon_per_unit / 2.0)  # 1 - 2 f

    @classmethod
    def from_rr_probability(cls, p: float, k: int) -> UnaryRR:
        """The randomizer whose bits use the paper's RR(., p): e^(eps/k) = (2 - p)/p, p in (0, 1)."""
        p = check_probability(p, "p (RR randomization probability)")
        k = check_positive_int(k, "k (largest value)", minimum=1)
        smallest = 2.0 / (1.0 + math.exp(MAX_DISCRETE_EPSILON / k))  # e^(eps/k) = (2 - p)/p at the largest eps
        if p < smallest:
            raise PrivacyParameterError(
                f"p (RR randomization probability) must be at least {smallest:.6g} for k={k} "
                f"(epsilon = k log((2 - p)/p) <= {MAX_DISCRETE_EPSILON:g}), got {p!r}"
            )
        return cls(k * check_epsilon(math.log((2.0 - p) / p)), k)

    def _randomize(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        flips = bernoulli(self.flip, (X.shape[0], self.k), rng)  # exact: flip ~ e^-eps/k can be tiny
        return (thermometer_encode(X, self.k).view(bool) ^ flips).view(np.int8)

    def transition_inputs(self) -> np.ndarray:
        """The k + 1 inputs 0, ..., k (rows of `transition_matrix`)."""
        return np.arange(self.k + 1)

    def transition_outputs(self) -> np.ndarray:
        """All 2^k output vectors (columns of `transition_matrix`)."""
        return binary_vectors(self.k)

    def output_index(self, Y: np.ndarray) -> np.ndarray:
        """Report y is column sum_j y_j 2^j."""
        return row_codes(Y)

    def transition_matrix(self) -> np.ndarray:
        """Pr[y | x] over the inputs 0..k and the 2^k output vectors (k <= 16)."""
        return np.exp(self.log_transition_matrix())

    def log_transition_matrix(self) -> np.ndarray:
        """log Pr[y | x], summed bit by bit in log space (k <= 16)."""
        check_enumerable(self.k, self.k + 1, 1 << self.k)
        bits = thermometer_encode(self.transition_inputs(), self.k) == 1
        log_flip, log_keep = math.log(self.flip), math.log1p(-self.flip)
        log_one = np.where(bits, log_keep, log_flip)
        return _bit_log_likelihood(self.transition_outputs(), (log_one, np.where(bits, log_flip, log_keep)))

    def estimate(self, Y: Any) -> np.ndarray:
        """(sum_j y_j - k f)/(1 - 2 f): unbiased for x, shape (n,) (the per-report form of
        the analyst's debiasing in Algorithm 2)."""
        Y = check_binary_matrix(Y, self.k)
        return (Y.sum(axis=1, dtype=np.float64) - self.k * self.flip) / self._gap

    def amplification_parameters(self) -> BlanketDecomposition:
        """beta = TV(Binomial(k, 1-f), Binomial(k, f)), the inputs 0 and k; the common ratio read off the
        matrix when it is small (else e^eps, the LDP guarantee).

        Two inputs d apart differ in d bits whose count of ones is sufficient, so
        their TV is TV(Bin(d, 1-f), Bin(d, f)), largest at d = k.
        """
        j = np.arange(self.k + 1)
        diff = stats.binom.pmf(j, self.k, 1.0 - self.flip) - stats.binom.pmf(j, self.k, self.flip)
        beta = float(diff[diff > 0].sum())
        if matrix_is_small(self.k + 1, 1 << self.k):
            return decomposition_from_matrix(self.transition_matrix(), self.epsilon, beta)
        return BlanketDecomposition(eps0=self.epsilon, beta=beta)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(epsilon={self.epsilon:g}, k={self.k})"
