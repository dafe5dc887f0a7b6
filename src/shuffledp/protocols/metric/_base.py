"""What the three shuffle protocols of the metric paper share (§2.2, §3.2, §4.1, §5.2).

Each user holds an integer in {0, ..., k} and sends ``width`` bits (a unary message); the shuffler
concatenates and permutes all n * width bits (`shuffle_bits`); the analyst sums them and debiases.
By Proposition 1 the shuffled unary bits carry exactly the information of their count, so
`UnaryShuffleProtocol.ones` (the count, drawn without materialising bits) is what simulations
release; `UnaryShuffleProtocol.run` with ``materialize=True`` goes through the bits.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from shuffledp._util.validation import check_positive_int, check_rng
from shuffledp.errors import DomainError, OutsideRegimeError, ShapeError
from shuffledp.randomizers.unary import thermometer_encode

#: Most bits `UnaryShuffleProtocol.randomize` / ``run(materialize=True)`` build: an (n, width) int8 matrix is one
#: byte per bit and the shuffle holds a few copies at once (about 0.3 GB at the cap); simulations never need the
#: bits (Proposition 1: the count of ones is drawn directly, at any n * width).
MAX_MATERIALIZED_BITS = 10**8
#: Most random draws per call of ``ones`` / ``estimate_sum`` (repetitions times the draws of one run: n noise
#: values for Geo- and SGDL-Shuffle, one count for RR-Shuffle): int64 arrays of this size take 0.8 GB each.
MAX_DRAWS = 10**8


def check_draws(count: int, what: str) -> None:
    """ShapeError if ``count`` draws exceed `MAX_DRAWS` (checked before anything is allocated)."""
    if count > MAX_DRAWS:
        raise ShapeError(
            f"{what} needs {count:,} random draws, above the limit MAX_DRAWS = {MAX_DRAWS:,} (int64 arrays "
            f"of 0.8 GB each at the cap): split the call"
        )


def check_values(x: Any, k: int, n: int | None = None) -> np.ndarray:
    """``x`` as a 1-d int64 array of integers in {0, ..., k} (of length n if given); named errors otherwise.

    Parameters
    ----------
    x : array_like
        The users' values: integers (or integral floats) in {0, ..., k}.
    k : int, >= 1
        Largest value.
    n : int or None
        Required number of values; None accepts any length.

    Returns
    -------
    numpy.ndarray
        ``x`` as a 1-d int64 array.

    Raises
    ------
    ShapeError
        If ``x`` is not 1-d or (with ``n``) not of length n.
    DomainError
        If a value is not an integer in {0, ..., k}.

    References
    ----------
    metric-privacy-shuffler.txt §3.2, §4.1, §5.2 (values in {0..k}).

    Examples
    --------
    >>> check_values([0, 3.0, 10], 10).tolist()
    [0, 3, 10]
    >>> check_values([0, 11], 10)
    Traceback (most recent call last):
    ...
    shuffledp.errors.DomainError: x must hold integers in {0, ..., 10}, got x[1]=11
    """
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ShapeError(f"x (the users' values) must be a 1-d array, got shape {arr.shape}")
    if n is not None and arr.size != n:
        raise ShapeError(f"x must hold one value per user: the protocol has n={n} users, got {arr.size} values")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
            raise DomainError(f"x must hold integers in {{0, ..., {k}}}, got dtype {arr.dtype}")
        bad = np.flatnonzero(~np.isfinite(arr) | (arr != np.round(arr)))
        if bad.size:
            raise DomainError(f"x must hold integers in {{0, ..., {k}}}, got x[{bad[0]}]={arr[bad[0]].item()!r}")
    bad = np.flatnonzero((arr < 0) | (arr > k))  # before the int64 cast, which would wrap 1e30 or 2^64 - 1
    if bad.size:
        raise DomainError(f"x must hold integers in {{0, ..., {k}}}, got x[{bad[0]}]={arr[bad[0]].item()!r}")
    return arr.astype(np.int64)


def check_bits(bits: Any, name: str) -> np.ndarray:
    """``bits`` as an array whose every entry is 0 or 1 (integer, bool or integral float dtype); DomainError otherwise.

    Examples
    --------
    >>> check_bits([[0, 1], [1, 1]], "messages").tolist()
    [[0, 1], [1, 1]]
    >>> check_bits([0, 7], "shuffled")
    Traceback (most recent call last):
    ...
    shuffledp.errors.DomainError: shuffled must hold bits (0 or 1), got 7 at index (1,)
    """
    arr = np.asarray(bits)
    if arr.size and not (
        np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_ or np.issubdtype(arr.dtype, np.floating)
    ):
        raise DomainError(f"{name} must hold bits (0 or 1), got dtype {arr.dtype}")
    bad = np.argwhere(~((arr == 0) | (arr == 1)))
    if bad.size:
        where = tuple(int(i) for i in bad[0])
        raise DomainError(f"{name} must hold bits (0 or 1), got {arr[where].item()!r} at index {where}")
    return arr


def check_counts(ones: Any, bits: int) -> np.ndarray:
    """``ones`` (counts of ones among ``bits`` bits) as an int64 array of integers in [0, bits]; DomainError otherwise.

    Examples
    --------
    >>> check_counts([0, 5], 10).tolist()
    [0, 5]
    >>> check_counts("a", 10)
    Traceback (most recent call last):
    ...
    shuffledp.errors.DomainError: ones (a count of ones) must be integers in [0, 10], got 'a'
    """
    arr = np.asarray(ones)
    numeric = np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    if (
        not numeric
        or arr.dtype == np.bool_
        or not np.all(np.isfinite(arr))
        or not np.all(arr == np.round(arr))
        or np.any((arr < 0) | (arr > bits))
    ):
        shown = (
            ones
            if not numeric
            else arr[~(np.isfinite(arr) & (arr == np.round(arr)) & (arr >= 0) & (arr <= bits))].reshape(-1)[0].item()
        )
        raise DomainError(f"ones (a count of ones) must be integers in [0, {bits}], got {shown!r}")
    return arr.astype(np.int64)


def shuffle_bits(messages: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
    """The shuffler (§2.2): concatenate every user's bits and apply one uniform permutation to them all.

    Parameters
    ----------
    messages : numpy.ndarray
        The users' bit messages, e.g. an (n, width) matrix.
    rng : numpy.random.Generator or None
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        All bits, flattened and uniformly permuted.

    Raises
    ------
    DomainError
        If an entry is not a bit (0 or 1).

    References
    ----------
    metric-privacy-shuffler.txt §2.2 (the shuffle model).

    Examples
    --------
    >>> import numpy as np
    >>> bits = shuffle_bits(np.array([[1, 0, 1], [0, 0, 1]]), np.random.default_rng(0))
    >>> bits.shape, int(bits.sum())
    ((6,), 3)
    """
    bits = check_bits(messages, "messages").reshape(-1)
    return check_rng(rng).permutation(bits)


def quantized_ones(x: Any, granularity: int, rng: np.random.Generator | None = None) -> np.ndarray:
    """How many ones Algorithm 8 (U_Q) puts in a message: x // Q + Ber((x mod Q) / Q), per entry.

    The Bernoulli is drawn exactly as "a uniform integer in {0..Q-1} is below x mod Q", so Q times the count is an
    unbiased estimate of x (Appendix G).  Q = 1 is Algorithm 1 (no randomness is drawn).

    Parameters
    ----------
    x : array_like of int, >= 0
        The values to encode.
    granularity : int, >= 1
        Q: each bit stands for Q units.
    rng : numpy.random.Generator or None
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        int64 counts, the shape of ``x``.

    Raises
    ------
    PrivacyParameterError
        If ``granularity`` is not an integer >= 1.

    References
    ----------
    metric-privacy-shuffler.txt Appendix G, Algorithm 8.

    Examples
    --------
    >>> import numpy as np
    >>> counts = quantized_ones(np.full(100_000, 13), 5, np.random.default_rng(0))  # 13 = 2 * 5 + 3
    >>> sorted(set(counts.tolist())), bool(abs(5 * counts.mean() - 13) < 0.02)
    ([2, 3], True)
    """
    q = check_positive_int(granularity, "granularity (Q, Appendix G)")
    x = np.asarray(x, dtype=np.int64)
    if q == 1:
        return x
    whole, rest = np.divmod(x, q)
    return whole + (check_rng(rng).integers(0, q, x.shape) < rest)


def quantized_unary_encode(x: Any, r: int, granularity: int, rng: np.random.Generator | None = None) -> np.ndarray:
    """Algorithm 8, U_Q(x, r): per value, r bits whose first x // Q are 1, the next one 1 with probability
    (x mod Q) / Q, the rest 0 (rows of int8).  Needs x <= r Q.

    Parameters
    ----------
    x : array_like of int, in [0, r Q]
        The values (1-d).
    r : int, >= 1
        Bits per message.
    granularity : int, >= 1
        Q.
    rng : numpy.random.Generator or None
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        (len(x), r) int8 thermometer codes.

    Raises
    ------
    DomainError
        If some x exceeds r Q.

    References
    ----------
    metric-privacy-shuffler.txt Appendix G, Algorithm 8 (Q = 1: Algorithm 1).

    Examples
    --------
    >>> import numpy as np
    >>> quantized_unary_encode(np.array([0, 8, 12]), 3, 4).tolist()  # multiples of Q: no rounding
    [[0, 0, 0], [1, 1, 0], [1, 1, 1]]
    >>> codes = quantized_unary_encode(np.full(4000, 10), 3, 4, np.random.default_rng(0))  # 10 = 2 * 4 + 2
    >>> sorted(set(codes.sum(axis=1).tolist())), bool(abs(4 * codes.sum(axis=1).mean() - 10) < 0.1)
    ([2, 3], True)
    """
    r = check_positive_int(r, "r (bits per message)")
    x = np.asarray(x, dtype=np.int64)
    if x.size and (x.min() < 0 or x.max() > r * granularity):
        raise DomainError(f"U_Q(x, r) needs 0 <= x <= r Q = {r * granularity}, got x in [{x.min()}, {x.max()}]")
    return thermometer_encode(quantized_ones(x, granularity, rng), r)


def not_analysed(what: str, granularity: int) -> OutsideRegimeError:
    """The error for a paper guarantee asked of a protocol with granularity Q > 1 (Appendix G gives none)."""
    return OutsideRegimeError(
        f"{what} does not cover granularity Q={granularity} (Appendix G leaves its privacy unanalysed); use "
        f"method='certified' (the per-report pure bound) or granularity=1"
    )


class UnaryShuffleProtocol(ABC):
    """A protocol (R, S, A) whose users send ``width`` bits each (subclasses: RR-, Geo-, SGDL-Shuffle).

    Parameters
    ----------
    n : int, >= 1
        Number of users.
    k : int, >= 1
        Largest value.

    Raises
    ------
    PrivacyParameterError
        For ``n`` or ``k`` out of range.

    References
    ----------
    metric-privacy-shuffler.txt §2.2 and Proposition 1 (shuffled unary bits = their count).

    Examples
    --------
    Through the bits or through the count of ones, the analyst sees the same thing
    (here with RR-Shuffle, a subclass):

    >>> import numpy as np
    >>> from shuffledp.protocols.metric import RRShuffle
    >>> proto = RRShuffle(1e-4, 0.2, 10, 1000)
    >>> x = np.arange(1000) % 11
    >>> bits = proto.shuffle(proto.randomize(x, np.random.default_rng(0)), np.random.default_rng(1))
    >>> bits.shape, isinstance(proto.analyze(bits), float)
    ((10000,), True)
    """

    #: Users and the largest value.
    n: int
    k: int
    #: Appendix G's granularity Q: each bit stands for Q units (1: Algorithm 1).
    granularity: int = 1

    def __init__(self, n: int, k: int) -> None:
        self.n = check_positive_int(n, "n (number of users)")
        self.k = check_positive_int(k, "k (largest value)")

    @property
    @abstractmethod
    def width(self) -> int:
        """Bits each user sends."""

    @abstractmethod
    def randomize(self, x: Any, rng: np.random.Generator | None = None) -> np.ndarray:
        """The local randomizers: an (n, width) int8 bit matrix, one message per user."""

    @abstractmethod
    def ones(self, x: Any, rng: np.random.Generator | None = None, repetitions: int | None = None) -> Any:
        """The count of ones in the shuffled bits (Proposition 1), drawn without materialising them.

        ``repetitions`` independent runs give an int64 array of that length; None gives one int.
        """

    @abstractmethod
    def debias(self, ones: Any) -> Any:
        """The analyst: the debiased sum estimate from a count of ones (array in, array out)."""

    def shuffle(self, messages: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        """The shuffler: one permutation of all n * width bits (`shuffle_bits`)."""
        messages = check_bits(messages, "messages")
        if messages.shape != (self.n, self.width):
            raise ShapeError(f"messages must have shape (n, width) = ({self.n}, {self.width}), got {messages.shape}")
        return shuffle_bits(messages, rng)

    def analyze(self, shuffled: np.ndarray) -> float:
        """The analyst on the shuffled bit vector: sum, then debias."""
        shuffled = np.asarray(shuffled)
        if shuffled.shape != (self.n * self.width,):
            raise ShapeError(
                f"shuffled must be a vector of n * width = {self.n * self.width} bits, got shape {shuffled.shape}"
            )
        check_bits(shuffled, "shuffled")
        return float(self.debias(int(shuffled.sum(dtype=np.int64))))

    def _check_materialize(self) -> None:
        """ShapeError if the n * width bits exceed `MAX_MATERIALIZED_BITS`."""
        bits = self.n * self.width
        if bits > MAX_MATERIALIZED_BITS:
            raise ShapeError(
                f"materialising n * width = {bits:,} bits is above the limit MAX_MATERIALIZED_BITS = "
                f"{MAX_MATERIALIZED_BITS:,} (int8 bits, a few copies during the shuffle): use the count of ones "
                "(materialize=False), which releases the same thing (Proposition 1)"
            )

    def run(self, x: Any, rng: np.random.Generator | None = None, *, materialize: bool = False) -> float:
        """One execution: the analyst's debiased sum (through the bits if ``materialize``, at most
        `MAX_MATERIALIZED_BITS` bits)."""
        rng = check_rng(rng)
        if materialize:
            self._check_materialize()
            return self.analyze(self.shuffle(self.randomize(x, rng), rng))
        return float(self.debias(self.ones(x, rng)))

    def estimate_sum(self, x: Any, rng: np.random.Generator | None = None, repetitions: int = 1) -> np.ndarray:
        """``repetitions`` independent debiased sums (float64 array), by the count of ones (at most `MAX_DRAWS`
        draws in all)."""
        repetitions = self._repetitions(repetitions)
        return np.asarray(self.debias(self.ones(x, rng, repetitions)), dtype=np.float64)

    def _draws_per_run(self) -> int:
        """Random draws of one run of ``ones`` (the n noise values; RR-Shuffle overrides)."""
        return self.n

    def _repetitions(self, repetitions: int | None) -> int:
        reps = 1 if repetitions is None else check_positive_int(repetitions, "repetitions")
        check_draws(reps * self._draws_per_run(), f"repetitions={reps:,}")
        return reps
